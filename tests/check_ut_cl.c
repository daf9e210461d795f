/* check_ut_cl.c - the OpenCL UT decoding and Compass tracking against
 * the reference, on the device TUSK_CL_TEST_DEVICE names (default: any,
 * PoCL's CPU device in CI). Skipped (exit 77) only on a host without any
 * OpenCL device.
 *
 *  - the records host and kernels share (ut_shared.h) have the same size
 *    and field offsets on both sides, measured by a kernel, with the
 *    shared constants; the shared formulas (a hit's x, the p-kick fit, the
 *    windows of a track) give the same bits on both sides for random
 *    inputs;
 *  - on fresh simulated events and on random crowded ones (empty events,
 *    events of thousands of hits whose sort keys do not fit local memory,
 *    backward tracks): the same decoded hits and the same tracks as the
 *    reference, bit for bit and in the same order, for every work-group
 *    size and for 1, 3 and 5 sectors with random candidates; the stages
 *    alone as both at once;
 *  - fast-math options are refused, the bandwidth probe runs, the times
 *    are filled. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "cllayout.h"
#include "testutil.h"
#include "tusk/cl.h"
#include "tusk/ut.h"
#include "ut_private.h"

/* ---- the shared definitions, seen by a kernel --------------------------------------------------- */

#define FIELDS(X)                                                                                                      \
    X(ut_dev_sector_t, group) X(ut_dev_sector_t, parts) X(ut_dev_sector_t, strips) X(ut_dev_sector_t, ykey)            \
    X(ut_dev_sector_t, plane) X(ut_dev_sector_t, u_lo) X(ut_dev_sector_t, qpitch) X(ut_dev_sector_t, y_begin)          \
    X(ut_dev_sector_t, y_end) X(ut_dev_sector_t, z) X(ut_dev_sector_t, weight) X(ut_dev_plane_t, first_group)          \
    X(ut_dev_plane_t, n_groups) X(ut_dev_plane_t, z) X(ut_dev_plane_t, dxdy) X(ut_dev_plane_t, win)                    \
    X(ut_dev_plane_t, u_min) X(ut_dev_plane_t, u_max) X(ut_dev_plane_t, y_max) X(ut_params_t, sectors)                 \
    X(ut_params_t, candidates) X(ut_params_t, n_groups) X(ut_params_t, z_kick) X(ut_params_t, z_mid)                   \
    X(ut_params_t, inv_kick) X(ut_params_t, max_dtx) X(ut_params_t, kink_tol) X(ut_params_t, hit_tol)                  \
    X(ut_params_t, y_tol) X(ut_params_t, w_kink) X(ut_params_t, max_chi2) X(ut_params_t, pt_min2)                      \
    X(ut_params_t, inv_dz_fwd) X(ut_params_t, inv_dz_bwd) X(ut_dev_velo_t, x) X(ut_dev_velo_t, y) X(ut_dev_velo_t, z)  \
    X(ut_dev_velo_t, tx) X(ut_dev_velo_t, ty) X(ut_dev_velo_t, flags) X(ut_dev_track_t, velo) X(ut_dev_track_t, id)    \
    X(ut_dev_track_t, qop) X(ut_dev_track_t, chi2) X(ut_dev_track_t, n_hits) X(ut_dev_event_t, first_bank)             \
    X(ut_dev_event_t, n_banks) X(ut_dev_event_t, first_word) X(ut_dev_event_t, n_hits) X(ut_dev_event_t, first_hit)    \
    X(ut_dev_event_t, first_track) X(ut_dev_event_t, n_tracks) X(ut_extrap_t, x) X(ut_extrap_t, u) X(ut_extrap_t, win)
#define RECORDS(X)                                                                                                     \
    X(ut_dev_sector_t) X(ut_dev_plane_t) X(ut_params_t) X(ut_dev_velo_t) X(ut_dev_track_t) X(ut_dev_event_t)           \
    X(ut_extrap_t)
#define CONSTANTS(X)                                                                                                   \
    X(UT_PLANES) X(UT_SLOTS) X(UT_MAX_GROUPS) X(UT_MAX_SECTORS) X(UT_MAX_STRIPS) X(UT_MAX_EVENT_HITS) X(UT_WIN_NONE)    \
    X(UT_NONE) X(UT_LHCBID_TYPE) X(UT_VELO_BACKWARD) X(ut_lhcbid(983, 1023)) X(ut_lhcbid_sector(ut_lhcbid(5, 7)))      \
    X(ut_word_strip(0xFFFF)) X(ut_popcount4(13))

static const char layout_kernel[] =
    "\n#line 1 \"check_ut_cl.c (layout kernel)\"\n"
    "__kernel void ut_layout(__global uint *out)\n"
    "{\n"
    "    uint k = 0;\n" RECORDS(TU_DEV_SIZE) FIELDS(TU_DEV_FIELD) CONSTANTS(TU_DEV_CONST) "}\n"
    /* the formulas on random inputs: a hit's x, the fit, a track's windows and its tracklet */
    "__kernel void ut_formulas(__global const ut_dev_sector_t *sec, __global const uint *words, __global float *x,\n"
    "                          __global const float *fit_in, __global float *fit_out, __global const ut_params_t *p,\n"
    "                          uint n_fit)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "    x[i] = ut_hit_x0(sec[i], words[i]);\n"
    "    if (i < n_fit) {\n"
    "        float xs[4], ws[4], zs[4], slope;\n"
    "        for (uint k = 0; k < 4; k++) {\n"
    "            xs[k] = fit_in[i * 13 + k];\n"
    "            ws[k] = fit_in[i * 13 + 4 + k];\n"
    "            zs[k] = fit_in[i * 13 + 8 + k];\n"
    "        }\n"
    "        fit_out[2 * i] = ut_fit(xs, ws, zs, 3 + (i & 1), fit_in[i * 13 + 12], *p, &slope);\n"
    "        fit_out[2 * i + 1] = slope;\n"
    "    }\n"
    "}\n";

static size_t host_layout(uint32_t *out)
{
    size_t k = 0;
    RECORDS(TU_HOST_SIZE) FIELDS(TU_HOST_FIELD) CONSTANTS(TU_HOST_CONST) return k;
}

START_TEST(shared_records_and_formulas_agree)
{
    tusk_cl_t *cl = NULL;
    tusk_error_t err;
    tusk_cl_config_t cfg = {tu_cl_test_device(), 0, NULL, NULL, true};
    ck_assert_msg(tusk_cl_new(&cl, &cfg, &err) == TUSK_OK, "%s", err.message);
    char opt[256];
    tu_cl_options(cl, "UT_DIV_VIA_DOUBLE", "-DUT_WG=64 -DUT_S=5", opt, sizeof opt); /* as ut_cl.c builds */
    uint32_t host[TU_LAYOUT_MAX];
    size_t n = host_layout(host);
    tu_cl_layout_check(cl, tusk_ut_kernel_source, (size_t)tusk_ut_kernel_source_size, layout_kernel, "ut_layout", opt,
                       host, n, "ut.cl + layout");
    /* the formulas */
    cl_program prog;
    cl_kernel k;
    tu_cl_build_with(cl, tusk_ut_kernel_source, (size_t)tusk_ut_kernel_source_size, layout_kernel, "ut.cl + tests", opt,
                     "ut_formulas", &prog, &k);
    enum { N = 4096, NF = 1024 };
    ut_config_t c;
    ut_config_default(&c);
    ut_geometry_t *g = NULL;
    ck_assert_int_eq(ut_geometry_new(&g, &c.geo, &err), TUSK_OK);
    ut_dev_sector_t *sec = malloc(N * sizeof *sec), all[UT_MAX_SECTORS];
    ut_sectors_of(&c, g, all);
    uint32_t *words = malloc(N * 4);
    float *x = malloc(N * 4), *fin = malloc(NF * 13 * 4), *fout = malloc(NF * 2 * 4);
    for (unsigned i = 0; i < N; i++) {
        sec[i] = all[tu_below(g->n_sectors)];
        words[i] = adf_ut_word(tu_below(sec[i].strips), tu_below(4), 1 + tu_below(8), tu_below(2));
    }
    ut_params_t p;
    ut_dev_plane_t planes[4];
    ut_params_of(&c, g, &p, planes);
    for (unsigned i = 0; i < NF; i++) {
        for (unsigned q = 0; q < 4; q++) {
            fin[i * 13 + q] = (float)(-700 + 1400 * tu_uniform());
            fin[i * 13 + 4 + q] = (float)(100 + 900 * tu_uniform());
            fin[i * 13 + 8 + q] = planes[q].z;
        }
        fin[i * 13 + 12] = (float)(-300 + 600 * tu_uniform());
    }
    cl_context ctx = tusk_cl_context(cl);
    cl_command_queue q = tusk_cl_queue(cl);
    cl_int rc;
    cl_mem bs = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *sec, sec, &rc);
    cl_mem bw = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, words, &rc);
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * 4, NULL, &rc);
    cl_mem bfi = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, NF * 13 * 4, fin, &rc);
    cl_mem bfo = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, NF * 2 * 4, NULL, &rc);
    cl_mem bp = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof p, &p, &rc);
    ck_assert_int_eq(rc, CL_SUCCESS);
    cl_uint nf = NF;
    cl_mem args[6] = {bs, bw, bx, bfi, bfo, bp};
    for (cl_uint a = 0; a < 6; a++)
        ck_assert_int_eq(clSetKernelArg(k, a, sizeof(cl_mem), &args[a]), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 6, sizeof nf, &nf), CL_SUCCESS);
    size_t global = N;
    ck_assert_int_eq(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    float *dx = malloc(N * 4), *dfo = malloc(NF * 2 * 4);
    ck_assert_int_eq(clEnqueueReadBuffer(q, bx, CL_TRUE, 0, N * 4, dx, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(q, bfo, CL_TRUE, 0, NF * 2 * 4, dfo, 0, NULL, NULL), CL_SUCCESS);
    for (unsigned i = 0; i < N; i++) {
        float h = ut_hit_x0(sec[i], words[i]);
        ck_assert_msg(memcmp(&h, &dx[i], 4) == 0, "hit %u: x0 %.9g on the host, %.9g on the device", i, (double)h,
                      (double)dx[i]);
    }
    for (unsigned i = 0; i < NF; i++) {
        float slope, chi2 = ut_fit(fin + i * 13, fin + i * 13 + 4, fin + i * 13 + 8, 3 + (i & 1), fin[i * 13 + 12], p,
                                   &slope);
        ck_assert_msg(memcmp(&chi2, &dfo[2 * i], 4) == 0 && memcmp(&slope, &dfo[2 * i + 1], 4) == 0,
                      "fit %u: chi2 %.9g, slope %.9g on the host; %.9g, %.9g on the device", i, (double)chi2,
                      (double)slope, (double)dfo[2 * i], (double)dfo[2 * i + 1]);
    }
    clReleaseMemObject(bs);
    clReleaseMemObject(bw);
    clReleaseMemObject(bx);
    clReleaseMemObject(bfi);
    clReleaseMemObject(bfo);
    clReleaseMemObject(bp);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    free(sec);
    free(words);
    free(x);
    free(fin);
    free(fout);
    free(dx);
    free(dfo);
    ut_geometry_destroy(&g);
    tusk_cl_destroy(&cl);
}
END_TEST

/* ---- agreement ------------------------------------------------------------------------------------- */

static ut_cl_t *device(const ut_config_t *c, unsigned group_size)
{
    ut_cl_config_t clc;
    ut_cl_config_default(&clc);
    clc.device = tu_cl_test_device();
    clc.no_cache = true;
    clc.group_size = group_size;
    clc.threads = 1 + tu_below(3);
    ut_cl_t *cl = NULL;
    tusk_error_t err;
    ck_assert_msg(ut_cl_new(&cl, c, &clc, &err) == TUSK_OK, "%s", err.message);
    return cl;
}

/* Random events: simulated ones of the given seed and crowded random
 * ones (a few hundred hits near a spot, or thousands over the detector). */
static void random_batch(ut_batch_t *b, ut_sim_t *sim, unsigned n_sim, unsigned n_random, uint64_t first)
{
    const ut_geometry_t *g = ut_sim_geometry(sim);
    tusk_error_t err;
    for (unsigned i = 0; i < n_sim; i++) {
        const ut_sim_event_t *e;
        ck_assert_int_eq(ut_sim_make(sim, first + i, &e, &err), TUSK_OK);
        ck_assert_msg(ut_batch_add(b, g, &e->ev, &err) == TUSK_OK, "%s", err.message);
    }
    for (unsigned i = 0; i < n_random; i++) {
        /* hits: the strips of random sectors, one cluster a strip */
        unsigned big = tu_below(5) == 0, nh = big ? 2500 + tu_below(3000) : tu_below(400);
        uint32_t *hs = malloc((nh + 1) * sizeof *hs);
        unsigned focus = tu_below(g->n_sectors);
        for (unsigned k = 0; k < nh; k++) {
            unsigned s = big ? tu_below(g->n_sectors) : (focus + tu_below(8)) % g->n_sectors;
            hs[k] = s << 16 | (tu_below(g->sector[s].strips) << 2) | tu_below(4);
        }
        /* sorted by sector and strip, twins dropped */
        for (unsigned a = 1; a < nh; a++)
            for (unsigned z = a; z > 0 && (hs[z - 1] >> 2) > (hs[z] >> 2); z--) {
                uint32_t t = hs[z];
                hs[z] = hs[z - 1];
                hs[z - 1] = t;
            }
        adf_ut_bank_t *banks = malloc((nh + 1) * sizeof *banks);
        uint16_t *words = malloc((nh + 1) * sizeof *words);
        unsigned nb = 0, nw = 0;
        for (unsigned k = 0; k < nh; k++) {
            if (k > 0 && (hs[k] >> 2) == (hs[k - 1] >> 2))
                continue;
            unsigned s = hs[k] >> 16;
            if (nb == 0 || banks[nb - 1].sector != s) {
                banks[nb].sector = (uint16_t)s;
                banks[nb++].n_hits = 0;
            }
            banks[nb - 1].n_hits++;
            words[nw++] = adf_ut_word((hs[k] >> 2) & 0x3FFF, hs[k] & 3, 1, 0);
        }
        /* VELO tracks towards the hits' region, some backward */
        ut_sector_info_t in;
        ut_geometry_sector(g, focus, &in);
        double cx = in.u_lo_mm + 50, cy = 0.5 * (in.y_begin_mm + in.y_end_mm);
        unsigned nv = tu_below(200);
        adf_velo_track_t *v = malloc((nv + 1) * sizeof *v);
        for (unsigned k = 0; k < nv; k++) {
            v[k].x = (float)(10 * (tu_uniform() - 0.5));
            v[k].y = (float)(10 * (tu_uniform() - 0.5));
            v[k].z = 770.0f;
            v[k].tx = (float)((cx - v[k].x) / 1700.0 + 0.02 * (tu_uniform() - 0.5));
            v[k].ty = (float)((cy - v[k].y) / 1700.0 + 0.02 * (tu_uniform() - 0.5));
            v[k].flags = tu_below(10) == 0 ? ADF_VELO_BACKWARD : 0;
        }
        ut_event_t ev = {2000 + i, 0, ut_geometry_digest(g), nb, nw, nv, banks, words, v};
        ck_assert_msg(ut_batch_add(b, g, &ev, &err) == TUSK_OK, "%s", err.message);
        free(hs);
        free(banks);
        free(words);
        free(v);
    }
}

static void same(ut_ref_t *ref, ut_cl_t *cl, const ut_batch_t *b, const char *what)
{
    ut_result_t *ra = ut_result_new(), *rb = ut_result_new();
    ut_result_keep_hits(ra, true);
    ut_result_keep_hits(rb, true);
    tusk_error_t err;
    ck_assert_msg(ut_ref_run(ref, b, ra, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(ut_cl_run(cl, b, rb, &err) == TUSK_OK, "%s", err.message);
    char why[1024];
    ck_assert_msg(ut_result_equal(ra, rb, why, sizeof why), "%s on %s: %s", what, ut_cl_describe(cl), why);
    /* the stages one after the other */
    ut_result_keep_hits(rb, false);
    ck_assert_msg(ut_cl_run_stages(cl, b, UT_DECODE, rb, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(ut_result_total(rb), 0);
    ck_assert_msg(ut_cl_run_stages(cl, b, UT_COMPASS, rb, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(ut_result_equal(ra, rb, why, sizeof why), "%s, stages apart: %s", what, why);
    ut_result_destroy(&ra);
    ut_result_destroy(&rb);
}

START_TEST(opencl_equals_reference_on_random_events)
{
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = tu_rand();
    ut_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_sim_new(&sim, &sc, &err), TUSK_OK);
    static const unsigned sectors[3] = {1, 3, 5};
    for (int round = 0; round < 3; round++) {
        ut_config_t c;
        ut_config_default(&c);
        c.sectors = sectors[round];
        c.candidates = 1 + tu_below(16);
        unsigned wg = 32u << tu_below(4); /* 32 to 256 */
        ut_ref_t *ref = NULL;
        ck_assert_int_eq(ut_ref_new(&ref, &c, &err), TUSK_OK);
        ut_cl_t *cl = device(&c, wg);
        ut_batch_t *b = ut_batch_new();
        random_batch(b, sim, 8, 12, tu_below(10000));
        char what[96];
        snprintf(what, sizeof what, "%u sectors, %u candidates, %u work-items", c.sectors, c.candidates, wg);
        same(ref, cl, b, what);
        /* an empty batch, and events without hits or tracks */
        ut_batch_clear(b);
        ut_result_t *res = ut_result_new();
        ck_assert_int_eq(ut_cl_run(cl, b, res, &err), TUSK_OK);
        ck_assert_uint_eq(ut_result_events(res), 0);
        ut_result_destroy(&res);
        ut_event_t empty = {1, 1, ut_geometry_digest(ut_sim_geometry(sim)), 0, 0, 0, NULL, NULL, NULL};
        ck_assert_int_eq(ut_batch_add(b, ut_sim_geometry(sim), &empty, &err), TUSK_OK);
        random_batch(b, sim, 1, 0, 7);
        ck_assert_int_eq(ut_batch_add(b, ut_sim_geometry(sim), &empty, &err), TUSK_OK);
        same(ref, cl, b, "empty events");
        ut_batch_destroy(&b);
        ut_cl_destroy(&cl);
        ut_ref_destroy(&ref);
    }
    ut_sim_destroy(&sim);
}
END_TEST

START_TEST(options_refused_bandwidth_and_times)
{
    ut_config_t c;
    ut_config_default(&c);
    ut_cl_config_t clc;
    ut_cl_config_default(&clc);
    clc.device = tu_cl_test_device();
    clc.no_cache = true;
    clc.options = "-cl-fast-relaxed-math";
    ut_cl_t *cl = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_cl_new(&cl, &c, &clc, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "-cl-fast-relaxed-math");
    clc.options = NULL;
    clc.group_size = 48;
    ck_assert_int_eq(ut_cl_new(&cl, &c, &clc, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "power of two");
    cl = device(&c, 128);
    double gb = 0;
    ck_assert_msg(ut_cl_bandwidth(cl, 16u << 20, 2, &gb, &err) == TUSK_OK, "%s", err.message);
    ck_assert(gb > 0);
    printf("bandwidth probe on %s: %.1f GB/s\n", ut_cl_describe(cl), gb);
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = tu_rand();
    ut_sim_t *sim = NULL;
    ck_assert_int_eq(ut_sim_new(&sim, &sc, &err), TUSK_OK);
    ut_batch_t *b = ut_batch_new();
    random_batch(b, sim, 5, 0, 0);
    ut_result_t *res = ut_result_new();
    ck_assert_int_eq(ut_cl_run(cl, b, res, &err), TUSK_OK);
    ut_cl_times_t t;
    ut_cl_times(cl, &t);
    ck_assert(t.total > 0 && t.bytes_up >= ut_batch_hits(b) * 2 && t.kernel_bytes > 0 && t.active_tracks > 0 &&
              t.active_tracks <= ut_batch_tracks(b));
    ck_assert_int_eq(ut_cl_run_stages(cl, b, 0, res, &err), TUSK_EINVAL);
    ut_batch_t *other = ut_batch_new();
    random_batch(other, sim, 1, 0, 9);
    ck_assert_int_eq(ut_cl_run_stages(cl, other, UT_COMPASS, res, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "Compass alone needs the decoding");
    ut_batch_destroy(&other);
    ut_result_destroy(&res);
    ut_batch_destroy(&b);
    ut_sim_destroy(&sim);
    ut_cl_destroy(&cl);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {shared_records_and_formulas_agree, opencl_equals_reference_on_random_events,
                                  options_refused_bandwidth_and_times};
    return tu_cl_main("check_ut_cl", "ut_cl", tests, sizeof tests / sizeof tests[0]);
}
