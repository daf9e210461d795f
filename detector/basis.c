/* basis.c - a PSA signal basis in memory, and its file (psa/BASIS.md).
 *
 * Points are grouped by the segment that collects their net charge (the
 * contact their holes reach: format version 2); each also records its
 * slab, the segment its position lies in (det_crystal_segment_of). Version
 * 1 files grouped the points by slab; they are refused with a message
 * that says so (the collecting segment cannot be recovered from them).
 *
 * Storage. Each segment keeps its points' positions, [point][3] in the
 * order the points were added, and their traces in one of two forms:
 *   ROWS   [point][channel][sample] with room for `cap` points: what
 *          det_basis_add appends to (amortised O(1));
 *   BLOCK  [channel][sample][point] for exactly n points: the file's and
 *          the PSA kernel's layout, what det_basis_block returns.
 * A segment is in one form at a time, never both (a 2 mm basis is hundreds
 * of MB): det_basis_add turns its segment into ROWS, det_basis_block turns
 * its segment into BLOCK (a cache-blocked transpose). A new basis starts in
 * ROWS form, a parsed one in BLOCK form. Everything else (save, trace,
 * position, the counts) reads either form and changes nothing.
 *
 * det_basis_block takes a const basis yet may change its segment's form:
 * a change invisible through the API (the same values and answers from
 * every function), so const is cast away there, and only there. Hence:
 *   - the pointer it returns stays valid until the next det_basis_add to
 *     that segment or det_basis_destroy;
 *   - the first det_basis_block call per segment after det_basis_add
 *     writes, so it must not run concurrently with other calls on that
 *     basis. A loaded basis is already in BLOCK form: any number of
 *     threads may read it at once;
 *   - it returns NULL for a segment without points or out of range, and
 *     when the memory for the transpose cannot be had.
 *
 * Channel names are not kept: they follow from the segment count
 * (channel_name below) and are written to, and checked in, the file.
 *
 * Every byte of the file is encoded and decoded explicitly, little-endian;
 * the parser checks every length against the bytes left before reading,
 * computes every size with overflow checks, and allocates only after the
 * header's sizes have been checked against the actual size, so a hostile
 * header cannot make it allocate more than about twice the input.
 * No global mutable state, no output, nothing that needs libm (isfinite
 * and NAN are macros). */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/textfile.h"
#include <tusk/basis.h>

#define BASIS_MAGIC "TUSKBAS1"
#define BASIS_MAGIC_SIZE 8
#define BASIS_VERSION 2u

/* The fixed header (psa/BASIS.md, "Header"): byte offsets of its fields,
 * up to the per-segment counts that follow it. */
enum {
    OFF_MAGIC = 0,                              /* u8 x 8 */
    OFF_VERSION = OFF_MAGIC + BASIS_MAGIC_SIZE, /* u32 */
    OFF_SEGMENTS = OFF_VERSION + 4,             /* u32 */
    OFF_CHANNELS = OFF_SEGMENTS + 4,            /* u32 */
    OFF_SAMPLES = OFF_CHANNELS + 4,             /* u32 */
    OFF_SAMPLE_NS = OFF_SAMPLES + 4,            /* f64 */
    OFF_GRID_MM = OFF_SAMPLE_NS + 8,            /* f64 */
    OFF_TYPE = OFF_GRID_MM + 8,                 /* u8 */
    OFF_TYPE_PAD = OFF_TYPE + 1,                /* u8 x 3, zero */
    OFF_SCALE = OFF_TYPE_PAD + 3,               /* f32 */
    OFF_POINTS = OFF_SCALE + 4,                 /* u64 */
    HEADER_SIZE = OFF_POINTS + 8                /* the per-segment counts start here */
};

/* An entry of the point table (psa/BASIS.md, "Point table"). */
enum {
    PT_X = 0,                     /* f32, mm */
    PT_Y = PT_X + 4,              /* f32 */
    PT_Z = PT_Y + 4,              /* f32 */
    PT_SEGMENT = PT_Z + 4,        /* u16: the collecting segment, the one whose table part holds it */
    PT_SLAB = PT_SEGMENT + 2,     /* u16: the segment the position lies in (version 1: reserved, 0) */
    POINT_SIZE = PT_SLAB + 2
};

/* The offsets psa/BASIS.md gives: a change here is a new format version. */
_Static_assert(OFF_VERSION == 8 && OFF_SEGMENTS == 12 && OFF_CHANNELS == 16 && OFF_SAMPLES == 20 &&
                   OFF_SAMPLE_NS == 24 && OFF_GRID_MM == 32 && OFF_TYPE == 40 && OFF_SCALE == 44 &&
                   OFF_POINTS == 48,
               "basis header field offsets");
_Static_assert(HEADER_SIZE == 56, "basis header size");
_Static_assert(PT_SEGMENT == 12 && POINT_SIZE == 16, "basis point table entry");

/* The parts after the header (psa/BASIS.md): the sizes of their fields. */
enum {
    COUNT_SIZE = 4,         /* u32: the points of one segment, S of them */
    TEXT_LENGTH_SIZE = 4,   /* u32 before each text: channel names, generator, configuration */
    N_TEXTS = 3,
    TABLE_ALIGN = 8,        /* zero padding up to a multiple of this from the start of the file */
    CHECKSUM_SIZE = 8,      /* u64 FNV-1a of every byte before it */
    INT16_SAMPLE_SIZE = 2,  /* a trace sample, by sample type */
    FLOAT32_SAMPLE_SIZE = 4
};

static size_t sample_size_of(enum det_sample_type type)
{
    return type == DET_SAMPLE_INT16 ? INT16_SAMPLE_SIZE : FLOAT32_SAMPLE_SIZE;
}

#define MAX_SEGMENTS 65535u             /* a point's segment field is a u16 */
#define MAX_SAMPLES 100000u
#define MAX_TEXT ((size_t)1 << 20)      /* names, generator, configuration */
#define MAX_SEGMENT_POINTS UINT32_MAX   /* per-segment counts are u32 */
#define INT16_FULL 32767
/* The smallest int16 scale: raw * scale / 32767 stays a normal float for
 * every raw != 0, so decoding loses nothing and re-encoding is exact. */
#define INT16_MIN_SCALE (32767.0 * (double)FLT_MIN)

enum seg_form { FORM_ROWS, FORM_BLOCK };

typedef struct seg {
    size_t n;           /* points */
    size_t cap;         /* pos holds at least cap points; so does data in ROWS form */
    float *pos;         /* [point][3] */
    uint16_t *slab;     /* [point]: the segment the position lies in */
    float *data;        /* ROWS: [point][channel][sample]; BLOCK: [channel][sample][point], n points */
    enum seg_form form;
} seg_t;

struct det_basis {
    det_basis_shape_t shape; /* generator and config point to the copies below */
    char *generator, *config;
    enum det_sample_type type;
    size_t points;    /* all segments */
    size_t per_point; /* channels * samples */
    seg_t *segs;
};

/* ---- helpers --------------------------------------------------------------- */

static bool mul_size(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > SIZE_MAX / b)
        return false;
    *out = a * b;
    return true;
}

static bool add_size(size_t a, size_t b, size_t *out)
{
    if (a > SIZE_MAX - b)
        return false;
    *out = a + b;
    return true;
}

static bool finite_f(double v)
{
    return isfinite(v);
}

static double abs_d(double v)
{
    return v < 0 ? -v : v;
}

/* int16 samples (psa/BASIS.md): raw = round(value / scale * 32767), half
 * away from zero, clamped to +-32767; value = raw * scale / 32767. */
static int16_t int16_encode(float value, double scale)
{
    double q = (double)value / scale * INT16_FULL;
    if (!(q < INT16_FULL))
        return INT16_FULL;
    if (!(q > -INT16_FULL))
        return -INT16_FULL;
    long r = q >= 0 ? (long)(q + 0.5) : -(long)(-q + 0.5);
    return (int16_t)r;
}

static float int16_decode(int16_t raw, double scale)
{
    return (float)((double)raw * scale / INT16_FULL);
}

/* The offset of the first byte of s[0..n) that is not part of valid UTF-8
 * (overlong forms, surrogates and code points over U+10FFFF refused) or is
 * a NUL; n when all is well. */
static size_t utf8_bad(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c == 0)
            return i;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp, min;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1Fu;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0Fu;
            min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07u;
            min = 0x10000;
        } else {
            return i;
        }
        if (n - i < len)
            return i;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += len;
    }
    return n;
}

/* Electrode e's name (psa/BASIS.md): with 36 segments AGATA's "A1".."F6"
 * (6 rings; segment = sector * 6 + ring, sector letter then ring number),
 * otherwise "S0".."S{n-1}"; the core, electrode `segments`, is "CC". */
static void channel_name(unsigned segments, unsigned e, char *buf, size_t cap)
{
    if (e == segments)
        snprintf(buf, cap, "CC");
    else if (segments == 36)
        snprintf(buf, cap, "%c%u", (int)('A' + e / 6), e % 6 + 1);
    else
        snprintf(buf, cap, "S%u", e);
}

/* All names, space-separated, in electrode order (malloc'd, not
 * NUL-terminated; *len bytes). NULL when out of memory. */
static char *channel_names(unsigned segments, size_t *len)
{
    size_t total = 0;
    char name[16];
    for (unsigned e = 0; e <= segments; e++) {
        channel_name(segments, e, name, sizeof name);
        total += strlen(name) + (e > 0);
    }
    char *text = malloc(total + 1);
    if (!text)
        return NULL;
    size_t at = 0;
    for (unsigned e = 0; e <= segments; e++) {
        if (e > 0)
            text[at++] = ' ';
        channel_name(segments, e, name, sizeof name);
        size_t k = strlen(name);
        memcpy(text + at, name, k);
        at += k;
    }
    text[at] = '\0';
    *len = total;
    return text;
}

/* dst[j * rows + i] = src[i * cols + j]: src rows x cols, dst cols x rows,
 * in 32 x 32 tiles so that both sides stay in cache. */
static void transpose(float *dst, const float *src, size_t rows, size_t cols)
{
    enum { TILE = 32 };
    for (size_t i0 = 0; i0 < rows; i0 += TILE) {
        size_t i1 = rows - i0 < TILE ? rows : i0 + TILE;
        for (size_t j0 = 0; j0 < cols; j0 += TILE) {
            size_t j1 = cols - j0 < TILE ? cols : j0 + TILE;
            for (size_t i = i0; i < i1; i++)
                for (size_t j = j0; j < j1; j++)
                    dst[j * rows + i] = src[i * cols + j];
        }
    }
}

/* Value m (= channel * samples + sample) of point p, in either form. */
static float seg_value(const seg_t *s, size_t per_point, size_t m, size_t p)
{
    return s->form == FORM_ROWS ? s->data[p * per_point + m] : s->data[m * s->n + p];
}

static int seg_to_block(seg_t *s, size_t per_point)
{
    if (s->form == FORM_BLOCK)
        return TUSK_OK;
    float *block = NULL;
    if (s->n > 0) {
        /* n * per_point floats fit: cap >= n points were allocated. */
        block = malloc(s->n * per_point * sizeof *block);
        if (!block)
            return TUSK_ENOMEM;
        transpose(block, s->data, s->n, per_point);
    }
    free(s->data);
    s->data = block;
    s->form = FORM_BLOCK;
    return TUSK_OK;
}

static int seg_to_rows(seg_t *s, size_t per_point)
{
    if (s->form == FORM_ROWS)
        return TUSK_OK;
    float *rows = NULL;
    if (s->cap > 0) {
        size_t bytes;
        if (!mul_size(s->cap, per_point, &bytes) || !mul_size(bytes, sizeof *rows, &bytes))
            return TUSK_ENOMEM;
        rows = malloc(bytes);
        if (!rows)
            return TUSK_ENOMEM;
        if (s->n > 0)
            transpose(rows, s->data, per_point, s->n);
    }
    free(s->data);
    s->data = rows;
    s->form = FORM_ROWS;
    return TUSK_OK;
}

/* Room for one more point (ROWS form). */
static int seg_grow(seg_t *s, size_t per_point)
{
    if (s->n < s->cap)
        return TUSK_OK;
    size_t cap = s->cap ? s->cap * 2 : 16, pos_bytes, data_bytes;
    if (cap > MAX_SEGMENT_POINTS)
        cap = MAX_SEGMENT_POINTS;
    if (!mul_size(cap, 3 * sizeof(float), &pos_bytes) || !mul_size(cap, per_point, &data_bytes) ||
        !mul_size(data_bytes, sizeof(float), &data_bytes))
        return TUSK_ENOMEM;
    float *pos = realloc(s->pos, pos_bytes);
    if (!pos)
        return TUSK_ENOMEM;
    s->pos = pos; /* now larger than cap points: harmless if the next step fails */
    uint16_t *slab = realloc(s->slab, cap * sizeof *slab);
    if (!slab)
        return TUSK_ENOMEM;
    s->slab = slab;
    float *data = realloc(s->data, data_bytes);
    if (!data)
        return TUSK_ENOMEM;
    s->data = data;
    s->cap = cap;
    return TUSK_OK;
}

/* A basis of a checked shape; the strings are copied (gen_len and cfg_len
 * bytes, not NUL-terminated). Segments start empty in `form`. */
static int basis_alloc(det_basis_t **out, const det_basis_shape_t *shape, const char *generator, size_t gen_len,
                       const char *config, size_t cfg_len, enum seg_form form, tusk_error_t *err)
{
    det_basis_t *b = calloc(1, sizeof *b);
    if (!b)
        return tusk_error_set(err, TUSK_ENOMEM, "basis: out of memory");
    b->generator = malloc(gen_len + 1);
    b->config = malloc(cfg_len + 1);
    b->segs = calloc(shape->segments, sizeof *b->segs);
    if (!b->generator || !b->config || !b->segs) {
        det_basis_destroy(&b);
        return tusk_error_set(err, TUSK_ENOMEM, "basis: out of memory");
    }
    if (gen_len)
        memcpy(b->generator, generator, gen_len);
    b->generator[gen_len] = '\0';
    if (cfg_len)
        memcpy(b->config, config, cfg_len);
    b->config[cfg_len] = '\0';
    b->shape = *shape;
    b->shape.generator = b->generator;
    b->shape.config = b->config;
    b->type = DET_SAMPLE_FLOAT32;
    b->per_point = (size_t)shape->channels * shape->samples; /* checked by the callers */
    for (unsigned s = 0; s < shape->segments; s++)
        b->segs[s].form = form;
    *out = b;
    return TUSK_OK;
}

/* ---- building -------------------------------------------------------------- */

int det_basis_new(det_basis_t **out, const det_basis_shape_t *shape, tusk_error_t *err)
{
    if (!out || !shape)
        return tusk_error_set(err, TUSK_EINVAL, "basis: no output or no shape given");
    *out = NULL;
    if (shape->segments < 1 || shape->segments > MAX_SEGMENTS)
        return tusk_error_set(err, TUSK_EINVAL, "basis: %u segments, expected 1 to %u", shape->segments,
                              MAX_SEGMENTS);
    if (shape->channels != shape->segments + 1)
        return tusk_error_set(err, TUSK_EINVAL, "basis: %u channels, expected segments + core = %u",
                              shape->channels, shape->segments + 1);
    if (shape->samples < 1 || shape->samples > MAX_SAMPLES)
        return tusk_error_set(err, TUSK_EINVAL, "basis: %u samples per trace, expected 1 to %u", shape->samples,
                              MAX_SAMPLES);
    if (!finite_f(shape->sample_ns) || !(shape->sample_ns > 0))
        return tusk_error_set(err, TUSK_EINVAL, "basis: sample period %g ns is not a positive finite number",
                              shape->sample_ns);
    if (!finite_f(shape->grid_mm) || !(shape->grid_mm > 0))
        return tusk_error_set(err, TUSK_EINVAL, "basis: grid spacing %g mm is not a positive finite number",
                              shape->grid_mm);
    size_t per_point;
    if (!mul_size(shape->channels, shape->samples, &per_point) || per_point > SIZE_MAX / sizeof(float))
        return tusk_error_set(err, TUSK_EINVAL, "basis: %u channels x %u samples is too large here",
                              shape->channels, shape->samples);
    const char *text[2] = {shape->generator ? shape->generator : "", shape->config ? shape->config : ""};
    static const char *const what[2] = {"generator", "configuration"};
    size_t len[2];
    for (int i = 0; i < 2; i++) {
        len[i] = strlen(text[i]);
        if (len[i] > MAX_TEXT)
            return tusk_error_set(err, TUSK_EINVAL, "basis: %s text of %zu bytes, at most %zu", what[i], len[i],
                                  MAX_TEXT);
        size_t bad = utf8_bad((const uint8_t *)text[i], len[i]);
        if (bad < len[i])
            return tusk_error_set(err, TUSK_EINVAL, "basis: %s text is not valid UTF-8 (byte %zu)", what[i], bad);
    }
    return basis_alloc(out, shape, text[0], len[0], text[1], len[1], FORM_ROWS, err);
}

void det_basis_destroy(det_basis_t **basis)
{
    if (!basis || !*basis)
        return;
    det_basis_t *b = *basis;
    if (b->segs) {
        for (unsigned s = 0; s < b->shape.segments; s++) {
            free(b->segs[s].pos);
            free(b->segs[s].slab);
            free(b->segs[s].data);
        }
    }
    free(b->segs);
    free(b->generator);
    free(b->config);
    free(b);
    *basis = NULL;
}

int det_basis_add(det_basis_t *basis, unsigned segment, const float pos[3], const float *traces, tusk_error_t *err)
{
    return det_basis_add_point(basis, segment, segment, pos, traces, err);
}

int det_basis_add_point(det_basis_t *basis, unsigned segment, unsigned slab, const float pos[3], const float *traces,
                        tusk_error_t *err)
{
    if (!basis || !pos || !traces)
        return tusk_error_set(err, TUSK_EINVAL, "basis: add: no basis, position or traces given");
    if (segment >= basis->shape.segments)
        return tusk_error_set(err, TUSK_EINVAL, "basis: add: segment %u out of range (the basis has %u)", segment,
                              basis->shape.segments);
    if (slab >= basis->shape.segments)
        return tusk_error_set(err, TUSK_EINVAL, "basis: add: slab %u out of range (the basis has %u segments)", slab,
                              basis->shape.segments);
    if (!finite_f(pos[0]) || !finite_f(pos[1]) || !finite_f(pos[2]))
        return tusk_error_set(err, TUSK_EINVAL, "basis: add: position (%g, %g, %g) in segment %u is not finite",
                              (double)pos[0], (double)pos[1], (double)pos[2], segment);
    size_t per_point = basis->per_point;
    for (size_t m = 0; m < per_point; m++)
        if (!finite_f(traces[m]))
            return tusk_error_set(err, TUSK_EINVAL,
                                  "basis: add: trace value of channel %zu sample %zu in segment %u is not finite",
                                  m / basis->shape.samples, m % basis->shape.samples, segment);
    seg_t *s = &basis->segs[segment];
    if (s->n >= MAX_SEGMENT_POINTS)
        return tusk_error_set(err, TUSK_EINVAL, "basis: add: segment %u already has %zu points, the most a file holds",
                              segment, s->n);
    if (seg_to_rows(s, per_point) != TUSK_OK || seg_grow(s, per_point) != TUSK_OK)
        return tusk_error_set(err, TUSK_ENOMEM, "basis: add: out of memory (segment %u, %zu points)", segment, s->n);
    memcpy(s->pos + 3 * s->n, pos, 3 * sizeof *pos);
    s->slab[s->n] = (uint16_t)slab;
    memcpy(s->data + s->n * per_point, traces, per_point * sizeof *traces);
    s->n++;
    basis->points++;
    return TUSK_OK;
}

/* ---- access ---------------------------------------------------------------- */

const det_basis_shape_t *det_basis_shape(const det_basis_t *basis)
{
    return basis ? &basis->shape : NULL;
}

enum det_sample_type det_basis_sample_type(const det_basis_t *basis)
{
    return basis ? basis->type : DET_SAMPLE_FLOAT32;
}

size_t det_basis_points(const det_basis_t *basis)
{
    return basis ? basis->points : 0;
}

size_t det_basis_segment_points(const det_basis_t *basis, unsigned segment)
{
    return basis && segment < basis->shape.segments ? basis->segs[segment].n : 0;
}

void det_basis_position(const det_basis_t *basis, unsigned segment, size_t i, float pos[3])
{
    if (!pos)
        return;
    if (!basis || segment >= basis->shape.segments || i >= basis->segs[segment].n) {
        pos[0] = pos[1] = pos[2] = NAN; /* no such point */
        return;
    }
    memcpy(pos, basis->segs[segment].pos + 3 * i, 3 * sizeof *pos);
}

unsigned det_basis_slab(const det_basis_t *basis, unsigned segment, size_t i)
{
    if (!basis || segment >= basis->shape.segments || i >= basis->segs[segment].n)
        return UINT_MAX;
    return basis->segs[segment].slab[i];
}

const float *det_basis_block(const det_basis_t *basis, unsigned segment)
{
    if (!basis || segment >= basis->shape.segments || basis->segs[segment].n == 0)
        return NULL;
    /* Const cast away on purpose: turning the segment into BLOCK form
     * changes no value anyone can observe (see the top of this file). */
    seg_t *s = (seg_t *)&basis->segs[segment];
    if (seg_to_block(s, basis->per_point) != TUSK_OK)
        return NULL;
    return s->data;
}

void det_basis_trace(const det_basis_t *basis, unsigned segment, size_t i, unsigned channel, float *out)
{
    if (!basis || !out)
        return;
    unsigned samples = basis->shape.samples;
    if (segment >= basis->shape.segments || i >= basis->segs[segment].n || channel >= basis->shape.channels) {
        for (unsigned k = 0; k < samples; k++)
            out[k] = NAN; /* no such trace */
        return;
    }
    const seg_t *s = &basis->segs[segment];
    for (unsigned k = 0; k < samples; k++)
        out[k] = seg_value(s, basis->per_point, (size_t)channel * samples + k, i);
}

/* ---- saving ---------------------------------------------------------------- */

typedef struct writer {
    FILE *f;
    uint64_t hash; /* FNV-1a of everything flushed */
    size_t used;
    int error;     /* errno of the first failure, or -1 without one; 0: none */
    uint8_t buf[1 << 14];
} writer_t;

static void wr_flush(writer_t *w)
{
    w->hash = tusk_fnv1a(w->hash, w->buf, w->used);
    if (!w->error && w->used && fwrite(w->buf, 1, w->used, w->f) != w->used)
        w->error = errno ? errno : -1;
    w->used = 0;
}

/* n bytes of buffer to fill (n <= sizeof buf). */
static uint8_t *wr_room(writer_t *w, size_t n)
{
    if (sizeof w->buf - w->used < n)
        wr_flush(w);
    uint8_t *p = w->buf + w->used;
    w->used += n;
    return p;
}

static void wr_bytes(writer_t *w, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0) {
        size_t k = sizeof w->buf - w->used;
        if (k == 0) {
            wr_flush(w);
            continue;
        }
        if (k > n)
            k = n;
        memcpy(w->buf + w->used, p, k);
        w->used += k;
        p += k;
        n -= k;
    }
}

static void wr_text(writer_t *w, const char *text, size_t len)
{
    tusk_put_u32(wr_room(w, TEXT_LENGTH_SIZE), (uint32_t)len);
    wr_bytes(w, text, len);
}

/* count samples, encoded as float32 or int16. */
static void wr_values(writer_t *w, const float *v, size_t count, enum det_sample_type type, double scale)
{
    size_t width = sample_size_of(type);
    while (count > 0) {
        size_t k = (sizeof w->buf - w->used) / width;
        if (k == 0) {
            wr_flush(w);
            continue;
        }
        if (k > count)
            k = count;
        uint8_t *p = w->buf + w->used;
        if (type == DET_SAMPLE_INT16) {
            for (size_t i = 0; i < k; i++) {
                int16_t raw = int16_encode(v[i], scale);
                uint16_t u;
                memcpy(&u, &raw, sizeof u);
                tusk_put_u16(p + INT16_SAMPLE_SIZE * i, u);
            }
        } else {
            for (size_t i = 0; i < k; i++)
                tusk_put_f32(p + FLOAT32_SAMPLE_SIZE * i, v[i]);
        }
        w->used += k * width;
        v += k;
        count -= k;
    }
}

static void write_basis(writer_t *w, const det_basis_t *b, enum det_sample_type type, double scale,
                        const char *names, size_t names_len)
{
    const det_basis_shape_t *sh = &b->shape;
    uint8_t *h = wr_room(w, HEADER_SIZE);
    memcpy(h + OFF_MAGIC, BASIS_MAGIC, BASIS_MAGIC_SIZE);
    tusk_put_u32(h + OFF_VERSION, BASIS_VERSION);
    tusk_put_u32(h + OFF_SEGMENTS, sh->segments);
    tusk_put_u32(h + OFF_CHANNELS, sh->channels);
    tusk_put_u32(h + OFF_SAMPLES, sh->samples);
    tusk_put_f64(h + OFF_SAMPLE_NS, sh->sample_ns);
    tusk_put_f64(h + OFF_GRID_MM, sh->grid_mm);
    h[OFF_TYPE] = (uint8_t)type;
    memset(h + OFF_TYPE_PAD, 0, OFF_SCALE - OFF_TYPE_PAD);
    tusk_put_f32(h + OFF_SCALE, type == DET_SAMPLE_INT16 ? (float)scale : 0.0f);
    tusk_put_u64(h + OFF_POINTS, (uint64_t)b->points);
    for (unsigned s = 0; s < sh->segments; s++)
        tusk_put_u32(wr_room(w, COUNT_SIZE), (uint32_t)b->segs[s].n);
    wr_text(w, names, names_len);
    wr_text(w, b->generator, strlen(b->generator));
    wr_text(w, b->config, strlen(b->config));
    size_t at = HEADER_SIZE + COUNT_SIZE * (size_t)sh->segments + N_TEXTS * TEXT_LENGTH_SIZE + names_len +
                strlen(b->generator) + strlen(b->config);
    size_t pad = (TABLE_ALIGN - at % TABLE_ALIGN) % TABLE_ALIGN;
    memset(wr_room(w, pad), 0, pad);
    for (unsigned s = 0; s < sh->segments; s++) {
        const seg_t *sg = &b->segs[s];
        for (size_t i = 0; i < sg->n; i++) {
            uint8_t *p = wr_room(w, POINT_SIZE);
            tusk_put_f32(p + PT_X, sg->pos[3 * i]);
            tusk_put_f32(p + PT_Y, sg->pos[3 * i + 1]);
            tusk_put_f32(p + PT_Z, sg->pos[3 * i + 2]);
            tusk_put_u16(p + PT_SEGMENT, (uint16_t)s);
            tusk_put_u16(p + PT_SLAB, sg->slab[i]);
        }
    }
    for (unsigned s = 0; s < sh->segments; s++) {
        const seg_t *sg = &b->segs[s];
        size_t count = sg->n * b->per_point;
        if (count == 0)
            continue;
        /* [channel][sample][point]: a BLOCK segment as it is, a ROWS one
         * transposed into a scratch block, or, without memory for that,
         * read with a stride. */
        const float *block = sg->form == FORM_BLOCK ? sg->data : NULL;
        float *scratch = NULL;
        if (!block && (scratch = malloc(count * sizeof *scratch)) != NULL) {
            transpose(scratch, sg->data, sg->n, b->per_point);
            block = scratch;
        }
        if (block) {
            wr_values(w, block, count, type, scale);
        } else {
            for (size_t m = 0; m < b->per_point; m++)
                for (size_t i = 0; i < sg->n; i++) {
                    float v = seg_value(sg, b->per_point, m, i);
                    wr_values(w, &v, 1, type, scale);
                }
        }
        free(scratch);
    }
    wr_flush(w);
    tusk_put_u64(wr_room(w, CHECKSUM_SIZE), w->hash);
    wr_flush(w);
}

int det_basis_save(const det_basis_t *basis, const char *path, enum det_sample_type type, tusk_error_t *err)
{
    if (!basis || !path)
        return tusk_error_set(err, TUSK_EINVAL, "basis: save: no basis or no path given");
    if (type != DET_SAMPLE_FLOAT32 && type != DET_SAMPLE_INT16)
        return tusk_error_set(err, TUSK_EINVAL, "%s: unknown sample type %d (1 float32, 2 int16)", path, (int)type);
    double scale = 0;
    if (type == DET_SAMPLE_INT16) {
        /* The largest |value| over the whole basis; both forms hold a
         * segment's n * per_point values at the start of data. */
        for (unsigned s = 0; s < basis->shape.segments; s++) {
            const seg_t *sg = &basis->segs[s];
            for (size_t j = 0; j < sg->n * basis->per_point; j++)
                if (abs_d(sg->data[j]) > scale)
                    scale = abs_d(sg->data[j]);
        }
        if (scale == 0)
            scale = 1; /* all zero (or empty): any scale decodes to 0; 1 by convention */
        else if (scale < INT16_MIN_SCALE)
            return tusk_error_set(err, TUSK_EINVAL,
                                  "%s: the largest |value| is %g, too small for int16 samples (at least %g): "
                                  "save as float32",
                                  path, scale, INT16_MIN_SCALE);
    }
    size_t names_len;
    char *names = channel_names(basis->shape.segments, &names_len);
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    writer_t *w = malloc(sizeof *w);
    if (!names || !tmp || !w) {
        free(names);
        free(tmp);
        free(w);
        return tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", path);
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    int rc = TUSK_OK;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        rc = tusk_error_set(err, TUSK_EIO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    } else {
        w->f = f;
        w->hash = TUSK_FNV1A_SEED;
        w->used = 0;
        w->error = 0;
        errno = 0;
        write_basis(w, basis, type, scale, names, names_len);
        int e = w->error;
        if (!e && fflush(f) != 0)
            e = errno ? errno : -1;
        if (!e && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
            e = errno; /* EINVAL / EROFS: a file that cannot be synced (a pipe, /dev/...) */
        if (fclose(f) != 0 && !e)
            e = errno ? errno : -1;
        if (!e && rename(tmp, path) != 0)
            e = errno ? errno : -1;
        if (e) {
            remove(tmp);
            rc = tusk_error_set(err, TUSK_EIO, "%s: cannot write %s: %s", path, tmp,
                                e > 0 ? strerror(e) : "write error");
        }
    }
    free(names);
    free(tmp);
    free(w);
    return rc;
}

/* ---- loading --------------------------------------------------------------- */

typedef struct parser {
    const uint8_t *d;
    size_t size, at;
    const char *origin;
    tusk_error_t *err;
} parser_t;

static int truncated(const parser_t *p, const char *field, size_t need)
{
    return tusk_error_set(p->err, TUSK_EINVAL, "%s: truncated at offset %zu (%s): %zu bytes needed, %zu left",
                          p->origin, p->at, field, need, p->size - p->at);
}

/* A u32 length and that many bytes at p->at; the length at most MAX_TEXT. */
static int take_text(parser_t *p, const char *field, size_t *off, size_t *len)
{
    if (p->size - p->at < TEXT_LENGTH_SIZE)
        return truncated(p, field, TEXT_LENGTH_SIZE);
    uint32_t n = tusk_get_u32(p->d + p->at);
    if (n > MAX_TEXT)
        return tusk_error_set(p->err, TUSK_EINVAL, "%s: offset %zu: %s length %" PRIu32 " exceeds %zu bytes",
                              p->origin, p->at, field, n, MAX_TEXT);
    p->at += TEXT_LENGTH_SIZE;
    if (p->size - p->at < n)
        return truncated(p, field, n);
    *off = p->at;
    *len = n;
    p->at += n;
    return TUSK_OK;
}

static int check_text(const parser_t *p, const char *field, size_t off, size_t len)
{
    size_t bad = utf8_bad(p->d + off, len);
    if (bad < len)
        return tusk_error_set(p->err, TUSK_EINVAL, "%s: offset %zu: %s text is not valid UTF-8 or holds a NUL",
                              p->origin, off + bad, field);
    return TUSK_OK;
}

/* The stored channel names against the generated ones. */
static int check_names(const parser_t *p, unsigned segments, size_t off, size_t len)
{
    size_t want_len;
    char *want = channel_names(segments, &want_len);
    if (!want)
        return tusk_error_set(p->err, TUSK_ENOMEM, "%s: out of memory", p->origin);
    int rc = TUSK_OK;
    if (len != want_len || memcmp(p->d + off, want, len) != 0) {
        /* Name the first channel that differs: compare token by token (a
         * position past the end of a text means it has no more names). */
        const char *have = (const char *)p->d + off;
        size_t h = 0, g = 0;
        for (unsigned e = 0;; e++) {
            bool h_end = h > len, g_end = g > want_len;
            if (h_end && g_end)
                break; /* not reached: the texts differ */
            size_t h1 = h, g1 = g;
            while (!h_end && h1 < len && have[h1] != ' ')
                h1++;
            while (!g_end && g1 < want_len && want[g1] != ' ')
                g1++;
            if (!h_end && !g_end && h1 - h == g1 - g && memcmp(have + h, want + g, h1 - h) == 0) {
                h = h1 + 1;
                g = g1 + 1;
                continue;
            }
            char shown[24], name[24];
            size_t k = 0;
            for (size_t i = h; !h_end && i < h1 && k + 1 < sizeof shown; i++)
                shown[k++] = have[i] >= 0x20 && have[i] < 0x7f ? have[i] : '?';
            shown[k] = '\0';
            k = 0;
            for (size_t i = g; !g_end && i < g1 && k + 1 < sizeof name; i++)
                name[k++] = want[i];
            name[k] = '\0';
            rc = tusk_error_set(p->err, TUSK_EINVAL,
                                "%s: offset %zu: channel names: channel %u is %s%s%s, expected %s%s%s "
                                "(%u channels in electrode order)",
                                p->origin, off + (h_end ? len : h), e, h_end ? "" : "'", h_end ? "missing" : shown,
                                h_end ? "" : "'", g_end ? "" : "'", g_end ? "none" : name, g_end ? "" : "'",
                                segments + 1);
            break;
        }
    }
    free(want);
    return rc;
}

static int check_expect(const det_basis_t *b, const det_basis_expect_t *x, const char *origin, tusk_error_t *err)
{
    const det_basis_shape_t *s = &b->shape;
    if (x->segments && x->segments != s->segments)
        return tusk_error_set(err, TUSK_EPARAM, "%s: basis has %u segments, the chain expects %u", origin,
                              s->segments, x->segments);
    if (x->channels && x->channels != s->channels)
        return tusk_error_set(err, TUSK_EPARAM, "%s: basis has %u channels, the chain expects %u", origin,
                              s->channels, x->channels);
    if (x->samples && x->samples != s->samples)
        return tusk_error_set(err, TUSK_EPARAM, "%s: basis has %u samples per trace, the chain expects %u", origin,
                              s->samples, x->samples);
    if (x->sample_ns != 0) {
        double a = s->sample_ns, e = x->sample_ns;
        double big = abs_d(a) > abs_d(e) ? abs_d(a) : abs_d(e);
        if (!(abs_d(a - e) <= 1e-9 * big))
            return tusk_error_set(err, TUSK_EPARAM, "%s: basis has a sample period of %g ns, the chain expects %g ns",
                                  origin, a, e);
    }
    return TUSK_OK;
}

int det_basis_parse(det_basis_t **out, const uint8_t *data, size_t size, const char *origin,
                    const det_basis_expect_t *expect, tusk_error_t *err)
{
    if (!origin)
        origin = "basis";
    if (!out || (!data && size))
        return tusk_error_set(err, TUSK_EINVAL, "%s: no output or no data given", origin);
    *out = NULL;
    parser_t p = {.d = data, .size = size, .at = 0, .origin = origin, .err = err};

    /* Magic and version first: another file, or another version of this
     * one, is told as such whatever follows. */
    if (size < BASIS_MAGIC_SIZE)
        return truncated(&p, "magic", BASIS_MAGIC_SIZE);
    if (memcmp(data + OFF_MAGIC, BASIS_MAGIC, BASIS_MAGIC_SIZE) != 0) {
        char shown[BASIS_MAGIC_SIZE + 1];
        for (int i = 0; i < BASIS_MAGIC_SIZE; i++)
            shown[i] = data[OFF_MAGIC + i] >= 0x20 && data[OFF_MAGIC + i] < 0x7f ? (char)data[OFF_MAGIC + i] : '?';
        shown[BASIS_MAGIC_SIZE] = '\0';
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s: not a tusk basis file: offset %d holds \"%s\", expected \"" BASIS_MAGIC "\"",
                              origin, OFF_MAGIC, shown);
    }
    p.at = OFF_VERSION;
    if (size < OFF_SEGMENTS)
        return truncated(&p, "format version", OFF_SEGMENTS - OFF_VERSION);
    uint32_t version = tusk_get_u32(data + OFF_VERSION);
    if (version == 1)
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s: offset %d: format version 1, this tusk reads %u: version 1 grouped the points by "
                              "the segment their position lies in, version 2 by the segment that collects their "
                              "charge (issue 22), which an old file does not hold: make the basis again "
                              "(tusk-basis gen)",
                              origin, OFF_VERSION, BASIS_VERSION);
    if (version != BASIS_VERSION)
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: format version %" PRIu32 ", this tusk reads %u",
                              origin, OFF_VERSION, version, BASIS_VERSION);
    p.at = OFF_SEGMENTS;
    if (size < HEADER_SIZE)
        return truncated(&p, "header", HEADER_SIZE - OFF_SEGMENTS);

    /* The fixed header. */
    det_basis_shape_t shape;
    memset(&shape, 0, sizeof shape);
    shape.segments = tusk_get_u32(data + OFF_SEGMENTS);
    shape.channels = tusk_get_u32(data + OFF_CHANNELS);
    shape.samples = tusk_get_u32(data + OFF_SAMPLES);
    shape.sample_ns = tusk_get_f64(data + OFF_SAMPLE_NS);
    shape.grid_mm = tusk_get_f64(data + OFF_GRID_MM);
    uint8_t type = data[OFF_TYPE];
    float scale = tusk_get_f32(data + OFF_SCALE);
    uint64_t total = tusk_get_u64(data + OFF_POINTS);
    if (shape.segments < 1 || shape.segments > MAX_SEGMENTS)
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: %u segments, expected 1 to %u", origin, OFF_SEGMENTS,
                              shape.segments, MAX_SEGMENTS);
    if (shape.channels != shape.segments + 1)
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: %u channels, expected segments + core = %u", origin,
                              OFF_CHANNELS, shape.channels, shape.segments + 1);
    if (shape.samples < 1 || shape.samples > MAX_SAMPLES)
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: %u samples per trace, expected 1 to %u", origin,
                              OFF_SAMPLES, shape.samples, MAX_SAMPLES);
    if (!finite_f(shape.sample_ns) || !(shape.sample_ns > 0))
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: sample period %g ns is not a positive finite number",
                              origin, OFF_SAMPLE_NS, shape.sample_ns);
    if (!finite_f(shape.grid_mm) || !(shape.grid_mm > 0))
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: grid spacing %g mm is not a positive finite number",
                              origin, OFF_GRID_MM, shape.grid_mm);
    if (type != DET_SAMPLE_FLOAT32 && type != DET_SAMPLE_INT16)
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: sample type %u, expected 1 (float32) or 2 (int16)",
                              origin, OFF_TYPE, type);
    for (size_t i = OFF_TYPE_PAD; i < OFF_SCALE; i++)
        if (data[i] != 0)
            return tusk_error_set(err, TUSK_EINVAL, "%s: offset %zu: padding byte is %u, must be 0", origin, i,
                                  data[i]);
    if (type == DET_SAMPLE_FLOAT32 && tusk_get_u32(data + OFF_SCALE) != 0)
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: int16 scale %g in a float32 basis, must be 0", origin,
                              OFF_SCALE, (double)scale);
    if (type == DET_SAMPLE_INT16 && (!finite_f(scale) || !((double)scale >= INT16_MIN_SCALE)))
        return tusk_error_set(err, TUSK_EINVAL, "%s: offset %d: int16 scale %g, expected a finite number >= %g",
                              origin, OFF_SCALE, (double)scale, INT16_MIN_SCALE);
    size_t per_point = (size_t)shape.channels * shape.samples; /* <= 65536 * 100000: fits 64 bits */
    if (per_point / shape.channels != shape.samples)
        return tusk_error_set(err, TUSK_EINVAL, "%s: %u channels x %u samples is too large here", origin,
                              shape.channels, shape.samples);

    /* Points per segment. */
    p.at = HEADER_SIZE;
    size_t counts_off = HEADER_SIZE;
    if ((size - p.at) / COUNT_SIZE < shape.segments)
        return truncated(&p, "points per segment", COUNT_SIZE * (size_t)shape.segments);
    uint64_t sum = 0;
    for (unsigned s = 0; s < shape.segments; s++)
        sum += tusk_get_u32(data + counts_off + COUNT_SIZE * (size_t)s);
    if (sum != total)
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s: offset %d: %" PRIu64 " points, but the points per segment (offset %d) sum to %" PRIu64,
                              origin, OFF_POINTS, total, HEADER_SIZE, sum);
    p.at += COUNT_SIZE * (size_t)shape.segments;

    /* Texts. */
    size_t names_off, names_len, gen_off, gen_len, cfg_off, cfg_len;
    int rc = take_text(&p, "channel names", &names_off, &names_len);
    if (!rc)
        rc = take_text(&p, "generator", &gen_off, &gen_len);
    if (!rc)
        rc = take_text(&p, "configuration", &cfg_off, &cfg_len);
    if (rc)
        return rc;
    size_t pad_off = p.at, pad = (TABLE_ALIGN - p.at % TABLE_ALIGN) % TABLE_ALIGN;

    /* The size the header describes, against the actual size. */
    size_t points = (size_t)total, sample_size = sample_size_of((enum det_sample_type)type), table_off = pad_off + pad,
           blocks_off, check_off, values;
    bool ok = (uint64_t)points == total && mul_size(points, POINT_SIZE, &blocks_off) &&
              add_size(blocks_off, table_off, &blocks_off) && mul_size(points, per_point, &values) &&
              mul_size(values, sample_size, &check_off) && add_size(check_off, blocks_off, &check_off) &&
              check_off <= SIZE_MAX - CHECKSUM_SIZE;
    if (!ok || check_off + CHECKSUM_SIZE > size)
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s: truncated: the header describes %s%zu bytes (%" PRIu64 " points of %u x %u "
                              "samples), the file has %zu",
                              origin, ok ? "" : "more than ", ok ? check_off + CHECKSUM_SIZE : SIZE_MAX, total, shape.channels,
                              shape.samples, size);
    if (check_off + CHECKSUM_SIZE < size)
        return tusk_error_set(err, TUSK_EINVAL, "%s: %zu trailing bytes after the checksum at offset %zu", origin,
                              size - check_off - CHECKSUM_SIZE, check_off);

    /* The checksum, before anything else is believed. */
    uint64_t stored = tusk_get_u64(data + check_off), computed = tusk_fnv1a(TUSK_FNV1A_SEED, data, check_off);
    if (stored != computed)
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s: offset %zu: checksum 0x%016" PRIx64 ", the bytes before it give 0x%016" PRIx64
                              ": the file is damaged",
                              origin, check_off, stored, computed);

    /* What the chain expects. */
    if ((rc = check_names(&p, shape.segments, names_off, names_len)) != TUSK_OK ||
        (rc = check_text(&p, "generator", gen_off, gen_len)) != TUSK_OK ||
        (rc = check_text(&p, "configuration", cfg_off, cfg_len)) != TUSK_OK)
        return rc;
    for (size_t i = pad_off; i < table_off; i++)
        if (data[i] != 0)
            return tusk_error_set(err, TUSK_EINVAL, "%s: offset %zu: alignment padding byte is %u, must be 0", origin,
                                  i, data[i]);

    det_basis_t *b = NULL;
    rc = basis_alloc(&b, &shape, (const char *)data + gen_off, gen_len, (const char *)data + cfg_off, cfg_len,
                     FORM_BLOCK, err);
    if (rc) {
        tusk_error_prefix(err, "%s", origin);
        return rc;
    }
    b->type = (enum det_sample_type)type;
    if (expect && (rc = check_expect(b, expect, origin, err)) != TUSK_OK) {
        det_basis_destroy(&b);
        return rc;
    }

    /* Point table and trace blocks, segment after segment. */
    size_t at = table_off, block_at = blocks_off;
    int max_raw = 0;
    for (unsigned s = 0; s < shape.segments && !rc; s++) {
        seg_t *sg = &b->segs[s];
        size_t n = tusk_get_u32(data + counts_off + COUNT_SIZE * (size_t)s);
        if (n == 0)
            continue;
        /* n * per_point values lie in the file: these sizes fit. */
        sg->pos = malloc(n * 3 * sizeof *sg->pos);
        sg->slab = malloc(n * sizeof *sg->slab);
        sg->data = malloc(n * per_point * sizeof *sg->data);
        if (!sg->pos || !sg->slab || !sg->data) {
            rc = tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory (segment %u, %zu points)", origin, s, n);
            break;
        }
        sg->n = sg->cap = n;
        b->points += n;
        for (size_t i = 0; i < n; i++, at += POINT_SIZE) {
            const uint8_t *q = data + at;
            float x = tusk_get_f32(q + PT_X), y = tusk_get_f32(q + PT_Y), z = tusk_get_f32(q + PT_Z);
            unsigned seg = tusk_get_u16(q + PT_SEGMENT), slab = tusk_get_u16(q + PT_SLAB);
            if (seg != s) {
                rc = tusk_error_set(err, TUSK_EINVAL, "%s: offset %zu: point %zu of segment %u says segment %u",
                                    origin, at + PT_SEGMENT, i, s, seg);
                break;
            }
            if (slab >= shape.segments) {
                rc = tusk_error_set(err, TUSK_EINVAL,
                                    "%s: offset %zu: point %zu of segment %u lies in slab %u, the basis has %u segments",
                                    origin, at + PT_SLAB, i, s, slab, shape.segments);
                break;
            }
            if (!finite_f(x) || !finite_f(y) || !finite_f(z)) {
                rc = tusk_error_set(err, TUSK_EINVAL,
                                    "%s: offset %zu: point %zu of segment %u: position (%g, %g, %g) is not finite",
                                    origin, at, i, s, (double)x, (double)y, (double)z);
                break;
            }
            sg->slab[i] = (uint16_t)slab;
            sg->pos[3 * i] = x;
            sg->pos[3 * i + 1] = y;
            sg->pos[3 * i + 2] = z;
        }
        if (rc)
            break;
        /* The block, as it lies in the file; a bad sample is reported
         * with its place after the loop. */
        size_t count = n * per_point, bad = count;
        const uint8_t *q = data + block_at;
        if (type == DET_SAMPLE_INT16) {
            for (size_t j = 0; j < count; j++) {
                int16_t raw = tusk_get_i16(q + INT16_SAMPLE_SIZE * j);
                int mag = raw < 0 ? -raw : raw;
                if (raw == INT16_MIN && bad == count)
                    bad = j;
                if (mag > max_raw)
                    max_raw = mag;
                sg->data[j] = int16_decode(raw, scale);
            }
        } else {
            for (size_t j = 0; j < count; j++) {
                float v = tusk_get_f32(q + FLOAT32_SAMPLE_SIZE * j);
                if (!finite_f(v) && bad == count)
                    bad = j;
                sg->data[j] = v;
            }
        }
        if (bad < count) {
            rc = tusk_error_set(err, TUSK_EINVAL, "%s: offset %zu: segment %u channel %zu sample %zu point %zu: %s",
                                origin, block_at + bad * sample_size, s, bad / n / shape.samples,
                                bad / n % shape.samples, bad % n,
                                type == DET_SAMPLE_INT16 ? "int16 sample -32768, expected -32767 to 32767"
                                                         : "value is not finite");
            break;
        }
        block_at += count * sample_size;
    }
    /* int16: the scale is the largest |value|, so it encodes as +-32767
     * (an all-zero basis has scale 1): one file per basis. */
    if (!rc && type == DET_SAMPLE_INT16 && (max_raw == 0 ? scale != 1.0f : max_raw != INT16_FULL))
        rc = tusk_error_set(err, TUSK_EINVAL,
                            "%s: offset %d: int16 scale %g is not the largest |value|: the largest |sample| is %d, "
                            "expected %d",
                            origin, OFF_SCALE, (double)scale, max_raw, max_raw == 0 ? 0 : INT16_FULL);
    if (rc) {
        det_basis_destroy(&b);
        return rc;
    }
    *out = b;
    return TUSK_OK;
}

int det_basis_load(det_basis_t **out, const char *path, const det_basis_expect_t *expect, tusk_error_t *err)
{
    if (!out || !path)
        return tusk_error_set(err, TUSK_EINVAL, "basis: load: no output or no path given");
    *out = NULL;
    /* Read to the end (a pipe, or a file that grows, is read whole too). */
    char *buf = NULL;
    size_t n = 0;
    int rc = tusk_file_read(path, SIZE_MAX / 2, &buf, &n, err);
    if (!rc)
        rc = det_basis_parse(out, (const uint8_t *)buf, n, path, expect, err);
    free(buf);
    return rc;
}
