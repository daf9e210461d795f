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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "bench_ut.h"
#include "bench_util.h"
#include "tusk/ut.h"

#define MAX_CONFIGS 16

/* The configurations of --configs. */
typedef struct configs {
    unsigned n, sectors[MAX_CONFIGS], candidates[MAX_CONFIGS];
} configs_t;

static bool parse_configs(void *to, const char *prog, const char *text)
{
    configs_t *o = to;
    char buf[256];
    if (strlen(text) >= sizeof buf) {
        fprintf(stderr, "%s: --configs: the list is too long\n", prog);
        return false;
    }
    strcpy(buf, text);
    o->n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *slash = strchr(tok, '/');
        unsigned s, c;
        if (!slash || o->n == MAX_CONFIGS) {
            fprintf(stderr, "%s: --configs wants SECTORS/CANDIDATES,..., not '%s'\n", prog, text);
            return false;
        }
        *slash = '\0';
        if (!tusk_cli_unsigned(prog, "--configs (sectors)", tok, 1, 5, &s) ||
            !tusk_cli_unsigned(prog, "--configs (candidates)", slash + 1, 1, 16, &c))
            return false;
        if (s != 1 && s != 3 && s != 5) {
            fprintf(stderr, "%s: --configs: %u sectors, expected 1, 3 or 5\n", prog, s);
            return false;
        }
        o->sectors[o->n] = s;
        o->candidates[o->n++] = c;
    }
    return o->n > 0;
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
                       tusk_moments_t t[3])
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
            tusk_moments_add(&t[s], (tusk_clock_s() - t0) * 1e3);
        }
    }
    return 0;
}

static void row(const char *what, const tusk_moments_t *t, double events, const tusk_moments_t *ref)
{
    double ms = tusk_moments_mean(t);
    char r[32] = "";
    if (ref)
        bench_ratio(ref, ms, 6, 1, r, sizeof r);
    printf("  %-46s %10.2f +- %7.2f ms  %12.4g events/s%s%s\n", what, ms, tusk_moments_sd(t),
           ms > 0 ? events / (ms * 1e-3) : 0.0, r[0] ? "  " : "", r);
}

static int bench_config(const char *prog, const bench_opts_t *o, const ut_batch_t *b, unsigned sectors,
                        unsigned candidates, const double *bandwidth)
{
    ut_config_t cfg;
    ut_config_default(&cfg);
    cfg.sectors = sectors;
    cfg.candidates = candidates;
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
    tusk_moments_t ta[3] = {{0}}, tb[3];
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
        tusk_moments_t whole = {0}, dec = {0}, comp = {0}, both = {0}, up = {0}, down = {0}, win = {0}, trk = {0},
                       host = {0};
        ut_cl_times_t t;
        for (uint64_t r = 0; r < o->runs; r++) {
            if (ut_cl_run(cl, b, rx, &err) != TUSK_OK) {
                fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
                ut_cl_destroy(&cl);
                goto done;
            }
            ut_cl_times(cl, &t);
            tusk_moments_add(&whole, t.total);
            tusk_moments_add(&dec, t.decode);
            tusk_moments_add(&comp, t.windows + t.tracklets);
            tusk_moments_add(&both, t.decode + t.windows + t.tracklets);
            tusk_moments_add(&win, t.windows);
            tusk_moments_add(&trk, t.tracklets);
            tusk_moments_add(&up, t.upload);
            tusk_moments_add(&down, t.download);
            tusk_moments_add(&host, t.pack + t.unpack);
        }
        printf("  (c) opencl on %s (%llu of %llu VELO tracks active)\n", ut_cl_describe(cl),
               (unsigned long long)t.active_tracks, (unsigned long long)ut_batch_tracks(b));
        row("    kernels: decoding", &dec, E, &ta[0]);
        row("    kernels: Compass (windows + tracklets)", &comp, E, &ta[1]);
        row("    kernels: both", &both, E, &ta[2]);
        row("    whole (pack, copies, kernels, unpack)", &whole, E, &ta[2]);
        printf("      windows %.3f, tracklets %.3f ms; upload %.3f, download %.3f ms (%.1f MB up, %.1f MB down, "
               "%.1f GB/s); host pack+unpack %.3f ms (means)\n",
               tusk_moments_mean(&win), tusk_moments_mean(&trk), tusk_moments_mean(&up), tusk_moments_mean(&down),
               (double)t.bytes_up * 1e-6, (double)t.bytes_down * 1e-6,
               (double)(t.bytes_up + t.bytes_down) / ((tusk_moments_mean(&up) + tusk_moments_mean(&down)) * 1e-3) / 1e9,
               tusk_moments_mean(&host));
        double gbs = (double)t.kernel_bytes / (tusk_moments_mean(&both) * 1e-3) / 1e9;
        printf("      kernels: at least %.1f MB moved, %.1f GB/s", (double)t.kernel_bytes * 1e-6, gbs);
        bench_share(gbs, bandwidth[d]);
        if (tb[2].n > 0 && tusk_moments_mean(&both) > 0)
            printf("      against (b) on all cores: kernels %.1fx, whole %.1fx\n",
                   tusk_moments_mean(&tb[2]) / tusk_moments_mean(&both),
                   tusk_moments_mean(&tb[2]) / tusk_moments_mean(&whole));
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

BENCH_PROBE(ut)

int bench_ut_main(const tusk_cli_t *cli, int argc, char **argv)
{
    bench_opts_t o = {{NULL}, 0, 10, 2, 0, 1, 128, 1024};
    uint64_t events = 20000;
    configs_t cf = {2, {5, 1}, {8, 1}};
    const tusk_cli_option_t options[] = {
        {.name = "events", .kind = TUSK_CLI_U64, .to = &events, .min = 1, .max = 10000000},
        {.name = "configs", .kind = TUSK_CLI_CALL, .to = &cf, .call = parse_configs},
        {.name = NULL}};
    const tusk_cli_option_t group = {
        .name = "group-size", .kind = TUSK_CLI_U64, .to = &o.group, .min = 32, .max = 1024};
    int rc = bench_options(cli, argc, argv, options, &group, &o, help);
    if (rc != TUSK_CLI_RUN)
        return rc;
    const char *prog = argv[0];
    bench_header(prog, &o, "");
    double bandwidth[BENCH_MAX_DEVICES];
    if ((rc = bench_bandwidths(prog, &o, bench_ut_probe, bandwidth)) != TUSK_EXIT_OK)
        return rc;
    /* the events, once */
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = o.seed;
    sc.truth = false;
    ut_sim_t *sim = NULL;
    ut_batch_t *b = ut_batch_new();
    tusk_error_t err;
    rc = TUSK_EXIT_FAIL;
    double t0 = tusk_clock_s();
    if (!b || ut_sim_new(&sim, &sc, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, b ? err.message : "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < events; i++) {
        const ut_sim_event_t *e;
        if (ut_sim_make(sim, i, &e, &err) != TUSK_OK || ut_batch_add(b, ut_sim_geometry(sim), &e->ev, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            goto done;
        }
    }
    printf("%llu events (simulated in %.1f s): %.1f UT hits and %.1f VELO tracks an event\n\n",
           (unsigned long long)events, tusk_clock_s() - t0, (double)ut_batch_hits(b) / (double)events,
           (double)ut_batch_tracks(b) / (double)events);
    for (unsigned k = 0; k < cf.n; k++)
        if ((rc = bench_config(prog, &o, b, cf.sectors[k], cf.candidates[k], bandwidth)))
            goto done;
    rc = 0;
done:
    ut_batch_destroy(&b);
    ut_sim_destroy(&sim);
    return rc;
}
