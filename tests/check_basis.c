/* check_basis.c - the PSA signal basis and its file (psa/BASIS.md,
 * version 2): round trips of random bases (float32 exact, int16 within
 * the documented tolerance; every point's slab - the segment its position
 * lies in - kept), the [channel][sample][point] block layout, the file's
 * bytes against the documented layout and size formula, and the loader
 * refusing every truncation, every single-byte change, other files and
 * versions (version 1, grouped by slab, with its own message), trailing
 * bytes, each malformed field (with a valid checksum) and a mismatch with
 * what the chain expects, with messages naming the file. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "testutil.h"
#include "tusk/basis.h"

#define GENERATOR "tusk-basis test"
static const char config_text[] = "radius = 40\nnote = Gr\xc3\xb6\xc3\x9f" "e, \xe2\x84\xab\n"; /* UTF-8 */

/* int16 tolerance (psa/BASIS.md): half a step plus one float rounding. */
static double int16_tolerance(double scale)
{
    return scale * (1.0 / 65534.0 + 1.0 / 16777216.0) * (1 + 1e-9);
}

static det_basis_shape_t shape_of(unsigned segments, unsigned samples)
{
    det_basis_shape_t s;
    memset(&s, 0, sizeof s);
    s.segments = segments;
    s.channels = segments + 1;
    s.samples = samples;
    s.sample_ns = 10.0;
    s.grid_mm = 2.0;
    s.config = config_text;
    s.generator = GENERATOR;
    return s;
}

/* ---- a basis and what it should hold -------------------------------------- */

typedef struct model {
    det_basis_t *basis;
    unsigned segments, channels, samples;
    size_t per_point;
    size_t *n;   /* per segment */
    float **pos; /* per segment, [point][3], in add order */
    float **tr;  /* per segment, [point][channel][sample] */
    unsigned **slab; /* per segment, [point] */
    double scale; /* the largest |value| */
} model_t;

static void model_check_segment(const model_t *m, const det_basis_t *b, unsigned s, double tol);

/* Random point counts (some segments empty), added in a random segment
 * order with random values of a random magnitude; with `peek`, blocks are
 * looked at now and then while adding (which changes the storage form). */
static void model_build(model_t *m, unsigned segments, unsigned samples, unsigned max_points, bool peek)
{
    memset(m, 0, sizeof *m);
    m->segments = segments;
    m->channels = segments + 1;
    m->samples = samples;
    m->per_point = (size_t)m->channels * samples;
    m->n = calloc(segments, sizeof *m->n);
    m->pos = calloc(segments, sizeof *m->pos);
    m->tr = calloc(segments, sizeof *m->tr);
    m->slab = calloc(segments, sizeof *m->slab);
    ck_assert(m->n && m->pos && m->tr && m->slab);
    size_t total = 0;
    size_t *want = calloc(segments, sizeof *want);
    ck_assert_ptr_nonnull(want);
    for (unsigned s = 0; s < segments; s++) {
        want[s] = tu_below(4) == 0 ? 0 : tu_below(max_points + 1);
        total += want[s];
        m->pos[s] = malloc((want[s] + 1) * 3 * sizeof(float));
        m->tr[s] = malloc((want[s] + 1) * m->per_point * sizeof(float));
        m->slab[s] = malloc((want[s] + 1) * sizeof(unsigned));
        ck_assert(m->pos[s] && m->tr[s] && m->slab[s]);
    }
    unsigned *order = malloc((total + 1) * sizeof *order);
    ck_assert_ptr_nonnull(order);
    size_t k = 0;
    for (unsigned s = 0; s < segments; s++)
        for (size_t i = 0; i < want[s]; i++)
            order[k++] = s;
    for (size_t i = total; i > 1; i--) {
        size_t j = tu_below((uint32_t)i);
        unsigned t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    det_basis_shape_t shape = shape_of(segments, samples);
    shape.sample_ns = 1 + 20 * tu_uniform();
    shape.grid_mm = 0.5 + 5 * tu_uniform();
    tusk_error_t err;
    ck_assert_msg(det_basis_new(&m->basis, &shape, &err) == TUSK_OK, "%s", err.message);
    double magnitude = pow(10.0, -3 + 6 * tu_uniform());
    for (size_t a = 0; a < total; a++) {
        unsigned s = order[a];
        size_t i = m->n[s];
        float *pos = m->pos[s] + 3 * i, *tr = m->tr[s] + i * m->per_point;
        for (int c = 0; c < 3; c++)
            pos[c] = (float)(90 * tu_uniform() - 45);
        for (size_t v = 0; v < m->per_point; v++) {
            unsigned pick = tu_below(16);
            tr[v] = pick == 0 ? 0.0f : pick == 1 ? -0.0f : (float)(magnitude * (2.4 * tu_uniform() - 1.2));
            if (fabs(tr[v]) > m->scale)
                m->scale = fabs(tr[v]);
        }
        /* Most points lie in the segment that collects them; some not. */
        if (tu_below(4) == 0) {
            m->slab[s][i] = tu_below(segments);
            tu_check(det_basis_add_point(m->basis, s, m->slab[s][i], pos, tr, &err) == TUSK_OK);
        } else {
            m->slab[s][i] = s;
            tu_check(det_basis_add(m->basis, s, pos, tr, &err) == TUSK_OK);
        }
        m->n[s]++;
        if (peek && tu_below(8) == 0) {
            unsigned t = tu_below(segments);
            model_check_segment(m, m->basis, t, 0);
        }
    }
    free(order);
    free(want);
}

static void model_free(model_t *m)
{
    det_basis_destroy(&m->basis);
    ck_assert_ptr_null(m->basis);
    for (unsigned s = 0; s < m->segments; s++) {
        free(m->pos[s]);
        free(m->tr[s]);
        free(m->slab[s]);
    }
    free(m->n);
    free(m->pos);
    free(m->tr);
    free(m->slab);
}

static bool same_value(float a, float b, double tol)
{
    if (tol == 0)
        return memcmp(&a, &b, sizeof a) == 0; /* bit for bit, -0 included */
    return fabs((double)a - (double)b) <= tol;
}

/* Segment s of b against the model: positions bit for bit, traces
 * within tol (0: bit for bit), through det_basis_trace and the block. */
static void model_check_segment(const model_t *m, const det_basis_t *b, unsigned s, double tol)
{
    size_t n = m->n[s];
    tu_check(det_basis_segment_points(b, s) == n);
    float *trace = malloc(m->samples * sizeof *trace);
    ck_assert_ptr_nonnull(trace);
    for (size_t i = 0; i < n; i++) {
        float pos[3];
        det_basis_position(b, s, i, pos);
        tu_check(memcmp(pos, m->pos[s] + 3 * i, sizeof pos) == 0);
        tu_check(det_basis_slab(b, s, i) == m->slab[s][i]);
        for (unsigned c = 0; c < m->channels; c++) {
            det_basis_trace(b, s, i, c, trace);
            for (unsigned k = 0; k < m->samples; k++)
                tu_check(same_value(trace[k], m->tr[s][i * m->per_point + (size_t)c * m->samples + k], tol));
        }
    }
    const float *block = det_basis_block(b, s);
    if (n == 0) {
        tu_check(block == NULL);
    } else {
        tu_check(block != NULL);
        /* [channel][sample][point], point fastest. */
        for (size_t i = 0; i < n; i++)
            for (size_t v = 0; v < m->per_point; v++)
                tu_check(same_value(block[v * n + i], m->tr[s][i * m->per_point + v], tol));
    }
    free(trace);
}

static void model_check(const model_t *m, const det_basis_t *b, double tol)
{
    const det_basis_shape_t *sh = det_basis_shape(b);
    ck_assert_ptr_nonnull(sh);
    ck_assert_uint_eq(sh->segments, m->segments);
    ck_assert_uint_eq(sh->channels, m->channels);
    ck_assert_uint_eq(sh->samples, m->samples);
    ck_assert_str_eq(sh->generator, GENERATOR);
    ck_assert_str_eq(sh->config, config_text);
    size_t total = 0;
    for (unsigned s = 0; s < m->segments; s++) {
        model_check_segment(m, b, s, tol);
        total += m->n[s];
    }
    ck_assert_uint_eq(det_basis_points(b), total);
}

/* ---- files ----------------------------------------------------------------- */

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    uint8_t *d = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return d;
}

static void write_all(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Recompute the trailing checksum after an edit (to reach the field
 * checks behind it). */
static void reseal(uint8_t *d, size_t n)
{
    tusk_put_u64(d + n - 8, tusk_fnv1a(TUSK_FNV1A_SEED, d, n - 8));
}

/* The documented layout (psa/BASIS.md), decoded here independently. */
typedef struct layout {
    unsigned segments, channels, samples, type;
    uint64_t points;
    size_t names, names_len, gen, gen_len, cfg, cfg_len; /* text offsets (after their u32 length) */
    size_t pad, table, blocks, checksum, size;
} layout_t;

static layout_t layout_of(const uint8_t *d, size_t n)
{
    layout_t l;
    memset(&l, 0, sizeof l);
    ck_assert_uint_ge(n, 64);
    ck_assert_mem_eq(d, "TUSKBAS1", 8);
    ck_assert_uint_eq(tusk_get_u32(d + 8), 2);
    l.segments = tusk_get_u32(d + 12);
    l.channels = tusk_get_u32(d + 16);
    l.samples = tusk_get_u32(d + 20);
    l.type = d[40];
    l.points = tusk_get_u64(d + 48);
    size_t at = 56 + 4 * (size_t)l.segments;
    l.names_len = tusk_get_u32(d + at);
    l.names = at + 4;
    at = l.names + l.names_len;
    l.gen_len = tusk_get_u32(d + at);
    l.gen = at + 4;
    at = l.gen + l.gen_len;
    l.cfg_len = tusk_get_u32(d + at);
    l.cfg = at + 4;
    l.pad = l.cfg + l.cfg_len;
    l.table = (l.pad + 7) / 8 * 8;
    l.blocks = l.table + 16 * (size_t)l.points;
    l.checksum = l.blocks + (size_t)l.channels * l.samples * (size_t)l.points * (l.type == 2 ? 2 : 4);
    l.size = l.checksum + 8;
    return l;
}

/* A small basis saved: 2 segments, 3 samples, 2 + 1 points. */
static uint8_t *small_file(const char *path, enum det_sample_type type, size_t *size)
{
    det_basis_shape_t shape = shape_of(2, 3);
    det_basis_t *b = NULL;
    tusk_error_t err;
    ck_assert_int_eq(det_basis_new(&b, &shape, &err), TUSK_OK);
    float tr[9], pos[3] = {1.5f, -2.25f, 30.0f};
    for (int p = 0; p < 3; p++) {
        for (int v = 0; v < 9; v++)
            tr[v] = (float)(v - 4) * 0.125f * (float)(p + 1);
        pos[0] += 1;
        ck_assert_int_eq(det_basis_add(b, p == 1 ? 1 : 0, pos, tr, &err), TUSK_OK);
    }
    ck_assert_msg(det_basis_save(b, path, type, &err) == TUSK_OK, "%s", err.message);
    det_basis_destroy(&b);
    return read_all(path, size);
}

/* Parsing d[0..n) fails with `code`, a message starting with the origin
 * and holding `needle`, and no basis. */
#define parse_fails(d, n, origin, code, needle) parse_fails_at(d, n, origin, code, needle, __LINE__)
static void parse_fails_at(const uint8_t *d, size_t n, const char *origin, int code, const char *needle, int line)
{
    det_basis_t *b = (det_basis_t *)&b; /* must be set to NULL */
    tusk_error_t err;
    err.message[0] = '\0';
    int rc = det_basis_parse(&b, d, n, origin, NULL, &err);
    if (b)
        det_basis_destroy(&b);
    ck_assert_msg(rc == code && err.code == code && err.message[0] && strstr(err.message, needle) &&
                      strncmp(err.message, origin, strlen(origin)) == 0,
                  "line %d: rc %d (expected %d), message '%s', expected to start with '%s' and hold '%s'", line, rc,
                  code, err.message, origin, needle);
    ck_assert_msg(b == NULL, "line %d: a basis came back", line);
}

/* ---- tests ----------------------------------------------------------------- */

START_TEST(roundtrip_float32)
{
    static const unsigned seg_choices[] = {1, 2, 3, 7, 36};
    char *path = tu_temp_path();
    for (int iter = 0; iter < 24; iter++) {
        model_t m;
        model_build(&m, seg_choices[tu_below(5)], 1 + tu_below(16), tu_below(13), true);
        model_check(&m, m.basis, 0);
        tusk_error_t err;
        ck_assert_msg(det_basis_save(m.basis, path, DET_SAMPLE_FLOAT32, &err) == TUSK_OK, "%s", err.message);
        det_basis_t *b = NULL;
        ck_assert_msg(det_basis_load(&b, path, NULL, &err) == TUSK_OK, "%s", err.message);
        ck_assert_int_eq(det_basis_sample_type(b), DET_SAMPLE_FLOAT32);
        const det_basis_shape_t *a = det_basis_shape(m.basis), *c = det_basis_shape(b);
        ck_assert(a->sample_ns == c->sample_ns && a->grid_mm == c->grid_mm);
        model_check(&m, b, 0);
        /* One file per basis: saving what was loaded gives the same bytes. */
        size_t n1, n2;
        uint8_t *d1 = read_all(path, &n1);
        ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_FLOAT32, &err), TUSK_OK);
        uint8_t *d2 = read_all(path, &n2);
        ck_assert_uint_eq(n1, n2);
        ck_assert(memcmp(d1, d2, n1) == 0);
        /* Points added to a loaded basis (BLOCK form back to ROWS). */
        unsigned s = tu_below(m.segments);
        float pos[3] = {1, 2, 3};
        float *tr = calloc(m.per_point, sizeof *tr);
        ck_assert_ptr_nonnull(tr);
        tr[m.per_point - 1] = 0.5f;
        m.pos[s] = realloc(m.pos[s], (m.n[s] + 1) * 3 * sizeof(float));
        m.tr[s] = realloc(m.tr[s], (m.n[s] + 1) * m.per_point * sizeof(float));
        m.slab[s] = realloc(m.slab[s], (m.n[s] + 1) * sizeof(unsigned));
        memcpy(m.pos[s] + 3 * m.n[s], pos, sizeof pos);
        memcpy(m.tr[s] + m.n[s] * m.per_point, tr, m.per_point * sizeof *tr);
        m.slab[s][m.n[s]] = s;
        m.n[s]++;
        ck_assert_int_eq(det_basis_add(b, s, pos, tr, &err), TUSK_OK);
        model_check(&m, b, 0);
        free(tr);
        free(d1);
        free(d2);
        det_basis_destroy(&b);
        model_free(&m);
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    ck_assert_int_ne(access(tmp, F_OK), 0); /* renamed, not left behind */
    free(tmp);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(roundtrip_int16)
{
    static const unsigned seg_choices[] = {1, 2, 5, 36};
    char *path = tu_temp_path(), *path2 = tu_temp_path();
    for (int iter = 0; iter < 24; iter++) {
        model_t m;
        model_build(&m, seg_choices[tu_below(4)], 1 + tu_below(16), tu_below(13), iter % 2 == 0);
        tusk_error_t err;
        ck_assert_msg(det_basis_save(m.basis, path, DET_SAMPLE_INT16, &err) == TUSK_OK, "%s", err.message);
        det_basis_t *b = NULL;
        ck_assert_msg(det_basis_load(&b, path, NULL, &err) == TUSK_OK, "%s", err.message);
        ck_assert_int_eq(det_basis_sample_type(b), DET_SAMPLE_INT16);
        double scale = m.scale > 0 ? m.scale : 1;
        model_check(&m, b, int16_tolerance(scale));
        /* The scale in the file is the largest |value|, bit for bit. */
        size_t n1, n2;
        uint8_t *d1 = read_all(path, &n1);
        float stored = tusk_get_f32(d1 + 44);
        ck_assert(stored == (float)scale);
        /* Re-encoding decoded values is exact: the same bytes again. */
        ck_assert_int_eq(det_basis_save(b, path2, DET_SAMPLE_INT16, &err), TUSK_OK);
        uint8_t *d2 = read_all(path2, &n2);
        ck_assert_uint_eq(n1, n2);
        ck_assert(memcmp(d1, d2, n1) == 0);
        /* float32 of the decoded values keeps them exactly. */
        ck_assert_int_eq(det_basis_save(b, path2, DET_SAMPLE_FLOAT32, &err), TUSK_OK);
        det_basis_t *c = NULL;
        ck_assert_int_eq(det_basis_load(&c, path2, NULL, &err), TUSK_OK);
        for (unsigned s = 0; s < m.segments; s++) {
            size_t n = det_basis_segment_points(b, s);
            ck_assert_uint_eq(det_basis_segment_points(c, s), n);
            if (n)
                ck_assert(memcmp(det_basis_block(b, s), det_basis_block(c, s), n * m.per_point * sizeof(float)) == 0);
        }
        free(d1);
        free(d2);
        det_basis_destroy(&c);
        det_basis_destroy(&b);
        model_free(&m);
    }
    unlink(path);
    unlink(path2);
    free(path);
    free(path2);
}
END_TEST

START_TEST(int16_special_cases)
{
    char *path = tu_temp_path();
    tusk_error_t err;
    det_basis_shape_t shape = shape_of(1, 4);
    det_basis_t *b = NULL, *c = NULL;
    /* Empty and all-zero bases: scale 1. */
    ck_assert_int_eq(det_basis_new(&b, &shape, &err), TUSK_OK);
    ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_INT16, &err), TUSK_OK);
    ck_assert_int_eq(det_basis_load(&c, path, NULL, &err), TUSK_OK);
    ck_assert_uint_eq(det_basis_points(c), 0);
    ck_assert_ptr_null(det_basis_block(c, 0));
    det_basis_destroy(&c);
    float pos[3] = {0, 0, 0}, tr[8] = {0};
    ck_assert_int_eq(det_basis_add(b, 0, pos, tr, &err), TUSK_OK);
    ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_INT16, &err), TUSK_OK);
    size_t n;
    uint8_t *d = read_all(path, &n);
    ck_assert(tusk_get_f32(d + 44) == 1.0f);
    free(d);
    ck_assert_int_eq(det_basis_load(&c, path, NULL, &err), TUSK_OK);
    ck_assert(det_basis_block(c, 0)[5] == 0.0f);
    det_basis_destroy(&c);
    /* The encoding: raw = round(value / scale * 32767). */
    float vals[8] = {1.0f, -1.0f, 0.5f, -0.25f, 1.0f / 32767 * 0.49f, 1.0f / 32767 * 0.51f, -0.75f, 0.0f};
    ck_assert_int_eq(det_basis_add(b, 0, pos, vals, &err), TUSK_OK);
    ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_INT16, &err), TUSK_OK);
    d = read_all(path, &n);
    layout_t l = layout_of(d, n);
    ck_assert_uint_eq(l.size, n);
    /* Block [channel][sample][point], 2 points: value v of point 1 at
     * (v * 2 + 1) * 2. */
    static const int16_t raw[8] = {32767, -32767, 16384, -8192, 0, 1, -24575, 0};
    for (int v = 0; v < 8; v++)
        ck_assert_int_eq(tusk_get_i16(d + l.blocks + (size_t)(v * 2 + 1) * 2), raw[v]);
    free(d);
    /* Values too small for int16 are refused; float32 takes them. */
    det_basis_destroy(&b);
    ck_assert_int_eq(det_basis_new(&b, &shape, &err), TUSK_OK);
    tr[0] = 1e-37f;
    ck_assert_int_eq(det_basis_add(b, 0, pos, tr, &err), TUSK_OK);
    ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_INT16, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "too small for int16");
    ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_FLOAT32, &err), TUSK_OK);
    det_basis_destroy(&b);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(block_layout)
{
    /* Value = segment * 100000 + point * 1000 + channel * 20 + sample:
     * exact in float, and tells where it came from. */
    const unsigned S = 36, C = 37, N = 20;
    det_basis_shape_t shape = shape_of(S, N);
    det_basis_t *b = NULL;
    tusk_error_t err;
    ck_assert_int_eq(det_basis_new(&b, &shape, &err), TUSK_OK);
    float tr[37 * 20];
    unsigned count[36] = {0};
    for (int a = 0; a < 200; a++) {
        unsigned s = tu_below(S);
        if (s % 7 == 3)
            continue; /* some segments stay empty */
        for (unsigned c = 0; c < C; c++)
            for (unsigned k = 0; k < N; k++)
                tr[c * N + k] = (float)(s * 100000 + count[s] * 1000 + c * 20 + k);
        float pos[3] = {(float)s, (float)count[s], 0};
        ck_assert_int_eq(det_basis_add(b, s, pos, tr, &err), TUSK_OK);
        count[s]++;
    }
    char *path = tu_temp_path();
    ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_FLOAT32, &err), TUSK_OK);
    det_basis_t *loaded = NULL;
    ck_assert_int_eq(det_basis_load(&loaded, path, NULL, &err), TUSK_OK);
    const det_basis_t *both[2] = {b, loaded};
    for (int w = 0; w < 2; w++) {
        for (unsigned s = 0; s < S; s++) {
            size_t n = det_basis_segment_points(both[w], s);
            ck_assert_uint_eq(n, count[s]);
            const float *block = det_basis_block(both[w], s);
            ck_assert(n == 0 ? block == NULL : block != NULL);
            for (unsigned c = 0; c < C; c++)
                for (unsigned k = 0; k < N; k++)
                    for (size_t p = 0; p < n; p++)
                        tu_check(block[((size_t)c * N + k) * n + p] == (float)(s * 100000 + p * 1000 + c * 20 + k));
        }
    }
    /* The file's blocks are the same bytes, segment after segment. */
    size_t size;
    uint8_t *d = read_all(path, &size);
    layout_t l = layout_of(d, size);
    size_t at = l.blocks;
    for (unsigned s = 0; s < S; s++) {
        for (unsigned c = 0; c < C; c++)
            for (unsigned k = 0; k < N; k++)
                for (size_t p = 0; p < count[s]; p++, at += 4)
                    tu_check(tusk_get_f32(d + at) == (float)(s * 100000 + p * 1000 + c * 20 + k));
    }
    ck_assert_uint_eq(at, l.checksum);
    free(d);
    det_basis_destroy(&loaded);
    det_basis_destroy(&b);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(file_layout_and_size)
{
    char *path = tu_temp_path();
    for (int iter = 0; iter < 12; iter++) {
        unsigned segments = iter % 3 == 0 ? 36 : 1 + tu_below(9);
        model_t m;
        model_build(&m, segments, 1 + tu_below(10), tu_below(6), false);
        enum det_sample_type type = iter % 2 ? DET_SAMPLE_INT16 : DET_SAMPLE_FLOAT32;
        tusk_error_t err;
        ck_assert_int_eq(det_basis_save(m.basis, path, type, &err), TUSK_OK);
        size_t n;
        uint8_t *d = read_all(path, &n);
        layout_t l = layout_of(d, n);
        /* Size formula: 56 + 4S + 12 + names + generator + config + pad
         * + 16P + C*N*P*b + 8. */
        size_t P = det_basis_points(m.basis), bytes = type == DET_SAMPLE_INT16 ? 2 : 4;
        size_t fixed = 56 + 4 * (size_t)segments + 12 + l.names_len + strlen(GENERATOR) + strlen(config_text);
        size_t want = fixed + (8 - fixed % 8) % 8 + 16 * P + m.per_point * P * bytes + 8;
        ck_assert_uint_eq(n, want);
        ck_assert_uint_eq(l.size, n);
        ck_assert_uint_eq(l.table % 8, 0);
        for (size_t i = l.pad; i < l.table; i++)
            ck_assert_uint_eq(d[i], 0);
        /* Header fields. */
        ck_assert_uint_eq(l.segments, segments);
        ck_assert_uint_eq(l.channels, segments + 1);
        ck_assert_uint_eq(l.samples, m.samples);
        ck_assert(tusk_get_u64(d + 24) != 0);
        double ns;
        uint64_t u = tusk_get_u64(d + 24);
        memcpy(&ns, &u, sizeof ns);
        ck_assert(ns == det_basis_shape(m.basis)->sample_ns);
        u = tusk_get_u64(d + 32);
        memcpy(&ns, &u, sizeof ns);
        ck_assert(ns == det_basis_shape(m.basis)->grid_mm);
        ck_assert_uint_eq(d[40], (unsigned)type);
        ck_assert(d[41] == 0 && d[42] == 0 && d[43] == 0);
        if (type == DET_SAMPLE_FLOAT32)
            ck_assert_uint_eq(tusk_get_u32(d + 44), 0);
        ck_assert_uint_eq(l.points, P);
        for (unsigned s = 0; s < segments; s++)
            ck_assert_uint_eq(tusk_get_u32(d + 56 + 4 * s), m.n[s]);
        ck_assert_uint_eq(l.gen_len, strlen(GENERATOR));
        ck_assert_mem_eq(d + l.gen, GENERATOR, l.gen_len);
        ck_assert_uint_eq(l.cfg_len, strlen(config_text));
        ck_assert_mem_eq(d + l.cfg, config_text, l.cfg_len);
        /* Channel names, electrode order. */
        char names[1024];
        size_t k = 0;
        for (unsigned e = 0; e <= segments; e++) {
            if (e == segments)
                k += (size_t)snprintf(names + k, sizeof names - k, "%sCC", e ? " " : "");
            else if (segments == 36)
                k += (size_t)snprintf(names + k, sizeof names - k, "%s%c%u", e ? " " : "", 'A' + (int)(e / 6),
                                      e % 6 + 1);
            else
                k += (size_t)snprintf(names + k, sizeof names - k, "%sS%u", e ? " " : "", e);
        }
        ck_assert_uint_eq(l.names_len, k);
        ck_assert_mem_eq(d + l.names, names, k);
        if (segments == 36)
            ck_assert_mem_eq(d + l.names, "A1 A2 A3 A4 A5 A6 B1 B2", 23); /* segment = sector * 6 + ring */
        /* Point table: segment order, segment field, slab. */
        size_t at = l.table;
        for (unsigned s = 0; s < segments; s++)
            for (size_t i = 0; i < m.n[s]; i++, at += 16) {
                ck_assert(tusk_get_f32(d + at) == m.pos[s][3 * i] && tusk_get_f32(d + at + 8) == m.pos[s][3 * i + 2]);
                ck_assert_uint_eq(tusk_get_u16(d + at + 12), s);
                ck_assert_uint_eq(tusk_get_u16(d + at + 14), m.slab[s][i]);
            }
        ck_assert_uint_eq(at, l.blocks);
        ck_assert_uint_eq(tusk_get_u64(d + l.checksum), tusk_fnv1a(TUSK_FNV1A_SEED, d, l.checksum));
        free(d);
        model_free(&m);
    }
    unlink(path);
    free(path);
}
END_TEST

START_TEST(every_truncation_refused)
{
    char *path = tu_temp_path(), *cut_path = tu_temp_path();
    for (int t = 1; t <= 2; t++) {
        size_t n;
        uint8_t *d = small_file(path, (enum det_sample_type)t, &n);
        det_basis_t *b = NULL;
        tusk_error_t err;
        ck_assert_int_eq(det_basis_parse(&b, d, n, path, NULL, &err), TUSK_OK);
        det_basis_destroy(&b);
        for (size_t cut = 0; cut < n; cut++) {
            parse_fails(d, cut, path, TUSK_EINVAL, "truncated");
            write_all(cut_path, d, cut);
            ck_assert_int_eq(det_basis_load(&b, cut_path, NULL, &err), TUSK_EINVAL);
            ck_assert_ptr_null(b);
            ck_assert_msg(strstr(err.message, cut_path) == err.message, "%s", err.message);
        }
        free(d);
    }
    unlink(path);
    unlink(cut_path);
    free(path);
    free(cut_path);
}
END_TEST

START_TEST(every_byte_change_refused)
{
    char *path = tu_temp_path();
    for (int t = 1; t <= 2; t++) {
        size_t n;
        uint8_t *d = small_file(path, (enum det_sample_type)t, &n);
        static const uint8_t flips[] = {0x01, 0x80, 0xFF, 0x10};
        for (size_t i = 0; i < n; i++) {
            for (size_t f = 0; f <= sizeof flips; f++) {
                uint8_t x = f < sizeof flips ? flips[f] : (uint8_t)(1 + tu_below(255));
                d[i] ^= x;
                parse_fails(d, n, path, TUSK_EINVAL, "");
                d[i] ^= x;
            }
        }
        det_basis_t *b = NULL;
        tusk_error_t err;
        ck_assert_int_eq(det_basis_parse(&b, d, n, path, NULL, &err), TUSK_OK); /* restored */
        det_basis_destroy(&b);
        free(d);
    }
    unlink(path);
    free(path);
}
END_TEST

/* Edit a copy of the small file with `edit`, reseal it, expect `needle`. */
#define edited_fails(d, n, origin, off, bytes, len, seal, needle)                                               \
    edited_fails_at(d, n, origin, off, bytes, len, seal, needle, __LINE__)
static void edited_fails_at(const uint8_t *d, size_t n, const char *origin, size_t off, const void *bytes, size_t len,
                            bool seal, const char *needle, int line)
{
    uint8_t *e = malloc(n);
    ck_assert_ptr_nonnull(e);
    memcpy(e, d, n);
    memcpy(e + off, bytes, len);
    if (seal)
        reseal(e, n);
    parse_fails_at(e, n, origin, TUSK_EINVAL, needle, line);
    free(e);
}

START_TEST(specific_messages)
{
    char *path = tu_temp_path();
    size_t n;
    uint8_t *d = small_file(path, DET_SAMPLE_FLOAT32, &n);
    layout_t l = layout_of(d, n);
    uint8_t b4[4], b8[8];

    edited_fails(d, n, path, 0, "TUSKADF1", 8, false, "not a tusk basis file: offset 0 holds \"TUSKADF1\"");
    tusk_put_u32(b4, 3);
    edited_fails(d, n, path, 8, b4, 4, false, "offset 8: format version 3, this tusk reads 2");
    tusk_put_u32(b4, 0);
    edited_fails(d, n, path, 8, b4, 4, true, "format version 0, this tusk reads 2");
    /* Version 1 (points grouped by the segment they lie in): refused, the
     * message says why and what to do. */
    tusk_put_u32(b4, 1);
    edited_fails(d, n, path, 8, b4, 4, false,
                 "offset 8: format version 1, this tusk reads 2: version 1 grouped the points by the segment their "
                 "position lies in, version 2 by the segment that collects their charge");
    edited_fails(d, n, path, 8, b4, 4, true, "make the basis again (tusk-basis gen)");

    /* Trailing bytes; a missing byte. */
    uint8_t *longer = malloc(n + 3);
    memcpy(longer, d, n);
    memset(longer + n, 0, 3);
    char needle[128];
    snprintf(needle, sizeof needle, "3 trailing bytes after the checksum at offset %zu", n - 8);
    parse_fails(longer, n + 3, path, TUSK_EINVAL, needle);
    free(longer);
    snprintf(needle, sizeof needle, "truncated: the header describes %zu bytes", n);
    parse_fails(d, n - 1, path, TUSK_EINVAL, needle);
    parse_fails(d, 30, path, TUSK_EINVAL, "truncated at offset 12 (header)");
    parse_fails(d, 58, path, TUSK_EINVAL, "truncated at offset 56 (points per segment)");
    snprintf(needle, sizeof needle, "truncated at offset %zu (channel names)", l.names);
    parse_fails(d, l.names + 3, path, TUSK_EINVAL, needle);

    /* Damaged content: the checksum. */
    uint8_t x = (uint8_t)(d[l.blocks + 5] ^ 0x40);
    snprintf(needle, sizeof needle, "offset %zu: checksum 0x", l.checksum);
    edited_fails(d, n, path, l.blocks + 5, &x, 1, false, needle);
    edited_fails(d, n, path, l.blocks + 5, &x, 1, false, "the file is damaged");

    /* Fields, each with a valid checksum. */
    tusk_put_u32(b4, 0);
    edited_fails(d, n, path, 12, b4, 4, true, "offset 12: 0 segments, expected 1 to 65535");
    tusk_put_u32(b4, 70000);
    edited_fails(d, n, path, 12, b4, 4, true, "offset 12: 70000 segments");
    tusk_put_u32(b4, 4);
    edited_fails(d, n, path, 16, b4, 4, true, "offset 16: 4 channels, expected segments + core = 3");
    tusk_put_u32(b4, 0);
    edited_fails(d, n, path, 20, b4, 4, true, "offset 20: 0 samples per trace");
    tusk_put_u32(b4, 100001);
    edited_fails(d, n, path, 20, b4, 4, true, "offset 20: 100001 samples per trace, expected 1 to 100000");
    double not_a_number = NAN, neg = -1.0;
    uint64_t u;
    memcpy(&u, &not_a_number, 8);
    tusk_put_u64(b8, u);
    edited_fails(d, n, path, 24, b8, 8, true, "offset 24: sample period");
    memcpy(&u, &neg, 8);
    tusk_put_u64(b8, u);
    edited_fails(d, n, path, 32, b8, 8, true, "offset 32: grid spacing -1 mm");
    uint8_t three = 3, one = 1;
    edited_fails(d, n, path, 40, &three, 1, true, "offset 40: sample type 3");
    edited_fails(d, n, path, 42, &one, 1, true, "offset 42: padding byte is 1, must be 0");
    tusk_put_f32(b4, 0.5f);
    edited_fails(d, n, path, 44, b4, 4, true, "offset 44: int16 scale 0.5 in a float32 basis");
    tusk_put_u64(b8, 4);
    edited_fails(d, n, path, 48, b8, 8, true, "offset 48: 4 points, but the points per segment (offset 56) sum to 3");
    tusk_put_u32(b4, 3);
    edited_fails(d, n, path, 56, b4, 4, true, "offset 48: 3 points, but the points per segment (offset 56) sum to 4");
    tusk_put_u32(b4, (1u << 20) + 1);
    snprintf(needle, sizeof needle, "offset %zu: configuration length 1048577 exceeds", l.cfg - 4);
    edited_fails(d, n, path, l.cfg - 4, b4, 4, true, needle);
    /* A longer text: the sizes no longer add up (+1 would take a padding
     * byte, a NUL, into the text: refused as such, below). */
    tusk_put_u32(b4, (uint32_t)l.cfg_len + 1);
    edited_fails(d, n, path, l.cfg - 4, b4, 4, true, "configuration text is not valid UTF-8 or holds a NUL");
    tusk_put_u32(b4, (uint32_t)l.cfg_len + 8);
    edited_fails(d, n, path, l.cfg - 4, b4, 4, true, "truncated: the header describes");

    /* Names: "S0 S1 CC". */
    ck_assert_mem_eq(d + l.names, "S0 S1 CC", 8);
    snprintf(needle, sizeof needle, "offset %zu: channel names: channel 1 is 'S7', expected 'S1'", l.names + 3);
    edited_fails(d, n, path, l.names + 4, "7", 1, true, needle);
    edited_fails(d, n, path, l.names + 6, "CX", 2, true, "channel 2 is 'CX', expected 'CC'");
    edited_fails(d, n, path, l.names + 2, "_", 1, true, "channel 0 is 'S0_S1', expected 'S0'");
    uint8_t ff = 0xFF, nul = 0;
    snprintf(needle, sizeof needle, "offset %zu: generator text is not valid UTF-8", l.gen + 2);
    edited_fails(d, n, path, l.gen + 2, &ff, 1, true, needle);
    edited_fails(d, n, path, l.cfg + 1, &nul, 1, true, "configuration text is not valid UTF-8 or holds a NUL");
    edited_fails(d, n, path, l.cfg + 1, "\xc0\x80", 2, true, "configuration text is not valid UTF-8"); /* overlong */
    edited_fails(d, n, path, l.cfg + 1, "\xed\xa0\x80", 3, true, "configuration text is not valid UTF-8"); /* surrogate */
    ck_assert_uint_gt(l.table, l.pad); /* this file has alignment padding */
    snprintf(needle, sizeof needle, "offset %zu: alignment padding byte is 1", l.pad);
    edited_fails(d, n, path, l.pad, &one, 1, true, needle);

    /* Point table: segment 0 has points 0, 1; segment 1 point 0. */
    uint8_t seg1[2] = {1, 0};
    snprintf(needle, sizeof needle, "offset %zu: point 1 of segment 0 says segment 1", l.table + 16 + 12);
    edited_fails(d, n, path, l.table + 16 + 12, seg1, 2, true, needle);
    /* The slab: a segment of the basis (there are 2). */
    uint8_t slab2[2] = {2, 0};
    snprintf(needle, sizeof needle, "offset %zu: point 0 of segment 1 lies in slab 2, the basis has 2 segments",
             l.table + 32 + 14);
    edited_fails(d, n, path, l.table + 32 + 14, slab2, 2, true, needle);
    /* Another slab within range is another valid basis. */
    {
        uint8_t *e = malloc(n);
        memcpy(e, d, n);
        tusk_put_u16(e + l.table + 32 + 14, 0);
        reseal(e, n);
        det_basis_t *b = NULL;
        tusk_error_t err;
        ck_assert_int_eq(det_basis_parse(&b, e, n, path, NULL, &err), TUSK_OK);
        ck_assert_uint_eq(det_basis_slab(b, 1, 0), 0);
        ck_assert_uint_eq(det_basis_slab(b, 0, 1), 0);
        ck_assert_uint_eq(det_basis_slab(b, 1, 1), UINT_MAX);
        det_basis_destroy(&b);
        free(e);
    }
    tusk_put_f32(b4, INFINITY);
    snprintf(needle, sizeof needle, "offset %zu: point 0 of segment 0: position (", l.table);
    edited_fails(d, n, path, l.table + 4, b4, 4, true, needle);
    edited_fails(d, n, path, l.table + 4, b4, 4, true, "is not finite");
    /* Traces: segment 0 block is [3 channels][3 samples][2 points]; value
     * (channel 1, sample 2, point 1) is at ((1 * 3 + 2) * 2 + 1) * 4. */
    tusk_put_f32(b4, NAN);
    snprintf(needle, sizeof needle, "offset %zu: segment 0 channel 1 sample 2 point 1: value is not finite",
             l.blocks + 44);
    edited_fails(d, n, path, l.blocks + 44, b4, 4, true, needle);
    free(d);

    /* int16 files. */
    d = small_file(path, DET_SAMPLE_INT16, &n);
    l = layout_of(d, n);
    uint8_t min16[2] = {0x00, 0x80};
    snprintf(needle, sizeof needle, "offset %zu: segment 0 channel 0 sample 1 point 0: int16 sample -32768",
             l.blocks + 4);
    edited_fails(d, n, path, l.blocks + 4, min16, 2, true, needle);
    /* The scale is the largest |value|: some sample is +-32767. (Another
     * scale with the same samples is another valid basis: only the
     * checksum tells.) */
    uint8_t *e = malloc(n);
    memcpy(e, d, n);
    int full = 0;
    for (size_t at = l.blocks; at < l.checksum; at += 2) {
        int16_t raw = tusk_get_i16(e + at);
        if (raw == 32767 || raw == -32767) {
            tusk_put_i16(e + at, (int16_t)(raw > 0 ? 32766 : -32766));
            full++;
        }
    }
    ck_assert_int_gt(full, 0);
    reseal(e, n);
    parse_fails(e, n, path, TUSK_EINVAL,
                "offset 44: int16 scale 1.5 is not the largest |value|: the largest |sample| is 32766, expected 32767");
    free(e);
    tusk_put_f32(b4, 0);
    edited_fails(d, n, path, 44, b4, 4, true, "offset 44: int16 scale 0, expected a finite number >=");
    tusk_put_f32(b4, 1e-35f);
    edited_fails(d, n, path, 44, b4, 4, true, "offset 44: int16 scale 1e-35");
    free(d);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(expectations)
{
    char *path = tu_temp_path();
    det_basis_shape_t shape = shape_of(36, 60);
    det_basis_t *b = NULL;
    tusk_error_t err;
    ck_assert_int_eq(det_basis_new(&b, &shape, &err), TUSK_OK);
    float pos[3] = {1, 2, 3}, tr[37 * 60] = {0};
    tr[100] = 1;
    ck_assert_int_eq(det_basis_add(b, 7, pos, tr, &err), TUSK_OK);
    ck_assert_int_eq(det_basis_save(b, path, DET_SAMPLE_INT16, &err), TUSK_OK);
    det_basis_destroy(&b);
    struct {
        det_basis_expect_t x;
        const char *needle;
    } cases[] = {
        {{.samples = 100}, "basis has 60 samples per trace, the chain expects 100"},
        {{.segments = 37}, "basis has 36 segments, the chain expects 37"},
        {{.channels = 38}, "basis has 37 channels, the chain expects 38"},
        {{.samples = 60, .sample_ns = 12.5}, "basis has a sample period of 10 ns, the chain expects 12.5 ns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(det_basis_load(&b, path, &cases[i].x, &err), TUSK_EPARAM);
        ck_assert_ptr_null(b);
        tu_assert_error(&err, TUSK_EPARAM, cases[i].needle);
        ck_assert_msg(strncmp(err.message, path, strlen(path)) == 0, "%s", err.message);
    }
    det_basis_expect_t none = {0}, all = {.segments = 36, .channels = 37, .samples = 60, .sample_ns = 10.0};
    ck_assert_int_eq(det_basis_load(&b, path, &none, &err), TUSK_OK);
    det_basis_destroy(&b);
    ck_assert_int_eq(det_basis_load(&b, path, &all, &err), TUSK_OK);
    ck_assert_uint_eq(det_basis_segment_points(b, 7), 1);
    ck_assert(det_basis_block(b, 7)[100] == 1.0f);
    det_basis_destroy(&b);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(unreadable_paths)
{
    det_basis_t *b = NULL;
    tusk_error_t err;
    char dir[256];
    tu_make_dir(dir, sizeof dir);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no-such-basis.bin", dir);
    ck_assert_int_eq(det_basis_load(&b, missing, NULL, &err), TUSK_EIO);
    ck_assert_ptr_null(b);
    tu_assert_error(&err, TUSK_EIO, missing);
    ck_assert_int_eq(det_basis_load(&b, dir, NULL, &err), TUSK_EIO); /* a folder */
    tu_assert_error(&err, TUSK_EIO, dir);
    /* Saving where it cannot be written; nothing left behind. */
    det_basis_shape_t shape = shape_of(2, 3);
    ck_assert_int_eq(det_basis_new(&b, &shape, &err), TUSK_OK);
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing-folder/basis.bin", dir);
    ck_assert_int_eq(det_basis_save(b, bad, DET_SAMPLE_FLOAT32, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, bad);
    ck_assert_int_eq(det_basis_save(b, dir, DET_SAMPLE_FLOAT32, &err), TUSK_EIO); /* rename onto a folder */
    tu_assert_error(&err, TUSK_EIO, dir);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", dir);
    ck_assert_int_ne(access(tmp, F_OK), 0); /* removed after the failed rename */
    ck_assert_int_eq(det_basis_save(b, missing, (enum det_sample_type)3, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "unknown sample type 3");
    det_basis_destroy(&b);
    tu_remove_dir(dir); /* fails if a .tmp was left */
}
END_TEST

START_TEST(load_reads_to_the_end)
{
    /* Files whose size fstat does not tell (/proc reports 0) are read
     * whole all the same: here, a text that is no basis. */
    if (access("/proc/self/maps", R_OK) != 0)
        return;
    det_basis_t *b = NULL;
    tusk_error_t err;
    ck_assert_int_eq(det_basis_load(&b, "/proc/self/maps", NULL, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "/proc/self/maps: not a tusk basis file");
    ck_assert_ptr_null(b);
}
END_TEST

START_TEST(new_and_add_validate)
{
    det_basis_t *b = (det_basis_t *)&b;
    tusk_error_t err;
    det_basis_shape_t s = shape_of(36, 60);
    s.channels = 36;
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    ck_assert_ptr_null(b);
    tu_assert_error(&err, TUSK_EINVAL, "36 channels, expected segments + core = 37");
    s = shape_of(36, 0);
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "0 samples per trace");
    s = shape_of(36, 100001);
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    s = shape_of(0, 10);
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    s = shape_of(36, 60);
    s.sample_ns = NAN;
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "sample period");
    s = shape_of(36, 60);
    s.grid_mm = 0;
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "grid spacing");
    s = shape_of(36, 60);
    s.generator = "bad \xff";
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "generator text is not valid UTF-8");
    s = shape_of(36, 60);
    char *big = malloc(((size_t)1 << 20) + 2);
    ck_assert_ptr_nonnull(big);
    memset(big, 'a', ((size_t)1 << 20) + 1);
    big[((size_t)1 << 20) + 1] = '\0';
    s.config = big;
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "configuration text of 1048577 bytes, at most 1048576");
    big[1 << 20] = '\0'; /* exactly 1 MiB is allowed */
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_OK);
    det_basis_destroy(&b);
    free(big);
    s = shape_of(3, 4);
    s.generator = NULL;
    s.config = NULL;
    ck_assert_int_eq(det_basis_new(&b, &s, &err), TUSK_OK);
    ck_assert_str_eq(det_basis_shape(b)->generator, "");
    ck_assert_str_eq(det_basis_shape(b)->config, "");
    float pos[3] = {0, 0, 0}, tr[16] = {0};
    ck_assert_int_eq(det_basis_add(b, 3, pos, tr, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "segment 3 out of range (the basis has 3)");
    ck_assert_int_eq(det_basis_add_point(b, 0, 3, pos, tr, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "slab 3 out of range (the basis has 3 segments)");
    ck_assert_uint_eq(det_basis_slab(b, 0, 0), UINT_MAX);
    ck_assert_uint_eq(det_basis_slab(NULL, 0, 0), UINT_MAX);
    pos[1] = NAN;
    ck_assert_int_eq(det_basis_add(b, 0, pos, tr, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "is not finite");
    pos[1] = 0;
    tr[13] = INFINITY;
    ck_assert_int_eq(det_basis_add(b, 0, pos, tr, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "channel 3 sample 1 in segment 0 is not finite");
    ck_assert_uint_eq(det_basis_points(b), 0);
    /* Out-of-range access. */
    ck_assert_ptr_null(det_basis_block(b, 0));
    ck_assert_ptr_null(det_basis_block(b, 3));
    ck_assert_uint_eq(det_basis_segment_points(b, 99), 0);
    float p3[3], t4[4];
    det_basis_position(b, 0, 0, p3);
    ck_assert(isnan(p3[0]) && isnan(p3[2]));
    det_basis_trace(b, 0, 0, 0, t4);
    ck_assert(isnan(t4[0]) && isnan(t4[3]));
    ck_assert_int_eq(det_basis_sample_type(b), DET_SAMPLE_FLOAT32);
    det_basis_destroy(&b);
    det_basis_destroy(&b); /* NULL is fine */
    ck_assert_int_eq(det_basis_new(NULL, &s, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_basis_parse(&b, NULL, 5, "x", NULL, &err), TUSK_EINVAL);
}
END_TEST

START_TEST(random_bytes_never_crash)
{
    char *path = tu_temp_path();
    size_t good_n;
    uint8_t *good = small_file(path, DET_SAMPLE_INT16, &good_n);
    uint8_t buf[700];
    for (int i = 0; i < 20000; i++) {
        size_t n = tu_below(sizeof buf + 1);
        unsigned kind = tu_below(4);
        if (kind == 3 && n >= 8) {
            /* A valid file with a few random bytes changed, resealed. */
            n = good_n;
            memcpy(buf, good, n);
            for (unsigned k = 1 + tu_below(3); k > 0; k--)
                buf[tu_below((uint32_t)(n - 8))] = (uint8_t)tu_rand();
        } else {
            tu_fill(buf, n);
            if (kind >= 1 && n >= 12) {
                memcpy(buf, "TUSKBAS1", 8);
                tusk_put_u32(buf + 8, 1);
                if (n >= 56 && tu_below(2)) {
                    tusk_put_u32(buf + 12, 1 + tu_below(3)); /* small, plausible counts */
                    tusk_put_u32(buf + 16, tusk_get_u32(buf + 12) + 1);
                    tusk_put_u32(buf + 20, 1 + tu_below(4));
                }
            }
        }
        if (kind >= 2 && n >= 8)
            reseal(buf, n);
        det_basis_t *b = NULL;
        tusk_error_t err;
        int rc = det_basis_parse(&b, buf, n, "random", NULL, &err);
        if (rc != TUSK_OK) {
            tu_check(b == NULL && rc == TUSK_EINVAL && strncmp(err.message, "random: ", 8) == 0);
            continue;
        }
        size_t sum = 0;
        for (unsigned s = 0; s < det_basis_shape(b)->segments; s++) {
            sum += det_basis_segment_points(b, s);
            tu_check((det_basis_block(b, s) != NULL) == (det_basis_segment_points(b, s) > 0));
        }
        tu_check(sum == det_basis_points(b));
        det_basis_destroy(&b);
    }
    free(good);
    unlink(path);
    free(path);
}
END_TEST

static Suite *basis_suite(void)
{
    Suite *s = suite_create("basis");
    TCase *tc = tcase_create("basis");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, roundtrip_float32);
    tcase_add_test(tc, roundtrip_int16);
    tcase_add_test(tc, int16_special_cases);
    tcase_add_test(tc, block_layout);
    tcase_add_test(tc, file_layout_and_size);
    tcase_add_test(tc, every_truncation_refused);
    tcase_add_test(tc, every_byte_change_refused);
    tcase_add_test(tc, specific_messages);
    tcase_add_test(tc, expectations);
    tcase_add_test(tc, unreadable_paths);
    tcase_add_test(tc, load_reads_to_the_end);
    tcase_add_test(tc, new_and_add_validate);
    tcase_add_test(tc, random_bytes_never_crash);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(basis_suite());
}
