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
#include "engine.h"
#include "reports.h"
#include "security.h"
#include "webctl.h"

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
            "  --transport ipc|tcp|shm data transport (default: ipc when every actor is\n"
            "                          on this host, else tcp); shm: ipc, with the\n"
            "                          buffers in shared memory (every actor on this host)\n"
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
            "                          (what consumers print, spectra and QA tables, comes\n"
            "                          under the summary: the end of each consumer's log)\n"
            "  --keep-runs N           the retention rule: the newest N finished run folders\n"
            "                          (logs: NAME.K.log; configuration folders: NAME.K/)\n"
            "                          stay in the private folder, older ones are removed\n"
            "                          (default 10; 0: a clean run removes its own)\n"
            "  --keep                  keep this run folder whatever the retention rule\n"
            "  --narval-script FILE    a NARVAL shell script: its 'set library LIB SUBSYSTEM\n"
            "                          ACTOR' lines name the libraries of generic_producer/\n"
            "                          filter/consumer actors (repeatable; the same path on\n"
            "                          every host), as for tusk-emulate\n"
            "  --debug INSTANCE=gdbserver:PORT | INSTANCE=valgrind\n"
            "                          run one local instance (NAME or NAME[K]) under\n"
            "                          gdbserver, waiting for gdb on localhost:PORT, or\n"
            "                          valgrind's memcheck (report RUN_FOLDER/NAME.K.valgrind;\n"
            "                          errors or leaks: exit 3); no timeouts apply to it;\n"
            "                          with --serve it stays under the tool over every run\n"
            "  --engine NAME           where instances run: direct (default: tusk-run's\n"
            "                          processes, the launcher for other hosts), systemd\n"
            "                          (transient units of the user's manager: systemd-run\n"
            "                          --user; through the launcher on other hosts; output\n"
            "                          to the run folder and the journal: journalctl -t\n"
            "                          tusk-rRUN-PID-ACTOR.K, every command in RUN_FOLDER/\n"
            "                          journal.txt), systemd-system (the system manager's),\n"
            "                          or slurm (a job step per instance, srun, on its\n"
            "                          <hostname>, a node of the allocation; actors without\n"
            "                          one round robin over the allocation's nodes, in\n"
            "                          topology order, said at start)\n"
            "  --unit-property [ACTOR:]NAME=VALUE\n"
            "                          systemd engines: a unit property of every instance\n"
            "                          (or ACTOR's): CPUQuota=50%%, MemoryMax=2G,\n"
            "                          AllowedCPUs=0-3, ... (repeatable)\n"
            "  --units DIR             write DIR/tusk-STEM.service, a permanent systemd\n"
            "                          installation of the chain (tusk-run under systemd,\n"
            "                          restarted on failure; with --engine systemd or\n"
            "                          systemd-system and the --unit-property given), and exit\n"
            "  --merge-reports         merge the --report FILEs given as arguments into one\n"
            "                          on standard output (counts summed; tusk-reprocess)\n"
            "\n"
            "  --status [DIR]          status table of a running run (default: your only\n"
            "                          run going on; refused when you have several)\n"
            "  --stop [DIR]            stop it: producers first, the rest once drained\n"
            "  --pause [DIR], --resume [DIR]\n"
            "\n"
            "A controller that stays up (README.md, \"Operators\"):\n"
            "  --serve TOPOLOGY.xml    start and configure every instance once (libraries\n"
            "                          loaded, process_initialise called), then wait for\n"
            "                          commands; each run's summary goes to standard\n"
            "                          output, its figures to RUN_FOLDER/run-N.report\n"
            "  --start [--run N] [DIR] start a run (default number: the last one + 1)\n"
            "  --wait [DIR]            wait for the run going on to end; print its summary\n"
            "  --reset [DIR]           between runs: process_reset and process_initialise\n"
            "                          on every instance (e.g. a file producer rewinds)\n"
            "  --set ACTOR.PARAM=VALUE [DIR], --set ACTOR[K].PARAM=VALUE [DIR]\n"
            "                          between runs: a parameter the actor declares\n"
            "                          changeable (process_changeable) takes a new value\n"
            "  --quit [DIR]            stop the run going on, end every instance and the\n"
            "                          controller\n"
            "  (--status, --stop, --pause, --resume as above)\n"
            "\n"
            "  --web [ADDR:]PORT       serve the status page, /metrics and the commands over\n"
            "                          HTTP (port 0: one the kernel picks; ADDR default\n"
            "                          127.0.0.1). Its address, with the token that commands\n"
            "                          go with, in RUN_FOLDER/web (README.md, \"Operators\")\n"
            "  --tap 'UP[K]->DOWN[K][ every=N]' [DIR]\n"
            "                          attach a sampling tap to that link of the run going\n"
            "                          on: prints its address, for tusk-tap (never slows\n"
            "                          the chain: samples it cannot take are dropped and\n"
            "                          counted); every=N: every N-th buffer offered\n"
            "  --untap UP[K]->DOWN[K] [DIR]  detach it\n"
            "\n"
            "Exit status: 0 clean run, every count reconciled; 1 a failure stopped the\n"
            "run; 2 bad usage, topology or library, or an instance that never came up;\n"
            "3 the run ended, but instances failed, or buffers were lost, arrived beyond\n"
            "what was sent, or arrived malformed, or --debug's valgrind found errors.\n");
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
        {"keep", no_argument, NULL, 9},                  {"narval-script", required_argument, NULL, 10},
        {"debug", required_argument, NULL, 11},          {"keep-runs", required_argument, NULL, 12},
        {"engine", required_argument, NULL, 20},         {"unit-property", required_argument, NULL, 21},
        {"units", required_argument, NULL, 22},          {"merge-reports", no_argument, NULL, 23},
        {"serve", no_argument, NULL, 30},               {"start", no_argument, NULL, 31},
        {"reset", no_argument, NULL, 32},               {"set", required_argument, NULL, 33},
        {"quit", no_argument, NULL, 34},                {"wait", no_argument, NULL, 35},
        {"web", required_argument, NULL, 40},
        {"tap", required_argument, NULL, 41},          {"untap", required_argument, NULL, 42},
        {"help", no_argument, NULL, 'h'},                {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    tusk_run_options_t opt = {0};
    opt.live = isatty(STDOUT_FILENO);
    const char *command = NULL, *command_args = NULL;
    const char *web = NULL; /* --web: webctl.h */
    bool serve = false;
    const char *engine_name = NULL, *units_dir = NULL; /* engine.h */
    static const char *unit_props[64];
    size_t n_unit_props = 0;
    bool merge_reports = false;
    static const char *scripts[64];
    opt.narval_scripts = scripts;
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
        case 12: target = &opt.keep_runs, name = "--keep-runs", opt.keep_runs_set = true; break;
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
            opt.shm = strcmp(optarg, "shm") == 0;
            if (strcmp(optarg, "ipc") == 0 || opt.shm)
                opt.transport = TUSK_TRANSPORT_IPC;
            else if (strcmp(optarg, "tcp") == 0)
                opt.transport = TUSK_TRANSPORT_TCP;
            else {
                fprintf(stderr, PROG ": --transport '%s': ipc, tcp or shm\n", optarg);
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
        case 9: opt.keep_run_dir = true; break;
        case 10:
            if (opt.n_narval_scripts == sizeof scripts / sizeof scripts[0]) {
                fprintf(stderr, PROG ": --narval-script: at most %zu\n", sizeof scripts / sizeof scripts[0]);
                return TUSK_EXIT_USAGE;
            }
            scripts[opt.n_narval_scripts++] = optarg;
            break;
        case 11: opt.debug = optarg; break;
        case 20: engine_name = optarg; break;
        case 21:
            if (n_unit_props == sizeof unit_props / sizeof unit_props[0]) {
                fprintf(stderr, PROG ": --unit-property: at most %zu\n", sizeof unit_props / sizeof unit_props[0]);
                return TUSK_EXIT_USAGE;
            }
            unit_props[n_unit_props++] = optarg;
            break;
        case 22: units_dir = optarg; break;
        case 23: merge_reports = true; break;
        case 1: command = "status"; break;
        case 2: command = "stop"; break;
        case 3: command = "pause"; break;
        case 4: command = "resume"; break;
        case 30: serve = true; break;
        case 31: command = "start"; break;
        case 32: command = "reset"; break;
        case 33: command = "set", command_args = optarg; break;
        case 34: command = "quit"; break;
        case 35: command = "wait"; break;
        case 40: web = optarg; break;
        case 41: command = "tap", command_args = optarg; break;
        case 42: command = "untap", command_args = optarg; break;
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
        char run_number[16];
        if (strcmp(command, "start") == 0 && opt.run) {
            snprintf(run_number, sizeof run_number, "%u", opt.run);
            command_args = run_number;
        }
        if (tusk_run_command_args(optind < argc ? argv[optind] : NULL, command, command_args, stdout, &err) != 0) {
            fprintf(stderr, PROG ": %s\n", err.message);
            return TUSK_EXIT_FAIL;
        }
        return TUSK_EXIT_OK;
    }
    if (merge_reports) {
        if (optind == argc) {
            fprintf(stderr, PROG ": --merge-reports: no REPORT files\n");
            return TUSK_EXIT_USAGE;
        }
        if (tusk_reports_merge((const char *const *)argv + optind, (size_t)(argc - optind), stdout, &err) != 0) {
            fprintf(stderr, PROG ": --merge-reports: %s\n", err.message);
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
    tusk_engine_t *engine = NULL;
    if (tusk_engine_from_options(&engine, engine_name, unit_props, n_unit_props, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_USAGE;
    }
    if (units_dir) {
        int st = TUSK_EXIT_OK;
        if (tusk_engine_units(engine, opt.topology, units_dir, stdout, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --units: %s\n", err.message);
            st = TUSK_EXIT_USAGE;
        }
        tusk_engine_destroy(&engine);
        return st;
    }
    opt.engine = engine;
    tusk_webctl_t *webctl = NULL;
    tusk_ctl_observer_t observer;
    if (web) {
        char address[64];
        unsigned port;
        if (tusk_webctl_parse(web, address, sizeof address, &port, &err) != TUSK_OK ||
            tusk_webctl_new(&webctl, address[0] ? address : NULL, port, NULL, &observer, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            tusk_engine_destroy(&engine);
            return TUSK_EXIT_USAGE;
        }
        opt.observer = &observer;
    }
    int status = serve ? tusk_run_serve(&opt, &err) : tusk_run_topology(&opt, &err);
    tusk_webctl_destroy(&webctl);
    tusk_engine_destroy(&engine);
    if (status != TUSK_EXIT_OK)
        fprintf(stderr, PROG ": %s\n", err.message);
    return status;
}

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION,
                                   "[OPTIONS] [--serve] TOPOLOGY.xml\n"
                                   "--status|--stop|--pause|--resume|--start|--wait|--reset|--quit [RUN_FOLDER]\n"
                                   "--set ACTOR.PARAM=VALUE [RUN_FOLDER]", NULL, run,
                                   help};
    return tusk_cli_main(&cli, argc, argv);
}
