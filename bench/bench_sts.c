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
#include "bench_sts.h"
#include "tusk/sts.h"

#define MAX_DEVICES 8
#define MAX_SIZES 32

typedef struct opts {
    uint32_t collisions[MAX_SIZES];
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

/* "N.NNx (a)", or nothing without a reference row. */
static const char *ratio(const stat_t *a, double ms, char *buf, size_t cap)
{
    if (a->n > 0 && ms > 0)
        snprintf(buf, cap, "%5.2fx (a)", stat_mean(a) / ms);
    else
        buf[0] = '\0';
    return buf;
}

static int parse_list(const char *prog, const char *text, opts_t *o)
{
    char buf[512];
    if (strlen(text) >= sizeof buf) {
        fprintf(stderr, "%s: --collisions: the list is too long\n", prog);
        return -1;
    }
    strcpy(buf, text);
    o->sizes = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned v;
        if (o->sizes == MAX_SIZES || !tusk_cli_unsigned(prog, "--collisions", tok, 1, 100000, &v))
            return -1;
        o->collisions[o->sizes++] = v;
    }
    return o->sizes ? 0 : -1;
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
                   stat_t *t)
{
    memset(t, 0, sizeof *t);
    tusk_error_t err;
    for (uint64_t r = 0; r < runs; r++) {
        double t0 = tusk_clock_s();
        if (fn(ctx, b, res, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            return TUSK_EXIT_FAIL;
        }
        stat_add(t, (tusk_clock_s() - t0) * 1e3);
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

static int bench_size(const char *prog, const opts_t *o, uint32_t collisions, const double *bandwidth)
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
    stat_t ta, tb;
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
               stat_mean(&ta), stat_sd(&ta), (double)ts->digis / (stat_mean(&ta) * 1e-3));
    } else {
        printf("  (a) reference: not run (--ref-runs 0)\n");
    }
    char what[96];
    snprintf(what, sizeof what, "(b) fast (parallel algorithm), %u threads", sts_fast_threads(fast));
    char rb[32];
    printf("  %-44s %10.1f +- %6.1f ms  %8.3g digis/s  %s\n", what, stat_mean(&tb), stat_sd(&tb),
           (double)ts->digis / (stat_mean(&tb) * 1e-3), ratio(&ta, stat_mean(&tb), rb, sizeof rb));
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
        stat_t tot = {0}, up = {0}, sort = {0}, find = {0}, comp = {0}, csort = {0}, hits = {0}, down = {0}, dev = {0},
               pk = {0}, unpk = {0};
        sts_cl_times_t t;
        for (uint64_t r = 0; r < o->runs; r++) {
            if (sts_cl_run(cl, b, rx, &err) != TUSK_OK) {
                fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
                sts_cl_destroy(&cl);
                rc = TUSK_EXIT_FAIL;
                goto done;
            }
            sts_cl_times(cl, &t);
            stat_add(&tot, t.total);
            stat_add(&up, t.upload);
            stat_add(&sort, t.sort_digis);
            stat_add(&find, t.find_clusters);
            stat_add(&comp, t.compute_clusters);
            stat_add(&csort, t.sort_clusters);
            stat_add(&hits, t.find_hits);
            stat_add(&down, t.download);
            stat_add(&pk, t.pack);
            stat_add(&unpk, t.unpack);
            stat_add(&dev, t.sort_digis + t.find_clusters + t.compute_clusters + t.sort_clusters + t.find_hits);
        }
        printf("  (c) opencl on %s (--group-size %llu)\n", sts_cl_describe(cl), (unsigned long long)o->group);
        printf("  %-44s %10.1f +- %6.1f ms  %8.3g digis/s  %s\n", "    whole (pack, copies, kernels, unpack)",
               stat_mean(&tot), stat_sd(&tot), (double)ts->digis / (stat_mean(&tot) * 1e-3),
               ratio(&ta, stat_mean(&tot), rb, sizeof rb));
        printf("  %-44s %10.2f +- %6.2f ms  %8.3g digis/s  %s\n", "    device (kernels, data on the device)",
               stat_mean(&dev), stat_sd(&dev), (double)ts->digis / (stat_mean(&dev) * 1e-3),
               ratio(&ta, stat_mean(&dev), rb, sizeof rb));
        printf("      upload %.2f, sort digis %.2f, find clusters %.2f, compute clusters %.2f, sort clusters %.2f, "
               "hits %.2f, download %.2f, host pack %.2f + unpack %.2f ms (means)\n",
               stat_mean(&up), stat_mean(&sort), stat_mean(&find), stat_mean(&comp), stat_mean(&csort),
               stat_mean(&hits), stat_mean(&down), stat_mean(&pk), stat_mean(&unpk));
        double gbs = (double)t.kernel_bytes / (stat_mean(&dev) * 1e-3) / 1e9;
        printf("      copies: %.1f MB up, %.1f MB down (%.1f GB/s); kernels: at least %.2f GB moved, %.1f GB/s",
               (double)t.bytes_up * 1e-6, (double)t.bytes_down * 1e-6,
               (double)(t.bytes_up + t.bytes_down) / ((stat_mean(&up) + stat_mean(&down)) * 1e-3) / 1e9,
               (double)t.kernel_bytes * 1e-9, gbs);
        if (bandwidth[d] > 0)
            printf(" = %.1f %% of the %.0f GB/s measured\n", 100.0 * gbs / bandwidth[d], bandwidth[d]);
        else
            printf("\n");
        printf("      per step (the least bytes of sts/README.md's model; work-groups: %llu a digi kernel, %llu a "
               "cluster-sort kernel, %llu a hit kernel):\n",
               (unsigned long long)t.groups_digis, (unsigned long long)t.groups_clusters,
               (unsigned long long)t.groups_hits);
        step_line("sort digis", stat_mean(&sort), t.bytes_sort_digis, bandwidth[d]);
        step_line("find clusters", stat_mean(&find), t.bytes_find_clusters, bandwidth[d]);
        step_line("compute clusters", stat_mean(&comp), t.bytes_compute_clusters, bandwidth[d]);
        step_line("sort clusters", stat_mean(&csort), t.bytes_sort_clusters, bandwidth[d]);
        step_line("hits", stat_mean(&hits), t.bytes_hits, bandwidth[d]);
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

int bench_sts_main(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {{130, 250, 500, 1000, 1500, 2000}, 6, {NULL}, 0, 20, 2, 0, 1, 256, 1024};
    static const struct option longs[] = {
        {"collisions", required_argument, NULL, 'c'}, {"device", required_argument, NULL, 'd'},
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
        case 'c': ok = parse_list(prog, optarg, &o) == 0; break;
        case 'r': ok = tusk_cli_u64(prog, "--runs", optarg, 1, 100000, &o.runs); break;
        case 'R': ok = tusk_cli_u64(prog, "--ref-runs", optarg, 0, 100000, &o.ref_runs); break;
        case 't': ok = tusk_cli_u64(prog, "--threads", optarg, 0, 1024, &o.threads); break;
        case 's': ok = tusk_cli_u64(prog, "--seed", optarg, 0, UINT64_MAX, &o.seed); break;
        case 'g': ok = tusk_cli_u64(prog, "--group-size", optarg, 1, 4096, &o.group); break;
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
    printf("tusk-bench sts: %ld CPUs online, %llu runs a row (%llu of the reference), seed %llu\n", cpus,
           (unsigned long long)o.runs, (unsigned long long)o.ref_runs, (unsigned long long)o.seed);
    double bandwidth[MAX_DEVICES] = {0};
    for (unsigned d = 0; d < o.devices; d++) {
        sts_config_t cfg;
        sts_config_default(&cfg);
        sts_cl_config_t clc;
        sts_cl_config_default(&clc);
        clc.device = o.device[d];
        clc.group_size = (unsigned)o.group;
        sts_cl_t *cl = NULL;
        tusk_error_t err;
        if (sts_cl_new(&cl, &cfg, &clc, &err) != TUSK_OK ||
            sts_cl_bandwidth(cl, (size_t)o.bw_mb << 20, 10, &bandwidth[d], &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o.device[d], err.message);
            sts_cl_destroy(&cl);
            return TUSK_EXIT_FAIL;
        }
        printf("device %s: memory bandwidth %.0f GB/s (a copy kernel, %llu MB read and written, best of 10)\n",
               sts_cl_describe(cl), bandwidth[d], (unsigned long long)o.bw_mb);
        sts_cl_destroy(&cl);
    }
    printf("\n");
    for (unsigned i = 0; i < o.sizes; i++) {
        int rc = bench_size(prog, &o, o.collisions[i], bandwidth);
        if (rc)
            return rc;
    }
    return 0;
}
