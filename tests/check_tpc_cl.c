/* check_tpc_cl.c - the OpenCL TPC slice tracker against the reference, on
 * the device TUSK_CL_TEST_DEVICE names (default: any, PoCL's CPU device in
 * CI). Skipped (exit 77) only on a host without any OpenCL device.
 *
 *  - the records host and kernels share (tpc_shared.h) have the same size
 *    and field offsets on both sides, measured by a kernel, with the
 *    shared constants and exact formulas; the Kalman filter's steps
 *    (propagation, filter) give the same bits on both sides for random
 *    states;
 *  - on fresh simulated events with random settings, several to a batch,
 *    with empty slices and noise: the same tracks as the reference, bit
 *    for bit and in the same order, for several work-group sizes;
 *  - an empty batch; fast-math options and bad group sizes refused; the
 *    step times and the bandwidth probe. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "tpc_private.h"
#include "cllayout.h"
#include "testutil.h"
#include "tusk/cl.h"
#include "tusk/tpc.h"

/* ---- the shared definitions, seen by a kernel ------------------------------------------------- */

#define FIELDS(X)                                                                                                     \
    X(tpc_row_t, first) X(tpc_row_t, n) X(tpc_row_t, first_bin) X(tpc_row_t, ny) X(tpc_row_t, nz) X(tpc_row_t, x)     \
    X(tpc_row_t, ymin) X(tpc_row_t, ystep) X(tpc_row_t, zmin) X(tpc_row_t, zstep) X(tpc_row_t, inv_sy)               \
    X(tpc_row_t, inv_sz) X(tpc_dev_slice_t, first_row) X(tpc_dev_slice_t, first_cluster)                             \
    X(tpc_dev_slice_t, n_clusters) X(tpc_dev_slice_t, first_start) X(tpc_dev_slice_t, n_start)                       \
    X(tpc_dev_slice_t, slice) X(tpc_dev_slice_t, bzk) X(tpc_dev_slice_t, n_tracklets) X(tpc_params_t, sy2)           \
    X(tpc_params_t, sz2) X(tpc_params_t, tan_y) X(tpc_params_t, tan_z) X(tpc_params_t, seed_chi2)                    \
    X(tpc_params_t, cluster_chi2) X(tpc_params_t, max_sin_phi) X(tpc_params_t, max_c00) X(tpc_params_t, init_c22)    \
    X(tpc_params_t, init_c33) X(tpc_params_t, init_c44) X(tpc_params_t, noise) X(tpc_params_t, nf_max)               \
    X(tpc_params_t, min_seed) X(tpc_params_t, min_hits) X(tpc_params_t, max_gap) X(tpc_params_t, sel_gap)            \
    X(tpc_tracklet_t, x) X(tpc_tracklet_t, y) X(tpc_tracklet_t, qpt) X(tpc_tracklet_t, c) X(tpc_tracklet_t, chi2)    \
    X(tpc_tracklet_t, n_hits) X(tpc_tracklet_t, first_row) X(tpc_tracklet_t, last_row) X(tpc_tracklet_t, ndf)        \
    X(tpc_sel_track_t, tracklet) X(tpc_sel_track_t, first_hit) X(tpc_sel_track_t, n_hits)                            \
    X(tpc_sel_track_t, first_row) X(tpc_counters_t, n_start) X(tpc_counters_t, n_tracklets)                          \
    X(tpc_counters_t, n_tracks) X(tpc_counters_t, n_hits) X(tpc_counters_t, status) X(tpc_state_t, x)                \
    X(tpc_state_t, qpt) X(tpc_state_t, c) X(tpc_state_t, chi2) X(tpc_state_t, ndf)
#define RECORDS(X)                                                                                                    \
    X(tpc_row_t) X(tpc_dev_slice_t) X(tpc_params_t) X(tpc_tracklet_t) X(tpc_sel_track_t) X(tpc_counters_t)           \
    X(tpc_state_t) X(tpc_segments_t)
#define CONSTANTS(X)                                                                                                  \
    X(TPC_ROWS) X(TPC_SLICES) X(TPC_NONE) X(TPC_MAX_ROW_CLUSTERS) X(TPC_MAX_TRACKLETS) X(TPC_NF_MAX) X(TPC_SEG_MAX)   \
    X(TPC_FIND_MAX) X(TPC_STATUS_TRACKLETS) X(tpc_f32_bits(TPC_TAN_EDGE)) X(tpc_f32_bits(TPC_CLIGHT))                \
    X(tpc_f32_bits(tpc_row_x(0))) X(tpc_f32_bits(tpc_row_x(62))) X(tpc_f32_bits(tpc_row_x(63)))                      \
    X(tpc_f32_bits(tpc_row_x(126))) X(tpc_f32_bits(tpc_row_x(127))) X(tpc_f32_bits(tpc_row_x(158)))                  \
    X(tpc_weight_key(40, 7)) X(tpc_weight_key(159, 65535)) X(tpc_f32_bits(tpc_asin_ratio(0.2f)))                     \
    X(tpc_f32_bits(tpc_asin_ratio(-0.03125f))) X(tpc_bin_axis(-5.0f, 0.0f, 0.5f, 7))                                 \
    X(tpc_bin_axis(3.9f, 1.0f, 0.5f, 7)) X(tpc_bin_axis(100.0f, 1.0f, 0.5f, 7)) X(tpc_link_up(0x00050003u))          \
    X(tpc_link_dn(0x00050003u))

/* tusk_f32_bits is as_uint in a kernel */
#define tpc_f32_bits(f) tusk_f32_bits(f)

static const char test_kernels[] =
    "\n#line 1 \"check_tpc_cl.c (test kernels)\"\n"
    "#define tpc_f32_bits(f) as_uint(f)\n"
    "__kernel void tpc_layout(__global uint *out)\n"
    "{\n"
    "    uint k = 0;\n" RECORDS(TU_DEV_SIZE) FIELDS(TU_DEV_FIELD) CONSTANTS(TU_DEV_CONST)
    "}\n"
    "__kernel void tpc_formulas(__global const tpc_state_t *in, __global const float *meas, tpc_params_t p,\n"
    "                           float bzk, __global tpc_state_t *out, __global uint *ok)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "    tpc_state_t t = in[i];\n"
    "    uint bits = 0;\n"
    "    for (uint k = 0; k < 8; k++) {\n"
    "        __global const float *m = meas + (i * 8 + k) * 3;\n"
    "        bits |= (uint)tpc_propagate(&t, m[0], bzk, p) << (2 * k);\n"
    "        bits |= (uint)tpc_filter(&t, m[1], m[2], p.sy2, p.sz2, p.cluster_chi2) << (2 * k + 1);\n"
    "    }\n"
    "    out[i] = t;\n"
    "    ok[i] = bits;\n"
    "}\n";

static size_t host_layout(uint32_t *out)
{
    size_t k = 0;
    RECORDS(TU_HOST_SIZE) FIELDS(TU_HOST_FIELD) CONSTANTS(TU_HOST_CONST)
    return k;
}

START_TEST(shared_definitions_agree)
{
    tusk_cl_t *cl = NULL;
    tusk_error_t err;
    tusk_cl_config_t cfg = {tu_cl_test_device(), 0, NULL, NULL, true};
    ck_assert_msg(tusk_cl_new(&cl, &cfg, &err) == TUSK_OK, "%s", err.message);
    char opt[256];
    tu_cl_options(cl, "TPC_DIV_VIA_DOUBLE", "-DTPC_WG=64", opt, sizeof opt); /* as tpc_cl.c builds */
    uint32_t host[TU_LAYOUT_MAX];
    size_t n = host_layout(host);
    tu_cl_layout_check(cl, tusk_tpc_kernel_source, (size_t)tusk_tpc_kernel_source_size, test_kernels, "tpc_layout",
                       opt, host, n, "tpc.cl + layout");
    /* the Kalman filter's steps on random states: the same bits */
    cl_program prog;
    cl_kernel k;
    tu_cl_build_with(cl, tusk_tpc_kernel_source, (size_t)tusk_tpc_kernel_source_size, test_kernels, "tpc.cl + tests",
                     opt, "tpc_formulas", &prog, &k);
    enum { N = 256 };
    tpc_config_t c;
    tpc_config_default(&c);
    c.noise = tu_below(2) ? 0.0 : 1e-6 * tu_uniform();
    tpc_params_t p;
    tpc_params_of(&c, &p);
    float bzk = -TPC_CLIGHT * (float)(0.2 + tu_uniform());
    tpc_state_t *in = calloc(N, sizeof *in), *hout = calloc(N, sizeof *hout), *dout = calloc(N, sizeof *dout);
    float *meas = malloc(N * 8 * 3 * sizeof *meas);
    uint32_t hok[N], dok[N];
    for (int i = 0; i < N; i++) {
        unsigned r = tu_below(TPC_ROWS - 20);
        tpc_seed_state(&in[i], tpc_row_x(r), (float)(200 * tu_uniform() - 100), (float)(2000 * tu_uniform()),
                       tpc_row_x(r + 2), (float)(200 * tu_uniform() - 100), (float)(2000 * tu_uniform()), p);
        in[i].qpt = (float)(4 * tu_uniform() - 2);
        in[i].sp = (float)(1.6 * tu_uniform() - 0.8);
        for (int s = 0; s < 8; s++) {
            float *mm = meas + (i * 8 + s) * 3;
            mm[0] = tpc_row_x(r + 1 + (unsigned)s * (1 + tu_below(2)));
            mm[1] = in[i].y + (float)(10 * tu_uniform() - 5);
            mm[2] = in[i].z + (float)(10 * tu_uniform() - 5);
        }
        tpc_state_t t = in[i];
        uint32_t bits = 0;
        for (int s = 0; s < 8; s++) {
            const float *mm = meas + (i * 8 + s) * 3;
            bits |= (uint32_t)tpc_propagate(&t, mm[0], bzk, p) << (2 * s);
            bits |= (uint32_t)tpc_filter(&t, mm[1], mm[2], p.sy2, p.sz2, p.cluster_chi2) << (2 * s + 1);
        }
        hout[i] = t;
        hok[i] = bits;
    }
    cl_mem b_in, b_meas, b_out, b_ok;
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "in", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *in, in, &b_in,
                                        &err),
                     TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "meas", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 24 * sizeof *meas,
                                        meas, &b_meas, &err),
                     TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "out", CL_MEM_READ_WRITE, N * sizeof *dout, NULL, &b_out, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "ok", CL_MEM_READ_WRITE, sizeof dok, NULL, &b_ok, &err), TUSK_OK);
    ck_assert_int_eq(clSetKernelArg(k, 0, sizeof b_in, &b_in), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 1, sizeof b_meas, &b_meas), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 2, sizeof p, &p), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 3, sizeof bzk, &bzk), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 4, sizeof b_out, &b_out), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 5, sizeof b_ok, &b_ok), CL_SUCCESS);
    size_t global = N;
    ck_assert_msg(tusk_cl_run(cl, k, 1, &global, NULL, NULL, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), b_out, CL_TRUE, 0, N * sizeof *dout, dout, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), b_ok, CL_TRUE, 0, sizeof dok, dok, 0, NULL, NULL),
                     CL_SUCCESS);
    int taken = 0;
    for (int i = 0; i < N; i++) {
        ck_assert_msg(hok[i] == dok[i], "state %d: steps 0x%x on the host, 0x%x on the device", i, hok[i], dok[i]);
        ck_assert_msg(memcmp(&hout[i], &dout[i], sizeof hout[i]) == 0,
                      "state %d: host Y %.9g Z %.9g q/pT %.9g C00 %.9g, device %.9g %.9g %.9g %.9g", i,
                      (double)hout[i].y, (double)hout[i].z, (double)hout[i].qpt, (double)hout[i].c[0],
                      (double)dout[i].y, (double)dout[i].z, (double)dout[i].qpt, (double)dout[i].c[0]);
        for (int s = 0; s < 16; s++)
            taken += (hok[i] >> s) & 1;
    }
    printf("shared formulas: %d states through 8 propagations and filters (%d steps taken): the same bits\n", N,
           taken);
    cl_mem all[] = {b_in, b_meas, b_out, b_ok};
    for (size_t i = 0; i < 4; i++)
        tusk_cl_buffer_release(cl, &all[i]);
    free(in);
    free(hout);
    free(dout);
    free(meas);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    tusk_cl_destroy(&cl);
}
END_TEST

/* ---- agreement with the reference ---------------------------------------------------------------- */

static tpc_cl_t *device(const tpc_config_t *cfg, unsigned group)
{
    tpc_cl_config_t clc;
    tpc_cl_config_default(&clc);
    clc.device = tu_cl_test_device();
    clc.no_cache = true;
    clc.group_size = group;
    clc.threads = 2;
    tpc_cl_t *cl = NULL;
    tusk_error_t err;
    ck_assert_msg(tpc_cl_new(&cl, cfg, &clc, &err) == TUSK_OK, "%s", err.message);
    return cl;
}

static void add_event(tpc_sim_t *sim, uint64_t index, tpc_batch_t *b)
{
    const tpc_sim_event_t *ev;
    tusk_error_t err;
    ck_assert_msg(tpc_sim_make(sim, index, &ev, &err) == TUSK_OK, "%s", err.message);
    for (unsigned s = 0; s < ADF_TPC_SLICES; s++) {
        tpc_slice_t x;
        tpc_sim_slice(sim, s, &x);
        ck_assert_msg(tpc_batch_add(b, &x, &err) == TUSK_OK, "%s", err.message);
    }
}

static void same(tpc_ref_t *ref, tpc_cl_t *cl, const tpc_batch_t *b, const char *what)
{
    tpc_result_t *rr = tpc_result_new(), *rc = tpc_result_new();
    tusk_error_t err;
    ck_assert_msg(tpc_ref_run(ref, b, rr, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tpc_cl_run(cl, b, rc, &err) == TUSK_OK, "%s: %s", what, err.message);
    char why[512];
    ck_assert_msg(tpc_result_equal(rr, rc, why, sizeof why), "%s on %s: %s", what, tpc_cl_describe(cl), why);
    uint64_t nt, nh, nl;
    tpc_result_totals(rc, &nt, &nh, &nl);
    printf("%s: %zu slices, %llu clusters, %llu tracklets, %llu tracks of %llu clusters: the same bits\n", what,
           tpc_batch_count(b), (unsigned long long)tpc_batch_clusters(b), (unsigned long long)nl,
           (unsigned long long)nt, (unsigned long long)nh);
    tpc_result_destroy(&rr);
    tpc_result_destroy(&rc);
}

START_TEST(opencl_equals_reference_on_random_events)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    if (tu_below(2)) {
        cfg.area_tan_y = 0.5 + tu_uniform();
        cfg.cluster_chi2 = 8 + 20 * tu_uniform();
        cfg.nf_candidates = 5 + tu_below(28);
        cfg.min_hits = 6 + tu_below(10);
        cfg.noise = 1e-6 * tu_uniform();
    }
    tusk_error_t err;
    tpc_ref_t *ref;
    ck_assert_int_eq(tpc_ref_new(&ref, &cfg, &err), TUSK_OK);
    static const unsigned groups[] = {128, 32};
    for (int g = 0; g < 2; g++) {
        tpc_cl_t *cl = device(&cfg, g == 0 ? groups[0] : 1u << tu_below(9));
        tpc_sim_config_t sc;
        tpc_sim_config_default(&sc);
        sc.preset = TPC_PRESET_PP;
        sc.tracks = 50 + tu_below(g == 0 ? 1500 : 400);
        sc.noise_per_row = 4 * tu_uniform();
        sc.bz_tesla = tu_below(2) ? 0.5 : -0.2 - tu_uniform();
        sc.seed = tu_rand();
        tpc_sim_t *sim;
        ck_assert_int_eq(tpc_sim_new(&sim, &sc, 2, &err), TUSK_OK);
        tpc_batch_t *b = tpc_batch_new();
        add_event(sim, tu_below(1000), b);
        if (g == 1) {
            /* two events and an empty slice in one launch */
            add_event(sim, 1000 + tu_below(1000), b);
            tpc_slice_t e;
            memset(&e, 0, sizeof e);
            e.hdr.slice = 35;
            e.hdr.slices = 36;
            e.hdr.bz = 0.5f;
            e.hdr.geometry = ADF_TPC_GEOMETRY_ALICE;
            ck_assert_int_eq(tpc_batch_add(b, &e, &err), TUSK_OK);
        }
        char what[128];
        snprintf(what, sizeof what, "%s of %u particles", g ? "two events" : "an event", (unsigned)sc.tracks);
        same(ref, cl, b, what);
        /* the same launch again: nothing left over from the first */
        same(ref, cl, b, "again");
        tpc_batch_destroy(&b);
        tpc_sim_destroy(&sim);
        tpc_cl_destroy(&cl);
    }
    tpc_ref_destroy(&ref);
}
END_TEST

START_TEST(options_refused_times_and_bandwidth)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    tpc_cl_config_t clc;
    tpc_cl_config_default(&clc);
    clc.device = tu_cl_test_device();
    clc.no_cache = true;
    clc.options = "-cl-mad-enable";
    tpc_cl_t *cl = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tpc_cl_new(&cl, &cfg, &clc, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "-cl-mad-enable");
    clc.options = NULL;
    clc.group_size = 48;
    ck_assert_int_eq(tpc_cl_new(&cl, &cfg, &clc, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "power of two");
    cl = device(&cfg, 64);
    /* an empty batch */
    tpc_batch_t *b = tpc_batch_new();
    tpc_result_t *res = tpc_result_new();
    ck_assert_int_eq(tpc_cl_run(cl, b, res, &err), TUSK_OK);
    ck_assert_uint_eq(tpc_result_slices(res), 0);
    /* a small event: the times */
    tpc_sim_config_t sc;
    tpc_sim_config_default(&sc);
    sc.preset = TPC_PRESET_PP;
    sc.seed = tu_rand();
    tpc_sim_t *sim;
    ck_assert_int_eq(tpc_sim_new(&sim, &sc, 2, &err), TUSK_OK);
    add_event(sim, 0, b);
    ck_assert_msg(tpc_cl_run(cl, b, res, &err) == TUSK_OK, "%s", err.message);
    tpc_times_t t;
    tpc_cl_times(cl, &t);
    ck_assert(t.total > 0 && t.construct > 0 && t.bytes_up >= tpc_batch_clusters(b) * 8 && t.kernel_bytes > 0);
    double gb = 0;
    ck_assert_msg(tpc_cl_bandwidth(cl, 16u << 20, 2, &gb, &err) == TUSK_OK, "%s", err.message);
    ck_assert(gb > 0);
    printf("bandwidth probe on %s: %.1f GB/s; an event of %llu clusters in %.1f ms (kernels: I %.2f, IV %.2f ms)\n",
           tpc_cl_describe(cl), gb, (unsigned long long)tpc_batch_clusters(b), t.total, t.neighbours, t.construct);
    tpc_sim_destroy(&sim);
    tpc_result_destroy(&res);
    tpc_batch_destroy(&b);
    tpc_cl_destroy(&cl);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {shared_definitions_agree, opencl_equals_reference_on_random_events,
                                  options_refused_times_and_bandwidth};
    return tu_cl_main("check_tpc_cl", "tpc_cl", tests, sizeof tests / sizeof tests[0]);
}
