/* bench_track.c - `tusk-bench track`: gamma-ray tracking speed.
 *
 *   tusk-bench track --basis FILE [--multiplicity N] [--events N] [--array FILE]
 *                    [--points MODE] [--device SETTING]... [--threads N]...
 *                    [--seconds S] [--seed S] [--set KEY=VALUE]...
 *
 * Events are simulated first (not timed; tusk/sim.h): multiplicity 1 is a
 * 1332.5 keV line, multiplicity M > 1 the benchmark source (M gammas
 * evenly spaced from 80 keV to 2.6 MeV), by default in the 86-crystal
 * shell (config/array-shell.conf, from the current folder), and their truth_segments points
 * (a perfect PSA) go into one batch. Then, timed: the CPU reference
 * (track_run, one thread), the fast backend (track_run on N host threads)
 * and OpenCL on each --device with N host threads (track_cl_run: one
 * launch a pass for the whole batch, the host's work on the threads), for
 * each --threads N (repeatable; default 0: one per online CPU), each
 * repeated until --seconds have passed. A row gives events/s and orders
 * (permutations) evaluated per second; an OpenCL row also the kernels'
 * time and the rest (host work and transfers) per batch. Without
 * --multiplicity both 1 and 30 are measured. Every row checks that its
 * results are the reference's: the fast rows bit for bit, the OpenCL
 * rows but for near-ties (tusk/track_cl.h), which it counts. --set takes
 * the tracking's settings (tusk/track.h; unknown keys refused), e.g.
 * recombine_points. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "bench_track.h"
#include "tusk/sim.h"
#include "tusk/track.h"
#include "tusk/track_cl.h"

#define PROG "tusk-bench track"
#define MAX_DEVICES 8
#define MAX_THREADS 16

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " --basis FILE [OPTIONS]\n"
            "\n"
            "  --basis FILE        the signal basis the simulation needs (tusk-basis gen)\n"
            "  --array FILE        the array (config/array-shell.conf: run from the source tree)\n"
            "  --multiplicity N    gammas an event: 1 (a 1332.5 keV line) or N of 80 keV - 2.6 MeV\n"
            "                      (default: both 1 and 30)\n"
            "  --events N          simulated events in the batch (500)\n"
            "  --points MODE       truth or truth_segments (truth_segments)\n"
            "  --device SETTING    an OpenCL device to measure (repeatable; tusk-cl list)\n"
            "  --threads N         host threads of the fast and OpenCL rows (repeatable: a row each;\n"
            "                      0: one per online CPU; default 0)\n"

            "  --seconds S         least time per measurement (1)\n"
            "  --seed S            simulation seed (1)\n"
            "  --set KEY=VALUE     a tracking setting (tusk/track.h; repeatable)\n");
}

typedef struct opts {
    const char *basis, *array, *points;
    unsigned multiplicity, events;
    uint64_t seed;
    double seconds;
    const char *device[MAX_DEVICES];
    unsigned devices;
    unsigned threads[MAX_THREADS];
    unsigned n_threads;
    tusk_params_t *set;
} opts_t;

/* Simulate until o->events events, their points into batch. */
static int simulate(const opts_t *o, unsigned long m, track_t *t, track_batch_t *b, sim_t **simp)
{
    char text[2048];
    if (m == 1)
        snprintf(text, sizeof text, "basis = %s\narray = %s\nsource = line\nenergy = 1332.5\nevents = 0\nseed = %" PRIu64 "\n",
                 o->basis, o->array, o->seed);
    else
        snprintf(text, sizeof text,
                 "basis = %s\narray = %s\nsource = multiplicity\nmultiplicity = %lu\nevents = 0\nseed = %" PRIu64 "\n",
                 o->basis, o->array, m, o->seed);
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    if (!p || tusk_params_parse(p, text, strlen(text), "bench", &err) != TUSK_OK ||
        sim_new(simp, p, "simulation", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", p ? err.message : "out of memory");
        tusk_params_destroy(&p);
        return 1;
    }
    tusk_params_destroy(&p);
    bool seg = track_config(t)->points == TRACK_POINTS_TRUTH_SEGMENTS;
    const sim_event_t *ev;
    while (track_batch_events(b) < o->events) {
        if (sim_next(*simp, &ev, &err) != TUSK_OK || !ev) {
            fprintf(stderr, PROG ": simulation: %s\n", ev ? err.message : "ended early");
            return 1;
        }
        if (track_batch_begin(b, ev->event, ev->timestamp, &err) != TUSK_OK ||
            track_add_truth(t, b, ev->truth, seg, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            return 1;
        }
    }
    return 0;
}

typedef struct row {
    double events_s, orders_s, seconds;
    uint64_t runs;
    track_stats_t per_run;
} row_t;

/* Run the batch until `seconds` have passed (at least once), on cl or the
 * CPU; per_run: the statistics of one run. */
static int measure(const opts_t *o, track_t *t, track_cl_t *cl, track_batch_t *b, row_t *r)
{
    tusk_error_t err;
    memset(r, 0, sizeof *r);
    track_stats_reset(t);
    double t0 = tusk_clock_s(), dt;
    do {
        int st = cl ? track_cl_run(cl, b, &err) : track_run(t, b, &err);
        if (st) {
            fprintf(stderr, PROG ": %s\n", err.message);
            return 1;
        }
        if (r->runs++ == 0)
            track_stats(t, &r->per_run);
        dt = tusk_clock_s() - t0;
    } while (dt < o->seconds);
    track_stats_t s;
    track_stats(t, &s);
    r->seconds = dt;
    r->events_s = (double)s.events / dt;
    r->orders_s = (double)s.permutations / dt;
    return 0;
}

static void print_row(const char *what, const row_t *r)
{
    printf("  %-58s %12.0f %14.3g %6llu runs\n", what, r->events_s, r->orders_s, (unsigned long long)r->runs);
}

/* A run's results, to compare a row's with the reference's. */
typedef struct results {
    size_t events, gammas;
    uint32_t *head;            /* an event: n_gammas | status << 16 */
    adf_tracked_gamma_t *g;
} results_t;

static void results_free(results_t *r)
{
    free(r->head);
    free(r->g);
    memset(r, 0, sizeof *r);
}

static int results_take(const track_batch_t *b, results_t *r)
{
    results_free(r);
    size_t n = track_batch_events(b);
    adf_tracked_t *x = malloc(sizeof *x);
    r->head = malloc((n ? n : 1) * sizeof *r->head);
    size_t cap = 0;
    for (size_t e = 0; x && r->head && e < n; e++) {
        track_batch_result(b, e, x);
        r->head[e] = (uint32_t)x->n_gammas | (uint32_t)x->status << 16;
        if (r->gammas + x->n_gammas > cap) {
            size_t c = 2 * (r->gammas + x->n_gammas) + 64;
            adf_tracked_gamma_t *g = realloc(r->g, c * sizeof *g);
            if (!g)
                break;
            r->g = g;
            cap = c;
        }
        memcpy(r->g + r->gammas, x->gamma, x->n_gammas * sizeof *x->gamma);
        r->gammas += x->n_gammas;
        r->events = e + 1;
    }
    free(x);
    if (r->events != n) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    return 0;
}

/* Events whose gammas differ between a and b. */
static size_t results_differ(const results_t *a, const results_t *b)
{
    size_t d = 0, ga = 0, gb = 0;
    for (size_t e = 0; e < a->events && e < b->events; e++) {
        size_t na = a->head[e] & 0xFFFF, nb = b->head[e] & 0xFFFF;
        d += a->head[e] != b->head[e] || memcmp(a->g + ga, b->g + gb, na * sizeof *a->g) != 0;
        ga += na;
        gb += nb;
    }
    return d + (a->events > b->events ? a->events - b->events : b->events - a->events);
}

static int bench_one(const opts_t *o, unsigned long m)
{
    track_config_t cfg;
    track_config_default(&cfg);
    cfg.points = (enum track_points)track_points_parse(o->points);
    tusk_error_t cerr;
    if (track_config_read(&cfg, o->set, true, "--set", &cerr) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", cerr.message);
        return 1;
    }
    sim_t *sim = NULL;
    track_t *t = NULL;
    track_batch_t *b = track_batch_new();
    results_t ref = {0}, got = {0};
    tusk_error_t err;
    int rc = 1;
    if (!b)
        goto done;
    /* the array the simulation uses, for the inner radius */
    if (track_new(&t, &cfg, NULL, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        goto done;
    }
    if (simulate(o, m, t, b, &sim))
        goto done;
    track_destroy(&t);
    if (track_new(&t, &cfg, sim_array(sim), &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        goto done;
    }
    printf("multiplicity %lu: %zu events, %zu %s points (%.1f an event), %zu crystals\n", m,
           track_batch_events(b), track_batch_points(b), o->points,
           (double)track_batch_points(b) / (double)track_batch_events(b), array_count(sim_array(sim)));
    printf("  %-58s %12s %14s\n", "backend", "events/s", "orders/s");
    row_t r, r0;
    if (measure(o, t, NULL, b, &r0) || results_take(b, &ref))
        goto done;
    char line[768];
    track_stats_format(&r0.per_run, line, sizeof line);
    print_row("reference (CPU, 1 thread)", &r0);
    printf("    per batch: %s\n", line);
    for (unsigned k = 0; k < o->n_threads; k++) {
        if (track_set_threads(t, o->threads[k], &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --threads %u: %s\n", o->threads[k], err.message);
            goto done;
        }
        if (measure(o, t, NULL, b, &r) || results_take(b, &got))
            goto done;
        char what[128];
        snprintf(what, sizeof what, "fast (CPU, %u thread%s)", track_threads(t), track_threads(t) == 1 ? "" : "s");
        print_row(what, &r);
        if (results_differ(&ref, &got) || memcmp(&r.per_run, &r0.per_run, sizeof r.per_run) != 0) {
            fprintf(stderr, PROG ": %s: %zu events' gammas, or the statistics, differ from the reference's\n", what,
                    results_differ(&ref, &got));
            goto done;
        }
    }
    for (unsigned d = 0; d < o->devices; d++) {
        track_cl_t *cl = NULL;
        if (track_set_threads(t, 1, &err) != TUSK_OK || track_cl_new(&cl, t, o->device[d], 0, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --device %s: %s\n", o->device[d], err.message);
            goto done;
        }
        for (unsigned k = 0; k < o->n_threads; k++) {
            /* a first run builds what the device needs (buffers) */
            if (track_set_threads(t, o->threads[k], &err) != TUSK_OK || track_cl_run(cl, b, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": %s\n", err.message);
                track_cl_destroy(&cl);
                goto done;
            }
            track_cl_stats_t c0, c1;
            track_cl_stats(cl, &c0);
            int st = measure(o, t, cl, b, &r) || results_take(b, &got);
            track_cl_stats(cl, &c1);
            if (st) {
                track_cl_destroy(&cl);
                goto done;
            }
            char what[512];
            snprintf(what, sizeof what, "opencl, %u host thread%s: %.30s", track_threads(t),
                     track_threads(t) == 1 ? "" : "s", track_cl_describe(cl));
            print_row(what, &r);
            const double kernels = (c1.kernel_ms - c0.kernel_ms) / (double)r.runs;
            const double batch = 1e3 * r.seconds / (double)r.runs;
            printf("    a batch: %.3f ms, of which kernels %.3f ms (%llu launches), the rest (host, transfers) "
                   "%.3f ms; "
                   "%zu of %zu events differ from the reference (near-ties); device: %s\n",
                   batch, kernels, (unsigned long long)((c1.launches - c0.launches) / r.runs), batch - kernels,
                   results_differ(&ref, &got), ref.events, track_cl_describe(cl));
        }
        track_cl_destroy(&cl);
    }
    rc = 0;
done:
    results_free(&ref);
    results_free(&got);
    track_destroy(&t);
    track_batch_destroy(&b);
    sim_destroy(&sim);
    return rc;
}

int bench_track_main(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {NULL, "config/array-shell.conf", "truth_segments", 0, 500, 1, 1.0, {NULL}, 0, {0}, 0, NULL};
    if (!(o.set = tusk_params_new())) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    static const struct option longs[] = {
        {"basis", required_argument, NULL, 'b'},  {"array", required_argument, NULL, 'a'},
        {"multiplicity", required_argument, NULL, 'm'}, {"events", required_argument, NULL, 'n'},
        {"points", required_argument, NULL, 'p'}, {"device", required_argument, NULL, 'd'},
        {"seconds", required_argument, NULL, 's'}, {"seed", required_argument, NULL, 'S'},
        {"threads", required_argument, NULL, 't'}, {"set", required_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "b:n:h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'b':
            o.basis = optarg;
            break;
        case 'a':
            o.array = optarg;
            break;
        case 'm': ok = tusk_cli_unsigned(PROG, "--multiplicity", optarg, 1, 64, &o.multiplicity); break;
        case 'n': ok = tusk_cli_unsigned(PROG, "--events", optarg, 1, UINT_MAX, &o.events); break;
        case 'p':
            o.points = optarg;
            ok = strcmp(optarg, "truth") == 0 || strcmp(optarg, "truth_segments") == 0;
            if (!ok)
                fprintf(stderr, PROG ": --points is truth or truth_segments, not '%s'\n", optarg);
            break;
        case 'S': ok = tusk_cli_u64(PROG, "--seed", optarg, 0, UINT64_MAX, &o.seed); break;
        case 's': ok = tusk_cli_double(PROG, "--seconds", optarg, 0.0, 3600.0, &o.seconds); break;
        case 'd':
            if (o.devices == MAX_DEVICES) {
                fprintf(stderr, PROG ": at most %d --device\n", MAX_DEVICES);
                tusk_params_destroy(&o.set);
                return TUSK_EXIT_USAGE;
            }
            o.device[o.devices++] = optarg;
            break;
        case 't':
            if (o.n_threads == MAX_THREADS) {
                fprintf(stderr, PROG ": at most %d --threads\n", MAX_THREADS);
                tusk_params_destroy(&o.set);
                return TUSK_EXIT_USAGE;
            }
            ok = tusk_cli_unsigned(PROG, "--threads", optarg, 0, 1024, &o.threads[o.n_threads++]);
            break;
        case 'k':
            ok = tusk_cli_set(PROG, o.set, optarg);
            break;
        case 'h':
            usage(stdout);
            tusk_params_destroy(&o.set);
            return TUSK_EXIT_OK;
        default:
            ok = false;
        }
        if (!ok) {
            tusk_params_destroy(&o.set);
            return TUSK_EXIT_USAGE;
        }
    }
    if (!o.basis || optind != argc) {
        if (!o.basis)
            fprintf(stderr, PROG ": --basis FILE is required\n");
        else
            fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        tusk_params_destroy(&o.set);
        return TUSK_EXIT_USAGE;
    }
    if (o.n_threads == 0)
        o.n_threads = 1; /* threads[0] = 0: one per online CPU */
    int rc = bench_one(&o, o.multiplicity ? o.multiplicity : 1);
    if (!rc && !o.multiplicity)
        rc = bench_one(&o, 30);
    tusk_params_destroy(&o.set);
    return rc;
}
