/* check_actors.c - the built-in actors, driven through the host API
 * (tusk/actor_host.h) as tusk-emulate drives them: file_producer replays a
 * file byte for byte in buffers of whole frames, passthrough copies through
 * any output size, file_writer writes exactly what it gets, null_consumer
 * counts, fault misbehaves exactly as asked, and every configuration or
 * data error comes back with a message naming the parameter, file or offset.
 *
 * The modules are found as $TUSK_ACTOR_PATH/NAME.so (make check sets it to
 * BUILDDIR/actors/.libs). The crash and exit tests fork a child; they are
 * skipped when CK_FORK=no (valgrind runs), where the child would report
 * the parent's memory. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tusk/actor_host.h"
#include "tusk/adf_crystal.h"
#include "tusk/adf_psa.h"
#include "tusk/psa.h"
#include "tusk/psa_cl.h"
#include "tusk/basis.h"

/* ---- helpers ------------------------------------------------------------------------ */

static char *lib_path(const char *name)
{
    const char *dir = getenv("TUSK_ACTOR_PATH");
    ck_assert_msg(dir && *dir, "TUSK_ACTOR_PATH is not set (make check sets it to BUILDDIR/actors/.libs)");
    size_t n = strlen(dir) + strlen(name) + 8;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s.so", dir, name);
    return p;
}

static void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(data, 1, size, fp), size);
    ck_assert_int_eq(fclose(fp), 0);
}

static uint8_t *read_bytes(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    uint8_t *b = malloc(cap);
    ck_assert_ptr_nonnull(b);
    size_t n;
    while ((n = fread(b + len, 1, cap - len, fp)) > 0) {
        len += n;
        if (len == cap) {
            cap *= 2;
            b = realloc(b, cap);
            ck_assert_ptr_nonnull(b);
        }
    }
    ck_assert_int_eq(ferror(fp), 0);
    fclose(fp);
    *size = len;
    return b;
}

/* `msg` ends with ": " and the formatted text: the actor's own message,
 * after the host's prefix, exactly. */
static void assert_actor_message(const char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void assert_actor_message(const char *msg, const char *fmt, ...)
{
    char want[2048] = ": ";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want + 2, sizeof want - 2, fmt, ap);
    va_end(ap);
    size_t n = strlen(msg), m = strlen(want);
    if (n < m || strcmp(msg + n - m, want) != 0)
        ck_abort_msg("message\n  '%s'\ndoes not end with\n  '%s'", msg, want);
}

#define assert_contains(msg, needle)                                                              \
    do {                                                                                          \
        const char *m_ = (msg), *n_ = (needle);                                                   \
        if (!strstr(m_, n_))                                                                      \
            ck_abort_msg("%s:%d: message '%s' lacks '%s'", __FILE__, __LINE__, m_, n_);             \
    } while (0)

#define assert_ends_with(msg, tail)                                                               \
    do {                                                                                          \
        const char *m_ = (msg), *t_ = (tail);                                                     \
        size_t mn_ = strlen(m_), tn_ = strlen(t_);                                                \
        if (mn_ < tn_ || strcmp(m_ + mn_ - tn_, t_) != 0)                                         \
            ck_abort_msg("%s:%d: message '%s' does not end with '%s'", __FILE__, __LINE__, m_, t_); \
    } while (0)

/* One actor instance with its library and configuration folder. */
typedef struct fixture {
    tusk_actor_lib_t *lib;
    tusk_actor_t *actor;
    char dir[256];
    tusk_error_t err;
} fx_t;

/* Load actor `name` as `cls`, write its parameters (`kv`: key, value, ...,
 * NULL) for instance `index` of `instances`, create it. Returns what
 * tusk_actor_new returned (fx->err holds the message). */
static int fx_open(fx_t *fx, const char *name, tusk_actor_class_t cls, unsigned instances, unsigned index,
                   const char *const *kv)
{
    memset(fx, 0, sizeof *fx);
    char *path = lib_path(name);
    int rc = tusk_actor_lib_open(&fx->lib, path, cls, &fx->err);
    ck_assert_msg(rc == TUSK_OK, "%s", fx->err.message);
    free(path);
    tu_make_dir(fx->dir, sizeof fx->dir);
    const char *keys[16], *values[16];
    unsigned n = 0;
    for (; kv && kv[2 * n]; n++) {
        ck_assert_uint_lt(n, 16);
        keys[n] = kv[2 * n];
        values[n] = kv[2 * n + 1];
    }
    tusk_actor_spec_t spec = {.name = name,
                              .actor_class = cls,
                              .hostname = "localhost",
                              .library = name,
                              .instances = instances,
                              .n_params = n,
                              .param_keys = keys,
                              .param_values = values};
    rc = tusk_actor_write_config(fx->dir, &spec, index, &fx->err);
    ck_assert_msg(rc == TUSK_OK, "%s", fx->err.message);
    return tusk_actor_new(&fx->actor, fx->lib, name, index, fx->dir, &fx->err);
}

/* fx_open that must succeed, then initialise and start. */
static void fx_start(fx_t *fx, const char *name, tusk_actor_class_t cls, unsigned instances, unsigned index,
                     const char *const *kv)
{
    int rc = fx_open(fx, name, cls, instances, index, kv);
    ck_assert_msg(rc == TUSK_OK, "%s", fx->err.message);
    ck_assert_msg(tusk_actor_initialise(fx->actor, &fx->err) == TUSK_OK, "%s", fx->err.message);
    ck_assert_msg(tusk_actor_start(fx->actor, &fx->err) == TUSK_OK, "%s", fx->err.message);
}

static void fx_close(fx_t *fx)
{
    if (fx->actor)
        ck_assert_msg(tusk_actor_destroy(&fx->actor, &fx->err) == TUSK_OK, "%s", fx->err.message);
    tusk_actor_lib_close(&fx->lib);
    tu_remove_dir(fx->dir);
}

/* Registration of `name` with `kv` fails with a configuration error whose
 * actor message is `want`. */
static void expect_register_error(const char *name, tusk_actor_class_t cls, unsigned instances,
                                  const char *const *kv, const char *want)
{
    fx_t fx;
    ck_assert_int_eq(fx_open(&fx, name, cls, instances, 0, kv), TUSK_EACTOR);
    ck_assert_ptr_null(fx.actor);
    assert_contains(fx.err.message, "process_register_dir failed with status 2 (bad configuration)");
    assert_actor_message(fx.err.message, "%s", want);
    fx_close(&fx);
}

/* A file of n random frames; the offsets and keys of each. */
typedef struct sample {
    uint8_t *data;
    size_t size;
    unsigned n;
    size_t *offsets;
    adf_key_t *keys;
    uint32_t largest;
} sample_t;

static void make_sample(sample_t *s, unsigned n, size_t max_payload)
{
    size_t cap = n * (max_payload + 4 * ADF_KEY_SIZE) + 64;
    s->data = malloc(cap);
    s->offsets = malloc((n + 1) * sizeof *s->offsets);
    s->keys = malloc(n * sizeof *s->keys);
    ck_assert(s->data && s->offsets && s->keys);
    s->n = n;
    s->size = tu_make_frames(s->data, cap, n, max_payload, s->offsets, s->keys);
    s->offsets[n] = s->size;
    s->largest = 0;
    for (unsigned i = 0; i < n; i++)
        if (s->keys[i].length > s->largest)
            s->largest = s->keys[i].length;
}

static void free_sample(sample_t *s)
{
    free(s->data);
    free(s->offsets);
    free(s->keys);
}

/* Index of the frame starting at `offset`, or -1 when no frame does. */
static int frame_at(const sample_t *s, size_t offset)
{
    unsigned lo = 0, hi = s->n + 1;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (s->offsets[mid] < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo <= s->n && s->offsets[lo] == offset ? (int)lo : -1;
}

#define CANARY 16

/* Run a started producer to its end with output buffers of `size` bytes;
 * check every buffer against `s` (repeated `passes` times). */
static void replay_and_check(fx_t *fx, const sample_t *s, unsigned passes, uint32_t size)
{
    uint8_t *out = malloc(size + CANARY);
    size_t total = 0, expect_total = s->size * passes;
    uint8_t *expect = malloc(expect_total + 1);
    ck_assert(out && expect);
    for (unsigned p = 0; p < passes; p++)
        memcpy(expect + p * s->size, s->data, s->size);
    unsigned ends = 0;
    for (unsigned call = 0; ends == 0; call++) {
        tu_check(call <= s->n * passes + 1);
        memset(out, 0xA5, size + CANARY);
        uint32_t used = 0;
        tusk_flow_t flow;
        int rc = tusk_actor_produce(fx->actor, out, size, &used, &flow, &fx->err);
        if (rc != TUSK_OK)
            ck_abort_msg("size %u call %u: %s", (unsigned)size, call, fx->err.message);
        for (unsigned i = 0; i < CANARY; i++)
            tu_check(out[size + i] == 0xA5);
        if (flow == TUSK_FLOW_END)
            ends++;
        /* Never an empty buffer: the last data comes with END_OF_DATA. */
        tu_check(used > 0);
        /* Exactly the next bytes of the file, ending on a frame boundary. */
        tu_check(total + used <= expect_total);
        if (memcmp(out, expect + total, used) != 0)
            ck_abort_msg("size %u call %u: output differs from the file at offset %zu", (unsigned)size, call,
                         total);
        total += used;
        int next = frame_at(s, total % s->size);
        if (next < 0)
            ck_abort_msg("size %u call %u: buffer ends mid-frame (file offset %zu)", (unsigned)size, call,
                         total % s->size);
        /* A buffer that is not the last one was filled: the next frame did
         * not fit (the file's first frame follows the end of a pass). */
        if (flow != TUSK_FLOW_END) {
            size_t next_len = (unsigned)next < s->n ? s->keys[next].length : s->keys[0].length;
            if (used + next_len <= size)
                ck_abort_msg("size %u call %u: %u bytes used, yet the next frame of %zu bytes would fit",
                             (unsigned)size, call, (unsigned)used, next_len);
        }
    }
    ck_assert_uint_eq(ends, 1);
    ck_assert_uint_eq(total, expect_total);
    free(expect);
    free(out);
}

/* ---- file_producer -------------------------------------------------------------- */

START_TEST(producer_replays_file_exactly)
{
    sample_t s;
    make_sample(&s, 300, 400);
    char dir[256], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/run.adf", dir);
    write_bytes(file, s.data, s.size);

    uint32_t sizes[40];
    unsigned n = 0;
    sizes[n++] = s.largest;
    sizes[n++] = s.largest + 1;
    sizes[n++] = s.largest + ADF_KEY_SIZE - 1;
    sizes[n++] = s.largest + ADF_KEY_SIZE;
    sizes[n++] = 2 * s.largest;
    sizes[n++] = 4096;
    sizes[n++] = (uint32_t)s.size - 1;
    sizes[n++] = (uint32_t)s.size;
    sizes[n++] = (uint32_t)s.size + 1;
    sizes[n++] = 1u << 20;
    while (n < 40)
        sizes[n++] = s.largest + tu_below(3 * s.largest);

    const char *kv[] = {"file", file, NULL};
    for (unsigned i = 0; i < n; i++) {
        fx_t a;
        fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv);
        replay_and_check(&a, &s, 1, sizes[i]);
        /* A new run rewinds the file. */
        if (i % 8 == 0) {
            ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
            ck_assert_int_eq(tusk_actor_reset(a.actor, &a.err), TUSK_OK);
            ck_assert_int_eq(tusk_actor_initialise(a.actor, &a.err), TUSK_OK);
            ck_assert_int_eq(tusk_actor_start(a.actor, &a.err), TUSK_OK);
            replay_and_check(&a, &s, 1, sizes[(i + 1) % n]);
        }
        ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
        fx_close(&a);
    }
    tu_remove_dir(dir);
    free_sample(&s);
}
END_TEST

START_TEST(producer_repeat_and_empty_file)
{
    sample_t s;
    make_sample(&s, 40, 200);
    char dir[256], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/run.adf", dir);
    write_bytes(file, s.data, s.size);
    const char *kv[] = {"file", file, "repeat", "3", NULL};
    fx_t a;
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv);
    replay_and_check(&a, &s, 3, s.largest + 7);
    fx_close(&a);

    /* An empty file: END_OF_DATA at once, however many passes. */
    write_bytes(file, "", 0);
    const char *kv2[] = {"file", file, "repeat", "1000000000", NULL};
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv2);
    uint8_t out[256];
    uint32_t used = 99;
    tusk_flow_t flow;
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, sizeof out, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_END);
    ck_assert_uint_eq(used, 0);
    fx_close(&a);
    tu_remove_dir(dir);
    free_sample(&s);
}
END_TEST

/* timestamps=continue: every pass after the first moves forward by the
 * first's spans (timestamps 100..200 -> 101 ticks; events 5..7 -> 3), in
 * buffers that split the passes anywhere; asis leaves them; a timestamp
 * carried past 2^48 - 1 fails naming the frame. */
static void continued_keys(const char *file, const char *mode, unsigned repeat, uint32_t size, char *text,
                           size_t cap)
{
    char reps[16];
    snprintf(reps, sizeof reps, "%u", repeat);
    const char *kv[] = {"file", file, "repeat", reps, "timestamps", mode, NULL};
    fx_t a;
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv);
    uint8_t out[1024];
    size_t len = 0;
    text[0] = '\0';
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert_ptr_nonnull(r);
    for (tusk_flow_t flow = TUSK_FLOW_DONE; flow != TUSK_FLOW_END;) {
        uint32_t used = 0;
        ck_assert_msg(tusk_actor_produce(a.actor, out, size, &used, &flow, &a.err) == TUSK_OK, "%s", a.err.message);
        adf_frame_t f;
        adf_reader_reset(r, out, used, 0);
        while (adf_reader_next(r, &f) == ADF_OK) {
            len += (size_t)snprintf(text + len, cap - len, "%s%llu/%u", len ? " " : "",
                                    (unsigned long long)f.key.timestamp, (unsigned)f.key.event);
            ck_assert_uint_lt(len, cap);
            ck_assert_uint_eq(f.payload_size, 8);
        }
    }
    adf_reader_destroy(&r);
    fx_close(&a);
}

START_TEST(producer_continues_timestamps)
{
    uint8_t buf[256], payload[8];
    tu_fill(payload, sizeof payload);
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_PSA, 6, 150, payload, 8);
    n += tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, 5, 100, payload, 8);
    n += tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, 7, 200, payload, 8);
    char dir[256], file[512], text[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/keys.adf", dir);
    write_bytes(file, buf, n);
    const uint32_t frame = (uint32_t)(n / 3);
    const uint32_t sizes[] = {frame, 2 * frame, 1024};
    for (unsigned i = 0; i < 3; i++) {
        continued_keys(file, "continue", 3, sizes[i], text, sizeof text);
        ck_assert_str_eq(text, "150/6 100/5 200/7 251/9 201/8 301/10 352/12 302/11 402/13");
        continued_keys(file, "asis", 2, sizes[i], text, sizeof text);
        ck_assert_str_eq(text, "150/6 100/5 200/7 150/6 100/5 200/7");
    }
    /* Event numbers wrap modulo 2^32; a timestamp past 2^48 - 1 fails. */
    n = tu_put_frame(buf, ADF_TYPE_DATA_PSA, UINT32_MAX, ADF_TIMESTAMP_MAX - 1, payload, 8);
    n += tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, UINT32_MAX - 1, ADF_TIMESTAMP_MAX - 2, payload, 8);
    write_bytes(file, buf, n);
    const char *kv[] = {"file", file, "repeat", "2", "timestamps", "continue", NULL};
    fx_t a;
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv);
    uint8_t out[1024];
    uint32_t used;
    tusk_flow_t flow;
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, (uint32_t)n, &used, &flow, &a.err), TUSK_OK);
    ck_assert_uint_eq(used, n);
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, sizeof out, &used, &flow, &a.err), TUSK_EACTOR);
    assert_actor_message(a.err.message,
                         "%s (pass 2 of 2): timestamps=continue: the frame at offset 0, timestamp 281474976710654, "
                         "moved by 2 ticks would pass the largest timestamp 281474976710655; delivered before it: 2 "
                         "frames (%zu bytes), the %zu bytes from offset 0 to the end of the file were not",
                         file, n, n);
    fx_close(&a);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(producer_frame_larger_than_buffer)
{
    uint8_t buf[1024], payload[600];
    tu_fill(payload, sizeof payload);
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_PSA, 1, 10, payload, 80);
    size_t big = n;
    n += tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, 2, 20, payload, 500);
    n += tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, 3, 30, payload, 10);
    char dir[256], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/big.adf", dir);
    write_bytes(file, buf, n);
    const char *kv[] = {"file", file, NULL};

    /* The big frame did not fit the rest of a larger buffer, and then
     * meets a smaller one... */
    fx_t a;
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv);
    uint8_t out[600];
    uint32_t used;
    tusk_flow_t flow;
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, 600, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_DONE);
    ck_assert_uint_eq(used, 100);
    ck_assert_int_eq(memcmp(out, buf, 100), 0);
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, 300, &used, &flow, &a.err), TUSK_EACTOR);
    assert_contains(a.err.message, "process_block failed on buffer 2 with status 3 (malformed input data)");
    assert_actor_message(a.err.message,
                         "%s: the frame at offset %zu is 520 bytes, larger than the whole output buffer of 300 "
                         "bytes (give the producer a larger <size>); delivered before it: 1 frame (100 bytes), the "
                         "550 bytes from offset 100 to the end of the file were not",
                         file, big);
    fx_close(&a);

    /* ... or comes after a frame that fits, in the same call: that frame
     * goes out first, the next call fails. */
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv);
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, 300, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_DONE);
    ck_assert_uint_eq(used, 100);
    ck_assert_int_eq(memcmp(out, buf, 100), 0);
    for (int again = 0; again < 2; again++) {
        ck_assert_int_eq(tusk_actor_produce(a.actor, out, 300, &used, &flow, &a.err), TUSK_EACTOR);
        assert_actor_message(a.err.message,
                             "%s: the frame at offset 100 is 520 bytes, larger than the whole output buffer of 300 "
                             "bytes (give the producer a larger <size>); delivered before it: 1 frame (100 bytes), "
                             "the 550 bytes from offset 100 to the end of the file were not",
                             file);
    }
    fx_close(&a);
    tu_remove_dir(dir);
}
END_TEST

/* good | corrupt key | good good: stop fails at the corrupt frame, resync
 * skips it. */
START_TEST(producer_malformed_frames)
{
    uint8_t buf[512];
    size_t a1 = tu_put_frame(buf, ADF_TYPE_DATA_PSA, 1, 10, "0123456789", 10);
    size_t bad = a1;
    size_t b1 = tu_put_frame(buf + a1, ADF_TYPE_DATA_PSA, 2, 20, "abcdefghij", 10);
    buf[bad + 7] = 0x11; /* class byte */
    size_t c = a1 + b1;
    c += tu_put_frame(buf + c, ADF_TYPE_DATA_CRYSTAL, 3, 30, "ABCDEFGHIJKLMNOPQRST", 20);
    c += tu_put_frame(buf + c, ADF_TYPE_META_EOF, 4, 40, NULL, 0);
    char dir[256], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/bad.adf", dir);
    write_bytes(file, buf, c);

    const char *stop[] = {"file", file, NULL};
    fx_t a;
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, stop);
    uint8_t out[256];
    uint32_t used;
    tusk_flow_t flow;
    /* The good frame before the corrupt one still goes out. */
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, sizeof out, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_DONE);
    ck_assert_uint_eq(used, a1);
    ck_assert_int_eq(memcmp(out, buf, a1), 0);
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, sizeof out, &used, &flow, &a.err), TUSK_EACTOR);
    assert_contains(a.err.message, "on buffer 2 with status 3 (malformed input data)");
    char want[1024];
    snprintf(want, sizeof want, ": %s: offset %zu: malformed key", file, bad);
    assert_contains(a.err.message, want);
    snprintf(want, sizeof want, "; delivered before it: 1 frame (%zu bytes), the %zu bytes from offset %zu to the end "
             "of the file were not", a1, c - bad, bad);
    assert_ends_with(a.err.message, want);
    fx_close(&a);

    const char *resync[] = {"file", file, "on_error", "resync", NULL};
    fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, resync);
    ck_assert_int_eq(tusk_actor_produce(a.actor, out, sizeof out, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_END);
    ck_assert_uint_eq(used, c - b1);
    ck_assert_int_eq(memcmp(out, buf, a1), 0);
    ck_assert_int_eq(memcmp(out + a1, buf + a1 + b1, c - a1 - b1), 0);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    fx_close(&a);
    tu_remove_dir(dir);
}
END_TEST

/* A file of valid frames damaged at frame k (cut inside it, or its key
 * corrupted), replayed with on_error=stop through random buffer sizes:
 * the buffers delivered hold exactly the file's bytes before frame k, and
 * the failure accounts for the whole file (the issue: 248 valid frames
 * before a truncation were lost with the buffer that held them). */
START_TEST(producer_keeps_frames_before_damage)
{
    char dir[256], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/damaged.adf", dir);
    for (int round = 0; round < 60; round++) {
        sample_t s;
        make_sample(&s, 20 + tu_below(300), 1 + tu_below(400));
        unsigned k = tu_below(s.n);
        size_t at = s.offsets[k], size = s.size;
        bool cut = tu_below(2) == 0;
        if (cut)
            size = at + 1 + tu_below(s.keys[k].length - 1); /* inside frame k */
        else
            s.data[at + 7] = 0x00; /* its key's class byte */
        write_bytes(file, s.data, size);
        const char *repeat = tu_below(2) ? "1" : "3";
        const char *kv[] = {"file", file, "repeat", repeat, NULL};
        fx_t a;
        fx_start(&a, "file_producer", TUSK_PRODUCER, 1, 0, kv);
        uint32_t out_size = s.largest + tu_below(4 * s.largest);
        uint8_t *out = malloc(out_size);
        ck_assert_ptr_nonnull(out);
        size_t total = 0;
        unsigned calls = 0;
        int rc;
        tusk_flow_t flow = TUSK_FLOW_DONE;
        uint32_t used;
        while ((rc = tusk_actor_produce(a.actor, out, out_size, &used, &flow, &a.err)) == TUSK_OK) {
            tu_check(flow == TUSK_FLOW_DONE);
            tu_check(used > 0);
            tu_check(total + used <= at);
            tu_check(memcmp(out, s.data + total, used) == 0);
            total += used;
            tu_check(++calls <= s.n);
        }
        /* Every frame before the damage went out, nothing after it. */
        ck_assert_int_eq(rc, TUSK_EACTOR);
        ck_assert_uint_eq(total, at);
        char want[1024];
        snprintf(want, sizeof want, ": %s%s: offset %zu: %s", file, repeat[0] == '3' ? " (pass 1 of 3)" : "", at,
                 cut ? (size - at < ADF_KEY_SIZE ? "incomplete key" : "truncated frame") : "malformed key");
        assert_contains(a.err.message, want);
        snprintf(want, sizeof want, "; delivered before it: %u frame%s (%zu bytes), the %zu bytes from offset %zu to "
                 "the end of the file were not", k, k == 1 ? "" : "s", at, size - at, at);
        assert_ends_with(a.err.message, want);
        /* It stays failed. */
        ck_assert_int_eq(tusk_actor_produce(a.actor, out, out_size, &used, &flow, &a.err), TUSK_EACTOR);
        assert_ends_with(a.err.message, want);
        free(out);
        fx_close(&a);
        free_sample(&s);
    }
    unlink(file);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(producer_register_errors)
{
    const char *missing[] = {"file", "/nonexistent-tusk-dir/run.adf", NULL};
    expect_register_error("file_producer", TUSK_PRODUCER, 1, missing,
                          "parameter 'file': /nonexistent-tusk-dir/run.adf: cannot open: No such file or directory");
    const char *none[] = {"repeat", "2", NULL};
    expect_register_error("file_producer", TUSK_PRODUCER, 1, none,
                          "missing required parameter 'file' (the ADF file to replay)");
    const char *empty[] = {"file", "", NULL};
    expect_register_error("file_producer", TUSK_PRODUCER, 1, empty,
                          "missing required parameter 'file' (the ADF file to replay)");
    const char *typo[] = {"file", "/dev/null", "repaet", "2", NULL};
    expect_register_error("file_producer", TUSK_PRODUCER, 1, typo,
                          "file_producer: unknown parameter 'repaet' (known: file, on_error, repeat, timestamps)");
    const char *policy[] = {"file", "/dev/null", "on_error", "skip", NULL};
    expect_register_error("file_producer", TUSK_PRODUCER, 1, policy,
                          "parameter 'on_error': 'skip' is not one of: stop, resync");
    const char *zero[] = {"file", "/dev/null", "repeat", "0", NULL};
    expect_register_error("file_producer", TUSK_PRODUCER, 1, zero,
                          "parameter 'repeat': 0 is outside [1, 18446744073709551615]");
    const char *text[] = {"file", "/dev/null", "repeat", "twice", NULL};
    expect_register_error("file_producer", TUSK_PRODUCER, 1, text,
                          "parameter 'repeat': 'twice' is not an unsigned integer");
}
END_TEST

/* ---- passthrough ----------------------------------------------------------------- */

/* Filter `in` through a started filter with outputs of `size` bytes,
 * appending to `acc` (at *acc_len, acc_cap bytes in all); returns the
 * number of calls. */
static unsigned filter_all(fx_t *fx, unsigned input, const uint8_t *in, size_t in_size, uint32_t size,
                           uint8_t *acc, size_t acc_cap, size_t *acc_len)
{
    uint8_t *out = malloc(size + CANARY);
    uint8_t *copy = malloc(in_size ? in_size : 1);
    ck_assert(out && copy);
    memcpy(copy, in, in_size);
    unsigned calls = 0;
    tusk_flow_t flow = TUSK_FLOW_MORE;
    while (flow == TUSK_FLOW_MORE) {
        tu_check(calls++ <= in_size / ADF_KEY_SIZE + 1);
        memset(out, 0xA5, size + CANARY);
        uint32_t used;
        int rc = tusk_actor_filter(fx->actor, input, copy, (uint32_t)in_size, out, size, &used, &flow, &fx->err);
        if (rc != TUSK_OK)
            ck_abort_msg("size %u: %s", (unsigned)size, fx->err.message);
        for (unsigned i = 0; i < CANARY; i++)
            tu_check(out[size + i] == 0xA5);
        tu_check(*acc_len + used <= acc_cap);
        memcpy(acc + *acc_len, out, used);
        *acc_len += used;
    }
    tu_check(memcmp(copy, in, in_size) == 0); /* the input is left alone */
    free(copy);
    free(out);
    return calls;
}

START_TEST(passthrough_copies_through_small_outputs)
{
    sample_t s;
    make_sample(&s, 200, 300);
    uint8_t *acc = malloc(2 * s.size);
    ck_assert_ptr_nonnull(acc);
    fx_t a;
    fx_start(&a, "passthrough", TUSK_FILTER, 1, 0, NULL);
    uint32_t sizes[] = {s.largest, s.largest + 1, s.largest + 33, 2 * s.largest, (uint32_t)s.size, 1u << 16};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t len = 0;
        unsigned calls = filter_all(&a, 0, s.data, s.size, sizes[i], acc, 2 * s.size, &len);
        ck_assert_uint_eq(len, s.size);
        ck_assert_int_eq(memcmp(acc, s.data, s.size), 0);
        if (sizes[i] == s.largest)
            ck_assert_uint_gt(calls, 10);
    }
    /* Two sources, alternating (fan-in), with random output sizes. */
    size_t len = 0, half = s.offsets[s.n / 2];
    for (int round = 0; round < 20; round++) {
        len = 0;
        uint32_t size = s.largest + tu_below(s.largest);
        filter_all(&a, 0, s.data, half, size, acc, 2 * s.size, &len);
        filter_all(&a, 1, s.data + half, s.size - half, size, acc, 2 * s.size, &len);
        ck_assert_uint_eq(len, s.size);
        ck_assert_int_eq(memcmp(acc, s.data, s.size), 0);
    }
    /* An empty input gives an empty output. */
    len = 0;
    ck_assert_uint_eq(filter_all(&a, 0, s.data, 0, 64, acc, 2 * s.size, &len), 1);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    fx_close(&a);
    free(acc);
    free_sample(&s);
}
END_TEST

/* forward=true: the framing is checked, then the input is handed on
 * unchanged (nothing written to the output buffer). */
START_TEST(passthrough_forwards)
{
    uint8_t in[256], out[256];
    size_t n = tu_put_frame(in, ADF_TYPE_DATA_PSA, 1, 2, "0123456789", 10);
    n += tu_put_frame(in + n, ADF_TYPE_DATA_PSA, 3, 4, "abcdefghij", 10);
    const char *kv[] = {"forward", "true", NULL};
    fx_t a;
    fx_start(&a, "passthrough", TUSK_FILTER, 1, 0, kv);
    uint32_t used = 99;
    tusk_flow_t flow;
    memset(out, 0xA5, sizeof out);
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)n, out, 16, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_FORWARD);
    ck_assert_uint_eq(used, 0);
    for (size_t i = 0; i < sizeof out; i++)
        tu_check(out[i] == 0xA5);
    /* Still checked: a truncated buffer is refused, with its offset, after
     * the frames before the damage were copied out... */
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)n - 3, out, 64, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_MORE);
    ck_assert_uint_eq(used, 30);
    ck_assert_int_eq(memcmp(out, in, 30), 0);
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)n - 3, out, 64, &used, &flow, &a.err),
                     TUSK_EACTOR);
    assert_actor_message(a.err.message,
                         "input buffer of 57 bytes: offset 30: truncated frame, key says 30 bytes but only 27 remain; "
                         "passed on before it: 1 frame (30 bytes), not passed on: the 27 bytes from offset 30 to the "
                         "end of the buffer");
    /* ... unless they cannot be: a frame before the damage is larger than
     * the output buffer (which forwarding never needed). */
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)n - 3, out, 16, &used, &flow, &a.err),
                     TUSK_EACTOR);
    assert_actor_message(a.err.message,
                         "input buffer of 57 bytes: offset 30: truncated frame, key says 30 bytes but only 27 remain; "
                         "passed on before it: 0 frames (0 bytes), not passed on: the 57 bytes from offset 0 to the "
                         "end of the buffer (a frame before it, of 30 bytes, is larger than the whole output buffer "
                         "of 16 bytes)");
    /* Forwarding goes on after a failure. */
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)n, out, 16, &used, &flow, &a.err), TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_FORWARD);
    fx_close(&a);
    const char *bad[] = {"forward", "sometimes", NULL};
    expect_register_error("passthrough", TUSK_FILTER, 1, bad,
                          "parameter 'forward': 'sometimes' is not a boolean (true/false, yes/no, on/off, 1/0)");
}
END_TEST

START_TEST(passthrough_rejects_malformed_input)
{
    uint8_t in[256], out[256];
    size_t n = tu_put_frame(in, ADF_TYPE_DATA_PSA, 1, 2, "0123456789", 10);
    size_t m = tu_put_frame(in + n, ADF_TYPE_DATA_PSA, 3, 4, "abcdefghij", 10);
    fx_t a;
    fx_start(&a, "passthrough", TUSK_FILTER, 1, 0, NULL);
    uint32_t used;
    tusk_flow_t flow;
    /* Truncated second frame: the first goes out, then the failure. */
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)(n + m - 3), out, sizeof out, &used, &flow, &a.err),
                     TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_MORE);
    ck_assert_uint_eq(used, n);
    ck_assert_int_eq(memcmp(out, in, n), 0);
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)(n + m - 3), out, sizeof out, &used, &flow, &a.err),
                     TUSK_EACTOR);
    assert_contains(a.err.message, "actor passthrough[0]: process_block failed on buffer 2 with status 3");
    assert_actor_message(a.err.message,
                         "input buffer of 57 bytes: offset 30: truncated frame, key says 30 bytes but only 27 remain; "
                         "passed on before it: 1 frame (30 bytes), not passed on: the 27 bytes from offset 30 to the "
                         "end of the buffer");
    /* Bad class byte in the first frame: nothing to pass on. */
    in[7] = 0x00;
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)(n + m), out, sizeof out, &used, &flow, &a.err),
                     TUSK_EACTOR);
    assert_contains(a.err.message, ": input buffer of 60 bytes: offset 0: malformed key");
    assert_ends_with(a.err.message, "; passed on before it: 0 frames (0 bytes), not passed on: the 60 bytes from "
                                    "offset 0 to the end of the buffer");
    in[7] = 0xFA;
    /* A full output: more output follows. */
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)(n + m), out, 40, &used, &flow, &a.err),
                     TUSK_OK);
    ck_assert_int_eq(flow, TUSK_FLOW_MORE);
    ck_assert_uint_eq(used, 30);
    /* A different input while one is pending. */
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)n, out, 40, &used, &flow, &a.err), TUSK_EACTOR);
    assert_contains(a.err.message, "status 6");
    assert_actor_message(a.err.message,
                         "called with a new input of 30 bytes while 30 bytes of the previous one (60 bytes) were "
                         "still to be copied: after 'more output' the same input must come again");
    ck_assert_int_eq(tusk_actor_filter(a.actor, 0, in, (uint32_t)(n + m), out, 25, &used, &flow, &a.err),
                     TUSK_EACTOR);
    /* A frame larger than the whole output buffer. */
    assert_actor_message(a.err.message,
                         "input offset 0: frame of 30 bytes is larger than the whole output buffer of 25 bytes");
    fx_close(&a);

    const char *typo[] = {"mode", "fast", NULL};
    expect_register_error("passthrough", TUSK_FILTER, 1, typo, "passthrough: unknown parameter 'mode' (known: forward)");
}
END_TEST

/* A buffer of valid frames damaged at frame k, through passthrough
 * (copying or forwarding) with random output sizes: the outputs hold
 * exactly the frames before frame k, and the failure accounts for the
 * whole input. */
START_TEST(passthrough_keeps_frames_before_damage)
{
    for (int round = 0; round < 60; round++) {
        sample_t s;
        make_sample(&s, 5 + tu_below(200), 1 + tu_below(300));
        unsigned k = tu_below(s.n);
        size_t at = s.offsets[k], size = s.size;
        bool cut = tu_below(2) == 0;
        if (cut)
            size = at + 1 + tu_below(s.keys[k].length - 1);
        else
            s.data[at + 7] = 0x00;
        bool forward = tu_below(2) == 0;
        const char *kv[] = {"forward", forward ? "true" : "false", NULL};
        fx_t a;
        fx_start(&a, "passthrough", TUSK_FILTER, 1, 0, kv);
        uint32_t out_size = s.largest + tu_below(4 * s.largest);
        uint8_t *out = malloc(out_size);
        ck_assert_ptr_nonnull(out);
        size_t total = 0;
        unsigned calls = 0;
        uint32_t used;
        tusk_flow_t flow;
        int rc;
        while ((rc = tusk_actor_filter(a.actor, 0, s.data, (uint32_t)size, out, out_size, &used, &flow, &a.err)) ==
               TUSK_OK) {
            tu_check(flow == TUSK_FLOW_MORE);
            tu_check(total + used <= at);
            tu_check(memcmp(out, s.data + total, used) == 0);
            total += used;
            tu_check(++calls <= s.n);
        }
        ck_assert_int_eq(rc, TUSK_EACTOR);
        ck_assert_uint_eq(total, at);
        char want[1024];
        snprintf(want, sizeof want, ": input buffer of %zu bytes: offset %zu: %s", size, at,
                 cut ? (size - at < ADF_KEY_SIZE ? "incomplete key" : "truncated frame") : "malformed key");
        assert_contains(a.err.message, want);
        snprintf(want, sizeof want, "; passed on before it: %u frame%s (%zu bytes), not passed on: the %zu bytes from "
                 "offset %zu to the end of the buffer", k, k == 1 ? "" : "s", at, size - at, at);
        assert_ends_with(a.err.message, want);
        /* The next input is taken afresh. */
        used = 0;
        ck_assert_int_eq(tusk_actor_filter(a.actor, 0, s.data, (uint32_t)at, out, out_size, &used, &flow, &a.err),
                         TUSK_OK);
        if (forward && at > 0)
            ck_assert_int_eq(flow, TUSK_FLOW_FORWARD);
        free(out);
        fx_close(&a);
        free_sample(&s);
    }
}
END_TEST

/* ---- filters that make an output from each input: damaged inputs ---------- */

/* Filter `in` (whole) through a started filter into acc, nothing damaged. */
static void output_of(fx_t *fx, const uint8_t *in, size_t size, uint8_t *acc, size_t cap, size_t *len)
{
    *len = 0;
    if (size > 0)
        filter_all(fx, 0, in, size, (uint32_t)cap, acc, cap, len);
}

/* The largest frame of a buffer of frames. */
static uint32_t largest_frame(const uint8_t *buf, size_t size)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert_ptr_nonnull(r);
    adf_reader_reset(r, size ? buf : NULL, size, 0);
    adf_frame_t f;
    uint32_t largest = 0;
    while (adf_reader_next(r, &f) == ADF_OK)
        largest = f.key.length > largest ? f.key.length : largest;
    adf_reader_destroy(&r);
    return largest;
}

/* A filter `name` (psa, tracking: each input analysed whole) given `in`
 * (`size` bytes) damaged at frame k, at offset `at`: what goes out is
 * exactly what the frames before it give alone, through output buffers of
 * random sizes, then the failure names frame k, its offset (in `what`)
 * and accounts for the input; the next input is taken afresh. */
static void check_damaged_input(const char *name, const char *const *kv, const uint8_t *in, size_t size, size_t at,
                                unsigned k, const char *what)
{
    size_t cap = 4 * size + (1u << 20);
    uint8_t *want = malloc(cap), *got = malloc(cap);
    ck_assert(want && got);
    size_t want_len, got_len = 0;
    fx_t a;
    fx_start(&a, name, TUSK_FILTER, 1, 0, kv);
    output_of(&a, in, at, want, cap, &want_len);
    fx_close(&a);
    tu_check(at == 0 || want_len > 0);

    fx_t b;
    fx_start(&b, name, TUSK_FILTER, 1, 0, kv);
    uint32_t largest = largest_frame(want, want_len);
    uint32_t out_size = largest + tu_below(3 * largest + 64) + ADF_KEY_SIZE;
    uint8_t *out = malloc(out_size), *copy = malloc(size ? size : 1);
    ck_assert(out && copy);
    memcpy(copy, in, size);
    int rc;
    uint32_t used;
    tusk_flow_t flow;
    unsigned calls = 0;
    while ((rc = tusk_actor_filter(b.actor, 0, copy, (uint32_t)size, out, out_size, &used, &flow, &b.err)) ==
           TUSK_OK) {
        tu_check(flow == TUSK_FLOW_MORE);
        tu_check(used > 0);
        tu_check(got_len + used <= want_len);
        memcpy(got + got_len, out, used);
        got_len += used;
        tu_check(++calls <= want_len / ADF_KEY_SIZE + 2);
    }
    ck_assert_int_eq(rc, TUSK_EACTOR);
    ck_assert_uint_eq(got_len, want_len);
    tu_check(memcmp(got, want, want_len) == 0);
    char want_msg[1024];
    snprintf(want_msg, sizeof want_msg, "actor %s[0]: process_block failed", name);
    assert_contains(b.err.message, want_msg);
    snprintf(want_msg, sizeof want_msg, ": input buffer of %zu bytes: frame %u: %s", size, k, what);
    assert_contains(b.err.message, want_msg);
    snprintf(want_msg, sizeof want_msg,
             "; analysed and passed on before it: %u frame%s (%zu bytes), not passed on: the %zu bytes from offset %zu "
             "to the end of the buffer",
             k, k == 1 ? "" : "s", at, size - at, at);
    assert_ends_with(b.err.message, want_msg);
    /* The next input is taken afresh. */
    output_of(&b, in, at, got, cap, &got_len);
    ck_assert_uint_eq(got_len, want_len);
    tu_check(memcmp(got, want, want_len) == 0);
    fx_close(&b);
    free(copy);
    free(out);
    free(want);
    free(got);
}

/* Damage frame k of buf (n frames at offsets[], size bytes): cut inside it
 * (kind 0) or break its key's class byte (kind 1). The new size; `what`
 * gets the reader's words. */
static size_t damage_frame(uint8_t *buf, size_t size, const size_t *offsets, unsigned k, unsigned kind, char *what,
                           size_t cap)
{
    size_t at = offsets[k], len = offsets[k + 1] - at;
    if (kind == 0) {
        size = at + 1 + tu_below((uint32_t)len - 1);
        snprintf(what, cap, "offset %zu: %s", at, size - at < ADF_KEY_SIZE ? "incomplete key" : "truncated frame");
    } else {
        buf[at + 7] = 0x00;
        snprintf(what, cap, "offset %zu: malformed key", at);
    }
    return size;
}

#define PSA_TEST_SAMPLES 20u

/* A small synthetic basis (one point a segment) for the psa actor. */
static void write_psa_basis(const char *path)
{
    det_basis_shape_t shape = {36, 37, PSA_TEST_SAMPLES, 10.0, 8.0, NULL, "check_actors"};
    det_basis_t *basis = NULL;
    tusk_error_t err;
    ck_assert_msg(det_basis_new(&basis, &shape, &err) == TUSK_OK, "%s", err.message);
    float traces[37 * PSA_TEST_SAMPLES];
    for (unsigned s = 0; s < 36; s++) {
        memset(traces, 0, sizeof traces);
        for (unsigned i = 0; i < PSA_TEST_SAMPLES; i++) {
            float ramp = i < 5 ? 0.0f : i > 12 ? 1.0f : (float)(i - 5) / 7.0f;
            traces[s * PSA_TEST_SAMPLES + i] = ramp;
            traces[36 * PSA_TEST_SAMPLES + i] = ramp;
            traces[((s + 1) % 36) * PSA_TEST_SAMPLES + i] = 0.1f * ramp * (float)(i % 3);
        }
        /* Distinct nodes of the 8 mm grid: (k + 0.5) * 8. */
        float pos[3] = {((float)(s % 6) - 2.5f) * 8.0f, ((float)(s / 6) - 2.5f) * 8.0f, 2.5f * 8.0f};
        ck_assert_msg(det_basis_add(basis, s, pos, traces, &err) == TUSK_OK, "%s", err.message);
    }
    ck_assert_msg(det_basis_save(basis, path, DET_SAMPLE_FLOAT32, &err) == TUSK_OK, "%s", err.message);
    det_basis_destroy(&basis);
}

/* n frames: data:crystal records (one hit segment each), a meta frame now
 * and then; offsets[0..n]. */
static size_t psa_input(uint8_t *buf, size_t cap, unsigned n, size_t *offsets, bool *crystal)
{
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, cap);
    adf_crystal_t *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    for (unsigned i = 0; i < n; i++) {
        offsets[i] = adf_writer_used(w);
        crystal[i] = tu_below(4) != 0;
        if (!crystal[i]) {
            adf_key_t meta = {0, 0xFA0000F1u, i, 100 + i};
            ck_assert_int_eq(adf_writer_put(w, &meta, "meta", 4), ADF_OK);
            continue;
        }
        memset(c, 0, sizeof *c);
        c->crystal_id = (uint16_t)tu_below(15);
        c->n_samples = PSA_TEST_SAMPLES;
        unsigned seg = tu_below(36);
        float e = 100.0f + (float)tu_below(1000);
        c->segment_energy[seg] = e;
        c->core_energy[0] = c->core_energy[1] = e;
        for (unsigned s = 0; s < PSA_TEST_SAMPLES; s++) {
            double ramp = s < 6 ? 0.0 : s > 13 ? 1.0 : (s - 6) / 7.0;
            c->trace[seg][s] = (int16_t)(2.0 * e * ramp);
            c->trace[36][s] = c->trace[37][s] = (int16_t)(2.0 * e * ramp);
        }
        ck_assert_int_eq(adf_crystal_encode(w, i, 1000 + i, c, NULL), ADF_OK);
    }
    offsets[n] = adf_writer_used(w);
    free(c);
    adf_writer_destroy(&w);
    return offsets[n];
}

/* The psa actor loses nothing before a damaged frame (issue 15): a buffer
 * cut inside frame k, or with its key broken, or with a data:crystal
 * there that does not decode: the data:psa of the frames before it go out,
 * then the failure names frame k. */
START_TEST(psa_keeps_frames_before_damage)
{
    char dir[256], basis[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(basis, sizeof basis, "%s/synthetic.basis", dir);
    write_psa_basis(basis);
    const char *kv[] = {"basis", basis, "backend", "reference", "threads", "1", NULL};
    size_t cap = 1u << 20;
    uint8_t *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int round = 0; round < 12; round++) {
        unsigned n = 2 + tu_below(12), k = tu_below(n), kind = tu_below(3);
        size_t offsets[16];
        bool crystal[16];
        size_t size = psa_input(buf, cap, n, offsets, crystal);
        char what[256];
        if (kind == 2 && crystal[k]) {
            /* The record's channel count (payload offset 6). */
            buf[offsets[k] + ADF_KEY_SIZE + 6] = 5;
            snprintf(what, sizeof what, "data:crystal at offset %zu: 5 channels, expected %d", offsets[k],
                     ADF_CRYSTAL_CHANNELS);
        } else {
            size = damage_frame(buf, size, offsets, k, kind % 2, what, sizeof what);
        }
        check_damaged_input("psa", kv, buf, size, offsets[k], k, what);
    }
    free(buf);
    unlink(basis);
    tu_remove_dir(dir);
}
END_TEST

/* ---- psa: the output it gave before issue 21, and its pipeline ------------- */

/* n frames into buf (bytes returned): data:crystal records of 10 to 60
 * samples (traces with a step at a random time and noise, 0 to 3 hits,
 * now and then a non-finite energy: rejected) and meta frames: now and
 * then (every 0), or all but every every-th frame (a crystal). */
static size_t psa_random_input_every(uint8_t *buf, size_t cap, unsigned n, unsigned every)
{
    adf_writer_t *w = adf_writer_new();
    adf_crystal_t *c = malloc(sizeof *c);
    ck_assert(w && c);
    adf_writer_reset(w, buf, cap);
    for (unsigned i = 0; i < n; i++) {
        if (every ? i % every != 0 : tu_below(5) == 0) {
            adf_key_t meta = {0, 0xFA0000F1u, i, 100 + i};
            ck_assert_int_eq(adf_writer_put(w, &meta, "meta", 4), ADF_OK);
            continue;
        }
        memset(c, 0, sizeof *c);
        c->crystal_id = (uint16_t)tu_below(15);
        c->n_samples = (uint16_t)(10 + tu_below(51));
        float total = 0.0f;
        for (unsigned h = tu_below(4); h > 0; h--) {
            unsigned seg = tu_below(36);
            c->segment_energy[seg] = 20.0f + (float)tu_below(1500);
            total += c->segment_energy[seg];
        }
        c->segment_energy[tu_below(36)] += (float)tu_below(20);
        c->core_energy[0] = c->core_energy[1] = total;
        if (tu_below(15) == 0)
            c->segment_energy[tu_below(36)] = NAN;
        const double edge = 2.0 + tu_uniform() * (c->n_samples - 2), rise = 1.0 + tu_below(8);
        for (unsigned ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++) {
            double amp = ch < 36 ? 2.0 * c->segment_energy[ch] + 30.0 * (tu_uniform() - 0.5) : 2.0 * total;
            for (unsigned t = 0; t < c->n_samples; t++) {
                double x = (t - edge) / rise, ramp = x <= 0.0 ? 0.0 : x >= 1.0 ? 1.0 : x;
                c->trace[ch][t] = (int16_t)(2000.0 + amp * ramp + tu_below(11) - 5.0);
            }
        }
        ck_assert_int_eq(adf_crystal_encode(w, i, 1000 + i, c, NULL), ADF_OK);
    }
    size_t used = adf_writer_used(w);
    free(c);
    adf_writer_destroy(&w);
    return used;
}

static size_t psa_random_input(uint8_t *buf, size_t cap, unsigned n)
{
    return psa_random_input_every(buf, cap, n, 0);
}

/* What the psa actor wrote for one input before issue 21, appended to
 * out: the records decoded into adf_crystal_t, analysed together by
 * psa_analyse, a data:psa frame for each one not rejected, the other
 * frames copied, in input order. */
static size_t psa_old_output(psa_engine_t *e, const psa_backend_t *be, const uint8_t *in, size_t size, uint8_t *out,
                             size_t cap)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_writer_t *w = adf_writer_new();
    adf_crystal_t *rec = malloc(64 * sizeof *rec);
    adf_psa_t *res = malloc(64 * sizeof *res);
    ck_assert(r && w && rec && res);
    adf_frame_t f;
    size_t n = 0;
    adf_reader_reset(r, size ? in : NULL, size, 0);
    while (adf_reader_next(r, &f) == ADF_OK)
        if (f.key.type == ADF_TYPE_DATA_CRYSTAL) {
            ck_assert_uint_lt(n, 64);
            ck_assert_int_eq(adf_crystal_decode(&f, &rec[n++], NULL), ADF_OK);
        }
    tusk_error_t err;
    ck_assert_msg(psa_analyse(e, be, rec, n, res, NULL, &err) == TUSK_OK, "%s", err.message);
    adf_writer_reset(w, out, cap);
    adf_reader_reset(r, size ? in : NULL, size, 0);
    size_t k = 0;
    while (adf_reader_next(r, &f) == ADF_OK) {
        if (f.key.type != ADF_TYPE_DATA_CRYSTAL)
            ck_assert_int_eq(adf_writer_put_frame(w, &f), ADF_OK);
        else if (!(res[k++].psa_status & PSA_REJECTED))
            ck_assert_int_eq(adf_psa_encode(w, f.key.event, f.key.timestamp, &res[k - 1], NULL), ADF_OK);
    }
    size_t used = adf_writer_used(w);
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(rec);
    free(res);
    return used;
}

/* Whether the input holds a record that makes a search (a hit). */
static bool psa_input_searches(psa_engine_t *e, const uint8_t *in, size_t size)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert_ptr_nonnull(r);
    adf_frame_t f;
    adf_crystal_view_t v;
    bool any = false;
    adf_reader_reset(r, size ? in : NULL, size, 0);
    while (adf_reader_next(r, &f) == ADF_OK)
        if (f.key.type == ADF_TYPE_DATA_CRYSTAL && adf_crystal_view(&f, &v, NULL) == ADF_OK &&
            psa_record_check_view(psa_engine_config(e), &v, NULL, 0) == 0)
            for (unsigned s = 0; s < 36; s++)
                any |= v.segment_energy[s] >= psa_engine_config(e)->threshold_kev;
    adf_reader_destroy(&r);
    return any;
}

/* Filter one input through the actor, output buffers of out_size, the
 * output appended to acc. */
static void psa_filter(fx_t *a, uint8_t *in, size_t size, uint32_t out_size, uint8_t *acc, size_t cap, size_t *len)
{
    uint8_t *out = malloc(out_size);
    ck_assert_ptr_nonnull(out);
    tusk_flow_t flow = TUSK_FLOW_MORE;
    unsigned calls = 0;
    while (flow == TUSK_FLOW_MORE) {
        uint32_t used = 0;
        ck_assert_msg(tusk_actor_filter(a->actor, 0, size ? in : NULL, (uint32_t)size, out, out_size, &used, &flow,
                                        &a->err) == TUSK_OK,
                      "%s", a->err.message);
        tu_check(*len + used <= cap);
        memcpy(acc + *len, out, used);
        *len += used;
        tu_check(++calls < 10000);
    }
    free(out);
}

static void psa_flush(fx_t *a, uint32_t out_size, uint8_t *acc, size_t cap, size_t *len)
{
    uint8_t *out = malloc(out_size);
    ck_assert_ptr_nonnull(out);
    tusk_flow_t flow = TUSK_FLOW_MORE;
    while (flow == TUSK_FLOW_MORE) {
        uint32_t used = 0;
        ck_assert_msg(tusk_actor_flush(a->actor, out, out_size, &used, &flow, &a->err) == TUSK_OK, "%s",
                      a->err.message);
        tu_check(*len + used <= cap);
        memcpy(acc + *len, out, used);
        *len += used;
    }
    free(out);
}

/* The psa actor, reading the records in place and (opencl) holding
 * inputs while the device searches them, writes byte for byte what it
 * wrote before issue 21 (psa_old_output: psa_analyse on the decoded
 * records, the same backend and settings): random records in 1 to 6
 * inputs (loop 1: up to 14, so that with residual rounds more inputs are
 * held than the pipeline takes at once), now and then one of 256 to 500
 * frames (with threads > 1 written in parts on threads), output buffers
 * of random sizes (straight or staged), then process_flush; with the opencl backend
 * (where there is a device) the first input that searches writes nothing
 * until the next input comes. After held inputs, an input malformed from
 * its first byte lets the held output out, then fails; one damaged at
 * frame k lets out the held output and that of the frames before k, then
 * fails. Loop 0: residual = no (one round); loop 1: residual = yes (the
 * records of several hits searched in rounds, a held input's rounds
 * taken one a call). */
START_TEST(psa_output_as_before)
{
    const bool residual = _i == 1;
    char dir[256], basis[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(basis, sizeof basis, "%s/synthetic.basis", dir);
    write_psa_basis(basis);
    tusk_error_t err;
    det_basis_t *b = NULL;
    ck_assert_msg(det_basis_load(&b, basis, NULL, &err) == TUSK_OK, "%s", err.message);
    psa_config_t cfg;
    psa_config_default(&cfg);
    cfg.residual = residual;
    /* With residual, 2 x (1 + refine) rounds: up to 10, more than the
     * PSA_JOBS_IN_FLIGHT inputs the pipeline holds at once. */
    cfg.refine = residual ? 1 + tu_below(4) : cfg.refine;
    char refine[8];
    snprintf(refine, sizeof refine, "%u", cfg.refine);
    psa_engine_t *e = NULL;
    ck_assert_msg(psa_engine_new(&e, b, &cfg, &err) == TUSK_OK, "%s", err.message);
    const size_t cap = 1u << 20;
    uint8_t *in = malloc(cap), *want = malloc(4 * cap), *got = malloc(4 * cap);
    ck_assert(in && want && got);
    static const char *const backends[] = {"reference", "fast", "opencl"};
    /* Under valgrind (CK_FORK=no: make memcheck) PoCL compiles for minutes
     * and what valgrind reports lies in LLVM and PoCL: the opencl backend
     * is left to the forked runs (and ASan/UBSan), as check_psa_cl is. */
    const char *fork_mode = getenv("CK_FORK");
    const bool memcheck = fork_mode && strcmp(fork_mode, "no") == 0;
    for (int k = 0; k < 3; k++) {
        psa_cl_t *cl = NULL;
        psa_backend_t be = k == 0 ? psa_backend_reference() : psa_backend_fast(2);
        if (k == 2 && memcheck) {
            printf("psa_output_as_before: CK_FORK=no (valgrind): the opencl backend is not tried\n");
            continue;
        }
        if (k == 2) {
            if (psa_cl_new(&cl, e, "any", 0, &err) != TUSK_OK) {
                printf("psa_output_as_before: no OpenCL device (%s): the opencl backend is not tried\n", err.message);
                continue;
            }
            be = psa_backend_cl(cl);
        }
        char threads[8];
        snprintf(threads, sizeof threads, "%u", 1 + tu_below(3));
        const char *kv[] = {"basis", basis, "backend", backends[k], "threads", threads, "device", "any",
                            "residual", residual ? "yes" : "no", "refine", refine, NULL};
        fx_t a;
        fx_start(&a, "psa", TUSK_FILTER, 1, 0, kv);
        size_t want_len = 0, got_len = 0;
        const unsigned inputs = 1 + tu_below(residual ? 14 : 6);
        bool held_seen = false;
        for (unsigned i = 0; i < inputs; i++) {
            /* Now and then an input of 256 to 500 frames, every 8th a
             * record: written on several threads (WRITE_PARALLEL_MIN). */
            size_t size = tu_below(3) == 0 ? psa_random_input_every(in, cap, 256 + tu_below(245), 8)
                                           : psa_random_input(in, cap, tu_below(30));
            want_len += psa_old_output(e, &be, in, size, want + want_len, 4 * cap - want_len);
            size_t before = got_len;
            psa_filter(&a, in, size, 256 + tu_below(4000), got, 4 * cap, &got_len);
            if (k == 2 && !held_seen && psa_input_searches(e, in, size)) {
                ck_assert_uint_eq(got_len, before); /* held: its output comes with the next input */
                held_seen = true;
            }
        }
        psa_flush(&a, 256 + tu_below(4000), got, 4 * cap, &got_len);
        ck_assert_uint_eq(got_len, want_len);
        ck_assert_msg(memcmp(got, want, want_len) == 0, "backend %s: other bytes than before", backends[k]);
        printf("psa_output_as_before: %s, residual %s, refine %u, %u inputs: %zu bytes as before\n", backends[k],
               residual ? "yes" : "no", cfg.refine, inputs, want_len);
        if (k == 2) {
            /* A held input, then one malformed from its first byte, one damaged
             * inside its second frame, one with a record too short to analyse:
             * the held output (and the first frame's), then the failure. */
            for (int bad = 0; bad < 3; bad++) {
                size_t size;
                do
                    size = psa_random_input(in, cap, 1 + tu_below(20));
                while (!psa_input_searches(e, in, size));
                want_len = psa_old_output(e, &be, in, size, want, 4 * cap);
                got_len = 0;
                psa_filter(&a, in, size, 256 + tu_below(4000), got, 4 * cap, &got_len);
                ck_assert_uint_eq(got_len, 0);
                size_t at = 0;
                if (bad == 1) { /* damaged inside its second frame: the first goes out */
                    size = psa_random_input(in, cap, 2 + tu_below(10));
                    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
                    adf_frame_t f;
                    adf_reader_reset(r, in, size, 0);
                    ck_assert_int_eq(adf_reader_next(r, &f), ADF_OK);
                    at = f.key.length;
                    adf_reader_destroy(&r);
                    want_len += psa_old_output(e, &be, in, at, want + want_len, 4 * cap - want_len);
                    in[at + 7] = 0x00; /* the second frame's key */
                } else if (bad == 2) {
                    adf_crystal_t *c = calloc(1, sizeof *c);
                    adf_writer_t *w = adf_writer_new();
                    ck_assert(c && w);
                    c->n_samples = 5;
                    c->segment_energy[3] = c->core_energy[0] = c->core_energy[1] = 100.0f;
                    adf_writer_reset(w, in, cap);
                    ck_assert_int_eq(adf_crystal_encode(w, 1, 2, c, NULL), ADF_OK);
                    size = adf_writer_used(w);
                    adf_writer_destroy(&w);
                    free(c);
                } else {
                    in[7] = 0x00;
                }
                uint8_t out[8192];
                uint32_t used;
                tusk_flow_t flow = TUSK_FLOW_MORE;
                int rc;
                while ((rc = tusk_actor_filter(a.actor, 0, in, (uint32_t)size, out, sizeof out, &used, &flow,
                                               &a.err)) == TUSK_OK) {
                    ck_assert_int_eq(flow, TUSK_FLOW_MORE);
                    memcpy(got + got_len, out, used);
                    got_len += used;
                    tu_check(got_len <= want_len);
                }
                ck_assert_int_eq(rc, TUSK_EACTOR);
                assert_contains(a.err.message, bad == 2   ? "5 samples per channel; PSA needs more than"
                                               : bad == 1 ? "frame 1: offset"
                                                          : "frame 0: offset 0: malformed key");
                ck_assert_uint_eq(got_len, want_len);
                ck_assert_msg(memcmp(got, want, want_len) == 0, "the held output before the failure");
                got_len = 0;
                psa_flush(&a, 4096, got, 4 * cap, &got_len);
                ck_assert_uint_eq(got_len, 0);
            }
        }
        fx_close(&a);
        psa_cl_destroy(&cl);
    }
    free(in);
    free(want);
    free(got);
    psa_engine_destroy(&e);
    det_basis_destroy(&b);
    unlink(basis);
    tu_remove_dir(dir);
}
END_TEST

/* n event:data:psa composites of crystals 0-14 of the demonstrator, sane
 * hits; offsets[0..n]. Frame `bad` (if < n) gets a hit of `bad_kev`. */
static size_t tracking_input(uint8_t *buf, size_t cap, unsigned n, size_t *offsets, unsigned bad, float bad_kev)
{
    adf_writer_t *w = adf_writer_new();
    ck_assert_ptr_nonnull(w);
    adf_writer_reset(w, buf, cap);
    adf_psa_t *psa = calloc(2, sizeof *psa);
    ck_assert_ptr_nonnull(psa);
    for (unsigned i = 0; i < n; i++) {
        offsets[i] = adf_writer_used(w);
        adf_key_t keys[2];
        memset(keys, 0, sizeof keys);
        memset(psa, 0, 2 * sizeof *psa);
        unsigned crystals = 1 + tu_below(2);
        for (unsigned c = 0; c < crystals; c++) {
            psa[c].crystal_id = (uint16_t)(c == 0 ? tu_below(7) : 7 + tu_below(8));
            psa[c].n_hits = (uint16_t)(1 + tu_below(3));
            for (unsigned h = 0; h < psa[c].n_hits; h++) {
                adf_psa_hit_t *hit = &psa[c].hit[h];
                hit->crystal = (int16_t)psa[c].crystal_id;
                hit->segment = (int16_t)tu_below(36);
                hit->x = (float)tu_below(60) - 30.0f;
                hit->y = (float)tu_below(60) - 30.0f;
                hit->z = (float)tu_below(80) + 5.0f;
                hit->energy = 50.0f + (float)tu_below(600);
            }
            keys[c].event = i;
            keys[c].timestamp = 1000 + i;
        }
        if (i == bad)
            psa[0].hit[0].energy = bad_kev;
        ck_assert_int_eq(adf_event_psa_encode(w, i, 1000 + i, keys, psa, crystals, NULL), ADF_OK);
    }
    offsets[n] = adf_writer_used(w);
    free(psa);
    adf_writer_destroy(&w);
    return offsets[n];
}

/* The tracking actor loses nothing before a damaged frame (issue 15): a
 * buffer cut inside frame k, or with its key broken, or frame k holding a
 * hit the tracking refuses (3e38 keV, the issue's; or NaN): the events
 * before it are tracked and go out, then the failure names frame k. */
START_TEST(tracking_keeps_events_before_damage)
{
    const char *src = tu_source_dir("config/array-demonstrator.conf");
    char array[1024];
    snprintf(array, sizeof array, "%s/config/array-demonstrator.conf", src);
    const char *kv[] = {"array", array, NULL};
    size_t cap = 1u << 20;
    uint8_t *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int round = 0; round < 12; round++) {
        unsigned n = 2 + tu_below(14), k = tu_below(n), kind = tu_below(3);
        size_t offsets[17];
        float bad_kev = tu_below(2) ? 3e38f : NAN;
        size_t size = tracking_input(buf, cap, n, offsets, kind == 2 ? k : n, bad_kev);
        char what[256];
        if (kind == 2)
            snprintf(what, sizeof what, "offset %zu (event %u): crystal ", offsets[k], k);
        else
            size = damage_frame(buf, size, offsets, k, kind, what, sizeof what);
        check_damaged_input("tracking", kv, buf, size, offsets[k], k, what);
    }
    free(buf);
}
END_TEST

/* The z-finder, the STS hit finder and the TPC tracker take their input
 * from their simulators: one buffer, damaged at a random frame (cut or
 * broken key), loses nothing before it either. */
START_TEST(zfinder_and_sts_keep_frames_before_damage)
{
    static const struct {
        const char *sim, *filter;
        const char *sim_kv[7];
        const char *filter_kv[3];
    } chains[] = {
        {"zfinder_sim", "zfinder", {"rois", "6", "seed", "7", NULL}, {"backend", "reference", NULL}},
        {"sts_sim", "sts_hitfinder", {"collisions", "1", "seed", "7", NULL}, {"backend", "reference", NULL}},
        {"tpc_sim", "tpc_ca", {"tracks", "20", "seed", "7", NULL}, {"backend", "reference", NULL}},
    };
    uint32_t cap = 1u << 22;
    uint8_t *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int round = 0; round < 9; round++) {
        unsigned c = (unsigned)round % (sizeof chains / sizeof chains[0]);
        fx_t p;
        fx_start(&p, chains[c].sim, TUSK_PRODUCER, 1, 0, chains[c].sim_kv);
        uint32_t used;
        tusk_flow_t flow;
        ck_assert_msg(tusk_actor_produce(p.actor, buf, cap, &used, &flow, &p.err) == TUSK_OK, "%s", p.err.message);
        fx_close(&p);
        /* The frames' offsets. */
        size_t offsets[4096];
        unsigned n = 0;
        adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
        ck_assert_ptr_nonnull(r);
        adf_reader_reset(r, buf, used, 0);
        adf_frame_t f;
        while (adf_reader_next(r, &f) == ADF_OK) {
            ck_assert_uint_lt(n, 4095);
            offsets[n++] = (size_t)f.offset;
        }
        adf_reader_destroy(&r);
        ck_assert_uint_ge(n, 2);
        offsets[n] = used;
        unsigned k = tu_below(n);
        char what[256];
        size_t size = damage_frame(buf, used, offsets, k, tu_below(2), what, sizeof what);
        check_damaged_input(chains[c].filter, chains[c].filter_kv, buf, size, offsets[k], k, what);
    }
    free(buf);
}
END_TEST

/* ---- every actor: one way to take parameters ------------------------------------ */

/* Every built-in actor (every library in the actor folder, so a new one
 * is covered too) refuses a parameter it does not take, naming itself and
 * the key, listing what it takes; and its descriptor names each key it
 * takes (those that list them, not "...: see README"). */
START_TEST(every_actor_names_unknown_keys)
{
    static const char *const expected[] = {"file_producer", "file_writer", "passthrough", "null_consumer", "fault",
                                           "gamma_sim", "psa", "event_builder", "tracking", "spectra", "zfinder_sim",
                                           "zfinder", "zfinder_qa", "sts_sim", "sts_hitfinder", "sts_qa"};
    const char *folder = getenv("TUSK_ACTOR_PATH");
    ck_assert_msg(folder && *folder, "TUSK_ACTOR_PATH is not set (make check sets it to BUILDDIR/actors/.libs)");
    DIR *dir = opendir(folder);
    ck_assert_msg(dir != NULL, "%s: %s", folder, strerror(errno));
    struct {
        char name[64];
    } actors[64];
    unsigned n_actors = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0 || len - 3 >= sizeof actors[0].name)
            continue;
        ck_assert_uint_lt(n_actors, 64);
        memcpy(actors[n_actors].name, e->d_name, len - 3);
        actors[n_actors++].name[len - 3] = '\0';
    }
    closedir(dir);
    for (size_t j = 0; j < sizeof expected / sizeof expected[0]; j++) {
        bool found = false;
        for (unsigned i = 0; i < n_actors && !found; i++)
            found = strcmp(actors[i].name, expected[j]) == 0;
        ck_assert_msg(found, "actor %s.so is not in %s", expected[j], folder);
    }
    for (unsigned i = 0; i < n_actors; i++) {
        const char *kv[] = {"colour_of_the_sky", "blue", NULL};
        fx_t fx;
        /* The class does not matter before process_register_dir returns. */
        ck_assert_int_eq(fx_open(&fx, actors[i].name, TUSK_FILTER, 1, 0, kv), TUSK_EACTOR);
        char want[256];
        snprintf(want, sizeof want, "(bad configuration): %.63s: unknown parameter 'colour_of_the_sky' (known: ",
                 actors[i].name);
        assert_contains(fx.err.message, want);
        const char *d = tusk_actor_lib_descriptor(fx.lib)->parameters;
        /* The keys listed (the list may be cut short by the message's size:
         * only whole ones, followed by ", " or ")"). */
        const char *p = strstr(fx.err.message, "(known: ") + 8;
        bool documented = strstr(d, "...") == NULL;
        unsigned keys = 0;
        while (*p) {
            size_t len = strcspn(p, ",)");
            if (!p[len])
                break;
            char key[64];
            ck_assert_uint_lt(len, sizeof key);
            memcpy(key, p, len);
            key[len] = '\0';
            keys++;
            if (documented) {
                /* As a word of the descriptor's list: at a line start or
                 * after a blank, followed by ':' or ','. */
                bool found = false;
                for (const char *q = strstr(d, key); q && !found; q = strstr(q + 1, key)) {
                    char after = q[len];
                    bool start = q == d || q[-1] == '\n' || q[-1] == ' ';
                    found = start && (after == ':' || after == ',');
                }
                /* Or by a pattern: "velo_*" names every velo_ key. */
                for (const char *star = strchr(d, '*'); star && !found; star = strchr(star + 1, '*')) {
                    const char *from = star;
                    while (from > d && from[-1] != ' ' && from[-1] != '\n')
                        from--;
                    found = star > from && strncmp(key, from, (size_t)(star - from)) == 0;
                }
                ck_assert_msg(found, "%s: key '%s' is not in its descriptor:\n%s", actors[i].name, key, d);
            }
            p += len;
            if (*p == ')')
                break;
            p += *p == ',' ? 2 : 1;
        }
        ck_assert_uint_ge(keys, 1);
        fx_close(&fx);
    }
}
END_TEST

/* ---- file_writer ------------------------------------------------------------------ */

START_TEST(writer_writes_exact_bytes)
{
    char dir[256], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/out.bin", dir);
    uint8_t data[10000];
    tu_fill(data, sizeof data);
    const char *kv[] = {"file", file, NULL};
    fx_t a;
    fx_start(&a, "file_writer", TUSK_CONSUMER, 1, 0, kv);
    /* Not ADF at all: without validate, bytes are bytes. */
    size_t pos = 0;
    while (pos < sizeof data) {
        size_t n = tu_below(700);
        if (n > sizeof data - pos)
            n = sizeof data - pos;
        ck_assert_int_eq(tusk_actor_consume(a.actor, data + pos, (uint32_t)n, &a.err), TUSK_OK);
        pos += n;
    }
    ck_assert_msg(tusk_actor_stop(a.actor, &a.err) == TUSK_OK, "%s", a.err.message);
    size_t size;
    uint8_t *got = read_bytes(file, &size);
    ck_assert_uint_eq(size, sizeof data);
    ck_assert_int_eq(memcmp(got, data, size), 0);
    free(got);
    /* A second run truncates the file. */
    ck_assert_int_eq(tusk_actor_reset(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_initialise(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_start(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_consume(a.actor, data, 5, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    got = read_bytes(file, &size);
    ck_assert_uint_eq(size, 5);
    ck_assert_int_eq(memcmp(got, data, 5), 0);
    free(got);
    fx_close(&a);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(writer_instance_substitution)
{
    char dir[256], pattern[512], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(pattern, sizeof pattern, "%s/out-{instance}-of-{instance}.adf", dir);
    uint8_t frame[64];
    size_t n = tu_put_frame(frame, ADF_TYPE_DATA_PSA, 1, 2, "xyz", 3);
    const char *kv[] = {"file", pattern, "validate", "true", NULL};
    for (unsigned i = 0; i < 3; i++) {
        fx_t a;
        fx_start(&a, "file_writer", TUSK_CONSUMER, 3, i, kv);
        frame[8] = (uint8_t)i;
        ck_assert_int_eq(tusk_actor_consume(a.actor, frame, (uint32_t)n, &a.err), TUSK_OK);
        ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
        fx_close(&a);
    }
    for (unsigned i = 0; i < 3; i++) {
        snprintf(file, sizeof file, "%s/out-%u-of-%u.adf", dir, i, i);
        size_t size;
        uint8_t *got = read_bytes(file, &size);
        ck_assert_uint_eq(size, n);
        ck_assert_uint_eq(got[8], i);
        free(got);
    }
    /* Several instances need {instance}; one does not. */
    snprintf(file, sizeof file, "%s/same.adf", dir);
    const char *same[] = {"file", file, NULL};
    char want[1024];
    snprintf(want, sizeof want,
             "parameter 'file': '%s' has no {instance} but the actor has 2 instances, which would overwrite each "
             "other's file (put {instance} in the name)",
             file);
    expect_register_error("file_writer", TUSK_CONSUMER, 2, same, want);
    fx_t a;
    ck_assert_int_eq(fx_open(&a, "file_writer", TUSK_CONSUMER, 1, 0, same), TUSK_OK);
    fx_close(&a);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(writer_reports_io_errors)
{
    const char *kv[] = {"file", "/nonexistent-tusk-dir/out.adf", NULL};
    fx_t a;
    ck_assert_int_eq(fx_open(&a, "file_writer", TUSK_CONSUMER, 1, 0, kv), TUSK_OK);
    ck_assert_int_eq(tusk_actor_initialise(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_start(a.actor, &a.err), TUSK_EACTOR);
    assert_contains(a.err.message, "actor file_writer[0]: process_start failed with status 5 (input/output error)");
    assert_actor_message(a.err.message, "/nonexistent-tusk-dir/out.adf: cannot create: No such file or directory");
    /* Blocks without an open file are refused. */
    uint8_t b[4] = {0};
    ck_assert_int_eq(tusk_actor_consume(a.actor, b, 4, &a.err), TUSK_EACTOR);
    assert_actor_message(a.err.message,
                         "/nonexistent-tusk-dir/out.adf: process_block before process_start: the file is not open");
    fx_close(&a);

    /* A full disk shows at the latest when the file is closed. */
    if (access("/dev/full", W_OK) == 0) {
        const char *full[] = {"file", "/dev/full", NULL};
        fx_start(&a, "file_writer", TUSK_CONSUMER, 1, 0, full);
        int rc = tusk_actor_consume(a.actor, b, 4, &a.err);
        if (rc == TUSK_OK)
            rc = tusk_actor_stop(a.actor, &a.err);
        ck_assert_int_eq(rc, TUSK_EACTOR);
        assert_contains(a.err.message, "status 5 (input/output error): /dev/full: write failed");
        fx_close(&a);
    }

    const char *none[] = {"validate", "true", NULL};
    expect_register_error("file_writer", TUSK_CONSUMER, 1, none, "missing required parameter 'file' (the output file)");
    const char *flag[] = {"file", "x", "validate", "maybe", NULL};
    expect_register_error("file_writer", TUSK_CONSUMER, 1, flag,
                          "parameter 'validate': 'maybe' is not a boolean (true/false, yes/no, on/off, 1/0)");
}
END_TEST

START_TEST(writer_validates_frames)
{
    char dir[256], file[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/v.adf", dir);
    uint8_t buf[128];
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_PSA, 1, 2, "0123456789", 10);
    const char *kv[] = {"file", file, "validate", "yes", NULL};
    fx_t a;
    fx_start(&a, "file_writer", TUSK_CONSUMER, 1, 0, kv);
    ck_assert_int_eq(tusk_actor_consume(a.actor, buf, (uint32_t)n, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_consume(a.actor, buf, (uint32_t)n - 1, &a.err), TUSK_EACTOR);
    char want[1024];
    snprintf(want, sizeof want,
             "input buffer 2 (29 bytes) is not whole ADF frames, not written to %s: offset 0: truncated frame, key "
             "says 30 bytes but only 29 remain",
             file);
    assert_actor_message(a.err.message, "%s", want);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    size_t size;
    uint8_t *got = read_bytes(file, &size);
    ck_assert_uint_eq(size, n);
    ck_assert_int_eq(memcmp(got, buf, n), 0);
    free(got);
    fx_close(&a);
    tu_remove_dir(dir);
}
END_TEST

/* ---- null_consumer ----------------------------------------------------------------- */

START_TEST(null_consumer_counts_and_checks)
{
    sample_t s;
    make_sample(&s, 50, 100);
    const char *exact[] = {"expect_frames", "50", NULL};
    fx_t a;
    fx_start(&a, "null_consumer", TUSK_CONSUMER, 1, 0, exact);
    size_t half = s.offsets[17];
    ck_assert_int_eq(tusk_actor_consume(a.actor, s.data, (uint32_t)half, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_consume(a.actor, s.data + half, (uint32_t)(s.size - half), &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_consume(a.actor, s.data, 0, &a.err), TUSK_OK);
    ck_assert_msg(tusk_actor_stop(a.actor, &a.err) == TUSK_OK, "%s", a.err.message);
    fx_close(&a);

    const char *wrong[] = {"expect_frames", "51", NULL};
    fx_start(&a, "null_consumer", TUSK_CONSUMER, 1, 0, wrong);
    ck_assert_int_eq(tusk_actor_consume(a.actor, s.data, (uint32_t)s.size, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_EACTOR);
    assert_contains(a.err.message, "actor null_consumer[0]: process_stop failed with status 3");
    assert_actor_message(a.err.message, "expected 51 frames (expect_frames), received 50");
    /* A new run counts from zero. */
    ck_assert_int_eq(tusk_actor_reset(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_initialise(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_start(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_EACTOR);
    assert_actor_message(a.err.message, "expected 51 frames (expect_frames), received 0");
    /* Malformed input. */
    ck_assert_int_eq(tusk_actor_consume(a.actor, s.data, (uint32_t)s.size - 1, &a.err), TUSK_EACTOR);
    char want[128];
    snprintf(want, sizeof want, "input buffer 1 (%zu bytes): offset %zu: ", s.size - 1, s.offsets[s.n - 1]);
    assert_contains(a.err.message, want);
    fx_close(&a);

    /* Without expect_frames any count is fine. */
    fx_start(&a, "null_consumer", TUSK_CONSUMER, 1, 0, NULL);
    ck_assert_int_eq(tusk_actor_consume(a.actor, s.data, (uint32_t)s.size, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    fx_close(&a);

    const char *neg[] = {"expect_frames", "-1", NULL};
    expect_register_error("null_consumer", TUSK_CONSUMER, 1, neg,
                          "parameter 'expect_frames': '-1' is not an unsigned integer");
    free_sample(&s);
}
END_TEST

/* ---- fault --------------------------------------------------------------------------- */

/* Buffer i (0-based) of a small stream: two frames with i in them. */
static size_t fault_input(uint8_t *buf, unsigned i)
{
    uint8_t payload[40];
    memset(payload, (int)i, sizeof payload);
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_CRYSTAL, i, i, payload, sizeof payload);
    n += tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, i, i + 1, payload, 7);
    return n;
}

/* One filter call on buffer i; returns the host's status. */
static int fault_block(fx_t *a, unsigned i, uint8_t *in, size_t *in_size, uint8_t *out, uint32_t *used)
{
    *in_size = fault_input(in, i);
    tusk_flow_t flow;
    int rc = tusk_actor_filter(a->actor, 0, in, (uint32_t)*in_size, out, 256, used, &flow, &a->err);
    if (rc == TUSK_OK)
        ck_assert_int_eq(flow, TUSK_FLOW_DONE);
    return rc;
}

START_TEST(fault_error_at_block)
{
    const char *kv[] = {"action", "error", "at_block", "3", NULL};
    fx_t a;
    fx_start(&a, "fault", TUSK_FILTER, 1, 0, kv);
    uint8_t in[256], out[256];
    size_t n;
    uint32_t used;
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_int_eq(fault_block(&a, i, in, &n, out, &used), TUSK_OK);
        ck_assert_uint_eq(used, n);
        ck_assert_int_eq(memcmp(in, out, n), 0);
    }
    ck_assert_int_eq(fault_block(&a, 2, in, &n, out, &used), TUSK_EACTOR);
    ck_assert_str_eq(a.err.message, "actor fault[0]: process_block failed on buffer 3 with status 1 (failure): "
                                    "fault injected: error at block 3");
    fx_close(&a);

    /* In another hook. */
    const char *start[] = {"action", "error", "hook", "start", NULL};
    ck_assert_int_eq(fx_open(&a, "fault", TUSK_FILTER, 1, 0, start), TUSK_OK);
    ck_assert_int_eq(tusk_actor_initialise(a.actor, &a.err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_start(a.actor, &a.err), TUSK_EACTOR);
    ck_assert_str_eq(a.err.message, "actor fault[0]: process_start failed with status 1 (failure): "
                                    "fault injected: error in process_start");
    fx_close(&a);
    const char *stop[] = {"action", "error", "hook", "stop", NULL};
    fx_start(&a, "fault", TUSK_FILTER, 1, 0, stop);
    ck_assert_int_eq(fault_block(&a, 0, in, &n, out, &used), TUSK_OK);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_EACTOR);
    assert_actor_message(a.err.message, "fault injected: error in process_stop");
    fx_close(&a);
}
END_TEST

START_TEST(fault_corrupts_class_byte)
{
    const char *kv[] = {"action", "corrupt", "at_block", "2", NULL};
    fx_t a;
    fx_start(&a, "fault", TUSK_FILTER, 1, 0, kv);
    uint8_t in[256], out[256];
    size_t n;
    uint32_t used;
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_int_eq(fault_block(&a, i, in, &n, out, &used), TUSK_OK);
        ck_assert_uint_eq(used, n);
        if (i == 1) {
            ck_assert_uint_eq(in[7], 0xFA);
            ck_assert_uint_eq(out[7], 0x00);
            ck_assert_int_eq(memcmp(in, out, 7), 0);
            ck_assert_int_eq(memcmp(in + 8, out + 8, n - 8), 0);
        } else {
            ck_assert_int_eq(memcmp(in, out, n), 0);
        }
    }
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    fx_close(&a);

    const char *bad[] = {"action", "corrupt", "hook", "stop", NULL};
    expect_register_error("fault", TUSK_FILTER, 1, bad,
                          "parameter 'hook': action 'corrupt' works on data, so it needs hook 'block', not 'stop'");
}
END_TEST

START_TEST(fault_only_one_instance)
{
    const char *kv[] = {"action", "error", "only_instance", "1", NULL};
    uint8_t in[256], out[256];
    size_t n;
    uint32_t used;
    fx_t a;
    fx_start(&a, "fault", TUSK_FILTER, 2, 0, kv);
    for (unsigned i = 0; i < 5; i++) {
        ck_assert_int_eq(fault_block(&a, i, in, &n, out, &used), TUSK_OK);
        ck_assert_uint_eq(used, n);
        ck_assert_int_eq(memcmp(in, out, n), 0);
    }
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    fx_close(&a);
    fx_start(&a, "fault", TUSK_FILTER, 2, 1, kv);
    ck_assert_int_eq(fault_block(&a, 0, in, &n, out, &used), TUSK_EACTOR);
    ck_assert_str_eq(a.err.message, "actor fault[1]: process_block failed on buffer 1 with status 1 (failure): "
                                    "fault injected: error at block 1");
    fx_close(&a);

    /* once: only the first to create the marker misbehaves, whichever
     * instance (or restart of one) it is. */
    char *marker = tu_temp_path();
    unlink(marker);
    const char *once[] = {"action", "error", "once", marker, NULL};
    fx_start(&a, "fault", TUSK_FILTER, 2, 1, once);
    ck_assert_int_eq(fault_block(&a, 0, in, &n, out, &used), TUSK_EACTOR);
    fx_close(&a);
    ck_assert_int_eq(access(marker, F_OK), 0);
    for (unsigned k = 0; k < 2; k++) {
        fx_start(&a, "fault", TUSK_FILTER, 2, k, once);
        ck_assert_int_eq(fault_block(&a, 0, in, &n, out, &used), TUSK_OK);
        ck_assert_int_eq(memcmp(in, out, n), 0);
        fx_close(&a);
    }
    unlink(marker);
    free(marker);

    const char *range[] = {"action", "error", "only_instance", "2", NULL};
    expect_register_error("fault", TUSK_FILTER, 2, range,
                          "parameter 'only_instance': 2, but the actor has 2 instances (0 to 1)");
    const char *none[] = {"at_block", "2", NULL};
    expect_register_error("fault", TUSK_FILTER, 1, none,
                          "missing required parameter 'action' (error, crash, segv, stall, freeze, corrupt, exit, kill or "
                          "interrupt)");
    const char *what[] = {"action", "explode", NULL};
    expect_register_error("fault", TUSK_FILTER, 1, what,
                          "parameter 'action': 'explode' is not one of: error, crash, stall, corrupt, exit, kill, freeze, "
                          "segv, interrupt");
    const char *zero[] = {"action", "error", "at_block", "0", NULL};
    expect_register_error("fault", TUSK_FILTER, 1, zero,
                          "parameter 'at_block': 0 is outside [1, 18446744073709551615]");
    const char *slow[] = {"action", "stall", "stall_seconds", "-1", NULL};
    expect_register_error("fault", TUSK_FILTER, 1, slow, "parameter 'stall_seconds': -1 is outside [0, 1e+09]");
}
END_TEST

START_TEST(fault_stall_carries_on)
{
    const char *kv[] = {"action", "stall", "at_block", "2", "stall_seconds", "0", NULL};
    fx_t a;
    fx_start(&a, "fault", TUSK_FILTER, 1, 0, kv);
    uint8_t in[256], out[256];
    size_t n;
    uint32_t used;
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_int_eq(fault_block(&a, i, in, &n, out, &used), TUSK_OK);
        ck_assert_uint_eq(used, n);
        ck_assert_int_eq(memcmp(in, out, n), 0);
    }
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    fx_close(&a);
    const char *start[] = {"action", "stall", "hook", "start", "stall_seconds", "0.01", NULL};
    fx_start(&a, "fault", TUSK_FILTER, 1, 0, start);
    ck_assert_int_eq(fault_block(&a, 0, in, &n, out, &used), TUSK_OK);
    ck_assert_int_eq(tusk_actor_stop(a.actor, &a.err), TUSK_OK);
    fx_close(&a);
}
END_TEST

static bool forks_allowed(void)
{
    const char *f = getenv("CK_FORK");
    return !(f && strcmp(f, "no") == 0);
}

/* Run fault with `kv` over 3 blocks in a child; returns the child's wait
 * status (exit 92: a block failed, 93: all blocks passed). */
static int run_fault_child(const char *const *kv)
{
    fx_t a;
    fx_start(&a, "fault", TUSK_FILTER, 1, 0, kv);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        uint8_t in[256], out[256];
        size_t n;
        uint32_t used;
        for (unsigned i = 0; i < 3; i++)
            if (fault_block(&a, i, in, &n, out, &used) != TUSK_OK)
                _exit(92);
        _exit(93);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    fx_close(&a);
    return status;
}

START_TEST(fault_crash_and_exit)
{
    if (!forks_allowed())
        return;
    const char *crash[] = {"action", "crash", "at_block", "2", NULL};
    int st = run_fault_child(crash);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "crash: wait status 0x%x", (unsigned)st);
    const char *killed[] = {"action", "kill", "at_block", "2", NULL};
    st = run_fault_child(killed);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "kill: wait status 0x%x", (unsigned)st);
    const char *ex[] = {"action", "exit", "at_block", "2", NULL};
    st = run_fault_child(ex);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 3, "exit: wait status 0x%x", (unsigned)st);
    /* The child's own check: without the fault it gets through (93). */
    const char *calm[] = {"action", "exit", "at_block", "4", NULL};
    st = run_fault_child(calm);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 93, "calm: wait status 0x%x", (unsigned)st);
}
END_TEST

/* ---- all actors ----------------------------------------------------------------------- */

typedef void *(*register_fn)(unsigned int *);
typedef const char *(*message_fn)(void *);

START_TEST(descriptors_and_narval_register)
{
    static const struct {
        const char *name;
        tusk_actor_class_t cls;
        const char *keys[6];
    } actors[] = {
        {"file_producer", TUSK_PRODUCER, {"file:", "on_error:", "repeat:", NULL}},
        {"file_writer", TUSK_CONSUMER, {"file:", "validate:", NULL}},
        {"passthrough", TUSK_FILTER, {NULL}},
        {"null_consumer", TUSK_CONSUMER, {"expect_frames:", NULL}},
        {"fault", TUSK_FILTER, {"action:", "hook:", "at_block:", "only_instance:", "stall_seconds:", NULL}},
    };
    for (unsigned i = 0; i < sizeof actors / sizeof actors[0]; i++) {
        char *path = lib_path(actors[i].name);
        tusk_actor_lib_t *lib;
        tusk_error_t err;
        ck_assert_msg(tusk_actor_lib_open(&lib, path, actors[i].cls, &err) == TUSK_OK, "%s", err.message);
        const tusk_actor_descriptor_t *d = tusk_actor_lib_descriptor(lib);
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(d->abi_version, TUSK_ACTOR_ABI_VERSION);
        ck_assert_str_eq(d->name, actors[i].name);
        ck_assert(d->summary && *d->summary);
        for (unsigned k = 0; actors[i].keys[k]; k++)
            assert_contains(d->parameters, actors[i].keys[k]);
        tusk_actor_lib_close(&lib);

        /* The NARVAL process_register refuses, and says why. */
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(dl != NULL, "%s", dlerror());
        register_fn reg;
        message_fn msg;
        void *sym = dlsym(dl, "process_register");
        ck_assert_ptr_nonnull(sym);
        memcpy(&reg, &sym, sizeof reg);
        sym = dlsym(dl, "process_error_message");
        ck_assert_ptr_nonnull(sym);
        memcpy(&msg, &sym, sizeof msg);
        unsigned code = 0;
        ck_assert_ptr_null(reg(&code));
        ck_assert_uint_eq(code, TUSK_ACTOR_ECONFIG);
        assert_contains(msg(NULL), "process_register_dir");
        /* The helpers are libtusk-actorkit's, reached through the actor's
         * dependency on it, never exported by the actor itself (whose own
         * symbols dlsym would find first). */
        void *kit = dlopen("libtusk-actorkit.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (kit) {
            ck_assert_ptr_eq(dlsym(dl, "ak_fail"), dlsym(kit, "ak_fail"));
            dlclose(kit);
        } else {
            ck_assert_ptr_null(dlsym(dl, "ak_fail"));
        }
        const char *keep = getenv("TUSK_NO_DLCLOSE");
        if (!(keep && *keep && strcmp(keep, "0") != 0))
            dlclose(dl);
        free(path);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("actors");
    TCase *tc = tcase_create("file_producer");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, producer_replays_file_exactly);
    tcase_add_test(tc, producer_repeat_and_empty_file);
    tcase_add_test(tc, producer_continues_timestamps);
    tcase_add_test(tc, producer_frame_larger_than_buffer);
    tcase_add_test(tc, producer_malformed_frames);
    tcase_add_test(tc, producer_keeps_frames_before_damage);
    tcase_add_test(tc, producer_register_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("passthrough");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, passthrough_copies_through_small_outputs);
    tcase_add_test(tc, passthrough_forwards);
    tcase_add_test(tc, passthrough_rejects_malformed_input);
    tcase_add_test(tc, passthrough_keeps_frames_before_damage);
    suite_add_tcase(s, tc);
    tc = tcase_create("analysing filters");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, psa_keeps_frames_before_damage);
    tcase_add_loop_test(tc, psa_output_as_before, 0, 2);
    tcase_add_test(tc, tracking_keeps_events_before_damage);
    tcase_add_test(tc, zfinder_and_sts_keep_frames_before_damage);
    suite_add_tcase(s, tc);
    tc = tcase_create("parameters");
    tcase_add_test(tc, every_actor_names_unknown_keys);
    suite_add_tcase(s, tc);
    tc = tcase_create("file_writer");
    tcase_add_test(tc, writer_writes_exact_bytes);
    tcase_add_test(tc, writer_instance_substitution);
    tcase_add_test(tc, writer_reports_io_errors);
    tcase_add_test(tc, writer_validates_frames);
    suite_add_tcase(s, tc);
    tc = tcase_create("null_consumer");
    tcase_add_test(tc, null_consumer_counts_and_checks);
    suite_add_tcase(s, tc);
    tc = tcase_create("fault");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fault_error_at_block);
    tcase_add_test(tc, fault_corrupts_class_byte);
    tcase_add_test(tc, fault_only_one_instance);
    tcase_add_test(tc, fault_stall_carries_on);
    tcase_add_test(tc, fault_crash_and_exit);
    suite_add_tcase(s, tc);
    tc = tcase_create("all");
    tcase_add_test(tc, descriptors_and_narval_register);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
