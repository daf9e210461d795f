/* check_ut.c - the UT decoding and Compass tracking on the CPU
 * (tusk/ut.h): the frames (round trips, the exact layout, malformed
 * payloads), the geometry (sectors, groups, locating points), the
 * settings, the decoding of hand-built raw banks (every hit once, in its
 * group, sorted, at its strip's x), Compass on planted tracks (4 hits;
 * a plane missing, found forwards or backwards; the charge; backward
 * tracks skipped), the reference against the fast backend bit for bit on
 * fresh random events and batches, the frames glue, the simulation's
 * sanity and determinism, and the quality analysis: its matching rules on
 * a hand-made event, its independence of buffers and order, and the
 * paper's trend (more sectors and candidates: more efficiency) on
 * simulated events. Random inputs are fresh on every run
 * (TUSK_TEST_SEED replays one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "testutil.h"
#include "tusk/adf.h"
#include "tusk/ut.h"
#include "ut_private.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

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

typedef int (*decode_fn)(const adf_frame_t *f, void *out, adf_error_t *err);

/* Decode a payload as a frame of `type`. */
static int decode_raw(uint32_t type, const uint8_t *payload, size_t size, decode_fn fn, void *out, adf_error_t *err)
{
    uint8_t *buf = malloc(ADF_KEY_SIZE + size + 1);
    tu_put_frame(buf, type, 1, 1, payload, size);
    adf_frame_t f = {{(uint32_t)(ADF_KEY_SIZE + size), type, 1, 1}, buf + ADF_KEY_SIZE, (uint32_t)size, 40};
    int rc = fn(&f, out, err);
    free(buf);
    return rc;
}

static int dec_raw(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_ut_raw_decode(f, out, err);
}
static int dec_velo(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_velo_tracks_decode(f, out, err);
}
static int dec_tracks(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_ut_tracks_decode(f, out, err);
}
static int dec_hits(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_ut_hits_decode(f, out, err);
}
static int dec_truth(const adf_frame_t *f, void *out, adf_error_t *err)
{
    return adf_ut_truth_decode(f, out, err);
}

/* The one frame of a buffer. */
static adf_frame_t only_frame(const uint8_t *buf, size_t size)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f, g;
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_next(r, &g), ADF_END);
    adf_reader_destroy(&r);
    return f;
}

/* Two tracks field by field, floats bit for bit (the struct has padding). */
static bool same_track(const adf_ut_track_t *a, const adf_ut_track_t *b)
{
    return a->velo == b->velo && memcmp(a->id, b->id, sizeof a->id) == 0 && memcmp(&a->qop, &b->qop, 4) == 0 &&
           memcmp(&a->chi2, &b->chi2, 4) == 0 && a->n_hits == b->n_hits;
}

/* ---- frames -------------------------------------------------------------------------------------- */

START_TEST(raw_round_trip_and_layout)
{
    unsigned nb = tu_below(40);
    adf_ut_bank_t banks[40];
    uint16_t words[40 * 30];
    uint32_t n = 0;
    unsigned sector = tu_below(20);
    for (unsigned i = 0; i < nb; i++) {
        sector += 1 + tu_below(20);
        banks[i].sector = (uint16_t)sector;
        banks[i].n_hits = (uint16_t)tu_below(30);
        unsigned strip = tu_below(10);
        for (unsigned k = 0; k < banks[i].n_hits; k++) {
            strip += 1 + tu_below(30);
            words[n++] = adf_ut_word(strip, tu_below(4), 1 + tu_below(8), tu_below(2));
        }
    }
    adf_ut_raw_t h = {0x12345678u, (uint16_t)nb, 0xBEEF, n, NULL};
    size_t cap = ADF_KEY_SIZE + adf_ut_raw_payload_size(nb, n);
    uint8_t *buf = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, cap);
    adf_error_t err;
    ck_assert_msg(adf_ut_raw_encode(w, 9, 11, &h, banks, words, &err) == ADF_OK, "%s", err.message);
    ck_assert_uint_eq(adf_writer_used(w), cap);
    adf_frame_t f = only_frame(buf, cap);
    ck_assert_str_eq(adf_type_name(f.key.type), "data:ut_raw");
    ck_assert_uint_eq(f.key.type, 0xFA220101u);
    adf_ut_raw_t d;
    ck_assert_msg(adf_ut_raw_decode(&f, &d, &err) == ADF_OK, "%s", err.message);
    ck_assert(d.geometry == 0x12345678u && d.n_banks == nb && d.flags == 0xBEEF && d.n_hits == n);
    adf_ut_bank_t bb[40];
    uint16_t ww[40 * 30];
    adf_ut_raw_read(&d, bb, ww);
    for (unsigned i = 0; i < nb; i++)
        ck_assert(bb[i].sector == banks[i].sector && bb[i].n_hits == banks[i].n_hits);
    ck_assert(n == 0 || memcmp(words, ww, n * 2) == 0);
    /* FORMAT.md: header, then per bank u16 sector, u16 hits, u16 words */
    const uint8_t *p = buf + ADF_KEY_SIZE;
    ck_assert_uint_eq(get_u32(p), 0x12345678u);
    ck_assert_uint_eq(p[4] | p[5] << 8, nb);
    ck_assert_uint_eq(get_u32(p + 8), n);
    const uint8_t *q = p + 12;
    for (unsigned i = 0, k = 0; i < nb; i++) {
        ck_assert_uint_eq(q[0] | q[1] << 8, banks[i].sector);
        ck_assert_uint_eq(q[2] | q[3] << 8, banks[i].n_hits);
        q += 4;
        for (unsigned j = 0; j < banks[i].n_hits; j++, q += 2, k++)
            ck_assert_uint_eq(q[0] | q[1] << 8, words[k]);
    }
    /* the word's fields */
    for (int i = 0; i < 200; i++) {
        unsigned s = tu_below(1024), qq = tu_below(4), z = 1 + tu_below(8), hi = tu_below(2);
        uint16_t wd = adf_ut_word(s, qq, z, hi);
        tu_check(adf_ut_word_strip(wd) == s && adf_ut_word_quarter(wd) == qq && adf_ut_word_size(wd) == z &&
                 adf_ut_word_high(wd) == hi && ut_word_strip(wd) == s);
    }
    adf_writer_destroy(&w);
    free(buf);
}
END_TEST

START_TEST(raw_malformed)
{
    adf_ut_bank_t banks[2] = {{3, 2}, {7, 1}};
    uint16_t words[3] = {adf_ut_word(10, 0, 1, 0), adf_ut_word(12, 3, 2, 0), adf_ut_word(0, 1, 1, 0)};
    adf_ut_raw_t h = {1, 2, 0, 3, NULL};
    uint8_t buf[128], pl[64];
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, sizeof buf);
    adf_error_t err;
    ck_assert_int_eq(adf_ut_raw_encode(w, 1, 1, &h, banks, words, &err), ADF_OK);
    size_t n = adf_ut_raw_payload_size(2, 3);
    ck_assert_uint_eq(n, 12 + 8 + 6);
    memcpy(pl, buf + ADF_KEY_SIZE, n);
    adf_ut_raw_t d;
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_RAW, pl, n, dec_raw, &d, &err), ADF_OK);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_RAW, pl, 11, dec_raw, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "shorter than its 12-byte header");
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_RAW, pl, n - 1, dec_raw, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "26 expected for 2 banks of 3 hits");
    uint8_t bad[64];
    /* a bank claiming more hits (the total kept: the sizes disagree) */
    memcpy(bad, pl, n);
    put_u16(bad + 12 + 2, 3);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_RAW, bad, n, dec_raw, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "the header says 3");
    /* sectors out of order, strips out of order */
    memcpy(bad, pl, n);
    put_u16(bad + 12 + 4 + 4, 3);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_RAW, bad, n, dec_raw, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "bank 1 is of sector 3 after sector 3");
    memcpy(bad, pl, n);
    put_u16(bad + 12 + 4 + 2, adf_ut_word(10, 1, 1, 0));
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_RAW, bad, n, dec_raw, &d, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "hit 1 is in strip 10 after strip 10");
    memcpy(bad, pl, n);
    put_u32(bad + 8, ADF_UT_MAX_HITS + 1);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_RAW, bad, n, dec_raw, &d, &err), ADF_ERANGE);
    /* the encoder refuses the same and writes nothing */
    adf_writer_reset(w, buf, sizeof buf);
    banks[1].sector = 3;
    ck_assert_int_eq(adf_ut_raw_encode(w, 1, 1, &h, banks, words, &err), ADF_EINVAL);
    tu_assert_error(&err, ADF_EINVAL, "strictly increasing sectors");
    banks[1].sector = 7;
    words[1] = adf_ut_word(9, 0, 1, 0);
    ck_assert_int_eq(adf_ut_raw_encode(w, 1, 1, &h, banks, words, &err), ADF_EINVAL);
    tu_assert_error(&err, ADF_EINVAL, "strip 9 after strip 10");
    words[1] = adf_ut_word(12, 0, 1, 0);
    h.n_hits = 4;
    ck_assert_int_eq(adf_ut_raw_encode(w, 1, 1, &h, banks, words, &err), ADF_EINVAL);
    tu_assert_error(&err, ADF_EINVAL, "the header says 4");
    ck_assert_uint_eq(adf_writer_used(w), 0);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_HITS, pl, n, dec_raw, &d, &err), ADF_EBADTYPE);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(velo_tracks_hits_truth_codecs)
{
    uint8_t buf[16384], pl[4096];
    adf_writer_t *w = adf_writer_new();
    adf_error_t err;
    /* data:velo_tracks */
    adf_velo_track_t vt[3] = {{1.5f, -2.5f, 770.0f, 0.01f, -0.02f, 0},
                              {0, 0, 0, 0, 0, ADF_VELO_BACKWARD},
                              {-100.0f, 50.0f, 700.0f, -0.2f, 0.1f, 0}};
    adf_velo_tracks_t vh = {3, 0x55, NULL};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_velo_tracks_encode(w, 3, 4, &vh, vt, &err), ADF_OK);
    adf_frame_t f = only_frame(buf, adf_writer_used(w));
    ck_assert_uint_eq(f.payload_size, 8 + 3 * 24);
    adf_velo_tracks_t vd;
    ck_assert_int_eq(adf_velo_tracks_decode(&f, &vd, &err), ADF_OK);
    ck_assert(vd.n_tracks == 3 && vd.flags == 0x55);
    for (uint32_t i = 0; i < 3; i++) {
        adf_velo_track_t t;
        adf_velo_track(&vd, i, &t);
        ck_assert(memcmp(&t, &vt[i], sizeof t) == 0);
    }
    memcpy(pl, f.payload, f.payload_size);
    put_u32(pl + 8 + 24 + 20, 2);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_VELO_TRACKS, pl, f.payload_size, dec_velo, &vd, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "track 1: flags 0x00000002");
    memcpy(pl, f.payload, f.payload_size);
    put_f32(pl + 8 + 48 + 12, NAN);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_VELO_TRACKS, pl, f.payload_size, dec_velo, &vd, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "track 2: state");
    /* data:ut_tracks */
    adf_ut_track_t tt[2] = {{2, {0xB0000401u, 0, 0xB0000802u, 0xB0000C03u}, 0.25f, 1.5f, 3},
                            {5, {0xB0000001u, 0xB0000002u, 0xB0000003u, 0xB0000004u}, -0.125f, 0.0f, 4}};
    adf_ut_tracks_t th = {2, 0xAABBCCDDu, 0x11223344u, ADF_UT_OPENCL, 0x7, 3, 16, NULL};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_ut_tracks_encode(w, 3, 4, &th, tt, &err), ADF_OK);
    f = only_frame(buf, adf_writer_used(w));
    ck_assert_uint_eq(f.payload_size, 16 + 2 * 29);
    adf_ut_tracks_t td;
    ck_assert_int_eq(adf_ut_tracks_decode(&f, &td, &err), ADF_OK);
    ck_assert(td.n_tracks == 2 && td.settings == 0xAABBCCDDu && td.geometry == 0x11223344u &&
              td.backend == ADF_UT_OPENCL && td.flags == 7 && td.sectors == 3 && td.candidates == 16);
    for (uint32_t i = 0; i < 2; i++) {
        adf_ut_track_t t;
        adf_ut_track(&td, i, &t);
        ck_assert(t.velo == tt[i].velo && memcmp(t.id, tt[i].id, sizeof t.id) == 0 && t.qop == tt[i].qop &&
                  t.chi2 == tt[i].chi2 && t.n_hits == tt[i].n_hits);
    }
    memcpy(pl, f.payload, f.payload_size);
    struct {
        size_t at;
        int kind; /* 0 u8, 1 u32, 2 f32 */
        double v;
        const char *needle;
    } tc[] = {{12, 0, 0, "backend 0"},           {14, 0, 2, "2 sectors"},
              {15, 0, 17, "17 candidates"},      {16 + 29, 1, 2, "VELO track 2 after 2"},
              {16 + 28, 0, 4, "4 hits with 3"},  {16 + 4, 1, 0, "3 hits with 2"},
              {16 + 20, 2, INFINITY, "q/p inf"}, {16 + 24, 2, -1.0, "chi2 -1"}};
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        uint8_t bad[256];
        memcpy(bad, pl, f.payload_size);
        if (tc[i].kind == 0)
            bad[tc[i].at] = (uint8_t)tc[i].v;
        else if (tc[i].kind == 1)
            put_u32(bad + tc[i].at, (uint32_t)tc[i].v);
        else
            put_f32(bad + tc[i].at, (float)tc[i].v);
        ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_TRACKS, bad, f.payload_size, dec_tracks, &td, &err), ADF_EPAYLOAD);
        tu_assert_error(&err, ADF_EPAYLOAD, tc[i].needle);
    }
    adf_writer_reset(w, buf, sizeof buf);
    tt[1].velo = 2;
    ck_assert_int_eq(adf_ut_tracks_encode(w, 3, 4, &th, tt, &err), ADF_EINVAL);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    /* data:ut_hits */
    adf_ut_hit_t hh[3] = {{0xB0000001u, 1.5f, 2327.5f, -10.0f, 30.0f, 400.0f, 0},
                          {0xB0000402u, -1.5f, 2327.5f, -10.0f, 30.0f, 400.0f, 0},
                          {0xB0000803u, 100.0f, 2642.5f, 0.0f, 97.28f, 100.0f, 83}};
    adf_ut_hits_t hd = {3, 0xF00Du, ADF_UT_FAST, 0, NULL};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_ut_hits_encode(w, 3, 4, &hd, hh, &err), ADF_OK);
    f = only_frame(buf, adf_writer_used(w));
    ck_assert_uint_eq(f.payload_size, 10 + 3 * 26);
    adf_ut_hits_t hx;
    ck_assert_int_eq(adf_ut_hits_decode(&f, &hx, &err), ADF_OK);
    for (uint32_t i = 0; i < 3; i++) {
        adf_ut_hit_t t;
        adf_ut_hit(&hx, i, &t);
        ck_assert(t.id == hh[i].id && t.x0 == hh[i].x0 && t.z0 == hh[i].z0 && t.y_begin == hh[i].y_begin &&
                  t.y_end == hh[i].y_end && t.weight == hh[i].weight && t.group == hh[i].group);
    }
    memcpy(pl, f.payload, f.payload_size);
    put_u16(pl + 10 + 26 + 24, 84);
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_HITS, pl, f.payload_size, dec_hits, &hx, &err), ADF_EPAYLOAD);
    tu_assert_error(&err, ADF_EPAYLOAD, "hit 2 is in sector group 83 after group 84");
    /* data:ut_truth */
    adf_ut_particle_t pp[2] = {{5.0f, 0.01f, 0.02f, 1, ADF_UT_VELO | ADF_UT_LONG, 0xF, 3},
                               {0.5f, -0.1f, 0.0f, -1, ADF_UT_VELO, 0x5, 0}};
    uint32_t hp[4] = {0, ADF_UT_NONE, 1, 0}, vp[2] = {1, ADF_UT_NONE};
    adf_ut_truth_t trh = {2, 4, 2, 0x9, NULL, NULL, NULL};
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(adf_ut_truth_encode(w, 3, 4, &trh, pp, hp, vp, &err), ADF_OK);
    f = only_frame(buf, adf_writer_used(w));
    ck_assert_uint_eq(f.payload_size, 16 + 2 * 16 + 4 * 4 + 2 * 4);
    adf_ut_truth_t trd;
    ck_assert_int_eq(adf_ut_truth_decode(&f, &trd, &err), ADF_OK);
    ck_assert(trd.n_particles == 2 && trd.n_hits == 4 && trd.n_velo == 2 && trd.flags == 9);
    for (uint32_t i = 0; i < 2; i++) {
        adf_ut_particle_t x;
        adf_ut_truth_particle(&trd, i, &x);
        ck_assert(x.p == pp[i].p && x.tx == pp[i].tx && x.ty == pp[i].ty && x.charge == pp[i].charge &&
                  x.flags == pp[i].flags && x.planes == pp[i].planes && x.vertex == pp[i].vertex);
    }
    uint32_t back[4];
    adf_ut_truth_hits(&trd, 0, 4, back);
    ck_assert(memcmp(back, hp, sizeof hp) == 0);
    adf_ut_truth_velo(&trd, 0, 2, back);
    ck_assert(back[0] == 1 && back[1] == ADF_UT_NONE);
    memcpy(pl, f.payload, f.payload_size);
    struct {
        size_t at;
        int kind; /* 0 u8, 1 u32, 2 f32 */
        double v;
        const char *needle;
    } rc[] = {{16 + 12, 0, 2, "charge 2"},         {16 + 13, 0, 8, "flags 0x08"},
              {16 + 14, 0, 16, "planes 0x10"},     {16, 2, 0.0, "p 0 GeV"},
              {48 + 8, 1, 2, "hit 2 names particle 2"}, {48 + 16 + 4, 1, 7, "VELO track 1 names particle 7"}};
    for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++) {
        uint8_t bad[256];
        memcpy(bad, pl, f.payload_size);
        if (rc[i].kind == 0)
            bad[rc[i].at] = (uint8_t)rc[i].v;
        else if (rc[i].kind == 1)
            put_u32(bad + rc[i].at, (uint32_t)rc[i].v);
        else
            put_f32(bad + rc[i].at, (float)rc[i].v);
        ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_TRUTH, bad, f.payload_size, dec_truth, &trd, &err), ADF_EPAYLOAD);
        tu_assert_error(&err, ADF_EPAYLOAD, rc[i].needle);
    }
    ck_assert_int_eq(decode_raw(ADF_TYPE_DATA_UT_TRUTH, pl, f.payload_size - 1, dec_truth, &trd, &err), ADF_EPAYLOAD);
    ck_assert_str_eq(adf_type_name(ADF_TYPE_EVENT_DATA_UT), "event:data:ut");
    ck_assert_str_eq(adf_ut_backend_name(2), "fast");
    adf_writer_destroy(&w);
}
END_TEST

/* ---- geometry and settings ------------------------------------------------------------------ */

static bool listed(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

START_TEST(geometry_layout_and_locate)
{
    ut_geometry_config_t gc;
    ut_geometry_config_default(&gc);
    ut_geometry_t *g = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_geometry_new(&g, &gc, &err), TUSK_OK);
    /* 16 and 18 staves of 14 rows, the two central staves' four central rows split: the paper's 84 groups */
    ck_assert_uint_eq(ut_geometry_sectors(g), 2 * (16 * 14 + 8) + 2 * (18 * 14 + 8));
    ck_assert_uint_eq(ut_geometry_groups(g), 84);
    ck_assert_uint_eq(g->plane[0].n_groups, 20);
    ck_assert_uint_eq(g->plane[1].n_groups, 22);
    ck_assert_uint_eq(g->plane[2].n_groups, 22);
    ck_assert_uint_eq(g->plane[3].n_groups, 20);
    ck_assert(g->plane[1].dxdy > 0.087f && g->plane[1].dxdy < 0.088f && g->plane[2].dxdy == -g->plane[1].dxdy);
    /* groups ascend in u within a plane; sectors' strips fit 10 bits */
    for (unsigned p = 0; p < 4; p++)
        for (unsigned k = 1; k < g->plane[p].n_groups; k++)
            ck_assert(g->group_u_lo[g->plane[p].first_group + k] > g->group_u_lo[g->plane[p].first_group + k - 1]);
    unsigned regions[3] = {0};
    for (unsigned s = 0; s < g->n_sectors; s++) {
        ut_sector_info_t in;
        ut_geometry_sector(g, s, &in);
        ck_assert(in.strips == 512 || in.strips == 1024);
        regions[in.region]++;
        ck_assert(g->sector[s].parts == (in.region == 2 ? g->cfg.inner_groups : in.region == 1 ? 2u : 1u));
    }
    ck_assert(regions[0] > 0 && regions[1] > 0 && regions[2] == 4 * 2 * 4 * 2);
    /* random points: located in the sector that holds them, at the strip whose edges they lie between */
    for (int i = 0; i < 20000; i++) {
        unsigned p = tu_below(4), s;
        double x = -900.0 + 1800.0 * tu_uniform(), y = -700.0 + 1400.0 * tu_uniform(), pos;
        if (!ut_geometry_locate(g, p, x, y, &s, &pos)) {
            double u = x - y * g->plane[p].dxdy, half = 0.5 * g->staves[p] * g->width;
            tu_check((fabs(x) < 33 && fabs(y) < 33) || u < -half || u >= half || fabs(y) >= g->y_max);
            continue;
        }
        ut_sector_info_t in;
        ut_geometry_sector(g, s, &in);
        double u = x - y * g->plane[p].dxdy;
        tu_check(in.plane == p && y >= in.y_begin_mm - 1e-9 && y < in.y_end_mm + 1e-9);
        tu_check(pos >= 0 && pos < in.strips && fabs(in.u_lo_mm + pos * in.pitch_mm - u) < 1e-9);
        /* the sector group of its strip holds its u */
        unsigned gr = ut_hit_group(g->sector[s], (unsigned)pos);
        double lo = g->group_u_lo[gr], hi = gr + 1 < g->plane[p].first_group + g->plane[p].n_groups
                                                  ? g->group_u_lo[gr + 1]
                                                  : g->plane[p].u_max;
        tu_check(u >= lo - 1e-3 && u < hi + 1e-3);
    }
    /* the readout order is not y's: the sort key is */
    ck_assert_uint_ne(g->sector[0].ykey, 0);
    ut_geometry_t *g2 = NULL;
    gc.stereo_deg = 4.0;
    ck_assert_int_eq(ut_geometry_new(&g2, &gc, &err), TUSK_OK);
    ck_assert_uint_ne(ut_geometry_digest(g), ut_geometry_digest(g2));
    ut_geometry_destroy(&g2);
    gc.plane_z[2] = 2000;
    ck_assert_int_eq(ut_geometry_new(&g2, &gc, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "planes_z_mm must increase");
    ut_geometry_config_default(&gc);
    gc.pitch_um = 50;
    ck_assert_int_eq(ut_geometry_new(&g2, &gc, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "10 bits");
    char text[600];
    ut_geometry_format(g, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "84 sector groups"));
    ut_geometry_destroy(&g);
}
END_TEST

START_TEST(settings)
{
    /* every geometry key is the tracker's and the simulation's too */
    for (const char *const *k = ut_geometry_keys(); *k; k++) {
        ck_assert_msg(listed(ut_config_keys(), *k), "tracker keys lack %s", *k);
        ck_assert_msg(listed(ut_sim_keys(), *k), "simulation keys lack %s", *k);
    }
    ut_config_t c;
    ut_config_default(&c);
    tusk_error_t err;
    ck_assert_int_eq(ut_config_check(&c, &err), TUSK_OK);
    uint32_t d0 = ut_config_digest(&c);
    ck_assert_int_eq(ut_config_set(&c, "sectors", "4", &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "not 1, 3 or 5");
    ck_assert_int_eq(ut_config_set(&c, "candidates", "17", &err), TUSK_EPARAM);
    ck_assert_int_eq(ut_config_set(&c, "x_tol_mm", "-1", &err), TUSK_EPARAM);
    ck_assert_int_eq(ut_config_set(&c, "nosuch", "1", &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "unknown UT setting 'nosuch'");
    ck_assert_int_eq(ut_config_set(&c, "sectors", "3", &err), TUSK_OK);
    ck_assert_uint_ne(ut_config_digest(&c), d0);
    ut_config_default(&c);
    ck_assert_int_eq(ut_config_set(&c, "stereo_deg", "4.5", &err), TUSK_OK);
    ck_assert_uint_ne(ut_config_digest(&c), d0);
    ck_assert_int_eq(ut_config_set(&c, "planes_z_mm", "1 2 3", &err), TUSK_EPARAM);
    ut_config_default(&c);
    c.z_kick_mm = 3000;
    ck_assert_int_eq(ut_config_check(&c, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "z_kick_mm");
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    ck_assert_int_eq(ut_sim_config_check(&sc, &err), TUSK_OK);
    sc.eta_max = 1.0;
    ck_assert_int_eq(ut_sim_config_check(&sc, &err), TUSK_EPARAM);
    ut_sim_config_default(&sc);
    sc.main_z_mm = 2000;
    ck_assert_int_eq(ut_sim_config_check(&sc, &err), TUSK_EPARAM);
    ck_assert_str_eq(ut_backend_name(UT_OPENCL), "opencl");
    /* params */
    tusk_params_t *p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "candidates", "2", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "rows", "12", &err), TUSK_OK);
    ut_config_default(&c);
    ck_assert_int_eq(ut_config_read(&c, p, &err), TUSK_OK);
    ck_assert(c.candidates == 2 && c.geo.rows == 12);
    ut_sim_config_default(&sc);
    ck_assert_msg(ut_sim_config_read(&sc, p, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(sc.geo.rows, 12);
    tusk_params_destroy(&p);
}
END_TEST

/* ---- hand-built events ---------------------------------------------------------------------- */

/* Hits of an event under construction: (sector, strip, quarter). */
typedef struct planted {
    unsigned n;
    unsigned sector[64], strip[64], quarter[64];
} planted_t;

/* A hit where a point of plane p lies (false outside the sensors). */
static bool plant(planted_t *pl, const ut_geometry_t *g, unsigned p, double x, double y)
{
    unsigned s;
    double pos;
    if (!ut_geometry_locate(g, p, x, y, &s, &pos))
        return false;
    unsigned q = (unsigned)floor(pos * 4.0);
    pl->sector[pl->n] = s;
    pl->strip[pl->n] = q >> 2;
    pl->quarter[pl->n] = q & 3;
    pl->n++;
    return true;
}

static int by_sector_strip(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The planted hits as raw banks (sorted into sectors and strips, one
 * cluster a strip), into the batch with the VELO tracks. */
static void add_event(ut_batch_t *b, const ut_geometry_t *g, uint32_t number, const planted_t *pl,
                      const adf_velo_track_t *velo, uint32_t n_velo)
{
    uint32_t hs[64][3];
    for (unsigned i = 0; i < pl->n; i++) {
        hs[i][0] = pl->sector[i];
        hs[i][1] = pl->strip[i];
        hs[i][2] = pl->quarter[i];
    }
    qsort(hs, pl->n, sizeof hs[0], by_sector_strip);
    adf_ut_bank_t banks[64];
    uint16_t words[64];
    unsigned nb = 0, nw = 0;
    for (unsigned i = 0; i < pl->n; i++) {
        if (nw > 0 && hs[i][0] == hs[i - 1][0] && hs[i][1] == hs[i - 1][1])
            continue; /* one cluster a strip */
        if (nb == 0 || banks[nb - 1].sector != hs[i][0]) {
            banks[nb].sector = (uint16_t)hs[i][0];
            banks[nb++].n_hits = 0;
        }
        banks[nb - 1].n_hits++;
        words[nw++] = adf_ut_word(hs[i][1], hs[i][2], 1, 0);
    }
    ut_event_t ev = {number, number, ut_geometry_digest(g), nb, nw, n_velo, banks, words, velo};
    tusk_error_t err;
    ck_assert_msg(ut_batch_add(b, g, &ev, &err) == TUSK_OK, "%s", err.message);
}

/* Where a particle's line (VELO state at z 770, slopes, q/p) crosses plane
 * p after the kick at z_kick. */
static void track_at(const ut_geometry_t *g, const ut_config_t *c, double x, double y, double tx, double ty,
                     double qop, unsigned p, double *xp, double *yp)
{
    double dz = g->cfg.plane_z[p] - c->z_kick_mm;
    *xp = x + tx * (c->z_kick_mm - 770.0) + (tx + c->kick_gev * qop) * dz;
    *yp = y + ty * (g->cfg.plane_z[p] - 770.0);
}

/* Its VELO track and its UT hits (planes in `mask`; all on sensors). */
static adf_velo_track_t plant_track(planted_t *pl, const ut_geometry_t *g, const ut_config_t *c, double x, double y,
                                    double tx, double ty, double qop, unsigned mask)
{
    adf_velo_track_t v = {(float)x, (float)y, 770.0f, (float)tx, (float)ty, 0};
    for (unsigned p = 0; p < 4; p++)
        if (mask & (1u << p)) {
            double xp, yp;
            track_at(g, c, x, y, tx, ty, qop, p, &xp, &yp);
            ck_assert(plant(pl, g, p, xp, yp));
        }
    return v;
}

/* Does the line cross all four planes on sensors? */
static bool on_sensors(const ut_geometry_t *g, const ut_config_t *c, double x, double y, double tx, double ty,
                       double qop)
{
    for (unsigned p = 0; p < 4; p++) {
        double xp, yp, pos;
        unsigned s;
        track_at(g, c, x, y, tx, ty, qop, p, &xp, &yp);
        if (!ut_geometry_locate(g, p, xp, yp, &s, &pos))
            return false;
    }
    return true;
}

START_TEST(decoding_hand_built_event)
{
    ut_config_t c;
    ut_config_default(&c);
    ut_geometry_t *g = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_geometry_new(&g, &c.geo, &err), TUSK_OK);
    planted_t pl = {0};
    for (int i = 0; i < 60; i++) {
        unsigned p = tu_below(4);
        while (!plant(&pl, g, p, -700 + 1400 * tu_uniform(), -600 + 1200 * tu_uniform()))
            ;
    }
    ut_batch_t *b = ut_batch_new();
    add_event(b, g, 5, &pl, NULL, 0);
    ut_ref_t *ref = NULL;
    ck_assert_int_eq(ut_ref_new(&ref, &c, &err), TUSK_OK);
    ut_result_t *res = ut_result_new();
    ut_result_keep_hits(res, true);
    ck_assert_msg(ut_ref_run(ref, b, res, &err) == TUSK_OK, "%s", err.message);
    uint32_t n = ut_result_hits(res, 0), nw;
    ut_batch_event(b, 0, NULL, NULL, &nw, NULL);
    ck_assert_uint_eq(n, nw);
    ut_dev_sector_t sec[UT_MAX_SECTORS];
    ut_sectors_of(&c, g, sec);
    unsigned last_group = 0, seen = 0;
    uint32_t last_key = 0;
    for (uint32_t k = 0; k < n; k++) {
        adf_ut_hit_t h;
        ut_result_hit(res, 0, k, &h);
        ck_assert_uint_eq(h.id >> 28, 0xB);
        unsigned s = ut_lhcbid_sector(h.id), strip = h.id & 0x3FF;
        ck_assert_uint_lt(s, g->n_sectors);
        /* its group, sorted within it by y then strip */
        ck_assert_uint_eq(h.group, ut_hit_group(sec[s], strip));
        ck_assert_uint_ge(h.group, last_group);
        uint32_t key = ut_sort_key(sec[s], strip);
        if (k > 0 && h.group == last_group)
            ck_assert_uint_gt(key, last_key);
        last_group = h.group;
        last_key = key;
        /* the planted one it is: x at y = 0 of its quarter strip's middle, the sector's y, z and weight */
        bool found = false;
        for (unsigned i = 0; i < pl.n && !found; i++)
            if (pl.sector[i] == s && pl.strip[i] == strip) {
                found = true;
                seen++;
                ut_sector_info_t in;
                ut_geometry_sector(g, s, &in);
                double x0 = in.u_lo_mm + (pl.strip[i] + (pl.quarter[i] + 0.5) / 4.0) * in.pitch_mm;
                ck_assert(fabs(h.x0 - x0) < 1e-3);
                ck_assert(h.y_begin == (float)in.y_begin_mm && h.y_end == (float)in.y_end_mm && h.z0 == (float)in.z_mm);
                double sigma = 0.25 * in.pitch_mm;
                ck_assert(fabs(h.weight - 1.0 / (sigma * sigma)) < 1e-2);
            }
        ck_assert(found);
    }
    ck_assert_uint_eq(seen, n);
    /* what the geometry refuses */
    adf_ut_bank_t bank = {(uint16_t)g->n_sectors, 1};
    uint16_t word = 0;
    ut_event_t ev = {7, 7, ut_geometry_digest(g), 1, 1, 0, &bank, &word, NULL};
    ck_assert_int_eq(ut_batch_add(b, g, &ev, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "event 7: bank 0 is of sector 984");
    bank.sector = 0;
    word = adf_ut_word(512, 0, 1, 0);
    ck_assert_int_eq(ut_batch_add(b, g, &ev, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "strip 512; the sector has 512 strips");
    ev.geometry ^= 1;
    ck_assert_int_eq(ut_batch_add(b, g, &ev, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "other geometry settings");
    ev.geometry ^= 1;
    ev.n_hits = UT_MAX_EVENT_HITS + 1;
    ck_assert_int_eq(ut_batch_add(b, g, &ev, &err), TUSK_ELIMIT);
    ck_assert_uint_eq(ut_batch_count(b), 1);
    /* Compass alone needs a decoding of the batch */
    ut_ref_t *r2 = NULL;
    ck_assert_int_eq(ut_ref_new(&r2, &c, &err), TUSK_OK);
    ck_assert_int_eq(ut_ref_run_stages(r2, b, UT_COMPASS, res, &err), TUSK_EINVAL);
    ck_assert_int_eq(ut_ref_run_stages(r2, b, UT_DECODE, res, &err), TUSK_OK);
    ck_assert_int_eq(ut_ref_run_stages(r2, b, UT_COMPASS, res, &err), TUSK_OK);
    ut_ref_destroy(&r2);
    ut_result_destroy(&res);
    ut_ref_destroy(&ref);
    ut_batch_destroy(&b);
    ut_geometry_destroy(&g);
}
END_TEST

/* Compass on one hand-built event: the tracks found. */
static uint32_t run_one(const ut_config_t *c, const ut_geometry_t *g, const planted_t *pl, const adf_velo_track_t *v,
                        uint32_t nv, adf_ut_track_t *out)
{
    ut_batch_t *b = ut_batch_new();
    add_event(b, g, 1, pl, v, nv);
    ut_ref_t *ref = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_ref_new(&ref, c, &err), TUSK_OK);
    ut_result_t *res = ut_result_new();
    ck_assert_msg(ut_ref_run(ref, b, res, &err) == TUSK_OK, "%s", err.message);
    uint32_t n = ut_result_tracks(res, 0);
    for (uint32_t k = 0; k < n; k++)
        ut_result_track(res, 0, k, &out[k]);
    ut_result_destroy(&res);
    ut_ref_destroy(&ref);
    ut_batch_destroy(&b);
    return n;
}

START_TEST(compass_planted_tracks)
{
    ut_config_t c;
    ut_config_default(&c);
    ut_geometry_t *g = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_geometry_new(&g, &c.geo, &err), TUSK_OK);
    adf_ut_track_t t[8];
    for (int round = 0; round < 40; round++) {
        /* a track on the sensors (not through the beam hole), p 2-50 GeV, either charge */
        double tx, ty, p, qop;
        do {
            double phi = 6.283185307179586 * tu_uniform(), r = 0.03 + 0.2 * tu_uniform();
            tx = r * cos(phi);
            ty = 0.8 * r * sin(phi);
            p = 2.0 + 48.0 * tu_uniform();
            qop = (tu_below(2) ? 1.0 : -1.0) / p;
        } while (!on_sensors(g, &c, 0.02, -0.01, tx, ty, qop) || !on_sensors(g, &c, 5, 5, -tx, -ty, -qop));
        unsigned drop = tu_below(5); /* 4: none dropped */
        planted_t pl = {0};
        adf_velo_track_t v = plant_track(&pl, g, &c, 0.02, -0.01, tx, ty, qop, drop < 4 ? 0xFu & ~(1u << drop) : 0xFu);
        uint32_t n = run_one(&c, g, &pl, &v, 1, t);
        ck_assert_msg(n == 1, "round %d: p %g, slopes (%g, %g), plane %u dropped: %u tracks", round, p, tx, ty, drop,
                      (unsigned)n);
        ck_assert_uint_eq(t[0].velo, 0);
        ck_assert_uint_eq(t[0].n_hits, drop < 4 ? 3 : 4);
        for (unsigned q = 0; q < 4; q++)
            ck_assert_msg((t[0].id[q] != 0) == (drop != q), "plane %u", q);
        /* q/p within the hit errors' reach: a tenth, the charge right */
        ck_assert_msg(fabs(t[0].qop - qop) < 0.1 * fabs(qop) + 0.02, "q/p %g for %g", (double)t[0].qop, qop);
        ck_assert(t[0].chi2 >= 0 && t[0].chi2 < c.max_chi2);
        /* the same hits found whatever else is in the event: noise (not within 80 mm of the track in u: noise
         * there may take a missing plane's place, ut/README.md) and a second track */
        planted_t busy = pl;
        for (int i = 0; i < 30; i++) {
            unsigned q = tu_below(4);
            double x = -700 + 1400 * tu_uniform(), y = -600 + 1200 * tu_uniform(), xp, yp;
            track_at(g, &c, 0.02, -0.01, tx, ty, qop, q, &xp, &yp);
            if (fabs((x - y * g->plane[q].dxdy) - (xp - yp * g->plane[q].dxdy)) > 80)
                plant(&busy, g, q, x, y);
        }
        adf_velo_track_t two[2] = {v, plant_track(&busy, g, &c, 5, 5, -tx, -ty, -qop, 0xF)};
        n = run_one(&c, g, &busy, two, 2, t + 1);
        ck_assert_uint_ge(n, 1);
        ck_assert_msg(same_track(&t[1], &t[0]), "round %d: %u tracks, the first of VELO track %u", round, (unsigned)n,
                      (unsigned)t[1].velo);
    }
    /* two planes missing: no tracklet */
    planted_t pl = {0};
    adf_velo_track_t v = plant_track(&pl, g, &c, 0, 0, 0.1, 0.05, 0.2, 0x5);
    ck_assert_uint_eq(run_one(&c, g, &pl, &v, 1, t), 0);
    /* a backward track: skipped */
    pl.n = 0;
    v = plant_track(&pl, g, &c, 0, 0, 0.1, 0.05, 0.2, 0xF);
    v.flags = ADF_VELO_BACKWARD;
    ck_assert_uint_eq(run_one(&c, g, &pl, &v, 1, t), 0);
    /* below the momentum the windows reach (p_min 1 GeV): not found */
    pl.n = 0;
    v = plant_track(&pl, g, &c, 0, 0, 0.1, 0.05, 1.0 / 0.4, 0xF);
    ck_assert_uint_eq(run_one(&c, g, &pl, &v, 1, t), 0);
    /* a pT cut */
    ut_config_t cut = c;
    cut.pt_min_gev = 2.0;
    pl.n = 0;
    v = plant_track(&pl, g, &c, 0, 0, 0.1, 0.05, 1.0 / 5.0, 0xF); /* pT about 0.55 GeV */
    ck_assert_uint_eq(run_one(&c, g, &pl, &v, 1, t), 1);
    ck_assert_uint_eq(run_one(&cut, g, &pl, &v, 1, t), 0);
    ut_geometry_destroy(&g);
}
END_TEST

/* ---- the backends agree -------------------------------------------------------------------------- */

/* Random events: the simulation's (the seed's own), and raw banks of
 * random hits with VELO tracks pointing anywhere. */
static void random_batch(ut_batch_t *b, const ut_geometry_t *g, ut_sim_t *sim, unsigned n_sim, unsigned n_random,
                         uint64_t first)
{
    tusk_error_t err;
    for (unsigned i = 0; i < n_sim; i++) {
        const ut_sim_event_t *e;
        ck_assert_msg(ut_sim_make(sim, first + i, &e, &err) == TUSK_OK, "%s", err.message);
        ck_assert_msg(ut_batch_add(b, g, &e->ev, &err) == TUSK_OK, "%s", err.message);
    }
    for (unsigned i = 0; i < n_random; i++) {
        planted_t pl = {0};
        unsigned nh = tu_below(64);
        /* crowded: hits near a few spots */
        double cx = -300 + 600 * tu_uniform(), cy = -300 + 600 * tu_uniform();
        for (unsigned k = 0; k < nh; k++)
            plant(&pl, g, tu_below(4), cx + 60 * (tu_uniform() - 0.5), cy + 60 * (tu_uniform() - 0.5));
        adf_velo_track_t v[20];
        unsigned nv = tu_below(20);
        for (unsigned k = 0; k < nv; k++) {
            v[k].x = (float)(cx / 3.5 + 10 * (tu_uniform() - 0.5));
            v[k].y = (float)(cy / 3.5 + 10 * (tu_uniform() - 0.5));
            v[k].z = 770.0f;
            v[k].tx = (float)((cx - v[k].x) / 1700.0 + 0.01 * (tu_uniform() - 0.5));
            v[k].ty = (float)((cy - v[k].y) / 1700.0 + 0.01 * (tu_uniform() - 0.5));
            v[k].flags = tu_below(10) == 0 ? ADF_VELO_BACKWARD : 0;
        }
        add_event(b, g, 1000 + i, &pl, v, nv);
    }
}

START_TEST(fast_equals_reference_bit_for_bit)
{
    uint64_t seed = tu_rand();
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = seed;
    ut_config_t c;
    ut_config_default(&c);
    static const unsigned sectors[3] = {1, 3, 5};
    c.sectors = sectors[tu_below(3)];
    c.candidates = 1 + tu_below(16);
    ut_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_sim_new(&sim, &sc, &err), TUSK_OK);
    const ut_geometry_t *g = ut_sim_geometry(sim);
    ut_batch_t *b = ut_batch_new();
    random_batch(b, g, sim, 12, 30, tu_below(1000));
    ut_ref_t *ref = NULL;
    ut_fast_t *fast = NULL;
    unsigned threads = 1 + tu_below(4);
    ck_assert_int_eq(ut_ref_new(&ref, &c, &err), TUSK_OK);
    ck_assert_int_eq(ut_fast_new(&fast, &c, threads, &err), TUSK_OK);
    ut_result_t *ra = ut_result_new(), *rb = ut_result_new();
    ut_result_keep_hits(ra, true);
    ut_result_keep_hits(rb, true);
    ck_assert_int_eq(ut_ref_run(ref, b, ra, &err), TUSK_OK);
    ck_assert_int_eq(ut_fast_run(fast, b, rb, &err), TUSK_OK);
    char why[1024];
    ck_assert_msg(ut_result_equal(ra, rb, why, sizeof why), "%u sectors, %u candidates, %u threads: %s", c.sectors,
                  c.candidates, threads, why);
    ck_assert_uint_gt(ut_result_total(ra), 0);
    /* the tracks are in VELO track order */
    for (size_t i = 0; i < ut_result_events(ra); i++)
        for (uint32_t k = 1; k < ut_result_tracks(ra, i); k++) {
            adf_ut_track_t x, y;
            ut_result_track(ra, i, k - 1, &x);
            ut_result_track(ra, i, k, &y);
            tu_check(x.velo < y.velo);
        }
    /* the stages: decoding, then Compass alone, as both at once */
    ck_assert_int_eq(ut_fast_run_stages(fast, b, UT_DECODE, rb, &err), TUSK_OK);
    ck_assert_uint_eq(ut_result_total(rb), 0);
    ck_assert_int_eq(ut_fast_run_stages(fast, b, UT_COMPASS, rb, &err), TUSK_OK);
    ck_assert_msg(ut_result_equal(ra, rb, why, sizeof why), "stages: %s", why);
    ut_result_destroy(&ra);
    ut_result_destroy(&rb);
    ut_fast_destroy(&fast);
    ut_ref_destroy(&ref);
    ut_batch_destroy(&b);
    ut_sim_destroy(&sim);
}
END_TEST

START_TEST(tracks_do_not_depend_on_the_batch)
{
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = tu_rand();
    ut_config_t c;
    ut_config_default(&c);
    ut_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_sim_new(&sim, &sc, &err), TUSK_OK);
    const ut_geometry_t *g = ut_sim_geometry(sim);
    unsigned n = 10, cut = 1 + tu_below(n - 1);
    ut_batch_t *all = ut_batch_new(), *a = ut_batch_new(), *b = ut_batch_new();
    random_batch(all, g, sim, n, 0, 50);
    random_batch(a, g, sim, cut, 0, 50);
    random_batch(b, g, sim, n - cut, 0, 50 + cut);
    ut_fast_t *fast = NULL;
    ck_assert_int_eq(ut_fast_new(&fast, &c, 2, &err), TUSK_OK);
    ut_result_t *r = ut_result_new(), *ra = ut_result_new(), *rb = ut_result_new();
    ck_assert_int_eq(ut_fast_run(fast, all, r, &err), TUSK_OK);
    ck_assert_int_eq(ut_fast_run(fast, a, ra, &err), TUSK_OK);
    ck_assert_int_eq(ut_fast_run(fast, b, rb, &err), TUSK_OK);
    for (size_t i = 0; i < n; i++) {
        const ut_result_t *x = i < cut ? ra : rb;
        size_t j = i < cut ? i : i - cut;
        ck_assert_uint_eq(ut_result_tracks(r, i), ut_result_tracks(x, j));
        for (uint32_t k = 0; k < ut_result_tracks(r, i); k++) {
            adf_ut_track_t p, q;
            ut_result_track(r, i, k, &p);
            ut_result_track(x, j, k, &q);
            ck_assert(same_track(&p, &q));
        }
    }
    ut_result_destroy(&r);
    ut_result_destroy(&ra);
    ut_result_destroy(&rb);
    ut_fast_destroy(&fast);
    ut_batch_destroy(&all);
    ut_batch_destroy(&a);
    ut_batch_destroy(&b);
    ut_sim_destroy(&sim);
}
END_TEST

/* ---- frames glue ----------------------------------------------------------------------------------- */

/* n simulated events encoded into a fresh buffer (*size). */
static uint8_t *sim_buffer(ut_sim_t *sim, uint64_t first, unsigned n, size_t *size)
{
    size_t cap = 0;
    tusk_error_t err;
    const ut_sim_event_t *e;
    for (unsigned i = 0; i < n; i++) {
        ck_assert_int_eq(ut_sim_make(sim, first + i, &e, &err), TUSK_OK);
        cap += ut_sim_bytes(sim, e);
    }
    uint8_t *buf = malloc(cap + 64);
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, cap + 64);
    for (unsigned i = 0; i < n; i++) {
        ck_assert_int_eq(ut_sim_make(sim, first + i, &e, &err), TUSK_OK);
        ck_assert_msg(ut_sim_encode(sim, e, w, &err) == TUSK_OK, "%s", err.message);
        if (i == n / 2) { /* another frame between the events passes through */
            adf_key_t k = {0, ADF_TYPE_META_SYNC, 99, 0};
            ck_assert_int_eq(adf_writer_put(w, &k, "abc", 3), ADF_OK);
        }
    }
    *size = adf_writer_used(w);
    adf_writer_destroy(&w);
    return buf;
}

START_TEST(frames_read_and_write)
{
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = tu_rand();
    ut_config_t c;
    ut_config_default(&c);
    ut_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_sim_new(&sim, &sc, &err), TUSK_OK);
    size_t size;
    uint8_t *buf = sim_buffer(sim, 3, 6, &size);
    ut_batch_t *b = ut_batch_new();
    ck_assert_msg(ut_frames_read(b, ut_sim_geometry(sim), buf, size, 0, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(ut_batch_count(b), 6);
    ut_fast_t *fast = NULL;
    ck_assert_int_eq(ut_fast_new(&fast, &c, 2, &err), TUSK_OK);
    ut_result_t *res = ut_result_new();
    for (int hits = 0; hits < 2; hits++)
        for (int keep = 0; keep < 2; keep++) {
            ut_result_keep_hits(res, hits);
            ck_assert_int_eq(ut_fast_run(fast, b, res, &err), TUSK_OK);
            size_t raw = 0;
            size_t cap = size + ut_frames_extra(res, hits);
            uint8_t *out = malloc(cap);
            adf_writer_t *w = adf_writer_new();
            adf_writer_reset(w, out, cap);
            ck_assert_msg(ut_frames_write(buf, size, b, res, &c, UT_FAST, keep, hits, w, &err) == TUSK_OK, "%s",
                          err.message);
            /* the room promised, when the raw banks stay */
            if (keep)
                ck_assert_uint_eq(adf_writer_used(w), cap);
            /* each event: raw (when kept), VELO tracks, UT tracks (hits), truth */
            adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP), *sub = adf_reader_new(ADF_ON_ERROR_STOP);
            adf_reader_reset(r, out, adf_writer_used(w), 0);
            adf_frame_t f, g;
            unsigned events = 0, syncs = 0;
            while (adf_reader_next(r, &f) == ADF_OK) {
                if (f.key.type == ADF_TYPE_META_SYNC) {
                    syncs++;
                    continue;
                }
                ck_assert_uint_eq(f.key.type, ADF_TYPE_EVENT_DATA_UT);
                adf_reader_open_composite(sub, &f);
                char seq[128] = "";
                while (adf_reader_next(sub, &g) == ADF_OK) {
                    const char *nm = adf_type_name(g.key.type);
                    strcat(seq, nm ? nm + 5 : "?");
                    strcat(seq, " ");
                    if (g.key.type == ADF_TYPE_DATA_UT_RAW)
                        raw++;
                    if (g.key.type == ADF_TYPE_DATA_UT_TRACKS) {
                        adf_ut_tracks_t t;
                        ck_assert_int_eq(adf_ut_tracks_decode(&g, &t, NULL), ADF_OK);
                        ck_assert_uint_eq(t.n_tracks, ut_result_tracks(res, events));
                        ck_assert(t.settings == ut_config_digest(&c) && t.backend == ADF_UT_FAST && t.sectors == 5 &&
                                  t.candidates == 8);
                    }
                }
                char want[128];
                snprintf(want, sizeof want, "%svelo_tracks ut_tracks %sut_truth ", keep ? "ut_raw " : "",
                         hits ? "ut_hits " : "");
                ck_assert_str_eq(seq, want);
                events++;
            }
            ck_assert_uint_eq(events, 6);
            ck_assert_uint_eq(syncs, 1);
            ck_assert_uint_eq(raw, keep ? 6 : 0);
            adf_reader_destroy(&r);
            adf_reader_destroy(&sub);
            /* one byte short: refused, not cut */
            adf_writer_reset(w, out, adf_writer_used(w) - 1);
            ck_assert_int_eq(ut_frames_write(buf, size, b, res, &c, UT_FAST, keep, hits, w, &err), TUSK_ELIMIT);
            adf_writer_destroy(&w);
            free(out);
        }
    /* a data:ut_raw outside an event, an event without VELO tracks: refused, naming them */
    uint8_t lone[256];
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, lone, sizeof lone);
    adf_ut_raw_t rh = {ut_geometry_digest(ut_sim_geometry(sim)), 0, 0, 0, NULL};
    adf_error_t ae;
    ck_assert_int_eq(adf_ut_raw_encode(w, 4, 4, &rh, NULL, NULL, &ae), ADF_OK);
    ck_assert_int_eq(ut_frames_read(b, ut_sim_geometry(sim), lone, adf_writer_used(w), 100, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "data:ut_raw of event 4 at offset 100 is not inside an event:data:ut");
    adf_writer_reset(w, lone, sizeof lone);
    adf_key_t k = {0, ADF_TYPE_EVENT_DATA_UT, 4, 4};
    ck_assert_int_eq(adf_writer_begin(w, &k), ADF_OK);
    ck_assert_int_eq(adf_ut_raw_encode(w, 4, 4, &rh, NULL, NULL, &ae), ADF_OK);
    ck_assert_int_eq(adf_writer_end(w), ADF_OK);
    ck_assert_int_eq(ut_frames_read(b, ut_sim_geometry(sim), lone, adf_writer_used(w), 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "event:data:ut of event 4 at offset 0 has no data:velo_tracks");
    /* another geometry's event, naming the event */
    ut_config_t other = c;
    other.geo.rows = 12;
    ut_geometry_t *g2 = NULL;
    ck_assert_int_eq(ut_geometry_new(&g2, &other.geo, &err), TUSK_OK);
    ck_assert_int_eq(ut_frames_read(b, g2, buf, size, 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "other geometry settings");
    ut_geometry_destroy(&g2);
    adf_writer_destroy(&w);
    ut_result_destroy(&res);
    ut_fast_destroy(&fast);
    ut_batch_destroy(&b);
    free(buf);
    ut_sim_destroy(&sim);
}
END_TEST

/* ---- simulation ------------------------------------------------------------------------------------ */

START_TEST(simulation_sanity)
{
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = tu_rand();
    ut_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_sim_new(&sim, &sc, &err), TUSK_OK);
    const ut_geometry_t *g = ut_sim_geometry(sim);
    enum { N = 60 };
    double hits = 0, velo = 0, noise = 0, coll = 0;
    uint64_t parts = 0, ut3 = 0, lng = 0, fakes = 0, hit_truth = 0;
    for (unsigned i = 0; i < N; i++) {
        const ut_sim_event_t *e;
        ck_assert_int_eq(ut_sim_make(sim, i, &e, &err), TUSK_OK);
        hits += e->ev.n_hits;
        velo += e->ev.n_tracks;
        noise += e->noise_hits;
        coll += e->collisions;
        /* banks in sector order, strips increasing: a valid data:ut_raw */
        const uint16_t *w = e->ev.words;
        for (uint32_t j = 0; j < e->ev.n_banks; j++) {
            tu_check(j == 0 || e->ev.banks[j].sector > e->ev.banks[j - 1].sector);
            for (unsigned k = 0; k < e->ev.banks[j].n_hits; k++, w++) {
                tu_check(k == 0 || adf_ut_word_strip(*w) > adf_ut_word_strip(w[-1]));
                tu_check(adf_ut_word_strip(*w) < g->sector[e->ev.banks[j].sector].strips);
            }
        }
        /* a particle's planes are those of its hits */
        uint8_t *planes = calloc(e->n_particles + 1, 1);
        uint32_t j = 0;
        for (uint32_t bk = 0; bk < e->ev.n_banks; bk++)
            for (unsigned k = 0; k < e->ev.banks[bk].n_hits; k++, j++)
                if (e->hit_particle[j] != ADF_UT_NONE) {
                    tu_check(e->hit_particle[j] < e->n_particles);
                    planes[e->hit_particle[j]] |= (uint8_t)(1u << g->sector[e->ev.banks[bk].sector].plane);
                    hit_truth++;
                }
        for (uint32_t p = 0; p < e->n_particles; p++) {
            const adf_ut_particle_t *x = &e->particles[p];
            tu_check(planes[p] == x->planes);
            tu_check(!(x->flags & ADF_UT_BACKWARD) || x->planes == 0);
            parts++;
            ut3 += ut_popcount4(x->planes) >= 3;
            lng += (x->flags & ADF_UT_LONG) != 0;
        }
        for (uint32_t t = 0; t < e->ev.n_tracks; t++)
            fakes += e->velo_particle[t] == ADF_UT_NONE;
        free(planes);
    }
    /* about 7.6 collisions, 177 VELO tracks and 572 UT hits an event
     * (ut/README.md); over 60 events the means' standard errors are about
     * 0.36, 8.5 and 27 (Poisson collisions of Poisson particles): the
     * bounds are some 5 of them either way, so that no seed fails */
    ck_assert_msg(coll / N > 5.8 && coll / N < 9.4, "%g collisions an event", coll / N);
    ck_assert_msg(velo / N > 135 && velo / N < 220, "%g VELO tracks an event", velo / N);
    ck_assert_msg(hits / N > 430 && hits / N < 715, "%g UT hits an event", hits / N);
    ck_assert_msg(noise / N > 14 && noise / N < 26, "%g noise hits an event", noise / N);
    ck_assert_msg(ut3 > parts / 3 && lng > parts / 3, "%llu of %llu particles in 3 planes, %llu long",
                  (unsigned long long)ut3, (unsigned long long)parts, (unsigned long long)lng);
    ck_assert(fakes > 0 && fakes < velo * 0.05);
    ck_assert(hit_truth + noise == hits);
    /* the same event twice, the same frames; another seed, others */
    size_t s1, s2, s3;
    uint8_t *a = sim_buffer(sim, 17, 1, &s1), *b = sim_buffer(sim, 17, 1, &s2);
    ck_assert(s1 == s2 && memcmp(a, b, s1) == 0);
    ut_sim_t *other = NULL;
    sc.seed ^= 1;
    ck_assert_int_eq(ut_sim_new(&other, &sc, &err), TUSK_OK);
    uint8_t *c = sim_buffer(other, 17, 1, &s3);
    ck_assert(s1 != s3 || memcmp(a, c, s1) != 0);
    free(a);
    free(b);
    free(c);
    ut_sim_destroy(&other);
    ut_sim_destroy(&sim);
}
END_TEST

/* ---- quality analysis --------------------------------------------------------------------------- */

/* One hand-made event into a buffer, frames over one event:data:ut or loose. */
static size_t qa_event(uint8_t *buf, size_t cap, uint32_t event, const ut_config_t *c, const adf_ut_track_t *tracks,
                       uint32_t nt, bool composite, uint32_t digest)
{
    /* four hits of particle 0 in sectors 0-3, two of particle 1 in 4-5, a noise hit in 6; VELO tracks: 0, 1, fake */
    adf_ut_bank_t banks[7];
    uint16_t words[7];
    for (int i = 0; i < 7; i++) {
        banks[i].sector = (uint16_t)i;
        banks[i].n_hits = 1;
        words[i] = adf_ut_word(5, 0, 1, 0);
    }
    uint32_t hp[7] = {0, 0, 0, 0, 1, 1, ADF_UT_NONE}, vp[3] = {0, 1, ADF_UT_NONE};
    adf_ut_particle_t pp[2] = {{20.0f, 0.05f, 0.05f, 1, ADF_UT_VELO | ADF_UT_LONG, 0xF, 0},
                               {3.0f, 0.1f, 0.1f, -1, ADF_UT_VELO, 0x7, 0}};
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, cap);
    adf_error_t e;
    adf_key_t k = {0, ADF_TYPE_EVENT_DATA_UT, event, event};
    adf_ut_raw_t rh = {ut_geometry_config_digest(&c->geo), 7, 0, 7, NULL};
    adf_velo_tracks_t vh = {3, 0, NULL};
    adf_velo_track_t vt[3] = {{0, 0, 770, 0.05f, 0.05f, 0}, {0, 0, 770, 0.1f, 0.1f, 0}, {0, 0, 770, 0, 0.2f, 0}};
    adf_ut_tracks_t th = {nt, digest, rh.geometry, ADF_UT_REFERENCE, 0, (uint8_t)c->sectors,
                          (uint8_t)c->candidates, NULL};
    adf_ut_truth_t trh = {2, 7, 3, 0, NULL, NULL, NULL};
    if (composite)
        ck_assert_int_eq(adf_writer_begin(w, &k), ADF_OK);
    ck_assert_int_eq(adf_ut_truth_encode(w, event, event, &trh, pp, hp, vp, &e), ADF_OK);
    ck_assert_int_eq(adf_ut_tracks_encode(w, event, event, &th, tracks, &e), ADF_OK);
    ck_assert_int_eq(adf_velo_tracks_encode(w, event, event, &vh, vt, &e), ADF_OK);
    ck_assert_int_eq(adf_ut_raw_encode(w, event, event, &rh, banks, words, &e), ADF_OK);
    if (composite)
        ck_assert_int_eq(adf_writer_end(w), ADF_OK);
    size_t n = adf_writer_used(w);
    adf_writer_destroy(&w);
    return n;
}

static uint32_t id_of(unsigned sector)
{
    return ut_lhcbid(sector, 5);
}

START_TEST(qa_matching_rules)
{
    ut_config_t c;
    ut_config_default(&c);
    uint32_t dig = ut_config_digest(&c);
    /* track 0: VELO 0 with particle 0's four hits: matched (5/5);
     * track 1: VELO 1 with two of particle 1's and a noise hit (3/4 = 75 %): matched;
     * track 2: VELO 2 (fake) with particle 0's hits 0, 1, 2 and particle 1's 4 (3/5): fake */
    adf_ut_track_t t[3] = {{0, {id_of(0), id_of(1), id_of(2), id_of(3)}, 0.05f, 1.0f, 4},
                           {1, {id_of(4), id_of(5), id_of(6), 0}, -0.3f, 2.0f, 3},
                           {2, {id_of(0), id_of(1), id_of(2), id_of(4)}, 0.1f, 3.0f, 4}};
    uint8_t buf[8192];
    ut_qa_config_t qc;
    ut_qa_config_default(&qc);
    qc.alg = c;
    ut_qa_t *qa = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_qa_new(&qa, &qc, &err), TUSK_OK);
    size_t n = qa_event(buf, sizeof buf, 1, &c, t, 3, true, dig);
    ck_assert_msg(ut_qa_feed(qa, buf, n, 0, &err) == TUSK_OK, "%s", err.message);
    /* the same event's frames loose in another buffer, a second event: a clone of particle 0 */
    adf_ut_track_t t2[2] = {{0, {id_of(0), id_of(1), id_of(2), 0}, 0.05f, 1.0f, 3},
                            {1, {id_of(0), id_of(1), id_of(2), id_of(3)}, 0.05f, 1.0f, 4}};
    n = qa_event(buf, sizeof buf, 2, &c, t2, 2, false, dig);
    ck_assert_msg(ut_qa_feed(qa, buf, n, 0, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(ut_qa_finish(qa, &err), TUSK_OK);
    ut_qa_summary_t s;
    ut_qa_summary(qa, &s);
    ck_assert_uint_eq(s.events, 2);
    ck_assert_uint_eq(s.tracks, 5);
    /* event 2: track 0 is particle 0 (3/4); track 1 (VELO of particle 1, particle 0's four hits: 4/5) too: a clone */
    ck_assert_uint_eq(s.fakes, 1);
    ck_assert_uint_eq(s.reconstructible[UT_QA_LONG], 2);
    ck_assert_uint_eq(s.found[UT_QA_LONG], 2);
    ck_assert_uint_eq(s.reconstructible[UT_QA_LONG_P5], 2);
    ck_assert_uint_eq(s.reconstructible[UT_QA_UP], 2);
    ck_assert_uint_eq(s.found[UT_QA_UP], 1);
    ck_assert_uint_eq(s.reconstructible[UT_QA_UP_P5], 0);
    ck_assert_uint_eq(s.matched[UT_QA_LONG], 3);
    ck_assert_uint_eq(s.clones[UT_QA_LONG], 1);
    ck_assert_uint_eq(s.charge_tried, 4);
    ck_assert_uint_eq(s.charge_right, 4);
    ck_assert_str_eq(ut_qa_category_name(UT_QA_UP), "VELO+UT");
    ut_qa_destroy(&qa);
    /* an incomplete event, an event twice, other settings: refused */
    ck_assert_int_eq(ut_qa_new(&qa, &qc, &err), TUSK_OK);
    n = qa_event(buf, sizeof buf, 3, &c, t, 3, false, dig);
    ck_assert_int_eq(ut_qa_feed(qa, buf, n - 40, 0, &err), TUSK_EINVAL); /* cut in the last frame */
    ut_qa_destroy(&qa);
    ck_assert_int_eq(ut_qa_new(&qa, &qc, &err), TUSK_OK);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, buf, n, 0);
    adf_frame_t f;
    size_t last = 0;
    while (adf_reader_next(r, &f) == ADF_OK)
        last = f.offset;
    adf_reader_destroy(&r);
    ck_assert_int_eq(ut_qa_feed(qa, buf, last, 0, &err), TUSK_OK); /* all but the data:ut_raw */
    ck_assert_int_eq(ut_qa_finish(qa, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "event 3 (and 0 more) never got its data:ut_raw");
    ut_qa_destroy(&qa);
    ck_assert_int_eq(ut_qa_new(&qa, &qc, &err), TUSK_OK);
    n = qa_event(buf, sizeof buf, 4, &c, t, 3, true, dig);
    ck_assert_int_eq(ut_qa_feed(qa, buf, n, 0, &err), TUSK_OK);
    ck_assert_int_eq(ut_qa_feed(qa, buf, n, 0, &err), TUSK_OK);
    ck_assert_int_eq(ut_qa_finish(qa, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "event 4 came twice");
    ut_qa_destroy(&qa);
    ck_assert_int_eq(ut_qa_new(&qa, &qc, &err), TUSK_OK);
    n = qa_event(buf, sizeof buf, 5, &c, t, 3, true, dig ^ 1);
    ck_assert_int_eq(ut_qa_feed(qa, buf, n, 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "other settings than this analysis");
    ut_qa_destroy(&qa);
}
END_TEST

/* The whole chain in memory: simulate, track, analyse; the summary. */
static void chain(const ut_config_t *c, uint64_t seed, unsigned events, unsigned buffers, bool shuffle,
                  ut_qa_summary_t *s)
{
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    sc.seed = seed;
    ut_sim_t *sim = NULL;
    tusk_error_t err;
    ck_assert_int_eq(ut_sim_new(&sim, &sc, &err), TUSK_OK);
    ut_fast_t *fast = NULL;
    ck_assert_int_eq(ut_fast_new(&fast, c, 2, &err), TUSK_OK);
    ut_qa_config_t qc;
    ut_qa_config_default(&qc);
    qc.alg = *c;
    ut_qa_t *qa = NULL;
    ck_assert_int_eq(ut_qa_new(&qa, &qc, &err), TUSK_OK);
    uint8_t *outs[16];
    size_t sizes[16];
    ck_assert(buffers <= 16);
    unsigned per = (events + buffers - 1) / buffers;
    for (unsigned k = 0; k < buffers; k++) {
        size_t size;
        unsigned lo = k * per, n = lo + per <= events ? per : events - lo;
        uint8_t *buf = sim_buffer(sim, lo, n, &size);
        ut_batch_t *b = ut_batch_new();
        ut_result_t *res = ut_result_new();
        ck_assert_int_eq(ut_frames_read(b, ut_sim_geometry(sim), buf, size, 0, &err), TUSK_OK);
        ck_assert_int_eq(ut_fast_run(fast, b, res, &err), TUSK_OK);
        sizes[k] = size + ut_frames_extra(res, false);
        outs[k] = malloc(sizes[k]);
        adf_writer_t *w = adf_writer_new();
        adf_writer_reset(w, outs[k], sizes[k]);
        ck_assert_int_eq(ut_frames_write(buf, size, b, res, c, UT_FAST, true, false, w, &err), TUSK_OK);
        sizes[k] = adf_writer_used(w);
        adf_writer_destroy(&w);
        ut_result_destroy(&res);
        ut_batch_destroy(&b);
        free(buf);
    }
    for (unsigned k = 0; k < buffers; k++) {
        unsigned j = shuffle ? buffers - 1 - k : k;
        ck_assert_msg(ut_qa_feed(qa, outs[j], sizes[j], 0, &err) == TUSK_OK, "%s", err.message);
        free(outs[j]);
    }
    ck_assert_msg(ut_qa_finish(qa, &err) == TUSK_OK, "%s", err.message);
    ut_qa_summary(qa, s);
    ut_qa_destroy(&qa);
    ut_fast_destroy(&fast);
    ut_sim_destroy(&sim);
}

static double eff(const ut_qa_summary_t *s, int c)
{
    return s->reconstructible[c] ? (double)s->found[c] / (double)s->reconstructible[c] : 0.0;
}

START_TEST(qa_over_buffers_and_the_papers_trend)
{
    ut_config_t c;
    ut_config_default(&c);
    uint64_t seed = tu_rand();
    ut_qa_summary_t a, b;
    chain(&c, seed, 24, 1, false, &a);
    chain(&c, seed, 24, 5, true, &b);
    /* the same sums over one buffer or five in reverse order */
    ck_assert(a.events == 24 && b.events == 24 && a.tracks == b.tracks && a.fakes == b.fakes &&
              memcmp(a.found, b.found, sizeof a.found) == 0 && memcmp(a.clones, b.clones, sizeof a.clones) == 0 &&
              a.dp_core == b.dp_core);
    /* the default (5 sectors, 8 candidates): most long tracks found, few clones and fakes, q/p to 10-20 % */
    ck_assert_msg(eff(&a, UT_QA_LONG) > 0.92, "long efficiency %g", eff(&a, UT_QA_LONG));
    ck_assert_msg(eff(&a, UT_QA_UP) < eff(&a, UT_QA_LONG), "VELO+UT %g, long %g", eff(&a, UT_QA_UP),
                  eff(&a, UT_QA_LONG));
    ck_assert_msg(a.clones[UT_QA_LONG] * 50 < a.matched[UT_QA_LONG], "clones %llu of %llu",
                  (unsigned long long)a.clones[UT_QA_LONG], (unsigned long long)a.matched[UT_QA_LONG]);
    ck_assert_msg(a.fakes * 10 < a.tracks, "fakes %llu of %llu", (unsigned long long)a.fakes,
                  (unsigned long long)a.tracks);
    ck_assert_msg(a.dp_core > 0.03 && a.dp_core < 0.2, "momentum resolution %g", a.dp_core);
    ck_assert(a.charge_right * 100 > a.charge_tried * 98);
    /* Table 3's trend: 1 sector and 1 candidate find clearly fewer */
    ut_config_t one = c;
    one.sectors = 1;
    one.candidates = 1;
    chain(&one, seed, 24, 1, false, &b);
    ck_assert_msg(eff(&b, UT_QA_LONG) + 0.06 < eff(&a, UT_QA_LONG), "1/1: %g, 5/8: %g", eff(&b, UT_QA_LONG),
                  eff(&a, UT_QA_LONG));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ut");
    TCase *tc = tcase_create("frames");
    tcase_add_test(tc, raw_round_trip_and_layout);
    tcase_add_test(tc, raw_malformed);
    tcase_add_test(tc, velo_tracks_hits_truth_codecs);
    suite_add_tcase(s, tc);
    tc = tcase_create("geometry");
    tcase_add_test(tc, geometry_layout_and_locate);
    tcase_add_test(tc, settings);
    suite_add_tcase(s, tc);
    tc = tcase_create("algorithm");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, decoding_hand_built_event);
    tcase_add_test(tc, compass_planted_tracks);
    tcase_add_test(tc, fast_equals_reference_bit_for_bit);
    tcase_add_test(tc, tracks_do_not_depend_on_the_batch);
    tcase_add_test(tc, frames_read_and_write);
    suite_add_tcase(s, tc);
    tc = tcase_create("simulation");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, simulation_sanity);
    suite_add_tcase(s, tc);
    tc = tcase_create("analysis");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, qa_matching_rules);
    tcase_add_test(tc, qa_over_buffers_and_the_papers_trend);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
