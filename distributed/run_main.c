/* tusk-run - run a topology as a distributed DAQ: one tusk-actor process
 * per actor instance, data over ZeroMQ, this process in control. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "controller.h"
#include "security.h"

#define PROG "tusk-run"

static void help(FILE *out)
{
    fprintf(out,
            "Starts one tusk-actor per actor instance (here, or on the actor's\n"
            "<hostname> through the launcher), drives them through a run and prints a\n"
            "summary with every link's counts.\n"
            "\n"
            "  --run N                 run number (default 1)\n"
            "  --run-dir DIR           run folder: sockets, instance folders, logs; made\n"
            "                          0700, or it must be yours and closed to others\n"
            "                          (default: a new folder in $XDG_RUNTIME_DIR/tusk,\n"
            "                          else $TMPDIR/tusk-UID, removed after a clean run)\n"
            "  --transport ipc|tcp     data transport (default: ipc when every actor is\n"
            "                          on this host, else tcp)\n"
            "  --base-port N           fixed tcp data ports from N (one per actor input;\n"
            "                          default: free ones the kernel picks)\n"
            "  --control-address ADDR  where the control socket binds (default 127.0.0.1;\n"
            "                          an address the other hosts reach, for remote actors)\n"
            "  --control-port N        its port (default: one the kernel picks)\n"
            "  --launcher CMD          how to start a remote instance: words (quoted as in\n"
            "                          a shell, but run without one), {host} replaced, then\n"
            "                          tusk-actor's arguments; the keys go to its standard\n"
            "                          input (default \"ssh {host}\")\n"
            "  --security curve|none   tcp links and the control socket authenticated and\n"
            "                          encrypted with CURVE, keys made for the run (default),\n"
            "                          or open to anyone who reaches them\n"
            "  --certs DIR             configured keys instead: the certificate folder\n"
            "                          (the same path on every host): NAME.key of every\n"
            "                          party, NAME.key_secret of those on each host; an\n"
            "                          instance uses its <hostname>'s, tusk-run --cert's\n"
            "  --cert NAME             tusk-run's certificate in DIR (default controller)\n"
            "  --new-cert PATH         write a new certificate PATH.key and PATH.key_secret\n"
            "  --actor-bin PATH        tusk-actor to run (default: next to tusk-run)\n"
            "  --actor-path PATH       actor library folders for every instance\n"
            "  --heartbeat-ms N        heartbeat period (default 500)\n"
            "  --timeout-ms N          silence of an instance's process that counts as a\n"
            "                          failure (default 5000); a long hook call is not\n"
            "                          silence: its limit is the actor's hook_timeout\n"
            "  --start-timeout-ms N    time to come up and to answer a command (default\n"
            "                          20000; longer while the instance is alive in the\n"
            "                          hook the command calls)\n"
            "  --orphan-ms N           an instance that hears nothing from tusk-run for N ms\n"
            "                          ends itself (default 10000); those on this host end\n"
            "                          at once when tusk-run dies\n"
            "  --live / --no-live      redraw the status table every second (default: when\n"
            "                          standard output is a terminal)\n"
            "  -q, --quiet             no summary table (lost buffers are still reported)\n"
            "  --report FILE           write the final figures as key=value lines to FILE\n"
            "\n"
            "  --status [DIR]          status table of a running run (default: your only\n"
            "                          run going on; refused when you have several)\n"
            "  --stop [DIR]            stop it: producers first, the rest once drained\n"
            "  --pause [DIR], --resume [DIR]\n"
            "\n"
            "Exit status: 0 clean run, every count reconciled; 1 a failure stopped the\n"
            "run; 2 bad usage, topology or library, or an instance that never came up;\n"
            "3 the run ended, but instances failed, or buffers were lost, arrived beyond\n"
            "what was sent, or arrived malformed.\n");
}

static int run(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"run", required_argument, NULL, 'r'},          {"run-dir", required_argument, NULL, 'd'},
        {"transport", required_argument, NULL, 't'},    {"base-port", required_argument, NULL, 'b'},
        {"control-address", required_argument, NULL, 'c'}, {"launcher", required_argument, NULL, 'l'},
        {"actor-bin", required_argument, NULL, 'a'},    {"actor-path", required_argument, NULL, 'p'},
        {"heartbeat-ms", required_argument, NULL, 'H'}, {"timeout-ms", required_argument, NULL, 'T'},
        {"start-timeout-ms", required_argument, NULL, 'S'}, {"live", no_argument, NULL, 'L'},
        {"no-live", no_argument, NULL, 'N'},            {"quiet", no_argument, NULL, 'q'},
        {"status", no_argument, NULL, 1},               {"stop", no_argument, NULL, 2},
        {"pause", no_argument, NULL, 3},                {"resume", no_argument, NULL, 4},
        {"report", required_argument, NULL, 'R'},      {"control-port", required_argument, NULL, 'P'},
        {"orphan-ms", required_argument, NULL, 'O'},
        {"security", required_argument, NULL, 5},        {"certs", required_argument, NULL, 6},
        {"cert", required_argument, NULL, 7},            {"new-cert", required_argument, NULL, 8},
        {"help", no_argument, NULL, 'h'},                {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    tusk_run_options_t opt = {0};
    opt.live = isatty(STDOUT_FILENO);
    const char *command = NULL;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "qh", longopts, NULL)) != -1) {
        unsigned *target = NULL;
        const char *name = NULL;
        switch (c) {
        case 'r': target = &opt.run, name = "--run"; break;
        case 'b': target = &opt.base_port, name = "--base-port"; break;
        case 'P': target = &opt.control_port, name = "--control-port"; break;
        case 'H': target = &opt.heartbeat_ms, name = "--heartbeat-ms"; break;
        case 'T': target = &opt.timeout_ms, name = "--timeout-ms"; break;
        case 'S': target = &opt.start_timeout_ms, name = "--start-timeout-ms"; break;
        case 'O': target = &opt.orphan_ms, name = "--orphan-ms"; break;
        case 'd': opt.run_dir = optarg; break;
        case 'c': opt.control_address = optarg; break;
        case 'l': opt.launcher = optarg; break;
        case 'a': opt.actor_bin = optarg; break;
        case 'p': opt.actor_path = optarg; break;
        case 'L': opt.live = true; break;
        case 'N': opt.live = false; break;
        case 'q': opt.quiet = true; break;
        case 'R': opt.report = optarg; break;
        case 't':
            opt.force_transport = true;
            if (strcmp(optarg, "ipc") == 0)
                opt.transport = TUSK_TRANSPORT_IPC;
            else if (strcmp(optarg, "tcp") == 0)
                opt.transport = TUSK_TRANSPORT_TCP;
            else {
                fprintf(stderr, PROG ": --transport '%s': ipc or tcp\n", optarg);
                return TUSK_EXIT_USAGE;
            }
            break;
        case 5:
            if (strcmp(optarg, "none") == 0)
                opt.insecure = true;
            else if (strcmp(optarg, "curve") == 0)
                opt.insecure = false;
            else {
                fprintf(stderr, PROG ": --security '%s': curve or none\n", optarg);
                return TUSK_EXIT_USAGE;
            }
            break;
        case 6: opt.certs = optarg; break;
        case 7: opt.cert = optarg; break;
        case 8: {
            tusk_error_t e;
            if (tusk_cert_new(optarg, &e) != TUSK_OK) {
                fprintf(stderr, PROG ": --new-cert: %s\n", e.message);
                return TUSK_EXIT_FAIL;
            }
            printf("tusk-run: wrote %s.key (public: copy it to every host) and %s.key_secret (keep it on its host)\n",
                   optarg, optarg);
            return TUSK_EXIT_OK;
        }
        case 1: command = "status"; break;
        case 2: command = "stop"; break;
        case 3: command = "pause"; break;
        case 4: command = "resume"; break;
        case 'h': return tusk_cli_help(cli);
        case 'V': return tusk_cli_version(cli);
        default: return TUSK_EXIT_USAGE;
        }
        if (target && !tusk_cli_unsigned(PROG, name, optarg, 0, UINT32_MAX, target))
            return TUSK_EXIT_USAGE;
    }
    tusk_error_t err;
    tusk_error_clear(&err);
    if (command) {
        if (optind + 1 < argc) {
            fprintf(stderr, PROG ": --%s takes one RUN_FOLDER at most, not also '%s'\n", command, argv[optind + 1]);
            return TUSK_EXIT_USAGE;
        }
        if (tusk_run_command(optind < argc ? argv[optind] : NULL, command, stdout, &err) != 0) {
            fprintf(stderr, PROG ": %s\n", err.message);
            return TUSK_EXIT_FAIL;
        }
        return TUSK_EXIT_OK;
    }
    if (optind + 1 != argc) {
        if (optind == argc)
            fprintf(stderr, PROG ": no TOPOLOGY.xml (" PROG " --help says more)\n");
        else
            fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind + 1]);
        return TUSK_EXIT_USAGE;
    }
    opt.topology = argv[optind];
    int status = tusk_run_topology(&opt, &err);
    if (status != TUSK_EXIT_OK)
        fprintf(stderr, PROG ": %s\n", err.message);
    return status;
}

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION,
                                   "[OPTIONS] TOPOLOGY.xml\n--status|--stop|--pause|--resume [RUN_FOLDER]", NULL, run,
                                   help};
    return tusk_cli_main(&cli, argc, argv);
}
