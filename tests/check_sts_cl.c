/* check_sts_cl.c - the OpenCL STS reconstruction against the fast backend,
 * on the device TUSK_CL_TEST_DEVICE names (default: any, PoCL's CPU
 * device in CI). Skipped (exit 77) only on a host without any OpenCL
 * device.
 *
 *  - the records host and kernels share (sts_shared.h) have the same size
 *    and field offsets on both sides, measured by a kernel, and the shared
 *    formulas (a cluster from its sums, a hit from two clusters) give the
 *    same bits on both sides for random inputs;
 *  - on fresh simulated timeslices and on random modules (every strip
 *    count, twin digis, crowded channels, empty modules): the same
 *    clusters and hits as the fast backend, bit for bit and in the same
 *    order, for several work-group sizes;
 *  - a batch needing a wider channel table rebuilds the kernels and
 *    still agrees; fast-math options are refused; the bandwidth probe
 *    runs. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sts_private.h"
#include "cllayout.h"
#include "testutil.h"
#include "tusk/cl.h"
#include "tusk/sts.h"

extern const char tusk_sts_kernel_source[];
extern const unsigned long tusk_sts_kernel_source_size;

/* ---- the shared records and formulas, seen by a kernel -------------------------------------- */

#define FIELDS(X)                                                                                                      \
    X(sts_dev_module_t, first) X(sts_dev_module_t, n) X(sts_dev_module_t, strips) X(sts_dev_module_t, bucket_shift)    \
    X(sts_dev_module_t, first_off) X(sts_dev_module_t, first_hit) X(sts_dev_module_t, first_out)                       \
    X(sts_dev_module_t, buckets) X(sts_dev_module_t, first_dcount) X(sts_dev_module_t, first_ccount)                   \
    X(sts_dev_module_t, pitch) X(sts_dev_module_t, tan_stereo) X(sts_dev_module_t, length) X(sts_dev_module_t, width)  \
    X(sts_dev_module_t, x0) X(sts_dev_module_t, y0) X(sts_dev_module_t, z0) X(sts_dev_counts_t, n_clusters)            \
    X(sts_dev_counts_t, n_front) X(sts_dev_counts_t, max_tvar) X(sts_dev_counts_t, n_hits) X(sts_dev_counts_t, status) \
    X(sts_params_t, delta) X(sts_params_t, tvar_digi) X(sts_params_t, qvar) X(sts_params_t, sys_var)                   \
    X(sts_params_t, cut2) X(sts_params_t, y_tol) X(sts_cluster_t, channel) X(sts_cluster_t, size)                      \
    X(sts_cluster_t, charge) X(sts_cluster_t, tkey) X(sts_cluster_t, time) X(sts_cluster_t, tvar)                      \
    X(sts_cluster_t, x) X(sts_cluster_t, xvar) X(sts_hit_t, x) X(sts_hit_t, y) X(sts_hit_t, z) X(sts_hit_t, xvar)       \
    X(sts_hit_t, yvar) X(sts_hit_t, xycov) X(sts_hit_t, t) X(sts_hit_t, tvar) X(sts_hit_t, front) X(sts_hit_t, back)   \
    X(sts_acc_t, first) X(sts_acc_t, n) X(sts_acc_t, q) X(sts_acc_t, qi) X(sts_acc_t, t)
#define RECORDS(X) X(sts_dev_module_t) X(sts_dev_counts_t) X(sts_params_t) X(sts_cluster_t) X(sts_hit_t) X(sts_acc_t)

static const char test_kernels[] =
    "\n#line 1 \"check_sts_cl.c (test kernels)\"\n"
    "__kernel void sts_layout(__global uint *out)\n"
    "{\n"
    "    uint k = 0;\n"
#define DEV_SIZE(T) "    { out[k++] = (uint)sizeof(" #T "); }\n"
#define DEV_FIELD(T, f)                                                                                               \
    "    { " #T " v; out[k++] = (uint)((__private char *)&v." #f " - (__private char *)&v); }\n"
    RECORDS(DEV_SIZE) FIELDS(DEV_FIELD)
    "    out[k++] = STS_MAX_STRIPS; out[k++] = STS_MAX_CHANNELS; out[k++] = STS_BUCKETS; out[k++] = STS_NONE;\n"
    "    out[k++] = as_uint(STS_ONE_TWELFTH); out[k++] = STS_HAS_PREVIOUS; out[k++] = STS_STATUS_HITS;\n"
    "    out[k++] = (uint)sts_link_order(100, 78, 21); out[k++] = (uint)sts_link_order(100, 79, 21);\n"
    "    out[k++] = (uint)sts_link_order(100, 122, 21);\n"
    "    out[k++] = sts_window_low(1000.5f, 30.25f); out[k++] = sts_var_bits(8.5f);\n"
    "}\n"
    "__kernel void sts_formulas(__global const sts_acc_t *acc, __global const sts_params_t *p,\n"
    "                           __global sts_cluster_t *cl, __global const sts_dev_module_t *g,\n"
    "                           __global sts_hit_t *hit, __global int *made, uint strips)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "    sts_acc_t a = acc[i];\n"
    "    sts_cluster_t c;\n"
    "    sts_cluster_finish(&a, strips, p->tvar_digi, p->qvar, p->sys_var, &c);\n"
    "    cl[i] = c;\n"
    "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
    "    if (i % 2 == 1) {\n"
    "        sts_dev_module_t m = g[0];\n"
    "        sts_hit_t h;\n"
    "        made[i / 2] = sts_hit_make(cl[i - 1], cl[i], m.pitch, m.tan_stereo, m.length, m.width, m.x0, m.y0,\n"
    "                                   m.z0, p->y_tol, &h);\n"
    "        hit[i / 2] = h;\n"
    "    }\n"
    "}\n";

static size_t host_layout(uint32_t *out)
{
    size_t k = 0;
#define HOST_SIZE(T) out[k++] = (uint32_t)sizeof(T);
#define HOST_FIELD(T, f) out[k++] = (uint32_t)offsetof(T, f);
    RECORDS(HOST_SIZE) FIELDS(HOST_FIELD)
    out[k++] = STS_MAX_STRIPS;
    out[k++] = STS_MAX_CHANNELS;
    out[k++] = STS_BUCKETS;
    out[k++] = STS_NONE;
    out[k++] = sts_var_bits(STS_ONE_TWELFTH);
    out[k++] = STS_HAS_PREVIOUS;
    out[k++] = STS_STATUS_HITS;
    out[k++] = (uint32_t)sts_link_order(100, 78, 21);
    out[k++] = (uint32_t)sts_link_order(100, 79, 21);
    out[k++] = (uint32_t)sts_link_order(100, 122, 21);
    out[k++] = sts_window_low(1000.5f, 30.25f);
    out[k++] = sts_var_bits(8.5f);
    return k;
}

START_TEST(shared_records_and_formulas_agree)
{
    tusk_cl_t *cl = NULL;
    tusk_error_t err;
    tusk_cl_config_t cfg = {tu_cl_test_device(), 0, NULL, NULL, true};
    ck_assert_msg(tusk_cl_new(&cl, &cfg, &err) == TUSK_OK, "%s", err.message);
    char opt[256];
    tu_cl_options(cl, "STS_DIV_VIA_DOUBLE", "-DSTS_CH=2048 -DSTS_WG=64", opt, sizeof opt); /* as sts_cl.c builds */
    cl_program prog;
    cl_kernel k, kf;
    tu_cl_build_with(cl, tusk_sts_kernel_source, (size_t)tusk_sts_kernel_source_size, test_kernels, "sts.cl + tests",
                     opt, "sts_layout", &prog, &k);
    uint32_t host[128], dev[128];
    size_t count = host_layout(host);
    ck_assert(count <= 128);
    cl_mem out;
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "layout", CL_MEM_WRITE_ONLY, sizeof dev, NULL, &out, &err), TUSK_OK);
    ck_assert_int_eq(clSetKernelArg(k, 0, sizeof out, &out), CL_SUCCESS);
    size_t one = 1;
    ck_assert_msg(tusk_cl_run(cl, k, 1, &one, &one, NULL, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), out, CL_TRUE, 0, count * 4, dev, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t i = 0; i < count; i++)
        ck_assert_msg(host[i] == dev[i], "shared item %zu: host %u, kernel %u", i, host[i], dev[i]);
    /* the formulas: random sums and geometry, the same bits on both sides */
    enum { N = 512 };
    sts_acc_t *acc = calloc(N, sizeof *acc);
    sts_cluster_t *hc = calloc(N, sizeof *hc), *dc = calloc(N, sizeof *dc);
    sts_hit_t *hh = calloc(N / 2, sizeof *hh), *dh = calloc(N / 2, sizeof *dh);
    int made_h[N / 2], made_d[N / 2];
    uint32_t strips = 1024;
    for (int i = 0; i < N; i++) {
        uint32_t size = 1 + (tu_below(4) ? tu_below(3) : tu_below(40));
        /* a back cluster mostly a few strips left of its front one: their strips cross */
        uint32_t front = i % 2 ? acc[i - 1].first : 0;
        if (i % 2 && tu_below(4) && front >= 20 && front + size + 1 < strips)
            acc[i].first = strips + front - tu_below(20);
        else
            acc[i].first = (i % 2 ? strips : 0) + tu_below(strips - size);
        acc[i].n = size;
        acc[i].q = tu_below(8) ? tu_below(65536u * size) : 0;
        acc[i].qi = acc[i].q ? tu_rand() % ((uint64_t)acc[i].q * (size - 1) + 1) : 0;
        acc[i].t = (uint64_t)size * tu_below(1u << 28) + tu_below(size);
    }
    sts_config_t c;
    sts_config_default(&c);
    c.charge_noise = 1 + 30 * tu_uniform();
    c.cog_sys_strips = 0.3 * tu_uniform();
    c.hit_y_tol_mm = 2 * tu_uniform();
    sts_params_t p;
    sts_params_of(&c, &p);
    sts_dev_module_t g;
    memset(&g, 0, sizeof g);
    g.pitch = (float)(0.02 + 0.1 * tu_uniform());
    g.tan_stereo = (float)(0.05 + 0.5 * tu_uniform());
    g.length = (float)(100 + 100 * tu_uniform());
    g.width = (float)strips * g.pitch;
    g.x0 = (float)(-500 + 1000 * tu_uniform());
    g.y0 = (float)(-500 + 1000 * tu_uniform());
    g.z0 = (float)(300 + 700 * tu_uniform());
    for (int i = 0; i < N; i++)
        sts_cluster_finish(&acc[i], strips, p.tvar_digi, p.qvar, p.sys_var, &hc[i]);
    for (int i = 0; i < N / 2; i++) {
        memset(&hh[i], 0, sizeof hh[i]);
        made_h[i] = sts_hit_make(hc[2 * i], hc[2 * i + 1], g.pitch, g.tan_stereo, g.length, g.width, g.x0, g.y0, g.z0,
                                 p.y_tol, &hh[i]);
    }
    ck_assert_msg(tusk_cl_kernel_new(cl, prog, "sts_formulas", &kf, &err) == TUSK_OK, "%s", err.message);
    cl_mem b_acc, b_p, b_cl, b_g, b_hit, b_made;
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "acc", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *acc, acc, &b_acc,
                                        &err),
                     TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "p", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof p, &p, &b_p, &err),
                     TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "g", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof g, &g, &b_g, &err),
                     TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "cl", CL_MEM_READ_WRITE, N * sizeof *dc, NULL, &b_cl, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "hit", CL_MEM_READ_WRITE, N / 2 * sizeof *dh, NULL, &b_hit, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "made", CL_MEM_READ_WRITE, sizeof made_d, NULL, &b_made, &err), TUSK_OK);
    cl_mem args[] = {b_acc, b_p, b_cl, b_g, b_hit, b_made};
    for (cl_uint a = 0; a < 6; a++)
        ck_assert_int_eq(clSetKernelArg(kf, a, sizeof(cl_mem), &args[a]), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(kf, 6, sizeof strips, &strips), CL_SUCCESS);
    size_t global = N, local = N; /* one group: the barrier orders the clusters before the hits */
    size_t maxwg = tusk_cl_device(cl)->max_work_group_size;
    if (maxwg < N) {
        /* a device with small groups: the hits from the host's clusters are checked below anyway */
        local = 2;
    }
    ck_assert_msg(tusk_cl_run(cl, kf, 1, &global, &local, NULL, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), b_cl, CL_TRUE, 0, N * sizeof *dc, dc, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), b_hit, CL_TRUE, 0, N / 2 * sizeof *dh, dh, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), b_made, CL_TRUE, 0, sizeof made_d, made_d, 0, NULL, NULL),
                     CL_SUCCESS);
    int hits = 0;
    for (int i = 0; i < N; i++)
        ck_assert_msg(memcmp(&hc[i], &dc[i], sizeof hc[i]) == 0,
                      "cluster %d (n %u, q %u): host time %.9g x %.9g xvar %.9g, kernel %.9g %.9g %.9g", i, acc[i].n,
                      acc[i].q, (double)hc[i].time, (double)hc[i].x, (double)hc[i].xvar, (double)dc[i].time,
                      (double)dc[i].x, (double)dc[i].xvar);
    for (int i = 0; i < N / 2; i++) {
        ck_assert_int_eq(made_h[i], made_d[i]);
        if (made_h[i]) {
            hits++;
            ck_assert_msg(memcmp(&hh[i], &dh[i], sizeof hh[i]) == 0, "hit %d: host (%.9g, %.9g), kernel (%.9g, %.9g)",
                          i, (double)hh[i].x, (double)hh[i].y, (double)dh[i].x, (double)dh[i].y);
        }
    }
    printf("shared formulas: %d clusters and %d of %d hits the same bits on both sides\n", N, hits, N / 2);
    cl_mem all[] = {b_acc, b_p, b_cl, b_g, b_hit, b_made, out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tusk_cl_buffer_release(cl, &all[i]);
    free(acc);
    free(hc);
    free(dc);
    free(hh);
    free(dh);
    clReleaseKernel(k);
    clReleaseKernel(kf);
    clReleaseProgram(prog);
    tusk_cl_destroy(&cl);
}
END_TEST

/* ---- agreement with the fast backend ---------------------------------------------------------- */

static sts_cl_t *device(const sts_config_t *cfg, unsigned group)
{
    sts_cl_config_t clc;
    sts_cl_config_default(&clc);
    clc.device = tu_cl_test_device();
    clc.no_cache = true;
    clc.group_size = group;
    clc.threads = 2;
    sts_cl_t *cl = NULL;
    tusk_error_t err;
    ck_assert_msg(sts_cl_new(&cl, cfg, &clc, &err) == TUSK_OK, "%s", err.message);
    return cl;
}

static void same(sts_fast_t *fast, sts_cl_t *cl, const sts_batch_t *b, const char *what)
{
    sts_result_t *rf = sts_result_new(), *rc = sts_result_new();
    tusk_error_t err;
    ck_assert_msg(sts_fast_run(fast, b, rf, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(sts_cl_run(cl, b, rc, &err) == TUSK_OK, "%s: %s", what, err.message);
    char why[512];
    ck_assert_msg(sts_result_equal(rf, rc, why, sizeof why), "%s on %s: %s", what, sts_cl_describe(cl), why);
    uint64_t nc, nh;
    sts_result_totals(rc, &nc, &nh);
    printf("%s: %zu modules, %llu digis, %llu clusters, %llu hits: the same bits\n", what, sts_batch_count(b),
           (unsigned long long)sts_batch_digis(b), (unsigned long long)nc, (unsigned long long)nh);
    sts_result_destroy(&rf);
    sts_result_destroy(&rc);
}

static adf_sts_digis_t header(uint16_t module, uint16_t strips, uint32_t length, uint32_t n)
{
    adf_sts_digis_t h;
    memset(&h, 0, sizeof h);
    h.n_digis = n;
    h.module = module;
    h.modules = 1;
    h.strips = strips;
    h.length_ns = length;
    h.pitch_mm = (float)(0.02 + 0.1 * tu_uniform());
    h.stereo_deg = (float)(1 + 60 * tu_uniform());
    h.length_mm = (float)(5 + 100 * tu_uniform());
    h.origin[0] = (float)(-500 + 1000 * tu_uniform());
    h.origin[1] = (float)(-500 + 1000 * tu_uniform());
    h.origin[2] = 500;
    return h;
}

/* A random module of n digis: every kind of crowding the kernels must
 * sort and link (twins, one crowded channel with a tenth of the digis,
 * chains of neighbours close in time, digis anywhere). */
static void random_module(sts_batch_t *b, uint16_t idx, uint16_t strips, uint32_t length, uint32_t n)
{
    tusk_error_t err;
    uint64_t *k = malloc(((size_t)n + 1) * 8);
    uint32_t hot = tu_below(2u * strips);
    for (uint32_t j = 0; j < n; j++) {
        uint32_t r = tu_below(10);
        if (j > 0 && r == 0)
            k[j] = k[tu_below(j)]; /* a twin */
        else if (r == 1)
            k[j] = adf_sts_key(hot, tu_below(length), tu_below(400)); /* a crowded channel */
        else if (j > 0 && r < 6) {
            uint32_t c = adf_sts_key_channel(k[j - 1]) + 1, t = adf_sts_key_time(k[j - 1]) + tu_below(30);
            k[j] = adf_sts_key(c < 2u * strips ? c : 0, t < length ? t : 0, tu_below(400));
        } else
            k[j] = adf_sts_key(tu_below(2u * strips), tu_below(length), tu_below(65536));
    }
    sts_module_t m;
    memset(&m, 0, sizeof m);
    m.hdr = header(idx, strips, length, n);
    m.digi = k;
    ck_assert_msg(sts_batch_add(b, &m, &err) == TUSK_OK, "%s", err.message);
    free(k);
}

static void random_modules(sts_batch_t *b, unsigned count, uint16_t max_strips)
{
    for (unsigned i = 0; i < count; i++) {
        uint16_t strips = (uint16_t)(1 + tu_below(max_strips));
        uint32_t length = 1 + tu_below(tu_below(2) ? 500 : 1u << 24);
        random_module(b, (uint16_t)i, strips, length, tu_below(5) == 0 ? 0 : tu_below(4000));
    }
}

START_TEST(opencl_equals_fast_on_simulated_timeslices)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    tusk_error_t err;
    sts_fast_t *fast;
    ck_assert_int_eq(sts_fast_new(&fast, &cfg, 2, &err), TUSK_OK);
    static const unsigned groups[] = {256, 64};
    for (int g = 0; g < 2; g++) {
        sts_cl_t *cl = device(&cfg, groups[g]);
        sts_sim_config_t sc;
        sts_sim_config_default(&sc);
        sc.collisions = 1 + tu_below(12);
        sc.seed = tu_rand();
        sts_sim_t *sim;
        ck_assert_int_eq(sts_sim_new(&sim, &sc, &err), TUSK_OK);
        for (int t = 0; t < 2; t++) {
            const sts_sim_ts_t *ts;
            ck_assert_int_eq(sts_sim_make(sim, tu_below(1000), &ts, &err), TUSK_OK);
            sts_batch_t *b = sts_batch_new();
            for (size_t m = 0; m < sts_sim_modules(sim); m++) {
                sts_module_t mod;
                sts_sim_module(sim, m, &mod);
                ck_assert_int_eq(sts_batch_add(b, &mod, &err), TUSK_OK);
            }
            char what[96];
            snprintf(what, sizeof what, "timeslice of %u collisions, %u work-items", (unsigned)sc.collisions,
                     groups[g]);
            same(fast, cl, b, what);
            sts_batch_destroy(&b);
        }
        sts_sim_destroy(&sim);
        sts_cl_destroy(&cl);
    }
    sts_fast_destroy(&fast);
}
END_TEST

START_TEST(opencl_equals_fast_on_random_modules)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    cfg.delta_sigmas = 1 + 3 * tu_uniform();
    cfg.hit_time_cut = 1 + 5 * tu_uniform();
    tusk_error_t err;
    sts_fast_t *fast;
    ck_assert_int_eq(sts_fast_new(&fast, &cfg, 3, &err), TUSK_OK);
    sts_cl_t *cl = device(&cfg, 1u << tu_below(9)); /* 1 to 256 work-items */
    for (int round = 0; round < 2; round++) {
        sts_batch_t *b = sts_batch_new();
        /* the second round has modules of more than 1024 strips: the kernels are rebuilt */
        random_modules(b, 40, round ? 4096 : 1024);
        same(fast, cl, b, round ? "random modules up to 4096 strips" : "random modules up to 1024 strips");
        sts_batch_destroy(&b);
    }
    /* an empty batch, and a batch of empty modules */
    sts_batch_t *b = sts_batch_new();
    sts_result_t *res = sts_result_new();
    ck_assert_int_eq(sts_cl_run(cl, b, res, &err), TUSK_OK);
    ck_assert_uint_eq(sts_result_modules(res), 0);
    sts_module_t m;
    memset(&m, 0, sizeof m);
    m.hdr = header(0, 64, 10, 0);
    ck_assert_int_eq(sts_batch_add(b, &m, &err), TUSK_OK);
    same(fast, cl, b, "an empty module");
    sts_result_destroy(&res);
    sts_batch_destroy(&b);
    sts_cl_destroy(&cl);
    sts_fast_destroy(&fast);
}
END_TEST

/* Modules spread over several tiles of every kind (sts_shared.h's
 * STS_TILE_*: digis, channels, clusters, front clusters), sizes at and
 * around the tiles' edges, a crowded channel and a crowded time bucket
 * larger than STS_RANK_MAX (sorted by one work-item), for a random
 * work-group size that need not be a power of two. */
START_TEST(opencl_equals_fast_across_tiles)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    tusk_error_t err;
    sts_fast_t *fast;
    ck_assert_int_eq(sts_fast_new(&fast, &cfg, 2, &err), TUSK_OK);
    unsigned group = 1 + tu_below(300);
    sts_cl_t *cl = device(&cfg, group);
    sts_batch_t *b = sts_batch_new();
    const uint32_t T = STS_TILE_DIGIS;
    const uint32_t sizes[] = {T - 1, T, T + 1, 2 * T, 2 * T + 1 + tu_below(T), 3 * T + tu_below(3 * T)};
    uint16_t idx = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        /* long timeslices (hits sparse in time) and short ones (crowded) */
        uint32_t length = tu_below(2) ? (1u << 16) + tu_below(1u << 22) : 2000 + tu_below(20000);
        random_module(b, idx++, (uint16_t)(64 + tu_below(4096 - 64)), length, sizes[i]);
        if (tu_below(2))
            random_module(b, idx++, (uint16_t)(1 + tu_below(1024)), 1 + tu_below(1000), 0);
    }
    /* a crowded channel of more than STS_RANK_MAX digis (a tenth of the module's) */
    random_module(b, idx++, 1024, 1u << 20, 12 * STS_RANK_MAX);
    /* every digi at time 0, so every cluster of a side in one time bucket: more than STS_RANK_MAX */
    random_module(b, idx++, 1024, 1, 8 * STS_RANK_MAX);
    char what[96];
    snprintf(what, sizeof what, "modules over several tiles, %u work-items", group);
    same(fast, cl, b, what);
    /* the batch did what it is for: several tiles of each kind, and the two large buckets */
    sts_result_t *r = sts_result_new();
    ck_assert_int_eq(sts_fast_run(fast, b, r, &err), TUSK_OK);
    uint32_t most_digis = 0, most_clusters = 0, most_fronts = 0, crowded = 0, f, k;
    uint32_t *per = calloc(2 * 4096, sizeof *per);
    for (size_t i = 0; i < sts_batch_count(b); i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        sts_result_counts(r, i, &f, &k, NULL);
        most_digis = m.hdr.n_digis > most_digis ? m.hdr.n_digis : most_digis;
        most_clusters = f + k > most_clusters ? f + k : most_clusters;
        most_fronts = f > most_fronts ? f : most_fronts;
        memset(per, 0, 2 * 4096 * sizeof *per);
        for (uint32_t j = 0; j < m.hdr.n_digis; j++)
            if (++per[adf_sts_key_channel(m.digi[j])] > crowded)
                crowded = per[adf_sts_key_channel(m.digi[j])];
    }
    sts_result_counts(r, sts_batch_count(b) - 1, &f, &k, NULL); /* the module at time 0 */
    ck_assert_uint_gt(most_digis, 3 * STS_TILE_DIGIS);
    ck_assert_uint_gt(most_clusters, STS_TILE_CLUSTERS);
    ck_assert_uint_gt(most_fronts, 2 * STS_TILE_FRONTS);
    ck_assert_uint_gt(crowded, STS_RANK_MAX);
    ck_assert_uint_gt(f > k ? f : k, STS_RANK_MAX);
    printf("  largest: %u digis, %u clusters, %u front clusters; a channel of %u digis; a time bucket of %u clusters\n",
           most_digis, most_clusters, most_fronts, crowded, f > k ? f : k);
    free(per);
    sts_result_destroy(&r);
    sts_batch_destroy(&b);
    sts_cl_destroy(&cl);
    sts_fast_destroy(&fast);
}
END_TEST

START_TEST(options_refused_and_bandwidth)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    sts_cl_config_t clc;
    sts_cl_config_default(&clc);
    clc.device = tu_cl_test_device();
    clc.no_cache = true;
    clc.options = "-cl-mad-enable";
    sts_cl_t *cl = NULL;
    tusk_error_t err;
    ck_assert_int_eq(sts_cl_new(&cl, &cfg, &clc, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "-cl-mad-enable");
    clc.options = NULL;
    clc.group_size = 0;
    ck_assert_int_eq(sts_cl_new(&cl, &cfg, &clc, &err), TUSK_EINVAL);
    cl = device(&cfg, 64);
    double gb = 0;
    ck_assert_msg(sts_cl_bandwidth(cl, 16u << 20, 2, &gb, &err) == TUSK_OK, "%s", err.message);
    ck_assert(gb > 0);
    printf("bandwidth probe on %s: %.1f GB/s\n", sts_cl_describe(cl), gb);
    sts_cl_times_t t;
    sts_batch_t *b = sts_batch_new();
    random_modules(b, 5, 1024);
    sts_result_t *res = sts_result_new();
    ck_assert_int_eq(sts_cl_run(cl, b, res, &err), TUSK_OK);
    sts_cl_times(cl, &t);
    ck_assert(t.total > 0 && t.bytes_up >= sts_batch_digis(b) * 8);
    sts_result_destroy(&res);
    sts_batch_destroy(&b);
    sts_cl_destroy(&cl);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {shared_records_and_formulas_agree, opencl_equals_fast_on_simulated_timeslices,
                                  opencl_equals_fast_on_random_modules, opencl_equals_fast_across_tiles,
                                  options_refused_and_bandwidth};
    return tu_cl_main("check_sts_cl", "sts_cl", tests, sizeof tests / sizeof tests[0]);
}
