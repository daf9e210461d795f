/* check_tpc.c - the TPC slice tracker on the CPU (tusk/tpc.h): its frames
 * (round trips, the exact layout, malformed payloads), the Kalman
 * filter's propagation against an exact helix, a lone track found whole
 * with pulls in bounds, the Neighbours Finder's choice and the Cleaner,
 * the start hits' rule, the Tracklet Selector's sharing and gap rules,
 * the reference and the fast backend equal bit for bit on random events
 * whatever their threads, the limits refused with a message, the
 * simulation's sanity (reproducible over threads, clusters inside their
 * slices, noise rate, truth), and the quality analysis on events spread
 * over many buffers, with the track-by-track comparison. Random inputs
 * are fresh on every run (TUSK_TEST_SEED replays one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "tpc_private.h"
#include "testutil.h"
#include "tusk/adf.h"
#include "tusk/tpc.h"

/* ---- frames ---------------------------------------------------------------------------- */

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float get_f32(const uint8_t *p)
{
    uint32_t u = get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
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

typedef int (*decode_fn)(const adf_frame_t *f, void *out, adf_error_t *err);

/* A frame of `type` around a payload, decoded by `fn` into `out` (whose
 * views point into the payload: it must outlive them). */
static int decode_raw(uint32_t type, const uint8_t *payload, size_t size, decode_fn fn, void *out, adf_error_t *err)
{
    adf_frame_t f = {{(uint32_t)(ADF_KEY_SIZE + size), type, 1, 1}, payload, (uint32_t)size, 40};
    return fn(&f, out, err);
}

static int dec_clusters(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_tpc_clusters_decode(f, out, err);
}
static int dec_tracks(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_tpc_tracks_decode(f, out, err);
}
static int dec_truth(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_tpc_truth_decode(f, out, err);
}

/* The payload of the one frame a writer wrote into buf. */
static const uint8_t *payload_of(const uint8_t *buf, size_t *size)
{
    *size = get_u32(buf) - ADF_KEY_SIZE;
    return buf + ADF_KEY_SIZE;
}

static adf_tpc_clusters_t clusters_header(uint32_t n)
{
    adf_tpc_clusters_t h;
    memset(&h, 0, sizeof h);
    h.n_clusters = n;
    h.slice = 7;
    h.slices = 36;
    h.flags = 0x1234;
    h.bz = -0.5f;
    h.geometry = ADF_TPC_GEOMETRY_ALICE;
    return h;
}

START_TEST(clusters_round_trip_and_layout)
{
    adf_tpc_cluster_t c[3] = {{0, 0, -12.5f, 100.25f}, {158, 3, 400.0f, -2499.5f}, {77, 0, 0.0f, 0.0f}};
    adf_tpc_clusters_t h = clusters_header(3);
    uint8_t buf[256];
    adf_writer_t *w = adf_writer_new();
    adf_error_t e;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_tpc_clusters_encode(w, 42, 99, &h, c, &e), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), ADF_KEY_SIZE + 16 + 3 * 10);
    ck_assert_uint_eq(get_u32(buf + 4), 0xFA230101u);
    size_t size;
    const uint8_t *p = payload_of(buf, &size);
    ck_assert_uint_eq(get_u32(p), 3);
    ck_assert_uint_eq(p[4], 7);
    ck_assert_uint_eq(p[5], 36);
    ck_assert_uint_eq((unsigned)p[6] | (unsigned)p[7] << 8, 0x1234);
    ck_assert(get_f32(p + 8) == -0.5f);
    ck_assert_uint_eq(get_u32(p + 12), 1);
    ck_assert_uint_eq(p[16 + 10], 158);
    ck_assert_uint_eq(p[16 + 11], 3);
    ck_assert(get_f32(p + 16 + 12) == 400.0f && get_f32(p + 16 + 16) == -2499.5f);
    adf_tpc_clusters_t d;
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, p, size, dec_clusters, &d, &e), ADF_OK);
    ck_assert_uint_eq(d.n_clusters, 3);
    ck_assert_uint_eq(d.flags, 0x1234);
    /* random clusters, both ways */
    uint32_t n = tu_below(3000);
    adf_tpc_cluster_t *rc = malloc((n + 1) * sizeof *rc), x;
    for (uint32_t i = 0; i < n; i++) {
        rc[i].row = (uint8_t)tu_below(ADF_TPC_ROWS);
        rc[i].flags = (uint8_t)tu_below(256);
        rc[i].y = (float)(-500 + 1000 * tu_uniform());
        rc[i].z = (float)(-2500 + 5000 * tu_uniform());
    }
    h = clusters_header(n);
    h.slice = (uint8_t)tu_below(36);
    size_t cap = ADF_KEY_SIZE + adf_tpc_clusters_payload_size(n);
    uint8_t *big = malloc(cap);
    adf_writer_reset(w, big, cap);
    ck_assert_int_eq(adf_tpc_clusters_encode(w, 1, 2, &h, rc, &e), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), cap);
    p = payload_of(big, &size);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, p, size, dec_clusters, &d, &e), ADF_OK);
    ck_assert_uint_eq(d.n_clusters, n);
    ck_assert_uint_eq(d.slice, h.slice);
    for (uint32_t i = 0; i < n; i++) {
        adf_tpc_cluster(&d, i, &x);
        tu_check(x.row == rc[i].row && x.flags == rc[i].flags && x.y == rc[i].y && x.z == rc[i].z);
    }
    /* a buffer one byte short: nothing written */
    adf_writer_reset(w, big, cap - 1);
    ck_assert_int_ne(adf_tpc_clusters_encode(w, 1, 2, &h, rc, &e), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    free(big);
    free(rc);
    adf_writer_destroy(&w);
}
END_TEST

/* A valid data:tpc_tracks payload of two tracks (3 and 2 clusters) of a
 * slice of 50 clusters, for patching. */
static size_t tracks_payload(uint8_t *buf, size_t cap, adf_tpc_track_t *t, adf_tpc_hit_t *hits)
{
    memset(t, 0, 2 * sizeof *t);
    static const uint8_t rows[5] = {3, 4, 9, 100, 101};
    for (int k = 0; k < 5; k++) {
        hits[k].cluster = (uint32_t)(10 * k);
        hits[k].row = rows[k];
        hits[k].flags = k == 1 ? ADF_TPC_HIT_SHARED : 0;
        hits[k].x = (float)k;
        hits[k].y = (float)-k;
        hits[k].z = 0.5f * (float)k;
    }
    for (int i = 0; i < 2; i++) {
        t[i].x = 852.25f + (float)i;
        for (int k = 0; k < 5; k++)
            t[i].param[k] = (float)(k + 1) * 0.25f;
        for (int k = 0; k < 15; k++)
            t[i].cov[k] = (float)k;
        t[i].chi2 = 3.5f;
        t[i].ndf = 7;
        t[i].n_hits = i ? 2 : 3;
        t[i].first_row = i ? 100 : 3;
        t[i].last_row = i ? 101 : 9;
        t[i].flags = 0x0102;
        t[i].tracklet = 17 + (uint32_t)i;
    }
    adf_tpc_tracks_t h = {2, 5, 50, 0xABCD1234u, 5, ADF_TPC_OPENCL, 0, NULL, NULL};
    adf_writer_t *w = adf_writer_new();
    adf_error_t e;
    adf_writer_reset(w, buf, cap);
    ck_assert_msg(adf_tpc_tracks_encode(w, 1, 1, &h, t, hits, &e) == ADF_OK, "%s", e.message);
    size_t used = adf_writer_used(w);
    adf_writer_destroy(&w);
    memmove(buf, buf + ADF_KEY_SIZE, used - ADF_KEY_SIZE);
    return used - ADF_KEY_SIZE;
}

START_TEST(frames_malformed)
{
    uint8_t good[64], bad[64];
    adf_tpc_clusters_t h = clusters_header(2), d;
    adf_tpc_cluster_t c[2] = {{5, 0, 1.0f, 2.0f}, {6, 0, 3.0f, 4.0f}};
    uint8_t buf[128];
    adf_writer_t *w = adf_writer_new();
    adf_error_t e;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_tpc_clusters_encode(w, 1, 1, &h, c, &e), ADF_OK);
    size_t size;
    const uint8_t *gp = payload_of(buf, &size);
    memcpy(good, gp, size);
    static const struct {
        size_t at;
        uint8_t value;
        const char *why;
    } flips[] = {{16 + 10, 159, "row 159"}, {4, 36, "slice 36"}, {5, 0, "an event of 0 slices"},
                 {5, 37, "an event of 37 slices"}, {12, 2, "geometry 2"}};
    for (size_t k = 0; k < sizeof flips / sizeof flips[0]; k++) {
        memcpy(bad, good, size);
        bad[flips[k].at] = flips[k].value;
        ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, bad, size, dec_clusters, &d, &e), ADF_EPAYLOAD);
        tu_assert_error(&e, ADF_EPAYLOAD, flips[k].why);
    }
    memcpy(bad, good, size);
    put_f32(bad + 16 + 2, NAN);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, bad, size, dec_clusters, &d, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "not finite");
    for (int k = 0; k < 3; k++) {
        memcpy(bad, good, size);
        put_f32(bad + 8, k == 0 ? 0.0f : k == 1 ? INFINITY : 21.0f);
        ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, bad, size, dec_clusters, &d, &e), ADF_EPAYLOAD);
        tu_assert_error(&e, ADF_EPAYLOAD, "field");
    }
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, good, size - 1, dec_clusters, &d, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "expected for 2 clusters");
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, good, 10, dec_clusters, &d, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "shorter than its 16-byte header");
    put_u32(bad, ADF_TPC_MAX_CLUSTERS + 1);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_CLUSTERS, bad, size, dec_clusters, &d, &e), ADF_ERANGE);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRACKS, good, size, dec_clusters, &d, &e), ADF_EBADTYPE);
    /* the encoder refuses the same */
    c[1].row = 200;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_tpc_clusters_encode(w, 1, 1, &h, c, &e), ADF_EINVAL);
    tu_assert_error(&e, ADF_EINVAL, "cluster 1 is in row 200");
    ck_assert_uint_eq(adf_writer_used(w), 0);

    /* data:tpc_tracks */
    uint8_t tg[512], tb[512];
    adf_tpc_track_t t[2];
    adf_tpc_hit_t hits[5];
    size_t ts = tracks_payload(tg, sizeof tg, t, hits);
    ck_assert_uint_eq(ts, 20 + 2 * 100 + 5 * 18);
    adf_tpc_tracks_t td;
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRACKS, tg, ts, dec_tracks, &td, &e), ADF_OK);
    size_t hit0 = 20 + 200;
    struct {
        size_t at;
        uint32_t value;
        int word; /* 4: a u32, 1: a byte */
        const char *why;
    } tflips[] = {{hit0 + 18 * 2, 50, 4, "which has 50"},
                  {hit0 + 18 * 1 + 4, 2, 1, "do not rise"},
                  {20 + 90, 4, 1, "first row 4, but its first cluster is in row 3"},
                  {20 + 100 + 91, 102, 1, "last row 102"},
                  {20 + 92, 6, 1, "add up to more than 5"},
                  {20 + 92, 0, 1, "track 0 has no cluster"},
                  {17, 4, 1, "backend 4"},
                  {16, 36, 1, "slice 36"}};
    for (size_t k = 0; k < sizeof tflips / sizeof tflips[0]; k++) {
        memcpy(tb, tg, ts);
        if (tflips[k].word == 4)
            put_u32(tb + tflips[k].at, tflips[k].value);
        else
            tb[tflips[k].at] = (uint8_t)tflips[k].value;
        ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRACKS, tb, ts, dec_tracks, &td, &e), ADF_EPAYLOAD);
        tu_assert_error(&e, ADF_EPAYLOAD, tflips[k].why);
    }
    memcpy(tb, tg, ts);
    tb[20 + 100 + 92] = 1; /* the second track of one cluster (row 100): one left over */
    tb[20 + 100 + 91] = 100;
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRACKS, tb, ts, dec_tracks, &td, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "the tracks have 4 clusters, the header says 5");
    memcpy(tb, tg, ts);
    put_u32(tb + 4, 6); /* six hits announced: the size is wrong */
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRACKS, tb, ts, dec_tracks, &td, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "expected for 2 tracks and 6 hits");
    /* the encoder refuses the same */
    hits[2].row = 2;
    adf_tpc_tracks_t th = {2, 5, 50, 0, 5, ADF_TPC_FAST, 0, NULL, NULL};
    adf_writer_reset(w, tb, sizeof tb);
    ck_assert_int_eq(adf_tpc_tracks_encode(w, 1, 1, &th, t, hits, &e), ADF_EINVAL);
    tu_assert_error(&e, ADF_EINVAL, "do not rise");
    ck_assert_uint_eq(adf_writer_used(w), 0);

    /* data:tpc_truth */
    adf_tpc_particle_t pt[2] = {{5, {0.5f, 0.0f, 0.1f}, {0.0f, 0.0f, 10.0f}, 1, 0},
                                {9, {-0.5f, 1.0f, -0.1f}, {0.1f, 0.0f, -10.0f}, -1, 0}};
    uint32_t cp[3] = {0, ADF_TPC_NOISE, 1};
    adf_tpc_truth_t rh = {2, 3, 4, 0, NULL, NULL}, rd;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_tpc_truth_encode(w, 1, 1, &rh, pt, cp, &e), ADF_OK);
    uint8_t rg[128], rb[128];
    size_t rs;
    const uint8_t *rp = payload_of(buf, &rs);
    memcpy(rg, rp, rs);
    ck_assert_uint_eq(rs, 12 + 2 * 32 + 3 * 4);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRUTH, rg, rs, dec_truth, &rd, &e), ADF_OK);
    memcpy(rb, rg, rs);
    rb[12 + 28] = rb[12 + 29] = 0; /* particle 0's charge */
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRUTH, rb, rs, dec_truth, &rd, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "has no charge");
    memcpy(rb, rg, rs);
    put_u32(rb + 12 + 64 + 8, 2);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRUTH, rb, rs, dec_truth, &rd, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "cluster 2 comes from particle 2, the slice has 2");
    memcpy(rb, rg, rs);
    put_f32(rb + 12 + 32 + 4, NAN);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRUTH, rb, rs, dec_truth, &rd, &e), ADF_EPAYLOAD);
    tu_assert_error(&e, ADF_EPAYLOAD, "not finite");
    cp[0] = 7;
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_tpc_truth_encode(w, 1, 1, &rh, pt, cp, &e), ADF_EINVAL);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(tracks_truth_round_trip)
{
    uint32_t nt = tu_below(40), nc = 1 + tu_below(5000);
    adf_tpc_track_t *t = calloc(nt + 1, sizeof *t);
    adf_tpc_hit_t *h = calloc(nt * ADF_TPC_ROWS + 1, sizeof *h);
    uint32_t nh = 0;
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t n = 1 + tu_below(ADF_TPC_ROWS), r = 0;
        t[i].x = (float)tu_uniform();
        for (int k = 0; k < 5; k++)
            t[i].param[k] = tu_any_float();
        for (int k = 0; k < 15; k++)
            t[i].cov[k] = tu_any_float();
        t[i].chi2 = tu_any_float();
        t[i].ndf = (uint16_t)tu_below(65536);
        t[i].flags = (uint16_t)tu_below(65536);
        t[i].tracklet = (uint32_t)tu_rand();
        uint32_t k = 0;
        for (r = 0; r < ADF_TPC_ROWS && k < n; r++)
            if (tu_below(ADF_TPC_ROWS) < n || ADF_TPC_ROWS - r <= n - k) {
                h[nh + k].row = (uint8_t)r;
                h[nh + k].cluster = tu_below(nc);
                h[nh + k].flags = (uint8_t)tu_below(256);
                h[nh + k].x = tu_any_float();
                h[nh + k].y = tu_any_float();
                h[nh + k].z = tu_any_float();
                k++;
            }
        t[i].n_hits = (uint16_t)k;
        t[i].first_row = h[nh].row;
        t[i].last_row = h[nh + k - 1].row;
        nh += k;
    }
    adf_tpc_tracks_t hd = {nt, nh, nc, (uint32_t)tu_rand(), (uint8_t)tu_below(36), (uint8_t)(1 + tu_below(3)),
                           (uint16_t)tu_below(65536), NULL, NULL};
    size_t cap = ADF_KEY_SIZE + adf_tpc_tracks_payload_size(nt, nh);
    uint8_t *buf = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    adf_error_t e;
    adf_writer_reset(w, buf, cap);
    ck_assert_msg(adf_tpc_tracks_encode(w, 3, 4, &hd, t, h, &e) == ADF_OK, "%s", e.message);
    size_t size;
    const uint8_t *p = payload_of(buf, &size);
    adf_tpc_tracks_t d;
    ck_assert_msg(decode_raw(ADF_TYPE_DATA_TPC_TRACKS, p, size, dec_tracks, &d, &e) == ADF_OK, "%s", e.message);
    ck_assert(d.n_tracks == nt && d.n_hits == nh && d.n_clusters == nc && d.settings == hd.settings &&
              d.slice == hd.slice && d.backend == hd.backend && d.flags == hd.flags);
    for (uint32_t i = 0; i < nt; i++) {
        adf_tpc_track_t x;
        adf_tpc_track(&d, i, &x);
        tu_check(memcmp(&x, &t[i], sizeof x) == 0);
    }
    for (uint32_t j = 0; j < nh; j++) {
        adf_tpc_hit_t x;
        adf_tpc_hit(&d, j, &x);
        tu_check(x.cluster == h[j].cluster && x.row == h[j].row && x.flags == h[j].flags &&
                 memcmp(&x.x, &h[j].x, 4) == 0 && memcmp(&x.y, &h[j].y, 4) == 0 && memcmp(&x.z, &h[j].z, 4) == 0);
    }
    free(buf);
    /* truth */
    uint32_t np = tu_below(200);
    adf_tpc_particle_t *pt = calloc(np + 1, sizeof *pt);
    uint32_t *cp = malloc((nc + 1) * sizeof *cp), *cq = malloc((nc + 1) * sizeof *cq);
    for (uint32_t i = 0; i < np; i++) {
        pt[i].id = (uint32_t)tu_rand();
        for (int k = 0; k < 3; k++) {
            pt[i].p[k] = (float)(tu_uniform() - 0.5);
            pt[i].vertex[k] = (float)(100 * tu_uniform());
        }
        pt[i].charge = (int16_t)(tu_below(2) ? 1 : -2);
        pt[i].flags = (uint16_t)tu_below(65536);
    }
    for (uint32_t j = 0; j < nc; j++)
        cp[j] = np && tu_below(4) ? tu_below(np) : ADF_TPC_NOISE;
    adf_tpc_truth_t rh = {np, nc, (uint16_t)tu_below(36), (uint16_t)tu_below(65536), NULL, NULL}, rd;
    cap = ADF_KEY_SIZE + adf_tpc_truth_payload_size(np, nc);
    buf = malloc(cap);
    adf_writer_reset(w, buf, cap);
    ck_assert_int_eq(adf_tpc_truth_encode(w, 3, 4, &rh, pt, cp, &e), ADF_OK);
    p = payload_of(buf, &size);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_TPC_TRUTH, p, size, dec_truth, &rd, &e), ADF_OK);
    ck_assert(rd.n_particles == np && rd.n_clusters == nc && rd.slice == rh.slice && rd.flags == rh.flags);
    for (uint32_t i = 0; i < np; i++) {
        adf_tpc_particle_t x;
        adf_tpc_truth_particle(&rd, i, &x);
        tu_check(memcmp(&x, &pt[i], sizeof x) == 0);
    }
    adf_tpc_truth_clusters(&rd, 0, nc, cq);
    ck_assert(memcmp(cp, cq, nc * sizeof *cp) == 0);
    free(buf);
    free(pt);
    free(cp);
    free(cq);
    free(t);
    free(h);
    adf_writer_destroy(&w);
}
END_TEST

/* ---- the Kalman filter ---------------------------------------------------------------------- */

/* An exact helix in a slice's frame: from (0, 0, z0) with direction phi0,
 * curvature w = qpt bzk (1/mm), lambda = dz / ds. */
typedef struct helix {
    double phi0, w, lam, z0;
} helix_t;

/* Its (y, z, sin(phi)) where it first crosses x; 0 when it does not. */
static int helix_at_x(const helix_t *h, double x, double *y, double *z, double *sp)
{
    double u = h->w * x + sin(h->phi0);
    if (u < -1 || u > 1)
        return 0;
    double a = asin(u), s = (a - h->phi0) / h->w;
    if (s < 0)
        return 0;
    *y = -(cos(a) - cos(h->phi0)) / h->w;
    *z = h->z0 + h->lam * s;
    *sp = u;
    return 1;
}

START_TEST(propagation_follows_the_helix)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    tpc_params_t p;
    tpc_params_of(&cfg, &p);
    for (int trial = 0; trial < 200; trial++) {
        double pt = exp(log(0.6) + tu_uniform() * log(50.0)), q = tu_below(2) ? 1 : -1;
        double bz = tu_below(2) ? 0.5 : -0.2 - tu_uniform();
        float bzk = -TPC_CLIGHT * (float)bz;
        helix_t h = {(tu_uniform() - 0.5) * 0.6, (double)bzk * q / pt, (tu_uniform() - 0.5) * 2.0, 100 * tu_uniform()};
        double y, z, sp;
        ck_assert(helix_at_x(&h, tpc_row_x(0), &y, &z, &sp));
        tpc_state_t t;
        memset(&t, 0, sizeof t);
        t.x = tpc_row_x(0);
        t.y = (float)y;
        t.z = (float)z;
        t.sp = (float)sp;
        t.lam = (float)h.lam;
        t.qpt = (float)(q / pt);
        t.c[0] = t.c[2] = 0.5f;
        t.c[5] = t.c[9] = 1e-4f;
        t.c[14] = 1e-2f;
        for (unsigned r = 1; r < TPC_ROWS; r++) {
            if (!helix_at_x(&h, tpc_row_x(r), &y, &z, &sp) || fabs(sp) > 0.95)
                break;
            ck_assert(tpc_propagate(&t, tpc_row_x(r), bzk, p));
            /* float rounding over 158 steps, steep tracks amplifying it: well under a micron a step */
            tu_check(fabs(t.y - y) < 0.05 && fabs(t.z - z) < 0.05 && fabs(t.sp - sp) < 2e-5);
            for (int i = 0; i < 5; i++) {
                tu_check(t.c[i * (i + 1) / 2 + i] > 0);
                for (int j = 0; j < i; j++) /* |correlation| <= 1 */
                    tu_check(t.c[i * (i + 1) / 2 + j] * t.c[i * (i + 1) / 2 + j] <=
                             t.c[i * (i + 1) / 2 + i] * t.c[j * (j + 1) / 2 + j] * 1.0001f);
            }
        }
        /* the Jacobian against finite differences over one step */
        tpc_state_t a = t, b = t, c2 = t;
        float dx = t.x > 2000 ? -15.0f : 10.0f, ds = 1e-3f, dk = 1.0f;
        memset(a.c, 0, sizeof a.c);
        a.c[0] = a.c[2] = 1.0f;
        b = a;
        c2 = a;
        b.sp = a.sp + ds;
        c2.qpt = a.qpt + dk;
        tpc_state_t a0 = a;
        a0.c[5] = 1.0f; /* unit variance of sin(phi): C00 grows by (dY/dsin(phi))^2 */
        ck_assert(tpc_propagate(&a, a.x + dx, bzk, p) && tpc_propagate(&b, b.x + dx, bzk, p) &&
                  tpc_propagate(&c2, c2.x + dx, bzk, p) && tpc_propagate(&a0, a0.x + dx, bzk, p));
        double fd = fabs((b.y - a.y) / ds), jac = sqrt(a0.c[0] - 1.0f);
        /* and Z's through the arc length: C11 grows by (dZ/dsin(phi))^2; a
         * central difference, as Z's last bits allow */
        tpc_state_t zp = t, zm = t;
        zp.sp = t.sp + 0.01f;
        zm.sp = t.sp - 0.01f;
        double step = (double)zp.sp - (double)zm.sp;
        ck_assert(tpc_propagate(&zp, zp.x + dx, bzk, p) && tpc_propagate(&zm, zm.x + dx, bzk, p));
        double fz = fabs((zp.z - zm.z) / step), jz = sqrt(fmax(a0.c[2] - 1.0f, 0.0f));
        double ulp = fabs((double)t.z) * 1.2e-7 + 1e-7;
        /* (C11 - 1 resolves (dZ/dsin(phi))^2 to float's 1.2e-7: jz to 5e-4) */
        tu_check(fabs(fz - jz) < 0.05 * jz + 4 * ulp / 0.02 + 5e-4);
        tu_check(fabs(fd - jac) < 0.03 * fabs(jac) + 1e-3);
        double fk = (c2.sp - a.sp) / dk;
        tu_check(fabs(fk - dx * bzk) < 0.01 * fabs(dx * bzk) + 1e-6);
    }
    /* a step past max_sin_phi is refused, the state kept */
    tpc_state_t t;
    memset(&t, 0, sizeof t);
    t.x = 1000;
    t.sp = 0.98f;
    t.qpt = -10.0f; /* turning towards sin(phi) = 1 */
    tpc_state_t before = t;
    ck_assert(!tpc_propagate(&t, 1100, -TPC_CLIGHT * 0.5f, p));
    ck_assert(memcmp(&t, &before, sizeof t) == 0);
    /* the asin series */
    for (int k = 0; k <= 100; k++) {
        double u = 0.25 * k / 100.0;
        double want = u > 0 ? asin(u) / u : 1.0;
        tu_check(fabs(tpc_asin_ratio((float)u) - want) < 3e-7);
    }
}
END_TEST

/* A one-slice batch holding the clusters of helices (smeared) and noise. */
static void helix_slice(tpc_batch_t *b, const helix_t *h, int n_helix, double sy, double sz, unsigned noise,
                        uint32_t **owner)
{
    adf_tpc_cluster_t *c = malloc((n_helix * TPC_ROWS + noise + 1) * sizeof *c);
    uint32_t *own = malloc((n_helix * TPC_ROWS + noise + 1) * sizeof *own);
    uint32_t n = 0;
    for (int k = 0; k < n_helix; k++)
        for (unsigned r = 0; r < TPC_ROWS; r++) {
            double y, z, sp;
            if (!helix_at_x(&h[k], tpc_row_x(r), &y, &z, &sp) || fabs(y) > tpc_row_x(r) * TPC_TAN_EDGE)
                continue;
            c[n].row = (uint8_t)r;
            c[n].flags = 0;
            c[n].y = (float)(y + sy * (tu_uniform() + tu_uniform() + tu_uniform() - 1.5) * 2.0);
            c[n].z = (float)(z + sz * (tu_uniform() + tu_uniform() + tu_uniform() - 1.5) * 2.0);
            own[n++] = (uint32_t)k;
        }
    for (unsigned k = 0; k < noise; k++) {
        unsigned r = tu_below(TPC_ROWS);
        c[n].row = (uint8_t)r;
        c[n].flags = 0;
        c[n].y = (float)((2 * tu_uniform() - 1) * tpc_row_x(r) * TPC_TAN_EDGE);
        c[n].z = (float)(2500 * tu_uniform());
        own[n++] = UINT32_MAX;
    }
    /* in random order: the tracker sorts */
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = tu_below(i);
        adf_tpc_cluster_t x = c[i - 1];
        c[i - 1] = c[j];
        c[j] = x;
        uint32_t o = own[i - 1];
        own[i - 1] = own[j];
        own[j] = o;
    }
    tpc_slice_t s;
    memset(&s, 0, sizeof s);
    s.event = 1;
    s.hdr.n_clusters = n;
    s.hdr.slice = 0;
    s.hdr.slices = 1;
    s.hdr.bz = 0.5f;
    s.hdr.geometry = ADF_TPC_GEOMETRY_ALICE;
    s.cluster = c;
    tusk_error_t err;
    ck_assert_msg(tpc_batch_add(b, &s, &err) == TUSK_OK, "%s", err.message);
    free(c);
    if (owner)
        *owner = own;
    else
        free(own);
}

START_TEST(a_lone_track_found_whole)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    float bzk = -TPC_CLIGHT * 0.5f;
    for (int trial = 0; trial < 20;) {
        double pt = exp(log(0.5) + tu_uniform() * log(40.0)), q = tu_below(2) ? 1 : -1;
        helix_t h = {(tu_uniform() - 0.5) * 0.3, (double)bzk * q / pt, (tu_uniform() - 0.5) * 1.5,
                     50 * (tu_uniform() - 0.5)};
        tpc_batch_t *b = tpc_batch_new();
        /* smeared by a sum of three uniforms: variance sigma^2, at most 3 sigma */
        helix_slice(b, &h, 1, cfg.sigma_y_mm, cfg.sigma_z_mm, 0, NULL);
        tpc_slice_t s;
        tpc_batch_slice(b, 0, &s);
        if (s.hdr.n_clusters < 60) { /* it leaves the slice early: another */
            tpc_batch_destroy(&b);
            continue;
        }
        trial++;
        tpc_ref_t *ref;
        tusk_error_t err;
        ck_assert_int_eq(tpc_ref_new(&ref, &cfg, &err), TUSK_OK);
        tpc_result_t *res = tpc_result_new();
        ck_assert_msg(tpc_ref_run(ref, b, res, &err) == TUSK_OK, "%s", err.message);
        tpc_slice_result_t r;
        tpc_result_slice(res, 0, &r);
        ck_assert_msg(r.n_tracks == 1, "pT %.3f: %u tracks of %u clusters (%u seeds, %u tracklets)", pt,
                      (unsigned)r.n_tracks, s.hdr.n_clusters, (unsigned)r.n_start, (unsigned)r.n_tracklets);
        const adf_tpc_track_t *t = &r.track[0];
        ck_assert_msg(t->n_hits >= s.hdr.n_clusters - 5, "%u of %u clusters", (unsigned)t->n_hits, s.hdr.n_clusters);
        ck_assert_uint_eq(t->first_row, 0);
        ck_assert_uint_eq(t->ndf, 2 * t->n_hits - 5);
        ck_assert_msg(t->chi2 / t->ndf < 2.0, "chi2 %g / %u", (double)t->chi2, (unsigned)t->ndf);
        double y, z, sp;
        ck_assert(helix_at_x(&h, t->x, &y, &z, &sp));
        double truth[5] = {y, z, sp, h.lam, q / pt};
        static const int diag[5] = {0, 2, 5, 9, 14};
        for (int k = 0; k < 5; k++) {
            double pull = (t->param[k] - truth[k]) / sqrt(t->cov[diag[k]]);
            ck_assert_msg(fabs(pull) < 5.5, "pT %.3f: parameter %d: %.6g against %.6g (pull %.2f)", pt, k,
                          (double)t->param[k], truth[k], pull);
        }
        tpc_result_destroy(&res);
        tpc_ref_destroy(&ref);
        tpc_batch_destroy(&b);
    }
}
END_TEST

/* ---- steps I-III and V on hand-made data ------------------------------------------------------ */

/* Step 0 of a batch into d (the library's own arrays). */
static void data_of(const tpc_batch_t *b, const tpc_config_t *cfg, tpc_data_t *d)
{
    tusk_error_t err;
    memset(d, 0, sizeof *d);
    ck_assert_msg(tpc_data_plan(d, b, cfg->min_bin_mm, NULL, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tpc_data_fill(d, NULL, NULL, NULL, NULL, &err) == TUSK_OK, "%s", err.message);
}

/* The launch index of the cluster of frame index `id`. */
static uint32_t launch_of(const tpc_data_t *d, uint32_t id)
{
    for (uint32_t c = 0; c < d->n_clusters; c++)
        if (d->id[c] == id)
            return c;
    ck_abort_msg("cluster %u not in the data", (unsigned)id);
    return 0;
}

START_TEST(neighbours_pick_the_straightest)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    tpc_params_t p;
    tpc_params_of(&cfg, &p);
    for (int trial = 0; trial < 100; trial++) {
        /* a straight line through rows r-2, r, r+2 near the origin's ray, and
         * distractors in the hit areas further from it */
        unsigned r = 2 + tu_below(TPC_ROWS - 4);
        double x0 = tpc_row_x(r), xd = tpc_row_x(r - 2), xu = tpc_row_x(r + 2);
        double y0 = (2 * tu_uniform() - 1) * 0.8 * x0 * TPC_TAN_EDGE, z0 = 2400 * tu_uniform();
        double ty = y0 / x0 + (tu_uniform() - 0.5) * 0.4, tz = z0 / x0 + (tu_uniform() - 0.5) * 0.1;
        adf_tpc_cluster_t c[16];
        int n = 0;
        c[n++] = (adf_tpc_cluster_t){(uint8_t)r, 0, (float)y0, (float)z0};
        c[n++] = (adf_tpc_cluster_t){(uint8_t)(r - 2), 0, (float)(y0 + ty * (xd - x0)), (float)(z0 + tz * (xd - x0))};
        c[n++] = (adf_tpc_cluster_t){(uint8_t)(r + 2), 0, (float)(y0 + ty * (xu - x0)), (float)(z0 + tz * (xu - x0))};
        int distract = (int)tu_below(8);
        double offs[2][8];
        int noff[2] = {0, 0};
        for (int k = 0; k < distract; k++) {
            int up = (int)tu_below(2);
            double dx = up ? xu - x0 : xd - x0;
            /* a slope at least 0.05 off the line's in y: S at least 0.05^2
             * larger with the line's other cluster; and at least 0.05 off
             * every distractor's across the middle, so that no two of them
             * make a second straight line through it (S = their difference^2):
             * one that would is left out */
            double off = (0.05 + 0.25 * tu_uniform()) * (tu_below(2) ? 1 : -1);
            bool clash = false;
            for (int j = 0; j < noff[!up]; j++)
                clash |= fabs(off - offs[!up][j]) < 0.05;
            if (clash)
                continue;
            offs[up][noff[up]++] = off;
            c[n++] = (adf_tpc_cluster_t){(uint8_t)(up ? r + 2 : r - 2), 0, (float)(y0 + (ty + off) * dx),
                                         (float)(z0 + tz * dx)};
        }
        tpc_batch_t *b = tpc_batch_new();
        tpc_slice_t s;
        memset(&s, 0, sizeof s);
        s.hdr.n_clusters = (uint32_t)n;
        s.hdr.slices = 1;
        s.hdr.bz = 0.5f;
        s.hdr.geometry = ADF_TPC_GEOMETRY_ALICE;
        s.cluster = c;
        tusk_error_t err;
        ck_assert_int_eq(tpc_batch_add(b, &s, &err), TUSK_OK);
        tpc_data_t d;
        data_of(b, &cfg, &d);
        uint16_t up[16], dn[16];
        uint32_t link[16];
        for (uint32_t q = 0; q < d.n_clusters; q++) {
            uint32_t rr = d.row_of[q];
            tpc_neighbours(d.row, rr, q - d.row[rr].first, d.yz, d.fbin, p, up, dn);
        }
        for (uint32_t q = 0; q < d.n_clusters; q++) {
            uint32_t rr = d.row_of[q];
            tpc_clean(d.row, rr, q - d.row[rr].first, up, dn, link);
        }
        uint32_t k0 = launch_of(&d, 0), kd = launch_of(&d, 1), ku = launch_of(&d, 2);
        ck_assert_uint_eq(up[k0], ku - d.row[r + 2].first);
        ck_assert_uint_eq(dn[k0], kd - d.row[r - 2].first);
        /* the line's ends: no pair of their own (their r+-2 rows are empty, or r is an edge) */
        ck_assert_uint_eq(up[ku], TPC_NONE);
        ck_assert_uint_eq(dn[kd], TPC_NONE);
        /* the cleaner keeps only mutual links: the ends have none, so the middle loses both */
        ck_assert_uint_eq(link[k0], TPC_NONE | TPC_NONE << 16);
        tpc_data_free(&d);
        tpc_batch_destroy(&b);
    }
    /* five rows of a line: the middle ones keep mutual links, and a start hit needs a chain of min_seed */
    for (unsigned len = 3; len <= 6; len++) {
        adf_tpc_cluster_t c[8];
        unsigned r0 = 20;
        for (unsigned k = 0; k < len; k++)
            c[k] = (adf_tpc_cluster_t){(uint8_t)(r0 + 2 * k), 0, (float)(0.05 * tpc_row_x(r0 + 2 * k)),
                                       (float)(0.5 * tpc_row_x(r0 + 2 * k))};
        tpc_batch_t *b = tpc_batch_new();
        tpc_slice_t s;
        memset(&s, 0, sizeof s);
        s.hdr.n_clusters = len;
        s.hdr.slices = 1;
        s.hdr.bz = 0.5f;
        s.hdr.geometry = ADF_TPC_GEOMETRY_ALICE;
        s.cluster = c;
        tusk_error_t err;
        ck_assert_int_eq(tpc_batch_add(b, &s, &err), TUSK_OK);
        tpc_data_t d;
        data_of(b, &cfg, &d);
        uint16_t up[8], dn[8];
        uint32_t link[8];
        for (uint32_t q = 0; q < d.n_clusters; q++)
            tpc_neighbours(d.row, d.row_of[q], 0, d.yz, d.fbin, p, up, dn);
        for (uint32_t q = 0; q < d.n_clusters; q++)
            tpc_clean(d.row, d.row_of[q], 0, up, dn, link);
        unsigned starts = 0, linked = 0;
        for (uint32_t q = 0; q < d.n_clusters; q++) {
            starts += tpc_is_start(d.row, d.row_of[q], 0, link, p);
            linked += tpc_link_up(link[q]) != TPC_NONE;
        }
        /* the two ends have a single neighbour and so no pair: len - 2 clusters are linked,
         * len - 3 of them upwards */
        ck_assert_uint_eq(linked, len - 3);
        ck_assert_uint_eq(starts, len - 2 >= p.min_seed ? 1u : 0u);
        tpc_data_free(&d);
        tpc_batch_destroy(&b);
    }
}
END_TEST

START_TEST(selector_shares_and_splits)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    tpc_params_t p;
    tpc_params_of(&cfg, &p);
    /* one cluster a row (in-row index 0), row r's cluster is launch cluster r */
    tpc_row_t rows[TPC_ROWS];
    memset(rows, 0, sizeof rows);
    for (unsigned r = 0; r < TPC_ROWS; r++) {
        rows[r].first = r;
        rows[r].n = 1;
    }
    uint32_t weight[TPC_ROWS];
    uint16_t hits[TPC_ROWS];
    const uint32_t key = tpc_weight_key(40, 3), other = tpc_weight_key(50, 1);
    ck_assert(other > key && tpc_weight_key(40, 4) > key && tpc_weight_key(39, 65535) < key);
    /* rows 10-49: 20 own, then shared ones interleaved: taken while they do not outnumber the own */
    for (unsigned r = 0; r < TPC_ROWS; r++) {
        hits[r] = r >= 10 && r < 50 ? 0 : (uint16_t)TPC_NONE;
        weight[r] = r < 30 ? key : other;
    }
    tpc_segments_t seg;
    tpc_select(rows, weight, key, 10, 49, p, hits, 1, &seg);
    /* 20 own (10-29) then 20 shared: all 20 shared are taken (20 <= 20) */
    ck_assert_uint_eq(seg.n, 1);
    ck_assert_uint_eq(seg.hits[0], 40);
    /* shared first: none taken before an own one */
    for (unsigned r = 0; r < TPC_ROWS; r++)
        weight[r] = r < 15 ? other : key;
    tpc_select(rows, weight, key, 10, 49, p, hits, 1, &seg);
    ck_assert_uint_eq(seg.n, 1);
    ck_assert_uint_eq(seg.first[0], 15);
    ck_assert_uint_eq(seg.hits[0], 35);
    /* alternating own and shared from an own one: every shared one taken */
    for (unsigned r = 0; r < TPC_ROWS; r++)
        weight[r] = r % 2 ? other : key;
    tpc_select(rows, weight, key, 10, 49, p, hits, 1, &seg);
    ck_assert_uint_eq(seg.hits[0], 40);
    /* own, shared, shared: the second shared one outnumbers the own ones */
    for (unsigned r = 0; r < TPC_ROWS; r++)
        weight[r] = r % 3 == 1 ? key : other;
    tpc_select(rows, weight, key, 10, 49, p, hits, 1, &seg);
    ck_assert_uint_eq(seg.n, 1);
    ck_assert_uint_eq(seg.first[0], 10 + 0); /* row 10: 10 % 3 == 1 */
    /* rows 10, 11 (shared, 1 <= 1), 12 (shared, 2 > 1: not), 13 own, 14 (shared 2 <= 2), ... */
    uint32_t out[TPC_ROWS];
    uint32_t n = tpc_select_emit(rows, weight, key, seg.first[0], seg.last[0], hits, 1, out);
    ck_assert_uint_eq(n, seg.hits[0]);
    ck_assert_uint_eq(out[0], 10u << 1);
    ck_assert_uint_eq(out[1], 11u << 1 | 1);
    ck_assert_uint_eq(out[2], 13u << 1);
    for (uint32_t k = 1; k < n; k++)
        ck_assert((out[k] >> 1) > (out[k - 1] >> 1));
    /* a gap of sel_gap rows ends a segment; a short one is no track */
    for (unsigned r = 0; r < TPC_ROWS; r++) {
        weight[r] = key;
        hits[r] = (r >= 10 && r < 30) || (r >= 30 + p.sel_gap && r < 30 + p.sel_gap + 12) ||
                          (r >= 60 && r < 60 + p.min_hits - 1)
                      ? 0
                      : (uint16_t)TPC_NONE;
    }
    tpc_select(rows, weight, key, 10, 80, p, hits, 1, &seg);
    ck_assert_uint_eq(seg.n, 2);
    ck_assert(seg.first[0] == 10 && seg.last[0] == 29 && seg.hits[0] == 20);
    ck_assert(seg.first[1] == 30 + p.sel_gap && seg.hits[1] == 12);
    ck_assert_uint_eq(seg.total, 32);
    /* one row fewer of gap joins them */
    hits[29 + p.sel_gap] = 0;
    tpc_select(rows, weight, key, 10, 80, p, hits, 1, &seg);
    ck_assert(seg.n == 1 && seg.hits[0] == 33);
}
END_TEST

/* ---- backends ------------------------------------------------------------------------------- */

static tpc_sim_t *simulator(int preset, uint32_t tracks, uint64_t seed, double noise)
{
    tpc_sim_config_t sc;
    tpc_sim_config_default(&sc);
    sc.preset = preset;
    sc.tracks = tracks;
    sc.seed = seed;
    sc.noise_per_row = noise;
    tpc_sim_t *sim;
    tusk_error_t err;
    ck_assert_msg(tpc_sim_new(&sim, &sc, 2, &err) == TUSK_OK, "%s", err.message);
    return sim;
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

START_TEST(reference_equals_fast_on_random_events)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    cfg.area_tan_y = 0.5 + tu_uniform();
    cfg.cluster_chi2 = 8 + 20 * tu_uniform();
    cfg.nf_candidates = 5 + tu_below(28);
    cfg.min_hits = 6 + tu_below(10);
    cfg.min_bin_mm = 5 + 30 * tu_uniform();
    tusk_error_t err;
    tpc_ref_t *ref;
    tpc_fast_t *f1, *f3;
    ck_assert_int_eq(tpc_ref_new(&ref, &cfg, &err), TUSK_OK);
    ck_assert_int_eq(tpc_fast_new(&f1, &cfg, 1, &err), TUSK_OK);
    ck_assert_int_eq(tpc_fast_new(&f3, &cfg, 3, &err), TUSK_OK);
    tpc_sim_t *sim = simulator(TPC_PRESET_PP, 50 + tu_below(500), tu_rand(), 5 * tu_uniform());
    tpc_batch_t *b = tpc_batch_new();
    add_event(sim, tu_below(100), b);
    add_event(sim, 100 + tu_below(100), b);
    /* and an empty slice */
    tpc_slice_t e;
    memset(&e, 0, sizeof e);
    e.hdr.slice = 3;
    e.hdr.slices = 1;
    e.hdr.bz = -0.3f;
    e.hdr.geometry = ADF_TPC_GEOMETRY_ALICE;
    ck_assert_int_eq(tpc_batch_add(b, &e, &err), TUSK_OK);
    tpc_result_t *r0 = tpc_result_new(), *r1 = tpc_result_new(), *r3 = tpc_result_new();
    ck_assert_msg(tpc_ref_run(ref, b, r0, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tpc_fast_run(f1, b, r1, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tpc_fast_run(f3, b, r3, &err) == TUSK_OK, "%s", err.message);
    char why[512];
    ck_assert_msg(tpc_result_equal(r0, r1, why, sizeof why), "fast, 1 thread: %s", why);
    ck_assert_msg(tpc_result_equal(r0, r3, why, sizeof why), "fast, 3 threads: %s", why);
    ck_assert_msg(tpc_fast_run(f3, b, r1, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tpc_result_equal(r0, r1, why, sizeof why), "fast again: %s", why);
    uint64_t nt, nh, nl;
    tpc_result_totals(r0, &nt, &nh, &nl);
    ck_assert(nt > 0 && nl >= nt / TPC_SEG_MAX);
    tpc_slice_result_t last;
    tpc_result_slice(r0, tpc_result_slices(r0) - 1, &last);
    ck_assert_uint_eq(last.n_tracks, 0);
    /* every track: rising rows, clusters of its slice, first and last row right */
    for (size_t i = 0; i < tpc_result_slices(r0); i++) {
        tpc_slice_result_t r;
        tpc_result_slice(r0, i, &r);
        tpc_slice_t x;
        tpc_batch_slice(b, i, &x);
        uint32_t h = 0;
        for (uint32_t t = 0; t < r.n_tracks; t++) {
            const adf_tpc_track_t *tr = &r.track[t];
            tu_check(tr->n_hits >= cfg.min_hits && tr->tracklet < r.n_start);
            tu_check(r.hit[h].row == tr->first_row && r.hit[h + tr->n_hits - 1].row == tr->last_row);
            for (uint32_t k = 0; k < tr->n_hits; k++) {
                tu_check(r.hit[h + k].cluster < x.hdr.n_clusters);
                tu_check(x.cluster[r.hit[h + k].cluster].row == r.hit[h + k].row);
                tu_check(k == 0 || r.hit[h + k].row > r.hit[h + k - 1].row);
            }
            h += tr->n_hits;
        }
    }
    printf("random events: %zu slices, %llu clusters, %llu tracks of %llu clusters, %llu tracklets: reference = "
           "fast (1 and 3 threads)\n",
           tpc_batch_count(b), (unsigned long long)tpc_batch_clusters(b), (unsigned long long)nt,
           (unsigned long long)nh, (unsigned long long)nl);
    tpc_result_destroy(&r0);
    tpc_result_destroy(&r1);
    tpc_result_destroy(&r3);
    tpc_batch_destroy(&b);
    tpc_sim_destroy(&sim);
    tpc_ref_destroy(&ref);
    tpc_fast_destroy(&f1);
    tpc_fast_destroy(&f3);
}
END_TEST

START_TEST(limits_and_settings_refused)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    tusk_error_t err;
    /* a row of more clusters than the 16-bit in-row index allows */
    uint32_t n = TPC_MAX_ROW_CLUSTERS + 1;
    adf_tpc_cluster_t *c = malloc(n * sizeof *c);
    for (uint32_t i = 0; i < n; i++)
        c[i] = (adf_tpc_cluster_t){5, 0, (float)(100 * tu_uniform()), (float)(2000 * tu_uniform())};
    tpc_slice_t s;
    memset(&s, 0, sizeof s);
    s.event = 12;
    s.hdr.n_clusters = n;
    s.hdr.slice = 9;
    s.hdr.slices = 36;
    s.hdr.bz = 0.5f;
    s.hdr.geometry = ADF_TPC_GEOMETRY_ALICE;
    s.cluster = c;
    tpc_batch_t *b = tpc_batch_new();
    ck_assert_int_eq(tpc_batch_add(b, &s, &err), TUSK_OK);
    tpc_ref_t *ref;
    ck_assert_int_eq(tpc_ref_new(&ref, &cfg, &err), TUSK_OK);
    tpc_result_t *res = tpc_result_new();
    ck_assert_int_eq(tpc_ref_run(ref, b, res, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "event 12, slice 9: row 5 has 65536 clusters");
    /* a slice the frames' rules refuse */
    c[3].row = 159;
    s.hdr.n_clusters = 10;
    ck_assert_int_eq(tpc_batch_add(b, &s, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "row 159");
    free(c);
    tpc_result_destroy(&res);
    tpc_ref_destroy(&ref);
    tpc_batch_destroy(&b);
    /* settings */
    ck_assert_int_eq(tpc_config_set(&cfg, "min_hits", "5", &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "min_hits");
    ck_assert_int_eq(tpc_config_set(&cfg, "nf_candidates", "33", &err), TUSK_EPARAM);
    ck_assert_int_eq(tpc_config_set(&cfg, "area_tan_y", "nan", &err), TUSK_EPARAM);
    ck_assert_int_eq(tpc_config_set(&cfg, "bogus", "1", &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "unknown TPC setting 'bogus'");
    tpc_config_t a, d;
    tpc_config_default(&a);
    tpc_config_default(&d);
    ck_assert_int_eq(tpc_config_set(&a, "cluster_chi2", "12", &err), TUSK_OK);
    ck_assert_uint_ne(tpc_config_digest(&a), tpc_config_digest(&d));
    for (const char *const *k = tpc_config_keys(); *k; k++) {
        tpc_config_default(&a);
        ck_assert_msg(tpc_config_set(&a, *k, "7", &err) == TUSK_OK || err.code == TUSK_EPARAM, "%s", *k);
    }
    cfg.min_hits = 5;
    ck_assert_int_eq(tpc_ref_new(&ref, &cfg, &err), TUSK_EPARAM);
}
END_TEST

/* ---- the simulation --------------------------------------------------------------------------------- */

START_TEST(simulation_sanity)
{
    uint64_t seed = tu_rand();
    double noise = 1 + 3 * tu_uniform();
    tpc_sim_config_t sc;
    tpc_sim_config_default(&sc);
    sc.preset = TPC_PRESET_PP;
    sc.seed = seed;
    sc.noise_per_row = noise;
    tusk_error_t err;
    tpc_sim_t *a, *b;
    ck_assert_int_eq(tpc_sim_new(&a, &sc, 1, &err), TUSK_OK);
    ck_assert_int_eq(tpc_sim_new(&b, &sc, 4, &err), TUSK_OK);
    ck_assert_uint_eq(tpc_sim_config(a)->tracks, tpc_preset_tracks(TPC_PRESET_PP));
    uint64_t index = tu_below(1000);
    const tpc_sim_event_t *ea, *eb;
    ck_assert_int_eq(tpc_sim_make(a, index, &ea, &err), TUSK_OK);
    ck_assert_int_eq(tpc_sim_make(b, index, &eb, &err), TUSK_OK);
    ck_assert_uint_eq(ea->clusters, eb->clusters);
    ck_assert_uint_eq(ea->event, index);
    /* the noise: Poisson of 36 x 159 x mean, within 6 sigma */
    double want = 36.0 * 159.0 * noise;
    ck_assert_msg(fabs((double)ea->noise - want) < 6 * sqrt(want), "%llu noise clusters, %.0f expected",
                  (unsigned long long)ea->noise, want);
    uint64_t total = 0;
    for (unsigned s = 0; s < ADF_TPC_SLICES; s++) {
        tpc_slice_t x, y;
        tpc_sim_slice(a, s, &x);
        tpc_sim_slice(b, s, &y);
        ck_assert_uint_eq(x.hdr.n_clusters, y.hdr.n_clusters);
        for (uint32_t i = 0; i < x.hdr.n_clusters; i++) /* field by field: the struct has padding */
            tu_check(x.cluster[i].row == y.cluster[i].row && x.cluster[i].flags == y.cluster[i].flags &&
                     memcmp(&x.cluster[i].y, &y.cluster[i].y, 4) == 0 &&
                     memcmp(&x.cluster[i].z, &y.cluster[i].z, 4) == 0);
        ck_assert(x.hdr.slice == s && x.hdr.slices == 36 && x.hdr.bz == 0.5f);
        const adf_tpc_particle_t *pa, *pb;
        const uint32_t *ca, *cb;
        uint32_t na, nb;
        tpc_sim_truth(a, s, &pa, &na, &ca);
        tpc_sim_truth(b, s, &pb, &nb, &cb);
        ck_assert_uint_eq(na, nb);
        ck_assert(memcmp(pa, pb, na * sizeof *pa) == 0 && memcmp(ca, cb, x.hdr.n_clusters * sizeof *ca) == 0);
        uint32_t *count = calloc(na + 1, sizeof *count);
        for (uint32_t i = 0; i < x.hdr.n_clusters; i++) {
            const adf_tpc_cluster_t *c = &x.cluster[i];
            /* by row, then y */
            tu_check(i == 0 || c->row > x.cluster[i - 1].row ||
                     (c->row == x.cluster[i - 1].row && c->y >= x.cluster[i - 1].y));
            /* inside the slice (smearing aside) and on its side of the central electrode */
            tu_check(fabs(c->y) <= tpc_row_x(c->row) * TPC_TAN_EDGE + 8 * sc.sigma_y_mm);
            tu_check(s < 18 ? c->z > -8 * sc.sigma_z_mm : c->z < 8 * sc.sigma_z_mm);
            tu_check(ca[i] == ADF_TPC_NOISE || ca[i] < na);
            if (ca[i] != ADF_TPC_NOISE)
                count[ca[i]]++;
        }
        for (uint32_t k = 0; k < na; k++) {
            tu_check(count[k] >= 1 && pa[k].id < sc.tracks + 1000 && (pa[k].charge == 1 || pa[k].charge == -1));
            for (uint32_t j = 0; j < k && j < 64; j++)
                tu_check(pa[k - 1 - j].id != pa[k].id);
        }
        free(count);
        total += x.hdr.n_clusters;
    }
    ck_assert_uint_eq(total, ea->clusters);
    /* a particle leaves on average a good part of 159 rows; another event differs */
    ck_assert_msg(ea->clusters - ea->noise > 40u * sc.tracks, "%llu clusters of %u particles",
                  (unsigned long long)(ea->clusters - ea->noise), (unsigned)sc.tracks);
    ck_assert_int_eq(tpc_sim_make(b, index + 1, &eb, &err), TUSK_OK);
    /* (the counts alone may agree by chance: the clusters themselves) */
    bool differs = ea->clusters != eb->clusters;
    for (unsigned s = 0; s < TPC_SLICES && !differs; s++) {
        tpc_slice_t x, y;
        tpc_sim_slice(a, s, &x);
        tpc_sim_slice(b, s, &y);
        differs = x.hdr.n_clusters != y.hdr.n_clusters ||
                  (x.hdr.n_clusters && memcmp(x.cluster, y.cluster, x.hdr.n_clusters * sizeof *x.cluster) != 0);
    }
    ck_assert_msg(differs, "events %u and %u are the same", (unsigned)index, (unsigned)index + 1);
    tpc_sim_destroy(&a);
    tpc_sim_destroy(&b);
    /* settings */
    tusk_params_t *p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "preset", "semi", &err), TUSK_OK);
    tpc_sim_config_default(&sc);
    ck_assert_int_eq(tpc_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "expected pp, noncentral or central");
    tusk_params_destroy(&p);
    p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "bz_tesla", "0", &err), TUSK_OK);
    ck_assert_int_eq(tpc_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "bz_tesla");
    tusk_params_destroy(&p);
    p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "preset", "noncentral", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "pt_min_gev", "30", &err), TUSK_OK);
    tpc_sim_config_default(&sc);
    ck_assert_int_eq(tpc_sim_config_read(&sc, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "pt_max_gev");
    tusk_params_destroy(&p);
}
END_TEST

/* ---- the analysis ---------------------------------------------------------------------------------- */

typedef struct buffers {
    uint8_t **buf;
    size_t *size, n;
} buffers_t;

static void free_buffers(buffers_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->buf[i]);
    free(b->buf);
    free(b->size);
}

/* `events` events, their slices' frames packed into buffers of at most cap bytes. */
static void to_buffers(tpc_sim_t *sim, unsigned events, size_t cap, buffers_t *out)
{
    memset(out, 0, sizeof *out);
    adf_writer_t *w = adf_writer_new();
    tusk_error_t err;
    uint8_t *cur = NULL;
    size_t used = 0;
    for (unsigned e = 0; e < events; e++) {
        const tpc_sim_event_t *ev;
        ck_assert_int_eq(tpc_sim_make(sim, e, &ev, &err), TUSK_OK);
        for (unsigned s = 0; s < ADF_TPC_SLICES; s++) {
            size_t need = tpc_sim_slice_bytes(sim, s);
            ck_assert(need <= cap);
            if (!cur || used + need > cap) {
                out->buf = realloc(out->buf, (out->n + 1) * sizeof *out->buf);
                out->size = realloc(out->size, (out->n + 1) * sizeof *out->size);
                cur = out->buf[out->n] = malloc(cap);
                out->size[out->n] = 0;
                out->n++;
                used = 0;
            }
            adf_writer_reset(w, cur + used, cap - used);
            ck_assert_msg(tpc_sim_encode_slice(sim, s, w, &err) == TUSK_OK, "%s", err.message);
            used += adf_writer_used(w);
            out->size[out->n - 1] = used;
        }
    }
    adf_writer_destroy(&w);
}

/* Every buffer through a backend and the frames writer. */
static void track_buffers(const buffers_t *in, const tpc_config_t *cfg, buffers_t *out)
{
    tusk_error_t err;
    tpc_fast_t *fast;
    ck_assert_int_eq(tpc_fast_new(&fast, cfg, 2, &err), TUSK_OK);
    tpc_batch_t *b = tpc_batch_new();
    tpc_result_t *res = tpc_result_new();
    adf_writer_t *w = adf_writer_new();
    out->n = in->n;
    out->buf = calloc(in->n, sizeof *out->buf);
    out->size = calloc(in->n, sizeof *out->size);
    for (size_t i = 0; i < in->n; i++) {
        ck_assert_msg(tpc_frames_read(b, in->buf[i], in->size[i], 0, &err) == TUSK_OK, "%s", err.message);
        ck_assert_int_eq(tpc_fast_run(fast, b, res, &err), TUSK_OK);
        size_t cap = in->size[i] + tpc_frames_extra(res);
        out->buf[i] = malloc(cap);
        adf_writer_reset(w, out->buf[i], cap);
        ck_assert_msg(tpc_frames_write(in->buf[i], in->size[i], b, res, cfg, TPC_FAST, true, w, &err) == TUSK_OK, "%s",
                      err.message);
        out->size[i] = adf_writer_used(w);
        ck_assert_uint_eq(out->size[i], cap); /* exactly what tpc_frames_extra promised */
    }
    adf_writer_destroy(&w);
    tpc_result_destroy(&res);
    tpc_batch_destroy(&b);
    tpc_fast_destroy(&fast);
}

START_TEST(events_over_many_buffers_and_quality)
{
    tpc_sim_t *sim = simulator(TPC_PRESET_PP, 0, 1 + tu_below(1000), 1);
    buffers_t in, out;
    to_buffers(sim, 2, 96 * 1024, &in);
    ck_assert_msg(in.n > 4, "%zu buffers", in.n);
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    track_buffers(&in, &cfg, &out);
    tusk_error_t err;
    char table[2][8192];
    tpc_qa_summary_t s;
    for (int order = 0; order < 2; order++) {
        tpc_qa_config_t qc;
        tpc_qa_config_default(&qc);
        tpc_qa_t *qa;
        ck_assert_int_eq(tpc_qa_new(&qa, &qc, &err), TUSK_OK);
        for (size_t k = 0; k < out.n; k++) {
            size_t i = order ? out.n - 1 - k : k; /* the second time backwards */
            ck_assert_msg(tpc_qa_feed(qa, out.buf[i], out.size[i], 0, &err) == TUSK_OK, "%s", err.message);
        }
        ck_assert_msg(tpc_qa_finish(qa, &err) == TUSK_OK, "%s", err.message);
        tpc_qa_summary(qa, &s);
        ck_assert_uint_eq(s.events, 2);
        ck_assert_uint_eq(s.slices, 72);
        FILE *mem = fmemopen(table[order], sizeof table[order], "w");
        tpc_qa_print(qa, mem);
        fclose(mem);
        if (order == 0)
            fputs(table[0], stdout);
        tpc_qa_destroy(&qa);
    }
    ck_assert_str_eq(table[0], table[1]);
    ck_assert_int_eq(s.backend, TPC_FAST);
    /* a pp event: nearly everything found, no fakes to speak of, unit pulls */
    ck_assert_msg(s.efficiency > 75.0, "efficiency %.2f %%", s.efficiency);
    ck_assert_msg(s.ref.particles == 0 || s.ref_efficiency > 90.0, "reference efficiency %.2f %%", s.ref_efficiency);
    ck_assert_msg(s.fake_rate < 5.0 && s.clone_rate < 10.0, "fakes %.2f %%, clones %.2f %%", s.fake_rate,
                  s.clone_rate);
    for (int k = 0; k < 2; k++)
        ck_assert_msg(s.res[k].pull_rms > 0.7 && s.res[k].pull_rms < 1.4, "pull %d: %.3f", k, s.res[k].pull_rms);
    for (int k = 0; k < 5; k++)
        ck_assert_msg(s.res[k].pull_core > 0.6 && s.res[k].pull_core <= s.res[k].pull_rms * 1.25,
                      "pull %d: core %.3f, RMS %.3f", k, s.res[k].pull_core, s.res[k].pull_rms);
    /* (an RMS: a few low-momentum tracks with errors of their own widen it; the pulls are the test) */
    ck_assert_msg(s.res[0].rms < 2.0 && s.res[1].rms < 2.0, "residuals %.3f %.3f mm", s.res[0].rms, s.res[1].rms);
    /* a buffer missing: its slices and its event are named */
    tpc_qa_config_t qc;
    tpc_qa_config_default(&qc);
    tpc_qa_t *qa;
    ck_assert_int_eq(tpc_qa_new(&qa, &qc, &err), TUSK_OK);
    for (size_t k = 1; k < out.n; k++)
        ck_assert_int_eq(tpc_qa_feed(qa, out.buf[k], out.size[k], 0, &err), TUSK_OK);
    ck_assert_int_eq(tpc_qa_finish(qa, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "event 0");
    tpc_qa_destroy(&qa);
    /* only clusters and truth: the tracks are missing */
    ck_assert_int_eq(tpc_qa_new(&qa, &qc, &err), TUSK_OK);
    ck_assert_int_eq(tpc_qa_feed(qa, in.buf[0], in.size[0], 0, &err), TUSK_OK);
    ck_assert_int_eq(tpc_qa_finish(qa, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "no data:tpc_tracks came");
    tpc_qa_destroy(&qa);
    /* the analysis refuses frames of other settings */
    qc.alg.cluster_chi2 = 9.0;
    ck_assert_int_eq(tpc_qa_new(&qa, &qc, &err), TUSK_OK);
    ck_assert_int_eq(tpc_qa_feed(qa, out.buf[0], out.size[0], 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "other settings than this analysis");
    tpc_qa_destroy(&qa);
    /* track by track: a file against itself, and against other settings */
    size_t na = 0;
    for (size_t i = 0; i < out.n; i++)
        na += out.size[i];
    uint8_t *all = malloc(na), *at = all;
    for (size_t i = 0; i < out.n; i++, at += out.size[i - 1])
        memcpy(at, out.buf[i], out.size[i]);
    tpc_compare_t cmp;
    ck_assert_int_eq(tpc_compare_buffers(all, na, all, na, &cmp, &err), TUSK_OK);
    ck_assert_uint_eq(cmp.slices, 72);
    ck_assert(cmp.same == cmp.tracks_a && cmp.tracks_a == cmp.tracks_b && cmp.hits_differ == 0);
    tpc_config_t other = cfg;
    other.area_tan_y = 0.4;
    buffers_t out2;
    track_buffers(&in, &other, &out2);
    size_t nb = 0;
    for (size_t i = 0; i < out2.n; i++)
        nb += out2.size[i];
    uint8_t *all2 = malloc(nb);
    at = all2;
    for (size_t i = 0; i < out2.n; i++, at += out2.size[i - 1])
        memcpy(at, out2.buf[i], out2.size[i]);
    ck_assert_int_eq(tpc_compare_buffers(all, na, all2, nb, &cmp, &err), TUSK_OK);
    ck_assert(cmp.same < cmp.tracks_a || cmp.tracks_a != cmp.tracks_b);
    /* a slice missing from the second */
    ck_assert_int_eq(tpc_compare_buffers(all, na, all2, out2.size[0], &cmp, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "none in the second");
    free(all);
    free(all2);
    /* the files and, when gnuplot is there, the picture */
    ck_assert_int_eq(tpc_qa_new(&qa, &qc, &err), TUSK_OK);
    qc.alg = cfg;
    tpc_qa_destroy(&qa);
    ck_assert_int_eq(tpc_qa_new(&qa, &qc, &err), TUSK_OK);
    for (size_t k = 0; k < out.n; k++)
        ck_assert_int_eq(tpc_qa_feed(qa, out.buf[k], out.size[k], 0, &err), TUSK_OK);
    ck_assert_int_eq(tpc_qa_finish(qa, &err), TUSK_OK);
    char dir[512];
    tu_make_dir(dir, sizeof dir);
    bool plot = system("command -v ${TUSK_GNUPLOT:-gnuplot} >/dev/null 2>&1") == 0;
    ck_assert_msg(tpc_qa_write(qa, dir, plot, "png", &err) == TUSK_OK, "%s", err.message);
    char path[700];
    snprintf(path, sizeof path, "%s/momentum.csv", dir);
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    int lines = 0;
    for (int ch; (ch = fgetc(fp)) != EOF;)
        lines += ch == '\n';
    fclose(fp);
    ck_assert_int_eq(lines, TPC_QA_PBINS + 1);
    char rm[800];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
    tpc_qa_destroy(&qa);
    free_buffers(&in);
    free_buffers(&out);
    free_buffers(&out2);
    tpc_sim_destroy(&sim);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tpc");
    TCase *tc = tcase_create("frames");
    tcase_add_test(tc, clusters_round_trip_and_layout);
    tcase_add_test(tc, frames_malformed);
    tcase_add_test(tc, tracks_truth_round_trip);
    suite_add_tcase(s, tc);
    tc = tcase_create("algorithm");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, propagation_follows_the_helix);
    tcase_add_test(tc, a_lone_track_found_whole);
    tcase_add_test(tc, neighbours_pick_the_straightest);
    tcase_add_test(tc, selector_shares_and_splits);
    tcase_add_test(tc, reference_equals_fast_on_random_events);
    tcase_add_test(tc, limits_and_settings_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("simulation");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, simulation_sanity);
    suite_add_tcase(s, tc);
    tc = tcase_create("analysis");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, events_over_many_buffers_and_quality);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
