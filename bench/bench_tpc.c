/* bench_tpc.c - `tusk-bench tpc`: the TPC slice tracker's speed, as the
 * thesis measures it (seed 000 §5.5, §9.2; spec §1.5).
 *
 *   tusk-bench tpc [--tracks LIST] [--device SETTING]... [--runs N] [--ref-runs N]
 *                  [--threads N] [--seed S] [--group-size N] [--bandwidth-mb N]
 *
 * For each entry of LIST (primary particles an event; the default 160,
 * 500, 1000, 2500, 5000, 10000, 15000 goes from the pp preset through the
 * non-central to the central one, about 31,000 to 2.4 million clusters)
 * one event is simulated (not timed) and tracked, all 36 slices as one
 * batch, again and again, the first run dropped (the thesis's cache run):
 *   (a) the reference: one thread, slice after slice;
 *   (b) fast: the slices on --threads threads (0: every CPU);
 *   (c) per --device: OpenCL, each step one launch over the 36 slices. Its
 *       time is given whole (host step 0, upload, kernels, the two counter
 *       read-backs, download, host step VI: wall clock) and per step from
 *       profiling events; "device" is the kernels alone, "copies" upload +
 *       download.
 * Each row gives mean +- standard deviation over its runs and the steps'
 * means (the CPU rows' steps are summed over their threads). Before a
 * device is timed its tracks are compared with the reference's, bit for
 * bit (a difference is a failure); fast's too.
 *
 * Per device the memory bandwidth is measured first (a copy kernel over
 * --bandwidth-mb MB, best of 10), and each event's kernels are stated as
 * bytes/s (the least traffic of tpc/README.md's model over the kernels'
 * time) and as a fraction of that bandwidth. At the end, per row kind, a
 * least-squares line of time against clusters over the events of at
 * least 500,000 clusters (the thesis's fit range; all events when fewer
 * than two qualify): the slope in us a cluster and the offset in us, as
 * Table 9.31 gives them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "bench_tpc.h"
#include "bench_util.h"
#include "tusk/tpc.h"

#define MAX_SIZES BENCH_MAX_SIZES
#define FIT_MIN_CLUSTERS 500000.0

/* The points of one row kind for the fit: clusters, ms. */
typedef struct series {
    char name[96];
    double x[MAX_SIZES], y[MAX_SIZES];
    unsigned n;
} series_t;

static void series_add(series_t *s, double clusters, double ms)
{
    if (s->n < MAX_SIZES) {
        s->x[s->n] = clusters;
        s->y[s->n] = ms;
        s->n++;
    }
}

/* Least squares of y (ms) against x (clusters) over the points with x >=
 * FIT_MIN_CLUSTERS (all when fewer than two): slope us/cluster, offset us. */
static void series_fit(const series_t *s)
{
    unsigned big = 0;
    for (unsigned i = 0; i < s->n; i++)
        big += s->x[i] >= FIT_MIN_CLUSTERS;
    double min = big >= 2 ? FIT_MIN_CLUSTERS : 0;
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (unsigned i = 0; i < s->n; i++)
        if (s->x[i] >= min) {
            n++;
            sx += s->x[i];
            sy += s->y[i] * 1e3;
            sxx += s->x[i] * s->x[i];
            sxy += s->x[i] * s->y[i] * 1e3;
        }
    double d = n * sxx - sx * sx;
    if (n < 2 || d <= 0) {
        printf("  %-52s (too few events for a line)\n", s->name);
        return;
    }
    double slope = (n * sxy - sx * sy) / d, offset = (sy - slope * sx) / n;
    printf("  %-52s %10.6f us a cluster  %+12.1f us  (%.0f events%s)\n", s->name, slope, offset, n,
           min > 0 ? " of >= 500,000 clusters" : ", all sizes");
}

/* "N.NNx (a)", or nothing without a reference row. */
static const char *ratio(const tusk_moments_t *a, double ms, char *buf, size_t cap)
{
    return bench_ratio(a, ms, 6, 2, buf, cap);
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: tusk-bench tpc [OPTIONS]\n"
            "\n"
            "  --tracks LIST       primary particles an event, comma-separated (160,500,1000,2500,5000,10000,\n"
            "                      15000: the pp preset to the central one, about 31,000 to 2.4 M clusters)\n"
            "  --device SETTING    an OpenCL device to measure (repeatable; tusk-cl list)\n"
            "  --runs N            runs of the fast and OpenCL rows, after one dropped (10)\n"
            "  --ref-runs N        runs of the reference row, after one dropped (2; 0: no reference row)\n"
            "  --threads N         threads of the fast row and of the OpenCL host steps (0: one per CPU)\n"
            "  --seed S            simulation seed (1)\n"
            "  --group-size N      OpenCL work-items a work-group, a power of two (128)\n"
            "  --bandwidth-mb N    the bandwidth probe's buffer, MB (1024)\n"
            "\n"
            "Exit status: 0 fine, 1 failure (a device, tracks that differ from the reference's), 2 bad usage.\n");
}

typedef int (*run_fn)(void *ctx, const tpc_batch_t *b, tpc_result_t *res, tusk_error_t *err);
typedef void (*times_fn)(const void *ctx, tpc_times_t *t);

static int run_ref(void *ctx, const tpc_batch_t *b, tpc_result_t *res, tusk_error_t *err)
{
    return tpc_ref_run(ctx, b, res, err);
}
static int run_fast(void *ctx, const tpc_batch_t *b, tpc_result_t *res, tusk_error_t *err)
{
    return tpc_fast_run(ctx, b, res, err);
}
static int run_cl(void *ctx, const tpc_batch_t *b, tpc_result_t *res, tusk_error_t *err)
{
    return tpc_cl_run(ctx, b, res, err);
}
static void times_ref(const void *ctx, tpc_times_t *t)
{
    tpc_ref_times(ctx, t);
}
static void times_fast(const void *ctx, tpc_times_t *t)
{
    tpc_fast_times(ctx, t);
}
static void times_cl(const void *ctx, tpc_times_t *t)
{
    tpc_cl_times(ctx, t);
}

/* The steps' means over a row's runs. */
typedef struct steps {
    tusk_moments_t wall, init, nf, nc, sh, tc, ts, out, up, down, dev;
} steps_t;

/* One dropped run, then `runs` runs: wall times (ms) and the backend's steps. */
static int measure(const char *prog, const char *what, run_fn fn, times_fn tf, void *ctx, const tpc_batch_t *b,
                   tpc_result_t *res, uint64_t runs, steps_t *s)
{
    memset(s, 0, sizeof *s);
    tusk_error_t err;
    for (uint64_t r = 0; r <= runs; r++) {
        double t0 = tusk_clock_s();
        if (fn(ctx, b, res, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, what, err.message);
            return TUSK_EXIT_FAIL;
        }
        double ms = (tusk_clock_s() - t0) * 1e3;
        if (r == 0)
            continue; /* the cache run */
        tpc_times_t t;
        tf(ctx, &t);
        tusk_moments_add(&s->wall, ms);
        tusk_moments_add(&s->init, t.init);
        tusk_moments_add(&s->nf, t.neighbours);
        tusk_moments_add(&s->nc, t.clean);
        tusk_moments_add(&s->sh, t.start);
        tusk_moments_add(&s->tc, t.construct);
        tusk_moments_add(&s->ts, t.select);
        tusk_moments_add(&s->out, t.output);
        tusk_moments_add(&s->up, t.upload);
        tusk_moments_add(&s->down, t.download);
        tusk_moments_add(&s->dev, t.neighbours + t.clean + t.start + t.construct + t.select);
    }
    return 0;
}

static void print_steps(const steps_t *s, bool cl)
{
    printf(
        "      steps (ms, means): 0 init %.2f, I neighbours %.2f, II cleaner %.2f, III start hits %.2f, IV tracklets "
        "%.2f, V selector %.2f, VI output %.2f",
        tusk_moments_mean(&s->init), tusk_moments_mean(&s->nf), tusk_moments_mean(&s->nc), tusk_moments_mean(&s->sh),
        tusk_moments_mean(&s->tc), tusk_moments_mean(&s->ts), tusk_moments_mean(&s->out));
    if (cl)
        printf("; upload %.2f, download %.2f", tusk_moments_mean(&s->up), tusk_moments_mean(&s->down));
    printf("\n");
}

static int bench_size(const char *prog, const bench_opts_t *o, uint32_t tracks, const double *bandwidth,
                      series_t *ser)
{
    tpc_sim_config_t sc;
    tpc_sim_config_default(&sc);
    sc.tracks = tracks;
    sc.seed = o->seed;
    sc.truth = false;
    tusk_error_t err;
    tpc_sim_t *sim = NULL;
    tpc_batch_t *b = tpc_batch_new();
    tpc_result_t *rr = tpc_result_new(), *rx = tpc_result_new();
    tpc_ref_t *ref = NULL;
    tpc_fast_t *fast = NULL;
    int rc = TUSK_EXIT_FAIL;
    const tpc_sim_event_t *ev;
    double t0 = tusk_clock_s();
    if (!b || !rr || !rx || tpc_sim_new(&sim, &sc, (unsigned)o->threads, &err) != TUSK_OK ||
        tpc_sim_make(sim, 0, &ev, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, b && rr && rx ? err.message : "out of memory");
        goto done;
    }
    for (unsigned s = 0; s < ADF_TPC_SLICES; s++) {
        tpc_slice_t x;
        tpc_sim_slice(sim, s, &x);
        if (tpc_batch_add(b, &x, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            goto done;
        }
    }
    double sim_s = tusk_clock_s() - t0;
    double clusters = (double)tpc_batch_clusters(b);
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    if (tpc_ref_new(&ref, &cfg, &err) != TUSK_OK || tpc_fast_new(&fast, &cfg, (unsigned)o->threads, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        goto done;
    }
    /* the reference's tracks, once: every other row is checked against them */
    if (tpc_ref_run(ref, b, rr, &err) != TUSK_OK) {
        fprintf(stderr, "%s: reference: %s\n", prog, err.message);
        goto done;
    }
    uint64_t nt, nh, nl;
    tpc_result_totals(rr, &nt, &nh, &nl);
    uint64_t seeds = 0;
    for (size_t i = 0; i < tpc_result_slices(rr); i++) {
        tpc_slice_result_t sr;
        tpc_result_slice(rr, i, &sr);
        seeds += sr.n_start;
    }
    printf("%u particles: %.0f clusters (%.0f a slice), %llu seeds, %llu tracklets, %llu tracks of %llu clusters "
           "(simulated in %.1f s)\n",
           (unsigned)tracks, clusters, clusters / ADF_TPC_SLICES, (unsigned long long)seeds, (unsigned long long)nl,
           (unsigned long long)nt, (unsigned long long)nh, sim_s);
    steps_t sa, sb;
    memset(&sa, 0, sizeof sa);
    char rb[32];
    if (o->ref_runs > 0) {
        if ((rc = measure(prog, "reference", run_ref, times_ref, ref, b, rx, o->ref_runs, &sa)))
            goto done;
        printf("  %-46s %10.2f +- %7.2f ms  %7.4f us a cluster\n", "(a) reference, 1 thread",
               tusk_moments_mean(&sa.wall), tusk_moments_sd(&sa.wall), tusk_moments_mean(&sa.wall) * 1e3 / clusters);
        print_steps(&sa, false);
        series_add(&ser[0], clusters, tusk_moments_mean(&sa.wall));
    } else {
        printf("  (a) reference: not timed (--ref-runs 0)\n");
    }
    if ((rc = measure(prog, "fast", run_fast, times_fast, fast, b, rx, o->runs, &sb)))
        goto done;
    char why[512];
    if (!tpc_result_equal(rr, rx, why, sizeof why)) {
        fprintf(stderr, "%s: fast's tracks differ from the reference's: %s\n", prog, why);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    char what[96];
    snprintf(what, sizeof what, "(b) fast, %u threads", tpc_fast_threads(fast));
    printf("  %-46s %10.2f +- %7.2f ms  %7.4f us a cluster  %s\n", what, tusk_moments_mean(&sb.wall),
           tusk_moments_sd(&sb.wall), tusk_moments_mean(&sb.wall) * 1e3 / clusters,
           ratio(&sa.wall, tusk_moments_mean(&sb.wall), rb, sizeof rb));
    print_steps(&sb, false);
    series_add(&ser[1], clusters, tusk_moments_mean(&sb.wall));
    for (unsigned d = 0; d < o->devices; d++) {
        tpc_cl_config_t clc;
        tpc_cl_config_default(&clc);
        clc.device = o->device[d];
        clc.threads = (unsigned)o->threads;
        clc.group_size = (unsigned)o->group;
        tpc_cl_t *cl = NULL;
        if (tpc_cl_new(&cl, &cfg, &clc, &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
            rc = TUSK_EXIT_FAIL;
            goto done;
        }
        steps_t sc2;
        if ((rc = measure(prog, o->device[d], run_cl, times_cl, cl, b, rx, o->runs, &sc2))) {
            tpc_cl_destroy(&cl);
            goto done;
        }
        if (!tpc_result_equal(rr, rx, why, sizeof why)) {
            fprintf(stderr, "%s: --device %s: the tracks differ from the reference's: %s\n", prog, o->device[d], why);
            tpc_cl_destroy(&cl);
            rc = TUSK_EXIT_FAIL;
            goto done;
        }
        tpc_times_t t;
        tpc_cl_times(cl, &t);
        printf("  (c) opencl on %s\n", tpc_cl_describe(cl));
        printf("  %-46s %10.2f +- %7.2f ms  %7.4f us a cluster  %s\n", "    whole (host steps, copies, kernels)",
               tusk_moments_mean(&sc2.wall), tusk_moments_sd(&sc2.wall), tusk_moments_mean(&sc2.wall) * 1e3 / clusters,
               ratio(&sa.wall, tusk_moments_mean(&sc2.wall), rb, sizeof rb));
        printf("  %-46s %10.3f +- %7.3f ms  %7.4f us a cluster  %s\n", "    device (kernels, data on the device)",
               tusk_moments_mean(&sc2.dev), tusk_moments_sd(&sc2.dev), tusk_moments_mean(&sc2.dev) * 1e3 / clusters,
               ratio(&sa.wall, tusk_moments_mean(&sc2.dev), rb, sizeof rb));
        print_steps(&sc2, true);
        double up_down = tusk_moments_mean(&sc2.up) + tusk_moments_mean(&sc2.down);
        double gbs = (double)t.kernel_bytes / (tusk_moments_mean(&sc2.dev) * 1e-3) / 1e9;
        printf("      copies: %.2f MB up, %.2f MB down (%.1f GB/s); kernels: at least %.3f GB moved, %.1f GB/s",
               (double)t.bytes_up * 1e-6, (double)t.bytes_down * 1e-6,
               up_down > 0 ? (double)(t.bytes_up + t.bytes_down) / (up_down * 1e-3) / 1e9 : 0.0,
               (double)t.kernel_bytes * 1e-9, gbs);
        bench_share(gbs, bandwidth[d]);
        series_add(&ser[2 + 2 * d], clusters, tusk_moments_mean(&sc2.wall));
        series_add(&ser[3 + 2 * d], clusters, tusk_moments_mean(&sc2.dev));
        tpc_cl_destroy(&cl);
    }
    printf("\n");
    rc = 0;
done:
    tpc_ref_destroy(&ref);
    tpc_fast_destroy(&fast);
    tpc_result_destroy(&rr);
    tpc_result_destroy(&rx);
    tpc_batch_destroy(&b);
    tpc_sim_destroy(&sim);
    return rc;
}

/* --group-size: a power of two. */
static bool group_size(void *to, const char *prog, const char *text)
{
    uint64_t *group = to;
    if (!tusk_cli_u64(prog, "--group-size", text, 1, 4096, group))
        return false;
    if (*group & (*group - 1)) {
        fprintf(stderr, "%s: --group-size wants a power of two, not %llu\n", prog, (unsigned long long)*group);
        return false;
    }
    return true;
}

BENCH_PROBE(tpc)

int bench_tpc_main(const tusk_cli_t *cli, int argc, char **argv)
{
    bench_opts_t o = {{NULL}, 0, 10, 2, 0, 1, 128, 1024};
    bench_sizes_t sizes = {"--tracks", 1, 1000000, {160, 500, 1000, 2500, 5000, 10000, 15000}, 7};
    const tusk_cli_option_t options[] = {{.name = "tracks", .kind = TUSK_CLI_CALL, .to = &sizes, .call = bench_sizes},
                                         {.name = NULL}};
    const tusk_cli_option_t group = {.name = "group-size", .kind = TUSK_CLI_CALL, .to = &o.group, .call = group_size};
    int rc = bench_options(cli, argc, argv, options, &group, &o, help);
    if (rc != TUSK_CLI_RUN)
        return rc;
    bench_header(argv[0], &o, "the first run of each dropped, ");
    double bandwidth[BENCH_MAX_DEVICES];
    series_t ser[2 + 2 * BENCH_MAX_DEVICES];
    memset(ser, 0, sizeof ser);
    snprintf(ser[0].name, sizeof ser[0].name, "(a) reference, 1 thread");
    snprintf(ser[1].name, sizeof ser[1].name, "(b) fast, all threads");
    if ((rc = bench_bandwidths(argv[0], &o, bench_tpc_probe, bandwidth)) != TUSK_EXIT_OK)
        return rc;
    for (unsigned d = 0; d < o.devices; d++) {
        snprintf(ser[2 + 2 * d].name, sizeof ser[2 + 2 * d].name, "(c) opencl %s, whole", o.device[d]);
        snprintf(ser[3 + 2 * d].name, sizeof ser[3 + 2 * d].name, "(c) opencl %s, kernels alone", o.device[d]);
    }
    printf("\n");
    for (unsigned i = 0; i < sizes.n; i++)
        if ((rc = bench_size(argv[0], &o, sizes.v[i], bandwidth, ser)))
            return rc;
    printf("time against clusters (Table 9.31's fit):\n");
    for (unsigned k = 0; k < 2 + 2 * o.devices; k++)
        if (k > 0 || o.ref_runs > 0)
            series_fit(&ser[k]);
    return TUSK_EXIT_OK;
}
