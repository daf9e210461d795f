/* check_adf_writer.c - adf_writer: a random sequence of simple and composite
 * frames written into a buffer of every capacity from 0 to its full size
 * (exact prefix, EFULL/ETOOBIG, never a byte past the capacity, sticky full
 * state, readable result), ETOOBIG being non-sticky, composite nesting, abort
 * and depth, rejected keys that leave the buffer untouched, the position of
 * reserved payloads, byte-exact copies with put_frame, and the key length
 * field being computed by the writer whatever the caller passes. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SENTINEL 0xA5
#define SLACK 64 /* bytes past the capacity that must stay untouched */

/* Little-endian u32, written out here so the test does not trust the library. */
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A key with random event and timestamp and a garbage length (the writer
 * must ignore it). */
static adf_key_t rand_key(uint32_t type)
{
    adf_key_t k = {.length = (uint32_t)tu_rand(), .type = type, .event = (uint32_t)tu_rand(),
                   .timestamp = tu_rand() & ADF_TIMESTAMP_MAX};
    return k;
}

static void assert_sentinel(const uint8_t *buf, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (buf[i] != SENTINEL)
            ck_abort_msg("byte %zu was written (0x%02X)", i, buf[i]);
}

/* ---- the reference sequence ------------------------------------------------ */

enum { OP_PUT, OP_RESERVE, OP_COMPOSITE };

#define SEQ_FRAMES 20
#define SEQ_MAX_PAYLOAD 200
#define SEQ_MAX_SUB 4
#define SEQ_MAX_SUB_PAYLOAD 120

typedef struct seq_frame {
    int op;
    adf_key_t key;
    size_t size; /* payload of a simple frame */
    uint8_t payload[SEQ_MAX_PAYLOAD];
    unsigned n_sub; /* data:psa frames inside a composite */
    adf_key_t sub_key[SEQ_MAX_SUB];
    size_t sub_size[SEQ_MAX_SUB];
    uint8_t sub_payload[SEQ_MAX_SUB][SEQ_MAX_SUB_PAYLOAD];
    size_t length; /* of the whole frame */
} seq_frame_t;

static const uint32_t simple_types[] = {ADF_TYPE_DATA_CRYSTAL, ADF_TYPE_DATA_TRACKED, ADF_TYPE_META_EOF,
                                        ADF_TYPE_META_SYNC, 0xFA7F0301u};

static void make_seq(seq_frame_t *seq, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        seq_frame_t *f = &seq[i];
        memset(f, 0, sizeof *f);
        f->op = (int)tu_below(3);
        if (f->op == OP_COMPOSITE) {
            f->key = rand_key(ADF_TYPE_EVENT_DATA_PSA);
            f->n_sub = 1 + tu_below(SEQ_MAX_SUB);
            f->length = ADF_KEY_SIZE;
            for (unsigned j = 0; j < f->n_sub; j++) {
                f->sub_key[j] = rand_key(ADF_TYPE_DATA_PSA);
                f->sub_size[j] = tu_below(SEQ_MAX_SUB_PAYLOAD + 1);
                tu_fill(f->sub_payload[j], f->sub_size[j]);
                f->length += ADF_KEY_SIZE + f->sub_size[j];
            }
        } else {
            f->key = rand_key(simple_types[tu_below(sizeof simple_types / sizeof simple_types[0])]);
            f->size = tu_below(SEQ_MAX_PAYLOAD + 1);
            tu_fill(f->payload, f->size);
            f->length = ADF_KEY_SIZE + f->size;
        }
    }
}

/* The expected bytes, built without the writer. */
static size_t seq_bytes(const seq_frame_t *seq, unsigned n, uint8_t *out)
{
    size_t pos = 0;
    for (unsigned i = 0; i < n; i++) {
        const seq_frame_t *f = &seq[i];
        if (f->op == OP_COMPOSITE) {
            size_t start = pos;
            pos += ADF_KEY_SIZE;
            for (unsigned j = 0; j < f->n_sub; j++)
                pos += tu_put_frame(out + pos, ADF_TYPE_DATA_PSA, f->sub_key[j].event,
                                    f->sub_key[j].timestamp, f->sub_payload[j], f->sub_size[j]);
            uint8_t key[ADF_KEY_SIZE];
            tu_put_frame(key, f->key.type, f->key.event, f->key.timestamp, NULL, 0);
            memcpy(out + start, key, ADF_KEY_SIZE);
            out[start] = (uint8_t)f->length;
            out[start + 1] = (uint8_t)(f->length >> 8);
            out[start + 2] = (uint8_t)(f->length >> 16);
            out[start + 3] = (uint8_t)(f->length >> 24);
        } else {
            pos += tu_put_frame(out + pos, f->key.type, f->key.event, f->key.timestamp, f->payload, f->size);
        }
    }
    return pos;
}

static int write_one(adf_writer_t *w, const seq_frame_t *f)
{
    if (f->op == OP_PUT)
        return adf_writer_put(w, &f->key, f->payload, f->size);
    if (f->op == OP_RESERVE) {
        uint8_t *p = NULL;
        int rc = adf_writer_reserve(w, &f->key, f->size, &p);
        if (rc == ADF_OK)
            memcpy(p, f->payload, f->size);
        return rc;
    }
    int rc = adf_writer_begin(w, &f->key);
    for (unsigned j = 0; rc == ADF_OK && j < f->n_sub; j++) {
        if (j % 2) {
            uint8_t *p = NULL;
            rc = adf_writer_reserve(w, &f->sub_key[j], f->sub_size[j], &p);
            if (rc == ADF_OK)
                memcpy(p, f->sub_payload[j], f->sub_size[j]);
        } else {
            rc = adf_writer_put(w, &f->sub_key[j], f->sub_payload[j], f->sub_size[j]);
        }
    }
    if (rc == ADF_OK)
        rc = adf_writer_end(w);
    return rc;
}

/* Read buf back and check it holds exactly the first n frames of seq. */
static void check_read_back(adf_reader_t *r, adf_reader_t *sub, const uint8_t *buf, size_t used,
                            const seq_frame_t *seq, unsigned n)
{
    adf_reader_reset(r, buf, used, 0);
    adf_frame_t f;
    size_t offset = 0;
    for (unsigned i = 0; i < n; i++) {
        tu_check(adf_reader_next(r, &f) == ADF_OK);
        tu_check(f.offset == offset);
        tu_check(f.key.length == seq[i].length);
        tu_check(f.key.type == seq[i].key.type);
        tu_check(f.key.event == seq[i].key.event);
        tu_check(f.key.timestamp == seq[i].key.timestamp);
        if (seq[i].op == OP_COMPOSITE) {
            tu_check(adf_reader_open_composite(sub, &f) == ADF_OK);
            adf_frame_t s;
            for (unsigned j = 0; j < seq[i].n_sub; j++) {
                tu_check(adf_reader_next(sub, &s) == ADF_OK);
                tu_check(s.key.type == ADF_TYPE_DATA_PSA);
                tu_check(s.key.event == seq[i].sub_key[j].event);
                tu_check(s.payload_size == seq[i].sub_size[j]);
                tu_check(memcmp(s.payload, seq[i].sub_payload[j], s.payload_size) == 0);
            }
            tu_check(adf_reader_next(sub, &s) == ADF_END);
        } else {
            tu_check(f.payload_size == seq[i].size);
            tu_check(memcmp(f.payload, seq[i].payload, f.payload_size) == 0);
        }
        offset += seq[i].length;
    }
    tu_check(adf_reader_next(r, &f) == ADF_END);
}

/* ---- buffer full ------------------------------------------------------------ */

START_TEST(full_at_every_boundary)
{
    seq_frame_t *seq = malloc(SEQ_FRAMES * sizeof *seq);
    ck_assert_ptr_nonnull(seq);
    make_seq(seq, SEQ_FRAMES);
    size_t prefix[SEQ_FRAMES + 1] = {0};
    for (unsigned i = 0; i < SEQ_FRAMES; i++)
        prefix[i + 1] = prefix[i] + seq[i].length;
    size_t total = prefix[SEQ_FRAMES];

    size_t big = total + SLACK;
    uint8_t *ref = malloc(big), *expect = malloc(big), *buf = malloc(big);
    ck_assert(ref && expect && buf);
    adf_writer_t *w = adf_writer_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_t *sub = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert(w && r && sub);

    /* The reference: everything fits, and matches bytes built by hand. */
    memset(ref, SENTINEL, big);
    adf_writer_reset(w, ref, big);
    for (unsigned i = 0; i < SEQ_FRAMES; i++) {
        ck_assert_int_eq(write_one(w, &seq[i]), ADF_OK);
        ck_assert_uint_eq(adf_writer_used(w), prefix[i + 1]);
        ck_assert_uint_eq(adf_writer_depth(w), 0);
    }
    ck_assert_uint_eq(seq_bytes(seq, SEQ_FRAMES, expect), total);
    ck_assert_mem_eq(ref, expect, total);
    assert_sentinel(ref, total, big);

    for (size_t cap = 0; cap <= total; cap++) {
        memset(buf, SENTINEL, cap + SLACK);
        adf_writer_reset(w, buf, cap);
        tu_check(!adf_writer_full(w));
        unsigned k = 0;
        int rc = ADF_OK;
        while (k < SEQ_FRAMES && (rc = write_one(w, &seq[k])) == ADF_OK)
            k++;
        unsigned fit = 0;
        while (fit < SEQ_FRAMES && prefix[fit + 1] <= cap)
            fit++;
        ck_assert_msg(k == fit, "capacity %zu: %u frames written, %u fit", cap, k, fit);
        size_t used = adf_writer_used(w);
        tu_check(used == prefix[fit]);
        tu_check(adf_writer_depth(w) == 0);
        if (fit == SEQ_FRAMES) {
            tu_check(rc == ADF_OK);
            tu_check(cap == total);
        } else if (fit == 0) {
            tu_check(rc == ADF_ETOOBIG);
            tu_check(!adf_writer_full(w));
            tu_assert_error(adf_writer_error(w), ADF_ETOOBIG, "cannot fit");
        } else {
            tu_check(rc == ADF_EFULL);
            tu_check(adf_writer_full(w));
            tu_assert_error(adf_writer_error(w), ADF_EFULL, "full");
        }
        tu_check(memcmp(buf, ref, used) == 0);
        /* A refused simple frame writes nothing; a refused composite may
         * leave its sub-frames in [used, cap), but never beyond. */
        if (fit < SEQ_FRAMES && seq[fit].op != OP_COMPOSITE)
            assert_sentinel(buf, used, cap + SLACK);
        else
            assert_sentinel(buf, cap, cap + SLACK);

        if (rc == ADF_EFULL) {
            /* Sticky: even a frame that would fit is refused. */
            adf_key_t tiny = rand_key(ADF_TYPE_META_SYNC);
            uint8_t *p = NULL;
            tu_check(adf_writer_put(w, &tiny, NULL, 0) == ADF_EFULL);
            tu_check(adf_writer_reserve(w, &tiny, 0, &p) == ADF_EFULL);
            tu_check(p == NULL);
            adf_key_t ckey = rand_key(ADF_TYPE_EVENT_DATA);
            tu_check(adf_writer_begin(w, &ckey) == ADF_EFULL);
            tu_check(adf_writer_end(w) == ADF_EFULL);
            tu_check(adf_writer_full(w));
            tu_check(adf_writer_used(w) == used);
            tu_check(adf_writer_depth(w) == 0);
            tu_check(memcmp(buf, ref, used) == 0);
            assert_sentinel(buf, cap, cap + SLACK);
        } else if (rc == ADF_ETOOBIG && cap >= ADF_KEY_SIZE) {
            /* Not sticky: a frame that fits goes in. */
            adf_key_t tiny = rand_key(ADF_TYPE_META_SYNC);
            tu_check(adf_writer_put(w, &tiny, NULL, 0) == ADF_OK);
            tu_check(adf_writer_used(w) == ADF_KEY_SIZE);
            tu_check(!adf_writer_full(w));
            continue; /* the buffer no longer holds a prefix of ref */
        }
        check_read_back(r, sub, buf, used, seq, fit);
    }

    /* A reset clears the full state. */
    adf_writer_reset(w, buf, 1 * ADF_KEY_SIZE);
    adf_key_t k = rand_key(ADF_TYPE_META_SYNC);
    ck_assert_int_eq(adf_writer_put(w, &k, NULL, 0), ADF_OK);
    ck_assert_int_eq(adf_writer_put(w, &k, NULL, 0), ADF_EFULL);
    ck_assert(adf_writer_full(w));
    adf_writer_reset(w, buf, 2 * ADF_KEY_SIZE);
    ck_assert(!adf_writer_full(w));
    ck_assert_int_eq(adf_writer_error(w)->code, ADF_OK);
    ck_assert_int_eq(adf_writer_put(w, &k, NULL, 0), ADF_OK);

    adf_reader_destroy(&sub);
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    ck_assert_ptr_null(w);
    free(buf);
    free(expect);
    free(ref);
    free(seq);
}
END_TEST

START_TEST(too_big_is_not_sticky)
{
    uint8_t buf[100 + SLACK];
    uint8_t payload[200];
    tu_fill(payload, sizeof payload);
    memset(buf, SENTINEL, sizeof buf);
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, 100);
    adf_key_t k = rand_key(ADF_TYPE_DATA_PSA);

    /* One byte too many for the empty buffer. */
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 81), ADF_ETOOBIG);
    tu_assert_error(adf_writer_error(w), ADF_ETOOBIG, "101 bytes");
    ck_assert(!adf_writer_full(w));
    ck_assert_uint_eq(adf_writer_used(w), 0);
    uint8_t *p = NULL;
    ck_assert_int_eq(adf_writer_reserve(w, &k, 200, &p), ADF_ETOOBIG);
    ck_assert_ptr_null(p);
    assert_sentinel(buf, 0, sizeof buf);

    /* A composite that cannot fit an empty buffer is taken back whole. */
    adf_key_t ck = rand_key(ADF_TYPE_EVENT_DATA_PSA);
    ck_assert_int_eq(adf_writer_begin(w, &ck), ADF_OK);
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 40), ADF_OK);
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 1), ADF_ETOOBIG);
    ck_assert_uint_eq(adf_writer_depth(w), 0);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    ck_assert(!adf_writer_full(w));
    ck_assert_int_eq(adf_writer_end(w), ADF_EINVAL);
    assert_sentinel(buf, 100, sizeof buf);

    /* Exactly the capacity fits; then the buffer is full. */
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 80), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), 100);
    ck_assert_uint_eq(rd32(buf), 100);
    ck_assert_mem_eq(buf + ADF_KEY_SIZE, payload, 80);
    assert_sentinel(buf, 100, sizeof buf);
    ck_assert_int_eq(adf_writer_put(w, &k, NULL, 0), ADF_EFULL);
    ck_assert(adf_writer_full(w));

    /* With something written, even a frame bigger than the whole buffer is
     * "full": the caller hands the buffer on and retries in an empty one. */
    adf_writer_reset(w, buf, 100);
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 10), ADF_OK);
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 150), ADF_EFULL);
    ck_assert(adf_writer_full(w));
    ck_assert_uint_eq(adf_writer_used(w), 30);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(null_buffer_has_no_room)
{
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, NULL, 4096);
    adf_key_t k = rand_key(ADF_TYPE_META_EOF);
    ck_assert_int_eq(adf_writer_put(w, &k, NULL, 0), ADF_ETOOBIG);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    ck_assert(!adf_writer_full(w));
    adf_writer_destroy(&w);
    adf_writer_destroy(&w); /* harmless on NULL */
    adf_writer_destroy(NULL);
}
END_TEST

/* ---- composites --------------------------------------------------------------- */

START_TEST(composite_call_sequence_errors)
{
    uint8_t buf[256 + SLACK];
    memset(buf, SENTINEL, sizeof buf);
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, 256);

    adf_key_t simple = rand_key(ADF_TYPE_DATA_PSA);
    ck_assert_int_eq(adf_writer_begin(w, &simple), ADF_EINVAL);
    tu_assert_error(adf_writer_error(w), ADF_EINVAL, "0xFA010102 is not a composite");
    adf_key_t bad = rand_key(0x12010102u);
    ck_assert_int_eq(adf_writer_begin(w, &bad), ADF_EINVAL);
    ck_assert_uint_eq(adf_writer_depth(w), 0);

    ck_assert_int_eq(adf_writer_end(w), ADF_EINVAL);
    tu_assert_error(adf_writer_error(w), ADF_EINVAL, "without an open composite");

    adf_writer_abort(w); /* no-op with nothing open */
    ck_assert_uint_eq(adf_writer_used(w), 0);
    ck_assert_uint_eq(adf_writer_depth(w), 0);
    ck_assert(!adf_writer_full(w));
    assert_sentinel(buf, 0, sizeof buf);

    /* None of that blocks normal use. */
    ck_assert_int_eq(adf_writer_put(w, &simple, NULL, 0), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), ADF_KEY_SIZE);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(composite_max_depth)
{
    uint8_t buf[1024];
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, sizeof buf);
    adf_key_t keys[ADF_WRITER_MAX_DEPTH];
    for (unsigned d = 0; d < ADF_WRITER_MAX_DEPTH; d++) {
        keys[d] = rand_key(d % 2 ? ADF_TYPE_EVENT_DATA : ADF_TYPE_EVENT_DATA_PSA);
        ck_assert_int_eq(adf_writer_begin(w, &keys[d]), ADF_OK);
        ck_assert_uint_eq(adf_writer_depth(w), d + 1);
        ck_assert_uint_eq(adf_writer_used(w), 0);
    }
    adf_key_t extra = rand_key(ADF_TYPE_EVENT_DATA);
    ck_assert_int_eq(adf_writer_begin(w, &extra), ADF_EINVAL);
    tu_assert_error(adf_writer_error(w), ADF_EINVAL, "nested deeper than 8");
    ck_assert_uint_eq(adf_writer_depth(w), ADF_WRITER_MAX_DEPTH);

    /* The innermost holds one simple frame of 5 bytes. */
    adf_key_t leaf = rand_key(ADF_TYPE_DATA_PSA);
    ck_assert_int_eq(adf_writer_put(w, &leaf, "abcde", 5), ADF_OK);
    for (unsigned d = ADF_WRITER_MAX_DEPTH; d > 0; d--) {
        ck_assert_int_eq(adf_writer_end(w), ADF_OK);
        ck_assert_uint_eq(adf_writer_depth(w), d - 1);
    }
    size_t total = ADF_WRITER_MAX_DEPTH * ADF_KEY_SIZE + ADF_KEY_SIZE + 5;
    ck_assert_uint_eq(adf_writer_used(w), total);

    /* Each level's length counts everything inside it. */
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert_ptr_nonnull(r);
    adf_frame_t f;
    adf_reader_reset(r, buf, total, 0);
    for (unsigned d = 0; d < ADF_WRITER_MAX_DEPTH; d++) {
        ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
        ck_assert_uint_eq(f.offset, d * ADF_KEY_SIZE);
        ck_assert_uint_eq(f.key.length, total - d * ADF_KEY_SIZE);
        ck_assert_uint_eq(f.key.type, keys[d].type);
        ck_assert_uint_eq(f.key.event, keys[d].event);
        ck_assert_uint_eq(f.key.timestamp, keys[d].timestamp);
        ck_assert_int_eq(adf_reader_open_composite(r, &f), ADF_OK);
    }
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.key.length, ADF_KEY_SIZE + 5);
    ck_assert_mem_eq(f.payload, "abcde", 5);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(composite_abort_innermost)
{
    uint8_t buf[512];
    uint8_t pa[33], px[17], py[9], pz[21];
    tu_fill(pa, sizeof pa);
    tu_fill(px, sizeof px);
    tu_fill(py, sizeof py);
    tu_fill(pz, sizeof pz);
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, sizeof buf);

    adf_key_t ka = rand_key(ADF_TYPE_META_SYNC);
    ck_assert_int_eq(adf_writer_put(w, &ka, pa, sizeof pa), ADF_OK);
    size_t la = ADF_KEY_SIZE + sizeof pa;
    ck_assert_uint_eq(adf_writer_used(w), la);

    adf_key_t kouter = rand_key(ADF_TYPE_EVENT_DATA);
    ck_assert_int_eq(adf_writer_begin(w, &kouter), ADF_OK);
    ck_assert_uint_eq(adf_writer_depth(w), 1);
    ck_assert_uint_eq(adf_writer_used(w), la); /* open composites not counted */
    adf_key_t kx = rand_key(ADF_TYPE_DATA_PSA);
    ck_assert_int_eq(adf_writer_put(w, &kx, px, sizeof px), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), la);

    adf_key_t kinner = rand_key(ADF_TYPE_EVENT_DATA_PSA);
    ck_assert_int_eq(adf_writer_begin(w, &kinner), ADF_OK);
    ck_assert_uint_eq(adf_writer_depth(w), 2);
    adf_key_t ky = rand_key(ADF_TYPE_DATA_PSA);
    ck_assert_int_eq(adf_writer_put(w, &ky, py, sizeof py), ADF_OK);
    adf_writer_abort(w);
    ck_assert_uint_eq(adf_writer_depth(w), 1);
    ck_assert_uint_eq(adf_writer_used(w), la);

    /* The outer composite is still open and takes more frames. */
    adf_key_t kz = rand_key(ADF_TYPE_DATA_TRACKED);
    uint8_t *p = NULL;
    ck_assert_int_eq(adf_writer_reserve(w, &kz, sizeof pz, &p), ADF_OK);
    /* It lands where the aborted composite began. */
    ck_assert_ptr_eq(p, buf + la + ADF_KEY_SIZE + ADF_KEY_SIZE + sizeof px + ADF_KEY_SIZE);
    memcpy(p, pz, sizeof pz);
    ck_assert_int_eq(adf_writer_end(w), ADF_OK);
    ck_assert_uint_eq(adf_writer_depth(w), 0);
    size_t louter = ADF_KEY_SIZE + (ADF_KEY_SIZE + sizeof px) + (ADF_KEY_SIZE + sizeof pz);
    ck_assert_uint_eq(adf_writer_used(w), la + louter);

    /* Compare with the bytes built by hand. */
    uint8_t want[512];
    size_t n = tu_put_frame(want, ka.type, ka.event, ka.timestamp, pa, sizeof pa);
    size_t outer = n;
    n += tu_put_frame(want + n, kouter.type, kouter.event, kouter.timestamp, NULL, 0);
    n += tu_put_frame(want + n, kx.type, kx.event, kx.timestamp, px, sizeof px);
    n += tu_put_frame(want + n, kz.type, kz.event, kz.timestamp, pz, sizeof pz);
    want[outer] = (uint8_t)louter; /* < 256 */
    ck_assert_uint_eq(n, la + louter);
    ck_assert_mem_eq(buf, want, n);

    /* An abort of an outer composite takes its nested ones with it. */
    ck_assert_int_eq(adf_writer_begin(w, &kouter), ADF_OK);
    ck_assert_int_eq(adf_writer_begin(w, &kinner), ADF_OK);
    ck_assert_int_eq(adf_writer_begin(w, &kinner), ADF_OK);
    adf_writer_abort(w);
    adf_writer_abort(w);
    ck_assert_uint_eq(adf_writer_depth(w), 1);
    adf_writer_abort(w);
    ck_assert_uint_eq(adf_writer_depth(w), 0);
    ck_assert_uint_eq(adf_writer_used(w), la + louter);
    ck_assert_int_eq(adf_writer_put(w, &ka, NULL, 0), ADF_OK);
    ck_assert_uint_eq(rd32(buf + la + louter), ADF_KEY_SIZE);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(composite_overflow_takes_outermost_back)
{
    uint8_t buf[200 + SLACK];
    uint8_t payload[64];
    tu_fill(payload, sizeof payload);
    memset(buf, SENTINEL, sizeof buf);
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, 200);
    adf_key_t k = rand_key(ADF_TYPE_META_SYNC);
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 30), ADF_OK); /* 50 bytes */

    adf_key_t ck = rand_key(ADF_TYPE_EVENT_DATA);
    ck_assert_int_eq(adf_writer_begin(w, &ck), ADF_OK);
    ck_assert_int_eq(adf_writer_begin(w, &ck), ADF_OK);
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 64), ADF_OK); /* pos 174 */
    ck_assert_int_eq(adf_writer_put(w, &k, payload, 7), ADF_EFULL);
    tu_assert_error(adf_writer_error(w), ADF_EFULL, "150 of 200 free");
    ck_assert_uint_eq(adf_writer_depth(w), 0);
    ck_assert_uint_eq(adf_writer_used(w), 50);
    ck_assert(adf_writer_full(w));
    ck_assert_int_eq(adf_writer_end(w), ADF_EFULL);
    tu_assert_error(adf_writer_error(w), ADF_EFULL, "taken back");
    assert_sentinel(buf, 200, sizeof buf);
    adf_writer_destroy(&w);
}
END_TEST

/* ---- keys --------------------------------------------------------------------- */

START_TEST(invalid_keys_write_nothing)
{
    uint8_t buf[256 + SLACK];
    uint8_t payload[16] = {0};
    memset(buf, SENTINEL, sizeof buf);
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, 256);
    adf_key_t good = rand_key(ADF_TYPE_META_SYNC);
    ck_assert_int_eq(adf_writer_put(w, &good, payload, 4), ADF_OK);
    size_t used = adf_writer_used(w);
    ck_assert_uint_eq(used, 24);

    adf_key_t k = rand_key(ADF_TYPE_DATA_PSA);
    k.timestamp = ADF_TIMESTAMP_MAX + 1;
    uint8_t *p = NULL;
    ck_assert_int_eq(adf_writer_put(w, &k, payload, sizeof payload), ADF_EBADKEY);
    tu_assert_error(adf_writer_error(w), ADF_EBADKEY, "48 bits");
    ck_assert_int_eq(adf_writer_reserve(w, &k, 4, &p), ADF_EBADKEY);
    ck_assert_ptr_null(p);
    k.timestamp = UINT64_MAX;
    ck_assert_int_eq(adf_writer_put(w, &k, NULL, 0), ADF_EBADKEY);
    k.type = ADF_TYPE_EVENT_DATA_PSA;
    ck_assert_int_eq(adf_writer_begin(w, &k), ADF_EBADKEY);
    ck_assert_uint_eq(adf_writer_depth(w), 0);

    static const uint32_t bad_types[] = {0x00010102u, 0xFB010102u, 0xF9010102u, 0xCB000100u, 0xC9000100u,
                                         0x0000FACAu, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        adf_key_t b = rand_key(bad_types[i]);
        ck_assert_int_eq(adf_writer_put(w, &b, payload, 3), ADF_EBADKEY);
        tu_assert_error(adf_writer_error(w), ADF_EBADKEY, "class byte");
        ck_assert_int_eq(adf_writer_reserve(w, &b, 0, &p), ADF_EBADKEY);
        ck_assert_ptr_null(p);
    }
    ck_assert_uint_eq(adf_writer_used(w), used);
    ck_assert(!adf_writer_full(w));
    assert_sentinel(buf, used, sizeof buf);

    /* The largest timestamp is fine, and a bad key left nothing sticky. */
    k.type = ADF_TYPE_DATA_PSA;
    k.timestamp = ADF_TIMESTAMP_MAX;
    ck_assert_int_eq(adf_writer_put(w, &k, NULL, 0), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), used + ADF_KEY_SIZE);
    static const uint8_t ts[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00};
    ck_assert_mem_eq(buf + used + 12, ts, 8);

    /* A bad key inside a composite leaves it open and intact. */
    adf_key_t ck = rand_key(ADF_TYPE_EVENT_DATA);
    ck_assert_int_eq(adf_writer_begin(w, &ck), ADF_OK);
    adf_key_t b = rand_key(0x01000000u);
    ck_assert_int_eq(adf_writer_put(w, &b, payload, 1), ADF_EBADKEY);
    ck_assert_uint_eq(adf_writer_depth(w), 1);
    ck_assert_int_eq(adf_writer_end(w), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), used + 2 * ADF_KEY_SIZE);
    ck_assert_uint_eq(rd32(buf + used + ADF_KEY_SIZE), ADF_KEY_SIZE);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(key_length_is_computed)
{
    static const uint32_t lengths[] = {0, 1, 19, 20, 21, 12345, 0x7FFFFFFFu, UINT32_MAX};
    uint8_t buf[4096];
    uint8_t payload[100];
    tu_fill(payload, sizeof payload);
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        adf_writer_reset(w, buf, sizeof buf);
        adf_key_t k = rand_key(ADF_TYPE_DATA_TRACKED);
        k.length = lengths[i];
        size_t size = tu_below(sizeof payload + 1);
        ck_assert_int_eq(adf_writer_put(w, &k, payload, size), ADF_OK);
        ck_assert_uint_eq(rd32(buf), ADF_KEY_SIZE + size);
        ck_assert_uint_eq(rd32(buf + 4), ADF_TYPE_DATA_TRACKED);
        ck_assert_uint_eq(rd32(buf + 8), k.event);
        ck_assert_uint_eq(rd32(buf + 12) | (uint64_t)rd32(buf + 16) << 32, k.timestamp);
        size_t pos = ADF_KEY_SIZE + size;

        uint8_t *p = NULL;
        ck_assert_int_eq(adf_writer_reserve(w, &k, 7, &p), ADF_OK);
        memset(p, 0, 7);
        ck_assert_uint_eq(rd32(buf + pos), ADF_KEY_SIZE + 7);
        pos += ADF_KEY_SIZE + 7;

        adf_key_t ck = rand_key(ADF_TYPE_EVENT_DATA_PSA);
        ck.length = lengths[i];
        ck_assert_int_eq(adf_writer_begin(w, &ck), ADF_OK);
        ck_assert_int_eq(adf_writer_put(w, &k, payload, size), ADF_OK);
        ck_assert_int_eq(adf_writer_end(w), ADF_OK);
        ck_assert_uint_eq(rd32(buf + pos), 2 * ADF_KEY_SIZE + size);
        ck_assert_uint_eq(rd32(buf + pos + ADF_KEY_SIZE), ADF_KEY_SIZE + size);
        ck_assert_uint_eq(adf_writer_used(w), pos + 2 * ADF_KEY_SIZE + size);
    }
    adf_writer_destroy(&w);
}
END_TEST

/* ---- reserve and put_frame ---------------------------------------------------- */

START_TEST(reserve_points_into_buffer)
{
    uint8_t buf[8192 + SLACK];
    memset(buf, SENTINEL, sizeof buf);
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, 8192);
    for (int i = 0; i < 40; i++) {
        size_t used = adf_writer_used(w);
        size_t size = tu_below(150);
        adf_key_t k = rand_key(ADF_TYPE_DATA_CRYSTAL);
        uint8_t *p = NULL;
        ck_assert_int_eq(adf_writer_reserve(w, &k, size, &p), ADF_OK);
        ck_assert_ptr_eq(p, buf + used + ADF_KEY_SIZE);
        ck_assert_uint_eq(adf_writer_used(w), used + ADF_KEY_SIZE + size);
        ck_assert_uint_eq(rd32(buf + used), ADF_KEY_SIZE + size);
        /* The payload area is left for the caller: still the sentinel. */
        assert_sentinel(buf, used + ADF_KEY_SIZE, sizeof buf);
        memset(p, i, size);
    }
    /* Inside a composite: after the composite's key. */
    size_t used = adf_writer_used(w);
    adf_key_t ck = rand_key(ADF_TYPE_EVENT_DATA);
    ck_assert_int_eq(adf_writer_begin(w, &ck), ADF_OK);
    adf_key_t k = rand_key(ADF_TYPE_DATA_PSA);
    uint8_t *p = NULL;
    ck_assert_int_eq(adf_writer_reserve(w, &k, 12, &p), ADF_OK);
    ck_assert_ptr_eq(p, buf + used + 2 * ADF_KEY_SIZE);
    ck_assert_uint_eq(adf_writer_used(w), used);
    memset(p, 0, 12);
    ck_assert_int_eq(adf_writer_end(w), ADF_OK);
    ck_assert_uint_eq(adf_writer_used(w), used + 2 * ADF_KEY_SIZE + 12);
    adf_writer_destroy(&w);
}
END_TEST

START_TEST(put_frame_copies_exactly)
{
    enum { N = 40, MAXP = 300 };
    size_t cap = N * (MAXP + 20 * 4);
    uint8_t *src = malloc(cap), *dst = malloc(cap + SLACK);
    ck_assert(src && dst);
    size_t offsets[N];
    adf_key_t keys[N];
    size_t total = tu_make_frames(src, cap, N, MAXP, offsets, keys);
    memset(dst, SENTINEL, cap + SLACK);

    adf_writer_t *w = adf_writer_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert(w && r);
    adf_writer_reset(w, dst, total);
    adf_reader_reset(r, src, total, 0);
    adf_frame_t f;
    for (unsigned i = 0; i < N; i++) {
        ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
        ck_assert_uint_eq(f.offset, offsets[i]);
        ck_assert_int_eq(adf_writer_put_frame(w, &f), ADF_OK);
        ck_assert_uint_eq(adf_writer_used(w), offsets[i] + keys[i].length);
    }
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    ck_assert_uint_eq(adf_writer_used(w), total);
    ck_assert_mem_eq(dst, src, total);
    assert_sentinel(dst, total, cap + SLACK);

    /* The buffer is now exactly full: one more copy is refused. */
    adf_reader_reset(r, src, total, 0);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_writer_put_frame(w, &f), ADF_EFULL);
    ck_assert_uint_eq(adf_writer_used(w), total);

    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(dst);
    free(src);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adf_writer");
    TCase *tc = tcase_create("full");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, full_at_every_boundary);
    tcase_add_test(tc, too_big_is_not_sticky);
    tcase_add_test(tc, null_buffer_has_no_room);
    suite_add_tcase(s, tc);
    tc = tcase_create("composite");
    tcase_add_test(tc, composite_call_sequence_errors);
    tcase_add_test(tc, composite_max_depth);
    tcase_add_test(tc, composite_abort_innermost);
    tcase_add_test(tc, composite_overflow_takes_outermost_back);
    suite_add_tcase(s, tc);
    tc = tcase_create("keys");
    tcase_add_test(tc, invalid_keys_write_nothing);
    tcase_add_test(tc, key_length_is_computed);
    suite_add_tcase(s, tc);
    tc = tcase_create("reserve");
    tcase_add_test(tc, reserve_points_into_buffer);
    tcase_add_test(tc, put_frame_copies_exactly);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
