/* tusk-sim - the gamma-ray event simulation from the command line.
 *
 *   tusk-sim run  CONFIG [--events N] [--seed S] [--set KEY=VALUE]... -o FILE
 *                 simulate, write data:crystal (+ data:truth) frames to FILE
 *   tusk-sim info CONFIG [--set KEY=VALUE]...
 *                 load and check everything, describe what would be simulated
 *   tusk-sim efficiency CONFIG [--events N] [--seed S] [--set KEY=VALUE]...
 *                 transport only: per gamma line, the fraction of the
 *                 emitted gammas fully absorbed in germanium (photopeak
 *                 efficiency with perfect tracking) and the peak-to-total
 *   tusk-sim check FILE.adf [--gain G]
 *                 do the segment energies of data:crystal frames agree
 *                 with the net charges of their segments' traces?
 *
 * CONFIG is a simulation configuration (config/sim-co60.conf; keys in
 * tusk/sim.h); relative paths in it are taken from its folder, those given
 * with --set from the working directory. --set, --events and --seed
 * override its keys.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "tusk/adf_crystal.h"
#include "tusk/adf_file.h"
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
            "  efficiency CONFIG [--events N] [--seed S] [--set KEY=VALUE]...\n"
            "           transport only (no traces): per gamma line and for all, the\n"
            "           emitted gammas, those fully absorbed in germanium and those\n"
            "           that left any energy there; photopeak efficiency = full /\n"
            "           emitted and peak-to-total = full / any, with their standard\n"
            "           errors: each gamma's own deposits summed, the limit of perfect\n"
            "           tracking. CSV on stdout.\n"
            "  check FILE.adf [--gain G]\n"
            "           the data:crystal frames' segment energies against the net\n"
            "           charges of their traces (the last 8 samples less the first\n"
            "           10, over the gain: 2 ADC channels per keV): hit segments\n"
            "           (either at least 20 keV) where they differ by more than\n"
            "           10 %% + 5 keV, by ring. Meant for runs without noise and\n"
            "           smearing (noise_kev = fwhm_0 = fwhm_1332 = 0).\n"
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

/* The crystal shapes of an array with several (AGATA's A, B, C): each as
 * a crystal configuration, for tusk-basis gen -c. */
static void print_shapes(const array_t *a)
{
    const det_crystal_t *seen[8];
    unsigned n = 0;
    for (size_t i = 0; i < array_count(a); i++) {
        const det_crystal_t *c = array_crystal_of(a, i);
        unsigned k = 0;
        while (k < n && seen[k] != c)
            k++;
        if (k < n || c == array_crystal(a) || n == 8)
            continue;
        seen[n++] = c;
        char text[4096];
        det_config_format(det_crystal_config(c), text, sizeof text);
        printf("crystal shape %c (crystal %u and every third after it; %.1f cm3) - a configuration for tusk-basis "
               "gen -c:\n",
               'A' + (int)array_place(a, i)->shape, array_place(a, i)->id, det_crystal_volume(c, 900));
        for (const char *p = text; *p;) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);
            printf("    %.*s\n", len, p);
            p += len + (nl ? 1 : 0);
        }
    }
}

/* One gamma line's counts. */
typedef struct line_count {
    double energy;
    uint64_t emitted, full, any;
} line_count_t;

static void efficiency_row(const char *label, const line_count_t *l)
{
    double n = (double)l->emitted, eff = n > 0 ? (double)l->full / n : 0.0;
    double pt = l->any > 0 ? (double)l->full / (double)l->any : 0.0;
    printf("%s,%llu,%llu,%llu,%.5f,%.5f,%.5f,%.5f\n", label, (unsigned long long)l->emitted,
           (unsigned long long)l->full, (unsigned long long)l->any, eff, n > 0 ? sqrt(eff * (1.0 - eff) / n) : 0.0, pt,
           l->any > 0 ? sqrt(pt * (1.0 - pt) / (double)l->any) : 0.0);
}

static int cmd_efficiency(sim_t *sim, opts_t *o)
{
    enum { MAX_LINES = 256 };
    line_count_t lines[MAX_LINES], all = {0.0, 0, 0, 0};
    size_t nlines = 0;
    tusk_error_t err;
    double t0 = tusk_clock_s();
    for (;;) {
        const sim_gamma_tally_t *t;
        size_t n;
        if (sim_next_transport(sim, &t, &n, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", o->config, err.message);
            return TUSK_EXIT_FAIL;
        }
        if (!t)
            break;
        for (size_t g = 0; g < n; g++) {
            size_t k = 0;
            while (k < nlines && fabs(lines[k].energy - t[g].energy_kev) > 1e-3)
                k++;
            if (k == nlines) {
                if (nlines == MAX_LINES) {
                    fprintf(stderr, PROG ": %s: more than %d gamma energies: efficiency wants lines\n", o->config,
                            MAX_LINES);
                    return TUSK_EXIT_FAIL;
                }
                lines[nlines++] = (line_count_t){t[g].energy_kev, 0, 0, 0};
            }
            bool full = fabs(t[g].germanium_kev - t[g].energy_kev) <= 1e-6 * t[g].energy_kev;
            bool any = t[g].germanium_kev > 0.0;
            lines[k].emitted++;
            lines[k].full += full;
            lines[k].any += any;
            all.emitted++;
            all.full += full;
            all.any += any;
        }
    }
    double dt = tusk_clock_s() - t0;
    /* In increasing energy. */
    for (size_t i = 1; i < nlines; i++)
        for (size_t j = i; j > 0 && lines[j - 1].energy > lines[j].energy; j--) {
            line_count_t x = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = x;
        }
    printf("line_kev,emitted,full,any,efficiency,efficiency_err,peak_to_total,peak_to_total_err\n");
    for (size_t k = 0; k < nlines; k++) {
        char label[32];
        snprintf(label, sizeof label, "%.3f", lines[k].energy);
        efficiency_row(label, &lines[k]);
    }
    if (nlines > 1)
        efficiency_row("all", &all);
    sim_stats_t s = sim_stats(sim);
    if (!o->quiet)
        fprintf(stderr, PROG ": %llu decays (%llu gammas) in %.2f s; of the emitted energy %.1f %% in germanium, %.1f %% "
                "in capsules and cryostats, %.1f %% escaped\n",
                (unsigned long long)s.decays, (unsigned long long)s.gammas, dt,
                s.emitted_kev > 0 ? 100.0 * s.deposited_kev / s.emitted_kev : 0.0,
                s.emitted_kev > 0 ? 100.0 * s.passive_kev / s.emitted_kev : 0.0,
                s.emitted_kev > 0 ? 100.0 * s.escaped_kev / s.emitted_kev : 0.0);
    return 0;
}

static int cmd(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {0};
    int rc = parse_options(cli, argc, argv, &o);
    if (rc) {
        tusk_params_destroy(&o.params);
        return rc < 0 ? TUSK_EXIT_OK : rc;
    }
    bool info = strcmp(o.command, "info") == 0, eff = strcmp(o.command, "efficiency") == 0;
    if (!info && !eff && !o.out) {
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
        print_shapes(sim_array(sim));
    } else if (eff) {
        if (o.out) {
            fprintf(stderr, "%s: -o does not apply (the table goes to stdout)\n", argv[0]);
            rc = TUSK_EXIT_USAGE;
        } else {
            if (!o.quiet)
                fprintf(stderr, "%s\n", sim_describe(sim));
            rc = cmd_efficiency(sim, &o);
        }
    } else {
        if (!o.quiet)
            fprintf(stderr, "%s\n", sim_describe(sim));
        rc = cmd_run(sim, &o);
    }
    sim_destroy(&sim);
    tusk_params_destroy(&o.params);
    return rc;
}

/* ---- check ---------------------------------------------------------------- */

static double mean_of(const adf_crystal_t *c, unsigned ch, unsigned from, unsigned to)
{
    double s = 0.0;
    for (unsigned k = from; k < to; k++)
        s += c->trace[ch][k];
    return s / (to - from);
}

static int cmd_check(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"gain", required_argument, NULL, 'g'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    double gain = 2.0;
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "g:h", longs, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (!tusk_cli_double(argv[0], "--gain", optarg, 1e-3, 1000.0, &gain))
                return TUSK_EXIT_USAGE;
            break;
        case 'h': tusk_cli_help(cli); return TUSK_EXIT_OK;
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "%s: one ADF file expected\n", argv[0]);
        return TUSK_EXIT_USAGE;
    }
    const char *path = argv[optind];
    adf_error_t ae;
    adf_file_reader_t *r = adf_file_reader_open(path, NULL, &ae);
    if (!r) {
        fprintf(stderr, PROG ": %s\n", ae.message);
        return TUSK_EXIT_FAIL;
    }
    adf_crystal_t *cr = malloc(sizeof *cr);
    if (!cr) {
        adf_file_reader_destroy(&r);
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    unsigned long crystals = 0, hit[6] = {0}, off[6] = {0};
    adf_frame_t f;
    int rc, status = 0;
    while ((rc = adf_file_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type != ADF_TYPE_DATA_CRYSTAL)
            continue;
        if (adf_crystal_decode(&f, cr, &ae) != ADF_OK) {
            fprintf(stderr, PROG ": %s: %s\n", path, ae.message);
            status = TUSK_EXIT_FAIL;
            break;
        }
        if (cr->n_samples < 18) {
            fprintf(stderr, PROG ": %s: data:crystal of %u samples: at least 18 needed\n", path, cr->n_samples);
            status = TUSK_EXIT_FAIL;
            break;
        }
        crystals++;
        unsigned n = cr->n_samples;
        for (unsigned g = 0; g < ADF_CRYSTAL_SEGMENTS; g++) {
            double net = (mean_of(cr, g, n - 8, n) - mean_of(cr, g, 0, 10)) / gain, e = cr->segment_energy[g];
            if (e < 20.0 && net < 20.0)
                continue;
            hit[g % 6]++;
            off[g % 6] += fabs(net - e) > 0.1 * fmax(e, net) + 5.0;
        }
    }
    if (!status && rc != ADF_END) {
        fprintf(stderr, PROG ": %s: %s\n", path, adf_file_reader_error(r)->message);
        status = TUSK_EXIT_FAIL;
    }
    adf_file_reader_destroy(&r);
    free(cr);
    if (status)
        return status;
    unsigned long all = 0, all_off = 0;
    for (int k = 0; k < 6; k++) {
        all += hit[k];
        all_off += off[k];
    }
    printf("%s: %lu crystals, %lu hit segments; energy and net charge differ in %lu (%.2f %%)\n", path, crystals, all,
           all_off, all ? 100.0 * (double)all_off / (double)all : 0.0);
    printf("ring,hit,differ,percent\n");
    for (int k = 0; k < 6; k++)
        printf("%d,%lu,%lu,%.2f\n", k + 1, hit[k], off[k], hit[k] ? 100.0 * (double)off[k] / (double)hit[k] : 0.0);
    return 0;
}

static const tusk_cli_command_t commands[] = {
    {"run", cmd, "simulate, write data:crystal (+ data:truth) frames to a file"},
    {"info", cmd, "check the configuration, basis and array; describe them"},
    {"efficiency", cmd, "transport only: photopeak efficiency and peak-to-total per gamma line"},
    {"check", cmd_check, "segment energies against the net charges of the traces (data:crystal)"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "COMMAND CONFIG [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
