/* bench_sts.c - `tusk-bench sts`: the STS local reconstruction's speed,
 * as the thesis measures it (seed 004 §2.9, §4; spec §4.5).
 *
 *   tusk-bench sts [--collisions LIST] [--device SETTING]... [--runs N] [--ref-runs N]
 *                  [--threads N] [--seed S] [--group-size N] [--bandwidth-mb N]
 *
 * For each entry of LIST (collisions a timeslice; the default 130, 250,
 * 500, 1000, 1500, 2000 makes about 2 M to 30 M digis) one timeslice is
 * simulated (not timed) and reconstructed, whole, again and again:
 *   (a) the reference: the original status-array cluster finder, one
 *       thread (the thesis's "original" column);
 *   (b) fast: the parallel algorithm on --threads threads (0: every CPU);
 *   (c) per --device: OpenCL, the whole timeslice one launch. Its time is
 *       given whole (pack + upload + kernels + download + unpack, wall
 *       clock), and per step from profiling events: upload, sort (digis by
 *       the 64-bit key), clusters (find: the links; compute: from the
 *       chains; sort by time), hits, download; "device" is the kernels
 *       alone (the data on the device, the thesis's Table 2 condition
 *       without copies), "copies" upload + download.
 * Each row gives mean +- standard deviation over its runs. Before a
 * device is timed its clusters and hits are compared with fast's, bit for
 * bit (a difference is a failure); the reference's clusters are compared
 * with fast's and the fraction that differ is printed.
 *
 * Per device the memory bandwidth is measured first (a copy kernel over
 * --bandwidth-mb MB, best of 10), and each timeslice's kernels are
 * stated as bytes/s (the least traffic of sts/README.md's model over the
 * kernels' time) and as a fraction of that bandwidth, whole and step by
 * step. The device line says the work-group size asked and the one each
 * kernel ran with (and why it is smaller where it is); the timeslice's
 * largest module is given as a share of the whole (its digis, clusters
 * and hits, and the hit pairs' square law), beside the work-groups each
 * step was spread over: what sets the pace of a step that keeps a module
 * on few groups (sts/README.md, "Load"). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/exit.h"
#include "bench_sts.h"
#include "bench_util.h"
#include "tusk/sts.h"

/* "N.NNx (a)", or nothing without a reference row. */
static const char *ratio(const tusk_moments_t *a, double ms, char *buf, size_t cap)
{
    return bench_ratio(a, ms, 5, 2, buf, cap);
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: tusk-bench sts [OPTIONS]\n"
            "\n"
            "  --collisions LIST   collisions a timeslice, comma-separated (130,250,500,1000,1500,2000:\n"
            "                      about 2 M to 30 M digis)\n"
            "  --device SETTING    an OpenCL device to measure (repeatable; tusk-cl list)\n"
            "  --runs N            runs of the fast and OpenCL rows (20; the thesis: 50)\n"
            "  --ref-runs N        runs of the reference row (2)\n"
            "  --threads N         threads of the fast row and of the OpenCL packing (0: one per CPU)\n"
            "  --seed S            simulation seed (1)\n"
            "  --group-size N      OpenCL work-items a work-group (256; a kernel that cannot run as many runs\n"
            "                      fewer, and the device line says so)\n"
            "  --bandwidth-mb N    the bandwidth probe's buffer, MB (1024)\n"
            "\n"
            "Exit status: 0 fine, 1 failure (a device, results that differ from the fast backend's), 2 bad usage.\n");
}

typedef int (*run_fn)(void *ctx, const sts_batch_t *b, sts_result_t *res, tusk_error_t *err);

static int run_ref(void *ctx, const sts_batch_t *b, sts_result_t *res, tusk_error_t *err)
{
    return sts_ref_run(ctx, b, res, err);
}

static int run_fast(void *ctx, const sts_batch_t *b, sts_result_t *res, tusk_error_t *err)
{
    return sts_fast_run(ctx, b, res, err);
}

/* `runs` runs; the wall times in ms. */
static int measure(const char *prog, run_fn fn, void *ctx, const sts_batch_t *b, sts_result_t *res, uint64_t runs,
                   tusk_moments_t *t)
{
    memset(t, 0, sizeof *t);
    tusk_error_t err;
    for (uint64_t r = 0; r < runs; r++) {
        double t0 = tusk_clock_s();
        if (fn(ctx, b, res, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            return TUSK_EXIT_FAIL;
        }
        tusk_moments_add(t, (tusk_clock_s() - t0) * 1e3);
    }
    return 0;
}

/* Clusters of a and b, module by module as multisets: those only a has,
 * only b has, and b's total. */
static int cmp_cluster(const void *x, const void *y)
{
    return memcmp(x, y, sizeof(adf_sts_cluster_t));
}

static void differ(const sts_result_t *a, const sts_result_t *b, uint64_t *only_a, uint64_t *only_b, uint64_t *total)
{
    *only_a = *only_b = *total = 0;
    adf_sts_cluster_t *x = NULL, *y = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < sts_result_modules(a); i++) {
        uint32_t fa, ba, fb, bb;
        sts_result_counts(a, i, &fa, &ba, NULL);
        sts_result_counts(b, i, &fb, &bb, NULL);
        size_t na = fa + ba, nb = fb + bb, need = (na > nb ? na : nb) + 1;
        if (need > cap) {
            adf_sts_cluster_t *nx = realloc(x, need * sizeof *x), *ny = nx ? realloc(y, need * sizeof *y) : NULL;
            if (nx)
                x = nx;
            if (ny)
                y = ny;
            if (!nx || !ny)
                break;
            cap = need;
        }
        for (uint32_t k = 0; k < na; k++)
            sts_result_cluster(a, i, k, &x[k]);
        for (uint32_t k = 0; k < nb; k++)
            sts_result_cluster(b, i, k, &y[k]);
        qsort(x, na, sizeof *x, cmp_cluster);
        qsort(y, nb, sizeof *y, cmp_cluster);
        size_t p = 0, q = 0;
        while (p < na || q < nb) {
            int d = p == na ? 1 : q == nb ? -1 : cmp_cluster(&x[p], &y[q]);
            if (d == 0)
                p++, q++;
            else if (d < 0)
                (*only_a)++, p++;
            else
                (*only_b)++, q++;
        }
        *total += nb;
    }
    free(x);
    free(y);
}

/* The timeslice's largest module (by digis) as a share of the whole, and
 * the module with the most hits: the work one work-group a module would
 * have to do alone while the rest of the device waits. */
static void largest_module(const sts_batch_t *b, const sts_result_t *r)
{
    size_t M = sts_batch_count(b), big = 0, most = 0;
    uint64_t nd = 0, nc = 0, nh = 0, big_n = 0, most_h = 0;
    for (size_t i = 0; i < M; i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        uint32_t f, k, h;
        sts_result_counts(r, i, &f, &k, &h);
        nd += m.hdr.n_digis;
        nc += (uint64_t)f + k;
        nh += h;
        if (m.hdr.n_digis > big_n)
            big_n = m.hdr.n_digis, big = i;
        if (h > most_h)
            most_h = h, most = i;
    }
    if (M == 0 || nd == 0)
        return;
    uint32_t f, k, h;
    sts_result_counts(r, big, &f, &k, &h);
    double mean = (double)nd / (double)M;
    printf("  largest module (%zu of %zu): %llu digis = %.2f x the mean, %.2f %% of the timeslice; %u clusters "
           "(%.2f %%), %u hits (%.2f %%); most hits: module %zu, %llu (%.2f x the mean)\n",
           big, M, (unsigned long long)big_n, (double)big_n / mean, 100.0 * (double)big_n / (double)nd, f + k,
           nc ? 100.0 * (f + k) / (double)nc : 0.0, h, nh ? 100.0 * h / (double)nh : 0.0, most,
           (unsigned long long)most_h, nh ? (double)most_h * (double)M / (double)nh : 0.0);
}

/* "name ms (bytes GB, GB/s, % of the bandwidth)" of one step. */
static void step_line(const char *name, double ms, uint64_t bytes, double bandwidth)
{
    double gbs = ms > 0 ? (double)bytes / (ms * 1e-3) / 1e9 : 0;
    printf("        %-17s %8.2f ms  %7.3f GB  %7.1f GB/s", name, ms, (double)bytes * 1e-9, gbs);
    if (bandwidth > 0)
        printf("  %5.1f %%", 100.0 * gbs / bandwidth);
    printf("\n");
}

static int bench_size(const char *prog, const bench_opts_t *o, uint32_t collisions, const double *bandwidth)
{
    sts_sim_config_t sc;
    sts_sim_config_default(&sc);
    sc.collisions = collisions;
    sc.seed = o->seed;
    sc.truth = false;
    tusk_error_t err;
    sts_sim_t *sim = NULL;
    sts_batch_t *b = sts_batch_new();
    sts_result_t *rf = sts_result_new(), *rx = sts_result_new();
    sts_ref_t *ref = NULL;
    sts_fast_t *fast = NULL;
    int rc = TUSK_EXIT_FAIL;
    const sts_sim_ts_t *ts;
    double t0 = tusk_clock_s();
    if (!b || !rf || !rx || sts_sim_new(&sim, &sc, &err) != TUSK_OK || sts_sim_make(sim, 0, &ts, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, b && rf && rx ? err.message : "out of memory");
        goto done;
    }
    for (size_t m = 0; m < sts_sim_modules(sim); m++) {
        sts_module_t mod;
        sts_sim_module(sim, m, &mod);
        if (sts_batch_add(b, &mod, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            goto done;
        }
    }
    double sim_s = tusk_clock_s() - t0;
    sts_config_t cfg;
    sts_config_default(&cfg);
    if (sts_ref_new(&ref, &cfg, &err) != TUSK_OK || sts_fast_new(&fast, &cfg, (unsigned)o->threads, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        goto done;
    }
    tusk_moments_t ta, tb;
    if ((rc = measure(prog, run_fast, fast, b, rf, o->runs, &tb)))
        goto done;
    uint64_t nc, nh;
    sts_result_totals(rf, &nc, &nh);
    printf("%u collisions: %llu digis (%.2f M), %zu modules, %llu clusters, %llu hits; %.1f us of beam (simulated "
           "in %.1f s)\n",
           (unsigned)collisions, (unsigned long long)ts->digis, (double)ts->digis * 1e-6, sts_batch_count(b),
           (unsigned long long)nc, (unsigned long long)nh, ts->length_ns * 1e-3, sim_s);
    largest_module(b, rf);
    memset(&ta, 0, sizeof ta);
    if (o->ref_runs > 0) {
        if ((rc = measure(prog, run_ref, ref, b, rx, o->ref_runs, &ta)))
            goto done;
        uint64_t only_o, only_p, total;
        differ(rx, rf, &only_o, &only_p, &total);
        printf("  check: the original finder's clusters against the parallel one's: %llu (%.4f %%) and %llu (%.4f %%) "
               "of %llu differ\n",
               (unsigned long long)only_o, total ? 100.0 * (double)only_o / (double)total : 0.0,
               (unsigned long long)only_p, total ? 100.0 * (double)only_p / (double)total : 0.0,
               (unsigned long long)total);
        printf("  %-44s %10.1f +- %6.1f ms  %8.3g digis/s\n", "(a) reference (original finder), 1 thread",
               tusk_moments_mean(&ta), tusk_moments_sd(&ta), (double)ts->digis / (tusk_moments_mean(&ta) * 1e-3));
    } else {
        printf("  (a) reference: not run (--ref-runs 0)\n");
    }
    char what[96];
    snprintf(what, sizeof what, "(b) fast (parallel algorithm), %u threads", sts_fast_threads(fast));
    char rb[32];
    printf("  %-44s %10.1f +- %6.1f ms  %8.3g digis/s  %s\n", what, tusk_moments_mean(&tb), tusk_moments_sd(&tb),
           (double)ts->digis / (tusk_moments_mean(&tb) * 1e-3), ratio(&ta, tusk_moments_mean(&tb), rb, sizeof rb));
    for (unsigned d = 0; d < o->devices; d++) {
        sts_cl_config_t clc;
        sts_cl_config_default(&clc);
        clc.device = o->device[d];
        clc.threads = (unsigned)o->threads;
        clc.group_size = (unsigned)o->group;
        sts_cl_t *cl = NULL;
        if (sts_cl_new(&cl, &cfg, &clc, &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
            rc = TUSK_EXIT_FAIL;
            goto done;
        }
        /* the first run builds the buffers; then the check */
        char why[512];
        if (sts_cl_run(cl, b, rx, &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
            sts_cl_destroy(&cl);
            rc = TUSK_EXIT_FAIL;
            goto done;
        }
        if (!sts_result_equal(rf, rx, why, sizeof why)) {
            fprintf(stderr, "%s: --device %s: the clusters or hits differ from the fast backend's: %s\n", prog,
                    o->device[d], why);
            sts_cl_destroy(&cl);
            rc = TUSK_EXIT_FAIL;
            goto done;
        }
        tusk_moments_t tot = {0}, up = {0}, sort = {0}, find = {0}, comp = {0}, csort = {0}, hits = {0}, down = {0},
                       dev = {0}, pk = {0}, unpk = {0};
        sts_cl_times_t t;
        for (uint64_t r = 0; r < o->runs; r++) {
            if (sts_cl_run(cl, b, rx, &err) != TUSK_OK) {
                fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
                sts_cl_destroy(&cl);
                rc = TUSK_EXIT_FAIL;
                goto done;
            }
            sts_cl_times(cl, &t);
            tusk_moments_add(&tot, t.total);
            tusk_moments_add(&up, t.upload);
            tusk_moments_add(&sort, t.sort_digis);
            tusk_moments_add(&find, t.find_clusters);
            tusk_moments_add(&comp, t.compute_clusters);
            tusk_moments_add(&csort, t.sort_clusters);
            tusk_moments_add(&hits, t.find_hits);
            tusk_moments_add(&down, t.download);
            tusk_moments_add(&pk, t.pack);
            tusk_moments_add(&unpk, t.unpack);
            tusk_moments_add(&dev, t.sort_digis + t.find_clusters + t.compute_clusters + t.sort_clusters + t.find_hits);
        }
        printf("  (c) opencl on %s (--group-size %llu)\n", sts_cl_describe(cl), (unsigned long long)o->group);
        printf("  %-44s %10.1f +- %6.1f ms  %8.3g digis/s  %s\n", "    whole (pack, copies, kernels, unpack)",
               tusk_moments_mean(&tot), tusk_moments_sd(&tot), (double)ts->digis / (tusk_moments_mean(&tot) * 1e-3),
               ratio(&ta, tusk_moments_mean(&tot), rb, sizeof rb));
        printf("  %-44s %10.2f +- %6.2f ms  %8.3g digis/s  %s\n", "    device (kernels, data on the device)",
               tusk_moments_mean(&dev), tusk_moments_sd(&dev), (double)ts->digis / (tusk_moments_mean(&dev) * 1e-3),
               ratio(&ta, tusk_moments_mean(&dev), rb, sizeof rb));
        printf("      upload %.2f, sort digis %.2f, find clusters %.2f, compute clusters %.2f, sort clusters %.2f, "
               "hits %.2f, download %.2f, host pack %.2f + unpack %.2f ms (means)\n",
               tusk_moments_mean(&up), tusk_moments_mean(&sort), tusk_moments_mean(&find), tusk_moments_mean(&comp),
               tusk_moments_mean(&csort), tusk_moments_mean(&hits), tusk_moments_mean(&down), tusk_moments_mean(&pk),
               tusk_moments_mean(&unpk));
        double gbs = (double)t.kernel_bytes / (tusk_moments_mean(&dev) * 1e-3) / 1e9;
        printf("      copies: %.1f MB up, %.1f MB down (%.1f GB/s); kernels: at least %.2f GB moved, %.1f GB/s",
               (double)t.bytes_up * 1e-6, (double)t.bytes_down * 1e-6,
               (double)(t.bytes_up + t.bytes_down) / ((tusk_moments_mean(&up) + tusk_moments_mean(&down)) * 1e-3) / 1e9,
               (double)t.kernel_bytes * 1e-9, gbs);
        bench_share(gbs, bandwidth[d]);
        printf("      per step (the least bytes of sts/README.md's model; work-groups: %llu a digi kernel, %llu a "
               "cluster-sort kernel, %llu a hit kernel):\n",
               (unsigned long long)t.groups_digis, (unsigned long long)t.groups_clusters,
               (unsigned long long)t.groups_hits);
        step_line("sort digis", tusk_moments_mean(&sort), t.bytes_sort_digis, bandwidth[d]);
        step_line("find clusters", tusk_moments_mean(&find), t.bytes_find_clusters, bandwidth[d]);
        step_line("compute clusters", tusk_moments_mean(&comp), t.bytes_compute_clusters, bandwidth[d]);
        step_line("sort clusters", tusk_moments_mean(&csort), t.bytes_sort_clusters, bandwidth[d]);
        step_line("hits", tusk_moments_mean(&hits), t.bytes_hits, bandwidth[d]);
        sts_cl_destroy(&cl);
    }
    printf("\n");
    rc = 0;
done:
    sts_ref_destroy(&ref);
    sts_fast_destroy(&fast);
    sts_result_destroy(&rf);
    sts_result_destroy(&rx);
    sts_batch_destroy(&b);
    sts_sim_destroy(&sim);
    return rc;
}

BENCH_PROBE(sts)

int bench_sts_main(const tusk_cli_t *cli, int argc, char **argv)
{
    bench_opts_t o = {{NULL}, 0, 20, 2, 0, 1, 256, 1024};
    bench_sizes_t sizes = {"--collisions", 1, 100000, {130, 250, 500, 1000, 1500, 2000}, 6};
    const tusk_cli_option_t options[] = {
        {.name = "collisions", .kind = TUSK_CLI_CALL, .to = &sizes, .call = bench_sizes}, {.name = NULL}};
    const tusk_cli_option_t group = {.name = "group-size", .kind = TUSK_CLI_U64, .to = &o.group, .min = 1, .max = 4096};
    int rc = bench_options(cli, argc, argv, options, &group, &o, help);
    if (rc != TUSK_CLI_RUN)
        return rc;
    bench_header(argv[0], &o, "");
    double bandwidth[BENCH_MAX_DEVICES];
    if ((rc = bench_bandwidths(argv[0], &o, bench_sts_probe, bandwidth)) != TUSK_EXIT_OK)
        return rc;
    printf("\n");
    for (unsigned i = 0; i < sizes.n; i++)
        if ((rc = bench_size(argv[0], &o, sizes.v[i], bandwidth)))
            return rc;
    return 0;
}
