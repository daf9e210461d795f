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
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "bench_tpc.h"
#include "tusk/tpc.h"

#define MAX_DEVICES 8
#define MAX_SIZES 32
#define FIT_MIN_CLUSTERS 500000.0

typedef struct opts {
    uint32_t tracks[MAX_SIZES];
    unsigned sizes;
    const char *device[MAX_DEVICES];
    unsigned devices;
    uint64_t runs, ref_runs, threads, seed, group, bw_mb;
} opts_t;

typedef struct stat {
    double n, s, s2;
} stat_t;

static void stat_add(stat_t *t, double x)
{
    t->n++;
    t->s += x;
    t->s2 += x * x;
}

static double stat_mean(const stat_t *t)
{
    return t->n > 0 ? t->s / t->n : 0;
}

static double stat_sd(const stat_t *t)
{
    double m = stat_mean(t);
    return t->n > 1 ? sqrt(fmax(0.0, (t->s2 - t->n * m * m) / (t->n - 1))) : 0;
}

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
static const char *ratio(const stat_t *a, double ms, char *buf, size_t cap)
{
    if (a->n > 0 && ms > 0)
        snprintf(buf, cap, "%6.2fx (a)", stat_mean(a) / ms);
    else
        buf[0] = '\0';
    return buf;
}

static int parse_list(const char *prog, const char *text, opts_t *o)
{
    char buf[512];
    if (strlen(text) >= sizeof buf) {
        fprintf(stderr, "%s: --tracks: the list is too long\n", prog);
        return -1;
    }
    strcpy(buf, text);
    o->sizes = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned v;
        if (o->sizes == MAX_SIZES || !tusk_cli_unsigned(prog, "--tracks", tok, 1, 1000000, &v))
            return -1;
        o->tracks[o->sizes++] = v;
    }
    return o->sizes ? 0 : -1;
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
    stat_t wall, init, nf, nc, sh, tc, ts, out, up, down, dev;
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
        stat_add(&s->wall, ms);
        stat_add(&s->init, t.init);
        stat_add(&s->nf, t.neighbours);
        stat_add(&s->nc, t.clean);
        stat_add(&s->sh, t.start);
        stat_add(&s->tc, t.construct);
        stat_add(&s->ts, t.select);
        stat_add(&s->out, t.output);
        stat_add(&s->up, t.upload);
        stat_add(&s->down, t.download);
        stat_add(&s->dev, t.neighbours + t.clean + t.start + t.construct + t.select);
    }
    return 0;
}

static void print_steps(const steps_t *s, bool cl)
{
    printf(
        "      steps (ms, means): 0 init %.2f, I neighbours %.2f, II cleaner %.2f, III start hits %.2f, IV tracklets "
        "%.2f, V selector %.2f, VI output %.2f",
        stat_mean(&s->init), stat_mean(&s->nf), stat_mean(&s->nc), stat_mean(&s->sh), stat_mean(&s->tc),
        stat_mean(&s->ts), stat_mean(&s->out));
    if (cl)
        printf("; upload %.2f, download %.2f", stat_mean(&s->up), stat_mean(&s->down));
    printf("\n");
}

static int bench_size(const char *prog, const opts_t *o, uint32_t tracks, const double *bandwidth, series_t *ser)
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
        printf("  %-46s %10.2f +- %7.2f ms  %7.4f us a cluster\n", "(a) reference, 1 thread", stat_mean(&sa.wall),
               stat_sd(&sa.wall), stat_mean(&sa.wall) * 1e3 / clusters);
        print_steps(&sa, false);
        series_add(&ser[0], clusters, stat_mean(&sa.wall));
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
    printf("  %-46s %10.2f +- %7.2f ms  %7.4f us a cluster  %s\n", what, stat_mean(&sb.wall), stat_sd(&sb.wall),
           stat_mean(&sb.wall) * 1e3 / clusters, ratio(&sa.wall, stat_mean(&sb.wall), rb, sizeof rb));
    print_steps(&sb, false);
    series_add(&ser[1], clusters, stat_mean(&sb.wall));
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
               stat_mean(&sc2.wall), stat_sd(&sc2.wall), stat_mean(&sc2.wall) * 1e3 / clusters,
               ratio(&sa.wall, stat_mean(&sc2.wall), rb, sizeof rb));
        printf("  %-46s %10.3f +- %7.3f ms  %7.4f us a cluster  %s\n", "    device (kernels, data on the device)",
               stat_mean(&sc2.dev), stat_sd(&sc2.dev), stat_mean(&sc2.dev) * 1e3 / clusters,
               ratio(&sa.wall, stat_mean(&sc2.dev), rb, sizeof rb));
        print_steps(&sc2, true);
        double up_down = stat_mean(&sc2.up) + stat_mean(&sc2.down);
        double gbs = (double)t.kernel_bytes / (stat_mean(&sc2.dev) * 1e-3) / 1e9;
        printf("      copies: %.2f MB up, %.2f MB down (%.1f GB/s); kernels: at least %.3f GB moved, %.1f GB/s",
               (double)t.bytes_up * 1e-6, (double)t.bytes_down * 1e-6,
               up_down > 0 ? (double)(t.bytes_up + t.bytes_down) / (up_down * 1e-3) / 1e9 : 0.0,
               (double)t.kernel_bytes * 1e-9, gbs);
        if (bandwidth[d] > 0)
            printf(" = %.1f %% of the %.0f GB/s measured\n", 100.0 * gbs / bandwidth[d], bandwidth[d]);
        else
            printf("\n");
        series_add(&ser[2 + 2 * d], clusters, stat_mean(&sc2.wall));
        series_add(&ser[3 + 2 * d], clusters, stat_mean(&sc2.dev));
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

int bench_tpc_main(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {{160, 500, 1000, 2500, 5000, 10000, 15000}, 7, {NULL}, 0, 10, 2, 0, 1, 128, 1024};
    static const struct option longs[] = {
        {"tracks", required_argument, NULL, 'n'},     {"device", required_argument, NULL, 'd'},
        {"runs", required_argument, NULL, 'r'},       {"ref-runs", required_argument, NULL, 'R'},
        {"threads", required_argument, NULL, 't'},    {"seed", required_argument, NULL, 's'},
        {"group-size", required_argument, NULL, 'g'}, {"bandwidth-mb", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},             {NULL, 0, NULL, 0}};
    const char *prog = argv[0];
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'n': ok = parse_list(prog, optarg, &o) == 0; break;
        case 'r': ok = tusk_cli_u64(prog, "--runs", optarg, 1, 100000, &o.runs); break;
        case 'R': ok = tusk_cli_u64(prog, "--ref-runs", optarg, 0, 100000, &o.ref_runs); break;
        case 't': ok = tusk_cli_u64(prog, "--threads", optarg, 0, 1024, &o.threads); break;
        case 's': ok = tusk_cli_u64(prog, "--seed", optarg, 0, UINT64_MAX, &o.seed); break;
        case 'g':
            ok = tusk_cli_u64(prog, "--group-size", optarg, 1, 4096, &o.group);
            if (ok && (o.group & (o.group - 1))) {
                fprintf(stderr, "%s: --group-size wants a power of two, not %llu\n", prog, (unsigned long long)o.group);
                ok = false;
            }
            break;
        case 'b': ok = tusk_cli_u64(prog, "--bandwidth-mb", optarg, 1, 65536, &o.bw_mb); break;
        case 'd':
            if (o.devices == MAX_DEVICES) {
                fprintf(stderr, "%s: at most %d --device\n", prog, MAX_DEVICES);
                return TUSK_EXIT_USAGE;
            }
            o.device[o.devices++] = optarg;
            break;
        case 'h': help(stdout); return TUSK_EXIT_OK;
        default: ok = false;
        }
        if (!ok)
            return TUSK_EXIT_USAGE;
    }
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        return TUSK_EXIT_USAGE;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("tusk-bench tpc: %ld CPUs online, %llu runs a row (%llu of the reference), the first run of each dropped, "
           "seed %llu\n",
           cpus, (unsigned long long)o.runs, (unsigned long long)o.ref_runs, (unsigned long long)o.seed);
    double bandwidth[MAX_DEVICES] = {0};
    series_t ser[2 + 2 * MAX_DEVICES];
    memset(ser, 0, sizeof ser);
    snprintf(ser[0].name, sizeof ser[0].name, "(a) reference, 1 thread");
    snprintf(ser[1].name, sizeof ser[1].name, "(b) fast, all threads");
    for (unsigned d = 0; d < o.devices; d++) {
        tpc_config_t cfg;
        tpc_config_default(&cfg);
        tpc_cl_config_t clc;
        tpc_cl_config_default(&clc);
        clc.device = o.device[d];
        clc.group_size = (unsigned)o.group;
        tpc_cl_t *cl = NULL;
        tusk_error_t err;
        if (tpc_cl_new(&cl, &cfg, &clc, &err) != TUSK_OK ||
            tpc_cl_bandwidth(cl, (size_t)o.bw_mb << 20, 10, &bandwidth[d], &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o.device[d], err.message);
            tpc_cl_destroy(&cl);
            return TUSK_EXIT_FAIL;
        }
        printf("device %s: memory bandwidth %.0f GB/s (a copy kernel, %llu MB read and written, best of 10)\n",
               tpc_cl_describe(cl), bandwidth[d], (unsigned long long)o.bw_mb);
        snprintf(ser[2 + 2 * d].name, sizeof ser[2 + 2 * d].name, "(c) opencl %s, whole", o.device[d]);
        snprintf(ser[3 + 2 * d].name, sizeof ser[3 + 2 * d].name, "(c) opencl %s, kernels alone", o.device[d]);
        tpc_cl_destroy(&cl);
    }
    printf("\n");
    for (unsigned i = 0; i < o.sizes; i++) {
        int rc = bench_size(prog, &o, o.tracks[i], bandwidth, ser);
        if (rc)
            return rc;
    }
    printf("time against clusters (Table 9.31's fit):\n");
    for (unsigned k = 0; k < 2 + 2 * o.devices; k++)
        if (k > 0 || o.ref_runs > 0)
            series_fit(&ser[k]);
    return TUSK_EXIT_OK;
}
