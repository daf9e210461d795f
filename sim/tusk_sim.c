/* tusk-sim - the gamma-ray event simulation from the command line.
 *
 *   tusk-sim run  CONFIG [--events N] [--seed S] [--set KEY=VALUE]... -o FILE
 *                 simulate, write data:crystal (+ data:truth) frames to FILE
 *   tusk-sim info CONFIG [--set KEY=VALUE]...
 *                 load and check everything, describe what would be simulated
 *
 * CONFIG is a simulation configuration (config/sim-co60.conf; keys in
 * tusk/sim.h); relative paths in it are taken from its folder, those given
 * with --set from the working directory. --set, --events and --seed
 * override its keys.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "tusk/adf_writer.h"
#include "tusk/sim.h"

#define PROG "tusk-sim"

static void help(FILE *out)
{
    fprintf(out,
            "  run  CONFIG [--events N] [--seed S] [--set KEY=VALUE]... [-q] -o FILE\n"
            "           write the events' data:crystal and data:truth frames (ADF) to\n"
            "           FILE, then a summary on stderr\n"
            "  info CONFIG [--set KEY=VALUE]...\n"
            "\n"
            "CONFIG: key = value lines (see config/sim-co60.conf and sim/README.md);\n"
            "relative paths in it are taken from its folder.\n"
            "\n"
            "Exit status: 0 fine, 1 failure (the configuration, a file, the\n"
            "simulation), 2 bad usage.\n");
}

typedef struct opts {
    const char *command, *config, *out;
    tusk_params_t *params;
    bool quiet;
} opts_t;

static int set(opts_t *o, const char *key, const char *value)
{
    tusk_error_t err;
    if (tusk_params_set(o->params, key, value, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_USAGE;
    }
    return 0;
}

static int parse_options(const tusk_cli_t *cli, int argc, char **argv, opts_t *o)
{
    static const struct option longs[] = {{"events", required_argument, NULL, 'n'},
                                          {"seed", required_argument, NULL, 's'},
                                          {"set", required_argument, NULL, 'S'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    /* The configuration first, so the options override it. */
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        tusk_cli_help(cli);
        return -1; /* done */
    }
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "%s: the CONFIG file comes first\n", argv[0]);
        return TUSK_EXIT_USAGE;
    }
    o->command = strchr(argv[0], ' ') + 1;
    o->config = argv[1];
    tusk_error_t err;
    if (sim_config_load(&o->params, o->config, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    optind = 2;
    int c, st;
    while ((c = tusk_cli_getopt(cli, argc, argv, "n:s:S:o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'n':
            if ((st = set(o, "events", optarg)))
                return st;
            break;
        case 's':
            if ((st = set(o, "seed", optarg)))
                return st;
            break;
        case 'S':
            if (!tusk_cli_set(argv[0], o->params, optarg))
                return TUSK_EXIT_USAGE;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h': tusk_cli_help(cli); return -1; /* done */
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        return TUSK_EXIT_USAGE;
    }
    return 0;
}

static int cmd_run(sim_t *sim, opts_t *o)
{
    FILE *f = fopen(o->out, "wb");
    if (!f) {
        fprintf(stderr, PROG ": %s: cannot create: %s\n", o->out, strerror(errno));
        return TUSK_EXIT_FAIL;
    }
    size_t cap = sim_event_bytes_max(sim);
    uint8_t *buf = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    int rc = 0;
    if (!buf || !w) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = TUSK_EXIT_FAIL;
    }
    tusk_error_t err;
    double t0 = tusk_clock_s();
    uint64_t bytes = 0;
    while (rc == 0) {
        const sim_event_t *ev;
        if (sim_next(sim, &ev, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", o->config, err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        if (!ev)
            break;
        adf_writer_reset(w, buf, cap);
        if (sim_encode(sim, ev, w, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": event %u: %s\n", (unsigned)ev->event, err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        size_t n = adf_writer_used(w);
        if (fwrite(buf, 1, n, f) != n) {
            fprintf(stderr, PROG ": %s: write failed: %s\n", o->out, strerror(errno));
            rc = TUSK_EXIT_FAIL;
            break;
        }
        bytes += n;
    }
    double dt = tusk_clock_s() - t0;
    if (fclose(f) != 0 && rc == 0) {
        fprintf(stderr, PROG ": %s: write failed: %s\n", o->out, strerror(errno));
        rc = TUSK_EXIT_FAIL;
    }
    free(buf);
    adf_writer_destroy(&w);
    sim_stats_t s = sim_stats(sim);
    if (!o->quiet || rc != 0)
        fprintf(stderr,
                PROG ": %llu decays (%llu gammas), %llu events with %llu crystals read out, %llu interaction "
                "points; %.1f %% of the emitted energy deposited; %llu bytes to %s in %.2f s (%.0f decays/s, %.0f "
                "events/s)\n",
                (unsigned long long)s.decays, (unsigned long long)s.gammas, (unsigned long long)s.events,
                (unsigned long long)s.crystals, (unsigned long long)s.points,
                s.emitted_kev > 0 ? 100.0 * s.deposited_kev / s.emitted_kev : 0.0, (unsigned long long)bytes,
                o->out, dt, dt > 0 ? s.decays / dt : 0.0, dt > 0 ? s.events / dt : 0.0);
    if (s.truth_truncated)
        fprintf(stderr, PROG ": %llu events had more than %d interaction points: their truth frames hold the "
                "first %d (flag 1)\n", (unsigned long long)s.truth_truncated, ADF_TRUTH_MAX_POINTS,
                ADF_TRUTH_MAX_POINTS);
    return rc;
}

static int cmd(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {0};
    int rc = parse_options(cli, argc, argv, &o);
    if (rc) {
        tusk_params_destroy(&o.params);
        return rc < 0 ? TUSK_EXIT_OK : rc;
    }
    bool info = strcmp(o.command, "info") == 0;
    if (!info && !o.out) {
        fprintf(stderr, "%s: -o FILE is required\n", argv[0]);
        tusk_params_destroy(&o.params);
        return TUSK_EXIT_USAGE;
    }
    sim_t *sim = NULL;
    tusk_error_t err;
    if (sim_new(&sim, o.params, o.config, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
    } else if (info) {
        printf("%s\n", sim_describe(sim));
    } else {
        if (!o.quiet)
            fprintf(stderr, "%s\n", sim_describe(sim));
        rc = cmd_run(sim, &o);
    }
    sim_destroy(&sim);
    tusk_params_destroy(&o.params);
    return rc;
}

static const tusk_cli_command_t commands[] = {
    {"run", cmd, "simulate, write data:crystal (+ data:truth) frames to a file"},
    {"info", cmd, "check the configuration, basis and array; describe them"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "COMMAND CONFIG [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
