/* check_zfinder.c - the z-finder on the CPU (tusk/zfinder.h): its frames,
 * the algorithm's pieces on hand-built RoIs, the reference against a
 * brute-force O(N^2) z-finder on random RoIs, the fast backend against
 * the reference, the simulation's presets, and the quality analysis on a
 * small fixed sample. Random RoIs are fresh on every run
 * (TUSK_TEST_SEED replays one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "testutil.h"
#include "tusk/adf.h"
#include "tusk/zfinder.h"
#include "zf_shared.h"
#define ZF_DOUBLE 0
#include "zf_real.h"
#undef ZF_DOUBLE
#define ZF_DOUBLE 1
#include "zf_real.h"

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)

static const double radius[ZF_MAX_LAYERS] = {50, 90, 122, 160, 200, 250, 299, 335, 371, 407,
                                             443, 478, 514, 560, 610, 660, 710, 760, 810};

/* ---- frames ------------------------------------------------------------------------- */

static void random_points(adf_idsp_point_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        p[i].rho = tu_any_float();
        p[i].phi = tu_any_float();
        p[i].z = tu_any_float();
        p[i].layer = (uint8_t)tu_below(ADF_IDSP_MAX_LAYERS);
    }
}

START_TEST(spacepoints_round_trip)
{
    uint32_t n = tu_below(300);
    adf_idsp_point_t *p = malloc((n + 1) * sizeof *p), *q = malloc((n + 1) * sizeof *q);
    random_points(p, n);
    size_t cap = ADF_KEY_SIZE + adf_idsp_payload_size(n);
    uint8_t *buf = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, cap);
    adf_idsp_t h = {n, -1.25f, (float)(100 * DEG), 0x1234, NULL};
    adf_error_t err;
    ck_assert_msg(adf_idsp_encode(w, 77, 5, &h, p, &err) == ADF_OK, "%s", err.message);
    ck_assert_uint_eq(adf_writer_used(w), cap); /* exactly the payload size promised */
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, buf, cap, 0);
    adf_frame_t f;
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.key.type, ADF_TYPE_DATA_ID_SPACEPOINTS);
    ck_assert_str_eq(adf_type_name(f.key.type), "data:id_spacepoints");
    adf_idsp_t d;
    ck_assert_msg(adf_idsp_decode(&f, &d, &err) == ADF_OK, "%s", err.message);
    ck_assert_uint_eq(d.n_points, n);
    ck_assert(d.phi_min == -1.25f && d.phi_width == h.phi_width && d.flags == 0x1234);
    for (uint32_t i = 0; i < n; i++) {
        adf_idsp_point(&d, i, &q[i]);
        tu_check(memcmp(&q[i].rho, &p[i].rho, 4) == 0 && memcmp(&q[i].phi, &p[i].phi, 4) == 0 &&
                 memcmp(&q[i].z, &p[i].z, 4) == 0 && q[i].layer == p[i].layer);
    }
    /* the exact layout of adf/FORMAT.md */
    const uint8_t *pl = buf + ADF_KEY_SIZE;
    ck_assert_uint_eq(pl[0] | pl[1] << 8 | pl[2] << 16 | (uint32_t)pl[3] << 24, n);
    if (n)
        ck_assert_uint_eq(pl[16 + 12], p[0].layer);
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(buf);
    free(p);
    free(q);
}
END_TEST

/* Decode a payload as data:id_spacepoints: the status (and the message). */
static int decode_sp(const uint8_t *payload, size_t size, adf_error_t *err)
{
    uint8_t *buf = malloc(ADF_KEY_SIZE + size + 1);
    tu_put_frame(buf, ADF_TYPE_DATA_ID_SPACEPOINTS, 1, 1, payload, size);
    adf_frame_t f = {{(uint32_t)(ADF_KEY_SIZE + size), ADF_TYPE_DATA_ID_SPACEPOINTS, 1, 1}, buf + ADF_KEY_SIZE,
                     (uint32_t)size, 40};
    adf_idsp_t sp;
    int rc = adf_idsp_decode(&f, &sp, err);
    free(buf);
    return rc;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(p, u);
}

START_TEST(spacepoints_malformed)
{
    uint8_t pl[16 + 13 * 3] = {0};
    adf_error_t err;
    put_u32(pl, 3);
    put_f32(pl + 4, 0.5f);
    put_f32(pl + 8, 1.0f);
    ck_assert_int_eq(decode_sp(pl, sizeof pl, &err), ADF_OK);
    ck_assert_int_eq(decode_sp(pl, 15, &err), ADF_EPAYLOAD); /* shorter than the header */
    tu_assert_error(&err, ADF_EPAYLOAD, "shorter than its 16-byte header");
    ck_assert_int_eq(decode_sp(pl, sizeof pl - 1, &err), ADF_EPAYLOAD); /* one byte short */
    tu_assert_error(&err, ADF_EPAYLOAD, "55 expected for 3 spacepoints");
    ck_assert_uint_eq(err.offset, 40);
    put_u32(pl, ADF_IDSP_MAX_POINTS + 1);
    ck_assert_int_eq(decode_sp(pl, sizeof pl, &err), ADF_ERANGE);
    put_u32(pl, 3);
    pl[16 + 13 + 12] = 19; /* the second point in layer 19 */
    ck_assert_int_eq(decode_sp(pl, sizeof pl, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "spacepoint 1 is in layer 19");
    pl[16 + 13 + 12] = 18;
    ck_assert_int_eq(decode_sp(pl, sizeof pl, &err), ADF_OK);
    const float bad_width[] = {0.0f, -1.0f, 7.0f, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_width / sizeof bad_width[0]; i++) {
        put_f32(pl + 8, bad_width[i]);
        ck_assert_int_eq(decode_sp(pl, sizeof pl, &err), ADF_EPAYLOAD);
        tu_assert_error(&err, ADF_EPAYLOAD, "phi range");
    }
    put_f32(pl + 8, 1.0f);
    put_f32(pl + 4, NAN);
    ck_assert_int_eq(decode_sp(pl, sizeof pl, &err), ADF_EPAYLOAD);
    /* the encoder refuses the same things and writes nothing */
    uint8_t buf[256];
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, sizeof buf);
    adf_idsp_point_t p = {50.0f, 0.1f, 1.0f, 19};
    adf_idsp_t h = {1, 0.0f, 1.0f, 0, NULL};
    ck_assert_int_eq(adf_idsp_encode(w, 1, 1, &h, &p, &err), ADF_EINVAL);
    tu_assert_error(&err, ADF_EINVAL, "layer 19");
    p.layer = 3;
    h.phi_width = 0.0f;
    ck_assert_int_eq(adf_idsp_encode(w, 1, 1, &h, &p, &err), ADF_EINVAL);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    /* another type is not a spacepoint frame */
    adf_frame_t f = {{20, ADF_TYPE_DATA_ZVERTEX, 0, 0}, buf, 0, 0};
    adf_idsp_t sp;
    ck_assert_int_eq(adf_idsp_decode(&f, &sp, &err), ADF_EBADTYPE);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(zvertex_and_truth_codecs)
{
    uint8_t buf[4096];
    adf_writer_t *w = adf_writer_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_error_t err;
    adf_zvertex_t zv = {2, ADF_ZVERTEX_TRIPLETS, 8, ADF_ZVERTEX_OPENCL, 1234, 987654321ull, 0xDEADBEEF,
                        {{-12.5, 77, 187}, {40.125, 9, 240}}};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_zvertex_encode(w, 3, 4, &zv, &err), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), ADF_KEY_SIZE + 24 + 2 * 16);
    adf_idtruth_t *t = calloc(1, sizeof *t);
    t->z_signal = 3.5f;
    t->n_pileup = 2;
    t->z_pileup[0] = -10.0f;
    t->z_pileup[1] = 20.0f;
    t->n_points = 4;
    adf_idtruth_point_t tp[4] = {{0, 0}, {7, 2}, {ADF_IDTRUTH_NOISE_PARTICLE, ADF_IDTRUTH_NOISE_VERTEX}, {9, 1}};
    ck_assert_msg(adf_idtruth_encode(w, 3, 4, t, tp, &err) == ADF_OK, "%s", err.message);
    adf_reader_reset(r, buf, adf_writer_used(w), 0);
    adf_frame_t f;
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    adf_zvertex_t back;
    ck_assert_int_eq(adf_zvertex_decode(&f, &back, &err), ADF_OK);
    ck_assert(back.n_vertices == 2 && back.mode == zv.mode && back.precision == 8 && back.backend == zv.backend &&
              back.entries == 1234 && back.pairs == 987654321ull && back.settings == 0xDEADBEEF);
    ck_assert(back.vertex[0].z0 == -12.5 && back.vertex[1].z0 == 40.125 && back.vertex[1].bin == 240);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_str_eq(adf_type_name(f.key.type), "data:id_truth");
    adf_idtruth_t *tb = calloc(1, sizeof *tb);
    ck_assert_int_eq(adf_idtruth_decode(&f, tb, &err), ADF_OK);
    ck_assert(tb->z_signal == 3.5f && tb->n_pileup == 2 && tb->z_pileup[1] == 20.0f && tb->n_points == 4);
    for (uint32_t i = 0; i < 4; i++) {
        adf_idtruth_point_t q;
        adf_idtruth_point(tb, i, &q);
        ck_assert(q.particle == tp[i].particle && q.vertex == tp[i].vertex);
    }
    /* malformed: a vertex beyond the pile-up, noise mixed with a particle */
    uint8_t pl[64];
    memcpy(pl, f.payload, f.payload_size);
    adf_frame_t g = f;
    g.payload = pl;
    pl[12 + 8 + 6 + 4] = 3; /* point 1's vertex: 3 > 2 pile-up vertices */
    ck_assert_int_eq(adf_idtruth_decode(&g, tb, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "spacepoint 1 comes from vertex 3");
    memcpy(pl, f.payload, f.payload_size);
    pl[12 + 8 + 12] = 0; /* point 2 is noise but names particle 0xFFFFFF00 */
    ck_assert_int_eq(adf_idtruth_decode(&g, tb, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "is noise");
    g.payload_size--;
    ck_assert_int_eq(adf_idtruth_decode(&g, tb, &err), ADF_EPAYLOAD);
    tp[1].vertex = 5;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_idtruth_encode(w, 3, 4, t, tp, &err), ADF_EINVAL);
    /* data:zvertex: counts and codes */
    zv.mode = 3;
    ck_assert_int_eq(adf_zvertex_encode(w, 3, 4, &zv, &err), ADF_EINVAL);
    tu_assert_error(&err, ADF_EINVAL, "mode 3");
    zv.mode = 1;
    zv.precision = 2;
    ck_assert_int_eq(adf_zvertex_encode(w, 3, 4, &zv, &err), ADF_EINVAL);
    zv.precision = 4;
    zv.n_vertices = 3;
    ck_assert_int_eq(adf_zvertex_encode(w, 3, 4, &zv, &err), ADF_EINVAL);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    uint8_t zp[24 + 16] = {1, 1, 4, 9};
    adf_frame_t h = {{20 + 40, ADF_TYPE_DATA_ZVERTEX, 0, 0}, zp, 40, 0};
    ck_assert_int_eq(adf_zvertex_decode(&h, &back, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "backend 9");
    zp[3] = 1;
    ck_assert_int_eq(adf_zvertex_decode(&h, &back, &err), ADF_OK);
    zp[0] = 3;
    ck_assert_int_eq(adf_zvertex_decode(&h, &back, &err), ADF_ERANGE);
    zp[0] = 2;
    ck_assert_int_eq(adf_zvertex_decode(&h, &back, &err), ADF_EPAYLOAD);
    free(t);
    free(tb);
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
}
END_TEST

/* ---- the formulas ---------------------------------------------------------------------- */

START_TEST(intercept_and_bins)
{
    /* (50, 10) and (100, 30): the line meets the axis at z = -10 */
    ck_assert(zf_intercept_f(50.0f, 10.0f, 100.0f, 30.0f) == -10.0f);
    ck_assert(zf_intercept_d(50.0, 10.0, 100.0, 30.0) == -10.0);
    /* equal radii: not a number, dropped by the bin */
    ck_assert_int_eq(zf_bin_f(zf_intercept_f(50.0f, 1.0f, 50.0f, 2.0f), -200.0f, 1.0f, 400.0f), -1);
    /* the bin layout: [z_min + b w, z_min + (b + 1) w), b = 0 .. n - 1 */
    ck_assert_int_eq(zf_bin_f(-200.0f, -200.0f, 1.0f, 400.0f), 0);
    ck_assert_int_eq(zf_bin_f(-199.0f, -200.0f, 1.0f, 400.0f), 1);
    ck_assert_int_eq(zf_bin_f(-199.00002f, -200.0f, 1.0f, 400.0f), 0);
    ck_assert_int_eq(zf_bin_f(0.0f, -200.0f, 1.0f, 400.0f), 200);
    ck_assert_int_eq(zf_bin_f(199.99f, -200.0f, 1.0f, 400.0f), 399);
    /* in float, 199.99998 + 200 rounds to 400: beyond the last bin */
    ck_assert_int_eq(zf_bin_f(199.99998f, -200.0f, 1.0f, 400.0f), -1);
    ck_assert_int_eq(zf_bin_f(200.0f, -200.0f, 1.0f, 400.0f), -1);
    ck_assert_int_eq(zf_bin_f(-200.00002f, -200.0f, 1.0f, 400.0f), -1);
    ck_assert_int_eq(zf_bin_f(NAN, -200.0f, 1.0f, 400.0f), -1);
    ck_assert_int_eq(zf_bin_f(INFINITY, -200.0f, 1.0f, 400.0f), -1);
    ck_assert_int_eq(zf_bin_d(12.25, -200.0, 2.0, 800.0), 424); /* 0.5 mm bins */
    ck_assert_int_eq(zf_bin_d(-1e30, -200.0, 2.0, 800.0), -1);
    /* zf_config_bins and the default layout */
    zf_config_t cfg;
    zf_config_default(&cfg);
    ck_assert_uint_eq(zf_config_bins(&cfg), 400);
    /* slices: floor(phi / width), the top edge into the last slice */
    float inv = (float)(1.0 / (0.2 * DEG));
    ck_assert_int_eq(zf_slice_of(0.0f, 1.0f, inv, 500, 0), 0);
    ck_assert_int_eq(zf_slice_of(nextafterf(1.0f, 0.0f), 1.0f, inv, 287, 0), 286);
    ck_assert_int_eq(zf_slice_of(1.0f, 1.0f, inv, 287, 0), -1);
    ck_assert_int_eq(zf_slice_of(-0.0001f, 1.0f, inv, 287, 0), -1);
    ck_assert_int_eq(zf_slice_of(NAN, 1.0f, inv, 287, 0), -1);
    ck_assert_int_eq(zf_slice_of(ZF_TWO_PI_F, ZF_TWO_PI_F, inv, 1800, 1), 1799);
    ck_assert(zf_phi_rel(-3.0f, 3.0f) >= 0.0f && zf_phi_rel(-3.0f, 3.0f) < ZF_TWO_PI_F);
    int wrap;
    ck_assert_uint_eq(zf_roi_slices(&cfg, (float)(100 * DEG), &wrap), 500);
    ck_assert_int_eq(wrap, 0);
    ck_assert_uint_eq(zf_roi_slices(&cfg, ZF_TWO_PI_F, &wrap), 1800);
    ck_assert_int_eq(wrap, 1);
    /* the peak rule: more entries win, the lower bin on equal entries */
    ck_assert(zf_window_better(5, 10, 4, 2));
    ck_assert(zf_window_better(5, 2, 5, 10));
    ck_assert(!zf_window_better(5, 10, 5, 2));
    ck_assert(!zf_window_better(0, 0, 0, 0));
    /* z0: entries at 1, 2 and 3 mm (bins 201-203, each at its lower edge) average to 2 */
    ck_assert(zf_window_z_f(201, zf_window_sum(1, 1, 0, 0, 0), 3, -200.0f, 1.0f) == 2.0f);
    ck_assert(zf_window_z_d(201, zf_window_sum(1, 1, 0, 0, 0), 3, -200.0, 1.0) == 2.0);
}
END_TEST

/* zHisto in fixed point (zf_shared.h): the largest q, the worst-case sums,
 * the quantization error, and zf_zhisto. */
START_TEST(quantization_bounds)
{
    uint32_t q;
    ck_assert(ZF_ZQ_SCALE == ldexp(1.0, ZF_ZQ_BITS) && ZF_ZQ_QUANTUM == ldexp(1.0, -ZF_ZQ_BITS));
    /* q < 2^24: the largest at the top of a bin, in both precisions */
    double zd = 13.0 - ldexp(1.0, -45); /* t = 213 - 2^-45 */
    ck_assert_int_eq(zf_bin_d(zd, -200.0, 1.0, 400.0), 212);
    ck_assert_uint_eq(zf_bin_q_d(zd, -200.0, 1.0, 212), (1u << ZF_ZQ_BITS) - 1);
    float zf = 200.0f - 0x1p-15f; /* float t = 400 - 2^-15 */
    ck_assert_int_eq(zf_bin_f(zf, -200.0f, 1.0f, 400.0f), 399);
    ck_assert_uint_eq(zf_bin_q_f(zf, -200.0f, 1.0f, 399), (1u << ZF_ZQ_BITS) - (1u << 9));
    ck_assert_uint_eq(zf_bin_q_f(12.25f, -200.0f, 1.0f, 212), 1u << (ZF_ZQ_BITS - 2));
    ck_assert_uint_eq(zf_bin_q_d(-200.0, -200.0, 1.0, 0), 0);
    /* the worst case: 2^32 - 1 entries (nHisto's limit) of the largest q fit a bin's 64 bits,
     * and a window of three such bins fits zf_window_sum's */
    const uint64_t n_max = UINT32_MAX, q_max = (1u << ZF_ZQ_BITS) - 1, s_max = n_max * q_max;
    ck_assert(s_max / q_max == n_max && s_max < (UINT64_C(1) << 56));
    unsigned __int128 exact = (unsigned __int128)s_max * 3 + (((unsigned __int128)n_max * 3) << ZF_ZQ_BITS);
    ck_assert(exact < ((unsigned __int128)1 << 59));
    ck_assert((unsigned __int128)zf_window_sum(UINT32_MAX, UINT32_MAX, s_max, s_max, s_max) == exact);
    /* a work-group's most pairs, C(group_points, 2), within its 32-bit counts */
    ck_assert((uint64_t)ZF_MAX_GROUP_POINTS * (ZF_MAX_GROUP_POINTS - 1) / 2 <= UINT32_MAX);
    /* the quantization error: below 2^-24 of a bin (6e-8 mm in 1 mm bins) in double;
     * none in float above the first bin (q is exactly the place in the bin times 2^24) */
    for (int k = 0; k < 10000; k++) {
        double w = k % 2 ? 1.0 : 0.1 + 2 * tu_uniform(), zmin = -200.0, zv = zmin + 399.0 * w * tu_uniform();
        int32_t b = zf_bin_d(zv, zmin, 1.0 / w, 400.0);
        ck_assert_int_ge(b, 0);
        q = zf_bin_q_d(zv, zmin, 1.0 / w, b);
        double t = (zv - zmin) * (1.0 / w), back = (double)b + ldexp((double)q, -ZF_ZQ_BITS);
        ck_assert(back <= t && t - back < ldexp(1.0, -ZF_ZQ_BITS));
        float tf = (float)(1.0 + 398.0 * tu_uniform());
        b = zf_bin_f(tf - 200.0f, -200.0f, 1.0f, 400.0f);
        q = zf_bin_q_f(tf - 200.0f, -200.0f, 1.0f, b);
        ck_assert((double)b + ldexp((double)q, -ZF_ZQ_BITS) == (double)((tf - 200.0f) + 200.0f));
    }
    /* zHisto in mm: n entries at the bin's lower edge plus sum quanta */
    zf_config_t cfg;
    zf_config_default(&cfg);
    ck_assert(zf_zhisto(&cfg, 212, 4, 3u << (ZF_ZQ_BITS - 1)) == 4 * 12.0 + 1.5);
    ck_assert(zf_zhisto(&cfg, 0, 0, 0) == 0.0);
}
END_TEST

START_TEST(triplet_test)
{
    /* points on one straight line in rho-z and rho-phi */
    double r1 = 50, r2 = 90, r3 = 160, z0 = 7.5, c = 0.75, f0 = 0.3, k = 0.0002;
    double z1 = z0 + c * r1, z2 = z0 + c * r2, z3 = z0 + c * r3;
    double f1 = f0 + k * r1, f2 = f0 + k * r2, f3 = f0 + k * r3;
    ck_assert(zf_triplet_ok_d(r1, f1, z1, r2, f2, z2, r3, f3, z3, 1.0, 0.001));
    /* the tolerances hold at the third point's radius */
    ck_assert(zf_triplet_ok_d(r1, f1, z1, r2, f2, z2, r3, f3, z3 + 0.99, 1.0, 0.001));
    ck_assert(!zf_triplet_ok_d(r1, f1, z1, r2, f2, z2, r3, f3, z3 + 1.01, 1.0, 0.001));
    ck_assert(zf_triplet_ok_d(r1, f1, z1, r2, f2, z2, r3, f3 - 0.00099, z3, 1.0, 0.001));
    ck_assert(!zf_triplet_ok_d(r1, f1, z1, r2, f2, z2, r3, f3 - 0.00101, z3, 1.0, 0.001));
    ck_assert(!zf_triplet_ok_d(r1, f1, z1, r2, f2, z2, r3, NAN, z3, 1.0, 0.001));
    ck_assert(zf_triplet_ok_f((float)r1, (float)f1, (float)z1, (float)r2, (float)f2, (float)z2, (float)r3, (float)f3,
                              (float)z3, 0.01f, 1e-5f));
}
END_TEST

/* ---- hand-built RoIs ------------------------------------------------------------------- */

typedef struct roi_buf {
    adf_idsp_point_t pt[4096];
    uint32_t n;
} roi_buf_t;

/* A straight track from (0, zv) with slope c (dz/drho) at phi, on layers
 * first .. last (radii and slopes chosen so every product is exact). */
static void track(roi_buf_t *b, double zv, double c, float phi, unsigned first, unsigned last)
{
    for (unsigned l = first; l <= last; l++) {
        adf_idsp_point_t *p = &b->pt[b->n++];
        p->rho = (float)radius[l];
        p->z = (float)(zv + c * radius[l]);
        p->phi = phi;
        p->layer = (uint8_t)l;
    }
}

static zf_roi_t as_roi(const roi_buf_t *b, float phi_min, float width)
{
    zf_roi_t r = {42, 42, phi_min, width, b->n, b->pt};
    return r;
}

static zf_result_t run_ref(const zf_config_t *cfg, const zf_roi_t *roi, uint32_t *nh)
{
    zf_ref_t *ref = NULL;
    tusk_error_t err;
    ck_assert_msg(zf_ref_new(&ref, cfg, &err) == TUSK_OK, "%s", err.message);
    zf_result_t res;
    ck_assert_msg(zf_ref_roi(ref, roi, &res, &err) == TUSK_OK, "%s", err.message);
    if (nh)
        memcpy(nh, zf_ref_nhisto(ref), zf_config_bins(cfg) * sizeof *nh);
    zf_ref_destroy(&ref);
    return res;
}

START_TEST(planted_vertex_found_exactly)
{
    static roi_buf_t b;
    b.n = 0;
    /* three tracks from z = 12.25 mm, far apart in phi (10, 30, 50 degrees
     * into a 100 degree RoI starting at 0) */
    track(&b, 12.25, 0.5, (float)(10 * DEG + 0.0001), 0, 6);
    track(&b, 12.25, -0.75, (float)(30 * DEG + 0.0001), 0, 4);
    track(&b, 12.25, 0.25, (float)(50 * DEG + 0.0001), 2, 9);
    zf_roi_t roi = as_roi(&b, 0.0f, (float)(100 * DEG));
    uint64_t pairs = 7 * 6 / 2 + 5 * 4 / 2 + 8 * 7 / 2; /* 21 + 10 + 28 */
    for (int prec = ZF_PREC_FLOAT; prec <= ZF_PREC_DOUBLE; prec += 4) {
        zf_config_t cfg;
        zf_config_default(&cfg);
        cfg.precision = prec;
        uint32_t nh[400];
        zf_result_t r = run_ref(&cfg, &roi, nh);
        ck_assert_uint_eq(r.pairs, pairs);
        ck_assert_uint_eq(r.entries, pairs);
        ck_assert_uint_eq(nh[212], pairs); /* [12, 13) */
        ck_assert_uint_eq(r.n_vertices, 1);
        ck_assert(r.vertex[0].z0 == 12.25);
        ck_assert_uint_eq(r.vertex[0].count, pairs);
        ck_assert_uint_eq(r.vertex[0].bin, 210); /* the first of the equal windows 210, 211, 212 */
        /* triplets: a pair counts when a point of its track lies above it */
        cfg.mode = ZF_TRIPLETS;
        r = run_ref(&cfg, &roi, NULL);
        ck_assert_uint_eq(r.pairs, pairs);
        ck_assert_uint_eq(r.entries, pairs - (6 + 4 + 7));
        ck_assert(r.vertex[0].z0 == 12.25);
    }
}
END_TEST

START_TEST(second_vertex_and_ties)
{
    static roi_buf_t b;
    b.n = 0;
    track(&b, 12.25, 0.5, (float)(10 * DEG + 0.0001), 0, 5);   /* 15 pairs */
    track(&b, -40.5, 0.25, (float)(40 * DEG + 0.0001), 0, 5);  /* 15 pairs */
    track(&b, -40.5, -0.5, (float)(70 * DEG + 0.0001), 0, 2);  /* 3 pairs */
    zf_roi_t roi = as_roi(&b, 0.0f, (float)(100 * DEG));
    zf_config_t cfg;
    zf_config_default(&cfg);
    cfg.second_vertex = true;
    zf_result_t r = run_ref(&cfg, &roi, NULL);
    ck_assert_uint_eq(r.n_vertices, 2);
    ck_assert(r.vertex[0].z0 == -40.5 && r.vertex[0].count == 18);
    ck_assert(r.vertex[1].z0 == 12.25 && r.vertex[1].count == 15);
    /* equal peaks: the lower bin first */
    b.n -= 3;
    roi = as_roi(&b, 0.0f, (float)(100 * DEG));
    r = run_ref(&cfg, &roi, NULL);
    ck_assert_uint_eq(r.n_vertices, 2);
    ck_assert(r.vertex[0].z0 == -40.5 && r.vertex[1].z0 == 12.25);
    ck_assert_uint_eq(r.vertex[0].count, 15);
    /* nothing in range: no vertex */
    b.n = 0;
    track(&b, 300.0, 0.5, 0.1f, 0, 5);
    roi = as_roi(&b, 0.0f, (float)(100 * DEG));
    r = run_ref(&cfg, &roi, NULL);
    ck_assert_uint_eq(r.n_vertices, 0);
    ck_assert_uint_eq(r.pairs, 15);
    ck_assert_uint_eq(r.entries, 0);
}
END_TEST

START_TEST(bad_points_are_named)
{
    static roi_buf_t b;
    b.n = 0;
    track(&b, 0.0, 0.5, 0.5f, 0, 3);
    b.pt[2].phi = 2.0f; /* beyond a 1 rad RoI from 0 */
    zf_roi_t roi = as_roi(&b, 0.0f, 1.0f);
    zf_config_t cfg;
    zf_config_default(&cfg);
    zf_ref_t *ref = NULL;
    zf_fast_t *fast = NULL;
    tusk_error_t err;
    ck_assert_int_eq(zf_ref_new(&ref, &cfg, &err), TUSK_OK);
    ck_assert_int_eq(zf_fast_new(&fast, &cfg, 2, &err), TUSK_OK);
    zf_result_t r[3];
    ck_assert_int_eq(zf_ref_roi(ref, &roi, r, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "RoI 42: spacepoint 2 at phi 2 rad lies outside the RoI");
    b.pt[2].phi = NAN;
    ck_assert_int_eq(zf_ref_roi(ref, &roi, r, &err), TUSK_EINVAL);
    b.pt[2].phi = 0.5f;
    b.pt[3].layer = 19;
    ck_assert_int_eq(zf_ref_roi(ref, &roi, r, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "spacepoint 3 is in layer 19");
    /* fast names the lowest bad RoI of a batch */
    zf_batch_t *batch = zf_batch_new();
    b.pt[3].layer = 3;
    roi.event = 1;
    ck_assert_int_eq(zf_batch_add(batch, &roi, &err), TUSK_OK);
    b.pt[1].layer = 25;
    roi.event = 2;
    ck_assert_int_eq(zf_batch_add(batch, &roi, &err), TUSK_OK);
    roi.event = 3;
    ck_assert_int_eq(zf_batch_add(batch, &roi, &err), TUSK_OK);
    ck_assert_int_eq(zf_fast_run(fast, batch, r, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "RoI 2: spacepoint 1 is in layer 25");
    /* settings */
    cfg.bin_mm = 0.7;
    ck_assert_int_eq(zf_config_check(&cfg, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "whole number");
    zf_config_default(&cfg);
    ck_assert_int_eq(zf_config_set(&cfg, "mode", "quads", &err), TUSK_EPARAM);
    ck_assert_int_eq(zf_config_set(&cfg, "slice_deg", "0", &err), TUSK_EPARAM);
    ck_assert_int_eq(zf_config_set(&cfg, "triplet_dphi", "0.002", &err), TUSK_OK);
    ck_assert(cfg.triplet_dphi == 0.002);
    zf_config_t other = cfg;
    other.precision = ZF_PREC_DOUBLE;
    ck_assert_uint_eq(zf_config_digest(&cfg), zf_config_digest(&other)); /* precision is not in the digest */
    other.mode = ZF_TRIPLETS;
    ck_assert_uint_ne(zf_config_digest(&cfg), zf_config_digest(&other));
    zf_batch_destroy(&batch);
    zf_fast_destroy(&fast);
    zf_ref_destroy(&ref);
}
END_TEST

/* ---- against a brute-force z-finder ------------------------------------------------------ */

/* A random RoI: n points on random layers, some on straight tracks from a
 * few vertices (so the histogram has peaks), the rest anywhere; width
 * deg degrees (360: the seam). */
static void random_roi(roi_buf_t *b, uint32_t n, double deg, float *phi_min, float *width)
{
    *width = deg >= 360.0 ? ZF_TWO_PI_F : (float)(deg * DEG);
    *phi_min = (float)(-PI + 2 * PI * tu_uniform());
    b->n = 0;
    while (b->n < n) {
        double phi = (double)*phi_min + (double)*width * tu_uniform();
        if (phi > PI)
            phi -= 2 * PI;
        if (tu_below(2)) {
            /* a stiff track: phi drifts by up to half a slice a layer */
            double zv = -150 + 300 * tu_uniform(), c = -2 + 4 * tu_uniform(), drift = (tu_uniform() - 0.5) * 0.002;
            unsigned first = tu_below(ZF_MAX_LAYERS - 2), last = first + 1 + tu_below(ZF_MAX_LAYERS - first - 1);
            for (unsigned l = first; l <= last && b->n < n; l++) {
                adf_idsp_point_t *p = &b->pt[b->n++];
                p->rho = (float)radius[l];
                p->z = (float)(zv + c * radius[l] + 0.1 * (tu_uniform() - 0.5));
                double f = phi + drift * (l - first);
                p->phi = (float)(f > PI ? f - 2 * PI : f < -PI ? f + 2 * PI : f);
                p->layer = (uint8_t)l;
            }
        } else {
            adf_idsp_point_t *p = &b->pt[b->n++];
            p->layer = (uint8_t)tu_below(ZF_MAX_LAYERS);
            p->rho = (float)radius[p->layer];
            p->z = (float)(-800 + 1600 * tu_uniform());
            p->phi = (float)phi;
        }
    }
    /* keep only points the RoI holds (rounding at its edges) */
    uint32_t k = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        float rel = zf_phi_rel(b->pt[i].phi, *phi_min);
        if (*width >= ZF_TWO_PI_F || rel < *width)
            b->pt[k++] = b->pt[i];
    }
    b->n = k;
}

/* The z-finder by its definition: every ordered pair (p1, p2), p1 in a
 * lower layer, p2 in p1's slice or a neighbour; a third point in a layer
 * above p2 in one of those three slices for triplets. */
static void brute(const zf_config_t *cfg, const zf_roi_t *roi, uint32_t *nh, uint64_t *zs, double *zv_sum,
                  uint64_t *pairs, uint64_t *entries)
{
    int wrap;
    uint32_t S = zf_roi_slices(cfg, roi->phi_width, &wrap);
    float inv = (float)(180.0 / (cfg->slice_deg * PI));
    int32_t *s = malloc((roi->n + 1) * sizeof *s);
    for (uint32_t i = 0; i < roi->n; i++) {
        s[i] = zf_slice_of(zf_phi_rel(roi->pt[i].phi, roi->phi_min), roi->phi_width, inv, (tusk_i32)S, wrap);
        ck_assert_int_ge(s[i], 0);
    }
    unsigned bins = zf_config_bins(cfg);
    memset(nh, 0, bins * sizeof *nh);
    memset(zs, 0, bins * sizeof *zs);
    memset(zv_sum, 0, bins * sizeof *zv_sum);
    *pairs = *entries = 0;
    bool dbl = cfg->precision == ZF_PREC_DOUBLE;
    /* the phi of point j seen from slice si (across the seam: shifted by 2 pi) */
#define NEIGHBOUR(si, j) (s[j] == (si) || s[j] == (si) - 1 || s[j] == (si) + 1 || (wrap && ((si) == 0 && s[j] == (int32_t)S - 1)) || (wrap && ((si) == (int32_t)S - 1 && s[j] == 0)))
#define SHIFT(si, j) (wrap && (si) == 0 && s[j] == (int32_t)S - 1 ? -1 : wrap && (si) == (int32_t)S - 1 && s[j] == 0 ? 1 : 0)
    for (uint32_t i = 0; i < roi->n; i++)
        for (uint32_t j = 0; j < roi->n; j++) {
            const adf_idsp_point_t *a = &roi->pt[i], *c = &roi->pt[j];
            if (c->layer <= a->layer || !NEIGHBOUR(s[i], j))
                continue;
            (*pairs)++;
            int32_t b;
            uint32_t q = 0;
            double zv;
            if (dbl) {
                zv = zf_intercept_d(a->rho, a->z, c->rho, c->z);
                b = zf_bin_d(zv, cfg->z_min_mm, 1.0 / cfg->bin_mm, bins);
                if (b >= 0)
                    q = zf_bin_q_d(zv, cfg->z_min_mm, 1.0 / cfg->bin_mm, b);
            } else {
                float zf = zf_intercept_f(a->rho, a->z, c->rho, c->z);
                zv = zf;
                b = zf_bin_f(zf, (float)cfg->z_min_mm, (float)(1.0 / cfg->bin_mm), (float)bins);
                if (b >= 0)
                    q = zf_bin_q_f(zf, (float)cfg->z_min_mm, (float)(1.0 / cfg->bin_mm), b);
            }
            if (b < 0)
                continue;
            if (cfg->mode == ZF_TRIPLETS) {
                bool ok = false;
                float pr_a = zf_phi_rel(a->phi, roi->phi_min), pr_c = zf_phi_rel(c->phi, roi->phi_min);
                for (uint32_t k = 0; k < roi->n && !ok; k++) {
                    const adf_idsp_point_t *d = &roi->pt[k];
                    if (d->layer <= c->layer || !NEIGHBOUR(s[i], k))
                        continue;
                    float pr_d = zf_phi_rel(d->phi, roi->phi_min);
                    if (dbl) {
                        double two = (double)ZF_TWO_PI_F;
                        ok = zf_triplet_ok_d(a->rho, pr_a, a->z, c->rho, (double)pr_c + SHIFT(s[i], j) * two, c->z,
                                             d->rho, (double)pr_d + SHIFT(s[i], k) * two, d->z, cfg->triplet_dz_mm,
                                             cfg->triplet_dphi);
                    } else {
                        float two = ZF_TWO_PI_F;
                        ok = zf_triplet_ok_f(a->rho, pr_a, a->z, c->rho, pr_c + (float)SHIFT(s[i], j) * two, c->z,
                                             d->rho, pr_d + (float)SHIFT(s[i], k) * two, d->z,
                                             (float)cfg->triplet_dz_mm, (float)cfg->triplet_dphi);
                    }
                }
                if (!ok)
                    continue;
            }
            nh[b]++;
            zs[b] += q;
            zv_sum[b] += zv;
            (*entries)++;
        }
#undef NEIGHBOUR
#undef SHIFT
    free(s);
}

START_TEST(reference_equals_brute_force)
{
    static roi_buf_t b;
    unsigned bins = 400;
    uint32_t nh_b[400], nh_r[400];
    uint64_t zs_b[400];
    double zv_b[400];
    for (int round = 0; round < 24; round++) {
        zf_config_t cfg;
        zf_config_default(&cfg);
        cfg.mode = round % 2 ? ZF_TRIPLETS : ZF_PAIRS;
        cfg.precision = round % 4 < 2 ? ZF_PREC_FLOAT : ZF_PREC_DOUBLE;
        cfg.triplet_dz_mm = 2.0;
        cfg.triplet_dphi = 0.003;
        cfg.slice_deg = tu_below(2) ? 0.2 : 1.0;
        double deg = round % 6 == 5 ? 360.0 : 5.0 + 40.0 * tu_uniform();
        float phi_min, width;
        random_roi(&b, 20 + tu_below(700), deg, &phi_min, &width);
        zf_roi_t roi = as_roi(&b, phi_min, width);
        uint64_t pairs, entries;
        brute(&cfg, &roi, nh_b, zs_b, zv_b, &pairs, &entries);
        zf_ref_t *ref = NULL;
        tusk_error_t err;
        ck_assert_int_eq(zf_ref_new(&ref, &cfg, &err), TUSK_OK);
        zf_result_t r;
        ck_assert_msg(zf_ref_roi(ref, &roi, &r, &err) == TUSK_OK, "%s", err.message);
        memcpy(nh_r, zf_ref_nhisto(ref), sizeof nh_r);
        /* zHisto's fixed-point sums: the sum of each intercept's q, whatever the order */
        ck_assert_msg(memcmp(zs_b, zf_ref_zsum(ref), sizeof zs_b) == 0, "round %d: zHisto's sums differ", round);
        zf_ref_destroy(&ref);
        ck_assert_msg(r.pairs == pairs, "round %d: %llu pairs, brute force %llu", round, (unsigned long long)r.pairs,
                      (unsigned long long)pairs);
        ck_assert_uint_eq(r.entries, entries);
        ck_assert_msg(memcmp(nh_b, nh_r, bins * sizeof nh_b[0]) == 0, "round %d: nHisto differs", round);
        /* the peak of the brute-force histogram */
        uint32_t best = 0, at = 0;
        for (uint32_t k = 0; k + 2 < bins; k++)
            if (nh_b[k] + nh_b[k + 1] + nh_b[k + 2] > best)
                best = nh_b[k] + nh_b[k + 1] + nh_b[k + 2], at = k;
        ck_assert_uint_eq(r.n_vertices, best > 0);
        if (best) {
            ck_assert_uint_eq(r.vertex[0].bin, at);
            ck_assert_uint_eq(r.vertex[0].count, best);
            ck_assert(r.vertex[0].z0 >= cfg.z_min_mm + at - 1e-3 && r.vertex[0].z0 <= cfg.z_min_mm + at + 3 + 1e-3);
            /* z0 against the plain mean of the window's intercepts: within the quantum (2^-24 of a
             * bin) and the rounding of t = (z_V - z_min) / width and of z0 in the arithmetic's
             * precision (float: 2^-15 of a bin for t < 512, 2 ulp of z0; double: far less) */
            double mean = (zv_b[at] + zv_b[at + 1] + zv_b[at + 2]) / best;
            double tol = cfg.precision == ZF_PREC_DOUBLE ? 1e-9 + ldexp(cfg.bin_mm, -ZF_ZQ_BITS)
                                        : ldexp(cfg.bin_mm, -14) + 2 * ldexp(fabs(mean) + 1, -23);
            ck_assert_msg(fabs(r.vertex[0].z0 - mean) <= tol, "round %d: z0 %.9g, mean intercept %.9g (tolerance %.2g)",
                          round, r.vertex[0].z0, mean, tol);
        }
    }
}
END_TEST

START_TEST(fast_equals_reference)
{
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    sc.seed = tu_rand();
    sc.pileup = 20; /* between the samples: quick, yet dense */
    zf_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_int_eq(zf_sim_new(&sim, &sc, &err), TUSK_OK);
    zf_batch_t *batch = zf_batch_new();
    for (uint64_t i = 0; i < 12; i++) {
        const zf_sim_roi_t *r;
        ck_assert_msg(zf_sim_make(sim, i, &r, &err) == TUSK_OK, "%s", err.message);
        ck_assert_int_eq(zf_batch_add(batch, &r->roi, &err), TUSK_OK);
    }
    for (int k = 0; k < 4; k++) {
        zf_config_t cfg;
        zf_config_default(&cfg);
        cfg.mode = k % 2 ? ZF_TRIPLETS : ZF_PAIRS;
        cfg.precision = k < 2 ? ZF_PREC_FLOAT : ZF_PREC_DOUBLE;
        cfg.second_vertex = true;
        zf_ref_t *ref = NULL;
        zf_fast_t *fast = NULL;
        ck_assert_int_eq(zf_ref_new(&ref, &cfg, &err), TUSK_OK);
        ck_assert_int_eq(zf_fast_new(&fast, &cfg, 1 + tu_below(4), &err), TUSK_OK);
        zf_result_t a[12], b[12];
        ck_assert_int_eq(zf_ref_run(ref, batch, a, &err), TUSK_OK);
        ck_assert_int_eq(zf_fast_run(fast, batch, b, &err), TUSK_OK);
        for (int i = 0; i < 12; i++) {
            ck_assert_uint_eq(a[i].n_vertices, b[i].n_vertices);
            ck_assert_uint_eq(a[i].pairs, b[i].pairs);
            ck_assert_uint_eq(a[i].entries, b[i].entries);
            for (unsigned v = 0; v < a[i].n_vertices; v++)
                ck_assert(a[i].vertex[v].z0 == b[i].vertex[v].z0 && a[i].vertex[v].bin == b[i].vertex[v].bin &&
                          a[i].vertex[v].count == b[i].vertex[v].count);
        }
        zf_fast_destroy(&fast);
        zf_ref_destroy(&ref);
    }
    zf_batch_destroy(&batch);
    zf_sim_destroy(&sim);
}
END_TEST

/* ---- the simulation --------------------------------------------------------------------- */

/* Mean spacepoints of n RoIs of a preset (random seed). */
static double preset_mean(const char *preset, unsigned n, double *spread)
{
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)tu_rand());
    ck_assert_int_eq(tusk_params_set(p, "preset", preset, &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "seed", seed, &err), TUSK_OK);
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    ck_assert_msg(zf_sim_config_read(&sc, p, &err) == TUSK_OK, "%s", err.message);
    zf_sim_t *sim = NULL;
    ck_assert_int_eq(zf_sim_new(&sim, &sc, &err), TUSK_OK);
    double s = 0, s2 = 0;
    for (unsigned i = 0; i < n; i++) {
        const zf_sim_roi_t *r;
        ck_assert_int_eq(zf_sim_make(sim, i, &r, &err), TUSK_OK);
        s += r->roi.n;
        s2 += (double)r->roi.n * r->roi.n;
        /* every point inside the RoI, its truth consistent */
        ck_assert_uint_eq(r->truth->n_points, r->roi.n);
        for (uint32_t k = 0; k < r->roi.n; k++) {
            tu_check(zf_phi_rel(r->roi.pt[k].phi, r->roi.phi_min) < r->roi.phi_width);
            tu_check(r->roi.pt[k].layer < ZF_MAX_LAYERS);
            const adf_idtruth_point_t *t = &r->truth_points[k];
            tu_check(t->vertex == ADF_IDTRUTH_NOISE_VERTEX || t->vertex <= r->truth->n_pileup);
        }
    }
    zf_sim_destroy(&sim);
    tusk_params_destroy(&p);
    double mean = s / n;
    *spread = sqrt(s2 / n - mean * mean);
    return mean;
}

START_TEST(presets_give_the_thesis_samples)
{
    /* Table 4.2: 333 and 8,104 spacepoints in a 100 degree RoI. The bounds
     * are 6 standard errors of the mean (spreads measured on 40,000 and
     * 4,000 RoIs: 157 and 892): wrong only once in 10^9 runs. */
    double spread;
    double low = preset_mean("lowlum", 400, &spread);
    ck_assert_msg(fabs(low - 333.0) < 6 * 157.0 / sqrt(400.0), "lowlum: %.1f spacepoints a RoI", low);
    ck_assert(spread > 100 && spread < 220);
    double high = preset_mean("highlum", 40, &spread);
    ck_assert_msg(fabs(high - 8104.0) < 6 * 892.0 / sqrt(40.0), "highlum: %.1f spacepoints a RoI", high);
}
END_TEST

START_TEST(simulation_is_reproducible)
{
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    sc.seed = tu_rand();
    zf_sim_t *a = NULL, *b = NULL;
    tusk_error_t err;
    ck_assert_int_eq(zf_sim_new(&a, &sc, &err), TUSK_OK);
    ck_assert_int_eq(zf_sim_new(&b, &sc, &err), TUSK_OK);
    const zf_sim_roi_t *ra, *rb;
    /* RoI 5 is the same whether or not RoIs 0-4 came first */
    for (uint64_t i = 0; i < 6; i++)
        ck_assert_int_eq(zf_sim_make(a, i, &ra, &err), TUSK_OK);
    ck_assert_int_eq(zf_sim_make(b, 5, &rb, &err), TUSK_OK);
    ck_assert_uint_eq(ra->roi.n, rb->roi.n);
    for (uint32_t i = 0; i < ra->roi.n; i++)
        tu_check(ra->roi.pt[i].rho == rb->roi.pt[i].rho && ra->roi.pt[i].phi == rb->roi.pt[i].phi &&
                 ra->roi.pt[i].z == rb->roi.pt[i].z && ra->roi.pt[i].layer == rb->roi.pt[i].layer);
    ck_assert(ra->truth->z_signal == rb->truth->z_signal);
    ck_assert_int_eq(zf_sim_make(b, 4, &rb, &err), TUSK_OK);
    ck_assert(ra->truth->z_signal != rb->truth->z_signal);
    /* its settings are checked and named */
    tusk_params_t *p = tusk_params_new();
    tusk_params_set(p, "layers_mm", "50 40 30", &err);
    zf_sim_config_default(&sc);
    ck_assert_int_eq(zf_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "3 layer radii but 19 half-lengths");
    tusk_params_set(p, "half_lengths_mm", "400", &err);
    zf_sim_config_default(&sc);
    ck_assert_int_eq(zf_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "grow");
    tusk_params_destroy(&p);
    p = tusk_params_new();
    tusk_params_set(p, "preset", "midlum", &err);
    ck_assert_int_eq(zf_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "'midlum' is not lowlum, highlum or none");
    tusk_params_destroy(&p);
    zf_sim_destroy(&a);
    zf_sim_destroy(&b);
}
END_TEST

/* ---- frames through the backend, and the quality analysis ---------------------------------- */

/* A buffer of the three RoIs of qa_fixed_sample: spacepoints (a planted
 * vertex each), a data:zvertex with z0 = truth + d[k], the truth. */
static size_t fixed_sample(uint8_t *buf, size_t cap, const zf_config_t *cfg, int precision)
{
    static roi_buf_t b;
    static const double zt[3] = {12.25, -40.5, 100.0}, d[3] = {0.5, -0.25, 3.0};
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, cap);
    adf_error_t err;
    adf_idtruth_t *t = calloc(1, sizeof *t);
    for (int k = 0; k < 3; k++) {
        b.n = 0;
        track(&b, zt[k], 0.5, 0.2f, 0, 4);
        track(&b, zt[k], -0.25, 0.6f, 1, 5);
        adf_idsp_t h = {b.n, 0.0f, 1.0f, 0, NULL};
        ck_assert_int_eq(adf_idsp_encode(w, (uint32_t)k, (uint64_t)k, &h, b.pt, &err), ADF_OK);
        zf_result_t r = {1, {{zt[k] + d[k], 20, 0}}, 20, 20};
        zf_config_t c = *cfg;
        c.precision = precision;
        adf_zvertex_t zv;
        zf_result_frame(&r, &c, ZF_REFERENCE, &zv);
        ck_assert_int_eq(adf_zvertex_encode(w, (uint32_t)k, (uint64_t)k, &zv, &err), ADF_OK);
        t->z_signal = (float)zt[k];
        t->n_points = b.n;
        adf_idtruth_point_t tp[64];
        for (uint32_t i = 0; i < b.n; i++)
            tp[i] = (adf_idtruth_point_t){i / 5, 0};
        ck_assert_int_eq(adf_idtruth_encode(w, (uint32_t)k, (uint64_t)k, t, tp, &err), ADF_OK);
    }
    size_t used = adf_writer_used(w);
    free(t);
    adf_writer_destroy(&w);
    return used;
}

START_TEST(qa_on_a_fixed_sample)
{
    static uint8_t buf[16384];
    zf_config_t cfg;
    zf_config_default(&cfg);
    size_t n = fixed_sample(buf, sizeof buf, &cfg, ZF_PREC_FLOAT);
    zf_qa_config_t qc;
    zf_qa_config_default(&qc);
    snprintf(qc.label, sizeof qc.label, "fixed");
    zf_qa_t *qa = NULL;
    tusk_error_t err;
    ck_assert_int_eq(zf_qa_new(&qa, &qc, &err), TUSK_OK);
    /* fed in two pieces, split inside RoI 1 (before its data:zvertex) */
    size_t cut = 0;
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, buf, n, 0);
    adf_frame_t f;
    while (adf_reader_next(r, &f) == ADF_OK)
        if (f.key.type == ADF_TYPE_DATA_ZVERTEX && f.key.event == 1)
            cut = (size_t)f.offset;
    ck_assert_uint_gt(cut, 0);
    adf_reader_destroy(&r);
    ck_assert_msg(zf_qa_feed(qa, buf, cut, 0, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(zf_qa_feed(qa, buf + cut, n - cut, cut, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(zf_qa_finish(qa, &err), TUSK_OK);
    const zf_qa_row_t *rows;
    ck_assert_uint_eq(zf_qa_rows(qa, &rows), 1);
    const zf_qa_row_t *row = &rows[0];
    ck_assert_str_eq(row->label, "fixed");
    ck_assert(row->mode == ZF_PAIRS && row->precision == ZF_PREC_FLOAT && row->backend == ZF_REFERENCE);
    ck_assert_uint_eq(row->rois, 3);
    ck_assert_uint_eq(row->found, 3);
    /* |dz| = 0.5, 0.25, 3: mean 1.25, std sqrt((0.25 + 0.0625 + 9) / 3 - 1.5625) */
    ck_assert(fabs(row->true_mean - 1.25) < 1e-12);
    ck_assert(fabs(row->true_std - sqrt((0.25 + 0.0625 + 9.0) / 3.0 - 1.5625)) < 1e-12);
    /* the reference finds every planted vertex exactly */
    ck_assert_uint_eq(row->ref_rois, 3);
    ck_assert(fabs(row->ref_mean - 1.25) < 1e-12);
    ck_assert_uint_eq(row->within_1mm, 2);
    ck_assert(fabs(row->core_mean - 0.375) < 1e-12 && fabs(row->core_std - 0.125) < 1e-12);
    ck_assert_uint_eq(zf_qa_unmatched(qa), 0);
    zf_qa_destroy(&qa);

    /* settings that differ from the z-finder's are refused */
    qc.alg.bin_mm = 0.5;
    ck_assert_int_eq(zf_qa_new(&qa, &qc, &err), TUSK_OK);
    ck_assert_int_eq(zf_qa_feed(qa, buf, n, 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "other settings");
    zf_qa_destroy(&qa);
    /* a RoI twice is refused; one without truth is counted as unmatched */
    qc.alg.bin_mm = 1.0;
    ck_assert_int_eq(zf_qa_new(&qa, &qc, &err), TUSK_OK);
    ck_assert_int_eq(zf_qa_feed(qa, buf, cut, 0, &err), TUSK_OK);
    ck_assert_int_eq(zf_qa_finish(qa, &err), TUSK_OK);
    ck_assert_uint_eq(zf_qa_unmatched(qa), 1);
    zf_qa_destroy(&qa);
    ck_assert_int_eq(zf_qa_new(&qa, &qc, &err), TUSK_OK);
    ck_assert_int_eq(zf_qa_feed(qa, buf, cut, 0, &err), TUSK_OK);
    ck_assert_int_eq(zf_qa_feed(qa, buf, cut, 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "RoI 1: a second data:id_spacepoints");
    zf_qa_destroy(&qa);
}
END_TEST

START_TEST(frames_through_the_backend)
{
    static uint8_t in[16384], out[20000];
    zf_config_t cfg;
    zf_config_default(&cfg);
    size_t n = fixed_sample(in, sizeof in, &cfg, ZF_PREC_FLOAT);
    /* the buffer without its data:zvertex frames: spacepoints and truth */
    static uint8_t src[16384];
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_writer_t *w = adf_writer_new();
    adf_reader_reset(r, in, n, 0);
    adf_writer_reset(w, src, sizeof src);
    adf_frame_t f;
    while (adf_reader_next(r, &f) == ADF_OK)
        if (f.key.type != ADF_TYPE_DATA_ZVERTEX)
            ck_assert_int_eq(adf_writer_put_frame(w, &f), ADF_OK);
    size_t m = adf_writer_used(w);
    zf_batch_t *b = zf_batch_new();
    tusk_error_t err;
    ck_assert_int_eq(zf_frames_read(b, src, m, 0, &err), TUSK_OK);
    ck_assert_uint_eq(zf_batch_count(b), 3);
    zf_roi_t roi;
    zf_batch_roi(b, 2, &roi);
    ck_assert_uint_eq(roi.event, 2);
    ck_assert_uint_eq(roi.n, 10);
    zf_ref_t *ref = NULL;
    ck_assert_int_eq(zf_ref_new(&ref, &cfg, &err), TUSK_OK);
    zf_result_t res[3];
    ck_assert_int_eq(zf_ref_run(ref, b, res, &err), TUSK_OK);
    ck_assert(res[0].vertex[0].z0 == 12.25 && res[1].vertex[0].z0 == -40.5 && res[2].vertex[0].z0 == 100.0);
    for (int keep = 0; keep < 2; keep++) {
        adf_writer_reset(w, out, sizeof out);
        ck_assert_int_eq(zf_frames_write(src, m, res, 3, &cfg, ZF_REFERENCE, keep, w, &err), TUSK_OK);
        ck_assert_uint_le(adf_writer_used(w), m + zf_frames_extra(3));
        /* in order: [spacepoints], zvertex, truth (unchanged) per RoI */
        adf_reader_reset(r, out, adf_writer_used(w), 0);
        adf_reader_t *r2 = adf_reader_new(ADF_ON_ERROR_STOP);
        adf_reader_reset(r2, src, m, 0);
        adf_frame_t g, h;
        for (uint32_t k = 0; k < 3; k++) {
            ck_assert_int_eq(adf_reader_next(r2, &h), ADF_OK); /* spacepoints */
            if (keep) {
                ck_assert_int_eq(adf_reader_next(r, &g), ADF_OK);
                ck_assert(g.key.length == h.key.length && memcmp(g.payload, h.payload, h.payload_size) == 0);
            }
            ck_assert_int_eq(adf_reader_next(r, &g), ADF_OK);
            ck_assert_uint_eq(g.key.type, ADF_TYPE_DATA_ZVERTEX);
            ck_assert_uint_eq(g.key.event, k);
            adf_zvertex_t zv;
            adf_error_t ae;
            ck_assert_int_eq(adf_zvertex_decode(&g, &zv, &ae), ADF_OK);
            ck_assert(zv.vertex[0].z0 == res[k].vertex[0].z0 && zv.settings == zf_config_digest(&cfg));
            ck_assert_int_eq(adf_reader_next(r2, &h), ADF_OK); /* truth */
            ck_assert_int_eq(adf_reader_next(r, &g), ADF_OK);
            ck_assert(g.key.type == ADF_TYPE_DATA_ID_TRUTH && g.key.length == h.key.length &&
                      memcmp(g.payload, h.payload, h.payload_size) == 0);
        }
        ck_assert_int_eq(adf_reader_next(r, &g), ADF_END);
        adf_reader_destroy(&r2);
    }
    /* a malformed spacepoint frame is named */
    src[ADF_KEY_SIZE] ^= 1; /* n_points of the first frame */
    ck_assert_int_eq(zf_frames_read(b, src, m, 1000, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "data:id_spacepoints at offset 1000");
    zf_ref_destroy(&ref);
    zf_batch_destroy(&b);
    adf_writer_destroy(&w);
    adf_reader_destroy(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("zfinder");
    TCase *tc = tcase_create("frames");
    tcase_add_test(tc, spacepoints_round_trip);
    tcase_add_test(tc, spacepoints_malformed);
    tcase_add_test(tc, zvertex_and_truth_codecs);
    suite_add_tcase(s, tc);
    tc = tcase_create("algorithm");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, intercept_and_bins);
    tcase_add_test(tc, quantization_bounds);
    tcase_add_test(tc, triplet_test);
    tcase_add_test(tc, planted_vertex_found_exactly);
    tcase_add_test(tc, second_vertex_and_ties);
    tcase_add_test(tc, bad_points_are_named);
    tcase_add_test(tc, reference_equals_brute_force);
    tcase_add_test(tc, fast_equals_reference);
    suite_add_tcase(s, tc);
    tc = tcase_create("simulation");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, presets_give_the_thesis_samples);
    tcase_add_test(tc, simulation_is_reproducible);
    suite_add_tcase(s, tc);
    tc = tcase_create("analysis");
    tcase_add_test(tc, qa_on_a_fixed_sample);
    tcase_add_test(tc, frames_through_the_backend);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
