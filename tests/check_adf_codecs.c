/* check_adf_codecs.c - the frame codecs (data:crystal, data:psa,
 * event:data:psa, data:tracked, meta:eof, data:truth): round trips of random content
 * compared bit for bit, the documented byte layouts checked against bytes
 * built by hand, every wrong payload size and out-of-range count rejected
 * with the frame's offset, wrong frame types named in the error, encode
 * errors that leave the output untouched, the composite's own failure
 * modes, and random bytes fed to every decoder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX_CRYSTALS 8

/* Floats are compared by their bits: NaN payloads must survive too. */
#define CHECK_FLOAT(a, b)                                                                         \
    do {                                                                                          \
        float fa_ = (a), fb_ = (b);                                                               \
        uint32_t ua_, ub_;                                                                        \
        memcpy(&ua_, &fa_, 4);                                                                    \
        memcpy(&ub_, &fb_, 4);                                                                    \
        if (ua_ != ub_)                                                                           \
            ck_abort_msg("%s:%d: %s is 0x%08X, expected 0x%08X", __FILE__, __LINE__, #a,          \
                         (unsigned)ua_, (unsigned)ub_);                                           \
    } while (0)

/* ---- little-endian stores written out here, independent of the library ---- */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void putf(uint8_t *p, float f)
{
    put32(p, fbits(f));
}

static uint64_t rand_ts(void)
{
    return tu_rand() & ADF_TIMESTAMP_MAX;
}

/* ---- scratch space (big structs live on the heap) ---------------------------- */

static struct scratch {
    adf_crystal_t *crystal, *crystal2;
    adf_psa_t *psa, *psa2; /* MAX_CRYSTALS each */
    adf_key_t keys[MAX_CRYSTALS];
    adf_tracked_t *tracked, *tracked2;
    adf_truth_t *truth, *truth2;
    uint8_t *buf; /* BUF_SIZE bytes */
    adf_writer_t *w;
    adf_reader_t *r;
} S;

#define BUF_SIZE (256 * 1024)

static void setup(void)
{
    S.crystal = malloc(sizeof *S.crystal);
    S.crystal2 = malloc(sizeof *S.crystal2);
    S.psa = malloc(MAX_CRYSTALS * sizeof *S.psa);
    S.psa2 = malloc(MAX_CRYSTALS * sizeof *S.psa2);
    S.tracked = malloc(sizeof *S.tracked);
    S.tracked2 = malloc(sizeof *S.tracked2);
    S.truth = malloc(sizeof *S.truth);
    S.truth2 = malloc(sizeof *S.truth2);
    S.buf = malloc(BUF_SIZE);
    S.w = adf_writer_new();
    S.r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert(S.crystal && S.crystal2 && S.psa && S.psa2 && S.tracked && S.tracked2 && S.truth && S.truth2 &&
              S.buf && S.w && S.r);
}

static void teardown(void)
{
    free(S.crystal);
    free(S.crystal2);
    free(S.psa);
    free(S.psa2);
    free(S.tracked);
    free(S.tracked2);
    free(S.truth);
    free(S.truth2);
    free(S.buf);
    adf_writer_destroy(&S.w);
    adf_reader_destroy(&S.r);
    memset(&S, 0, sizeof S);
}

/* Start the writer on S.buf with a filler frame of random size first, so
 * the codec's frame sits at an odd, non-zero offset. Returns that offset. */
static size_t start_with_filler(size_t capacity)
{
    uint8_t filler[41];
    size_t n = tu_below(sizeof filler + 1);
    tu_fill(filler, n);
    adf_key_t k = {.type = ADF_TYPE_META_SYNC, .event = 1, .timestamp = 2};
    adf_writer_reset(S.w, S.buf, capacity);
    tu_check(adf_writer_put(S.w, &k, filler, n) == ADF_OK);
    return ADF_KEY_SIZE + n;
}

/* The same on a buffer filled with 0xA5 first, so bytes an encoder fails
 * to write (or writes when it should not) show. */
static size_t prepare_untouched(void)
{
    memset(S.buf, 0xA5, BUF_SIZE);
    return start_with_filler(BUF_SIZE);
}

/* Read back what the writer holds: the filler, then exactly one frame. */
static adf_frame_t read_one(size_t offset)
{
    adf_frame_t f;
    adf_reader_reset(S.r, S.buf, adf_writer_used(S.w), 0);
    tu_check(adf_reader_next(S.r, &f) == ADF_OK);
    tu_check(adf_reader_next(S.r, &f) == ADF_OK);
    tu_check(f.offset == offset);
    adf_frame_t end;
    tu_check(adf_reader_next(S.r, &end) == ADF_END);
    return f;
}

static void check_key(const adf_frame_t *f, uint32_t type, uint32_t event, uint64_t ts, size_t payload)
{
    tu_check(f->key.type == type);
    tu_check(f->key.event == event);
    tu_check(f->key.timestamp == ts);
    tu_check(f->key.length == ADF_KEY_SIZE + payload);
    tu_check(f->payload_size == payload);
}

/* A hand-built frame of `type` placed after a filler frame in S.buf and read
 * back with the reader; its offset is *offset. */
static adf_frame_t hand_frame(uint32_t type, const void *payload, size_t size, uint64_t *offset)
{
    uint8_t filler[23];
    size_t n = tu_below(sizeof filler + 1);
    tu_fill(filler, n);
    size_t pos = tu_put_frame(S.buf, ADF_TYPE_META_SYNC, 0, 0, filler, n);
    size_t end = pos + tu_put_frame(S.buf + pos, type, 77, 88, payload, size);
    adf_frame_t f;
    adf_reader_reset(S.r, S.buf, end, 0);
    tu_check(adf_reader_next(S.r, &f) == ADF_OK);
    tu_check(adf_reader_next(S.r, &f) == ADF_OK);
    tu_check(f.offset == pos);
    tu_check(f.payload_size == size);
    *offset = pos;
    return f;
}

/* The error names the frame's offset, in the report and in the message. */
static void check_error_at(const adf_error_t *err, int code, uint64_t offset)
{
    char needle[48];
    snprintf(needle, sizeof needle, "offset %llu", (unsigned long long)offset);
    if (err->code != code)
        ck_abort_msg("error %d (%s), expected %d", err->code, err->message, code);
    if (err->offset != offset)
        ck_abort_msg("error offset %llu, expected %llu (%s)", (unsigned long long)err->offset,
                     (unsigned long long)offset, err->message);
    if (!strstr(err->message, needle))
        ck_abort_msg("message '%s' lacks '%s'", err->message, needle);
}

/* ---- random content ---------------------------------------------------------- */

static void rand_crystal(adf_crystal_t *c, unsigned n_samples)
{
    c->crystal_id = (uint16_t)tu_rand();
    c->status = (uint16_t)tu_rand();
    c->n_samples = (uint16_t)n_samples;
    for (int i = 0; i < ADF_CRYSTAL_SEGMENTS; i++)
        c->segment_energy[i] = tu_any_float();
    for (int i = 0; i < ADF_CRYSTAL_CORES; i++)
        c->core_energy[i] = tu_any_float();
    for (int ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++)
        tu_fill(c->trace[ch], n_samples * sizeof c->trace[ch][0]);
}

static void check_crystal_eq(const adf_crystal_t *a, const adf_crystal_t *b)
{
    tu_check(a->crystal_id == b->crystal_id);
    tu_check(a->status == b->status);
    tu_check(a->n_samples == b->n_samples);
    for (int i = 0; i < ADF_CRYSTAL_SEGMENTS; i++)
        CHECK_FLOAT(a->segment_energy[i], b->segment_energy[i]);
    for (int i = 0; i < ADF_CRYSTAL_CORES; i++)
        CHECK_FLOAT(a->core_energy[i], b->core_energy[i]);
    for (int ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++)
        if (memcmp(a->trace[ch], b->trace[ch], b->n_samples * sizeof b->trace[ch][0]) != 0)
            ck_abort_msg("trace of channel %d differs", ch);
}

static void rand_psa(adf_psa_t *p, unsigned n_hits, bool has_fom)
{
    memset(p, 0, sizeof *p);
    p->crystal_id = (uint16_t)tu_rand();
    p->status = (uint16_t)tu_rand();
    for (int i = 0; i < 2; i++) {
        p->core_energy[i] = tu_any_float();
        p->core_time[i] = tu_any_float();
    }
    p->psa_status = (uint16_t)tu_rand();
    p->n_hits = (uint16_t)n_hits;
    p->has_fom = has_fom;
    for (unsigned i = 0; i < n_hits; i++) {
        adf_psa_hit_t *h = &p->hit[i];
        h->status = (uint16_t)tu_rand();
        h->segment = (int16_t)tu_rand();
        h->crystal = (int16_t)tu_rand();
        h->x = tu_any_float();
        h->y = tu_any_float();
        h->z = tu_any_float();
        h->energy = tu_any_float();
        h->time = tu_any_float();
        h->t_cc_e = tu_any_float();
        h->t_cc_h = tu_any_float();
        h->t_sg_e = tu_any_float();
        h->t_sg_h = tu_any_float();
        h->fom = tu_any_float();
    }
}

/* b was decoded from a; without the extension b's fom must be NaN. */
static void check_psa_eq(const adf_psa_t *a, const adf_psa_t *b)
{
    tu_check(a->crystal_id == b->crystal_id);
    tu_check(a->status == b->status);
    for (int i = 0; i < 2; i++) {
        CHECK_FLOAT(a->core_energy[i], b->core_energy[i]);
        CHECK_FLOAT(a->core_time[i], b->core_time[i]);
    }
    tu_check(a->psa_status == b->psa_status);
    tu_check(a->n_hits == b->n_hits);
    tu_check(a->has_fom == b->has_fom);
    for (unsigned i = 0; i < a->n_hits; i++) {
        const adf_psa_hit_t *x = &a->hit[i], *y = &b->hit[i];
        tu_check(x->status == y->status);
        tu_check(x->segment == y->segment);
        tu_check(x->crystal == y->crystal);
        CHECK_FLOAT(x->x, y->x);
        CHECK_FLOAT(x->y, y->y);
        CHECK_FLOAT(x->z, y->z);
        CHECK_FLOAT(x->energy, y->energy);
        CHECK_FLOAT(x->time, y->time);
        CHECK_FLOAT(x->t_cc_e, y->t_cc_e);
        CHECK_FLOAT(x->t_cc_h, y->t_cc_h);
        CHECK_FLOAT(x->t_sg_e, y->t_sg_e);
        CHECK_FLOAT(x->t_sg_h, y->t_sg_h);
        if (a->has_fom)
            CHECK_FLOAT(x->fom, y->fom);
        else
            tu_check(isnan(y->fom));
    }
}

static void rand_tracked(adf_tracked_t *t, unsigned n)
{
    t->n_gammas = (uint16_t)n;
    t->status = (uint16_t)tu_rand();
    for (unsigned i = 0; i < n; i++) {
        adf_tracked_gamma_t *g = &t->gamma[i];
        g->energy = tu_any_float();
        for (int k = 0; k < 3; k++) {
            g->first[k] = tu_any_float();
            g->second[k] = tu_any_float();
        }
        g->fom = tu_any_float();
        g->n_points = (uint16_t)tu_rand();
        g->status = (uint16_t)tu_rand();
    }
}

static void check_tracked_eq(const adf_tracked_t *a, const adf_tracked_t *b)
{
    tu_check(a->n_gammas == b->n_gammas);
    tu_check(a->status == b->status);
    for (unsigned i = 0; i < a->n_gammas; i++) {
        const adf_tracked_gamma_t *x = &a->gamma[i], *y = &b->gamma[i];
        CHECK_FLOAT(x->energy, y->energy);
        for (int k = 0; k < 3; k++) {
            CHECK_FLOAT(x->first[k], y->first[k]);
            CHECK_FLOAT(x->second[k], y->second[k]);
        }
        CHECK_FLOAT(x->fom, y->fom);
        tu_check(x->n_points == y->n_points);
        tu_check(x->status == y->status);
    }
}

/* ---- round trips --------------------------------------------------------------- */

START_TEST(crystal_round_trip)
{
    static const unsigned fixed[] = {0, 1, ADF_CRYSTAL_MAX_SAMPLES, 2, ADF_CRYSTAL_MAX_SAMPLES - 1};
    for (unsigned it = 0; it < 300; it++) {
        unsigned n = it < 5 ? fixed[it] : tu_below(ADF_CRYSTAL_MAX_SAMPLES + 1);
        rand_crystal(S.crystal, n);
        uint32_t event = (uint32_t)tu_rand();
        uint64_t ts = rand_ts();
        size_t off = start_with_filler(BUF_SIZE);
        adf_error_t err;
        tu_check(adf_crystal_encode(S.w, event, ts, S.crystal, &err) == ADF_OK);
        adf_frame_t f = read_one(off);
        check_key(&f, ADF_TYPE_DATA_CRYSTAL, event, ts, adf_crystal_payload_size(n));
        tu_check(f.payload_size == 160 + 76 * n);
        memset(S.crystal2, 0xA5, sizeof *S.crystal2);
        tu_check(adf_crystal_decode(&f, S.crystal2, &err) == ADF_OK);
        check_crystal_eq(S.crystal, S.crystal2);
    }
}
END_TEST

START_TEST(psa_round_trip)
{
    for (unsigned it = 0; it < 600; it++) {
        unsigned n = it < 4 ? (it % 2 ? ADF_PSA_MAX_HITS : 0) : tu_below(ADF_PSA_MAX_HITS + 1);
        bool fom = it < 4 ? it >= 2 : tu_below(2);
        rand_psa(S.psa, n, fom);
        uint32_t event = (uint32_t)tu_rand();
        uint64_t ts = rand_ts();
        size_t off = start_with_filler(BUF_SIZE);
        adf_error_t err;
        tu_check(adf_psa_encode(S.w, event, ts, S.psa, &err) == ADF_OK);
        adf_frame_t f = read_one(off);
        check_key(&f, ADF_TYPE_DATA_PSA, event, ts, adf_psa_payload_size(n, fom));
        tu_check(f.payload_size == 24 + 42 * n + (fom ? 4 + 4 * n : 0));
        memset(S.psa2, 0xA5, sizeof *S.psa2);
        tu_check(adf_psa_decode(&f, S.psa2, &err) == ADF_OK);
        check_psa_eq(S.psa, S.psa2);
    }
}
END_TEST

START_TEST(tracked_round_trip)
{
    for (unsigned it = 0; it < 600; it++) {
        unsigned n = it < 2 ? it * ADF_TRACKED_MAX_GAMMAS : tu_below(ADF_TRACKED_MAX_GAMMAS + 1);
        rand_tracked(S.tracked, n);
        uint32_t event = (uint32_t)tu_rand();
        uint64_t ts = rand_ts();
        size_t off = start_with_filler(BUF_SIZE);
        adf_error_t err;
        tu_check(adf_tracked_encode(S.w, event, ts, S.tracked, &err) == ADF_OK);
        adf_frame_t f = read_one(off);
        check_key(&f, ADF_TYPE_DATA_TRACKED, event, ts, adf_tracked_payload_size(n));
        tu_check(f.payload_size == 4 + 40 * n);
        memset(S.tracked2, 0xA5, sizeof *S.tracked2);
        tu_check(adf_tracked_decode(&f, S.tracked2, &err) == ADF_OK);
        check_tracked_eq(S.tracked, S.tracked2);
    }
}
END_TEST

START_TEST(eof_round_trip)
{
    for (unsigned it = 0; it < 600; it++) {
        adf_eof_t e = {.has_counts = it < 2 ? it == 1 : tu_below(2), .run = (uint32_t)tu_rand(),
                       .frames = tu_rand()};
        uint32_t event = (uint32_t)tu_rand();
        uint64_t ts = rand_ts();
        size_t off = start_with_filler(BUF_SIZE);
        adf_error_t err;
        tu_check(adf_eof_encode(S.w, event, ts, &e, &err) == ADF_OK);
        adf_frame_t f = read_one(off);
        check_key(&f, ADF_TYPE_META_EOF, event, ts, e.has_counts ? 12 : 0);
        adf_eof_t back;
        memset(&back, 0xA5, sizeof back);
        tu_check(adf_eof_decode(&f, &back, &err) == ADF_OK);
        tu_check(back.has_counts == e.has_counts);
        /* An empty meta:eof decodes to zero counts. */
        tu_check(back.run == (e.has_counts ? e.run : 0));
        tu_check(back.frames == (e.has_counts ? e.frames : 0));
    }
}
END_TEST

START_TEST(event_psa_round_trip)
{
    adf_key_t keys_out[MAX_CRYSTALS];
    for (unsigned it = 0; it < 300; it++) {
        size_t n = it < 2 ? it * MAX_CRYSTALS : tu_below(MAX_CRYSTALS + 1);
        size_t inner = 0;
        for (size_t i = 0; i < n; i++) {
            rand_psa(&S.psa[i], tu_below(ADF_PSA_MAX_HITS + 1), tu_below(2));
            /* Type and length are set by the encoder. */
            S.keys[i] = (adf_key_t){.length = (uint32_t)tu_rand(), .type = (uint32_t)tu_rand(),
                                    .event = (uint32_t)tu_rand(), .timestamp = rand_ts()};
            inner += ADF_KEY_SIZE + adf_psa_payload_size(S.psa[i].n_hits, S.psa[i].has_fom);
        }
        uint32_t event = (uint32_t)tu_rand();
        uint64_t ts = rand_ts();
        size_t off = start_with_filler(BUF_SIZE);
        adf_error_t err;
        tu_check(adf_event_psa_encode(S.w, event, ts, S.keys, S.psa, n, &err) == ADF_OK);
        tu_check(adf_writer_depth(S.w) == 0);
        adf_frame_t f = read_one(off);
        check_key(&f, ADF_TYPE_EVENT_DATA_PSA, event, ts, inner);
        memset(S.psa2, 0xA5, MAX_CRYSTALS * sizeof *S.psa2);
        size_t got = 99;
        tu_check(adf_event_psa_decode(&f, keys_out, S.psa2, MAX_CRYSTALS, &got, &err) == ADF_OK);
        tu_check(got == n);
        for (size_t i = 0; i < n; i++) {
            tu_check(keys_out[i].type == ADF_TYPE_DATA_PSA);
            tu_check(keys_out[i].event == S.keys[i].event);
            tu_check(keys_out[i].timestamp == S.keys[i].timestamp);
            tu_check(keys_out[i].length ==
                  ADF_KEY_SIZE + adf_psa_payload_size(S.psa[i].n_hits, S.psa[i].has_fom));
            check_psa_eq(&S.psa[i], &S.psa2[i]);
        }
        /* Exactly enough room is enough. */
        tu_check(adf_event_psa_decode(&f, keys_out, S.psa2, n, &got, &err) == ADF_OK);
        tu_check(got == n);
    }
}
END_TEST

/* Several codecs one after the other in one buffer. */
START_TEST(mixed_stream_round_trip)
{
    adf_writer_reset(S.w, S.buf, BUF_SIZE);
    adf_error_t err;
    rand_crystal(S.crystal, 7);
    rand_psa(&S.psa[0], 3, true);
    rand_psa(&S.psa[1], 5, false);
    rand_tracked(S.tracked, 9);
    adf_eof_t e = {.has_counts = true, .run = 42, .frames = 4};
    S.keys[0] = (adf_key_t){.event = 10, .timestamp = 11};
    S.keys[1] = (adf_key_t){.event = 12, .timestamp = 13};
    ck_assert_int_eq(adf_crystal_encode(S.w, 1, 100, S.crystal, &err), ADF_OK);
    ck_assert_int_eq(adf_psa_encode(S.w, 2, 200, &S.psa[0], &err), ADF_OK);
    ck_assert_int_eq(adf_event_psa_encode(S.w, 3, 300, S.keys, S.psa, 2, &err), ADF_OK);
    ck_assert_int_eq(adf_tracked_encode(S.w, 4, 400, S.tracked, &err), ADF_OK);
    ck_assert_int_eq(adf_eof_encode(S.w, 5, 500, &e, &err), ADF_OK);
    size_t sizes[5] = {adf_crystal_payload_size(7), adf_psa_payload_size(3, true),
                       2 * ADF_KEY_SIZE + adf_psa_payload_size(3, true) + adf_psa_payload_size(5, false),
                       adf_tracked_payload_size(9), 12};
    size_t total = 0;
    for (int i = 0; i < 5; i++)
        total += ADF_KEY_SIZE + sizes[i];
    ck_assert_uint_eq(adf_writer_used(S.w), total);

    adf_reader_reset(S.r, S.buf, total, 0);
    adf_frame_t f;
    size_t off = 0;
    adf_key_t keys_out[2];
    size_t n;
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(adf_reader_next(S.r, &f), ADF_OK);
        ck_assert_uint_eq(f.offset, off);
        ck_assert_uint_eq(f.key.event, (uint32_t)i + 1);
        ck_assert_uint_eq(f.key.timestamp, 100u * ((unsigned)i + 1));
        ck_assert_uint_eq(f.payload_size, sizes[i]);
        off += ADF_KEY_SIZE + sizes[i];
    }
    ck_assert_int_eq(adf_reader_next(S.r, &f), ADF_END);
    adf_reader_reset(S.r, S.buf, total, 0);
    ck_assert_int_eq(adf_reader_next(S.r, &f), ADF_OK);
    ck_assert_int_eq(adf_crystal_decode(&f, S.crystal2, &err), ADF_OK);
    check_crystal_eq(S.crystal, S.crystal2);
    ck_assert_int_eq(adf_reader_next(S.r, &f), ADF_OK);
    ck_assert_int_eq(adf_psa_decode(&f, &S.psa2[0], &err), ADF_OK);
    check_psa_eq(&S.psa[0], &S.psa2[0]);
    ck_assert_int_eq(adf_reader_next(S.r, &f), ADF_OK);
    ck_assert_int_eq(adf_event_psa_decode(&f, keys_out, S.psa2, 2, &n, &err), ADF_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(keys_out[1].event, 12);
    check_psa_eq(&S.psa[1], &S.psa2[1]);
    ck_assert_int_eq(adf_reader_next(S.r, &f), ADF_OK);
    ck_assert_int_eq(adf_tracked_decode(&f, S.tracked2, &err), ADF_OK);
    check_tracked_eq(S.tracked, S.tracked2);
    ck_assert_int_eq(adf_reader_next(S.r, &f), ADF_OK);
    adf_eof_t back;
    ck_assert_int_eq(adf_eof_decode(&f, &back, &err), ADF_OK);
    ck_assert(back.has_counts);
    ck_assert_uint_eq(back.run, 42);
    ck_assert_uint_eq(back.frames, 4);
}
END_TEST

/* ---- known vectors ----------------------------------------------------------------- */

/* Encode with the codec, then compare with the payload built from the
 * documented layout; also decode the hand-built bytes. */
START_TEST(psa_known_vector)
{
    adf_psa_t *p = &S.psa[0];
    memset(p, 0, sizeof *p);
    p->crystal_id = 0x1234;
    p->status = 0xBEEF;
    p->core_energy[0] = 1332.0f;
    p->core_energy[1] = 1173.25f;
    p->core_time[0] = -12.5f;
    p->core_time[1] = 3.75f;
    p->psa_status = 0x0102;
    p->n_hits = 2;
    p->has_fom = true;
    for (int i = 0; i < 2; i++) {
        adf_psa_hit_t *h = &p->hit[i];
        h->status = (uint16_t)(0xA000 + i);
        h->segment = (int16_t)(i ? 35 : -3);
        h->crystal = (int16_t)(i ? 0x7FFF : -1);
        float base = i ? 100.0f : 1332.0f;
        h->x = base;
        h->y = base + 1;
        h->z = base + 2;
        h->energy = base + 3;
        h->time = base + 4;
        h->t_cc_e = base + 5;
        h->t_cc_h = base + 6;
        h->t_sg_e = base + 7;
        h->t_sg_h = base + 8;
        h->fom = i ? -0.25f : 0.5f;
    }

    uint8_t want[24 + 2 * 42 + 4 + 2 * 4];
    memset(want, 0xEE, sizeof want);
    put16(want + 0, 0x1234);
    put16(want + 2, 0xBEEF);
    putf(want + 4, 1332.0f);
    putf(want + 8, 1173.25f);
    putf(want + 12, -12.5f);
    putf(want + 16, 3.75f);
    put16(want + 20, 0x0102);
    put16(want + 22, 2);
    for (int i = 0; i < 2; i++) {
        uint8_t *h = want + 24 + 42 * i;
        const adf_psa_hit_t *src = &p->hit[i];
        put16(h + 0, src->status);
        put16(h + 2, (uint16_t)src->segment);
        put16(h + 4, (uint16_t)src->crystal);
        const float v[9] = {src->x,     src->y,      src->z,      src->energy, src->time,
                            src->t_cc_e, src->t_cc_h, src->t_sg_e, src->t_sg_h};
        for (int k = 0; k < 9; k++)
            putf(h + 6 + 4 * k, v[k]);
    }
    put32(want + 24 + 84, 0x314B5354u);
    putf(want + 24 + 84 + 4, 0.5f);
    putf(want + 24 + 84 + 8, -0.25f);

    size_t off = prepare_untouched();
    adf_error_t err;
    ck_assert_int_eq(adf_psa_encode(S.w, 9, 10, p, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    ck_assert_uint_eq(f.payload_size, sizeof want);
    const uint8_t *b = f.payload;
    /* A few fields by their literal bytes. */
    static const uint8_t id[4] = {0x34, 0x12, 0xEF, 0xBE};
    static const uint8_t e0[4] = {0x00, 0x80, 0xA6, 0x44}; /* 1332.0f */
    static const uint8_t nh[2] = {0x02, 0x00};
    static const uint8_t seg[2] = {0xFD, 0xFF}; /* -3 */
    static const uint8_t magic[4] = {'T', 'S', 'K', '1'};
    static const uint8_t fom0[4] = {0x00, 0x00, 0x00, 0x3F}; /* 0.5f */
    ck_assert_mem_eq(b + 0, id, 4);
    ck_assert_mem_eq(b + 4, e0, 4);
    ck_assert_mem_eq(b + 22, nh, 2);
    ck_assert_mem_eq(b + 24 + 2, seg, 2);
    ck_assert_mem_eq(b + 24 + 6, e0, 4); /* first hit's x, unaligned */
    ck_assert_mem_eq(b + 24 + 42 * 2, magic, 4);
    ck_assert_mem_eq(b + 24 + 42 * 2 + 4, fom0, 4);
    ck_assert_mem_eq(b, want, sizeof want);

    /* The hand-built bytes decode to the same values. */
    uint64_t hoff;
    f = hand_frame(ADF_TYPE_DATA_PSA, want, sizeof want, &hoff);
    ck_assert_int_eq(adf_psa_decode(&f, &S.psa2[0], &err), ADF_OK);
    ck_assert(S.psa2[0].has_fom);
    ck_assert(S.psa2[0].hit[0].x == 1332.0f);
    ck_assert(S.psa2[0].hit[1].t_sg_h == 108.0f);
    ck_assert_int_eq(S.psa2[0].hit[0].segment, -3);
    check_psa_eq(p, &S.psa2[0]);

    /* Without the extension the frame ends after the hits. */
    p->has_fom = false;
    off = prepare_untouched();
    ck_assert_int_eq(adf_psa_encode(S.w, 9, 10, p, &err), ADF_OK);
    f = read_one(off);
    ck_assert_uint_eq(f.payload_size, 24 + 84);
    ck_assert_mem_eq(f.payload, want, 24 + 84);
}
END_TEST

START_TEST(crystal_known_vector)
{
    enum { NS = 3 };
    adf_crystal_t *c = S.crystal;
    memset(c, 0, sizeof *c);
    c->crystal_id = 0x0A0B;
    c->status = 0x8001;
    c->n_samples = NS;
    for (int i = 0; i < ADF_CRYSTAL_SEGMENTS; i++)
        c->segment_energy[i] = (float)i + 0.5f;
    c->core_energy[0] = 1332.0f;
    c->core_energy[1] = -2.0f;
    for (int ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++)
        for (int s = 0; s < NS; s++)
            c->trace[ch][s] = (int16_t)(ch * 100 - s * 7 - 3);

    uint8_t want[160 + 38 * NS * 2];
    put16(want + 0, 0x0A0B);
    put16(want + 2, 0x8001);
    put16(want + 4, NS);
    put16(want + 6, 38);
    for (int i = 0; i < 36; i++)
        putf(want + 8 + 4 * i, (float)i + 0.5f);
    putf(want + 152, 1332.0f);
    putf(want + 156, -2.0f);
    for (int ch = 0; ch < 38; ch++)
        for (int s = 0; s < NS; s++)
            put16(want + 160 + 2 * (NS * ch + s), (uint16_t)(int16_t)(ch * 100 - s * 7 - 3));

    size_t off = prepare_untouched();
    adf_error_t err;
    ck_assert_int_eq(adf_crystal_encode(S.w, 1, 2, c, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    ck_assert_uint_eq(f.payload_size, sizeof want);
    const uint8_t *b = f.payload;
    static const uint8_t ns[4] = {NS, 0x00, 38, 0x00};
    static const uint8_t seg0[4] = {0x00, 0x00, 0x00, 0x3F}; /* 0.5f */
    static const uint8_t core0[4] = {0x00, 0x80, 0xA6, 0x44};
    static const uint8_t t00[2] = {0xFD, 0xFF};        /* trace[0][0] = -3 */
    static const uint8_t t10[2] = {0x61, 0x00};        /* trace[1][0] = 97 */
    static const uint8_t t372[2] = {0x63, 0x0E};       /* trace[37][2] = 3683 */
    ck_assert_mem_eq(b + 4, ns, 4);
    ck_assert_mem_eq(b + 8, seg0, 4);
    ck_assert_mem_eq(b + 152, core0, 4);
    ck_assert_mem_eq(b + 160, t00, 2);
    ck_assert_mem_eq(b + 160 + 2 * NS, t10, 2);
    ck_assert_mem_eq(b + 160 + 2 * (NS * 37 + 2), t372, 2);
    ck_assert_mem_eq(b, want, sizeof want);

    uint64_t hoff;
    f = hand_frame(ADF_TYPE_DATA_CRYSTAL, want, sizeof want, &hoff);
    ck_assert_int_eq(adf_crystal_decode(&f, S.crystal2, &err), ADF_OK);
    ck_assert_int_eq(S.crystal2->trace[37][2], 3683);
    ck_assert(S.crystal2->segment_energy[35] == 35.5f);
    check_crystal_eq(c, S.crystal2);
}
END_TEST

START_TEST(tracked_known_vector)
{
    adf_tracked_t *t = S.tracked;
    memset(t, 0, sizeof *t);
    t->n_gammas = 2;
    t->status = 0x00C3;
    for (int i = 0; i < 2; i++) {
        adf_tracked_gamma_t *g = &t->gamma[i];
        g->energy = i ? 1173.25f : 1332.0f;
        for (int k = 0; k < 3; k++) {
            g->first[k] = (float)(10 * i + k);
            g->second[k] = (float)(-10 * i - k) - 0.5f;
        }
        g->fom = i ? 0.5f : -0.25f;
        g->n_points = (uint16_t)(3 + i);
        g->status = (uint16_t)(0xF00D + i);
    }
    uint8_t want[4 + 2 * 40];
    memset(want, 0xEE, sizeof want);
    put16(want + 0, 2);
    put16(want + 2, 0x00C3);
    for (int i = 0; i < 2; i++) {
        uint8_t *g = want + 4 + 40 * i;
        const adf_tracked_gamma_t *src = &t->gamma[i];
        putf(g + 0, src->energy);
        for (int k = 0; k < 3; k++) {
            putf(g + 4 + 4 * k, src->first[k]);
            putf(g + 16 + 4 * k, src->second[k]);
        }
        putf(g + 28, src->fom);
        put16(g + 32, src->n_points);
        put16(g + 34, src->status);
        put32(g + 36, 0);
    }

    size_t off = prepare_untouched();
    adf_error_t err;
    ck_assert_int_eq(adf_tracked_encode(S.w, 1, 2, t, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    ck_assert_uint_eq(f.payload_size, sizeof want);
    const uint8_t *b = f.payload;
    static const uint8_t hdr[4] = {0x02, 0x00, 0xC3, 0x00};
    static const uint8_t e[4] = {0x00, 0x80, 0xA6, 0x44};
    static const uint8_t zero4[4] = {0, 0, 0, 0};
    static const uint8_t sec0[4] = {0x00, 0x00, 0x00, 0xBF}; /* -0.5f */
    static const uint8_t fom[4] = {0x00, 0x00, 0x80, 0xBE};  /* -0.25f */
    static const uint8_t pts[4] = {0x03, 0x00, 0x0D, 0xF0};
    ck_assert_mem_eq(b + 0, hdr, 4);
    ck_assert_mem_eq(b + 4, e, 4);
    ck_assert_mem_eq(b + 8, zero4, 4); /* first[0] = 0.0f */
    ck_assert_mem_eq(b + 20, sec0, 4);
    ck_assert_mem_eq(b + 32, fom, 4);
    ck_assert_mem_eq(b + 36, pts, 4);
    ck_assert_mem_eq(b + 40, zero4, 4);
    ck_assert_mem_eq(b + 44 + 36, zero4, 4);
    ck_assert_mem_eq(b, want, sizeof want);

    /* Decoding ignores the reserved word. */
    put32(want + 40, 0xDEADBEEFu);
    uint64_t hoff;
    f = hand_frame(ADF_TYPE_DATA_TRACKED, want, sizeof want, &hoff);
    ck_assert_int_eq(adf_tracked_decode(&f, S.tracked2, &err), ADF_OK);
    ck_assert(S.tracked2->gamma[1].energy == 1173.25f);
    ck_assert_uint_eq(S.tracked2->gamma[1].status, 0xF00E);
    check_tracked_eq(t, S.tracked2);
}
END_TEST

START_TEST(eof_known_vector)
{
    adf_eof_t e = {.has_counts = true, .run = 0x01020304u, .frames = UINT64_C(0x1122334455667788)};
    static const uint8_t want[12] = {0x04, 0x03, 0x02, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
    size_t off = prepare_untouched();
    adf_error_t err;
    ck_assert_int_eq(adf_eof_encode(S.w, 1, 2, &e, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    ck_assert_uint_eq(f.payload_size, 12);
    ck_assert_mem_eq(f.payload, want, 12);

    e.has_counts = false;
    off = prepare_untouched();
    ck_assert_int_eq(adf_eof_encode(S.w, 1, 2, &e, &err), ADF_OK);
    f = read_one(off);
    ck_assert_uint_eq(f.payload_size, 0);

    uint64_t hoff;
    adf_eof_t back;
    f = hand_frame(ADF_TYPE_META_EOF, want, sizeof want, &hoff);
    ck_assert_int_eq(adf_eof_decode(&f, &back, &err), ADF_OK);
    ck_assert(back.has_counts);
    ck_assert_uint_eq(back.run, 0x01020304u);
    ck_assert_uint_eq(back.frames, UINT64_C(0x1122334455667788));
}
END_TEST

START_TEST(event_psa_known_vector)
{
    rand_psa(&S.psa[0], 1, false);
    rand_psa(&S.psa[1], 0, true);
    S.keys[0] = (adf_key_t){.event = 0x11, .timestamp = 0x22};
    S.keys[1] = (adf_key_t){.event = 0x33, .timestamp = 0x44};
    size_t off = prepare_untouched();
    adf_error_t err;
    ck_assert_int_eq(adf_event_psa_encode(S.w, 0x55, 0x66, S.keys, S.psa, 2, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    size_t l0 = 20 + 24 + 42, l1 = 20 + 24 + 4;
    ck_assert_uint_eq(f.payload_size, l0 + l1);
    /* The sub-keys: length, type, event, timestamp. */
    uint8_t k0[20], k1[20];
    put32(k0, (uint32_t)l0);
    put32(k0 + 4, 0xFA010102u);
    put32(k0 + 8, 0x11);
    put64(k0 + 12, 0x22);
    put32(k1, (uint32_t)l1);
    put32(k1 + 4, 0xFA010102u);
    put32(k1 + 8, 0x33);
    put64(k1 + 12, 0x44);
    ck_assert_mem_eq(f.payload, k0, 20);
    ck_assert_mem_eq(f.payload + l0, k1, 20);
    static const uint8_t magic[4] = {0x54, 0x53, 0x4B, 0x31};
    ck_assert_mem_eq(f.payload + l0 + 20 + 24, magic, 4);
    /* The outer key. */
    uint8_t ko[20];
    put32(ko, (uint32_t)(20 + l0 + l1));
    put32(ko + 4, 0xCA010102u);
    put32(ko + 8, 0x55);
    put64(ko + 12, 0x66);
    ck_assert_mem_eq(S.buf + off, ko, 20);
}
END_TEST

/* ---- malformed payloads ---------------------------------------------------------- */

/* Decode the first `size` bytes of `payload` as a frame of the codec's type;
 * expect `want` (ADF_OK or an error naming the frame's offset). */
static void expect_decode(uint32_t type, const uint8_t *payload, size_t size, int want)
{
    uint64_t off;
    adf_frame_t f = hand_frame(type, payload, size, &off);
    adf_error_t err;
    adf_error_clear(&err);
    size_t n;
    int rc;
    switch (type) {
    case ADF_TYPE_DATA_CRYSTAL: rc = adf_crystal_decode(&f, S.crystal2, &err); break;
    case ADF_TYPE_DATA_PSA: rc = adf_psa_decode(&f, S.psa2, &err); break;
    case ADF_TYPE_DATA_TRACKED: rc = adf_tracked_decode(&f, S.tracked2, &err); break;
    case ADF_TYPE_DATA_TRUTH: rc = adf_truth_decode(&f, S.truth2, &err); break;
    case ADF_TYPE_META_EOF: {
        adf_eof_t e;
        rc = adf_eof_decode(&f, &e, &err);
        break;
    }
    default: rc = adf_event_psa_decode(&f, S.keys, S.psa2, MAX_CRYSTALS, &n, &err); break;
    }
    if (rc != want)
        ck_abort_msg("type 0x%08X, payload of %zu bytes: got %d (%s), expected %d", (unsigned)type, size, rc,
                     err.message, want);
    if (want != ADF_OK)
        check_error_at(&err, want, off);
}

START_TEST(crystal_bad_sizes)
{
    static uint8_t p[160 + 76 * 20 + 8];
    for (int round = 0; round < 4; round++) {
        unsigned ns = round == 0 ? 0 : tu_below(21);
        tu_fill(p, sizeof p);
        put16(p + 4, (uint16_t)ns);
        put16(p + 6, 38);
        size_t valid = 160 + 76 * ns;
        for (size_t size = 0; size <= valid + 8; size++)
            expect_decode(ADF_TYPE_DATA_CRYSTAL, p, size, size == valid ? ADF_OK : ADF_EPAYLOAD);
        /* One channel too few or too many is malformed whatever the size. */
        static const uint16_t bad_channels[] = {0, 36, 37, 39, 76, 0xFFFF};
        for (size_t i = 0; i < sizeof bad_channels / sizeof bad_channels[0]; i++) {
            put16(p + 6, bad_channels[i]);
            expect_decode(ADF_TYPE_DATA_CRYSTAL, p, valid, ADF_EPAYLOAD);
        }
    }
}
END_TEST

START_TEST(crystal_too_many_samples)
{
    static uint8_t p[160 + 8];
    static const uint16_t counts[] = {ADF_CRYSTAL_MAX_SAMPLES + 1, 2000, 0xFFFF};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        tu_fill(p, sizeof p);
        put16(p + 4, counts[i]);
        put16(p + 6, 38);
        for (size_t size = 0; size <= sizeof p; size++)
            expect_decode(ADF_TYPE_DATA_CRYSTAL, p, size, size < 160 ? ADF_EPAYLOAD : ADF_ERANGE);
    }
    /* Even with the payload size 1025 samples would need. */
    size_t big = adf_crystal_payload_size(ADF_CRYSTAL_MAX_SAMPLES + 1);
    uint8_t *q = calloc(1, big);
    ck_assert_ptr_nonnull(q);
    put16(q + 4, ADF_CRYSTAL_MAX_SAMPLES + 1);
    put16(q + 6, 38);
    expect_decode(ADF_TYPE_DATA_CRYSTAL, q, big, ADF_ERANGE);
    adf_error_t err;
    uint64_t off;
    adf_frame_t f = hand_frame(ADF_TYPE_DATA_CRYSTAL, q, big, &off);
    ck_assert_int_eq(adf_crystal_decode(&f, S.crystal2, &err), ADF_ERANGE);
    tu_assert_error(&err, ADF_ERANGE, "1025 samples");
    free(q);
}
END_TEST

START_TEST(psa_bad_sizes)
{
    static uint8_t p[24 + 46 * 12 + 8];
    for (int round = 0; round < 4; round++) {
        unsigned n = round == 0 ? 0 : tu_below(13);
        tu_fill(p, sizeof p);
        put16(p + 22, (uint16_t)n);
        size_t plain = 24 + 42 * n, fom = plain + 4 + 4 * n;
        put32(p + plain, 0x314B5354u);
        for (size_t size = 0; size <= fom + 8; size++)
            expect_decode(ADF_TYPE_DATA_PSA, p, size, size == plain || size == fom ? ADF_OK : ADF_EPAYLOAD);
        /* The "with fom" size needs the magic word. */
        static const uint32_t bad_magic[] = {0x314B5355u, 0x54534B31u, 0, 0xFFFFFFFFu};
        for (size_t i = 0; i < sizeof bad_magic / sizeof bad_magic[0]; i++) {
            put32(p + plain, bad_magic[i]);
            expect_decode(ADF_TYPE_DATA_PSA, p, fom, ADF_EPAYLOAD);
            expect_decode(ADF_TYPE_DATA_PSA, p, plain, ADF_OK);
        }
    }
    /* Too many hits. */
    static const uint16_t counts[] = {ADF_PSA_MAX_HITS + 1, 1000, 0xFFFF};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        tu_fill(p, sizeof p);
        put16(p + 22, counts[i]);
        for (size_t size = 0; size <= 24 + 8; size++)
            expect_decode(ADF_TYPE_DATA_PSA, p, size, size < 24 ? ADF_EPAYLOAD : ADF_ERANGE);
    }
    size_t big = adf_psa_payload_size(ADF_PSA_MAX_HITS + 1, false);
    uint8_t *q = calloc(1, big);
    ck_assert_ptr_nonnull(q);
    put16(q + 22, ADF_PSA_MAX_HITS + 1);
    expect_decode(ADF_TYPE_DATA_PSA, q, big, ADF_ERANGE);
    free(q);
}
END_TEST

START_TEST(tracked_bad_sizes)
{
    static uint8_t p[4 + 40 * 20 + 8];
    for (int round = 0; round < 4; round++) {
        unsigned n = round == 0 ? 0 : tu_below(21);
        tu_fill(p, sizeof p);
        put16(p + 0, (uint16_t)n);
        size_t valid = 4 + 40 * n;
        for (size_t size = 0; size <= valid + 8; size++)
            expect_decode(ADF_TYPE_DATA_TRACKED, p, size, size == valid ? ADF_OK : ADF_EPAYLOAD);
    }
    static const uint16_t counts[] = {ADF_TRACKED_MAX_GAMMAS + 1, 0x8000, 0xFFFF};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        tu_fill(p, sizeof p);
        put16(p + 0, counts[i]);
        for (size_t size = 0; size <= 4 + 8; size++)
            expect_decode(ADF_TYPE_DATA_TRACKED, p, size, size < 4 ? ADF_EPAYLOAD : ADF_ERANGE);
    }
    size_t big = adf_tracked_payload_size(ADF_TRACKED_MAX_GAMMAS + 1);
    uint8_t *q = calloc(1, big);
    ck_assert_ptr_nonnull(q);
    put16(q, ADF_TRACKED_MAX_GAMMAS + 1);
    expect_decode(ADF_TYPE_DATA_TRACKED, q, big, ADF_ERANGE);
    free(q);
}
END_TEST

START_TEST(eof_bad_sizes)
{
    uint8_t p[12 + 8];
    tu_fill(p, sizeof p);
    for (size_t size = 0; size <= sizeof p; size++)
        expect_decode(ADF_TYPE_META_EOF, p, size, size == 0 || size == 12 ? ADF_OK : ADF_EPAYLOAD);
}
END_TEST

/* ---- wrong types -------------------------------------------------------------------- */

START_TEST(wrong_type_names_both)
{
    static const uint32_t types[] = {ADF_TYPE_DATA_CRYSTAL, ADF_TYPE_DATA_PSA, ADF_TYPE_DATA_TRACKED,
                                     ADF_TYPE_META_EOF, ADF_TYPE_EVENT_DATA_PSA};
    static const char *const names[] = {"data:crystal", "data:psa", "data:tracked", "meta:eof",
                                        "event:data:psa"};
    static const uint32_t others[] = {ADF_TYPE_EVENT_DATA, ADF_TYPE_META_SYNC, 0xFA7F0301u, 0xCA7F0301u};
    static const char *const other_names[] = {"event:data", "meta:sync", "0xFA7F0301", "0xCA7F0301"};
    uint8_t payload[64] = {0};
    for (size_t d = 0; d < 5; d++) {
        for (size_t t = 0; t < 5 + 4; t++) {
            uint32_t type = t < 5 ? types[t] : others[t - 5];
            const char *name = t < 5 ? names[t] : other_names[t - 5];
            if (type == types[d])
                continue;
            uint64_t off;
            adf_frame_t f = hand_frame(type, payload, tu_below(sizeof payload + 1), &off);
            adf_error_t err;
            adf_error_clear(&err);
            size_t n = 7;
            adf_eof_t e;
            int rc;
            switch (d) {
            case 0: rc = adf_crystal_decode(&f, S.crystal2, &err); break;
            case 1: rc = adf_psa_decode(&f, S.psa2, &err); break;
            case 2: rc = adf_tracked_decode(&f, S.tracked2, &err); break;
            case 3: rc = adf_eof_decode(&f, &e, &err); break;
            default:
                rc = adf_event_psa_decode(&f, S.keys, S.psa2, MAX_CRYSTALS, &n, &err);
                ck_assert_uint_eq(n, 0);
                break;
            }
            ck_assert_int_eq(rc, ADF_EBADTYPE);
            check_error_at(&err, ADF_EBADTYPE, off);
            /* "is data:psa, expected data:crystal": both names, in order. */
            char needle[96];
            snprintf(needle, sizeof needle, "is %s, expected %s", name, names[d]);
            tu_assert_error(&err, ADF_EBADTYPE, needle);
        }
    }
}
END_TEST

/* ---- encode errors ----------------------------------------------------------------- */

/* The writer after a failed encode: same used(), nothing open, bytes after
 * used() untouched. */
static void check_untouched(size_t used)
{
    ck_assert_uint_eq(adf_writer_used(S.w), used);
    ck_assert_uint_eq(adf_writer_depth(S.w), 0);
    for (size_t i = used; i < 4096; i++)
        if (S.buf[i] != 0xA5)
            ck_abort_msg("byte %zu written by a refused encode", i);
}

START_TEST(encode_range_errors)
{
    adf_error_t err;
    static const uint16_t samples[] = {ADF_CRYSTAL_MAX_SAMPLES + 1, 0xFFFF};
    for (size_t i = 0; i < 2; i++) {
        size_t used = prepare_untouched();
        rand_crystal(S.crystal, 0);
        S.crystal->n_samples = samples[i];
        ck_assert_int_eq(adf_crystal_encode(S.w, 1, 2, S.crystal, &err), ADF_ERANGE);
        tu_assert_error(&err, ADF_ERANGE, "at most 1024");
        check_untouched(used);
    }
    static const uint16_t hits[] = {ADF_PSA_MAX_HITS + 1, 0xFFFF};
    for (size_t i = 0; i < 2; i++) {
        size_t used = prepare_untouched();
        rand_psa(S.psa, 0, i == 0);
        S.psa->n_hits = hits[i];
        ck_assert_int_eq(adf_psa_encode(S.w, 1, 2, S.psa, &err), ADF_ERANGE);
        tu_assert_error(&err, ADF_ERANGE, "at most 64");
        check_untouched(used);
    }
    static const uint16_t gammas[] = {ADF_TRACKED_MAX_GAMMAS + 1, 0xFFFF};
    for (size_t i = 0; i < 2; i++) {
        size_t used = prepare_untouched();
        rand_tracked(S.tracked, 0);
        S.tracked->n_gammas = gammas[i];
        ck_assert_int_eq(adf_tracked_encode(S.w, 1, 2, S.tracked, &err), ADF_ERANGE);
        tu_assert_error(&err, ADF_ERANGE, "at most 128");
        check_untouched(used);
    }
    /* One bad crystal anywhere in an event: nothing of the event is written. */
    for (size_t bad = 0; bad < 4; bad++) {
        size_t used = prepare_untouched();
        for (size_t i = 0; i < 4; i++) {
            rand_psa(&S.psa[i], 2, false);
            S.keys[i] = (adf_key_t){.event = (uint32_t)i, .timestamp = i};
        }
        S.psa[bad].n_hits = ADF_PSA_MAX_HITS + 1;
        ck_assert_int_eq(adf_event_psa_encode(S.w, 1, 2, S.keys, S.psa, 4, &err), ADF_ERANGE);
        tu_assert_error(&err, ADF_ERANGE, "65 hits");
        check_untouched(used);
        S.psa[bad].n_hits = 2;
        S.keys[bad].timestamp = ADF_TIMESTAMP_MAX + 1;
        ck_assert_int_eq(adf_event_psa_encode(S.w, 1, 2, S.keys, S.psa, 4, &err), ADF_EBADKEY);
        tu_assert_error(&err, ADF_EBADKEY, "48 bits");
        check_untouched(used);
        ck_assert(!adf_writer_full(S.w));
    }
    /* A timestamp over 48 bits, through the writer, for each codec. */
    size_t used = prepare_untouched();
    adf_eof_t e = {.has_counts = true};
    uint64_t wide = ADF_TIMESTAMP_MAX + 1;
    ck_assert_int_eq(adf_eof_encode(S.w, 1, wide, &e, &err), ADF_EBADKEY);
    tu_assert_error(&err, ADF_EBADKEY, "48 bits");
    rand_crystal(S.crystal, 4);
    ck_assert_int_eq(adf_crystal_encode(S.w, 1, wide, S.crystal, &err), ADF_EBADKEY);
    rand_psa(S.psa, 4, true);
    ck_assert_int_eq(adf_psa_encode(S.w, 1, wide, S.psa, &err), ADF_EBADKEY);
    rand_tracked(S.tracked, 4);
    ck_assert_int_eq(adf_tracked_encode(S.w, 1, wide, S.tracked, &err), ADF_EBADKEY);
    ck_assert_int_eq(adf_event_psa_encode(S.w, 1, wide, S.keys, S.psa, 1, &err), ADF_EBADKEY);
    check_untouched(used);
}
END_TEST

START_TEST(encode_full_and_too_big)
{
    adf_error_t err;
    rand_crystal(S.crystal, 5);
    rand_psa(S.psa, 5, true);
    rand_tracked(S.tracked, 5);
    adf_eof_t e = {.has_counts = true, .run = 1, .frames = 2};
    size_t sizes[4] = {adf_crystal_payload_size(5), adf_psa_payload_size(5, true),
                       adf_tracked_payload_size(5), 12};
    for (int c = 0; c < 4; c++) {
        for (int empty = 0; empty < 2; empty++) {
            memset(S.buf, 0xA5, BUF_SIZE);
            uint8_t filler[13] = {0};
            size_t used = empty ? 0 : ADF_KEY_SIZE + sizeof filler;
            /* One byte short of room for the frame. */
            adf_writer_reset(S.w, S.buf, used + ADF_KEY_SIZE + sizes[c] - 1);
            if (!empty) {
                adf_key_t k = {.type = ADF_TYPE_META_SYNC};
                ck_assert_int_eq(adf_writer_put(S.w, &k, filler, sizeof filler), ADF_OK);
            }
            int rc;
            switch (c) {
            case 0: rc = adf_crystal_encode(S.w, 1, 2, S.crystal, &err); break;
            case 1: rc = adf_psa_encode(S.w, 1, 2, S.psa, &err); break;
            case 2: rc = adf_tracked_encode(S.w, 1, 2, S.tracked, &err); break;
            default: rc = adf_eof_encode(S.w, 1, 2, &e, &err); break;
            }
            if (empty) {
                ck_assert_int_eq(rc, ADF_ETOOBIG);
                tu_assert_error(&err, ADF_ETOOBIG, "cannot fit");
                ck_assert(!adf_writer_full(S.w));
            } else {
                ck_assert_int_eq(rc, ADF_EFULL);
                tu_assert_error(&err, ADF_EFULL, "full");
                ck_assert(adf_writer_full(S.w));
            }
            check_untouched(used);
        }
    }
}
END_TEST

/* ---- event:data:psa ------------------------------------------------------------------ */

START_TEST(event_psa_too_many_for_max)
{
    for (size_t i = 0; i < 5; i++) {
        rand_psa(&S.psa[i], tu_below(5), tu_below(2));
        S.keys[i] = (adf_key_t){.event = (uint32_t)i, .timestamp = i};
    }
    size_t off = start_with_filler(BUF_SIZE);
    adf_error_t err;
    ck_assert_int_eq(adf_event_psa_encode(S.w, 1, 2, S.keys, S.psa, 5, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    adf_key_t keys[MAX_CRYSTALS];
    for (size_t max = 0; max < 5; max++) {
        size_t n = 99;
        adf_error_clear(&err);
        ck_assert_int_eq(adf_event_psa_decode(&f, keys, S.psa2, max, &n, &err), ADF_ERANGE);
        ck_assert_uint_eq(n, 0);
        check_error_at(&err, ADF_ERANGE, off);
        char needle[32];
        snprintf(needle, sizeof needle, "more than %zu crystals", max);
        tu_assert_error(&err, ADF_ERANGE, needle);
    }
    size_t n = 0;
    ck_assert_int_eq(adf_event_psa_decode(&f, keys, S.psa2, 5, &n, &err), ADF_OK);
    ck_assert_uint_eq(n, 5);
}
END_TEST

START_TEST(event_psa_foreign_subframe)
{
    /* event:data:psa holding a data:psa and then a data:crystal. */
    size_t off = start_with_filler(BUF_SIZE);
    adf_key_t ck = {.type = ADF_TYPE_EVENT_DATA_PSA, .event = 1, .timestamp = 2};
    adf_error_t err;
    rand_psa(S.psa, 3, false);
    rand_crystal(S.crystal, 2);
    ck_assert_int_eq(adf_writer_begin(S.w, &ck), ADF_OK);
    ck_assert_int_eq(adf_psa_encode(S.w, 1, 2, S.psa, &err), ADF_OK);
    ck_assert_int_eq(adf_crystal_encode(S.w, 1, 2, S.crystal, &err), ADF_OK);
    ck_assert_int_eq(adf_writer_end(S.w), ADF_OK);
    adf_frame_t f = read_one(off);
    size_t n = 99;
    adf_key_t keys[MAX_CRYSTALS];
    ck_assert_int_eq(adf_event_psa_decode(&f, keys, S.psa2, MAX_CRYSTALS, &n, &err), ADF_EBADTYPE);
    ck_assert_uint_eq(n, 0);
    /* The error points at the crystal sub-frame, counted from the buffer. */
    check_error_at(&err, ADF_EBADTYPE, off + ADF_KEY_SIZE + ADF_KEY_SIZE + adf_psa_payload_size(3, false));
    tu_assert_error(&err, ADF_EBADTYPE, "data:crystal");
    tu_assert_error(&err, ADF_EBADTYPE, "data:psa");

    /* A malformed data:psa inside: the sub-frame's offset is reported. */
    uint8_t payload[256];
    uint8_t bad[30] = {0};
    size_t pos = tu_put_frame(payload, ADF_TYPE_DATA_PSA, 0, 0, bad, 24);
    size_t sub = pos;
    pos += tu_put_frame(payload + pos, ADF_TYPE_DATA_PSA, 0, 0, bad, sizeof bad);
    uint64_t hoff;
    f = hand_frame(ADF_TYPE_EVENT_DATA_PSA, payload, pos, &hoff);
    ck_assert_int_eq(adf_event_psa_decode(&f, keys, S.psa2, MAX_CRYSTALS, &n, &err), ADF_EPAYLOAD);
    check_error_at(&err, ADF_EPAYLOAD, hoff + ADF_KEY_SIZE + sub);

    /* A composite with a bad key inside. */
    pos = tu_put_frame(payload, ADF_TYPE_DATA_PSA, 0, 0, bad, 24);
    pos += tu_put_frame(payload + pos, 0x12345678u, 0, 0, bad, 24);
    f = hand_frame(ADF_TYPE_EVENT_DATA_PSA, payload, pos, &hoff);
    ck_assert_int_eq(adf_event_psa_decode(&f, keys, S.psa2, MAX_CRYSTALS, &n, &err), ADF_EBADKEY);
    check_error_at(&err, ADF_EBADKEY, hoff + ADF_KEY_SIZE + 44);
}
END_TEST

/* Build an event:data:psa whose payload is (if `lead`) one whole data:psa
 * frame and then the first `cut` bytes of another, for every cut; decode must say ETRUNC at the
 * truncated sub-frame. */
static void check_truncated_tail(bool lead, unsigned lead_hits, unsigned tail_hits)
{
    uint8_t tail[1024], payload[4096];
    uint8_t hits[24 + 42 * 20] = {0};
    put16(hits + 22, (uint16_t)lead_hits);
    size_t pos = 0;
    if (lead)
        pos = tu_put_frame(payload, ADF_TYPE_DATA_PSA, 3, 4, hits, 24 + 42 * lead_hits);
    put16(hits + 22, (uint16_t)tail_hits);
    size_t tail_len = tu_put_frame(tail, ADF_TYPE_DATA_PSA, 5, 6, hits, 24 + 42 * tail_hits);
    adf_key_t keys[MAX_CRYSTALS];
    for (size_t cut = 1; cut < tail_len; cut++) {
        memcpy(payload + pos, tail, cut);
        uint64_t hoff;
        adf_frame_t f = hand_frame(ADF_TYPE_EVENT_DATA_PSA, payload, pos + cut, &hoff);
        adf_error_t err;
        adf_error_clear(&err);
        size_t n = 99;
        int rc = adf_event_psa_decode(&f, keys, S.psa2, MAX_CRYSTALS, &n, &err);
        if (rc != ADF_ETRUNC)
            ck_abort_msg("sub-frame of %zu bytes cut to %zu after %zu bytes: got %d (%s), expected ETRUNC",
                         tail_len, cut, pos, rc, err.message);
        tu_check(n == 0);
        check_error_at(&err, ADF_ETRUNC, hoff + ADF_KEY_SIZE + pos);
    }
}

START_TEST(event_psa_truncated_tail)
{
    /* The truncated sub-frame would still fit the composite's payload. */
    check_truncated_tail(true, 3, 0);
    check_truncated_tail(true, 5, 2);
}
END_TEST

START_TEST(event_psa_truncated_long_subframe)
{
    /* The truncated sub-frame claims more bytes than the whole payload
     * holds: still a truncated frame (ETRUNC), not a malformed key. */
    check_truncated_tail(false, 0, 2);
    check_truncated_tail(true, 0, 2);
}
END_TEST

START_TEST(event_psa_trailing_bytes)
{
    uint8_t payload[256], hits[24] = {0};
    size_t pos = tu_put_frame(payload, ADF_TYPE_DATA_PSA, 3, 4, hits, sizeof hits);
    adf_key_t keys[MAX_CRYSTALS];
    for (size_t extra = 1; extra < ADF_KEY_SIZE; extra++) {
        memset(payload + pos, 0xFA, extra);
        uint64_t hoff;
        adf_frame_t f = hand_frame(ADF_TYPE_EVENT_DATA_PSA, payload, pos + extra, &hoff);
        adf_error_t err;
        size_t n = 99;
        ck_assert_int_eq(adf_event_psa_decode(&f, keys, S.psa2, MAX_CRYSTALS, &n, &err), ADF_ETRUNC);
        check_error_at(&err, ADF_ETRUNC, hoff + ADF_KEY_SIZE + pos);
        tu_assert_error(&err, ADF_ETRUNC, "incomplete key");
    }
}
END_TEST

START_TEST(event_psa_full_takes_all_back)
{
    size_t n = 4, inner = 0;
    for (size_t i = 0; i < n; i++) {
        rand_psa(&S.psa[i], 1 + tu_below(4), tu_below(2));
        S.keys[i] = (adf_key_t){.event = (uint32_t)i, .timestamp = i};
        inner += ADF_KEY_SIZE + adf_psa_payload_size(S.psa[i].n_hits, S.psa[i].has_fom);
    }
    size_t total = ADF_KEY_SIZE + inner;
    adf_error_t err;
    uint8_t filler[10] = {0};
    adf_key_t fk = {.type = ADF_TYPE_META_SYNC};
    size_t used = ADF_KEY_SIZE + sizeof filler;
    for (size_t room = 0; room <= total; room++) {
        memset(S.buf, 0xA5, used + total + 64);
        adf_writer_reset(S.w, S.buf, used + room);
        tu_check(adf_writer_put(S.w, &fk, filler, sizeof filler) == ADF_OK);
        int rc = adf_event_psa_encode(S.w, 1, 2, S.keys, S.psa, n, &err);
        tu_check(adf_writer_depth(S.w) == 0);
        if (room == total) {
            tu_check(rc == ADF_OK);
            tu_check(adf_writer_used(S.w) == used + total);
            break;
        }
        tu_check(rc == ADF_EFULL);
        tu_check(err.code == ADF_EFULL);
        tu_check(adf_writer_full(S.w));
        tu_check(adf_writer_used(S.w) == used);
        for (size_t i = used + room; i < used + total + 64; i++)
            if (S.buf[i] != 0xA5)
                ck_abort_msg("room %zu: byte %zu written past the capacity", room, i);
    }
    /* An empty buffer too small for the event: too big, not full. */
    adf_writer_reset(S.w, S.buf, total - 1);
    ck_assert_int_eq(adf_event_psa_encode(S.w, 1, 2, S.keys, S.psa, n, &err), ADF_ETOOBIG);
    tu_assert_error(&err, ADF_ETOOBIG, "cannot fit");
    ck_assert_uint_eq(adf_writer_used(S.w), 0);
    ck_assert_uint_eq(adf_writer_depth(S.w), 0);
    ck_assert(!adf_writer_full(S.w));
}
END_TEST

START_TEST(event_psa_empty)
{
    size_t off = start_with_filler(BUF_SIZE);
    adf_error_t err;
    ck_assert_int_eq(adf_event_psa_encode(S.w, 7, 8, S.keys, S.psa, 0, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    check_key(&f, ADF_TYPE_EVENT_DATA_PSA, 7, 8, 0);
    ck_assert_uint_eq(adf_writer_used(S.w), off + ADF_KEY_SIZE);
    size_t n = 99;
    adf_key_t keys[1];
    ck_assert_int_eq(adf_event_psa_decode(&f, keys, S.psa2, 0, &n, &err), ADF_OK);
    ck_assert_uint_eq(n, 0);
}
END_TEST

/* ---- random bytes --------------------------------------------------------------------- */

/* A payload for the decoder of `type`: random bytes, often with plausible
 * count fields and sizes, sometimes exactly valid. *size is chosen here.
 * The allocation has exactly that size so valgrind sees any over-read. */
static uint8_t *random_payload(uint32_t type, size_t *size_out)
{
    bool shape = tu_below(4) != 0;
    bool exact = tu_below(4) == 0;
    size_t size = tu_below(2001);
    if (exact) {
        switch (type) {
        case ADF_TYPE_DATA_CRYSTAL: size = 160 + 76 * (size_t)tu_below(24); break;
        case ADF_TYPE_DATA_PSA:
            size = tu_below(2) ? 24 + 42 * (size_t)tu_below(45) : 28 + 46 * (size_t)tu_below(41);
            break;
        case ADF_TYPE_DATA_TRACKED: size = 4 + 40 * (size_t)tu_below(50); break;
        case ADF_TYPE_META_EOF: size = tu_below(2) ? 0 : 12; break;
        default: break;
        }
    } else if (type == ADF_TYPE_META_EOF && tu_below(2)) {
        size = tu_below(16);
    }
    uint8_t *p = malloc(size ? size : 1);
    ck_assert_ptr_nonnull(p);
    tu_fill(p, size);
    switch (type) {
    case ADF_TYPE_DATA_CRYSTAL:
        if (shape && size >= 8) {
            put16(p + 6, tu_below(8) ? 38 : (uint16_t)tu_rand());
            unsigned fit = size >= 160 ? (unsigned)((size - 160) / 76) : 0;
            put16(p + 4, (uint16_t)(tu_below(4) ? fit : tu_below(1100)));
        }
        break;
    case ADF_TYPE_DATA_PSA:
        if (shape && size >= 24) {
            unsigned plain = (unsigned)((size - 24) / 42), fom = size >= 28 ? (unsigned)((size - 28) / 46) : 0;
            unsigned n = tu_below(4) == 0 ? tu_below(80) : (tu_below(2) ? plain : fom);
            put16(p + 22, (uint16_t)n);
            size_t at = 24 + 42 * (size_t)n;
            if (tu_below(4) && at + 4 <= size)
                put32(p + at, 0x314B5354u);
        }
        break;
    case ADF_TYPE_DATA_TRACKED:
        if (shape && size >= 4)
            put16(p, (uint16_t)(tu_below(4) ? (size - 4) / 40 : tu_below(140)));
        break;
    case ADF_TYPE_EVENT_DATA_PSA:
        if (shape) {
            /* A chain of data:psa sub-frames, then maybe a few bytes
             * changed or cut off. */
            free(p);
            uint8_t tmp[2100], hits[24 + 42 * 3];
            size = 0;
            for (unsigned i = 0, m = tu_below(MAX_CRYSTALS + 3); i < m; i++) {
                unsigned n = tu_below(4);
                tu_fill(hits, sizeof hits);
                put16(hits + 22, (uint16_t)n);
                size += tu_put_frame(tmp + size, ADF_TYPE_DATA_PSA, (uint32_t)tu_rand(), rand_ts(), hits,
                                     24 + 42 * n);
            }
            for (unsigned k = tu_below(3); k > 0 && size; k--)
                tmp[tu_below((uint32_t)size)] = (uint8_t)tu_rand();
            if (size && tu_below(4) == 0)
                size -= tu_below((uint32_t)size) + 1;
            p = malloc(size ? size : 1);
            ck_assert_ptr_nonnull(p);
            memcpy(p, tmp, size);
        }
        break;
    default: break;
    }
    *size_out = size;
    return p;
}

START_TEST(random_payloads_never_crash)
{
    static const uint32_t types[] = {ADF_TYPE_DATA_CRYSTAL, ADF_TYPE_DATA_PSA, ADF_TYPE_DATA_TRACKED,
                                     ADF_TYPE_META_EOF, ADF_TYPE_EVENT_DATA_PSA};
    unsigned ok[5] = {0}, failed[5] = {0};
    for (unsigned it = 0; it < 4000; it++) {
        unsigned d = it % 5;
        uint32_t type = types[d];
        size_t size;
        uint8_t *p = random_payload(type, &size);
        adf_frame_t f = {.key = {.length = (uint32_t)(ADF_KEY_SIZE + size), .type = type},
                         .payload = p,
                         .payload_size = (uint32_t)size,
                         .offset = tu_rand() >> 20};
        adf_error_t err;
        adf_error_clear(&err);
        adf_eof_t e;
        size_t n = 0;
        int rc;
        switch (d) {
        case 0: rc = adf_crystal_decode(&f, S.crystal2, &err); break;
        case 1: rc = adf_psa_decode(&f, S.psa2, &err); break;
        case 2: rc = adf_tracked_decode(&f, S.tracked2, &err); break;
        case 3: rc = adf_eof_decode(&f, &e, &err); break;
        default: rc = adf_event_psa_decode(&f, S.keys, S.psa2, MAX_CRYSTALS, &n, &err); break;
        }
        if (rc == ADF_OK) {
            ok[d]++;
            /* Success means the size was consistent with the counts. */
            switch (d) {
            case 0: tu_check(size == adf_crystal_payload_size(S.crystal2->n_samples)); break;
            case 1: tu_check(size == adf_psa_payload_size(S.psa2->n_hits, S.psa2->has_fom)); break;
            case 2: tu_check(size == adf_tracked_payload_size(S.tracked2->n_gammas)); break;
            case 3: tu_check(size == (e.has_counts ? 12u : 0u)); break;
            default: tu_check(n <= MAX_CRYSTALS); break;
            }
        } else {
            failed[d]++;
            if (rc >= 0 || err.code != rc || err.message[0] == '\0' || !strstr(err.message, "offset"))
                ck_abort_msg("decoder %u, %zu bytes: rc %d, error %d '%s'", d, size, rc, err.code, err.message);
            tu_check(err.offset >= f.offset && err.offset < f.offset + ADF_KEY_SIZE + size);
        }
        free(p);
    }
    /* The shaped payloads reach the success path of every decoder. */
    for (int d = 0; d < 5; d++) {
        ck_assert_uint_gt(ok[d], 0);
        ck_assert_uint_gt(failed[d], 0);
    }
}
END_TEST

/* ---- data:truth ------------------------------------------------------------------------ */

/* Random, valid content: every point names one of the gammas, a known
 * process and a segment in -1..35 (so n_points > 0 needs n_gammas > 0). */
static void rand_truth(adf_truth_t *t, unsigned n_gammas, unsigned n_points)
{
    t->decay = tu_rand();
    t->gammas_total = tu_rand();
    t->flags = (uint16_t)tu_rand();
    t->n_gammas = (uint16_t)n_gammas;
    t->n_points = (uint16_t)n_points;
    for (unsigned i = 0; i < n_gammas; i++) {
        adf_truth_gamma_t *g = &t->gamma[i];
        g->energy = tu_any_float();
        for (int k = 0; k < 3; k++)
            g->dir[k] = tu_any_float();
    }
    for (unsigned i = 0; i < n_points; i++) {
        adf_truth_point_t *p = &t->point[i];
        p->crystal = (uint16_t)tu_rand();
        p->segment = (int16_t)((int)tu_below(37) - 1);
        p->gamma = (uint16_t)tu_below(n_gammas);
        p->process = (uint16_t)(1 + tu_below(4));
        p->energy = tu_any_float();
        for (int k = 0; k < 3; k++) {
            p->local[k] = tu_any_float();
            p->world[k] = tu_any_float();
        }
    }
}

static void check_truth_eq(const adf_truth_t *a, const adf_truth_t *b)
{
    tu_check(a->decay == b->decay);
    tu_check(a->gammas_total == b->gammas_total);
    tu_check(a->flags == b->flags);
    tu_check(a->n_gammas == b->n_gammas);
    tu_check(a->n_points == b->n_points);
    for (unsigned i = 0; i < a->n_gammas; i++) {
        const adf_truth_gamma_t *x = &a->gamma[i], *y = &b->gamma[i];
        CHECK_FLOAT(x->energy, y->energy);
        for (int k = 0; k < 3; k++)
            CHECK_FLOAT(x->dir[k], y->dir[k]);
    }
    for (unsigned i = 0; i < a->n_points; i++) {
        const adf_truth_point_t *x = &a->point[i], *y = &b->point[i];
        tu_check(x->crystal == y->crystal);
        tu_check(x->segment == y->segment);
        tu_check(x->gamma == y->gamma);
        tu_check(x->process == y->process);
        CHECK_FLOAT(x->energy, y->energy);
        for (int k = 0; k < 3; k++) {
            CHECK_FLOAT(x->local[k], y->local[k]);
            CHECK_FLOAT(x->world[k], y->world[k]);
        }
    }
}

/* The payload of `t` built by hand from FORMAT.md, with `reserved` in the
 * header's reserved word; returns its size. */
static size_t put_truth(uint8_t *p, const adf_truth_t *t, uint16_t reserved)
{
    put64(p + 0, t->decay);
    put64(p + 8, t->gammas_total);
    put16(p + 16, t->n_gammas);
    put16(p + 18, t->n_points);
    put16(p + 20, t->flags);
    put16(p + 22, reserved);
    uint8_t *g = p + 24;
    for (unsigned i = 0; i < t->n_gammas; i++, g += 16) {
        putf(g, t->gamma[i].energy);
        for (int k = 0; k < 3; k++)
            putf(g + 4 + 4 * k, t->gamma[i].dir[k]);
    }
    uint8_t *q = g;
    for (unsigned i = 0; i < t->n_points; i++, q += 36) {
        const adf_truth_point_t *pt = &t->point[i];
        put16(q + 0, pt->crystal);
        put16(q + 2, (uint16_t)pt->segment);
        put16(q + 4, pt->gamma);
        put16(q + 6, pt->process);
        putf(q + 8, pt->energy);
        for (int k = 0; k < 3; k++) {
            putf(q + 12 + 4 * k, pt->local[k]);
            putf(q + 24 + 4 * k, pt->world[k]);
        }
    }
    return (size_t)(q - p);
}

/* Decode payload[0 .. size) as data:truth into S.truth2 (filled with 0xA5
 * first); expect `want` with the frame's offset and `needle` in the message,
 * and S.truth2 untouched on error. */
static void expect_truth(const uint8_t *payload, size_t size, int want, const char *needle)
{
    uint64_t off;
    adf_frame_t f = hand_frame(ADF_TYPE_DATA_TRUTH, payload, size, &off);
    adf_error_t err;
    adf_error_clear(&err);
    memset(S.truth2, 0xA5, sizeof *S.truth2);
    int rc = adf_truth_decode(&f, S.truth2, &err);
    if (rc != want)
        ck_abort_msg("data:truth payload of %zu bytes: got %d (%s), expected %d", size, rc, err.message, want);
    if (want == ADF_OK)
        return;
    check_error_at(&err, want, off);
    if (needle)
        tu_assert_error(&err, want, needle);
    const uint8_t *b = (const uint8_t *)S.truth2;
    for (size_t i = 0; i < sizeof *S.truth2; i++)
        if (b[i] != 0xA5)
            ck_abort_msg("refused data:truth (%s) wrote byte %zu of the struct", err.message, i);
}

START_TEST(truth_payload_size)
{
    ck_assert_uint_eq(ADF_TRUTH_HEADER_SIZE, 24);
    ck_assert_uint_eq(ADF_TRUTH_GAMMA_SIZE, 16);
    ck_assert_uint_eq(ADF_TRUTH_POINT_SIZE, 36);
    ck_assert_int_eq(ADF_TRUTH_MAX_GAMMAS, 64);
    ck_assert_int_eq(ADF_TRUTH_MAX_POINTS, 2048);
    ck_assert_uint_eq(ADF_TYPE_DATA_TRUTH, 0xFA0101F0u);
    static const unsigned points[] = {0, 1, 2, 3, 100, 2047, 2048, 2049, 65535};
    for (unsigned g = 0; g <= 65535; g = g < 70 ? g + 1 : 2 * g + 1)
        for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
            tu_check(adf_truth_payload_size(g, points[i]) == 24 + 16 * (size_t)g + 36 * (size_t)points[i]);
    ck_assert_uint_eq(adf_truth_payload_size(0, 0), 24);
    ck_assert_uint_eq(adf_truth_payload_size(64, 2048), 24 + 1024 + 73728);
    ck_assert_uint_eq(adf_truth_payload_size(65535, 65535), 24 + 16 * 65535u + 36 * 65535u);
}
END_TEST

START_TEST(truth_round_trip)
{
    static const unsigned fixed[][2] = {{0, 0},    {1, 0},    {ADF_TRUTH_MAX_GAMMAS, 0}, {1, 1},
                                        {1, ADF_TRUTH_MAX_POINTS}, {ADF_TRUTH_MAX_GAMMAS, ADF_TRUTH_MAX_POINTS},
                                        {2, 3}};
    enum { N_FIXED = sizeof fixed / sizeof fixed[0] };
    for (unsigned it = 0; it < 200; it++) {
        unsigned ng, np;
        if (it < N_FIXED) {
            ng = fixed[it][0];
            np = fixed[it][1];
        } else {
            ng = 1 + tu_below(ADF_TRUTH_MAX_GAMMAS);
            np = tu_below(4) ? tu_below(40) : tu_below(ADF_TRUTH_MAX_POINTS + 1);
        }
        rand_truth(S.truth, ng, np);
        if (it == 1) {
            S.truth->decay = UINT64_MAX;
            S.truth->gammas_total = UINT64_C(0x8000000000000001);
            S.truth->flags = 0xFFFF;
        }
        uint32_t event = (uint32_t)tu_rand();
        uint64_t ts = rand_ts();
        size_t off = start_with_filler(BUF_SIZE);
        adf_error_t err;
        tu_check(adf_truth_encode(S.w, event, ts, S.truth, &err) == ADF_OK);
        adf_frame_t f = read_one(off);
        check_key(&f, ADF_TYPE_DATA_TRUTH, event, ts, adf_truth_payload_size(ng, np));
        tu_check(f.payload_size == 24 + 16 * ng + 36 * np);
        /* The bytes are the documented layout, reserved word zero. */
        static uint8_t want[24 + 16 * ADF_TRUTH_MAX_GAMMAS + 36 * ADF_TRUTH_MAX_POINTS];
        tu_check(put_truth(want, S.truth, 0) == f.payload_size);
        if (memcmp(f.payload, want, f.payload_size) != 0)
            ck_abort_msg("%u gammas, %u points: encoded bytes differ from the documented layout", ng, np);
        memset(S.truth2, 0xA5, sizeof *S.truth2);
        tu_check(adf_truth_decode(&f, S.truth2, &err) == ADF_OK);
        check_truth_eq(S.truth, S.truth2);
    }
}
END_TEST

START_TEST(truth_known_vector)
{
    adf_truth_t *t = S.truth;
    memset(t, 0, sizeof *t);
    t->decay = UINT64_C(0x0102030405060708);
    t->gammas_total = UINT64_C(0x1112131415161718);
    t->flags = 0xC001;
    t->n_gammas = 2;
    t->n_points = 3;
    t->gamma[0] = (adf_truth_gamma_t){1173.25f, {0.0f, 0.6f, -0.8f}};
    t->gamma[1] = (adf_truth_gamma_t){1332.0f, {1.0f, 0.0f, 0.0f}};
    t->point[0] = (adf_truth_point_t){.crystal = 0x00B3, .segment = 35, .gamma = 1, .process = ADF_TRUTH_COMPTON,
                                      .energy = 300.5f, .local = {1, 2, 3}, .world = {-10, 20, 235}};
    t->point[1] = (adf_truth_point_t){.crystal = 7, .segment = -1, .gamma = 1, .process = ADF_TRUTH_PHOTO,
                                      .energy = 1031.5f, .local = {-4, 5, 89.5f}, .world = {1, 2, 3}};
    t->point[2] = (adf_truth_point_t){.crystal = 0xFFFF, .segment = 0, .gamma = 0, .process = ADF_TRUTH_PAIR,
                                      .energy = -0.0f, .local = {0, 0, 0}, .world = {0, 0, 0}};
    uint8_t want[24 + 2 * 16 + 3 * 36];
    memset(want, 0xEE, sizeof want);
    ck_assert_uint_eq(put_truth(want, t, 0), sizeof want);

    size_t off = prepare_untouched();
    adf_error_t err;
    ck_assert_int_eq(adf_truth_encode(S.w, 5, 6, t, &err), ADF_OK);
    adf_frame_t f = read_one(off);
    ck_assert_uint_eq(f.payload_size, sizeof want);
    const uint8_t *b = f.payload;
    /* A few fields by their literal bytes. */
    static const uint8_t decay[8] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
    static const uint8_t counts[8] = {0x02, 0x00, 0x03, 0x00, 0x01, 0xC0, 0x00, 0x00};
    static const uint8_t e1[4] = {0x00, 0x80, 0xA6, 0x44};   /* 1332.0f */
    static const uint8_t p0[8] = {0xB3, 0x00, 0x23, 0x00, 0x01, 0x00, 0x02, 0x00};
    static const uint8_t p1[8] = {0x07, 0x00, 0xFF, 0xFF, 0x01, 0x00, 0x01, 0x00};
    static const uint8_t w2[4] = {0x00, 0x00, 0x6B, 0x43};   /* 235.0f */
    static const uint8_t negzero[4] = {0x00, 0x00, 0x00, 0x80};
    ck_assert_mem_eq(b + 0, decay, 8);
    ck_assert_mem_eq(b + 16, counts, 8);
    ck_assert_mem_eq(b + 24 + 16, e1, 4);
    ck_assert_mem_eq(b + 56, p0, 8);
    ck_assert_mem_eq(b + 56 + 24 + 8, w2, 4);
    ck_assert_mem_eq(b + 56 + 36, p1, 8);
    ck_assert_mem_eq(b + 56 + 72 + 8, negzero, 4);
    ck_assert_mem_eq(b, want, sizeof want);

    /* Hand-built bytes decode to the same values; the reserved word is
     * ignored and the flags are passed through. */
    put16(want + 22, 0xBEEF);
    expect_truth(want, sizeof want, ADF_OK, NULL);
    ck_assert(S.truth2->gamma[0].energy == 1173.25f);
    ck_assert(S.truth2->point[0].world[2] == 235.0f);
    ck_assert_int_eq(S.truth2->point[1].segment, -1);
    ck_assert_uint_eq(S.truth2->point[2].process, ADF_TRUTH_PAIR);
    ck_assert_uint_eq(S.truth2->flags, 0xC001);
    check_truth_eq(t, S.truth2);
}
END_TEST

START_TEST(truth_bad_sizes)
{
    static uint8_t p[24 + 16 * 10 + 36 * 40 + 8];
    static const unsigned fixed[][2] = {{0, 0}, {1, 0}, {2, 3}, {10, 40}};
    for (int round = 0; round < 8; round++) {
        unsigned ng = round < 4 ? fixed[round][0] : 1 + tu_below(10);
        unsigned np = round < 4 ? fixed[round][1] : tu_below(41);
        rand_truth(S.truth, ng, np);
        tu_fill(p, sizeof p);
        size_t valid = put_truth(p, S.truth, (uint16_t)tu_rand());
        ck_assert_uint_eq(valid, adf_truth_payload_size(ng, np));
        expect_truth(p, valid, ADF_OK, NULL);
        check_truth_eq(S.truth, S.truth2);
        /* Every truncation, then one to eight bytes too many. */
        char needle[96];
        for (size_t size = 0; size < valid; size++) {
            if (size < 24)
                snprintf(needle, sizeof needle, "payload of %zu bytes is shorter than its 24-byte header", size);
            else
                snprintf(needle, sizeof needle, "payload is %zu bytes, %zu expected for %u gammas and %u points",
                         size, valid, ng, np);
            expect_truth(p, size, ADF_EPAYLOAD, needle);
        }
        for (size_t size = valid + 1; size <= valid + 8; size++) {
            snprintf(needle, sizeof needle, "payload is %zu bytes, %zu expected", size, valid);
            expect_truth(p, size, ADF_EPAYLOAD, needle);
        }
        /* Counts that do not match the bytes: one gamma or point more or less. */
        if (ng > 1 && np == 0) {
            put16(p + 16, (uint16_t)(ng - 1));
            expect_truth(p, valid, ADF_EPAYLOAD, "expected for");
        }
        put16(p + 16, (uint16_t)ng);
        put16(p + 18, (uint16_t)(np + 1));
        expect_truth(p, valid, ADF_EPAYLOAD, "expected for");
        put16(p + 18, (uint16_t)np);
    }
}
END_TEST

START_TEST(truth_too_many)
{
    static uint8_t p[24 + 8];
    static const uint16_t gammas[] = {ADF_TRUTH_MAX_GAMMAS + 1, 1000, 0xFFFF};
    static const uint16_t points[] = {ADF_TRUTH_MAX_POINTS + 1, 0x8000, 0xFFFF};
    char needle[64];
    for (size_t i = 0; i < 3; i++) {
        tu_fill(p, sizeof p);
        put16(p + 16, gammas[i]);
        put16(p + 18, (uint16_t)tu_below(ADF_TRUTH_MAX_POINTS + 1));
        snprintf(needle, sizeof needle, "%u gammas, at most 64", (unsigned)gammas[i]);
        for (size_t size = 0; size <= sizeof p; size++)
            expect_truth(p, size, size < 24 ? ADF_EPAYLOAD : ADF_ERANGE, size < 24 ? "header" : needle);
        tu_fill(p, sizeof p);
        put16(p + 16, (uint16_t)tu_below(ADF_TRUTH_MAX_GAMMAS + 1));
        put16(p + 18, points[i]);
        snprintf(needle, sizeof needle, "%u points, at most 2048", (unsigned)points[i]);
        for (size_t size = 0; size <= sizeof p; size++)
            expect_truth(p, size, size < 24 ? ADF_EPAYLOAD : ADF_ERANGE, size < 24 ? "header" : needle);
    }
    /* Even with the payload size the counts would need (and valid points). */
    for (int which = 0; which < 2; which++) {
        unsigned ng = which ? 1 : ADF_TRUTH_MAX_GAMMAS + 1, np = which ? ADF_TRUTH_MAX_POINTS + 1 : 1;
        size_t big = adf_truth_payload_size(ng, np);
        uint8_t *q = calloc(1, big);
        ck_assert_ptr_nonnull(q);
        put16(q + 16, (uint16_t)ng);
        put16(q + 18, (uint16_t)np);
        for (unsigned i = 0; i < np; i++)
            put16(q + 24 + 16 * ng + 36 * i + 6, ADF_TRUTH_PHOTO);
        expect_truth(q, big, ADF_ERANGE, which ? "2049 points" : "65 gammas");
        /* One fewer is fine (with one gamma fewer, the point moves up). */
        put16(q + 16 + 2 * which, (uint16_t)((which ? np : ng) - 1));
        if (!which)
            put16(q + 24 + 16 * (ng - 1) + 6, ADF_TRUTH_PHOTO);
        expect_truth(q, big - (which ? 36 : 16), ADF_OK, NULL);
        free(q);
    }
}
END_TEST

START_TEST(truth_bad_points)
{
    static uint8_t p[24 + 16 * 3 + 36 * 5];
    char needle[96];
    for (unsigned k = 0; k < 5; k++) {
        rand_truth(S.truth, 3, 5);
        size_t size = put_truth(p, S.truth, 0);
        uint8_t *pt = p + 24 + 16 * 3 + 36 * k;
        /* The limits themselves are fine. */
        put16(pt + 4, 2);
        put16(pt + 6, ADF_TRUTH_PHOTO);
        put16(pt + 2, 35);
        expect_truth(p, size, ADF_OK, NULL);
        put16(pt + 6, ADF_TRUTH_PAIR);
        put16(pt + 2, 0xFFFF); /* -1: no segment */
        expect_truth(p, size, ADF_OK, NULL);

        static const uint16_t bad_gamma[] = {3, 4, 64, 0xFFFF};
        for (size_t i = 0; i < sizeof bad_gamma / sizeof bad_gamma[0]; i++) {
            put16(pt + 4, bad_gamma[i]);
            snprintf(needle, sizeof needle, "point %u descends from gamma %u, but there are 3 gammas", k,
                     (unsigned)bad_gamma[i]);
            expect_truth(p, size, ADF_EPAYLOAD, needle);
        }
        put16(pt + 4, 0);
        static const uint16_t bad_process[] = {0, 5, 0x0101, 0xFFFF};
        for (size_t i = 0; i < sizeof bad_process / sizeof bad_process[0]; i++) {
            put16(pt + 6, bad_process[i]);
            snprintf(needle, sizeof needle, "point %u has process %u", k, (unsigned)bad_process[i]);
            expect_truth(p, size, ADF_EPAYLOAD, needle);
        }
        put16(pt + 6, ADF_TRUTH_RAYLEIGH);
        static const int16_t bad_segment[] = {-2, 36, 37, INT16_MAX, INT16_MIN};
        for (size_t i = 0; i < sizeof bad_segment / sizeof bad_segment[0]; i++) {
            put16(pt + 2, (uint16_t)bad_segment[i]);
            snprintf(needle, sizeof needle, "point %u has segment %d", k, bad_segment[i]);
            expect_truth(p, size, ADF_EPAYLOAD, needle);
        }
        put16(pt + 2, 17);
        expect_truth(p, size, ADF_OK, NULL);
    }
    /* Points without any gamma. */
    rand_truth(S.truth, 1, 2);
    size_t size = put_truth(p, S.truth, 0);
    put16(p + 16, 0);
    memmove(p + 24, p + 24 + 16, 72);
    expect_truth(p, size - 16, ADF_EPAYLOAD, "point 0 descends from gamma 0, but there are 0 gammas");
}
END_TEST

START_TEST(truth_encode_errors)
{
    adf_error_t err;
    static const uint16_t gammas[] = {ADF_TRUTH_MAX_GAMMAS + 1, 0xFFFF};
    static const uint16_t points[] = {ADF_TRUTH_MAX_POINTS + 1, 0xFFFF};
    for (size_t i = 0; i < 2; i++) {
        size_t used = prepare_untouched();
        rand_truth(S.truth, 1, 0);
        S.truth->n_gammas = gammas[i];
        ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_ERANGE);
        tu_assert_error(&err, ADF_ERANGE, "gammas, at most 64");
        check_untouched(used);
        rand_truth(S.truth, 1, 0);
        S.truth->n_points = points[i];
        ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_ERANGE);
        tu_assert_error(&err, ADF_ERANGE, "points, at most 2048");
        check_untouched(used);
    }
    /* A bad point anywhere: nothing is written. */
    for (unsigned k = 0; k < 4; k++) {
        size_t used = prepare_untouched();
        char needle[96];
        rand_truth(S.truth, 2, 4);
        S.truth->point[k].gamma = 2;
        ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_EINVAL);
        snprintf(needle, sizeof needle, "point %u descends from gamma 2, but there are 2 gammas", k);
        tu_assert_error(&err, ADF_EINVAL, needle);
        check_untouched(used);
        S.truth->point[k].gamma = 1;
        S.truth->point[k].process = k % 2 ? 5 : 0;
        ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_EINVAL);
        snprintf(needle, sizeof needle, "point %u has process %u", k, k % 2 ? 5u : 0u);
        tu_assert_error(&err, ADF_EINVAL, needle);
        check_untouched(used);
        S.truth->point[k].process = ADF_TRUTH_COMPTON;
        S.truth->point[k].segment = (int16_t)(k % 2 ? 36 : -2);
        ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_EINVAL);
        snprintf(needle, sizeof needle, "point %u has segment %d", k, k % 2 ? 36 : -2);
        tu_assert_error(&err, ADF_EINVAL, needle);
        check_untouched(used);
        S.truth->point[k].segment = -1;
        ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_OK);
    }
    /* Points without gammas. */
    size_t used = prepare_untouched();
    rand_truth(S.truth, 1, 1);
    S.truth->n_gammas = 0;
    ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_EINVAL);
    tu_assert_error(&err, ADF_EINVAL, "there are 0 gammas");
    check_untouched(used);
    /* A timestamp over 48 bits. */
    rand_truth(S.truth, 3, 3);
    ck_assert_int_eq(adf_truth_encode(S.w, 1, ADF_TIMESTAMP_MAX + 1, S.truth, &err), ADF_EBADKEY);
    tu_assert_error(&err, ADF_EBADKEY, "48 bits");
    check_untouched(used);
    /* One byte short of room: full after another frame, too big alone. */
    size_t size = ADF_KEY_SIZE + adf_truth_payload_size(3, 3);
    for (int empty = 0; empty < 2; empty++) {
        memset(S.buf, 0xA5, BUF_SIZE);
        uint8_t filler[13] = {0};
        used = empty ? 0 : ADF_KEY_SIZE + sizeof filler;
        adf_writer_reset(S.w, S.buf, used + size - 1);
        if (!empty) {
            adf_key_t k = {.type = ADF_TYPE_META_SYNC};
            ck_assert_int_eq(adf_writer_put(S.w, &k, filler, sizeof filler), ADF_OK);
        }
        int rc = adf_truth_encode(S.w, 1, 2, S.truth, &err);
        ck_assert_int_eq(rc, empty ? ADF_ETOOBIG : ADF_EFULL);
        tu_assert_error(&err, rc, empty ? "cannot fit" : "full");
        check_untouched(used);
        adf_writer_reset(S.w, S.buf, used + size);
        if (!empty) {
            adf_key_t k = {.type = ADF_TYPE_META_SYNC};
            ck_assert_int_eq(adf_writer_put(S.w, &k, filler, sizeof filler), ADF_OK);
        }
        ck_assert_int_eq(adf_truth_encode(S.w, 1, 2, S.truth, &err), ADF_OK);
        ck_assert_uint_eq(adf_writer_used(S.w), used + size);
    }
}
END_TEST

START_TEST(truth_wrong_type)
{
    static const uint32_t others[] = {ADF_TYPE_DATA_CRYSTAL, ADF_TYPE_DATA_PSA, ADF_TYPE_DATA_TRACKED,
                                      ADF_TYPE_META_EOF, 0xFA0101F1u};
    static const char *const names[] = {"data:crystal", "data:psa", "data:tracked", "meta:eof", "0xFA0101F1"};
    uint8_t payload[64] = {0};
    char needle[96];
    for (size_t t = 0; t < sizeof others / sizeof others[0]; t++) {
        uint64_t off;
        adf_frame_t f = hand_frame(others[t], payload, 24, &off);
        adf_error_t err;
        ck_assert_int_eq(adf_truth_decode(&f, S.truth2, &err), ADF_EBADTYPE);
        check_error_at(&err, ADF_EBADTYPE, off);
        snprintf(needle, sizeof needle, "is %s, expected data:truth", names[t]);
        tu_assert_error(&err, ADF_EBADTYPE, needle);
    }
    /* And the other decoders name it. */
    uint64_t off;
    adf_frame_t f = hand_frame(ADF_TYPE_DATA_TRUTH, payload, 24, &off);
    adf_error_t err;
    ck_assert_int_eq(adf_truth_decode(&f, S.truth2, &err), ADF_OK);
    ck_assert_int_eq(adf_tracked_decode(&f, S.tracked2, &err), ADF_EBADTYPE);
    tu_assert_error(&err, ADF_EBADTYPE, "is data:truth, expected data:tracked");
    ck_assert_int_eq(adf_crystal_decode(&f, S.crystal2, &err), ADF_EBADTYPE);
    tu_assert_error(&err, ADF_EBADTYPE, "is data:truth, expected data:crystal");
}
END_TEST

/* A simulation's stream: data:crystal frames, then the event's data:truth
 * with the same event number and timestamp; a filter that does not decode
 * data:truth passes it on byte for byte. */
START_TEST(truth_pass_through)
{
    adf_writer_reset(S.w, S.buf, BUF_SIZE / 2);
    adf_error_t err;
    for (uint32_t ev = 0; ev < 3; ev++) {
        rand_crystal(S.crystal, 4);
        ck_assert_int_eq(adf_crystal_encode(S.w, ev, 1000 + ev, S.crystal, &err), ADF_OK);
        rand_truth(S.truth, 1 + ev, 2 * ev);
        ck_assert_int_eq(adf_truth_encode(S.w, ev, 1000 + ev, S.truth, &err), ADF_OK);
    }
    size_t used = adf_writer_used(S.w);
    adf_writer_t *out = adf_writer_new();
    ck_assert_ptr_nonnull(out);
    adf_writer_reset(out, S.buf + BUF_SIZE / 2, BUF_SIZE / 2);
    adf_reader_reset(S.r, S.buf, used, 0);
    adf_frame_t f;
    int truths = 0;
    while (adf_reader_next(S.r, &f) == ADF_OK) {
        if (f.key.type == ADF_TYPE_DATA_TRUTH) {
            ck_assert_uint_eq(f.key.timestamp, 1000 + f.key.event);
            ck_assert_int_eq(adf_truth_decode(&f, S.truth2, &err), ADF_OK);
            ck_assert_uint_eq(S.truth2->n_gammas, 1 + f.key.event);
            truths++;
        }
        ck_assert_int_eq(adf_writer_put_frame(out, &f), ADF_OK);
    }
    ck_assert_int_eq(truths, 3);
    ck_assert_uint_eq(adf_writer_used(out), used);
    ck_assert_mem_eq(S.buf + BUF_SIZE / 2, S.buf, used);
    adf_writer_destroy(&out);
}
END_TEST

START_TEST(truth_random_payloads)
{
    unsigned ok = 0, failed = 0;
    for (unsigned it = 0; it < 3000; it++) {
        size_t size;
        unsigned ng = tu_below(8), np = tu_below(12);
        if (tu_below(3) == 0) {
            size = adf_truth_payload_size(ng, np) + (tu_below(4) ? 0 : tu_below(40));
            size -= tu_below(4) ? 0 : tu_below((uint32_t)size + 1);
        } else {
            size = tu_below(600);
        }
        uint8_t *p = malloc(size ? size : 1); /* exactly `size`: valgrind sees over-reads */
        ck_assert_ptr_nonnull(p);
        tu_fill(p, size);
        if (size >= 24 && tu_below(4)) {
            put16(p + 16, (uint16_t)(tu_below(8) ? ng : tu_rand()));
            put16(p + 18, (uint16_t)(tu_below(8) ? np : tu_rand()));
            /* Mostly plausible points. */
            for (unsigned i = 0; i < np && tu_below(8); i++) {
                size_t at = 24 + 16 * (size_t)ng + 36 * (size_t)i;
                if (at + 8 > size)
                    break;
                put16(p + at + 2, (uint16_t)((int)tu_below(37) - 1));
                put16(p + at + 4, (uint16_t)tu_below(ng + 1));
                put16(p + at + 6, (uint16_t)tu_below(6));
            }
        }
        adf_frame_t f = {.key = {.length = (uint32_t)(ADF_KEY_SIZE + size), .type = ADF_TYPE_DATA_TRUTH},
                         .payload = p,
                         .payload_size = (uint32_t)size,
                         .offset = tu_rand() >> 20};
        adf_error_t err;
        adf_error_clear(&err);
        int rc = adf_truth_decode(&f, S.truth2, &err);
        if (rc == ADF_OK) {
            ok++;
            tu_check(size == adf_truth_payload_size(S.truth2->n_gammas, S.truth2->n_points));
            for (unsigned i = 0; i < S.truth2->n_points; i++) {
                const adf_truth_point_t *pt = &S.truth2->point[i];
                tu_check(pt->gamma < S.truth2->n_gammas);
                tu_check(pt->process >= 1 && pt->process <= 4);
                tu_check(pt->segment >= -1 && pt->segment <= 35);
            }
        } else {
            failed++;
            if ((rc != ADF_EPAYLOAD && rc != ADF_ERANGE) || err.code != rc || !strstr(err.message, "data:truth") ||
                !strstr(err.message, "offset"))
                ck_abort_msg("%zu bytes: rc %d, error %d '%s'", size, rc, err.code, err.message);
            tu_check(err.offset == f.offset);
        }
        free(p);
    }
    ck_assert_uint_gt(ok, 0);
    ck_assert_uint_gt(failed, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adf_codecs");
    TCase *tc = tcase_create("round_trip");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, crystal_round_trip);
    tcase_add_test(tc, psa_round_trip);
    tcase_add_test(tc, tracked_round_trip);
    tcase_add_test(tc, eof_round_trip);
    tcase_add_test(tc, event_psa_round_trip);
    tcase_add_test(tc, mixed_stream_round_trip);
    suite_add_tcase(s, tc);
    tc = tcase_create("layout");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, psa_known_vector);
    tcase_add_test(tc, crystal_known_vector);
    tcase_add_test(tc, tracked_known_vector);
    tcase_add_test(tc, eof_known_vector);
    tcase_add_test(tc, event_psa_known_vector);
    suite_add_tcase(s, tc);
    tc = tcase_create("malformed");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, crystal_bad_sizes);
    tcase_add_test(tc, crystal_too_many_samples);
    tcase_add_test(tc, psa_bad_sizes);
    tcase_add_test(tc, tracked_bad_sizes);
    tcase_add_test(tc, eof_bad_sizes);
    tcase_add_test(tc, wrong_type_names_both);
    tcase_add_test(tc, random_payloads_never_crash);
    suite_add_tcase(s, tc);
    tc = tcase_create("encode_errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, encode_range_errors);
    tcase_add_test(tc, encode_full_and_too_big);
    suite_add_tcase(s, tc);
    tc = tcase_create("event_psa");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, event_psa_too_many_for_max);
    tcase_add_test(tc, event_psa_foreign_subframe);
    tcase_add_test(tc, event_psa_truncated_tail);
    tcase_add_test(tc, event_psa_truncated_long_subframe);
    tcase_add_test(tc, event_psa_trailing_bytes);
    tcase_add_test(tc, event_psa_full_takes_all_back);
    tcase_add_test(tc, event_psa_empty);
    suite_add_tcase(s, tc);
    tc = tcase_create("truth");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, truth_payload_size);
    tcase_add_test(tc, truth_round_trip);
    tcase_add_test(tc, truth_known_vector);
    tcase_add_test(tc, truth_bad_sizes);
    tcase_add_test(tc, truth_too_many);
    tcase_add_test(tc, truth_bad_points);
    tcase_add_test(tc, truth_encode_errors);
    tcase_add_test(tc, truth_wrong_type);
    tcase_add_test(tc, truth_pass_through);
    tcase_add_test(tc, truth_random_payloads);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
