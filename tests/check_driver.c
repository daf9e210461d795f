/* check_driver.c - the one actor driver (runtime/driver.h), on real actor
 * libraries, with a host that writes down everything that happens as a
 * line of text:
 *
 *   B, F     a process_block / process_flush call (enter ... leave)
 *   out:2f/80[:last][:fwd][:flush]
 *            an output of 2 frames, 80 bytes, handed to the host, with
 *            emit's flags
 *   back     an output buffer given back unused
 *   => held | done | open | forwarded   a filter input's outcome
 *
 * and the counts as "calls C in N/Ff/BB out N/Ff/BB". Asserted:
 *
 *  - more output: passthrough (whole frames, resumed after MORE_OUTPUT) on
 *    fixed buffers, a forwarded input, a malformed frame after good ones
 *    (the good ones go out, then the error, naming the actor); random
 *    frames into random output sizes: the outputs are the input, in the
 *    number of buffers greedy packing gives, every count exact;
 *  - flush: a filter that holds everything back (holdback) writes it at
 *    process_flush over several calls; random inputs and sizes;
 *  - producers (file_producer up to END_OF_DATA) and consumers
 *    (null_consumer);
 *  - failures: an actor error is the actor host's message (actor,
 *    instance, hook, buffer number, status, the actor's words); an empty
 *    "more output", an overrun; the host's own failures (no buffer, emit,
 *    emitted) come back as they were, every buffer taken is given back or
 *    emitted, and the counts hold only what the host took. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "runtime/driver.h"
#include "testutil.h"

/* ---- the recording host --------------------------------------------------------- */

typedef struct host {
    uint32_t out_size;
    char text[8192];
    size_t len;
    unsigned takes, backs, emits, emitteds; /* calls so far */
    unsigned fail_take_at, fail_emit_at, fail_emitted_at; /* 1-based; 0: never */
    unsigned outstanding;                   /* buffers taken, neither back nor emitted */
    int depth;                              /* inside a hook call */
    uint8_t *got;                           /* every byte emitted, in order */
    size_t got_size, got_cap;
    bool quiet;                             /* record nothing (large random runs) */
} host_t;

static void say(host_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(host_t *h, const char *fmt, ...)
{
    if (h->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (h->len)
        h->text[h->len++] = ' ';
    int n = vsnprintf(h->text + h->len, sizeof h->text - h->len, fmt, ap);
    va_end(ap);
    ck_assert_int_lt(n, (int)(sizeof h->text - h->len));
    h->len += (size_t)n;
}

static void *take(void *ctx, uint8_t **data, tusk_error_t *err)
{
    host_t *h = ctx;
    ck_assert_int_eq(h->depth, 0);
    if (++h->takes == h->fail_take_at) {
        tusk_error_set(err, TUSK_ENOMEM, "test host: no buffer %u", h->takes);
        return NULL;
    }
    uint8_t *b = malloc(h->out_size ? h->out_size : 1);
    ck_assert_ptr_nonnull(b);
    memset(b, 0xEE, h->out_size);
    h->outstanding++;
    *data = b;
    return b;
}

static void give_back(void *ctx, void *buffer)
{
    host_t *h = ctx;
    ck_assert_int_eq(h->depth, 0);
    h->backs++;
    h->outstanding--;
    free(buffer);
    say(h, "back");
}

static int emit(void *ctx, void *buffer, uint32_t size, uint64_t frames, unsigned flags, tusk_error_t *err)
{
    host_t *h = ctx;
    ck_assert_int_eq(h->depth, 0);
    h->emits++;
    bool fwd = flags & TUSK_EMIT_FORWARDED;
    if (!fwd)
        h->outstanding--;
    int rc = TUSK_OK;
    if (h->emits == h->fail_emit_at)
        rc = tusk_error_set(err, TUSK_EIO, "test host: emit %u refused", h->emits);
    say(h, "out%s:%lluf/%u%s%s%s", rc ? "!" : "", (unsigned long long)frames, (unsigned)size,
        flags & TUSK_EMIT_LAST ? ":last" : "", fwd ? ":fwd" : "", flags & TUSK_EMIT_FLUSH ? ":flush" : "");
    if (rc == TUSK_OK) {
        ck_assert_int_eq(tusk_grow(&h->got, &h->got_cap, h->got_size + size + 1, 1), 0);
        memcpy(h->got + h->got_size, buffer, size);
        h->got_size += size;
    }
    if (!fwd)
        free(buffer);
    return rc;
}

static int emitted(void *ctx, unsigned flags, tusk_error_t *err)
{
    (void)flags;
    host_t *h = ctx;
    if (++h->emitteds == h->fail_emitted_at)
        return tusk_error_set(err, TUSK_EIO, "test host: downstream failed after output %u", h->emitteds);
    return TUSK_OK;
}

static void enter(void *ctx, const char *hook)
{
    host_t *h = ctx;
    ck_assert_int_eq(h->depth++, 0);
    ck_assert(strcmp(hook, "process_block") == 0 || strcmp(hook, "process_flush") == 0);
    say(h, "%s", strcmp(hook, "process_block") == 0 ? "B" : "F");
}

static void leave(void *ctx)
{
    host_t *h = ctx;
    ck_assert_int_eq(--h->depth, 0);
}

static tusk_driver_t *new_driver(host_t *h, uint32_t out_size)
{
    memset(h, 0, sizeof *h);
    h->out_size = out_size;
    tusk_driver_host_t dh = {.ctx = h,
                             .take = take,
                             .give_back = give_back,
                             .emit = emit,
                             .emitted = emitted,
                             .enter = enter,
                             .leave = leave};
    tusk_driver_t *d = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_driver_new(&d, &dh, out_size, &err), TUSK_OK);
    return d;
}

/* Take the text so far, and start a new one. */
static const char *text(host_t *h)
{
    static char copy[sizeof h->text];
    memcpy(copy, h->text, h->len);
    copy[h->len] = '\0';
    h->len = 0;
    return copy;
}

static const char *stats_text(const tusk_driver_t *d)
{
    static char s[256];
    const tusk_driver_stats_t *st = tusk_driver_stats(d);
    snprintf(s, sizeof s, "calls %llu in %llu/%lluf/%lluB out %llu/%lluf/%lluB", (unsigned long long)st->calls,
             (unsigned long long)st->buffers_in, (unsigned long long)st->frames_in, (unsigned long long)st->bytes_in,
             (unsigned long long)st->buffers_out, (unsigned long long)st->frames_out,
             (unsigned long long)st->bytes_out);
    return s;
}

static const char *outcome_name(tusk_driver_outcome_t o)
{
    switch (o) {
    case TUSK_DRIVER_HELD: return "held";
    case TUSK_DRIVER_DONE: return "done";
    case TUSK_DRIVER_DONE_OPEN: return "open";
    default: return "forwarded";
    }
}

static void free_host(host_t *h)
{
    ck_assert_uint_eq(h->outstanding, 0); /* every buffer taken came back or went on */
    free(h->got);
    h->got = NULL;
}

/* ---- actors ---------------------------------------------------------------------- */

typedef struct actor {
    tusk_actor_lib_t *lib;
    tusk_actor_t *a;
    char *dir;
} actor_t;

/* Actor library `name` (the built-in ones in TUSK_ACTOR_PATH, the test ones
 * in TUSK_TEST_ACTOR_PATH) as instance 0 of "drv", with `params`
 * ("key = value" lines), initialised and started. */
static actor_t open_actor(const char *name, tusk_actor_class_t cls, const char *params)
{
    actor_t x = {0};
    const char *dirs[] = {getenv("TUSK_ACTOR_PATH"), getenv("TUSK_TEST_ACTOR_PATH")};
    ck_assert_msg(dirs[0] && dirs[1], "run through make check (TUSK_ACTOR_PATH, TUSK_TEST_ACTOR_PATH)");
    char path[4096] = "";
    for (int i = 0; i < 2 && !path[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.so", dirs[i], name);
        if (access(path, R_OK) != 0)
            path[0] = '\0';
    }
    ck_assert_msg(path[0], "actor library %s not found", name);
    tusk_error_t err;
    ck_assert_msg(tusk_actor_lib_open(&x.lib, path, cls, &err) == TUSK_OK, "%s", err.message);
    x.dir = tu_temp_path();
    unlink(x.dir);
    ck_assert_int_eq(mkdir(x.dir, 0700), 0);
    char file[4200];
    snprintf(file, sizeof file, "%s/parameters.conf", x.dir);
    FILE *fp = fopen(file, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "actor = drv\ninstance = 0\ninstances = 1\n%s", params ? params : "");
    fclose(fp);
    ck_assert_msg(tusk_actor_new(&x.a, x.lib, "drv", 0, x.dir, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tusk_actor_initialise(x.a, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tusk_actor_start(x.a, &err) == TUSK_OK, "%s", err.message);
    return x;
}

static void close_actor(actor_t *x)
{
    tusk_error_t err;
    tusk_actor_stop(x->a, &err);
    tusk_actor_destroy(&x->a, &err);
    tusk_actor_lib_close(&x->lib);
    char file[4200];
    snprintf(file, sizeof file, "%s/parameters.conf", x->dir);
    unlink(file);
    rmdir(x->dir);
    free(x->dir);
}

/* n frames of `frame_len` bytes each (ADF_KEY_SIZE + payload). */
static size_t frames_of(uint8_t *buf, unsigned n, size_t frame_len)
{
    uint8_t payload[256];
    ck_assert_uint_le(frame_len - ADF_KEY_SIZE, sizeof payload);
    size_t pos = 0;
    for (unsigned i = 0; i < n; i++) {
        memset(payload, (int)i, sizeof payload);
        pos += tu_put_frame(buf + pos, ADF_TYPE_DATA_PSA, i, 100 + i, payload, frame_len - ADF_KEY_SIZE);
    }
    return pos;
}

/* One filter input; returns "<text> => <outcome>" (or "<text> => error",
 * the error in err). */
static const char *filter(tusk_driver_t *d, host_t *h, actor_t *x, void *data, size_t size, tusk_error_t *err)
{
    tusk_driver_outcome_t o;
    uint64_t frames = tusk_driver_frames(d, data, (uint32_t)size, NULL);
    int rc = tusk_driver_filter(d, x->a, 0, data, data, (uint32_t)size, frames, &o, err);
    say(h, "=> %s", rc == TUSK_OK ? outcome_name(o) : "error");
    return text(h);
}

/* ---- more output ---------------------------------------------------------------- */

START_TEST(more_output_sequences)
{
    host_t h;
    tusk_driver_t *d = new_driver(&h, 100);
    actor_t x = open_actor("passthrough", TUSK_FILTER, NULL);
    uint8_t in[4096];
    tusk_error_t err;

    /* Three 40-byte frames into 100-byte buffers: two, then one. */
    size_t n = frames_of(in, 3, 40);
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B out:2f/80 B out:1f/40:last => done");
    ck_assert_str_eq(stats_text(d), "calls 2 in 1/3f/120B out 2/3f/120B");
    ck_assert_uint_eq(h.got_size, n);
    ck_assert(memcmp(h.got, in, n) == 0);

    /* Exactly full buffers: 5 frames of 50 bytes. */
    n = frames_of(in, 5, 50);
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B out:2f/100 B out:2f/100 B out:1f/50:last => done");
    ck_assert_str_eq(stats_text(d), "calls 5 in 2/8f/370B out 5/8f/370B");

    /* An empty input: one call, nothing written, the buffer back. */
    ck_assert_str_eq(filter(d, &h, &x, in, 0, &err), "B back => held");
    ck_assert_str_eq(stats_text(d), "calls 6 in 3/8f/370B out 5/8f/370B");

    /* Two good frames, then one cut short: the good ones go out, then the
     * actor's error, naming it, its buffer and the offset. */
    n = frames_of(in, 3, 40) - 1;
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B out:2f/80 B back => error");
    ck_assert_int_eq(err.code, TUSK_EACTOR);
    ck_assert_str_eq(err.message, "actor drv[0]: process_block failed on buffer 8 with status 3 (malformed input "
                                  "data): input buffer of 119 bytes: offset 80: truncated frame, key says 40 bytes but "
                                  "only 39 remain; passed on before it: 2 frames (80 bytes), not passed on: the 39 "
                                  "bytes from offset 80 to the end of the buffer");
    ck_assert_str_eq(stats_text(d), "calls 8 in 4/10f/489B out 6/10f/450B");

    /* The counts start again. */
    tusk_driver_reset_stats(d);
    ck_assert_str_eq(stats_text(d), "calls 0 in 0/0f/0B out 0/0f/0B");
    close_actor(&x);
    tusk_driver_destroy(&d);
    free_host(&h);
}
END_TEST

START_TEST(forwarded_input_goes_on_itself)
{
    host_t h;
    tusk_driver_t *d = new_driver(&h, 16);
    actor_t x = open_actor("passthrough", TUSK_FILTER, "forward = true\n");
    uint8_t in[4096];
    tusk_error_t err;
    /* Larger than the output buffers: it is the input that goes on. */
    size_t n = frames_of(in, 4, 60);
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B back out:4f/240:last:fwd => forwarded");
    ck_assert_str_eq(stats_text(d), "calls 1 in 1/4f/240B out 1/4f/240B");
    /* emit refusing it: the outcome still says who owns it. */
    h.fail_emit_at = 2;
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B back out!:4f/240:last:fwd => error");
    ck_assert_str_eq(err.message, "test host: emit 2 refused");
    ck_assert_str_eq(stats_text(d), "calls 2 in 2/8f/480B out 1/4f/240B");
    close_actor(&x);
    tusk_driver_destroy(&d);
    free_host(&h);
}
END_TEST

/* The greedy packing of whole frames into buffers of `out` bytes. */
static unsigned packed_buffers(const size_t *lengths, unsigned n, size_t out)
{
    unsigned buffers = 1;
    size_t fill = 0;
    for (unsigned i = 0; i < n; i++) {
        if (fill + lengths[i] > out) {
            buffers++;
            fill = 0;
        }
        fill += lengths[i];
    }
    return buffers;
}

START_TEST(random_frames_into_random_buffers)
{
    tu_seed();
    host_t h;
    uint8_t *in = malloc(1 << 20);
    ck_assert_ptr_nonnull(in);
    for (int round = 0; round < 40; round++) {
        unsigned n = 1 + tu_below(300);
        size_t max_payload = 1 + tu_below(400), offsets[300];
        adf_key_t keys[300];
        size_t size = tu_make_frames(in, 1 << 20, n, max_payload, offsets, keys);
        size_t lengths[300], longest = 0;
        for (unsigned i = 0; i < n; i++) {
            lengths[i] = keys[i].length;
            longest = lengths[i] > longest ? lengths[i] : longest;
        }
        uint32_t out = (uint32_t)(longest + tu_below(3000));
        tusk_driver_t *d = new_driver(&h, out);
        h.quiet = true;
        bool forward = tu_below(5) == 0;
        actor_t x = open_actor("passthrough", TUSK_FILTER, forward ? "forward = true\n" : NULL);
        tusk_driver_outcome_t o;
        tusk_error_t err;
        uint64_t frames = tusk_driver_frames(d, in, (uint32_t)size, NULL);
        ck_assert_uint_eq(frames, n);
        int rc = tusk_driver_filter(d, x.a, 0, in, in, (uint32_t)size, frames, &o, &err);
        ck_assert_msg(rc == TUSK_OK, "round %d: %s", round, err.message);
        unsigned want = forward ? 1 : packed_buffers(lengths, n, out);
        ck_assert_int_eq(o, forward ? TUSK_DRIVER_FORWARDED : TUSK_DRIVER_DONE);
        const tusk_driver_stats_t *st = tusk_driver_stats(d);
        char got[256], expect[256];
        snprintf(got, sizeof got, "%s", stats_text(d));
        snprintf(expect, sizeof expect, "calls %u in 1/%uf/%zuB out %u/%uf/%zuB", forward ? 1 : want, n, size, want,
                 n, size);
        ck_assert_msg(strcmp(got, expect) == 0, "round %d (%u frames, out %u%s): %s, expected %s", round, n,
                      (unsigned)out, forward ? ", forward" : "", got, expect);
        ck_assert_uint_eq(st->buffers_out, h.emits);
        ck_assert_uint_eq(h.got_size, size);
        ck_assert(memcmp(h.got, in, size) == 0);
        /* Every buffer taken went on or came back; a forwarded input went on instead of one. */
        ck_assert_uint_eq(h.takes + (forward ? 1u : 0u), h.emits + h.backs);
        close_actor(&x);
        tusk_driver_destroy(&d);
        free_host(&h);
    }
    free(in);
}
END_TEST

/* ---- flush ------------------------------------------------------------------------ */

START_TEST(flush_writes_what_was_held)
{
    host_t h;
    tusk_driver_t *d = new_driver(&h, 100);
    actor_t x = open_actor("holdback", TUSK_FILTER, NULL);
    uint8_t in[4096];
    tusk_error_t err;
    /* 5 frames of 50 bytes in two inputs, nothing written until the end. */
    size_t n = frames_of(in, 5, 50);
    ck_assert_str_eq(filter(d, &h, &x, in, 150, &err), "B back => held");
    ck_assert_str_eq(filter(d, &h, &x, in + 150, n - 150, &err), "B back => held");
    ck_assert_str_eq(stats_text(d), "calls 2 in 2/5f/250B out 0/0f/0B");
    ck_assert_int_eq(tusk_driver_flush(d, x.a, &err), TUSK_OK);
    ck_assert_str_eq(text(&h), "F out:2f/100:flush F out:2f/100:flush F out:1f/50:last:flush");
    /* Flush calls are timed, not counted as calls. */
    ck_assert_str_eq(stats_text(d), "calls 2 in 2/5f/250B out 3/5f/250B");
    ck_assert_uint_eq(h.got_size, n);
    ck_assert(memcmp(h.got, in, n) == 0);
    /* Nothing left: one call, the buffer back. */
    ck_assert_int_eq(tusk_driver_flush(d, x.a, &err), TUSK_OK);
    ck_assert_str_eq(text(&h), "F back");
    /* An actor without process_flush: called all the same (a no-op). */
    actor_t p = open_actor("passthrough", TUSK_FILTER, NULL);
    ck_assert_int_eq(tusk_driver_flush(d, p.a, &err), TUSK_OK);
    ck_assert_str_eq(text(&h), "F back");
    close_actor(&p);
    close_actor(&x);
    tusk_driver_destroy(&d);
    free_host(&h);
}
END_TEST

START_TEST(random_holdback_flush)
{
    tu_seed();
    host_t h;
    uint8_t *in = malloc(1 << 20);
    ck_assert_ptr_nonnull(in);
    for (int round = 0; round < 40; round++) {
        uint32_t out = 1 + tu_below(2000);
        tusk_driver_t *d = new_driver(&h, out);
        h.quiet = true;
        actor_t x = open_actor("holdback", TUSK_FILTER, NULL);
        tusk_error_t err;
        tusk_driver_outcome_t o;
        unsigned inputs = tu_below(20);
        size_t total = 0;
        for (unsigned i = 0; i < inputs; i++) {
            size_t size = tu_below(5000);
            tu_fill(in + total, size);
            ck_assert_int_eq(tusk_driver_filter(d, x.a, 0, in + total, in + total, (uint32_t)size, 0, &o, &err),
                             TUSK_OK);
            ck_assert_int_eq(o, TUSK_DRIVER_HELD);
            total += size;
        }
        ck_assert_int_eq(tusk_driver_flush(d, x.a, &err), TUSK_OK);
        const tusk_driver_stats_t *st = tusk_driver_stats(d);
        ck_assert_uint_eq(st->calls, inputs);
        ck_assert_uint_eq(st->buffers_in, inputs);
        ck_assert_uint_eq(st->bytes_in, total);
        ck_assert_uint_eq(st->buffers_out, (total + out - 1) / out);
        ck_assert_uint_eq(st->bytes_out, total);
        ck_assert_uint_eq(h.got_size, total);
        ck_assert(total == 0 || memcmp(h.got, in, total) == 0);
        close_actor(&x);
        tusk_driver_destroy(&d);
        free_host(&h);
    }
    free(in);
}
END_TEST

/* ---- producers and consumers ------------------------------------------------------- */

START_TEST(producer_to_end_and_consumer)
{
    uint8_t in[4096];
    size_t n = frames_of(in, 5, 40);
    char *path = tu_temp_path();
    FILE *fp = fopen(path, "wb");
    ck_assert_uint_eq(fwrite(in, 1, n, fp), n);
    fclose(fp);
    char params[4200];
    snprintf(params, sizeof params, "file = %s\n", path);
    host_t h;
    tusk_driver_t *d = new_driver(&h, 100);
    actor_t x = open_actor("file_producer", TUSK_PRODUCER, params);
    tusk_error_t err;
    bool ended = false;
    while (!ended)
        ck_assert_int_eq(tusk_driver_produce(d, x.a, &ended, &err), TUSK_OK);
    ck_assert_str_eq(text(&h), "B out:2f/80:last B out:2f/80:last B out:1f/40:last");
    ck_assert_str_eq(stats_text(d), "calls 3 in 0/0f/0B out 3/5f/200B");
    close_actor(&x);
    tusk_driver_destroy(&d);
    free_host(&h);

    /* A file of one whole buffer: its frames come with the end; a call
     * after the end has nothing, and says so again. */
    fp = fopen(path, "wb");
    ck_assert_uint_eq(fwrite(in, 1, 80, fp), 80);
    fclose(fp);
    d = new_driver(&h, 80);
    x = open_actor("file_producer", TUSK_PRODUCER, params);
    ck_assert_int_eq(tusk_driver_produce(d, x.a, &ended, &err), TUSK_OK);
    ck_assert(ended);
    ck_assert_int_eq(tusk_driver_produce(d, x.a, &ended, &err), TUSK_OK);
    ck_assert(ended);
    ck_assert_str_eq(text(&h), "B out:2f/80:last B back");
    ck_assert_str_eq(stats_text(d), "calls 2 in 0/0f/0B out 1/2f/80B");
    close_actor(&x);
    tusk_driver_destroy(&d);
    free_host(&h);
    unlink(path);
    free(path);

    /* A consumer: counted in, nothing out, no buffer taken. */
    d = new_driver(&h, 0);
    x = open_actor("null_consumer", TUSK_CONSUMER, NULL);
    ck_assert_int_eq(tusk_driver_consume(d, x.a, in, (uint32_t)n, 5, &err), TUSK_OK);
    ck_assert_int_eq(tusk_driver_consume(d, x.a, in, 40, 1, &err), TUSK_OK);
    ck_assert_str_eq(text(&h), "B B");
    ck_assert_str_eq(stats_text(d), "calls 2 in 2/6f/240B out 0/0f/0B");
    ck_assert_uint_eq(h.takes, 0);
    close_actor(&x);
    tusk_driver_destroy(&d);
    free_host(&h);
}
END_TEST

/* ---- failures --------------------------------------------------------------------- */

START_TEST(actor_errors_are_named)
{
    host_t h;
    tusk_driver_t *d = new_driver(&h, 100);
    uint8_t in[4096];
    size_t n = frames_of(in, 2, 40);
    tusk_error_t err;

    actor_t x = open_actor("failing", TUSK_FILTER, "fail = block\nat = 2\n");
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B out:2f/80:last => done");
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B back => error");
    ck_assert_str_eq(err.message, "actor drv[0]: process_block failed on buffer 2 with status 1 (failure): failing: "
                                  "block refused as configured");
    ck_assert_int_eq(err.code, TUSK_EACTOR);
    ck_assert_str_eq(stats_text(d), "calls 2 in 2/4f/160B out 1/2f/80B");
    close_actor(&x);

    x = open_actor("failing", TUSK_FILTER, "misbehave = empty_more\n");
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B back => error");
    ck_assert_str_eq(err.message, "actor drv[0]: process_block on buffer 1 asked to be called again (more output) "
                                  "but wrote nothing: an output buffer of 100 bytes is too small for its next frame");
    close_actor(&x);

    x = open_actor("failing", TUSK_FILTER, "misbehave = overrun\n");
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B back => error");
    ck_assert_str_eq(err.message,
                     "actor drv[0]: process_block on buffer 1 reported 101 bytes used in an output buffer of 100 bytes");
    close_actor(&x);

    x = open_actor("failing", TUSK_FILTER, "fail = flush\n");
    ck_assert_int_eq(tusk_driver_flush(d, x.a, &err), TUSK_EACTOR);
    ck_assert_str_eq(text(&h), "F back");
    ck_assert_str_eq(err.message, "actor drv[0]: process_flush failed with status 1 (failure): failing: flush "
                                  "refused as configured");
    close_actor(&x);
    tusk_driver_destroy(&d);
    free_host(&h);
}
END_TEST

START_TEST(host_failures_come_back)
{
    host_t h;
    tusk_driver_t *d = new_driver(&h, 100);
    actor_t x = open_actor("passthrough", TUSK_FILTER, NULL);
    uint8_t in[4096];
    size_t n = frames_of(in, 3, 40);
    tusk_error_t err;

    /* No output buffer: the actor is not called; the input was counted. */
    h.fail_take_at = 1;
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "=> error");
    ck_assert_str_eq(err.message, "test host: no buffer 1");
    ck_assert_int_eq(err.code, TUSK_ENOMEM);
    ck_assert_str_eq(stats_text(d), "calls 0 in 1/3f/120B out 0/0f/0B");

    /* No buffer for the second call of a more-output sequence. */
    h.fail_take_at = 3;
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B out:2f/80 => error");
    ck_assert_str_eq(err.message, "test host: no buffer 3");
    ck_assert_str_eq(stats_text(d), "calls 1 in 2/6f/240B out 1/2f/80B");
    close_actor(&x);

    /* emit refusing the first output: not counted; the loop stops. */
    x = open_actor("passthrough", TUSK_FILTER, NULL);
    h.fail_take_at = 0;
    h.fail_emit_at = h.emits + 1;
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B out!:2f/80 => error");
    ck_assert_str_eq(err.message, "test host: emit 2 refused");
    ck_assert_str_eq(stats_text(d), "calls 2 in 3/9f/360B out 1/2f/80B");
    close_actor(&x);

    /* emitted failing (downstream, in the emulator): the output counts. */
    x = open_actor("passthrough", TUSK_FILTER, NULL);
    h.fail_emitted_at = h.emitteds + 1;
    ck_assert_str_eq(filter(d, &h, &x, in, n, &err), "B out:2f/80 => error");
    ck_assert_str_eq(err.message, "test host: downstream failed after output 2");
    ck_assert_str_eq(stats_text(d), "calls 3 in 4/12f/480B out 2/4f/160B");
    close_actor(&x);

    /* A producer with no output buffer. */
    h.fail_take_at = h.takes + 1;
    uint8_t one[64];
    size_t m = frames_of(one, 1, 40);
    char *path = tu_temp_path();
    FILE *fp = fopen(path, "wb");
    ck_assert_uint_eq(fwrite(one, 1, m, fp), m);
    fclose(fp);
    char params[4200];
    snprintf(params, sizeof params, "file = %s\n", path);
    x = open_actor("file_producer", TUSK_PRODUCER, params);
    bool ended = true;
    ck_assert_int_eq(tusk_driver_produce(d, x.a, &ended, &err), TUSK_ENOMEM);
    ck_assert(!ended);
    ck_assert_str_eq(text(&h), "");
    close_actor(&x);
    unlink(path);
    free(path);

    tusk_driver_destroy(&d);
    free_host(&h);

    /* A host without the three required functions is refused. */
    tusk_driver_host_t bad = {.take = take};
    ck_assert_int_eq(tusk_driver_new(&d, &bad, 100, &err), TUSK_EINVAL);
    ck_assert_ptr_null(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("driver");
    TCase *tc = tcase_create("driver");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, more_output_sequences);
    tcase_add_test(tc, forwarded_input_goes_on_itself);
    tcase_add_test(tc, random_frames_into_random_buffers);
    tcase_add_test(tc, flush_writes_what_was_held);
    tcase_add_test(tc, random_holdback_flush);
    tcase_add_test(tc, producer_to_end_and_consumer);
    tcase_add_test(tc, actor_errors_are_named);
    tcase_add_test(tc, host_failures_come_back);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
