/* tusk-actor - host one instance of one actor in a distributed run.
 *
 * Started by tusk-run (locally, or on another host through ssh); it
 * connects to the controller and takes its orders from there. */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tusk-actor --control ENDPOINT --actor NAME --instance K [--incarnation N]\n"
                 "                  [--orphan-ms MS]\n"
                 "\n"
                 "Hosts instance K of actor NAME for the tusk-run controller at ENDPOINT\n"
                 "(e.g. tcp://10.0.0.1:5500). tusk-run starts it; you run it by hand only\n"
                 "to debug. It exits when told to, or when the controller has been silent\n"
                 "for MS milliseconds (default 10000; tusk-run passes its --orphan-ms), even\n"
                 "inside a hook: an orphan does not go on producing.\n");
}

static bool parse_uint(const char *s, unsigned *out)
{
    char *end = NULL;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || *s == '-' || v > 0xFFFFu)
        return false;
    *out = (unsigned)v;
    return true;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"control", required_argument, NULL, 'c'},
                                             {"actor", required_argument, NULL, 'a'},
                                             {"instance", required_argument, NULL, 'i'},
                                             {"incarnation", required_argument, NULL, 'n'},
                                             {"orphan-ms", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    tusk_node_options_t opt = {.orphan_ms = 10000};
    int c;
    bool have_instance = false;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': opt.control = optarg; break;
        case 'a': opt.actor = optarg; break;
        case 'i':
            if (!parse_uint(optarg, &opt.instance)) {
                fprintf(stderr, "tusk-actor: --instance '%s' is not a number\n", optarg);
                return 2;
            }
            have_instance = true;
            break;
        case 'n':
            if (!parse_uint(optarg, &opt.incarnation)) {
                fprintf(stderr, "tusk-actor: --incarnation '%s' is not a number\n", optarg);
                return 2;
            }
            break;
        case 'o': {
            char *end = NULL;
            opt.orphan_ms = (unsigned)strtoul(optarg, &end, 10);
            if (!*optarg || *end) {
                fprintf(stderr, "tusk-actor: --orphan-ms '%s' is not a number\n", optarg);
                return 2;
            }
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!opt.control || !opt.actor || !have_instance || optind != argc) {
        usage(stderr);
        return 2;
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
