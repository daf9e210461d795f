/* check_zfinder_cl.c - the OpenCL z-finder against the reference, on the
 * device TUSK_CL_TEST_DEVICE names (default: any, PoCL's CPU device in
 * CI). Skipped (exit 77) only on a host without any OpenCL device.
 *
 *  - the records host and kernel share (zf_shared.h) have the same size
 *    and field offsets on both sides, measured by a kernel;
 *  - on fresh RoIs of both samples (and random ones, 360 degree ones
 *    included), both modes and both precisions, zHisto's 64-bit sums by
 *    64-bit atomics or by the 32-bit fallback: the same nHisto and
 *    zHisto (its fixed-point sums, zf_shared.h) bin for bin, the same
 *    pairs, entries and peak windows, and z0 bit for bit;
 *  - a bin whose sum passes 2^32 in one work-group's 32-bit word in
 *    local memory, and whose groups' low words pass it in global memory
 *    (the two carries): bit for bit;
 *  - launches of 1 to 9 RoIs, one or two slots: the same results;
 *  - bad input, an over-full slice, too many group_points and fast-math
 *    options are refused with a message. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "cllayout.h"
#include "testutil.h"
#include "tusk/cl.h"
#include "tusk/zfinder.h"
#include "zf_shared.h"

#define PI 3.14159265358979323846

extern const char tusk_zfinder_kernel_source[];
extern const unsigned long tusk_zfinder_kernel_source_size;

static const char *test_device(void)
{
    const char *d = getenv("TUSK_CL_TEST_DEVICE");
    return d && *d ? d : "any";
}

/* ---- the shared records, seen by the kernel ---------------------------------------------- */

#define FIELDS(X)                                                                                                     \
    X(zf_point_t, rho) X(zf_point_t, phi) X(zf_point_t, z) X(zf_point_t, layer) X(zf_roi_desc_t, first_point)         \
    X(zf_roi_desc_t, first_slice) X(zf_roi_desc_t, n_slices) X(zf_roi_desc_t, wrap) X(zf_roi_desc_t, reserved)        \
    X(zf_dev_result_t, n_vertices) X(zf_dev_result_t, bin) X(zf_dev_result_t, count)                                  \
    X(zf_dev_result_t, pairs) X(zf_dev_result_t, entries) X(zf_dev_result_t, status) X(zf_dev_result_t, z0_bits)
#define RECORDS(X) X(zf_point_t) X(zf_roi_desc_t) X(zf_dev_result_t)

static const char layout_kernel[] =
    "\n#line 1 \"check_zfinder_cl.c (layout kernel)\"\n"
    "__kernel void zf_layout(__global uint *out)\n"
    "{\n"
    "    uint k = 0;\n"
#define DEV_SIZE(T) "    { out[k++] = (uint)sizeof(" #T "); }\n"
#define DEV_FIELD(T, f)                                                                                              \
    "    { " #T " v; out[k++] = (uint)((__private char *)&v." #f " - (__private char *)&v); }\n"
    RECORDS(DEV_SIZE) FIELDS(DEV_FIELD)
    "    out[k++] = ZF_MAX_LAYERS; out[k++] = ZF_LAYER_SLOTS; out[k++] = ZF_NEIGHBOURS;\n"
    "    out[k++] = ZF_STATUS_OVERFLOW; out[k++] = as_uint(ZF_TWO_PI_F);\n"
    "    out[k++] = (uint)zf_slice_of(1.0f, 1.5f, 286.47888f, 430, 0);\n"
    "    out[k++] = (uint)zf_window_better(5, 2, 5, 10);\n"
    "    out[k++] = ZF_ZQ_BITS; out[k++] = ZF_ZQ(0.75f); out[k++] = ZF_ZQ(0.99999994f);\n"
    "    out[k++] = as_uint(ZF_ZQ_QUANTUM * ZF_ZQ_SCALE);\n"
    "    ulong w = zf_window_sum(0xFFFFFFFFu, 3, 0xFFFFFFFFFFFFFFul, 5, 7);\n"
    "    out[k++] = (uint)w; out[k++] = (uint)(w >> 32);\n"
    "}\n";

static size_t host_layout(uint32_t *out)
{
    size_t k = 0;
#define HOST_SIZE(T) out[k++] = (uint32_t)sizeof(T);
#define HOST_FIELD(T, f) out[k++] = (uint32_t)offsetof(T, f);
    RECORDS(HOST_SIZE) FIELDS(HOST_FIELD)
    out[k++] = ZF_MAX_LAYERS;
    out[k++] = ZF_LAYER_SLOTS;
    out[k++] = ZF_NEIGHBOURS;
    out[k++] = ZF_STATUS_OVERFLOW;
    float two_pi = ZF_TWO_PI_F;
    memcpy(&out[k++], &two_pi, 4);
    out[k++] = (uint32_t)zf_slice_of(1.0f, 1.5f, 286.47888f, 430, 0);
    out[k++] = (uint32_t)zf_window_better(5, 2, 5, 10);
    out[k++] = ZF_ZQ_BITS;
    out[k++] = ZF_ZQ(0.75f);
    out[k++] = ZF_ZQ(0.99999994f);
    float one = ZF_ZQ_QUANTUM * ZF_ZQ_SCALE;
    memcpy(&out[k++], &one, 4);
    uint64_t w = zf_window_sum(0xFFFFFFFFu, 3, 0xFFFFFFFFFFFFFFull, 5, 7);
    out[k++] = (uint32_t)w;
    out[k++] = (uint32_t)(w >> 32);
    return k;
}

START_TEST(shared_records_agree)
{
    tusk_cl_t *cl = NULL;
    tusk_error_t err;
    tusk_cl_config_t cfg = {test_device(), 0, NULL, NULL, true};
    ck_assert_msg(tusk_cl_new(&cl, &cfg, &err) == TUSK_OK, "%s", err.message);
    size_t n = (size_t)tusk_zfinder_kernel_source_size, m = strlen(layout_kernel);
    char *src = malloc(n + m + 1);
    memcpy(src, tusk_zfinder_kernel_source, n);
    memcpy(src + n, layout_kernel, m + 1);
    /* both precisions: the records must not depend on it */
    for (int dbl = 0; dbl < 2; dbl++) {
        if (dbl && !tusk_cl_device(cl)->fp64)
            continue;
        char opt[512];
        snprintf(opt, sizeof opt, "-DZF_DOUBLE=%d -DZF_NBINS=400 -DZF_CAP=64 -DZF_PEAK_WG=64 -DZF_TRIPLETS=1 "
                                  "-DZF_SECOND=1 -DZF_BARE=0 -DZF_ATOM64=0%s",
                 dbl, dbl ? "" : " -DZF_DIV_VIA_DOUBLE=0");
        cl_program prog;
        cl_kernel k;
        ck_assert_msg(tusk_cl_program_build(cl, "zfinder.cl + layout", src, n + m, opt, &prog, &err) == TUSK_OK, "%s",
                      err.message);
        ck_assert_msg(tusk_cl_kernel_new(cl, prog, "zf_layout", &k, &err) == TUSK_OK, "%s", err.message);
        uint32_t host[64], dev[64];
        size_t count = host_layout(host);
        cl_mem out;
        ck_assert_int_eq(tusk_cl_buffer_new(cl, "layout", CL_MEM_WRITE_ONLY, sizeof dev, NULL, &out, &err), TUSK_OK);
        ck_assert_int_eq(clSetKernelArg(k, 0, sizeof out, &out), CL_SUCCESS);
        size_t one = 1;
        ck_assert_msg(tusk_cl_run(cl, k, 1, &one, &one, NULL, &err) == TUSK_OK, "%s", err.message);
        ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), out, CL_TRUE, 0, count * 4, dev, 0, NULL, NULL),
                         CL_SUCCESS);
        for (size_t i = 0; i < count; i++)
            ck_assert_msg(host[i] == dev[i], "shared item %zu: host %u, kernel %u (double %d)", i, host[i], dev[i],
                          dbl);
        tusk_cl_buffer_release(cl, &out);
        clReleaseKernel(k);
        clReleaseProgram(prog);
    }
    free(src);
    tusk_cl_destroy(&cl);
}
END_TEST

/* ---- agreement ------------------------------------------------------------------------------ */

static const double radius[ZF_MAX_LAYERS] = {50, 90, 122, 160, 200, 250, 299, 335, 371, 407,
                                             443, 478, 514, 560, 610, 660, 710, 760, 810};

/* A random RoI with stiff tracks and scattered points, some slices dense. */
static void random_roi(zf_batch_t *b, uint32_t event, uint32_t n, bool full)
{
    adf_idsp_point_t *pt = malloc(n * sizeof *pt);
    float width = full ? ZF_TWO_PI_F : (float)((3.0 + 30.0 * tu_uniform()) * PI / 180.0);
    float phi_min = (float)(-PI + 2 * PI * tu_uniform());
    uint32_t k = 0;
    while (k < n) {
        double phi = (double)phi_min + (double)width * tu_uniform();
        if (phi > PI)
            phi -= 2 * PI;
        unsigned first = tu_below(ZF_MAX_LAYERS - 1), last = first + tu_below(ZF_MAX_LAYERS - first);
        double zv = -180 + 360 * tu_uniform(), c = -2 + 4 * tu_uniform(), drift = (tu_uniform() - 0.5) * 0.003;
        for (unsigned l = first; l <= last && k < n; l++) {
            double f = phi + drift * (l - first);
            f = f > PI ? f - 2 * PI : f < -PI ? f + 2 * PI : f;
            float rel = zf_phi_rel((float)f, phi_min);
            if (!full && !(rel < width))
                continue;
            pt[k].rho = (float)radius[l];
            pt[k].phi = (float)f;
            pt[k].z = (float)(zv + c * radius[l] + (tu_uniform() - 0.5) * (tu_below(4) ? 0.2 : 500.0));
            pt[k].layer = (uint8_t)l;
            k++;
        }
    }
    zf_roi_t roi = {event, event, phi_min, width, n, pt};
    tusk_error_t err;
    ck_assert_int_eq(zf_batch_add(b, &roi, &err), TUSK_OK);
    free(pt);
}

static void simulated(zf_batch_t *b, const char *preset, unsigned n, uint32_t *event)
{
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)tu_rand());
    tusk_params_set(p, "preset", preset, &err);
    tusk_params_set(p, "seed", seed, &err);
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    ck_assert_int_eq(zf_sim_config_read(&sc, p, &err), TUSK_OK);
    zf_sim_t *sim = NULL;
    ck_assert_int_eq(zf_sim_new(&sim, &sc, &err), TUSK_OK);
    for (unsigned i = 0; i < n; i++) {
        const zf_sim_roi_t *r;
        ck_assert_int_eq(zf_sim_make(sim, i, &r, &err), TUSK_OK);
        zf_roi_t roi = r->roi;
        roi.event = (*event)++;
        ck_assert_int_eq(zf_batch_add(b, &roi, &err), TUSK_OK);
    }
    zf_sim_destroy(&sim);
    tusk_params_destroy(&p);
}

typedef struct tally {
    uint64_t rois, pairs, vertices;
    uint64_t carried;         /* bins whose zHisto sum passed 2^32 */
} tally_t;

static void compare(const zf_config_t *cfg, const zf_cl_config_t *clc, const zf_batch_t *b, tally_t *t)
{
    tusk_error_t err;
    zf_ref_t *ref = NULL;
    zf_cl_t *cl = NULL;
    ck_assert_int_eq(zf_ref_new(&ref, cfg, &err), TUSK_OK);
    ck_assert_msg(zf_cl_new(&cl, cfg, clc, &err) == TUSK_OK, "%s", err.message);
    size_t n = zf_batch_count(b);
    unsigned bins = zf_config_bins(cfg);
    zf_result_t *rc = calloc(n, sizeof *rc);
    ck_assert_msg(zf_cl_run(cl, b, rc, &err) == TUSK_OK, "%s", err.message);
    uint32_t *nh = malloc(bins * sizeof *nh);
    uint64_t *zs = malloc(bins * sizeof *zs);
    for (size_t i = 0; i < n; i++) {
        zf_roi_t roi;
        zf_batch_roi(b, i, &roi);
        zf_result_t rr;
        ck_assert_msg(zf_ref_roi(ref, &roi, &rr, &err) == TUSK_OK, "%s", err.message);
        ck_assert_int_eq(zf_cl_histograms(cl, i, nh, zs, &err), TUSK_OK);
        const uint32_t *nr = zf_ref_nhisto(ref);
        const uint64_t *zr = zf_ref_zsum(ref);
        for (unsigned k = 0; k < bins; k++) {
            if (nh[k] != nr[k])
                ck_abort_msg("RoI %u (%u points): nHisto[%u] is %u on the device, %u in the reference", roi.event,
                             roi.n, k, nh[k], nr[k]);
            if (zs[k] != zr[k])
                ck_abort_msg("RoI %u (%u points): zHisto[%u]'s sum is %llu on the device, %llu in the reference",
                             roi.event, roi.n, k, (unsigned long long)zs[k], (unsigned long long)zr[k]);
            t->carried += zr[k] >> 32 != 0;
        }
        ck_assert_uint_eq(rc[i].pairs, rr.pairs);
        ck_assert_uint_eq(rc[i].entries, rr.entries);
        ck_assert_uint_eq(rc[i].n_vertices, rr.n_vertices);
        for (unsigned v = 0; v < rr.n_vertices; v++) {
            ck_assert_uint_eq(rc[i].vertex[v].bin, rr.vertex[v].bin);
            ck_assert_uint_eq(rc[i].vertex[v].count, rr.vertex[v].count);
            /* z0 from the same integers by the same formula: bit for bit */
            ck_assert_msg(memcmp(&rc[i].vertex[v].z0, &rr.vertex[v].z0, sizeof rr.vertex[v].z0) == 0,
                          "RoI %u vertex %u: z0 %.17g on the device, %.17g in the reference", roi.event, v,
                          rc[i].vertex[v].z0, rr.vertex[v].z0);
            t->vertices++;
        }
        t->rois++;
        t->pairs += rr.pairs;
    }
    free(nh);
    free(zs);
    free(rc);
    zf_cl_destroy(&cl);
    zf_ref_destroy(&ref);
}

/* _i: bit 0 triplets, bit 1 double, bit 2 the high-luminosity sample. */
START_TEST(cl_equals_reference)
{
    for (int k = 0; k < 16 * _i; k++)
        tu_rand(); /* each loop's own RoIs (Check forks every test from the same state) */
    zf_config_t cfg;
    zf_config_default(&cfg);
    cfg.mode = _i & 1 ? ZF_TRIPLETS : ZF_PAIRS;
    cfg.precision = _i & 2 ? ZF_PREC_DOUBLE : ZF_PREC_FLOAT;
    cfg.second_vertex = tu_below(2);
    zf_batch_t *b = zf_batch_new();
    uint32_t event = 0;
    if (_i & 4)
        simulated(b, "highlum", 2, &event);
    else
        simulated(b, "lowlum", 12, &event);
    for (int k = 0; k < 4; k++)
        random_roi(b, event++, 30 + tu_below(600), k == 3);
    zf_cl_config_t clc;
    zf_cl_config_default(&clc);
    clc.device = test_device();
    clc.keep_histograms = true;
    clc.chunk = 1 + tu_below(9);
    clc.slots = 1 + tu_below(2);
    clc.group_size = tu_below(2) ? 64 : 1u << tu_below(8);
    clc.no_int64_atomics = tu_below(2);
    tally_t t = {0};
    compare(&cfg, &clc, b, &t);
    printf("check_zfinder_cl: %s %s %s: %llu RoIs, %llu pairs, %llu vertices, histograms and z0 bit for bit; chunk "
           "%u, %u slot(s), %u work-items, zHisto by %s atomics\n",
           _i & 4 ? "highlum" : "lowlum", zf_mode_name(cfg.mode), zf_precision_name(cfg.precision),
           (unsigned long long)t.rois, (unsigned long long)t.pairs, (unsigned long long)t.vertices, clc.chunk,
           clc.slots, clc.group_size, clc.no_int64_atomics ? "32-bit" : "64-bit");
    zf_batch_destroy(&b);
}
END_TEST

/* zHisto's sums past 32 bits: 6 phi slices far apart, each with 3 tracks
 * from z = 12.998 mm (an intercept's place in its bin near 1: q near
 * 2^24, so 257 entries pass 2^32), so that each slice's work-group puts
 * 513 entries into bin 212 and wraps its 32-bit word in local memory (the
 * carry into the 64-bit sum), and the groups' low words add up past 2^32
 * in global memory (the carry of the 32-bit fallback). Fixed tracks: the
 * second is checked once here, per slice, with the reference. */
#define DENSE_SLICES 6
#define DENSE_TRACKS 3
static uint32_t dense_roi(adf_idsp_point_t *pt, int only)
{
    uint32_t n = 0;
    for (int j = 0; j < DENSE_SLICES; j++)
        for (int k = 0; k < DENSE_TRACKS && (only < 0 || only == j); k++)
            for (unsigned l = 0; l < ZF_MAX_LAYERS; l++) {
                double c = -0.2 + 0.15 * k + 0.013 * j;
                pt[n].rho = (float)radius[l];
                pt[n].phi = 0.5f + 0.02f * (float)j;
                pt[n].z = (float)(12.998046875 + c * radius[l]);
                pt[n].layer = (uint8_t)l;
                n++;
            }
    return n;
}

START_TEST(dense_bin_carries)
{
    static adf_idsp_point_t pt[DENSE_SLICES * DENSE_TRACKS * ZF_MAX_LAYERS];
    tusk_error_t err;
    for (int k = 0; k < 8; k++) {
        zf_config_t cfg;
        zf_config_default(&cfg);
        cfg.mode = k & 1 ? ZF_TRIPLETS : ZF_PAIRS;
        cfg.precision = k & 2 ? ZF_PREC_DOUBLE : ZF_PREC_FLOAT;
        cfg.second_vertex = true;
        /* each slice alone in the reference: its bin 212 passes 2^32, and the low words add up past it */
        zf_ref_t *ref = NULL;
        zf_result_t r;
        ck_assert_int_eq(zf_ref_new(&ref, &cfg, &err), TUSK_OK);
        uint64_t lows = 0, total = 0;
        for (int j = 0; j < DENSE_SLICES; j++) {
            zf_roi_t one = {3, 3, 0.4f, 1.0f, dense_roi(pt, j), pt};
            ck_assert_int_eq(zf_ref_roi(ref, &one, &r, &err), TUSK_OK);
            uint64_t z = zf_ref_zsum(ref)[212];
            ck_assert_msg(z >> 32 != 0, "slice %d: bin 212 has %u entries, sum %llu", j, zf_ref_nhisto(ref)[212],
                          (unsigned long long)z);
            lows += z & 0xFFFFFFFFu;
            total += z;
        }
        ck_assert_msg(lows >> 32 != 0, "the slices' low words add up to %llu", (unsigned long long)lows);
        zf_roi_t roi = {3, 3, 0.4f, 1.0f, dense_roi(pt, -1), pt};
        ck_assert_int_eq(zf_ref_roi(ref, &roi, &r, &err), TUSK_OK);
        ck_assert_uint_eq(zf_ref_zsum(ref)[212], total); /* the slices do not meet */
        ck_assert(r.vertex[0].bin <= 212 && r.vertex[0].bin + 2 >= 212);
        zf_ref_destroy(&ref);
        /* the device, 64-bit atomics or the fallback, any work-group size: bit for bit */
        zf_batch_t *b = zf_batch_new();
        ck_assert_int_eq(zf_batch_add(b, &roi, &err), TUSK_OK);
        zf_cl_config_t clc;
        zf_cl_config_default(&clc);
        clc.device = test_device();
        clc.keep_histograms = true;
        clc.no_int64_atomics = (k & 4) != 0;
        clc.group_size = 1u << tu_below(9);
        tally_t t = {0};
        compare(&cfg, &clc, b, &t);
        ck_assert_uint_eq(t.vertices, 2);
        ck_assert_uint_ge(t.carried, 1);
        zf_batch_destroy(&b);
    }
}
END_TEST

START_TEST(refusals)
{
    zf_config_t cfg;
    zf_config_default(&cfg);
    zf_cl_config_t clc;
    zf_cl_config_default(&clc);
    clc.device = test_device();
    tusk_error_t err;
    zf_cl_t *cl = NULL;
    /* options that change the arithmetic */
    clc.options = "-cl-mad-enable";
    ck_assert_int_eq(zf_cl_new(&cl, &cfg, &clc, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "-cl-mad-enable");
    clc.options = NULL;
    /* more points a group than its 32-bit counts allow */
    clc.group_points = ZF_MAX_GROUP_POINTS + 1;
    ck_assert_int_eq(zf_cl_new(&cl, &cfg, &clc, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "group_points 3 to 65536");
    clc.group_points = 1024;
    /* a point outside its RoI: the reference's error */
    zf_batch_t *b = zf_batch_new();
    random_roi(b, 0, 40, false);
    zf_roi_t roi;
    zf_batch_roi(b, 0, &roi);
    adf_idsp_point_t *pt = malloc(roi.n * sizeof *pt);
    memcpy(pt, roi.pt, roi.n * sizeof *pt);
    pt[7].phi = roi.phi_min - 0.5f;
    roi.pt = pt;
    roi.event = 9;
    ck_assert_int_eq(zf_batch_add(b, &roi, &err), TUSK_OK);
    ck_assert_int_eq(zf_cl_new(&cl, &cfg, &clc, &err), TUSK_OK);
    zf_result_t res[2];
    ck_assert_int_eq(zf_cl_run(cl, b, res, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "RoI 9: spacepoint 7");
    zf_cl_destroy(&cl);
    /* a slice and its neighbours with more points than a work-group keeps */
    zf_batch_clear(b);
    for (uint32_t i = 0; i < 40; i++) {
        pt[i].rho = (float)radius[i % ZF_MAX_LAYERS];
        pt[i].phi = 0.001f;
        pt[i].z = (float)i;
        pt[i].layer = (uint8_t)(i % ZF_MAX_LAYERS);
    }
    roi = (zf_roi_t){5, 5, 0.0f, 1.0f, 40, pt};
    ck_assert_int_eq(zf_batch_add(b, &roi, &err), TUSK_OK);
    clc.group_points = 16;
    ck_assert_int_eq(zf_cl_new(&cl, &cfg, &clc, &err), TUSK_OK);
    ck_assert_int_eq(zf_cl_run(cl, b, res, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "RoI 5: a phi slice and its neighbours hold more than the 16");
    /* the same object runs again after a failure */
    clc.group_points = 64;
    zf_cl_destroy(&cl);
    ck_assert_int_eq(zf_cl_new(&cl, &cfg, &clc, &err), TUSK_OK);
    ck_assert_msg(zf_cl_run(cl, b, res, &err) == TUSK_OK, "%s", err.message);
    /* every pair of the 40 points but those of one layer (layers 0, 1: 3 points, 17 others: 2) */
    ck_assert_uint_eq(res[0].pairs, 40 * 39 / 2 - 2 * 3 - 17);
    zf_cl_destroy(&cl);
    free(pt);
    zf_batch_destroy(&b);
}
END_TEST

int main(void)
{
    int skip = tu_cl_device_or_skip("check_zfinder_cl");
    if (skip)
        return skip;
    setenv("TUSK_CL_CACHE", "off", 1); /* no program binaries in the user's cache */
    Suite *s = suite_create("zfinder_cl");
    TCase *tc = tcase_create("agreement");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, shared_records_agree);
    tcase_add_loop_test(tc, cl_equals_reference, 0, 8);
    tcase_add_test(tc, dense_bin_carries);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
