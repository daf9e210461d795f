/* bench_zfinder.c - `tusk-bench zfinder`: the z-finder's speed.
 *
 *   tusk-bench zfinder [--sample lowlum|highlum|both] [--mode pairs|triplets|both]
 *                      [--rois-low N] [--rois-high N] [--device SETTING]... [--chunk N]
 *                      [--threads N] [--precision float|double] [--seconds S] [--seed S]
 *
 * RoIs are simulated first (not timed; the presets of tusk/zfinder.h).
 * Then, for each sample and mode, each row runs the whole batch again and
 * again until --seconds have passed and gives RoIs/s and pairs/s:
 *   (a) the reference, one thread (the thesis's serial code);
 *   (b) the fast backend on --threads threads (0: every CPU);
 * and on each --device:
 *   (c) OpenCL, one RoI a launch, one slot (synchronous: the thesis's
 *       "no overlap" form);
 *   (c') OpenCL, one RoI a launch, two slots (the thesis's two streams:
 *       the next RoI is packed and sent while the last one runs);
 *   (d) OpenCL, --chunk RoIs a launch, two slots (the next chunk's packing
 *       and upload overlap the current one's kernels);
 *   (e) the roofline: zf_find without its histograms (the same pair
 *       enumeration and arithmetic, no local or global histogram traffic),
 *       as (d); its kernel pairs/s is what the device can do with this
 *       loop, and (d)'s zf_find pairs/s is stated as a fraction of it.
 * Rows (a)-(d) time everything from the decoded RoIs to the vertices
 * (packing, transfers, kernels, the peak); their kernel times come from
 * profiling events. Before a device is timed, every RoI's histograms from
 * it are compared with the reference's bin for bin (and the peaks and z0);
 * every row's peaks and z0 are checked against the reference's as well. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/exit.h"
#include "bench_util.h"
#include "bench_zfinder.h"
#include "tusk/zfinder.h"

#define PROG "tusk-bench zfinder"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [OPTIONS]\n"
            "\n"
            "  --sample S          lowlum, highlum or both (both)\n"
            "  --mode M            pairs, triplets or both (both)\n"
            "  --rois-low N        lowlum RoIs (650, Table 4.2)\n"
            "  --rois-high N       highlum RoIs (300; Table 4.2 has 1,177)\n"
            "  --device SETTING    an OpenCL device to measure (repeatable; tusk-cl list)\n"
            "  --chunk N           RoIs a launch of the batched rows (256)\n"
            "  --threads N         threads of the fast row and of the OpenCL packing (0: one per CPU)\n"
            "  --precision P       float or double (float)\n"
            "  --seconds S         least time per row (2)\n"
            "  --seed S            simulation seed (1)\n");
}

typedef struct opts {
    bool low, high, pairs, triplets;
    uint64_t rois_low, rois_high, chunk, threads, seed;
    int precision;
    double seconds;
    const char *device[BENCH_MAX_DEVICES];
    unsigned devices;
} opts_t;

typedef struct row {
    double rois_s, pairs_s, seconds;
    uint64_t runs;
    zf_cl_stats_t cl;         /* per run (OpenCL rows) */
} row_t;

typedef int (*run_fn)(void *ctx, const zf_batch_t *b, zf_result_t *res, tusk_error_t *err);

static int run_ref(void *ctx, const zf_batch_t *b, zf_result_t *res, tusk_error_t *err)
{
    return zf_ref_run(ctx, b, res, err);
}

static int run_fast(void *ctx, const zf_batch_t *b, zf_result_t *res, tusk_error_t *err)
{
    return zf_fast_run(ctx, b, res, err);
}

static int run_cl(void *ctx, const zf_batch_t *b, zf_result_t *res, tusk_error_t *err)
{
    return zf_cl_run(ctx, b, res, err);
}

/* Every RoI's peak windows and z0 as the reference's, z0 bit for bit
 * (zHisto is summed in fixed point, zfinder/README.md): a wrong result
 * would make a wrong speed. */
static bool same(const zf_result_t *a, const zf_result_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].n_vertices != b[i].n_vertices || a[i].pairs != b[i].pairs || a[i].entries != b[i].entries)
            return false;
        for (unsigned v = 0; v < a[i].n_vertices; v++)
            if (a[i].vertex[v].bin != b[i].vertex[v].bin || a[i].vertex[v].count != b[i].vertex[v].count ||
                memcmp(&a[i].vertex[v].z0, &b[i].vertex[v].z0, sizeof a[i].vertex[v].z0) != 0)
                return false;
    }
    return true;
}

static int measure(const opts_t *o, run_fn fn, void *ctx, zf_cl_t *cl, const zf_batch_t *b, uint64_t pairs,
                   zf_result_t *res, row_t *r)
{
    tusk_error_t err;
    memset(r, 0, sizeof *r);
    zf_cl_stats_t s0, s1;
    if (cl) {
        /* a first run makes the buffers (and compiles the kernels for this launch size on some drivers) */
        if (fn(ctx, b, res, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            return TUSK_EXIT_FAIL;
        }
        zf_cl_stats(cl, &s0);
    }
    double t0 = tusk_clock_s(), dt;
    do {
        if (fn(ctx, b, res, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            return TUSK_EXIT_FAIL;
        }
        r->runs++;
        dt = tusk_clock_s() - t0;
    } while (dt < o->seconds);
    r->seconds = dt;
    r->rois_s = (double)zf_batch_count(b) * (double)r->runs / dt;
    r->pairs_s = (double)pairs * (double)r->runs / dt;
    if (cl) {
        zf_cl_stats(cl, &s1);
        double k = (double)r->runs;
        r->cl.launches = (uint64_t)((double)(s1.launches - s0.launches) / k);
        r->cl.find_ms = (s1.find_ms - s0.find_ms) / k;
        r->cl.peak_ms = (s1.peak_ms - s0.peak_ms) / k;
        r->cl.pack_s = (s1.pack_s - s0.pack_s) / k;
    }
    return 0;
}

static void print_row(const char *what, const row_t *r, double ref_rois_s)
{
    printf("  %-52s %12.1f %12.4g %9.1fx %5llu runs\n", what, r->rois_s, r->pairs_s,
           ref_rois_s > 0 ? r->rois_s / ref_rois_s : 1.0, (unsigned long long)r->runs);
}

static int simulate(const char *preset, uint64_t rois, uint64_t seed, zf_batch_t *b, double *points)
{
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    zf_sim_t *sim = NULL;
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
    int rc = TUSK_EXIT_FAIL;
    if (!p || tusk_params_set(p, "preset", preset, &err) != TUSK_OK || tusk_params_set(p, "seed", text, &err) ||
        zf_sim_config_read(&sc, p, &err) != TUSK_OK || zf_sim_new(&sim, &sc, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", p ? err.message : "out of memory");
        goto done;
    }
    *points = 0;
    for (uint64_t i = 0; i < rois; i++) {
        const zf_sim_roi_t *r;
        if (zf_sim_make(sim, i, &r, &err) != TUSK_OK || zf_batch_add(b, &r->roi, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            goto done;
        }
        *points += r->roi.n;
    }
    rc = 0;
done:
    zf_sim_destroy(&sim);
    tusk_params_destroy(&p);
    return rc;
}

/* Before timing a device: every RoI's nHisto and zHisto sums from the
 * device equal to the reference's bin for bin, the same peaks and z0. */
static int check_bins(const opts_t *o, const zf_config_t *cfg, const char *device, const zf_batch_t *b)
{
    zf_cl_config_t clc;
    zf_cl_config_default(&clc);
    clc.device = device;
    clc.chunk = (unsigned)o->chunk;
    clc.threads = (unsigned)o->threads;
    clc.keep_histograms = true;
    size_t n = zf_batch_count(b);
    unsigned bins = zf_config_bins(cfg);
    zf_cl_t *cl = NULL;
    zf_ref_t *ref = NULL;
    zf_result_t *res = calloc(n, sizeof *res);
    uint32_t *nh = malloc(bins * sizeof *nh);
    uint64_t *zs = malloc(bins * sizeof *zs);
    tusk_error_t err;
    int rc = TUSK_EXIT_FAIL;
    if (!res || !nh || !zs) {
        fprintf(stderr, PROG ": out of memory\n");
        goto done;
    }
    if (zf_cl_new(&cl, cfg, &clc, &err) != TUSK_OK || zf_ref_new(&ref, cfg, &err) != TUSK_OK ||
        zf_cl_run(cl, b, res, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": --device %s: %s\n", device, err.message);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        zf_roi_t roi;
        zf_result_t r;
        zf_batch_roi(b, i, &roi);
        if (zf_ref_roi(ref, &roi, &r, &err) != TUSK_OK || zf_cl_histograms(cl, i, nh, zs, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            goto done;
        }
        bool ok = memcmp(nh, zf_ref_nhisto(ref), bins * sizeof *nh) == 0 &&
                  memcmp(zs, zf_ref_zsum(ref), bins * sizeof *zs) == 0 && same(&r, &res[i], 1);
        if (!ok) {
            fprintf(stderr, PROG ": --device %s: RoI %u: the device's histogram or peak differs from the reference's\n",
                    device, (unsigned)roi.event);
            goto done;
        }
    }
    printf("  check: nHisto and zHisto equal bin for bin, the same peaks and z0 bit for bit on all %zu RoIs\n", n);
    rc = 0;
done:
    zf_cl_destroy(&cl);
    zf_ref_destroy(&ref);
    free(res);
    free(nh);
    free(zs);
    return rc;
}

static int bench_device(const opts_t *o, const zf_config_t *cfg, const char *device, const zf_batch_t *b,
                        uint64_t pairs, const zf_result_t *ref, zf_result_t *res, double ref_rois_s)
{
    struct {
        const char *what;
        unsigned chunk, slots;
        bool bare;
        const char *tag;
    } rows[] = {{"one RoI a launch, synchronous", 1, 1, false, "(c)"},
                {"one RoI a launch, two slots (streams)", 1, 2, false, "(c')"},
                {"batched, two slots (overlap)", (unsigned)o->chunk, 2, false, "(d)"},
                {"roofline: the pair loop without histograms", (unsigned)o->chunk, 2, true, "(e)"}};
    double full_kernel_pairs_s = 0;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        zf_cl_config_t clc;
        zf_cl_config_default(&clc);
        clc.device = device;
        clc.chunk = rows[k].chunk;
        clc.slots = rows[k].slots;
        clc.bare = rows[k].bare;
        clc.threads = (unsigned)o->threads;
        zf_cl_t *cl = NULL;
        tusk_error_t err;
        if (zf_cl_new(&cl, cfg, &clc, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --device %s: %s\n", device, err.message);
            return TUSK_EXIT_FAIL;
        }
        if (k == 0) {
            printf("  device: %s\n", zf_cl_describe(cl));
            if (check_bins(o, cfg, device, b)) {
                zf_cl_destroy(&cl);
                return TUSK_EXIT_FAIL;
            }
        }
        row_t r;
        int rc = measure(o, run_cl, cl, cl, b, pairs, res, &r);
        if (rc == 0 && !rows[k].bare && !same(ref, res, zf_batch_count(b))) {
            fprintf(stderr, PROG ": --device %s (%s): results differ from the reference's\n", device, rows[k].what);
            rc = TUSK_EXIT_FAIL;
        }
        zf_cl_destroy(&cl);
        if (rc)
            return rc;
        char what[128];
        snprintf(what, sizeof what, "%s opencl: %s", rows[k].tag, rows[k].what);
        double kernel_pairs_s = r.cl.find_ms > 0 ? (double)pairs / (r.cl.find_ms * 1e-3) : 0;
        if (!rows[k].bare) {
            print_row(what, &r, ref_rois_s);
            printf("      a run: %llu launches, zf_find %.3f ms (%.4g pairs/s), zf_peak %.3f ms, packing %.3f ms\n",
                   (unsigned long long)r.cl.launches, r.cl.find_ms, kernel_pairs_s, r.cl.peak_ms, r.cl.pack_s * 1e3);
            full_kernel_pairs_s = kernel_pairs_s;
        } else {
            printf("  %-52s %12s %12.4g   (zf_find alone: %.3f ms a run)\n", what, "-", kernel_pairs_s, r.cl.find_ms);
            if (kernel_pairs_s > 0)
                printf("      zf_find of (d) runs at %.1f %% of the roofline's pairs/s\n",
                       100.0 * full_kernel_pairs_s / kernel_pairs_s);
        }
    }
    return 0;
}

static int bench_sample(const opts_t *o, const char *preset, uint64_t rois)
{
    zf_batch_t *b = zf_batch_new();
    zf_result_t *ref = NULL, *res = NULL;
    double points;
    int rc = TUSK_EXIT_FAIL;
    if (!b || simulate(preset, rois, o->seed, b, &points))
        goto done;
    if (!(ref = calloc(rois, sizeof *ref)) || !(res = calloc(rois, sizeof *res))) {
        fprintf(stderr, PROG ": out of memory\n");
        goto done;
    }
    for (int mode = ZF_PAIRS; mode <= ZF_TRIPLETS; mode++) {
        if ((mode == ZF_PAIRS && !o->pairs) || (mode == ZF_TRIPLETS && !o->triplets))
            continue;
        zf_config_t cfg;
        zf_config_default(&cfg);
        cfg.mode = (enum zf_mode)mode;
        cfg.precision = o->precision;
        tusk_error_t err;
        zf_ref_t *r = NULL;
        zf_fast_t *f = NULL;
        if (zf_ref_new(&r, &cfg, &err) != TUSK_OK || zf_ref_run(r, b, ref, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            zf_ref_destroy(&r);
            goto done;
        }
        uint64_t pairs = 0;
        for (uint64_t i = 0; i < rois; i++)
            pairs += ref[i].pairs;
        printf("%s, %s (%s): %llu RoIs, %.1f spacepoints and %.0f pairs a RoI\n", preset, zf_mode_name(mode),
               zf_precision_name(o->precision), (unsigned long long)rois, points / (double)rois,
               (double)pairs / (double)rois);
        printf("  %-52s %12s %12s %10s\n", "backend", "RoIs/s", "pairs/s", "vs (a)");
        row_t a, row;
        rc = measure(o, run_ref, r, NULL, b, pairs, res, &a);
        zf_ref_destroy(&r);
        if (rc)
            goto done;
        print_row("(a) reference, 1 thread", &a, a.rois_s);
        if (zf_fast_new(&f, &cfg, (unsigned)o->threads, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            rc = TUSK_EXIT_FAIL;
            goto done;
        }
        char what[96];
        snprintf(what, sizeof what, "(b) fast, %u threads", zf_fast_threads(f));
        rc = measure(o, run_fast, f, NULL, b, pairs, res, &row);
        zf_fast_destroy(&f);
        if (rc == 0 && !same(ref, res, rois)) {
            fprintf(stderr, PROG ": the fast backend's results differ from the reference's\n");
            rc = TUSK_EXIT_FAIL;
        }
        if (rc)
            goto done;
        print_row(what, &row, a.rois_s);
        for (unsigned d = 0; d < o->devices && rc == 0; d++)
            rc = bench_device(o, &cfg, o->device[d], b, pairs, ref, res, a.rois_s);
        if (rc)
            goto done;
        printf("\n");
    }
    rc = 0;
done:
    free(ref);
    free(res);
    zf_batch_destroy(&b);
    return rc;
}

int bench_zfinder_main(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {true, true, true, true, 650, 300, 256, 0, 1, ZF_PREC_FLOAT, 2.0, {NULL}, 0};
    int sample = 2, mode = 2, precision = 0; /* both, both, float */
    const tusk_cli_option_t options[] = {
        {.name = "sample", .kind = TUSK_CLI_CHOICE, .to = &sample, .key = "lowlum|highlum|both"},
        {.name = "mode", .kind = TUSK_CLI_CHOICE, .to = &mode, .key = "pairs|triplets|both"},
        {.name = "rois-low", .kind = TUSK_CLI_U64, .to = &o.rois_low, .min = 1, .max = 1000000},
        {.name = "rois-high", .kind = TUSK_CLI_U64, .to = &o.rois_high, .min = 1, .max = 1000000},
        {.name = "device", .kind = TUSK_CLI_LIST, .to = o.device, .max = BENCH_MAX_DEVICES, .n = &o.devices},
        {.name = "chunk", .kind = TUSK_CLI_U64, .to = &o.chunk, .min = 1, .max = 1u << 20},
        {.name = "threads", .kind = TUSK_CLI_U64, .to = &o.threads, .max = 1024},
        {.name = "precision", .kind = TUSK_CLI_CHOICE, .to = &precision, .key = "float|double"},
        {.name = "seconds", .kind = TUSK_CLI_DOUBLE, .to = &o.seconds, .lo = 0.0, .hi = 3600.0},
        {.name = "seed", .kind = TUSK_CLI_U64, .to = &o.seed, .max = UINT64_MAX},
        {.name = NULL}};
    int rc = bench_options(cli, argc, argv, options, NULL, NULL, usage);
    if (rc != TUSK_CLI_RUN)
        return rc;
    o.low = sample != 1;
    o.high = sample != 0;
    o.pairs = mode != 1;
    o.triplets = mode != 0;
    o.precision = precision ? ZF_PREC_DOUBLE : ZF_PREC_FLOAT;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("tusk-bench zfinder: %ld CPUs online, %g s a row, chunk %llu, seed %llu\n\n", cpus, o.seconds,
           (unsigned long long)o.chunk, (unsigned long long)o.seed);
    rc = 0;
    if (o.low)
        rc = bench_sample(&o, "lowlum", o.rois_low);
    if (rc == 0 && o.high)
        rc = bench_sample(&o, "highlum", o.rois_high);
    return rc;
}
