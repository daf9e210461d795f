/* fuzz_reader.c - fuzz target: the buffer reader (adf_reader) on any bytes.
 *
 * The input is read twice in lockstep, once with ADF_ON_ERROR_RESYNC and
 * once with ADF_ON_ERROR_STOP, descending into composite frames (up to
 * ADF_WRITER_MAX_DEPTH levels, as tusk-adf does). Checked, with abort() on
 * violation:
 *   - every frame lies inside the bytes it was read from (the input, or its
 *     parent's payload): payload, payload_size, offset and key.length agree,
 *     and the key bytes before the payload decode to frame.key;
 *   - frames come in order and never overlap;
 *   - next() is called at most size + 2 times before ADF_END;
 *   - every error has its code, an offset inside the data, a non-empty
 *     message; with STOP it repeats on every later call;
 *   - up to STOP's first error (or its end) both policies return the same
 *     results; then the error is the same;
 *   - stats: frames and errors equal what was returned; with RESYNC the
 *     frame bytes plus the skipped bytes add up to the data's size, with
 *     STOP nothing is skipped;
 *   - open_composite refuses simple frames with ADF_EBADTYPE;
 *   - the codecs decode every frame of their type without crashing, report
 *     errors properly, and event:data:psa decodes exactly when its payload,
 *     read frame by frame, holds only well-formed data:psa frames.
 * The input is first copied to a buffer of exactly its size so that any read
 * past it is caught by AddressSanitizer or valgrind.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"

#define DEPTH_MAX ADF_WRITER_MAX_DEPTH
#define EVENT_PSA_MAX 8 /* crystals decoded per event:data:psa (more: ADF_ERANGE) */

typedef struct ctx {
    /* All allocated on first use. */
    adf_reader_t *sub[DEPTH_MAX];      /* RESYNC readers, one per depth */
    adf_reader_t *sub_stop[DEPTH_MAX]; /* STOP twins */
    adf_reader_t *check;               /* event:data:psa cross-check */
    adf_crystal_t *crystal;
    adf_psa_t *psa;                    /* EVENT_PSA_MAX of them */
    adf_key_t keys[EVENT_PSA_MAX];
    adf_tracked_t *tracked;
    adf_truth_t *truth;
} ctx_t;

static void check_message(const adf_error_t *e)
{
    FUZZ_CHECK(memchr(e->message, '\0', sizeof e->message) != NULL);
    FUZZ_CHECK(e->message[0] != '\0');
}

/* A decoder or open_composite error: code matches, message is there. */
static void check_codec_error(int rc, const adf_error_t *e)
{
    FUZZ_CHECK(rc < 0);
    FUZZ_CHECK(e->code == rc);
    check_message(e);
}

/* A simple frame's decoder refused its payload: never for its type (the
 * type matched), and the error is at the frame. */
static void check_decode_error(int rc, const adf_error_t *e, const adf_frame_t *f)
{
    check_codec_error(rc, e);
    FUZZ_CHECK(rc == ADF_EPAYLOAD || rc == ADF_ERANGE);
    FUZZ_CHECK(e->offset == f->offset);
}

/* The frame lies within data[0 .. size), whose first byte is at `base`. */
static void check_frame(const adf_frame_t *f, const uint8_t *data, size_t size, uint64_t base)
{
    FUZZ_CHECK(f->key.length >= ADF_KEY_SIZE);
    FUZZ_CHECK(f->payload_size == f->key.length - ADF_KEY_SIZE);
    FUZZ_CHECK(adf_type_class(f->key.type) == ADF_CLASS_SIMPLE ||
               adf_type_class(f->key.type) == ADF_CLASS_COMPOSITE);
    FUZZ_CHECK(f->key.timestamp <= ADF_TIMESTAMP_MAX);
    FUZZ_CHECK(f->payload != NULL && data != NULL);
    uintptr_t p = (uintptr_t)f->payload, d = (uintptr_t)data;
    FUZZ_CHECK(p >= d + ADF_KEY_SIZE);
    size_t pos = (size_t)(p - d); /* payload position in data */
    FUZZ_CHECK(pos <= size);
    FUZZ_CHECK(f->payload_size <= size - pos);
    FUZZ_CHECK(f->offset == base + (pos - ADF_KEY_SIZE));
    adf_key_t k;
    adf_error_t err;
    FUZZ_CHECK(adf_key_decode(data + pos - ADF_KEY_SIZE, ADF_KEY_SIZE, &k, &err) == ADF_OK);
    FUZZ_CHECK(k.length == f->key.length && k.type == f->key.type && k.event == f->key.event &&
               k.timestamp == f->key.timestamp);
}

/* A reader error at data[0 .. size) based at `base`. */
static void check_reader_error(const adf_reader_t *r, int rc, uint64_t base, size_t size)
{
    const adf_error_t *e = adf_reader_error(r);
    FUZZ_CHECK(rc == ADF_ETRUNC || rc == ADF_EBADKEY);
    FUZZ_CHECK(e->code == rc);
    FUZZ_CHECK(e->offset >= base && e->offset - base < size);
    check_message(e);
}

static bool same_frame(const adf_frame_t *a, const adf_frame_t *b)
{
    return a->key.length == b->key.length && a->key.type == b->key.type && a->key.event == b->key.event &&
           a->key.timestamp == b->key.timestamp && a->payload == b->payload &&
           a->payload_size == b->payload_size && a->offset == b->offset;
}

static bool same_error(const adf_error_t *a, const adf_error_t *b)
{
    return a->code == b->code && a->offset == b->offset && strcmp(a->message, b->message) == 0;
}

/* What adf_event_psa_decode must return for `f`, worked out with a plain
 * STOP reader and adf_psa_decode; *n_out gets the crystal count. */
static int expected_event_psa(ctx_t *c, const adf_frame_t *f, size_t *n_out)
{
    FUZZ_CHECK(adf_reader_open_composite(c->check, f) == ADF_OK);
    adf_frame_t sub;
    size_t n = 0;
    int rc;
    adf_error_t err;
    while ((rc = adf_reader_next(c->check, &sub)) == ADF_OK) {
        if (n == EVENT_PSA_MAX)
            return ADF_ERANGE;
        rc = adf_psa_decode(&sub, &c->psa[0], &err);
        if (rc != ADF_OK)
            return rc;
        n++;
    }
    *n_out = n;
    return rc == ADF_END ? ADF_OK : rc;
}

/* Run the codec of the frame's type, if it has one. */
static void decode_frame(ctx_t *c, const adf_frame_t *f)
{
    adf_error_t err;
    int rc;
    /* The structs are allocated on first use (adf_crystal_t is ~78 KB). */
    switch (f->key.type) {
    case ADF_TYPE_DATA_CRYSTAL:
        if (!c->crystal && !(c->crystal = malloc(sizeof *c->crystal)))
            return;
        rc = adf_crystal_decode(f, c->crystal, &err);
        if (rc == ADF_OK)
            FUZZ_CHECK(c->crystal->n_samples <= ADF_CRYSTAL_MAX_SAMPLES &&
                       f->payload_size == adf_crystal_payload_size(c->crystal->n_samples));
        else
            check_decode_error(rc, &err, f);
        break;
    case ADF_TYPE_DATA_PSA:
        if (!c->psa && !(c->psa = malloc(EVENT_PSA_MAX * sizeof *c->psa)))
            return;
        rc = adf_psa_decode(f, c->psa, &err);
        if (rc == ADF_OK)
            FUZZ_CHECK(c->psa->n_hits <= ADF_PSA_MAX_HITS &&
                       f->payload_size == adf_psa_payload_size(c->psa->n_hits, c->psa->has_fom));
        else
            check_decode_error(rc, &err, f);
        break;
    case ADF_TYPE_DATA_TRACKED:
        if (!c->tracked && !(c->tracked = malloc(sizeof *c->tracked)))
            return;
        rc = adf_tracked_decode(f, c->tracked, &err);
        if (rc == ADF_OK)
            FUZZ_CHECK(c->tracked->n_gammas <= ADF_TRACKED_MAX_GAMMAS &&
                       f->payload_size == adf_tracked_payload_size(c->tracked->n_gammas));
        else
            check_decode_error(rc, &err, f);
        break;
    case ADF_TYPE_DATA_TRUTH:
        if (!c->truth && !(c->truth = malloc(sizeof *c->truth)))
            return;
        rc = adf_truth_decode(f, c->truth, &err);
        if (rc == ADF_OK)
            FUZZ_CHECK(c->truth->n_gammas <= ADF_TRUTH_MAX_GAMMAS && c->truth->n_points <= ADF_TRUTH_MAX_POINTS &&
                       f->payload_size == adf_truth_payload_size(c->truth->n_gammas, c->truth->n_points));
        else
            check_decode_error(rc, &err, f);
        break;
    case ADF_TYPE_META_EOF: {
        adf_eof_t eof;
        rc = adf_eof_decode(f, &eof, &err);
        if (rc == ADF_OK)
            FUZZ_CHECK(f->payload_size == (eof.has_counts ? ADF_EOF_PAYLOAD_SIZE : 0u));
        else
            check_decode_error(rc, &err, f);
        break;
    }
    case ADF_TYPE_EVENT_DATA_PSA: {
        if (!c->psa && !(c->psa = malloc(EVENT_PSA_MAX * sizeof *c->psa)))
            return;
        if (!c->check && !(c->check = adf_reader_new(ADF_ON_ERROR_STOP)))
            return;
        size_t n = SIZE_MAX, n_expected = 0;
        int expected = expected_event_psa(c, f, &n_expected);
        rc = adf_event_psa_decode(f, c->keys, c->psa, EVENT_PSA_MAX, &n, &err);
        FUZZ_CHECK(rc == expected);
        if (rc == ADF_OK) {
            FUZZ_CHECK(n == n_expected);
            for (size_t i = 0; i < n; i++)
                FUZZ_CHECK(c->keys[i].type == ADF_TYPE_DATA_PSA && c->psa[i].n_hits <= ADF_PSA_MAX_HITS);
        } else {
            FUZZ_CHECK(n == 0);
            check_codec_error(rc, &err);
        }
        break;
    }
    default: break;
    }
}

static void walk(ctx_t *c, adf_reader_t *r, adf_reader_t *twin, const uint8_t *data, size_t size, uint64_t base,
                 int depth);

/* One frame: decode it if its type has a codec; descend into it if it is
 * composite, else check that it cannot be opened as one. */
static void visit(ctx_t *c, const adf_frame_t *f, int depth)
{
    decode_frame(c, f);
    if (depth + 1 >= DEPTH_MAX)
        return;
    if (!c->sub[depth])
        c->sub[depth] = adf_reader_new(ADF_ON_ERROR_RESYNC);
    if (!c->sub_stop[depth])
        c->sub_stop[depth] = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_t *sub = c->sub[depth], *sub_stop = c->sub_stop[depth];
    if (!sub || !sub_stop)
        return; /* out of memory */
    int rc = adf_reader_open_composite(sub, f);
    if (!adf_type_is_composite(f->key.type)) {
        check_codec_error(rc, adf_reader_error(sub));
        FUZZ_CHECK(rc == ADF_EBADTYPE);
        return;
    }
    FUZZ_CHECK(rc == ADF_OK);
    FUZZ_CHECK(adf_reader_open_composite(sub_stop, f) == ADF_OK);
    walk(c, sub, sub_stop, f->payload, f->payload_size, f->offset + ADF_KEY_SIZE, depth + 1);
}

/* Read data[0 .. size) (based at `base`) with the RESYNC reader `r` and,
 * while it has not stopped, its STOP twin; both are reset on it already. */
static void walk(ctx_t *c, adf_reader_t *r, adf_reader_t *twin, const uint8_t *data, size_t size, uint64_t base,
                 int depth)
{
    uint64_t calls = 0, frames = 0, errors = 0, frame_bytes = 0, end = base;
    uint64_t twin_frames = 0, twin_bytes = 0;
    int twin_rc = ADF_OK;
    adf_frame_t f, g;
    int rc;
    while (true) {
        FUZZ_CHECK(calls <= (uint64_t)size + 2);
        calls++;
        rc = adf_reader_next(r, &f);
        if (twin_rc == ADF_OK) {
            twin_rc = adf_reader_next(twin, &g);
            FUZZ_CHECK(twin_rc == rc);
            if (rc == ADF_OK) {
                FUZZ_CHECK(same_frame(&f, &g));
                twin_frames++;
                twin_bytes += g.key.length;
            } else if (rc < 0) {
                FUZZ_CHECK(same_error(adf_reader_error(r), adf_reader_error(twin)));
                /* STOP: every later call repeats the error. */
                adf_error_t first = *adf_reader_error(twin);
                FUZZ_CHECK(adf_reader_next(twin, &g) == rc);
                FUZZ_CHECK(same_error(&first, adf_reader_error(twin)));
            }
        }
        if (rc == ADF_END)
            break;
        if (rc < 0) {
            check_reader_error(r, rc, base, size);
            errors++;
            continue;
        }
        FUZZ_CHECK(rc == ADF_OK);
        check_frame(&f, data, size, base);
        FUZZ_CHECK(f.offset >= end);
        end = f.offset + f.key.length;
        frames++;
        frame_bytes += f.key.length;
        visit(c, &f, depth);
    }
    FUZZ_CHECK(adf_reader_next(r, &f) == ADF_END);

    adf_reader_stats_t st = adf_reader_stats(r);
    FUZZ_CHECK(st.frames == frames);
    FUZZ_CHECK(st.errors == errors);
    FUZZ_CHECK(frame_bytes + st.bytes_skipped == size);
    FUZZ_CHECK((errors == 0) == (st.bytes_skipped == 0));

    adf_reader_stats_t ts = adf_reader_stats(twin);
    FUZZ_CHECK(ts.frames == twin_frames);
    FUZZ_CHECK(ts.errors == (twin_rc < 0 ? 1u : 0u));
    FUZZ_CHECK(ts.bytes_skipped == 0);
    if (twin_rc == ADF_END)
        FUZZ_CHECK(twin_bytes == size && errors == 0);
}

int fuzz_reader_one(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size);
    ctx_t *c = calloc(1, sizeof *c);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_RESYNC);
    adf_reader_t *twin = adf_reader_new(ADF_ON_ERROR_STOP);
    if (c && r && twin && (copy || size == 0)) { /* else out of memory */
        if (size)
            memcpy(copy, data, size);
        /* A base offset, so offsets are not just positions. */
        uint64_t base = size ? (uint64_t)data[0] * 1000u : 0;
        adf_reader_reset(r, copy, size, base);
        adf_reader_reset(twin, copy, size, base);
        walk(c, r, twin, copy, size, base, 0);
    }
    if (c) {
        for (int i = 0; i < DEPTH_MAX; i++) {
            adf_reader_destroy(&c->sub[i]);
            adf_reader_destroy(&c->sub_stop[i]);
        }
        adf_reader_destroy(&c->check);
        free(c->crystal);
        free(c->psa);
        free(c->tracked);
        free(c->truth);
        free(c);
    }
    adf_reader_destroy(&r);
    adf_reader_destroy(&twin);
    free(copy);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader_one(data, size);
}
#endif
