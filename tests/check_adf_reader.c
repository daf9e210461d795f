/* check_adf_reader.c - iterating frames of a buffer: zero-copy views,
 * every length checked, errors with offsets, the stop and resync policies,
 * composites, and thousands of random mutations that must never lead the
 * reader outside its buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "adf/adf_frames.h"
#include "base/bytes.h"

#define N_FRAMES 40
#define MAX_PAYLOAD 300
#define CAP (N_FRAMES * (MAX_PAYLOAD * 2 + 100))

typedef struct sample {
    uint8_t *buf;
    size_t size;
    size_t off[N_FRAMES];
    adf_key_t key[N_FRAMES];
} sample_t;

static sample_t *sample_new(void)
{
    sample_t *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->buf = malloc(CAP);
    ck_assert_ptr_nonnull(s->buf);
    s->size = tu_make_frames(s->buf, CAP, N_FRAMES, MAX_PAYLOAD, s->off, s->key);
    return s;
}

static void sample_free(sample_t *s)
{
    free(s->buf);
    free(s);
}

static void assert_key_eq(const adf_key_t *a, const adf_key_t *b)
{
    tu_check((a->length) == (b->length));
    tu_check((a->type) == (b->type));
    tu_check((a->event) == (b->event));
    tu_check((a->timestamp) == (b->timestamp));
}

START_TEST(reads_every_frame_in_place)
{
    sample_t *s = sample_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, s->buf, s->size, 0);
    adf_frame_t f;
    for (int i = 0; i < N_FRAMES; i++) {
        ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
        assert_key_eq(&f.key, &s->key[i]);
        ck_assert_uint_eq(f.offset, s->off[i]);
        /* A view, not a copy. */
        ck_assert_ptr_eq(f.payload, s->buf + s->off[i] + ADF_KEY_SIZE);
        ck_assert_uint_eq(f.payload_size, s->key[i].length - ADF_KEY_SIZE);
    }
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    adf_reader_stats_t st = adf_reader_stats(r);
    ck_assert_uint_eq(st.frames, N_FRAMES);
    ck_assert_uint_eq(st.errors, 0);
    ck_assert_uint_eq(st.bytes_skipped, 0);
    ck_assert_int_eq(adf_reader_error(r)->code, ADF_OK);
    adf_reader_destroy(&r);
    ck_assert_ptr_null(r);
    sample_free(s);
}
END_TEST

START_TEST(count_frames_stops_at_damage)
{
    sample_t *s = sample_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_RESYNC);
    ck_assert_uint_eq(adf_count_frames(r, s->buf, s->size), N_FRAMES);
    ck_assert_uint_eq(adf_count_frames(r, s->buf, 0), 0);
    /* Up to the first malformed frame, even with a resync reader. */
    s->buf[s->off[7] + 7] = 0x00;
    ck_assert_uint_eq(adf_count_frames(r, s->buf, s->size), 7);
    adf_reader_destroy(&r);
    sample_free(s);
}
END_TEST

START_TEST(base_offset_is_reported)
{
    sample_t *s = sample_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, s->buf, s->size, 1000000);
    adf_frame_t f;
    for (int i = 0; i < N_FRAMES; i++) {
        ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
        ck_assert_uint_eq(f.offset, 1000000 + s->off[i]);
    }
    /* An error inside names the absolute offset too. */
    s->buf[s->off[3] + 7] = 0x00;
    adf_reader_reset(r, s->buf, s->size, 1000000);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_EBADKEY);
    ck_assert_uint_eq(adf_reader_error(r)->offset, 1000000 + s->off[3]);
    adf_reader_destroy(&r);
    sample_free(s);
}
END_TEST

START_TEST(empty_and_null_buffers)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_frame_t f;
    adf_reader_reset(r, NULL, 0, 0);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    uint8_t one = 0;
    adf_reader_reset(r, &one, 0, 0);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    /* NULL with a size is treated as empty, not dereferenced. */
    adf_reader_reset(r, NULL, 100, 0);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    adf_reader_destroy(&r);
    adf_reader_destroy(&r); /* idempotent */
}
END_TEST

START_TEST(zero_length_key)
{
    uint8_t buf[64];
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_PSA, 1, 2, "abcd", 4);
    tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, 1, 2, NULL, 0);
    tusk_put_u32(buf + n, 0); /* length 0 */
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, buf, n + ADF_KEY_SIZE, 0);
    adf_frame_t f;
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_EBADKEY);
    tu_assert_error(adf_reader_error(r), ADF_EBADKEY, "shorter than");
    ck_assert_uint_eq(adf_reader_error(r)->offset, n);
    ck_assert_msg(strstr(adf_reader_error(r)->message, "offset 24") != NULL, "%s",
                  adf_reader_error(r)->message);
    /* Stop policy: the error repeats, nothing more is handed out. */
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_EBADKEY);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_EBADKEY);
    ck_assert_uint_eq(adf_reader_stats(r).frames, 1);
    ck_assert_uint_eq(adf_reader_stats(r).errors, 1);
    adf_reader_destroy(&r);
}
END_TEST

START_TEST(oversize_length)
{
    uint8_t buf[64];
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_TRACKED, 7, 9, "0123456789", 10);
    uint32_t lengths[] = {(uint32_t)n + 1, (uint32_t)n + 1000, UINT32_MAX};
    for (size_t i = 0; i < 3; i++) {
        tusk_put_u32(buf, lengths[i]);
        adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
        adf_reader_reset(r, buf, n, 0);
        adf_frame_t f;
        ck_assert_int_eq(adf_reader_next(r, &f), ADF_ETRUNC);
        tu_assert_error(adf_reader_error(r), ADF_ETRUNC, "truncated frame");
        ck_assert_uint_eq(adf_reader_error(r)->offset, 0);
        adf_reader_destroy(&r);
    }
}
END_TEST

/* Cutting a valid buffer anywhere: the frames wholly before the cut come
 * out, then END on a frame boundary or ETRUNC inside a frame. */
START_TEST(truncated_at_every_byte)
{
    sample_t *s = sample_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    for (size_t cut = 0; cut <= s->size; cut++) {
        /* An exact-size copy, so reading past the cut is a memory error. */
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, s->buf, cut);
        adf_reader_reset(r, copy, cut, 0);
        size_t whole = 0;
        while (whole < N_FRAMES && s->off[whole] + s->key[whole].length <= cut)
            whole++;
        adf_frame_t f;
        for (size_t i = 0; i < whole; i++) {
            tu_check((adf_reader_next(r, &f)) == (ADF_OK));
            tu_check((f.offset) == (s->off[i]));
        }
        int rc = adf_reader_next(r, &f);
        bool boundary = whole == N_FRAMES ? cut == s->size : cut == s->off[whole];
        if (boundary) {
            tu_check((rc) == (ADF_END));
        } else {
            tu_check((rc) == (ADF_ETRUNC));
            tu_check((adf_reader_error(r)->offset) == (s->off[whole]));
            const char *want = cut - s->off[whole] < ADF_KEY_SIZE ? "incomplete key" : "truncated frame";
            tu_assert_error(adf_reader_error(r), ADF_ETRUNC, want);
        }
        free(copy);
    }
    adf_reader_destroy(&r);
    sample_free(s);
}
END_TEST

/* A broken key in the middle: resync reports it once and goes on with the
 * next frame, counting exactly the bytes of the broken one as skipped. */
START_TEST(resync_skips_one_bad_frame)
{
    for (int trial = 0; trial < 200; trial++) {
        sample_t *s = sample_new();
        int bad = 1 + (int)tu_below(N_FRAMES - 2);
        /* Break the class byte of the key (byte 7). */
        s->buf[s->off[bad] + 7] = (uint8_t)(0x10 + tu_below(0x80));
        adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_RESYNC);
        adf_reader_reset(r, s->buf, s->size, 0);
        adf_frame_t f;
        for (int i = 0; i < bad; i++) {
            tu_check((adf_reader_next(r, &f)) == (ADF_OK));
            tu_check((f.offset) == (s->off[i]));
        }
        tu_check((adf_reader_next(r, &f)) == (ADF_EBADKEY));
        tu_assert_error(adf_reader_error(r), ADF_EBADKEY, "class byte");
        tu_check((adf_reader_error(r)->offset) == (s->off[bad]));
        /* The payload of the broken frame may hold frame-like bytes only
         * by chance; tu_make_frames fills payloads with random bytes, so
         * accept a resync inside it but require every later frame. */
        int rc;
        size_t next = bad + 1;
        while ((rc = adf_reader_next(r, &f)) == ADF_OK || rc < 0) {
            if (rc < 0)
                continue;
            if (f.offset == s->off[next]) {
                assert_key_eq(&f.key, &s->key[next]);
                next++;
            } else {
                tu_check((f.offset) < (s->off[bad + 1]));
            }
        }
        tu_check((rc) == (ADF_END));
        tu_check((next) == (N_FRAMES));
        adf_reader_stats_t st = adf_reader_stats(r);
        tu_check((st.errors) >= (1));
        tu_check((st.frames) >= (N_FRAMES - 1));
        if (st.errors == 1 && st.frames == N_FRAMES - 1)
            tu_check((st.bytes_skipped) == (s->key[bad].length));
        adf_reader_destroy(&r);
        sample_free(s);
    }
}
END_TEST

/* Garbage between two frames is skipped and counted exactly. */
START_TEST(resync_over_garbage)
{
    uint8_t buf[256];
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_PSA, 1, 10, "payload", 7);
    size_t garbage = 37;
    memset(buf + n, 0x11, garbage);
    size_t m = tu_put_frame(buf + n + garbage, ADF_TYPE_DATA_TRACKED, 2, 20, "xy", 2);
    size_t k = tu_put_frame(buf + n + garbage + m, ADF_TYPE_META_EOF, 3, 30, NULL, 0);
    size_t total = n + garbage + m + k;

    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_RESYNC);
    adf_reader_reset(r, buf, total, 0);
    adf_frame_t f;
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_EBADKEY);
    ck_assert_uint_eq(adf_reader_error(r)->offset, n);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.key.type, ADF_TYPE_DATA_TRACKED);
    ck_assert_uint_eq(f.offset, n + garbage);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.key.type, ADF_TYPE_META_EOF);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    adf_reader_stats_t st = adf_reader_stats(r);
    ck_assert_uint_eq(st.frames, 3);
    ck_assert_uint_eq(st.errors, 1);
    ck_assert_uint_eq(st.bytes_skipped, garbage);

    /* Trailing garbage shorter than a key: reported, then the end. */
    adf_reader_reset(r, buf, n + 5, 0);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_ETRUNC);
    tu_assert_error(adf_reader_error(r), ADF_ETRUNC, "incomplete key");
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
    ck_assert_uint_eq(adf_reader_stats(r).bytes_skipped, 5);
    adf_reader_destroy(&r);
}
END_TEST

START_TEST(composite_frames)
{
    uint8_t buf[512];
    /* event:data:psa { data:psa "a", data:psa "bb" } then meta:eof */
    size_t pos = ADF_KEY_SIZE;
    pos += tu_put_frame(buf + pos, ADF_TYPE_DATA_PSA, 5, 50, "a", 1);
    pos += tu_put_frame(buf + pos, ADF_TYPE_DATA_PSA, 5, 51, "bb", 2);
    tu_put_frame(buf, ADF_TYPE_EVENT_DATA_PSA, 5, 50, NULL, 0);
    tusk_put_u32(buf, (uint32_t)pos);
    size_t total = pos + tu_put_frame(buf + pos, ADF_TYPE_META_EOF, 6, 60, NULL, 0);

    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_t *sub = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, buf, total, 100);
    adf_frame_t f, g;
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.key.type, ADF_TYPE_EVENT_DATA_PSA);
    ck_assert_int_eq(adf_reader_open_composite(sub, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_next(sub, &g), ADF_OK);
    ck_assert_uint_eq(g.offset, 100 + ADF_KEY_SIZE);
    ck_assert_uint_eq(g.payload_size, 1);
    ck_assert_int_eq(g.payload[0], 'a');
    ck_assert_int_eq(adf_reader_next(sub, &g), ADF_OK);
    ck_assert_uint_eq(g.key.timestamp, 51);
    ck_assert_uint_eq(g.offset, 100 + 2 * ADF_KEY_SIZE + 1);
    ck_assert_int_eq(adf_reader_next(sub, &g), ADF_END);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.key.type, ADF_TYPE_META_EOF);
    ck_assert_int_eq(adf_reader_open_composite(sub, &f), ADF_EBADTYPE);
    tu_assert_error(adf_reader_error(sub), ADF_EBADTYPE, "not a composite");
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);

    /* A composite whose inner frame overruns its payload: the error is
     * found inside, with the absolute offset, and the outer reader is fine. */
    tusk_put_u32(buf + ADF_KEY_SIZE, 200);
    adf_reader_reset(r, buf, total, 0);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_open_composite(sub, &f), ADF_OK);
    ck_assert_int_eq(adf_reader_next(sub, &g), ADF_ETRUNC);
    ck_assert_uint_eq(adf_reader_error(sub)->offset, ADF_KEY_SIZE);
    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
    adf_reader_destroy(&sub);
    adf_reader_destroy(&r);
}
END_TEST

/* Mutate a valid buffer at random and read it with both policies; the
 * reader must terminate, stay inside the buffer and explain every error. */
static void mutate(uint8_t *b, size_t *size, size_t cap)
{
    int n = 1 + (int)tu_below(4);
    for (int i = 0; i < n && *size > 0; i++) {
        size_t at = tu_below((uint32_t)*size);
        switch (tu_below(5)) {
        case 0: b[at] ^= (uint8_t)(1u << tu_below(8)); break;
        case 1: b[at] = (uint8_t)tu_rand(); break;
        case 2: *size = at; break;
        case 3: /* overwrite a length field-sized run */
            for (size_t j = at; j < at + 4 && j < *size; j++)
                b[j] = (uint8_t)tu_rand();
            break;
        case 4: /* insert a byte */
            if (*size < cap) {
                memmove(b + at + 1, b + at, *size - at);
                b[at] = (uint8_t)tu_rand();
                (*size)++;
            }
            break;
        }
    }
}

static void read_all_checked(const uint8_t *data, size_t size, adf_on_error_t policy)
{
    adf_reader_t *r = adf_reader_new(policy);
    adf_reader_reset(r, data, size, 0);
    adf_frame_t f;
    int rc;
    size_t calls = 0, frames = 0;
    while ((rc = adf_reader_next(r, &f)) != ADF_END) {
        tu_check((++calls) <= (size + 2));
        if (rc == ADF_OK) {
            frames++;
            tu_check((f.payload) == (data + f.offset + ADF_KEY_SIZE));
            tu_check((f.offset + f.key.length) <= (size));
            tu_check((f.payload_size + ADF_KEY_SIZE) == (f.key.length));
        } else {
            tu_check((rc) < (0));
            const adf_error_t *e = adf_reader_error(r);
            tu_check((e->code) == (rc));
            tu_check(e->message[0] != '\0');
            tu_check((e->offset) < (size));
            if (policy == ADF_ON_ERROR_STOP)
                break;
        }
    }
    tu_check((adf_reader_stats(r).frames) == (frames));
    adf_reader_destroy(&r);
}

START_TEST(random_mutations)
{
    sample_t *s = sample_new();
    uint8_t *work = malloc(s->size + 64);
    for (int i = 0; i < 3000; i++) {
        size_t size = s->size;
        memcpy(work, s->buf, size);
        mutate(work, &size, s->size + 64);
        uint8_t *exact = malloc(size ? size : 1);
        memcpy(exact, work, size);
        read_all_checked(exact, size, ADF_ON_ERROR_STOP);
        read_all_checked(exact, size, ADF_ON_ERROR_RESYNC);
        free(exact);
    }
    /* And pure noise. */
    for (int i = 0; i < 500; i++) {
        size_t size = tu_below(2000);
        uint8_t *noise = malloc(size ? size : 1);
        tu_fill(noise, size);
        read_all_checked(noise, size, ADF_ON_ERROR_RESYNC);
        free(noise);
    }
    free(work);
    sample_free(s);
}
END_TEST

/* ---- the reconstruction filters' walks (adf_frames.h) ------------------------------ */

#define T_OURS ADF_TYPE_DATA_STS_DIGIS
#define T_OTHER ADF_TYPE_META_SYNC
#define T_AFTER ADF_TYPE_DATA_STS_HITS

typedef struct walk {
    uint32_t events[64];
    size_t n, fail_at;
} walk_t;

static int note(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    walk_t *w = ctx;
    if (w->n == w->fail_at) {
        err->code = TUSK_ENOMEM; /* by hand: this test links libtusk-adf alone */
        snprintf(err->message, sizeof err->message, "made-up failure at frame %zu", w->n);
        return TUSK_ENOMEM;
    }
    w->events[w->n++] = f->key.event;
    return TUSK_OK;
}

/* After frame k of ours: a T_AFTER frame of event 1000 + k. */
static int after(void *ctx, size_t k, const adf_frame_t *f, adf_writer_t *w, tusk_error_t *err)
{
    walk_t *wk = ctx;
    ck_assert_uint_eq(f->key.event, wk->events[k]);
    adf_key_t key = {0, T_AFTER, (uint32_t)(1000 + k), f->key.timestamp};
    if (adf_writer_put(w, &key, "x", 1) != ADF_OK)
        return adf_frames_error(adf_writer_error(w), err);
    return TUSK_OK;
}

START_TEST(frames_walks)
{
    /* A random mix of our frames and others; event i for frame i. */
    uint8_t buf[64 * 48], out[64 * 96];
    size_t size = 0, n = 8 + tu_below(40), ours = 0, last = 0;
    uint32_t type[64];
    for (size_t i = 0; i < n; i++) {
        type[i] = tu_below(2) ? T_OURS : T_OTHER;
        ours += type[i] == T_OURS;
        uint8_t payload[8];
        tu_fill(payload, sizeof payload);
        last = size;
        size += tu_put_frame(buf + size, type[i], (uint32_t)i, 7, payload, tu_below(9));
    }
    tusk_error_t err;
    walk_t w = {{0}, 0, SIZE_MAX};
    ck_assert_int_eq(adf_frames_read(buf, size, 0, T_OURS, note, &w, &err), TUSK_OK);
    ck_assert_uint_eq(w.n, ours);
    for (size_t i = 0, k = 0; i < n; i++)
        if (type[i] == T_OURS)
            ck_assert_uint_eq(w.events[k++], i);
    walk_t all = {{0}, 0, SIZE_MAX};
    ck_assert_int_eq(adf_frames_read(buf, size, 0, ADF_FRAMES_ALL, note, &all, &err), TUSK_OK);
    ck_assert_uint_eq(all.n, n);
    /* the first failure stops the walk with its status */
    walk_t stop = {{0}, 0, 1};
    ck_assert_int_eq(adf_frames_read(buf, size, 0, ADF_FRAMES_ALL, note, &stop, &err), TUSK_ENOMEM);
    tu_assert_error(&err, TUSK_ENOMEM, "made-up failure at frame 1");
    /* a damaged buffer: the reader's message, offsets from base */
    walk_t cut = {{0}, 0, SIZE_MAX};
    ck_assert_int_eq(adf_frames_read(buf, size - 1, 5000, ADF_FRAMES_ALL, note, &cut, &err), TUSK_EINVAL);
    char at[32];
    snprintf(at, sizeof at, "offset %zu", 5000 + last);
    tu_assert_error(&err, TUSK_EINVAL, at);
    ck_assert_uint_eq(cut.n, n - 1);

    /* Written back: every other frame, ours only when kept, each followed
     * by what the callback writes. */
    adf_writer_t *wr = adf_writer_new();
    for (int keep = 0; keep < 2; keep++) {
        adf_writer_reset(wr, out, sizeof out);
        ck_assert_int_eq(adf_frames_write(buf, size, T_OURS, keep, ours, "modules", after, &w, wr, &err), TUSK_OK);
        adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
        adf_reader_reset(r, out, adf_writer_used(wr), 0);
        adf_frame_t f;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (type[i] != T_OURS || keep) {
                ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
                ck_assert_uint_eq(f.key.type, type[i]);
                ck_assert_uint_eq(f.key.event, i);
            }
            if (type[i] == T_OURS) {
                ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
                ck_assert_uint_eq(f.key.type, T_AFTER);
                ck_assert_uint_eq(f.key.event, 1000 + k++);
            }
        }
        ck_assert_int_eq(adf_reader_next(r, &f), ADF_END);
        adf_reader_destroy(&r);
    }
    /* the buffer must hold as many of ours as there are results */
    adf_writer_reset(wr, out, sizeof out);
    ck_assert_int_eq(adf_frames_write(buf, size, T_OURS, true, ours + 1, "modules", after, &w, wr, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "modules, not the");
    if (ours > 0) {
        adf_writer_reset(wr, out, sizeof out);
        ck_assert_int_eq(adf_frames_write(buf, size, T_OURS, true, ours - 1, "modules", after, &w, wr, &err),
                         TUSK_EINVAL);
        tu_assert_error(&err, TUSK_EINVAL, "the buffer holds more modules than the");
    }
    /* an output buffer too small: TUSK_ELIMIT with the writer's message */
    adf_writer_reset(wr, out, size / 2);
    ck_assert_int_eq(adf_frames_write(buf, size, T_OURS, true, ours, "modules", after, &w, wr, &err), TUSK_ELIMIT);
    adf_writer_destroy(&wr);

    /* The status of a codec's error: ELIMIT when the frame did not fit. */
    adf_error_t e = {ADF_EFULL, 12, "buffer full at 12"};
    ck_assert_int_eq(adf_frames_error(&e, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "buffer full at 12");
    e.code = ADF_ETOOBIG;
    ck_assert_int_eq(adf_frames_error(&e, &err), TUSK_ELIMIT);
    e.code = ADF_EPAYLOAD;
    ck_assert_int_eq(adf_frames_error(&e, &err), TUSK_EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adf_reader");
    TCase *tc = tcase_create("valid");
    tcase_add_test(tc, reads_every_frame_in_place);
    tcase_add_test(tc, base_offset_is_reported);
    tcase_add_test(tc, count_frames_stops_at_damage);
    tcase_add_test(tc, empty_and_null_buffers);
    tcase_add_test(tc, composite_frames);
    tcase_add_test(tc, frames_walks);
    suite_add_tcase(s, tc);
    tc = tcase_create("malformed");
    tcase_add_test(tc, zero_length_key);
    tcase_add_test(tc, oversize_length);
    tcase_add_test(tc, truncated_at_every_byte);
    suite_add_tcase(s, tc);
    tc = tcase_create("resync");
    tcase_add_test(tc, resync_skips_one_bad_frame);
    tcase_add_test(tc, resync_over_garbage);
    suite_add_tcase(s, tc);
    tc = tcase_create("mutations");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_mutations);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
