/* tusk-actor - host one instance of one actor in a distributed run.
 *
 * Started by tusk-run (locally, or on another host through ssh); it
 * connects to the controller and takes its orders from there. */
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "node.h"

#define PROG "tusk-actor"

static void help(FILE *out)
{
    fprintf(out, "Hosts instance K of actor NAME for the tusk-run controller at ENDPOINT\n"
                 "(e.g. tcp://10.0.0.1:5500). tusk-run starts it; you run it by hand only\n"
                 "to debug. It exits when told to, or when the controller has been silent\n"
                 "for MS milliseconds (default 10000; tusk-run passes its --orphan-ms), even\n"
                 "inside a hook: an orphan does not go on producing.\n"
                 "\n"
                 "Exit status: 0 told to end, 2 bad usage, another the controller was lost.\n");
}

static int run(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"control", required_argument, NULL, 'c'},
                                             {"actor", required_argument, NULL, 'a'},
                                             {"instance", required_argument, NULL, 'i'},
                                             {"incarnation", required_argument, NULL, 'n'},
                                             {"orphan-ms", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    tusk_node_options_t opt = {.orphan_ms = 10000};
    int c;
    bool have_instance = false;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': opt.control = optarg; break;
        case 'a': opt.actor = optarg; break;
        case 'i':
            if (!tusk_cli_unsigned(PROG, "--instance", optarg, 0, 0xFFFF, &opt.instance))
                return TUSK_EXIT_USAGE;
            have_instance = true;
            break;
        case 'n':
            if (!tusk_cli_unsigned(PROG, "--incarnation", optarg, 0, 0xFFFF, &opt.incarnation))
                return TUSK_EXIT_USAGE;
            break;
        case 'o':
            if (!tusk_cli_unsigned(PROG, "--orphan-ms", optarg, 0, UINT_MAX, &opt.orphan_ms))
                return TUSK_EXIT_USAGE;
            break;
        case 'h': return tusk_cli_help(cli);
        case 'V': return tusk_cli_version(cli);
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (!opt.control || !opt.actor || !have_instance || optind != argc) {
        if (optind != argc)
            fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        else
            fprintf(stderr, PROG ": --control, --actor and --instance are required\n");
        return TUSK_EXIT_USAGE;
    }
    /* A dead downstream peer must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    tusk_error_t err;
    tusk_error_clear(&err);
    int status = tusk_node_run(&opt, &err);
    if (status != 0)
        fprintf(stderr, "%s\n", err.message);
    return status;
}

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION,
                                   "--control ENDPOINT --actor NAME --instance K [--incarnation N] [--orphan-ms MS]",
                                   NULL, run, help};
    return tusk_cli_main(&cli, argc, argv);
}
