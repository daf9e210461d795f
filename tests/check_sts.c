/* check_sts.c - the STS reconstruction on the CPU (tusk/sts.h): its
 * frames (round trips, the exact layout, malformed payloads), the
 * algorithm on hand-built modules (a planted cluster found exactly, the
 * time window's edges, edge strips and the side boundary, front/back
 * pairing geometry, the original finder's deviation), the cluster
 * definition's properties and the fast backend's independence of its
 * threads on random timeslices, the difference between the original and
 * the parallel finder measured, the simulation's sanity (digis a
 * collision, charge sharing, noise rate, dead time) and the quality
 * analysis on a fixed sample, its timeslices spread over many buffers.
 * Random inputs are fresh on every run (TUSK_TEST_SEED replays one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "base/radix.h"
#include "sts_private.h"
#include "testutil.h"
#include "tusk/adf.h"
#include "tusk/sts.h"

/* ---- frames ---------------------------------------------------------------------------- */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
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

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A frame of `type` around a payload, decoded by `decode` into `out`. */
typedef int (*decode_fn)(const adf_frame_t *f, void *out, adf_error_t *err);

static int decode_raw(uint32_t type, const uint8_t *payload, size_t size, decode_fn fn, void *out, adf_error_t *err)
{
    uint8_t *buf = malloc(ADF_KEY_SIZE + size + 1);
    tu_put_frame(buf, type, 1, 1, payload, size);
    adf_frame_t f = {{(uint32_t)(ADF_KEY_SIZE + size), type, 1, 1}, buf + ADF_KEY_SIZE, (uint32_t)size, 40};
    int rc = fn(&f, out, err);
    free(buf);
    return rc;
}

static int dec_digis(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_sts_digis_decode(f, out, err);
}
static int dec_clusters(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_sts_clusters_decode(f, out, err);
}
static int dec_hits(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_sts_hits_decode(f, out, err);
}
static int dec_truth(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_sts_truth_decode(f, out, err);
}

static adf_sts_digis_t module_header(uint16_t module, uint16_t strips, uint32_t length_ns, uint32_t n)
{
    adf_sts_digis_t h;
    memset(&h, 0, sizeof h);
    h.n_digis = n;
    h.module = module;
    h.station = 3;
    h.flags = 0x5A;
    h.modules = 7;
    h.strips = strips;
    h.length_ns = length_ns;
    h.pitch_mm = 0.058f;
    h.stereo_deg = 7.5f;
    h.length_mm = 60.0f;
    h.origin[0] = -10.0f;
    h.origin[1] = 20.0f;
    h.origin[2] = 300.0f;
    return h;
}

/* A frame in a buffer of its own, read back by a reader. */
static adf_frame_t only_frame(const uint8_t *buf, size_t size)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f;
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    adf_frame_t g;
    ck_assert_int_eq(adf_reader_next(r, &g), ADF_END);
    adf_reader_destroy(&r);
    return f;
}

START_TEST(digis_round_trip_and_layout)
{
    uint32_t n = tu_below(500);
    uint16_t strips = (uint16_t)(1 + tu_below(ADF_STS_MAX_STRIPS));
    uint32_t length = 1 + tu_below(1u << 30);
    uint64_t *k = malloc((n + 1) * 8), *back = malloc((n + 1) * 8);
    for (uint32_t i = 0; i < n; i++)
        k[i] = adf_sts_key(tu_below(2u * strips), tu_below(length), tu_below(65536));
    adf_sts_digis_t h = module_header((uint16_t)tu_below(ADF_STS_MAX_MODULE + 1), strips, length, n);
    size_t cap = ADF_KEY_SIZE + adf_sts_digis_payload_size(n);
    uint8_t *buf = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, cap);
    adf_error_t err;
    ck_assert_msg(adf_sts_digis_encode(w, 42, 77, &h, k, &err) == ADF_OK, "%s", err.message);
    ck_assert_uint_eq(adf_writer_used(w), cap);
    adf_frame_t f = only_frame(buf, cap);
    ck_assert_uint_eq(f.key.type, ADF_TYPE_DATA_STS_DIGIS);
    ck_assert_str_eq(adf_type_name(f.key.type), "data:sts_digis");
    ck_assert_uint_eq(f.key.event, 42);
    adf_sts_digis_t d;
    ck_assert_msg(adf_sts_digis_decode(&f, &d, &err) == ADF_OK, "%s", err.message);
    ck_assert(d.n_digis == n && d.module == h.module && d.station == 3 && d.flags == 0x5A && d.modules == 7 &&
              d.strips == strips && d.length_ns == length && d.pitch_mm == h.pitch_mm && d.stereo_deg == 7.5f &&
              d.length_mm == 60.0f && d.origin[0] == -10.0f && d.origin[1] == 20.0f && d.origin[2] == 300.0f);
    adf_sts_digis_keys(&d, 0, n, back);
    ck_assert(n == 0 || memcmp(k, back, n * 8) == 0);
    /* FORMAT.md: charge u16 at +0, time u32 at +2, channel u16 at +6; the
     * 8 bytes as a little-endian u64 are the key */
    const uint8_t *pl = buf + ADF_KEY_SIZE;
    ck_assert_uint_eq(get_u32(pl), n);
    ck_assert_uint_eq(pl[10] | pl[11] << 8, strips);
    ck_assert_uint_eq(get_u32(pl + 12), length);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *q = pl + 40 + 8 * i;
        uint64_t v = 0;
        for (int b = 7; b >= 0; b--)
            v = v << 8 | q[b];
        tu_check(v == k[i]);
        tu_check((uint32_t)(q[0] | q[1] << 8) == adf_sts_key_charge(k[i]));
        tu_check(get_u32(q + 2) == adf_sts_key_time(k[i]));
        tu_check((uint32_t)(q[6] | q[7] << 8) == adf_sts_key_channel(k[i]));
    }
    /* the kernels' view of the key is the format's */
    for (int i = 0; i < 1000; i++) {
        uint32_t c = tu_below(65536), t = (uint32_t)tu_rand(), q = tu_below(65536);
        uint64_t key = adf_sts_key(c, t, q);
        tu_check(sts_key_channel(key) == c && sts_key_time(key) == t && sts_key_charge(key) == q);
    }
    adf_writer_destroy(&w);
    free(buf);
    free(k);
    free(back);
}
END_TEST

START_TEST(digis_malformed)
{
    enum { N = 3 };
    uint8_t pl[40 + 8 * N];
    memset(pl, 0, sizeof pl);
    adf_sts_digis_t h = module_header(5, 16, 1000, N);
    uint64_t keys[N] = {adf_sts_key(0, 10, 5), adf_sts_key(31, 999, 6), adf_sts_key(16, 0, 7)};
    uint8_t buf[256];
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, sizeof buf);
    adf_error_t err;
    ck_assert_int_eq(adf_sts_digis_encode(w, 1, 1, &h, keys, &err), ADF_OK);
    memcpy(pl, buf + ADF_KEY_SIZE, sizeof pl);
    adf_sts_digis_t d;
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_DIGIS, pl, sizeof pl, dec_digis, &d, &err), ADF_OK);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_DIGIS, pl, 39, dec_digis, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "shorter than its 40-byte header");
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_DIGIS, pl, sizeof pl - 1, dec_digis, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "64 expected for 3 digis");
    ck_assert_uint_eq(err.offset, 40);
    uint8_t bad[sizeof pl];
    /* a channel of the other side's end, a time at the timeslice's end */
    memcpy(bad, pl, sizeof pl);
    put_u16(bad + 40 + 8 + 6, 32);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_DIGIS, bad, sizeof bad, dec_digis, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "digi 1 is in channel 32, the module has 32");
    memcpy(bad, pl, sizeof pl);
    put_u32(bad + 40 + 16 + 2, 1000);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_DIGIS, bad, sizeof bad, dec_digis, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "digi 2 has time 1000 ns, the timeslice is 1000 ns long");
    struct {
        size_t at;
        int kind; /* 0 u16, 1 u32, 2 f32 */
        double value;
        const char *needle;
    } cases[] = {{4, 0, 65535, "module 65535"},   {8, 0, 0, "0 modules"},
                 {10, 0, 0, "0 strips"},          {10, 0, 4097, "4097 strips"},
                 {12, 1, 0, "timeslice of 0 ns"}, {16, 2, 0.0, "strip pitch 0"},
                 {16, 2, NAN, "strip pitch"},     {20, 2, 0.0, "stereo angle 0"},
                 {20, 2, 90.0, "stereo angle 90"}, {24, 2, -1.0, "strip length -1"},
                 {32, 2, INFINITY, "not finite"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(bad, pl, sizeof pl);
        if (cases[i].kind == 0)
            put_u16(bad + cases[i].at, (uint16_t)cases[i].value);
        else if (cases[i].kind == 1)
            put_u32(bad + cases[i].at, (uint32_t)cases[i].value);
        else
            put_f32(bad + cases[i].at, (float)cases[i].value);
        ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_DIGIS, bad, sizeof bad, dec_digis, &d, &err), ADF_EPAYLOAD);
        tu_assert_error(&err, ADF_EPAYLOAD, cases[i].needle);
    }
    put_u32(bad, ADF_STS_MAX_DIGIS + 1);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_DIGIS, bad, sizeof bad, dec_digis, &d, &err), ADF_ERANGE);
    /* the encoder refuses the same and writes nothing */
    adf_writer_reset(w, buf, sizeof buf);
    keys[1] = adf_sts_key(32, 0, 0);
    ck_assert_int_eq(adf_sts_digis_encode(w, 1, 1, &h, keys, &err), ADF_EINVAL);
    tu_assert_error(&err, ADF_EINVAL, "channel 32");
    ck_assert_uint_eq(adf_writer_used(w), 0);
    /* another type is not a digi frame */
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_HITS, pl, sizeof pl, dec_digis, &d, &err), ADF_EBADTYPE);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(clusters_hits_truth_codecs)
{
    uint8_t buf[8192];
    adf_writer_t *w = adf_writer_new();
    adf_error_t err;
    /* clusters: front ones within the front side, back ones within the back */
    adf_sts_cluster_t c[4] = {{0, 2, 300, 10.5f, 2.5f, 1.25f, 0.1f},
                              {14, 2, 100, 11.0f, 3.5f, 15.0f, 0.3f},
                              {16, 1, 70, 12.0f, 5.0f, 0.5f, 0.29f},
                              {20, 12, 999, 1e6f, 1.0f, 9.9f, 0.01f}};
    adf_sts_clusters_t hc = {2, 2, 0xDEADBEEF, 9, 16, ADF_STS_OPENCL, 0x11, NULL};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_msg(adf_sts_clusters_encode(w, 3, 4, &hc, c, &err) == ADF_OK, "%s", err.message);
    size_t used = adf_writer_used(w);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + 18 + 4 * 24);
    adf_frame_t f = only_frame(buf, used);
    adf_sts_clusters_t dc;
    ck_assert_msg(adf_sts_clusters_decode(&f, &dc, &err) == ADF_OK, "%s", err.message);
    ck_assert(dc.n_front == 2 && dc.n_back == 2 && dc.settings == 0xDEADBEEF && dc.module == 9 && dc.strips == 16 &&
              dc.backend == ADF_STS_OPENCL && dc.flags == 0x11);
    for (uint32_t i = 0; i < 4; i++) {
        adf_sts_cluster_t x;
        adf_sts_cluster(&dc, i, &x);
        ck_assert(memcmp(&x, &c[i], sizeof x) == 0);
    }
    uint8_t pl[18 + 4 * 24];
    memcpy(pl, buf + ADF_KEY_SIZE, sizeof pl);
    ck_assert_uint_eq(get_u32(pl + 8), 0xDEADBEEF);
    ck_assert_uint_eq(pl[16], ADF_STS_OPENCL);
    uint8_t bad[sizeof pl];
    memcpy(bad, pl, sizeof pl);
    put_u16(bad + 18 + 24 + 0, 15); /* front cluster 1 at 15-16: across the side boundary */
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_CLUSTERS, bad, sizeof bad, dec_clusters, &dc, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "cluster 1 (front side) spans channels 15-16");
    memcpy(bad, pl, sizeof pl);
    put_u16(bad + 18 + 48 + 2, 0);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_CLUSTERS, bad, sizeof bad, dec_clusters, &dc, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "cluster 2 has no digi");
    memcpy(bad, pl, sizeof pl);
    bad[16] = 4;
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_CLUSTERS, bad, sizeof bad, dec_clusters, &dc, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "backend 4");
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_CLUSTERS, pl, sizeof pl - 24, dec_clusters, &dc, &err), ADF_EPAYLOAD);
    c[3].size = 13; /* 20 + 13 > 32 */
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_sts_clusters_encode(w, 3, 4, &hc, c, &err), ADF_EINVAL);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    /* hits */
    adf_sts_hit_t h[2] = {{1, 2, 3, 0.1f, 0.2f, 0.01f, 50, 3, 7, 8}, {-1, -2, 300, 1, 2, -0.5f, 1e3f, 2, 0, 4}};
    adf_sts_hits_t hh = {2, 0x12345678, 9, ADF_STS_FAST, 0x22, NULL};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_msg(adf_sts_hits_encode(w, 3, 4, &hh, h, &err) == ADF_OK, "%s", err.message);
    used = adf_writer_used(w);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + 12 + 2 * 40);
    f = only_frame(buf, used);
    adf_sts_hits_t dh;
    ck_assert_msg(adf_sts_hits_decode(&f, &dh, &err) == ADF_OK, "%s", err.message);
    ck_assert(dh.n_hits == 2 && dh.settings == 0x12345678 && dh.module == 9 && dh.backend == ADF_STS_FAST &&
              dh.flags == 0x22);
    for (uint32_t i = 0; i < 2; i++) {
        adf_sts_hit_t x;
        adf_sts_hit(&dh, i, &x);
        ck_assert(memcmp(&x, &h[i], sizeof x) == 0);
    }
    ck_assert_uint_eq(get_u32(buf + ADF_KEY_SIZE + 12 + 40 + 36), 4); /* hit 1's back cluster */
    uint8_t hp[12 + 2 * 40];
    memcpy(hp, buf + ADF_KEY_SIZE, sizeof hp);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_HITS, hp, sizeof hp - 1, dec_hits, &dh, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "92 expected for 2 hits");
    hp[10] = 9;
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_HITS, hp, sizeof hp, dec_hits, &dh, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "backend 9");
    hh.backend = 0;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_sts_hits_encode(w, 3, 4, &hh, h, &err), ADF_EINVAL);
    /* truth */
    adf_sts_point_t p[2] = {{5, 1, 1, 2, 3, 4, 5.5f, 6.5f, 224}, {6, 2, -1, -2, -3, -4, 0, 1023.9f, 300}};
    uint32_t dp[3] = {1, ADF_STS_NOISE, 0};
    adf_sts_truth_t ht = {2, 3, 9, 0x3344, NULL, NULL};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_msg(adf_sts_truth_encode(w, 3, 4, &ht, p, dp, &err) == ADF_OK, "%s", err.message);
    used = adf_writer_used(w);
    ck_assert_uint_eq(used, ADF_KEY_SIZE + 12 + 2 * 36 + 3 * 4);
    f = only_frame(buf, used);
    adf_sts_truth_t dt;
    ck_assert_msg(adf_sts_truth_decode(&f, &dt, &err) == ADF_OK, "%s", err.message);
    ck_assert(dt.n_points == 2 && dt.n_digis == 3 && dt.module == 9 && dt.flags == 0x3344);
    for (uint32_t i = 0; i < 2; i++) {
        adf_sts_point_t x;
        adf_sts_truth_point(&dt, i, &x);
        ck_assert(memcmp(&x, &p[i], sizeof x) == 0);
    }
    uint32_t back[3];
    adf_sts_truth_digis(&dt, 0, 3, back);
    ck_assert(memcmp(back, dp, sizeof back) == 0);
    uint8_t tp[12 + 2 * 36 + 3 * 4];
    memcpy(tp, buf + ADF_KEY_SIZE, sizeof tp);
    put_u32(tp + 12 + 72 + 8, 2); /* digi 2 from point 2 of 2 */
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_TRUTH, tp, sizeof tp, dec_truth, &dt, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "digi 2 comes from point 2, the module has 2");
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_STS_TRUTH, tp, 11, dec_truth, &dt, &err), ADF_EPAYLOAD);
    dp[0] = 2;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_sts_truth_encode(w, 3, 4, &ht, p, dp, &err), ADF_EINVAL);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    adf_writer_destroy(&w);
}
END_TEST

/* ---- the algorithm on hand-built modules ---------------------------------------------------- */

typedef struct mod {
    sts_module_t m;
    uint64_t digi[64];
} mod_t;

static void mod_init(mod_t *x, uint16_t strips)
{
    memset(x, 0, sizeof *x);
    x->m.hdr = module_header(1, strips, 100000, 0);
    x->m.hdr.origin[0] = 0;
    x->m.hdr.origin[1] = 0;
    x->m.digi = x->digi;
}

static void mod_add(mod_t *x, uint32_t channel, uint32_t time, uint32_t charge)
{
    x->digi[x->m.hdr.n_digis++] = adf_sts_key(channel, time, charge);
}

/* The reconstruction of one module by one backend (1 reference, 2 fast). */
static sts_result_t *run_one(const sts_module_t *m, int backend, const sts_config_t *cfg)
{
    sts_batch_t *b = sts_batch_new();
    tusk_error_t err;
    ck_assert_msg(sts_batch_add(b, m, &err) == TUSK_OK, "%s", err.message);
    sts_result_t *res = sts_result_new();
    if (backend == STS_REFERENCE) {
        sts_ref_t *r;
        ck_assert_int_eq(sts_ref_new(&r, cfg, &err), TUSK_OK);
        ck_assert_msg(sts_ref_run(r, b, res, &err) == TUSK_OK, "%s", err.message);
        sts_ref_destroy(&r);
    } else {
        sts_fast_t *f;
        ck_assert_int_eq(sts_fast_new(&f, cfg, 2, &err), TUSK_OK);
        ck_assert_msg(sts_fast_run(f, b, res, &err) == TUSK_OK, "%s", err.message);
        sts_fast_destroy(&f);
    }
    sts_batch_destroy(&b);
    return res;
}

/* "channel+size@time" of every cluster, front first, in the given order. */
static void describe(const sts_result_t *res, char *buf, size_t cap)
{
    uint32_t nf, nb;
    sts_result_counts(res, 0, &nf, &nb, NULL);
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < nf + nb && n < cap; k++) {
        adf_sts_cluster_t c;
        sts_result_cluster(res, 0, k, &c);
        n += (size_t)snprintf(buf + n, cap - n, "%s%u+%u@%g", k ? " " : "", (unsigned)c.channel, (unsigned)c.size,
                              (double)c.time);
    }
}

static void expect_clusters(const mod_t *x, const sts_config_t *cfg, const char *want)
{
    for (int backend = STS_REFERENCE; backend <= STS_FAST; backend++) {
        sts_result_t *res = run_one(&x->m, backend, cfg);
        char got[1024];
        describe(res, got, sizeof got);
        ck_assert_msg(!strcmp(got, want), "%s: clusters '%s', expected '%s'", sts_backend_name(backend), got, want);
        sts_result_destroy(&res);
    }
}

START_TEST(planted_cluster_found_exactly)
{
    sts_config_t cfg;
    sts_config_default(&cfg); /* delta 21 ns */
    mod_t x;
    mod_init(&x, 1024);
    /* unsorted, with a lone noise digi far away in time */
    mod_add(&x, 102, 998, 50);
    mod_add(&x, 100, 1000, 50);
    mod_add(&x, 500, 40000, 41);
    mod_add(&x, 101, 1003, 100);
    for (int backend = STS_REFERENCE; backend <= STS_FAST; backend++) {
        sts_result_t *res = run_one(&x.m, backend, &cfg);
        uint32_t nf, nb, nh;
        sts_result_counts(res, 0, &nf, &nb, &nh);
        ck_assert_uint_eq(nf, 2);
        ck_assert_uint_eq(nb, 0);
        ck_assert_uint_eq(nh, 0);
        adf_sts_cluster_t c;
        sts_result_cluster(res, 0, 0, &c);
        ck_assert_uint_eq(c.channel, 100);
        ck_assert_uint_eq(c.size, 3);
        ck_assert_uint_eq(c.charge, 200);
        /* centre of gravity: 100.5 + (50*0 + 100*1 + 50*2) / 200 */
        ck_assert(c.position == 101.5f);
        /* mean time 3001 / 3, variance 25 / 3 */
        ck_assert(c.time == 1000.0f + 1.0f / 3.0f);
        ck_assert(c.time_error == sqrtf(25.0f / 3.0f));
        /* position error: sys 0.15^2 + noise 10^2 * (3 * 8 / 12 + 0) / 200^2 */
        float var = 0.0225f + (100.0f * 2.0f) / (200.0f * 200.0f);
        ck_assert_msg(fabsf(c.position_error - sqrtf(var)) < 1e-6f, "position error %g, expected %g",
                      (double)c.position_error, (double)sqrtf(var));
        sts_result_cluster(res, 0, 1, &c);
        ck_assert(c.channel == 500 && c.size == 1 && c.position == 500.5f && c.time == 40000.0f);
        ck_assert(c.position_error == sqrtf(STS_ONE_TWELFTH));
        sts_result_destroy(&res);
    }
}
END_TEST

START_TEST(time_window_edges)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    ck_assert_uint_eq(sts_config_delta(&cfg), 21);
    mod_t x;
    mod_init(&x, 1024);
    mod_add(&x, 10, 1000, 50);
    mod_add(&x, 11, 1021, 50); /* exactly delta: joined */
    mod_add(&x, 30, 1000, 50);
    mod_add(&x, 31, 1022, 50); /* delta + 1: apart */
    mod_add(&x, 50, 2000, 50);
    mod_add(&x, 52, 2000, 50); /* a gap of one strip: apart */
    mod_add(&x, 70, 3000, 50);
    mod_add(&x, 70, 3005, 50); /* one channel twice: two clusters */
    expect_clusters(&x, &cfg, "10+2@1010.5 30+1@1000 31+1@1022 50+1@2000 52+1@2000 70+1@3000 70+1@3005");
}
END_TEST

START_TEST(edge_strips_and_side_boundary)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    mod_t x;
    mod_init(&x, 1024);
    mod_add(&x, 0, 500, 60);    /* the first strip */
    mod_add(&x, 1, 505, 60);
    mod_add(&x, 1022, 700, 60); /* the front side's last two strips */
    mod_add(&x, 1023, 700, 60);
    mod_add(&x, 1024, 700, 60); /* the back side's first strip: not their neighbour */
    mod_add(&x, 2047, 900, 60); /* the back side's last strip */
    expect_clusters(&x, &cfg, "0+2@502.5 1022+2@700 1024+1@700 2047+1@900");
}
END_TEST

/* Seed Fig 9, step 5.1/5.2: a digi closes its neighbour's cluster,
 * looking at that neighbour only, though a later digi extends the
 * cluster at its other end. Channels 5 (t 10) and 6 (t 0) belong
 * together (delta 10); 7 (t 16) is not within delta of 6 and closes
 * {5, 6}; 4 (t 20) is within delta of 5 and so belongs to that cluster
 * by the definition, which the original no longer sees. */
START_TEST(original_deviates_as_the_thesis_shows)
{
    sts_params_t p;
    sts_config_t cfg;
    sts_config_default(&cfg);
    sts_params_of(&cfg, &p);
    p.delta = 10;
    mod_t x;
    mod_init(&x, 64);
    mod_add(&x, 6, 0, 40);
    mod_add(&x, 5, 10, 40);
    mod_add(&x, 7, 16, 40);
    mod_add(&x, 4, 20, 40);
    sts_work_t w;
    memset(&w, 0, sizeof w);
    size_t n, nf;
    ck_assert_int_eq(sts_orig_clusters(&w, &p, &x.m, &n, &nf), TUSK_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(w.cl[0].channel == 4 && w.cl[0].size == 1 && w.cl[1].channel == 5 && w.cl[1].size == 2 &&
              w.cl[2].channel == 7 && w.cl[2].size == 1);
    ck_assert_int_eq(sts_par_clusters(&w, &p, &x.m, &n, &nf), TUSK_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert(w.cl[0].channel == 4 && w.cl[0].size == 3 && w.cl[1].channel == 7 && w.cl[1].size == 1);
    sts_work_free(&w);
}
END_TEST

/* A point (x, y) on the module, its front and back strips, the hit. */
START_TEST(front_back_pairing_geometry)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    const double pitch = 0.058, t = tan(7.5 * 3.14159265358979323846 / 180.0), W = 1024 * pitch;
    struct {
        double x, y;
        int hit;
    } cases[] = {{10.0, 30.0, 1}, {1.0, 50.0, 1}, /* x - y tan < 0: the back strip wraps */
                 {58.0, 1.0, 1},  {30.0, 59.0, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mod_t x;
        mod_init(&x, 1024);
        x.m.hdr.origin[0] = 100.0f;
        x.m.hdr.origin[1] = -30.0f;
        double uf = cases[i].x / pitch, ub = fmod(cases[i].x - cases[i].y * t + W, W) / pitch;
        mod_add(&x, (uint32_t)uf, 5000, 100);
        mod_add(&x, 1024 + (uint32_t)ub, 5002, 100);
        sts_result_t *res = run_one(&x.m, STS_FAST, &cfg);
        uint32_t nh;
        sts_result_counts(res, 0, NULL, NULL, &nh);
        ck_assert_msg(nh == 1, "case %zu: %u hits", i, (unsigned)nh);
        adf_sts_hit_t h;
        sts_result_hit(res, 0, 0, &h);
        /* one-strip clusters sit at the strip centre: within a strip (and its
         * stereo image) of the point */
        ck_assert_msg(fabs(h.x - (100.0 + cases[i].x)) <= pitch, "case %zu: x %g", i, (double)h.x);
        ck_assert_msg(fabs(h.y - (-30.0 + cases[i].y)) <= 2 * pitch / t, "case %zu: y %g", i, (double)h.y);
        ck_assert(h.z == 300.0f && h.front == 0 && h.back == 0);
        ck_assert(fabs(h.time - 5001.0) < 1e-3);
        sts_result_destroy(&res);
    }
    /* strips that cross only beyond the module's length: no hit */
    mod_t x;
    mod_init(&x, 1024);
    mod_add(&x, 500, 5000, 100);
    mod_add(&x, 1024 + 300, 5000, 100); /* y = 200 strips * pitch / tan = 88 mm > 60 */
    sts_result_t *res = run_one(&x.m, STS_FAST, &cfg);
    uint32_t nh;
    sts_result_counts(res, 0, NULL, NULL, &nh);
    ck_assert_uint_eq(nh, 0);
    sts_result_destroy(&res);
    /* crossing, but too far apart in time (4 sigma of two 5 ns clusters: 28.3 ns) */
    mod_init(&x, 1024);
    mod_add(&x, 500, 5000, 100);
    mod_add(&x, 1024 + 480, 5029, 100);
    mod_add(&x, 600, 6000, 100);
    mod_add(&x, 1024 + 580, 6028, 100);
    res = run_one(&x.m, STS_FAST, &cfg);
    sts_result_counts(res, 0, NULL, NULL, &nh);
    ck_assert_uint_eq(nh, 1);
    adf_sts_hit_t h;
    sts_result_hit(res, 0, 0, &h);
    ck_assert(h.front == 1 && h.back == 1);
    sts_result_destroy(&res);
}
END_TEST

/* ---- random timeslices ------------------------------------------------------------------------ */

static sts_sim_t *simulator(uint32_t collisions, uint64_t seed)
{
    sts_sim_config_t sc;
    sts_sim_config_default(&sc);
    sc.collisions = collisions;
    sc.seed = seed;
    sts_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_msg(sts_sim_new(&sim, &sc, &err) == TUSK_OK, "%s", err.message);
    return sim;
}

static sts_batch_t *timeslice(sts_sim_t *sim, uint64_t index, const sts_sim_ts_t **ts)
{
    tusk_error_t err;
    ck_assert_msg(sts_sim_make(sim, index, ts, &err) == TUSK_OK, "%s", err.message);
    sts_batch_t *b = sts_batch_new();
    for (size_t m = 0; m < sts_sim_modules(sim); m++) {
        sts_module_t mod;
        sts_sim_module(sim, m, &mod);
        ck_assert_msg(sts_batch_add(b, &mod, &err) == TUSK_OK, "%s", err.message);
    }
    return b;
}

/* A random module, dense enough for every case: clusters, pile-up in
 * channels, digis equal in everything. */
static void random_module(sts_batch_t *b, uint16_t id)
{
    uint16_t strips = (uint16_t)(2 + tu_below(200));
    uint32_t n = tu_below(3000), length = 1 + tu_below(20000);
    uint64_t *k = malloc((n + 1) * 8);
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0 && tu_below(20) == 0)
            k[i] = k[tu_below(i)]; /* a twin */
        else if (i > 0 && tu_below(3) == 0) {
            uint32_t c = adf_sts_key_channel(k[i - 1]) + 1, t = adf_sts_key_time(k[i - 1]) + tu_below(40);
            k[i] = adf_sts_key(c < 2u * strips ? c : 0, t < length ? t : length - 1, tu_below(300));
        } else
            k[i] = adf_sts_key(tu_below(2u * strips), tu_below(length), tu_below(300));
    }
    sts_module_t m;
    memset(&m, 0, sizeof m);
    m.timeslice = 9;
    m.hdr = module_header(id, strips, length, n);
    m.hdr.stereo_deg = (float)(1 + tu_below(60));
    m.hdr.length_mm = (float)(1 + tu_below(100));
    m.digi = k;
    tusk_error_t err;
    ck_assert_msg(sts_batch_add(b, &m, &err) == TUSK_OK, "%s", err.message);
    free(k);
}

/* The definition's properties: every digi in one cluster, clusters of
 * neighbouring strips on one side, charges adding up. */
static void check_definition(const sts_batch_t *b, const sts_result_t *res)
{
    for (size_t i = 0; i < sts_batch_count(b); i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        uint32_t nf, nb, nh;
        sts_result_counts(res, i, &nf, &nb, &nh);
        uint64_t size = 0, charge = 0, digi_charge = 0;
        for (uint32_t j = 0; j < m.hdr.n_digis; j++)
            digi_charge += adf_sts_key_charge(m.digi[j]);
        for (uint32_t k = 0; k < nf + nb; k++) {
            adf_sts_cluster_t c;
            sts_result_cluster(res, i, k, &c);
            size += c.size;
            charge += c.charge;
            bool front = k < nf;
            tu_check(front ? c.channel + c.size <= m.hdr.strips
                           : c.channel >= m.hdr.strips && c.channel + c.size <= 2u * m.hdr.strips);
            tu_check(c.position >= c.channel % m.hdr.strips && c.position <= c.channel % m.hdr.strips + c.size);
        }
        tu_check(size == m.hdr.n_digis);
        tu_check(charge == digi_charge);
        for (uint32_t k = 0; k < nh; k++) {
            adf_sts_hit_t h;
            sts_result_hit(res, i, k, &h);
            tu_check(h.front < nf && h.back < nb);
        }
    }
}

START_TEST(fast_is_the_definition_and_thread_independent)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    sts_batch_t *b = sts_batch_new();
    for (uint16_t i = 0; i < 12; i++)
        random_module(b, i);
    sts_sim_t *sim = simulator(1 + tu_below(8), tu_rand());
    const sts_sim_ts_t *ts;
    sts_batch_t *b2 = timeslice(sim, tu_below(1000), &ts);
    tusk_error_t err;
    sts_fast_t *one, *many;
    ck_assert_int_eq(sts_fast_new(&one, &cfg, 1, &err), TUSK_OK);
    ck_assert_int_eq(sts_fast_new(&many, &cfg, 5, &err), TUSK_OK);
    sts_result_t *r1 = sts_result_new(), *r2 = sts_result_new();
    const sts_batch_t *batches[2] = {b, b2};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(sts_fast_run(one, batches[k], r1, &err), TUSK_OK);
        ck_assert_int_eq(sts_fast_run(many, batches[k], r2, &err), TUSK_OK);
        char why[512];
        ck_assert_msg(sts_result_equal(r1, r2, why, sizeof why), "1 thread against 5: %s", why);
        check_definition(batches[k], r1);
    }
    sts_result_destroy(&r1);
    sts_result_destroy(&r2);
    sts_fast_destroy(&one);
    sts_fast_destroy(&many);
    sts_batch_destroy(&b);
    sts_batch_destroy(&b2);
    sts_sim_destroy(&sim);
}
END_TEST

static int cmp_cluster(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(adf_sts_cluster_t));
}

/* The reference's clusters against the fast backend's on simulated
 * timeslices: the fraction only one of them makes (seed Fig 10: about
 * 0.02 %) is measured and printed; it stays below 0.05 % here. Where
 * a module's clusters agree, its hits agree too (one hit finder). */
START_TEST(original_against_parallel_measured)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    sts_sim_t *sim = simulator(20, tu_rand());
    const sts_sim_ts_t *ts;
    sts_batch_t *b = timeslice(sim, 0, &ts);
    tusk_error_t err;
    sts_ref_t *ref;
    sts_fast_t *fast;
    ck_assert_int_eq(sts_ref_new(&ref, &cfg, &err), TUSK_OK);
    ck_assert_int_eq(sts_fast_new(&fast, &cfg, 2, &err), TUSK_OK);
    sts_result_t *ro = sts_result_new(), *rp = sts_result_new();
    ck_assert_int_eq(sts_ref_run(ref, b, ro, &err), TUSK_OK);
    ck_assert_int_eq(sts_fast_run(fast, b, rp, &err), TUSK_OK);
    check_definition(b, ro);
    uint64_t total = 0, only_o = 0, only_p = 0, same_modules = 0;
    for (size_t i = 0; i < sts_batch_count(b); i++) {
        uint32_t f1, b1, h1, f2, b2, h2;
        sts_result_counts(ro, i, &f1, &b1, &h1);
        sts_result_counts(rp, i, &f2, &b2, &h2);
        size_t n1 = f1 + b1, n2 = f2 + b2;
        adf_sts_cluster_t *a = malloc((n1 + 1) * sizeof *a), *c = malloc((n2 + 1) * sizeof *c);
        for (uint32_t k = 0; k < n1; k++)
            sts_result_cluster(ro, i, k, &a[k]);
        for (uint32_t k = 0; k < n2; k++)
            sts_result_cluster(rp, i, k, &c[k]);
        bool same = n1 == n2 && memcmp(a, c, n1 * sizeof *a) == 0;
        qsort(a, n1, sizeof *a, cmp_cluster);
        qsort(c, n2, sizeof *c, cmp_cluster);
        size_t x = 0, y = 0;
        while (x < n1 || y < n2) {
            int d = x == n1 ? 1 : y == n2 ? -1 : cmp_cluster(&a[x], &c[y]);
            if (d == 0)
                x++, y++;
            else if (d < 0)
                only_o++, x++;
            else
                only_p++, y++;
        }
        total += n2;
        if (same) {
            same_modules++;
            ck_assert_uint_eq(h1, h2);
            for (uint32_t k = 0; k < h1; k++) {
                adf_sts_hit_t u, v;
                sts_result_hit(ro, i, k, &u);
                sts_result_hit(rp, i, k, &v);
                tu_check(memcmp(&u, &v, sizeof u) == 0);
            }
        }
        free(a);
        free(c);
    }
    printf("original against parallel: %llu clusters, %llu (%.4f %%) only the original's, %llu (%.4f %%) only the "
           "parallel's; %llu of %zu modules identical\n",
           (unsigned long long)total, (unsigned long long)only_o, 100.0 * (double)only_o / (double)total,
           (unsigned long long)only_p, 100.0 * (double)only_p / (double)total, (unsigned long long)same_modules,
           sts_batch_count(b));
    ck_assert(total > 100000);
    ck_assert_msg((double)only_o < 5e-4 * (double)total && (double)only_p < 5e-4 * (double)total,
                  "%llu and %llu of %llu clusters differ", (unsigned long long)only_o, (unsigned long long)only_p,
                  (unsigned long long)total);
    ck_assert(same_modules > sts_batch_count(b) * 9 / 10);
    sts_result_destroy(&ro);
    sts_result_destroy(&rp);
    sts_ref_destroy(&ref);
    sts_fast_destroy(&fast);
    sts_batch_destroy(&b);
    sts_sim_destroy(&sim);
}
END_TEST

/* ---- the simulation ----------------------------------------------------------------------------- */

START_TEST(simulation_sanity)
{
    sts_sim_t *sim = simulator(12, tu_rand());
    const sts_sim_config_t *c = sts_sim_config(sim);
    const sts_sim_ts_t *ts;
    sts_batch_t *b = timeslice(sim, tu_below(100), &ts);
    double per = (double)ts->digis / ts->collisions;
    /* 600 tracks a collision, 7,200 in all: the count is known to 1.2 %; the
     * model gives about 15,000 digis a collision (spec: 15,000-20,000) */
    ck_assert_msg(per > 13500 && per < 16500, "%.0f digis a collision", per);
    ck_assert_msg(ts->points > 7.0 * ts->tracks && ts->points <= 8 * ts->tracks, "%llu points of %llu tracks",
                  (unsigned long long)ts->points, (unsigned long long)ts->tracks);
    /* noise: Poisson with mean rate x channels x length, within 6 sigma */
    double mean = c->noise_rate_khz * 1e-6 * 2.0 * c->strips * ts->length_ns * sts_sim_modules(sim);
    ck_assert_msg(fabs((double)ts->noise_digis - mean) < 6 * sqrt(mean), "%llu noise hits, %.0f expected",
                  (unsigned long long)ts->noise_digis, mean);
    /* charge sharing and dead time, module by module */
    uint64_t digis = 0, multi = 0, clusters = 0;
    for (size_t i = 0; i < sts_batch_count(b); i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        uint32_t n = m.hdr.n_digis;
        uint64_t *k = malloc((n + 1) * 8), *t = malloc((n + 1) * 8);
        memcpy(k, m.digi, n * 8);
        tusk_radix_sort_u64(k, t, n);
        for (uint32_t j = 1; j < n; j++)
            if (adf_sts_key_channel(k[j]) == adf_sts_key_channel(k[j - 1]))
                tu_check(adf_sts_key_time(k[j]) - adf_sts_key_time(k[j - 1]) >= c->dead_time_ns);
        for (uint32_t j = 0; j < n; j++)
            tu_check(adf_sts_key_charge(k[j]) >= c->threshold);
        digis += n;
        free(k);
        free(t);
    }
    sts_config_t cfg;
    sts_config_default(&cfg);
    sts_fast_t *f;
    tusk_error_t err;
    ck_assert_int_eq(sts_fast_new(&f, &cfg, 2, &err), TUSK_OK);
    sts_result_t *res = sts_result_new();
    ck_assert_int_eq(sts_fast_run(f, b, res, &err), TUSK_OK);
    for (size_t i = 0; i < sts_result_modules(res); i++) {
        uint32_t nf, nb;
        sts_result_counts(res, i, &nf, &nb, NULL);
        for (uint32_t k = 0; k < nf + nb; k++) {
            adf_sts_cluster_t cl;
            sts_result_cluster(res, i, k, &cl);
            multi += cl.size > 1;
        }
        clusters += nf + nb;
    }
    /* most tracks cross near the perpendicular: one or two strips */
    double size = (double)digis / (double)clusters, two = (double)multi / (double)clusters;
    ck_assert_msg(size > 1.2 && size < 2.5, "%.3f digis a cluster", size);
    ck_assert_msg(two > 0.2 && two < 0.9, "%.3f of the clusters have more than one strip", two);
    /* the same timeslice again; another one differs */
    uint64_t d0 = ts->digis;
    uint32_t index = ts->timeslice;
    sts_batch_t *again = timeslice(sim, index, &ts);
    ck_assert_uint_eq(ts->digis, d0);
    ck_assert_uint_eq(sts_batch_digis(again), sts_batch_digis(b));
    sts_module_t m1, m2;
    for (size_t i = 0; i < sts_batch_count(b); i++) {
        sts_batch_module(b, i, &m1);
        sts_batch_module(again, i, &m2);
        tu_check(m1.hdr.n_digis == m2.hdr.n_digis && memcmp(m1.digi, m2.digi, m1.hdr.n_digis * 8) == 0);
    }
    sts_batch_destroy(&again);
    again = timeslice(sim, index + 1, &ts);
    ck_assert(sts_batch_digis(again) != sts_batch_digis(b));
    sts_batch_destroy(&again);
    sts_result_destroy(&res);
    sts_fast_destroy(&f);
    sts_batch_destroy(&b);
    sts_sim_destroy(&sim);
}
END_TEST

START_TEST(simulation_settings)
{
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    sts_sim_config_t sc;
    sts_sim_config_default(&sc);
    tusk_params_set(p, "strip_lengths_mm", "20 40", &err);
    ck_assert_int_eq(sts_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "2 strip lengths want 1 polar-angle limits");
    tusk_params_set(p, "length_theta_deg", "6", &err);
    ck_assert_int_eq(sts_sim_config_read(&sc, p, &err), TUSK_OK);
    tusk_params_set(p, "stations_mm", "300 200", &err);
    ck_assert_int_eq(sts_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "downstream");
    tusk_params_destroy(&p);
    p = tusk_params_new();
    tusk_params_set(p, "strips", "5000", &err);
    ck_assert_int_eq(sts_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "strips");
    tusk_params_destroy(&p);
    sts_config_t cfg;
    sts_config_default(&cfg);
    ck_assert_int_eq(sts_config_set(&cfg, "hit_time_cut", "-1", &err), TUSK_EPARAM);
    ck_assert_int_eq(sts_config_set(&cfg, "nosuch", "1", &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "unknown STS setting 'nosuch'");
    uint32_t d0 = sts_config_digest(&cfg);
    ck_assert_int_eq(sts_config_set(&cfg, "hit_y_tol_mm", "0.75", &err), TUSK_OK);
    ck_assert_uint_ne(sts_config_digest(&cfg), d0);
}
END_TEST

/* ---- frames through the reconstruction and the analysis ------------------------------------ */

/* The timeslices of a simulator as frames in buffers of at most `cap`
 * bytes (whole modules), returned as a list of buffers. */
typedef struct buffers {
    uint8_t **buf;
    size_t *size;
    size_t n;
} buffers_t;

static void to_buffers(sts_sim_t *sim, unsigned timeslices, size_t cap, buffers_t *out)
{
    memset(out, 0, sizeof *out);
    size_t room = 0;
    adf_writer_t *w = adf_writer_new();
    uint8_t *cur = NULL;
    tusk_error_t err;
    for (unsigned t = 0; t < timeslices; t++) {
        const sts_sim_ts_t *ts;
        ck_assert_int_eq(sts_sim_make(sim, t, &ts, &err), TUSK_OK);
        for (size_t m = 0; m < sts_sim_modules(sim); m++) {
            size_t need = sts_sim_module_bytes(sim, m);
            ck_assert(need <= cap);
            if (!cur || adf_writer_used(w) + need > cap) {
                if (cur)
                    out->size[out->n - 1] = adf_writer_used(w);
                if (out->n == room) {
                    room = room ? 2 * room : 16;
                    out->buf = realloc(out->buf, room * sizeof *out->buf);
                    out->size = realloc(out->size, room * sizeof *out->size);
                }
                cur = malloc(cap);
                out->buf[out->n++] = cur;
                adf_writer_reset(w, cur, cap);
            }
            ck_assert_msg(sts_sim_encode_module(sim, m, w, &err) == TUSK_OK, "%s", err.message);
        }
    }
    if (cur)
        out->size[out->n - 1] = adf_writer_used(w);
    adf_writer_destroy(&w);
}

static void free_buffers(buffers_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->buf[i]);
    free(b->buf);
    free(b->size);
}

/* Two timeslices over many small buffers, each buffer reconstructed on
 * its own (as the filter does), the outputs fed to the analysis in a
 * shuffled order: every module complete, the same tables as in order. */
START_TEST(timeslices_over_many_buffers)
{
    sts_sim_t *sim = simulator(3, 17);
    buffers_t in;
    to_buffers(sim, 2, 256 * 1024, &in);
    ck_assert_msg(in.n > 4, "%zu buffers", in.n);
    sts_config_t cfg;
    sts_config_default(&cfg);
    tusk_error_t err;
    sts_fast_t *fast;
    ck_assert_int_eq(sts_fast_new(&fast, &cfg, 2, &err), TUSK_OK);
    sts_batch_t *b = sts_batch_new();
    sts_result_t *res = sts_result_new();
    adf_writer_t *w = adf_writer_new();
    buffers_t out = {calloc(in.n, sizeof(uint8_t *)), calloc(in.n, sizeof(size_t)), in.n};
    for (size_t i = 0; i < in.n; i++) {
        ck_assert_msg(sts_frames_read(b, in.buf[i], in.size[i], 0, &err) == TUSK_OK, "%s", err.message);
        ck_assert_int_eq(sts_fast_run(fast, b, res, &err), TUSK_OK);
        size_t cap = in.size[i] + sts_frames_extra(res, true);
        out.buf[i] = malloc(cap);
        adf_writer_reset(w, out.buf[i], cap);
        ck_assert_msg(sts_frames_write(in.buf[i], in.size[i], b, res, &cfg, STS_FAST, true, true, w, &err) == TUSK_OK,
                      "%s", err.message);
        out.size[i] = adf_writer_used(w);
        ck_assert_uint_eq(out.size[i], cap); /* exactly what sts_frames_extra promised */
    }
    char table[2][8192];
    for (int order = 0; order < 2; order++) {
        sts_qa_config_t qc;
        sts_qa_config_default(&qc);
        qc.compare = false;
        sts_qa_t *qa;
        ck_assert_int_eq(sts_qa_new(&qa, &qc, &err), TUSK_OK);
        for (size_t k = 0; k < out.n; k++) {
            size_t i = order ? out.n - 1 - k : k; /* the second time backwards */
            ck_assert_msg(sts_qa_feed(qa, out.buf[i], out.size[i], 0, &err) == TUSK_OK, "%s", err.message);
        }
        ck_assert_msg(sts_qa_finish(qa, &err) == TUSK_OK, "%s", err.message);
        sts_qa_summary_t s;
        sts_qa_summary(qa, &s);
        ck_assert_uint_eq(s.timeslices, 2);
        ck_assert_uint_eq(s.modules, 2 * sts_sim_modules(sim));
        FILE *mem = fmemopen(table[order], sizeof table[order], "w");
        sts_qa_print(qa, mem);
        fclose(mem);
        sts_qa_destroy(&qa);
    }
    ck_assert_str_eq(table[0], table[1]);
    /* a buffer missing: its modules and its timeslice are named */
    sts_qa_config_t qc;
    sts_qa_config_default(&qc);
    sts_qa_t *qa;
    ck_assert_int_eq(sts_qa_new(&qa, &qc, &err), TUSK_OK);
    for (size_t k = 1; k < out.n; k++)
        ck_assert_int_eq(sts_qa_feed(qa, out.buf[k], out.size[k], 0, &err), TUSK_OK);
    ck_assert_int_eq(sts_qa_finish(qa, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "timeslice 0 had");
    sts_qa_destroy(&qa);
    /* the analysis refuses frames of other settings */
    qc.alg.hit_time_cut = 3.0;
    ck_assert_int_eq(sts_qa_new(&qa, &qc, &err), TUSK_OK);
    ck_assert_int_eq(sts_qa_feed(qa, out.buf[0], out.size[0], 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "other settings than this analysis");
    sts_qa_destroy(&qa);
    free_buffers(&in);
    free_buffers(&out);
    adf_writer_destroy(&w);
    sts_result_destroy(&res);
    sts_batch_destroy(&b);
    sts_fast_destroy(&fast);
    sts_sim_destroy(&sim);
}
END_TEST

/* The analysis on a fixed sample (seed 5, 10 collisions): efficiencies,
 * fakes, residuals and pulls as sts/README.md reports them. */
START_TEST(qa_on_a_fixed_sample)
{
    sts_sim_t *sim = simulator(10, 5);
    buffers_t in;
    to_buffers(sim, 1, 64 * 1024 * 1024, &in);
    sts_config_t cfg;
    sts_config_default(&cfg);
    tusk_error_t err;
    sts_fast_t *fast;
    ck_assert_int_eq(sts_fast_new(&fast, &cfg, 2, &err), TUSK_OK);
    sts_batch_t *b = sts_batch_new();
    sts_result_t *res = sts_result_new();
    adf_writer_t *w = adf_writer_new();
    sts_qa_config_t qc;
    sts_qa_config_default(&qc);
    sts_qa_t *qa;
    ck_assert_int_eq(sts_qa_new(&qa, &qc, &err), TUSK_OK);
    for (size_t i = 0; i < in.n; i++) {
        ck_assert_int_eq(sts_frames_read(b, in.buf[i], in.size[i], 0, &err), TUSK_OK);
        ck_assert_int_eq(sts_fast_run(fast, b, res, &err), TUSK_OK);
        size_t cap = in.size[i] + sts_frames_extra(res, true);
        uint8_t *out = malloc(cap);
        adf_writer_reset(w, out, cap);
        ck_assert_int_eq(sts_frames_write(in.buf[i], in.size[i], b, res, &cfg, STS_FAST, true, true, w, &err),
                         TUSK_OK);
        ck_assert_msg(sts_qa_feed(qa, out, adf_writer_used(w), 0, &err) == TUSK_OK, "%s", err.message);
        free(out);
    }
    ck_assert_msg(sts_qa_finish(qa, &err) == TUSK_OK, "%s", err.message);
    sts_qa_print(qa, stdout);
    sts_qa_summary_t s;
    sts_qa_summary(qa, &s);
    const sts_qa_row_t *r = &s.row[0];
    ck_assert_int_eq(s.backend, STS_FAST);
    ck_assert_uint_eq(s.rows, 9); /* all, then 8 stations */
    for (int side = 0; side < 2; side++) {
        double eff = (double)r->points_found[side] / (double)(side ? r->points_back : r->points_front);
        double fake = 1.0 - (double)r->clusters_matched[side] / (double)r->clusters[side];
        ck_assert_msg(eff > 0.95 && eff < 1.0, "side %d: cluster efficiency %.4f", side, eff);
        ck_assert_msg(fake > 0.005 && fake < 0.05, "side %d: fake clusters %.4f", side, fake);
        ck_assert_msg(r->res_rms[side] > 0.1 && r->res_rms[side] < 0.3, "side %d: residual %.4f strips", side,
                      r->res_rms[side]);
        ck_assert_msg(r->pull_rms[side] > 0.8 && r->pull_rms[side] < 1.25, "side %d: pull %.3f", side, r->pull_rms[side]);
    }
    double hit_eff = (double)r->points_hit / (double)r->points_both;
    ck_assert_msg(hit_eff > 0.9, "hit efficiency %.4f", hit_eff);
    ck_assert_msg(r->hx_pull > 0.8 && r->hx_pull < 1.25 && r->hy_pull > 0.8 && r->hy_pull < 1.25 &&
                      r->ht_pull > 0.85 && r->ht_pull < 1.15,
                  "hit pulls %.3f %.3f %.3f", r->hx_pull, r->hy_pull, r->ht_pull);
    ck_assert_uint_eq(s.compared, r->clusters[0] + r->clusters[1]);
    ck_assert(s.differ_original + s.differ_parallel < s.compared / 1000);
    /* the files and, when gnuplot is there, the picture */
    char dir[512];
    tu_make_dir(dir, sizeof dir);
    bool plot = system("command -v ${TUSK_GNUPLOT:-gnuplot} >/dev/null 2>&1") == 0;
    ck_assert_msg(sts_qa_write(qa, dir, plot, "png", &err) == TUSK_OK, "%s", err.message);
    char path[700];
    snprintf(path, sizeof path, "%s/stations.csv", dir);
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    int lines = 0;
    for (int ch; (ch = fgetc(fp)) != EOF;)
        lines += ch == '\n';
    fclose(fp);
    ck_assert_int_eq(lines, 10);
    char rm[800];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
    sts_qa_destroy(&qa);
    free_buffers(&in);
    adf_writer_destroy(&w);
    sts_result_destroy(&res);
    sts_batch_destroy(&b);
    sts_fast_destroy(&fast);
    sts_sim_destroy(&sim);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sts");
    TCase *tc = tcase_create("frames");
    tcase_add_test(tc, digis_round_trip_and_layout);
    tcase_add_test(tc, digis_malformed);
    tcase_add_test(tc, clusters_hits_truth_codecs);
    suite_add_tcase(s, tc);
    tc = tcase_create("algorithm");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, planted_cluster_found_exactly);
    tcase_add_test(tc, time_window_edges);
    tcase_add_test(tc, edge_strips_and_side_boundary);
    tcase_add_test(tc, original_deviates_as_the_thesis_shows);
    tcase_add_test(tc, front_back_pairing_geometry);
    tcase_add_test(tc, fast_is_the_definition_and_thread_independent);
    tcase_add_test(tc, original_against_parallel_measured);
    suite_add_tcase(s, tc);
    tc = tcase_create("simulation");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, simulation_sanity);
    tcase_add_test(tc, simulation_settings);
    suite_add_tcase(s, tc);
    tc = tcase_create("analysis");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, timeslices_over_many_buffers);
    tcase_add_test(tc, qa_on_a_fixed_sample);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
