/* bench_ut.c - `tusk-bench ut`: the UT decoding and Compass tracking's
 * throughput, as the paper measures it (seed 003 §VI-A; spec §3.5).
 *
 *   tusk-bench ut [--events N] [--configs LIST] [--device SETTING]... [--runs N] [--ref-runs N]
 *                 [--threads N] [--seed S] [--group-size N] [--bandwidth-mb N]
 *
 * --events events are simulated once (not timed; minimum-bias-like, the
 * paper's sample of 1,000 iterated is one batch here: all events in
 * flight at once) and for each configuration of LIST (sectors/candidates,
 * default 5/8,1/1) tracked again and again:
 *   (a) the reference, one thread: events/s of the decoding alone, of
 *       Compass alone (on the hits the decoding left) and of both;
 *   (b) fast on --threads threads (0: every CPU): the same three;
 *   (c) per --device: OpenCL, the whole batch one launch. Before it is
 *       timed, its hits and tracks are compared with the reference's, bit
 *       for bit (a difference is a failure). Then: the kernels alone (the
 *       data on the device, the paper's condition: profiling events) for
 *       decoding, Compass (windows + tracklets) and both, and the whole
 *       run (pack, upload, kernels, download, unpack; wall clock); the
 *       transfers apart; the kernels' least memory traffic over their time
 *       against the device's copy bandwidth (measured first, best of 10).
 * Each figure is the mean over the runs (± standard deviation). The goal
 * (issue 19): at least 10^6 events/s for decoding and Compass at 5/8 on
 * one H200, and at least 10 times all the CPU cores of its host. */
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
#include "bench_ut.h"
#include "tusk/ut.h"

#define MAX_DEVICES 8
#define MAX_CONFIGS 16

typedef struct opts {
    uint64_t events;
    unsigned configs, sectors[MAX_CONFIGS], candidates[MAX_CONFIGS];
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

static int parse_configs(const char *prog, const char *text, opts_t *o)
{
    char buf[256];
    if (strlen(text) >= sizeof buf) {
        fprintf(stderr, "%s: --configs: the list is too long\n", prog);
        return -1;
    }
    strcpy(buf, text);
    o->configs = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *slash = strchr(tok, '/');
        unsigned s, c;
        if (!slash || o->configs == MAX_CONFIGS) {
            fprintf(stderr, "%s: --configs wants SECTORS/CANDIDATES,..., not '%s'\n", prog, text);
            return -1;
        }
        *slash = '\0';
        if (!tusk_cli_unsigned(prog, "--configs (sectors)", tok, 1, 5, &s) ||
            !tusk_cli_unsigned(prog, "--configs (candidates)", slash + 1, 1, 16, &c))
            return -1;
        if (s != 1 && s != 3 && s != 5) {
            fprintf(stderr, "%s: --configs: %u sectors, expected 1, 3 or 5\n", prog, s);
            return -1;
        }
        o->sectors[o->configs] = s;
        o->candidates[o->configs++] = c;
    }
    return o->configs ? 0 : -1;
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: tusk-bench ut [OPTIONS]\n"
            "\n"
            "  --events N          simulated events, all in one batch (20000)\n"
            "  --configs LIST      sectors/candidates, comma-separated (5/8,1/1)\n"
            "  --device SETTING    an OpenCL device to measure (repeatable; tusk-cl list)\n"
            "  --runs N            runs of the fast and OpenCL rows (10, the paper's)\n"
            "  --ref-runs N        runs of the reference rows (2)\n"
            "  --threads N         threads of the fast row and of the OpenCL packing (0: one per CPU)\n"
            "  --seed S            simulation seed (1)\n"
            "  --group-size N      OpenCL work-items an event (128)\n"
            "  --bandwidth-mb N    the bandwidth probe's buffer, MB (1024)\n"
            "\n"
            "Exit status: 0 fine, 1 failure (a device, results that differ from the reference), 2 bad usage.\n");
}

typedef int (*run_fn)(void *ctx, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err);

static int run_ref(void *ctx, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err)
{
    return ut_ref_run_stages(ctx, b, stages, res, err);
}

static int run_fast(void *ctx, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err)
{
    return ut_fast_run_stages(ctx, b, stages, res, err);
}

/* A CPU backend's three rows: `runs` of each stage, wall time in ms. */
static int measure_cpu(const char *prog, run_fn fn, void *ctx, const ut_batch_t *b, ut_result_t *res, uint64_t runs,
                       stat_t t[3])
{
    memset(t, 0, 3 * sizeof *t);
    tusk_error_t err;
    for (uint64_t r = 0; r < runs; r++) {
        static const int stages[3] = {UT_DECODE, UT_COMPASS, UT_ALL};
        for (int s = 0; s < 3; s++) {
            double t0 = tusk_clock_s();
            if (fn(ctx, b, stages[s], res, &err) != TUSK_OK) {
                fprintf(stderr, "%s: %s\n", prog, err.message);
                return TUSK_EXIT_FAIL;
            }
            stat_add(&t[s], (tusk_clock_s() - t0) * 1e3);
        }
    }
    return 0;
}

static void row(const char *what, const stat_t *t, double events, const stat_t *ref)
{
    double ms = stat_mean(t);
    printf("  %-46s %10.2f +- %7.2f ms  %12.4g events/s", what, ms, stat_sd(t), ms > 0 ? events / (ms * 1e-3) : 0.0);
    if (ref && ref->n > 0 && ms > 0)
        printf("  %6.1fx (a)", stat_mean(ref) / ms);
    printf("\n");
}

static int bench_config(const char *prog, const opts_t *o, const ut_batch_t *b, unsigned k, const double *bandwidth)
{
    ut_config_t cfg;
    ut_config_default(&cfg);
    cfg.sectors = o->sectors[k];
    cfg.candidates = o->candidates[k];
    tusk_error_t err;
    ut_ref_t *ref = NULL;
    ut_fast_t *fast = NULL;
    ut_result_t *rr = ut_result_new(), *rx = ut_result_new();
    int rc = TUSK_EXIT_FAIL;
    double E = (double)ut_batch_count(b);
    if (!rr || !rx || ut_ref_new(&ref, &cfg, &err) != TUSK_OK ||
        ut_fast_new(&fast, &cfg, (unsigned)o->threads, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, rr && rx ? err.message : "out of memory");
        goto done;
    }
    printf("%u sectors, %u candidates:\n", cfg.sectors, cfg.candidates);
    ut_result_keep_hits(rr, true);
    if (ut_ref_run(ref, b, rr, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        goto done;
    }
    printf("  %llu UT tracks (%.1f an event)\n", (unsigned long long)ut_result_total(rr),
           (double)ut_result_total(rr) / E);
    stat_t ta[3] = {{0}}, tb[3];
    if (o->ref_runs > 0) {
        if ((rc = measure_cpu(prog, run_ref, ref, b, rx, o->ref_runs, ta)))
            goto done;
        row("(a) reference, 1 thread: decoding", &ta[0], E, NULL);
        row("    Compass", &ta[1], E, NULL);
        row("    both", &ta[2], E, NULL);
    } else {
        printf("  (a) reference: not run (--ref-runs 0)\n");
    }
    if ((rc = measure_cpu(prog, run_fast, fast, b, rx, o->runs, tb)))
        goto done;
    char what[96];
    snprintf(what, sizeof what, "(b) fast, %u threads: decoding", ut_fast_threads(fast));
    row(what, &tb[0], E, &ta[0]);
    row("    Compass", &tb[1], E, &ta[1]);
    row("    both", &tb[2], E, &ta[2]);
    rc = TUSK_EXIT_FAIL;
    for (unsigned d = 0; d < o->devices; d++) {
        ut_cl_config_t clc;
        ut_cl_config_default(&clc);
        clc.device = o->device[d];
        clc.threads = (unsigned)o->threads;
        clc.group_size = (unsigned)o->group;
        ut_cl_t *cl = NULL;
        if (ut_cl_new(&cl, &cfg, &clc, &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
            goto done;
        }
        /* the first run makes the buffers; then the check, hits and tracks */
        char why[1024];
        ut_result_keep_hits(rx, true);
        if (ut_cl_run(cl, b, rx, &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
            ut_cl_destroy(&cl);
            goto done;
        }
        if (!ut_result_equal(rr, rx, why, sizeof why)) {
            fprintf(stderr, "%s: --device %s: the hits or tracks differ from the reference's: %s\n", prog,
                    o->device[d], why);
            ut_cl_destroy(&cl);
            goto done;
        }
        ut_result_keep_hits(rx, false);
        stat_t whole = {0}, dec = {0}, comp = {0}, both = {0}, up = {0}, down = {0}, win = {0}, trk = {0}, host = {0};
        ut_cl_times_t t;
        for (uint64_t r = 0; r < o->runs; r++) {
            if (ut_cl_run(cl, b, rx, &err) != TUSK_OK) {
                fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
                ut_cl_destroy(&cl);
                goto done;
            }
            ut_cl_times(cl, &t);
            stat_add(&whole, t.total);
            stat_add(&dec, t.decode);
            stat_add(&comp, t.windows + t.tracklets);
            stat_add(&both, t.decode + t.windows + t.tracklets);
            stat_add(&win, t.windows);
            stat_add(&trk, t.tracklets);
            stat_add(&up, t.upload);
            stat_add(&down, t.download);
            stat_add(&host, t.pack + t.unpack);
        }
        printf("  (c) opencl on %s (%llu of %llu VELO tracks active)\n", ut_cl_describe(cl),
               (unsigned long long)t.active_tracks, (unsigned long long)ut_batch_tracks(b));
        row("    kernels: decoding", &dec, E, &ta[0]);
        row("    kernels: Compass (windows + tracklets)", &comp, E, &ta[1]);
        row("    kernels: both", &both, E, &ta[2]);
        row("    whole (pack, copies, kernels, unpack)", &whole, E, &ta[2]);
        printf("      windows %.3f, tracklets %.3f ms; upload %.3f, download %.3f ms (%.1f MB up, %.1f MB down, "
               "%.1f GB/s); host pack+unpack %.3f ms (means)\n",
               stat_mean(&win), stat_mean(&trk), stat_mean(&up), stat_mean(&down), (double)t.bytes_up * 1e-6,
               (double)t.bytes_down * 1e-6,
               (double)(t.bytes_up + t.bytes_down) / ((stat_mean(&up) + stat_mean(&down)) * 1e-3) / 1e9,
               stat_mean(&host));
        double gbs = (double)t.kernel_bytes / (stat_mean(&both) * 1e-3) / 1e9;
        printf("      kernels: at least %.1f MB moved, %.1f GB/s", (double)t.kernel_bytes * 1e-6, gbs);
        if (bandwidth[d] > 0)
            printf(" = %.1f %% of the %.0f GB/s measured\n", 100.0 * gbs / bandwidth[d], bandwidth[d]);
        else
            printf("\n");
        if (tb[2].n > 0 && stat_mean(&both) > 0)
            printf("      against (b) on all cores: kernels %.1fx, whole %.1fx\n", stat_mean(&tb[2]) / stat_mean(&both),
                   stat_mean(&tb[2]) / stat_mean(&whole));
        ut_cl_destroy(&cl);
    }
    printf("\n");
    rc = 0;
done:
    ut_ref_destroy(&ref);
    ut_fast_destroy(&fast);
    ut_result_destroy(&rr);
    ut_result_destroy(&rx);
    return rc;
}

int bench_ut_main(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {20000, 2, {5, 1}, {8, 1}, {NULL}, 0, 10, 2, 0, 1, 128, 1024};
    static const struct option longs[] = {
        {"events", required_argument, NULL, 'e'},     {"configs", required_argument, NULL, 'c'},
        {"device", required_argument, NULL, 'd'},     {"runs", required_argument, NULL, 'r'},
        {"ref-runs", required_argument, NULL, 'R'},   {"threads", required_argument, NULL, 't'},
        {"seed", required_argument, NULL, 's'},       {"group-size", required_argument, NULL, 'g'},
        {"bandwidth-mb", required_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *prog = argv[0];
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'e': ok = tusk_cli_u64(prog, "--events", optarg, 1, 10000000, &o.events); break;
        case 'c': ok = parse_configs(prog, optarg, &o) == 0; break;
        case 'r': ok = tusk_cli_u64(prog, "--runs", optarg, 1, 100000, &o.runs); break;
        case 'R': ok = tusk_cli_u64(prog, "--ref-runs", optarg, 0, 100000, &o.ref_runs); break;
        case 't': ok = tusk_cli_u64(prog, "--threads", optarg, 0, 1024, &o.threads); break;
        case 's': ok = tusk_cli_u64(prog, "--seed", optarg, 0, UINT64_MAX, &o.seed); break;
        case 'g': ok = tusk_cli_u64(prog, "--group-size", optarg, 32, 1024, &o.group); break;
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
    printf("tusk-bench ut: %ld CPUs online, %llu runs a row (%llu of the reference), seed %llu\n", cpus,
           (unsigned long long)o.runs, (unsigned long long)o.ref_runs, (unsigned long long)o.seed);
    double bandwidth[MAX_DEVICES] = {0};
    for (unsigned d = 0; d < o.devices; d++) {
        ut_config_t cfg;
        ut_config_default(&cfg);
        ut_cl_config_t clc;
        ut_cl_config_default(&clc);
        clc.device = o.device[d];
        clc.group_size = (unsigned)o.group;
        ut_cl_t *cl = NULL;
        tusk_error_t err;
        if (ut_cl_new(&cl, &cfg, &clc, &err) != TUSK_OK ||
            ut_cl_bandwidth(cl, (size_t)o.bw_mb << 20, 10, &bandwidth[d], &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o.device[d], err.message);
            ut_cl_destroy(&cl);
            return TUSK_EXIT_FAIL;
        }
        printf("device %s: memory bandwidth %.0f GB/s (a copy kernel, %llu MB read and written, best of 10)\n",
               ut_cl_describe(cl), bandwidth[d], (unsigned long long)o.bw_mb);
        ut_cl_destroy(&cl);
    }
    /* the events, once */
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = o.seed;
    sc.truth = false;
    ut_sim_t *sim = NULL;
    ut_batch_t *b = ut_batch_new();
    tusk_error_t err;
    int rc = TUSK_EXIT_FAIL;
    double t0 = tusk_clock_s();
    if (!b || ut_sim_new(&sim, &sc, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, b ? err.message : "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < o.events; i++) {
        const ut_sim_event_t *e;
        if (ut_sim_make(sim, i, &e, &err) != TUSK_OK || ut_batch_add(b, ut_sim_geometry(sim), &e->ev, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            goto done;
        }
    }
    printf("%llu events (simulated in %.1f s): %.1f UT hits and %.1f VELO tracks an event\n\n",
           (unsigned long long)o.events, tusk_clock_s() - t0, (double)ut_batch_hits(b) / (double)o.events,
           (double)ut_batch_tracks(b) / (double)o.events);
    for (unsigned k = 0; k < o.configs; k++)
        if ((rc = bench_config(prog, &o, b, k, bandwidth)))
            goto done;
    rc = 0;
done:
    ut_batch_destroy(&b);
    ut_sim_destroy(&sim);
    return rc;
}
