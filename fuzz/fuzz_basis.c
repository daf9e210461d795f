/* fuzz_basis.c - fuzz target: PSA signal-basis files (psa/BASIS.md,
 * detector/basis.c), which a crash, a full disk, a bad copy or another
 * version may have damaged. data[0] % 8 picks the check:
 *   0-2: data[1..] parsed as it is;
 *   3-6: data[1..] parsed with its last 8 bytes replaced by the right
 *        checksum, so that mutations reach the field checks behind it;
 *   7:   data[1..] as the parameters and values of a basis, which is
 *        saved (float32 or int16) to a temporary file, loaded back and
 *        compared (the slowest check, file system calls: one input in 8).
 * Invariants:
 *   - a parse either fails with TUSK_EINVAL (or TUSK_ENOMEM), no basis and
 *     a message starting with the origin, or succeeds with a consistent
 *     basis: channels = segments + 1, the segments' points sum to all
 *     points, a block exactly for the segments with points, finite
 *     positions and values, det_basis_trace agreeing with the block;
 *   - every accepted file is canonical: the parsed basis saved again
 *     with its sample type gives exactly the input bytes;
 *   - a saved basis loads back with the same shape, positions bit for bit
 *     and values bit for bit (float32) or within scale * (1/65534 + 2^-24)
 *     (int16, and saved again it gives the same file); its truncations
 *     and a changed byte are refused; a chain expecting one more sample
 *     is refused with TUSK_EPARAM.
 * The temporary file is one per process (created with mkstemp under
 * $TMPDIR or /tmp on first use, removed at exit with its .tmp; a process
 * killed by a crash leaves it behind as tusk-fuzz-basis-XXXXXX).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "fuzz_targets.h"
#include "tusk/basis.h"
#include "base/textfile.h"

/* PSA signal-basis files: data[0] % 8 picks raw parse, parse with a
 * repaired checksum, or save-and-load of a basis built from data[1..].
 * (To be declared in fuzz_targets.h with the other targets.) */
int fuzz_basis_one(const uint8_t *data, size_t size);

static const char origin[] = "fuzz-basis";

/* ---- the temporary file ---------------------------------------------------- */

static char *tmp_path, *tmp_tmp_path;

static void tmp_remove(void)
{
    if (tmp_path)
        unlink(tmp_path);
    if (tmp_tmp_path)
        unlink(tmp_tmp_path);
    free(tmp_path);
    free(tmp_tmp_path);
    tmp_path = tmp_tmp_path = NULL;
}

static const char *tmp_file(void)
{
    if (!tmp_path) {
        const char *dir = getenv("TMPDIR");
        if (!dir || !*dir)
            dir = "/tmp";
        static const char name[] = "/tusk-fuzz-basis-XXXXXX";
        size_t len = strlen(dir);
        tmp_path = malloc(len + sizeof name);
        tmp_tmp_path = malloc(len + sizeof name + 4);
        FUZZ_CHECK(tmp_path != NULL && tmp_tmp_path != NULL);
        memcpy(tmp_path, dir, len);
        memcpy(tmp_path + len, name, sizeof name);
        int fd = mkstemp(tmp_path);
        if (fd < 0) {
            fprintf(stderr, "fuzz_basis: cannot create %s: %s\n", tmp_path, strerror(errno));
            abort();
        }
        close(fd);
        memcpy(tmp_tmp_path, tmp_path, len + sizeof name - 1);
        memcpy(tmp_tmp_path + len + sizeof name - 1, ".tmp", 5);
        atexit(tmp_remove);
    }
    return tmp_path;
}

static double abs_d(double v)
{
    return v < 0 ? -v : v;
}

static uint8_t *read_whole(const char *path, size_t *size)
{
    char *d = NULL;
    FUZZ_CHECK(tusk_file_read(path, (size_t)1 << 30, &d, size, NULL) == TUSK_OK);
    return (uint8_t *)d;
}

/* ---- checks ---------------------------------------------------------------- */

static void check_failure(int rc, const det_basis_t *b, const tusk_error_t *err, int expect_code)
{
    FUZZ_CHECK(rc == expect_code || rc == TUSK_ENOMEM);
    FUZZ_CHECK(b == NULL);
    FUZZ_CHECK(err->code == rc && err->message[0] != '\0');
    FUZZ_CHECK(strncmp(err->message, origin, sizeof origin - 1) == 0 || rc == TUSK_ENOMEM);
}

/* A basis as the API shows it is consistent. */
static void check_consistent(const det_basis_t *b)
{
    const det_basis_shape_t *sh = det_basis_shape(b);
    FUZZ_CHECK(sh != NULL && sh->segments >= 1 && sh->channels == sh->segments + 1);
    FUZZ_CHECK(sh->samples >= 1 && sh->samples <= 100000);
    FUZZ_CHECK(isfinite(sh->sample_ns) && sh->sample_ns > 0 && isfinite(sh->grid_mm) && sh->grid_mm > 0);
    FUZZ_CHECK(sh->generator != NULL && sh->config != NULL);
    enum det_sample_type type = det_basis_sample_type(b);
    FUZZ_CHECK(type == DET_SAMPLE_FLOAT32 || type == DET_SAMPLE_INT16);
    size_t sum = 0;
    float *trace = malloc(sh->samples * sizeof *trace);
    FUZZ_CHECK(trace != NULL);
    for (unsigned s = 0; s < sh->segments; s++) {
        size_t n = det_basis_segment_points(b, s);
        sum += n;
        const float *block = det_basis_block(b, s);
        FUZZ_CHECK((block != NULL) == (n > 0));
        for (size_t i = 0; i < n; i++) {
            float pos[3];
            det_basis_position(b, s, i, pos);
            FUZZ_CHECK(isfinite(pos[0]) && isfinite(pos[1]) && isfinite(pos[2]));
            for (unsigned c = 0; c < sh->channels; c++) {
                det_basis_trace(b, s, i, c, trace);
                for (unsigned k = 0; k < sh->samples; k++) {
                    float v = block[((size_t)c * sh->samples + k) * n + i];
                    FUZZ_CHECK(isfinite(v) && memcmp(&v, &trace[k], sizeof v) == 0);
                }
            }
        }
    }
    FUZZ_CHECK(sum == det_basis_points(b));
    FUZZ_CHECK(det_basis_segment_points(b, sh->segments) == 0 && det_basis_block(b, sh->segments) == NULL);
    free(trace);
}

/* Save b with its own sample type and compare with `bytes`. */
static void check_resaves_to(const det_basis_t *b, const uint8_t *bytes, size_t n)
{
    tusk_error_t err;
    const char *path = tmp_file();
    FUZZ_CHECK(det_basis_save(b, path, det_basis_sample_type(b), &err) == TUSK_OK);
    size_t m;
    uint8_t *again = read_whole(path, &m);
    FUZZ_CHECK(m == n && memcmp(again, bytes, n) == 0);
    free(again);
}

static void check_parse(const uint8_t *in, size_t n)
{
    det_basis_t *b = NULL;
    tusk_error_t err;
    int rc = det_basis_parse(&b, in, n, origin, NULL, &err);
    if (rc != TUSK_OK) {
        check_failure(rc, b, &err, TUSK_EINVAL);
        return;
    }
    check_consistent(b);
    check_resaves_to(b, in, n);
    /* What the chain expects. */
    const det_basis_shape_t *sh = det_basis_shape(b);
    det_basis_expect_t same = {sh->segments, sh->channels, sh->samples, sh->sample_ns};
    det_basis_expect_t more = {0, 0, sh->samples + 1, 0};
    det_basis_t *c = NULL;
    FUZZ_CHECK(det_basis_parse(&c, in, n, origin, &same, &err) == TUSK_OK);
    det_basis_destroy(&c);
    rc = det_basis_parse(&c, in, n, origin, &more, &err);
    check_failure(rc, c, &err, TUSK_EPARAM);
    det_basis_destroy(&b);
}

/* ---- a basis from bytes ---------------------------------------------------- */

typedef struct source {
    const uint8_t *d;
    size_t n, at;
    uint64_t state; /* once the bytes run out */
} source_t;

static uint8_t take(source_t *s)
{
    if (s->at < s->n)
        return s->d[s->at++];
    s->state = s->state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (uint8_t)(s->state >> 56);
}

/* A finite value: small integers and fractions, signed zeros, extremes
 * and (for float32) raw bit patterns. */
static float take_value(source_t *s, bool any_bits)
{
    uint8_t k = take(s);
    switch (k % 8) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2:
        if (any_bits) {
            uint32_t u = (uint32_t)take(s) | (uint32_t)take(s) << 8 | (uint32_t)take(s) << 16 |
                         (uint32_t)take(s) << 24;
            float f;
            memcpy(&f, &u, sizeof f);
            if (isfinite(f))
                return f;
        }
        return 1.0f;
    default: return (float)(int8_t)take(s) / (float)(1 + (k >> 3));
    }
}

/* The basis saved in the temporary file holds what was added: `points`
 * points, point p in segment seg[p] at pos[3p..] with traces at
 * traces[p * per_point ..]. `noise` picks the byte to change. */
static void check_saved(const det_basis_shape_t *shape_in, enum det_sample_type type, double scale, unsigned points,
                        const unsigned *seg, const float *pos, const float *traces, uint64_t noise)
{
    const det_basis_shape_t shape = *shape_in;
    size_t per_point = (size_t)shape.channels * shape.samples;
    FUZZ_CHECK(access(tmp_tmp_path, F_OK) != 0);
    det_basis_expect_t expect = {shape.segments, shape.channels, shape.samples, shape.sample_ns};
    det_basis_t *back = NULL;
    tusk_error_t err;
    const char *path = tmp_file();
    int rc = det_basis_load(&back, path, &expect, &err);
    if (rc != TUSK_OK)
        fprintf(stderr, "fuzz_basis: %s\n", err.message);
    FUZZ_CHECK(rc == TUSK_OK);
    check_consistent(back);
    FUZZ_CHECK(det_basis_sample_type(back) == type);
    const det_basis_shape_t *sh = det_basis_shape(back);
    FUZZ_CHECK(sh->segments == shape.segments && sh->samples == shape.samples);
    FUZZ_CHECK(sh->sample_ns == shape.sample_ns && sh->grid_mm == shape.grid_mm);
    FUZZ_CHECK(strcmp(sh->generator, shape.generator) == 0 && strcmp(sh->config, shape.config) == 0);
    FUZZ_CHECK(det_basis_points(back) == points);
    double tol = type == DET_SAMPLE_INT16 ? (scale > 0 ? scale : 1) * (1.0 / 65534 + 1.0 / 16777216) * (1 + 1e-9) : 0;
    /* Points of each segment in add order. */
    size_t *index = calloc(shape.segments, sizeof *index);
    float *trace = malloc(shape.samples * sizeof *trace);
    FUZZ_CHECK(index && trace);
    for (unsigned p = 0; p < points; p++) {
        unsigned s = seg[p];
        size_t i = index[s]++;
        float q[3];
        det_basis_position(back, s, i, q);
        FUZZ_CHECK(memcmp(q, pos + 3 * p, sizeof q) == 0);
        for (unsigned c = 0; c < shape.channels; c++) {
            det_basis_trace(back, s, i, c, trace);
            for (unsigned k = 0; k < shape.samples; k++) {
                float want = traces[p * per_point + (size_t)c * shape.samples + k];
                if (tol == 0)
                    FUZZ_CHECK(memcmp(&trace[k], &want, sizeof want) == 0);
                else
                    FUZZ_CHECK(abs_d((double)trace[k] - (double)want) <= tol);
            }
        }
    }
    for (unsigned s = 0; s < shape.segments; s++)
        FUZZ_CHECK(det_basis_segment_points(back, s) == index[s]);
    free(index);
    free(trace);

    /* The file: every truncation and a changed byte refused, a mismatched
     * chain refused; int16 values decoded and encoded again give the same
     * file (float32 values are copied bit for bit, checked above; a save
     * costs an fsync, the slowest step here). */
    size_t fn;
    uint8_t *file = read_whole(path, &fn);
    if (type == DET_SAMPLE_INT16)
        check_resaves_to(back, file, fn);
    det_basis_t *c = NULL;
    for (size_t cut = 0; cut < fn; cut += 1 + cut / 4) {
        rc = det_basis_parse(&c, file, cut, origin, NULL, &err);
        check_failure(rc, c, &err, TUSK_EINVAL);
    }
    size_t at = (size_t)(noise % fn);
    uint8_t flip = (uint8_t)(1 + (noise >> 40) % 255);
    file[at] ^= flip;
    rc = det_basis_parse(&c, file, fn, origin, NULL, &err);
    check_failure(rc, c, &err, TUSK_EINVAL);
    file[at] ^= flip;
    det_basis_expect_t more = expect;
    more.samples++;
    rc = det_basis_parse(&c, file, fn, origin, &more, &err);
    check_failure(rc, c, &err, TUSK_EPARAM);
    free(file);
    det_basis_destroy(&back);
}

static void check_round_trip(const uint8_t *in, size_t n)
{
    source_t src = {in, n, 0, tusk_fnv1a(TUSK_FNV1A_SEED, in, n)};
    uint8_t sel = take(&src);
    det_basis_shape_t shape;
    memset(&shape, 0, sizeof shape);
    shape.segments = sel & 1 ? 36 : 1 + (unsigned)(sel >> 1) % 6;
    shape.channels = shape.segments + 1;
    shape.samples = 1 + take(&src) % 6; /* small: every value goes through many checks */
    enum det_sample_type type = sel & 0x80 ? DET_SAMPLE_INT16 : DET_SAMPLE_FLOAT32;
    shape.sample_ns = 0.5 + take(&src);
    shape.grid_mm = 0.25 * (1 + take(&src));
    /* Texts: printable ASCII with now and then a two-byte character. */
    char text[2][40];
    for (int t = 0; t < 2; t++) {
        size_t len = take(&src) % 16, k = 0;
        for (size_t i = 0; i < len; i++) {
            uint8_t c = take(&src);
            if (c % 11 == 0) {
                text[t][k++] = (char)0xc3;
                text[t][k++] = (char)0xa9; /* U+00E9 */
            } else {
                text[t][k++] = (char)(0x20 + c % 95);
            }
        }
        text[t][k] = '\0';
    }
    shape.generator = text[0];
    shape.config = text[1];
    bool scale_tiny = type == DET_SAMPLE_INT16 && take(&src) == 0x5A;
    tusk_error_t err;
    det_basis_t *b = NULL;
    FUZZ_CHECK(det_basis_new(&b, &shape, &err) == TUSK_OK);
    size_t per_point = (size_t)shape.channels * shape.samples;
    unsigned points = take(&src) % (shape.segments == 36 ? 12 : 8);
    float *traces = malloc((points + 1) * per_point * sizeof *traces);
    float *pos = malloc((points + 1) * 3 * sizeof *pos);
    unsigned *seg = malloc((points + 1) * sizeof *seg);
    FUZZ_CHECK(traces && pos && seg);
    double scale = 0;
    for (unsigned p = 0; p < points; p++) {
        seg[p] = take(&src) % shape.segments;
        for (int c = 0; c < 3; c++)
            pos[3 * p + c] = take_value(&src, true);
        for (size_t v = 0; v < per_point; v++) {
            float x = take_value(&src, type == DET_SAMPLE_FLOAT32);
            if (scale_tiny)
                x *= 1e-36f;
            traces[p * per_point + v] = x;
            if (abs_d(x) > scale)
                scale = abs_d(x);
        }
        FUZZ_CHECK(det_basis_add(b, seg[p], pos + 3 * p, traces + p * per_point, &err) == TUSK_OK);
        if (take(&src) % 8 == 0)
            (void)det_basis_block(b, seg[p]); /* switch that segment's storage form */
    }
    check_consistent(b);
    int rc = det_basis_save(b, tmp_file(), type, &err);
    if (scale_tiny && scale > 0 && scale < 32767.0 * (double)FLT_MIN) {
        FUZZ_CHECK(rc == TUSK_EINVAL && strstr(err.message, "too small for int16") != NULL);
    } else {
        FUZZ_CHECK(rc == TUSK_OK);
        uint64_t hi = take(&src), lo = take(&src);
        uint64_t noise = src.state ^ ((hi << 8 | lo) * UINT64_C(0x9E3779B97F4A7C15));
        check_saved(&shape, type, scale, points, seg, pos, traces, noise);
    }
    free(traces);
    free(pos);
    free(seg);
    det_basis_destroy(&b);
}

int fuzz_basis_one(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t *in = data + 1;
    size_t n = size - 1;
    unsigned mode = data[0] % 8u;
    if (mode <= 2) {
        check_parse(in, n);
    } else if (mode <= 6) {
        if (n >= 8) {
            uint8_t *copy = malloc(n);
            FUZZ_CHECK(copy != NULL);
            memcpy(copy, in, n);
            uint64_t h = tusk_fnv1a(TUSK_FNV1A_SEED, copy, n - 8);
            for (int i = 0; i < 8; i++)
                copy[n - 8 + (size_t)i] = (uint8_t)(h >> (8 * i));
            check_parse(copy, n);
            free(copy);
        } else {
            check_parse(in, n);
        }
    } else {
        check_round_trip(in, n);
    }
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_basis_one(data, size);
}
#endif
