/* check_evbuild.c - the event builder (tusk/evbuild.h).
 *
 *  - random streams (random multiplicities, timestamps, inputs, frame
 *    kinds) shuffled by random delays, per frame or per block of frames,
 *    and pushed frame by frame or buffer by buffer, with reorder set to the
 *    largest displacement the shuffle made: the output is the ideal
 *    grouping (an oracle here: sort, then group greedily), nothing late or
 *    forced, the statistics (depth, per input, per kind) exact;
 *  - window edges (t0 + window joins, t0 + window + 1 does not; window 0);
 *  - late frames: counted per input, written at once, never lost;
 *  - forced emission beyond max_held, and random streams under a small
 *    max_held and a too small reorder: every frame out once, every
 *    composite within its window;
 *  - flush over writers of every capacity from the largest item up: the
 *    same bytes as one big writer; too small a writer: TUSK_ELIMIT, and the
 *    output goes on afterwards;
 *  - equal timestamps: the output does not depend on how the inputs
 *    interleave;
 *  - meta:eof: held to the end, its count rewritten;
 *  - bad input (framing, data:psa, meta:eof, input index): an error naming
 *    the input and offset, nothing pushed; bad settings named.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tusk/evbuild.h"

#define TF_MAX 256                 /* payload bytes of a test frame, at most */
#define TYPE_OTHER 0xFA7F0301u     /* a type tusk has no name for */

typedef struct tf {
    adf_key_t key;                 /* length set */
    unsigned input;
    uint8_t payload[TF_MAX];
    size_t size;
} tf_t;

typedef struct stream {
    tf_t *f;
    size_t n, cap;
} stream_t;

static tf_t *add(stream_t *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->f = realloc(s->f, s->cap * sizeof *s->f);
        ck_assert_ptr_nonnull(s->f);
    }
    tf_t *t = &s->f[s->n++];
    memset(t, 0, sizeof *t);
    return t;
}

static bool is_psa(const tf_t *t)
{
    return t->key.type == ADF_TYPE_DATA_PSA;
}

/* A data:psa frame that decodes: random hits (any float bits). */
static void make_psa(tf_t *t, uint64_t ts, uint32_t event)
{
    adf_psa_t *p = calloc(1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    p->crystal_id = (uint16_t)tu_below(180);
    p->status = (uint16_t)tu_rand();
    p->core_energy[0] = tu_any_float();
    p->core_time[1] = tu_any_float();
    p->n_hits = (uint16_t)tu_below(4);
    p->has_fom = tu_below(2);
    for (unsigned i = 0; i < p->n_hits; i++) {
        p->hit[i].segment = (int16_t)tu_below(36);
        p->hit[i].crystal = (int16_t)p->crystal_id;
        p->hit[i].x = tu_any_float();
        p->hit[i].energy = (float)tu_uniform() * 1000.0f;
        p->hit[i].fom = tu_any_float();
    }
    uint8_t buf[ADF_KEY_SIZE + TF_MAX];
    adf_writer_t *w = adf_writer_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert(w && r);
    adf_writer_reset(w, buf, sizeof buf);
    adf_error_t ae;
    ck_assert_int_eq(adf_psa_encode(w, event, ts, p, &ae), ADF_OK);
    adf_frame_t fr;
    adf_reader_reset(r, buf, adf_writer_used(w), 0);
    ck_assert_int_eq(adf_reader_next(r, &fr), ADF_OK);
    t->key = fr.key;
    t->size = fr.payload_size;
    memcpy(t->payload, fr.payload, t->size);
    adf_writer_destroy(&w);
    adf_reader_destroy(&r);
    free(p);
}

static void make_simple(tf_t *t, uint32_t type, uint64_t ts, uint32_t event, size_t size)
{
    t->key = (adf_key_t){.length = (uint32_t)(ADF_KEY_SIZE + size), .type = type, .event = event, .timestamp = ts};
    t->size = size;
    tu_fill(t->payload, size);
}

/* An event:data composite from upstream (not the builder's kind): two
 * simple frames inside. */
static void make_composite(tf_t *t, uint64_t ts, uint32_t event)
{
    uint8_t sub[40];
    tu_fill(sub, sizeof sub);
    size_t n = tu_put_frame(t->payload, ADF_TYPE_DATA_TRACKED, event, ts, sub, 24);
    n += tu_put_frame(t->payload + n, TYPE_OTHER, event, ts + 1, sub + 24, 16);
    t->key = (adf_key_t){.length = (uint32_t)(ADF_KEY_SIZE + n), .type = ADF_TYPE_EVENT_DATA, .event = event,
                         .timestamp = ts};
    t->size = n;
}

/* A random stream of `decays`: 1-4 data:psa frames each, spread over up to
 * `spread` ticks, most with a data:truth at the decay's time, some other
 * frames (data:crystal, an unknown type, an upstream composite) nearby.
 * Frames of one decay mostly come on one input. */
static void gen_stream(stream_t *s, unsigned decays, uint64_t gap, uint64_t spread, unsigned inputs)
{
    uint64_t t = tu_below(1000);
    for (unsigned d = 0; d < decays; d++) {
        t += tu_below(8) == 0 ? 1000 + tu_below(1000) : tu_below((uint32_t)gap + 1);
        unsigned input = tu_below(inputs);
        unsigned k = 1 + tu_below(4);
        for (unsigned i = 0; i < k; i++) {
            tf_t *f = add(s);
            make_psa(f, t + tu_below((uint32_t)spread + 1), d);
            f->input = tu_below(4) ? input : tu_below(inputs);
        }
        if (tu_below(10) < 7) {
            tf_t *f = add(s);
            make_simple(f, ADF_TYPE_DATA_TRUTH, t, d, 24 + tu_below(60));
            f->input = input;
        }
        if (tu_below(5) == 0) {
            tf_t *f = add(s);
            uint64_t ts = t + tu_below((uint32_t)(2 * spread + 3));
            switch (tu_below(3)) {
            case 0: make_simple(f, ADF_TYPE_DATA_CRYSTAL, ts, d, tu_below(100)); break;
            case 1: make_simple(f, TYPE_OTHER, ts, d, tu_below(30)); break;
            default: make_composite(f, ts, d); break;
            }
            f->input = tu_below(inputs);
        }
    }
}

/* ---- arrival orders ------------------------------------------------------------ */

typedef struct arrival {
    uint64_t key;
    size_t index;
} arrival_t;

static int by_arrival(const void *a, const void *b)
{
    const arrival_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Reorder s in place into an arrival order: each frame (per_block: each
 * block of consecutive frames, which stays together, as a PSA instance's
 * buffer does) delayed by up to `delay` ticks. */
static void shuffle(stream_t *s, uint64_t delay, bool per_block)
{
    arrival_t *a = malloc(s->n * sizeof *a);
    tf_t *copy = malloc(s->n * sizeof *copy);
    ck_assert(a && copy);
    uint64_t block_key = 0;
    size_t left = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!per_block) {
            a[i].key = s->f[i].key.timestamp + tu_rand() % (delay + 1);
        } else {
            if (left == 0) {
                left = 1 + tu_below(12);
                block_key = s->f[i].key.timestamp + tu_rand() % (delay + 1);
            }
            left--;
            a[i].key = block_key;
        }
        a[i].index = i;
    }
    qsort(a, s->n, sizeof *a, by_arrival);
    memcpy(copy, s->f, s->n * sizeof *copy);
    for (size_t i = 0; i < s->n; i++)
        s->f[i] = copy[a[i].index];
    free(a);
    free(copy);
}

/* The largest reorder depth of an arrival order: how far a frame's
 * timestamp lies behind the newest one so far (itself included). */
static uint64_t displacement(const stream_t *s)
{
    uint64_t newest = 0, d = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->f[i].key.type == ADF_TYPE_META_EOF)
            continue;
        if (s->f[i].key.timestamp > newest)
            newest = s->f[i].key.timestamp;
        if (newest - s->f[i].key.timestamp > d)
            d = newest - s->f[i].key.timestamp;
    }
    return d;
}

/* ---- the oracle: sort everything, then group greedily ----------------------------- */

typedef struct ref {
    const tf_t *f;
    size_t seq; /* arrival */
} ref_t;

static int by_order(const void *a, const void *b)
{
    const ref_t *x = a, *y = b;
    uint64_t tx = x->f->key.timestamp, ty = y->f->key.timestamp;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    int rx = !is_psa(x->f), ry = !is_psa(y->f);
    if (rx != ry)
        return rx - ry;
    if (x->f->input != y->f->input)
        return x->f->input < y->f->input ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct group {
    bool event;
    uint64_t t0;
    size_t first, n_psa, n; /* into the oracle's order: psa frames, then the others */
} group_t;

typedef struct oracle {
    const tf_t **order;     /* frames in output order */
    group_t *g;
    size_t n_groups;
    size_t max_item;        /* bytes of the largest composite or lone frame */
} oracle_t;

static void oracle_make(oracle_t *o, const stream_t *s, uint64_t window)
{
    ref_t *r = malloc((s->n + 1) * sizeof *r);
    o->order = malloc((s->n + 1) * sizeof *o->order);
    o->g = malloc((s->n + 1) * sizeof *o->g);
    ck_assert(r && o->order && o->g);
    for (size_t i = 0; i < s->n; i++)
        r[i] = (ref_t){&s->f[i], i};
    qsort(r, s->n, sizeof *r, by_order);
    o->n_groups = 0;
    o->max_item = 0;
    size_t out = 0;
    for (size_t i = 0; i < s->n;) {
        group_t *g = &o->g[o->n_groups++];
        g->first = out;
        g->t0 = r[i].f->key.timestamp;
        g->event = is_psa(r[i].f);
        size_t j = i + 1;
        if (g->event)
            while (j < s->n && r[j].f->key.timestamp <= g->t0 + window)
                j++;
        size_t bytes = ADF_KEY_SIZE;
        for (size_t k = i; k < j; k++)
            if (is_psa(r[k].f)) {
                o->order[out++] = r[k].f;
                bytes += r[k].f->key.length;
            }
        g->n_psa = out - g->first;
        for (size_t k = i; k < j; k++)
            if (!is_psa(r[k].f)) {
                o->order[out++] = r[k].f;
                if (r[k].f->key.length > o->max_item)
                    o->max_item = r[k].f->key.length;
            }
        g->n = out - g->first;
        if (g->event && bytes > o->max_item)
            o->max_item = bytes;
        i = j;
    }
    free(r);
}

static void oracle_free(oracle_t *o)
{
    free(o->order);
    free(o->g);
}

static void expect_frame(const adf_frame_t *got, const tf_t *want, const char *where, size_t index)
{
    if (got->key.type != want->key.type || got->key.event != want->key.event ||
        got->key.timestamp != want->key.timestamp || got->payload_size != want->size ||
        (want->size && memcmp(got->payload, want->payload, want->size) != 0))
        ck_abort_msg("%s %zu: got type 0x%08X event %u ts %" PRIu64 " size %u, want 0x%08X event %u ts %" PRIu64
                     " size %zu (or other bytes)",
                     where, index, got->key.type, got->key.event, got->key.timestamp, got->payload_size,
                     want->key.type, want->key.event, want->key.timestamp, want->size);
}

/* The output is exactly the oracle's grouping: composites numbered from
 * 0 in order, with t0 and the data:psa frames, then the other frames. */
static void expect_output(const uint8_t *out, size_t size, const oracle_t *o)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP), *sub = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert(r && sub);
    adf_reader_reset(r, out, size, 0);
    adf_frame_t fr;
    uint32_t event = 0;
    for (size_t gi = 0; gi < o->n_groups; gi++) {
        const group_t *g = &o->g[gi];
        size_t k = 0;
        if (g->event) {
            ck_assert_msg(adf_reader_next(r, &fr) == ADF_OK, "group %zu: output ends", gi);
            ck_assert_msg(fr.key.type == ADF_TYPE_EVENT_DATA_PSA, "group %zu: not a composite (0x%08X)", gi,
                          fr.key.type);
            ck_assert_uint_eq(fr.key.event, event);
            ck_assert_uint_eq(fr.key.timestamp, g->t0);
            event++;
            ck_assert_int_eq(adf_reader_open_composite(sub, &fr), ADF_OK);
            adf_frame_t s;
            for (; k < g->n_psa; k++) {
                ck_assert_msg(adf_reader_next(sub, &s) == ADF_OK, "group %zu: composite too short", gi);
                expect_frame(&s, o->order[g->first + k], "composite frame", g->first + k);
            }
            ck_assert_msg(adf_reader_next(sub, &s) == ADF_END, "group %zu: composite too long", gi);
        }
        for (; k < g->n; k++) {
            ck_assert_msg(adf_reader_next(r, &fr) == ADF_OK, "group %zu: output ends", gi);
            expect_frame(&fr, o->order[g->first + k], "frame", g->first + k);
        }
    }
    ck_assert_msg(adf_reader_next(r, &fr) == ADF_END, "more output than expected");
    adf_reader_destroy(&r);
    adf_reader_destroy(&sub);
}

/* ---- driving the builder ----------------------------------------------------------- */

typedef struct sink {
    uint8_t *data;
    size_t size, cap;
    adf_writer_t *w;
    uint8_t *buf;
    size_t min_cap, max_cap; /* writer capacities drawn from */
} sink_t;

static void sink_init(sink_t *k, size_t min_cap, size_t max_cap)
{
    memset(k, 0, sizeof *k);
    k->min_cap = min_cap;
    k->max_cap = max_cap;
    k->w = adf_writer_new();
    k->buf = malloc(max_cap);
    ck_assert(k->w && k->buf);
}

static void sink_free(sink_t *k)
{
    adf_writer_destroy(&k->w);
    free(k->buf);
    free(k->data);
}

/* Take everything ready, over writers of random capacities. */
static void drain(evbuild_t *eb, sink_t *k)
{
    bool more;
    do {
        size_t cap = k->min_cap + tu_rand() % (k->max_cap - k->min_cap + 1);
        adf_writer_reset(k->w, k->buf, cap);
        tusk_error_t err;
        int rc = evbuild_take(eb, k->w, &more, &err);
        ck_assert_msg(rc == TUSK_OK, "evbuild_take into %zu bytes: %s", cap, err.message);
        size_t used = adf_writer_used(k->w);
        ck_assert_msg(!more || used > 0, "no progress with %zu bytes", cap);
        if (k->size + used > k->cap) {
            k->cap = 2 * (k->size + used) + 1024;
            k->data = realloc(k->data, k->cap);
            ck_assert_ptr_nonnull(k->data);
        }
        memcpy(k->data + k->size, k->buf, used);
        k->size += used;
    } while (more);
}

/* Push the stream in its order: frame by frame, or runs of one input's
 * frames as one buffer; take now and then. */
static void push_all(evbuild_t *eb, const stream_t *s, sink_t *k, bool buffers)
{
    uint8_t *buf = malloc(16 * (ADF_KEY_SIZE + TF_MAX));
    ck_assert_ptr_nonnull(buf);
    tusk_error_t err;
    for (size_t i = 0; i < s->n;) {
        size_t j = i + 1;
        if (buffers)
            while (j < s->n && j - i < 16 && s->f[j].input == s->f[i].input && tu_below(4))
                j++;
        size_t used = 0;
        for (size_t m = i; m < j; m++)
            used += tu_put_frame(buf + used, s->f[m].key.type, s->f[m].key.event, s->f[m].key.timestamp,
                                 s->f[m].payload, s->f[m].size);
        int rc;
        if (buffers) {
            rc = evbuild_push_buffer(eb, s->f[i].input, buf, used, &err);
        } else {
            adf_frame_t fr = {.key = s->f[i].key, .payload = buf + ADF_KEY_SIZE, .payload_size = (uint32_t)s->f[i].size};
            rc = evbuild_push(eb, s->f[i].input, &fr, &err);
        }
        ck_assert_msg(rc == TUSK_OK, "push: %s", err.message);
        if (tu_below(5) == 0)
            drain(eb, k);
        i = j;
    }
    free(buf);
}

static evbuild_t *new_builder(uint64_t window, uint64_t reorder, uint64_t max_held)
{
    evbuild_config_t cfg = {.window = window, .reorder = reorder, .max_held = max_held};
    evbuild_t *eb;
    tusk_error_t err;
    int rc = evbuild_new(&eb, &cfg, &err);
    ck_assert_msg(rc == TUSK_OK, "evbuild_new: %s", err.message);
    return eb;
}

static void finish(evbuild_t *eb, sink_t *k)
{
    tusk_error_t err;
    ck_assert_int_eq(evbuild_flush(eb, &err), TUSK_OK);
    drain(eb, k);
    evbuild_stats_t st;
    evbuild_stats(eb, &st);
    ck_assert_uint_eq(st.held, 0);
    ck_assert_uint_eq(st.ready, 0);
}

/* ---- random streams against the oracle ------------------------------------------------ */

static const uint64_t windows[] = {0, 1, 10, 40};

START_TEST(random_streams_give_the_ideal_grouping)
{
    for (int it = 0; it < 60; it++) {
        uint64_t window = windows[tu_below(4)];
        unsigned inputs = 1 + tu_below(4);
        stream_t s = {0};
        gen_stream(&s, 20 + tu_below(60), 2 * window + 4, window + 2, inputs);
        uint64_t delay = tu_below(3) == 0 ? 0 : tu_rand() % 3000;
        shuffle(&s, delay, tu_below(2));
        uint64_t depth = displacement(&s);
        uint64_t reorder = depth + (tu_below(3) ? 0 : tu_below(100));
        oracle_t o;
        oracle_make(&o, &s, window);
        evbuild_t *eb = new_builder(window, reorder, 1000000);
        sink_t k;
        sink_init(&k, o.max_item, 3 * o.max_item);
        push_all(eb, &s, &k, tu_below(2));
        finish(eb, &k);
        expect_output(k.data, k.size, &o);

        evbuild_stats_t st;
        evbuild_stats(eb, &st);
        size_t psa = 0, events = 0;
        for (size_t i = 0; i < s.n; i++)
            psa += is_psa(&s.f[i]);
        for (size_t g = 0; g < o.n_groups; g++)
            events += o.g[g].event;
        ck_assert_uint_eq(st.frames_in, s.n);
        ck_assert_uint_eq(st.frames_out, s.n);
        ck_assert_uint_eq(st.psa_in, psa);
        ck_assert_uint_eq(st.psa_out, psa);
        ck_assert_uint_eq(st.events, events);
        ck_assert_uint_eq(st.alone, o.n_groups - events);
        ck_assert_uint_eq(st.late, 0);
        ck_assert_uint_eq(st.forced, 0);
        ck_assert_uint_eq(st.depth_max, depth);
        /* Per input: frames, data:psa, and the depth seen on it. */
        unsigned top = 0;
        for (unsigned in = 0; in < inputs; in++) {
            uint64_t frames = 0, p = 0, newest = 0, d = 0;
            for (size_t i = 0; i < s.n; i++) {
                uint64_t ts = s.f[i].key.timestamp;
                newest = ts > newest ? ts : newest;
                if (s.f[i].input != in)
                    continue;
                frames++;
                p += is_psa(&s.f[i]);
                d = newest - ts > d ? newest - ts : d;
                top = in + 1;
            }
            evbuild_input_stats_t is;
            evbuild_input_stats(eb, in, &is);
            ck_assert_uint_eq(is.frames, frames);
            ck_assert_uint_eq(is.psa, p);
            ck_assert_uint_eq(is.late, 0);
            ck_assert_uint_eq(is.depth_max, d);
        }
        ck_assert_uint_eq(st.inputs, top);
        sink_free(&k);
        oracle_free(&o);
        evbuild_destroy(&eb);
        ck_assert_ptr_null(eb);
        free(s.f);
    }
}
END_TEST

/* Under too small a reorder and a small max_held the grouping is not the
 * ideal one, but every frame comes out exactly once, composites hold only
 * data:psa frames within window of their t0, and the counts add up. */
START_TEST(random_streams_under_pressure_lose_nothing)
{
    for (int it = 0; it < 40; it++) {
        uint64_t window = windows[tu_below(4)];
        unsigned inputs = 1 + tu_below(3);
        stream_t s = {0};
        gen_stream(&s, 30 + tu_below(50), 2 * window + 4, window + 2, inputs);
        shuffle(&s, tu_rand() % 3000, tu_below(2));
        uint64_t reorder = tu_rand() % (displacement(&s) + 1);
        uint64_t max_held = 1 + tu_below(20);
        evbuild_t *eb = new_builder(window, reorder, max_held);
        sink_t k;
        sink_init(&k, 4096, 8192);
        push_all(eb, &s, &k, tu_below(2));
        evbuild_stats_t st;
        evbuild_stats(eb, &st);
        ck_assert_uint_le(st.held_max, max_held + 1); /* counted before the push's forced emission */
        finish(eb, &k);
        evbuild_stats(eb, &st);
        ck_assert_uint_eq(st.frames_in, s.n);
        ck_assert_uint_eq(st.frames_out, s.n);
        ck_assert_uint_eq(st.psa_out, st.psa_in);

        /* Every output frame matches one input frame not matched before. */
        bool *seen = calloc(s.n, sizeof *seen);
        ck_assert_ptr_nonnull(seen);
        adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP), *sub = adf_reader_new(ADF_ON_ERROR_STOP);
        adf_reader_reset(r, k.data, k.size, 0);
        adf_frame_t fr, sf;
        size_t matched = 0;
        uint64_t events = 0;
        while (adf_reader_next(r, &fr) == ADF_OK) {
            adf_frame_t *list = &fr;
            bool composite = fr.key.type == ADF_TYPE_EVENT_DATA_PSA;
            if (composite) {
                ck_assert_uint_eq(fr.key.event, events);
                events++;
                ck_assert_int_eq(adf_reader_open_composite(sub, &fr), ADF_OK);
                list = &sf;
            }
            while (!composite || adf_reader_next(sub, &sf) == ADF_OK) {
                if (composite) {
                    ck_assert_uint_eq(sf.key.type, ADF_TYPE_DATA_PSA);
                    ck_assert_uint_ge(sf.key.timestamp, fr.key.timestamp);
                    ck_assert_uint_le(sf.key.timestamp, fr.key.timestamp + window);
                }
                size_t i = 0;
                for (; i < s.n; i++)
                    if (!seen[i] && list->key.type == s.f[i].key.type && list->key.event == s.f[i].key.event &&
                        list->key.timestamp == s.f[i].key.timestamp && list->payload_size == s.f[i].size &&
                        memcmp(list->payload, s.f[i].payload, s.f[i].size) == 0)
                        break;
                ck_assert_msg(i < s.n, "an output frame matches no input frame");
                seen[i] = true;
                matched++;
                if (!composite)
                    break;
            }
        }
        ck_assert_uint_eq(matched, s.n);
        ck_assert_uint_eq(events, st.events);
        adf_reader_destroy(&r);
        adf_reader_destroy(&sub);
        free(seen);
        sink_free(&k);
        evbuild_destroy(&eb);
        free(s.f);
    }
}
END_TEST

/* ---- hand-made streams ----------------------------------------------------------------- */

/* A stream written by hand: frames of `kinds` ('p' data:psa, 't' data:truth)
 * at `ts`, all on `input`. */
static void push_one(evbuild_t *eb, unsigned input, char kind, uint64_t ts, tf_t *keep)
{
    tf_t t;
    if (kind == 'p')
        make_psa(&t, ts, (uint32_t)ts);
    else
        make_simple(&t, ADF_TYPE_DATA_TRUTH, ts, (uint32_t)ts, 24);
    t.input = input;
    if (keep)
        *keep = t;
    adf_frame_t fr = {.key = t.key, .payload = t.payload, .payload_size = (uint32_t)t.size, .offset = 0};
    tusk_error_t err;
    int rc = evbuild_push(eb, input, &fr, &err);
    ck_assert_msg(rc == TUSK_OK, "push: %s", err.message);
}

/* What the output holds, as text: "E0@100[100,110]" for a composite (its
 * event, t0, and its frames' timestamps), "t@110" for a lone frame. */
static void describe(const uint8_t *out, size_t size, char *text, size_t text_size)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP), *sub = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, out, size, 0);
    adf_frame_t fr, sf;
    size_t used = 0;
    text[0] = '\0';
    while (adf_reader_next(r, &fr) == ADF_OK) {
        int n;
        if (fr.key.type == ADF_TYPE_EVENT_DATA_PSA) {
            n = snprintf(text + used, text_size - used, "%sE%u@%" PRIu64 "[", used ? " " : "", fr.key.event,
                         fr.key.timestamp);
            used += (size_t)n;
            ck_assert_int_eq(adf_reader_open_composite(sub, &fr), ADF_OK);
            bool first = true;
            while (adf_reader_next(sub, &sf) == ADF_OK) {
                n = snprintf(text + used, text_size - used, "%s%" PRIu64, first ? "" : ",", sf.key.timestamp);
                used += (size_t)n;
                first = false;
            }
            n = snprintf(text + used, text_size - used, "]");
        } else {
            n = snprintf(text + used, text_size - used, "%s%c@%" PRIu64, used ? " " : "",
                         fr.key.type == ADF_TYPE_DATA_TRUTH ? 't' : '?', fr.key.timestamp);
        }
        used += (size_t)n;
        ck_assert_uint_lt(used, text_size);
    }
    adf_reader_destroy(&r);
    adf_reader_destroy(&sub);
}

static void take_text(evbuild_t *eb, char *text, size_t text_size)
{
    sink_t k;
    sink_init(&k, 65536, 65536);
    drain(eb, &k);
    describe(k.data, k.size, text, text_size);
    sink_free(&k);
}

static void flush_text(evbuild_t *eb, char *text, size_t text_size)
{
    tusk_error_t err;
    ck_assert_int_eq(evbuild_flush(eb, &err), TUSK_OK);
    take_text(eb, text, text_size);
}

START_TEST(window_edges)
{
    char text[512];
    evbuild_t *eb = new_builder(10, 1000, 1000);
    push_one(eb, 0, 'p', 100, NULL);
    push_one(eb, 0, 'p', 110, NULL); /* t0 + window: joins */
    push_one(eb, 0, 't', 110, NULL); /* joins, after the composite */
    push_one(eb, 0, 'p', 111, NULL); /* t0 + window + 1: a new event */
    push_one(eb, 0, 't', 122, NULL); /* past that one's window: alone */
    push_one(eb, 0, 'p', 200, NULL);
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, ""); /* nothing is safe yet */
    flush_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E0@100[100,110] t@110 E1@111[111] t@122 E2@200[200]");
    evbuild_destroy(&eb);

    /* window 0: equal timestamps only; a data:truth at t0 joins */
    eb = new_builder(0, 1000, 1000);
    push_one(eb, 0, 't', 5, NULL);
    push_one(eb, 0, 'p', 5, NULL);
    push_one(eb, 1, 'p', 5, NULL);
    push_one(eb, 0, 'p', 6, NULL);
    push_one(eb, 0, 't', 4, NULL);
    flush_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "t@4 E0@5[5,5] t@5 E1@6[6]");
    evbuild_destroy(&eb);
}
END_TEST

/* Events go out once the newest timestamp passes t0 + window + reorder. */
START_TEST(emitted_when_safe)
{
    char text[512];
    evbuild_t *eb = new_builder(10, 100, 1000);
    push_one(eb, 0, 'p', 1000, NULL);
    push_one(eb, 0, 't', 1000, NULL);
    push_one(eb, 0, 'p', 1110, NULL); /* newest = end + reorder: not yet */
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "");
    push_one(eb, 0, 'p', 1111, NULL); /* past it: the first event goes */
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E0@1000[1000] t@1000");
    push_one(eb, 0, 't', 1300, NULL); /* the lone frame at 1300 waits too */
    push_one(eb, 0, 'p', 1500, NULL);
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E1@1110[1110,1111] t@1300");
    flush_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E2@1500[1500]");
    evbuild_destroy(&eb);
}
END_TEST

START_TEST(late_frames_are_counted_and_emitted)
{
    char text[512];
    evbuild_t *eb = new_builder(10, 100, 1000);
    push_one(eb, 0, 'p', 1000, NULL);
    push_one(eb, 0, 'p', 1200, NULL); /* 1200 > 1010 + 100: event 1000 goes */
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E0@1000[1000]");
    push_one(eb, 1, 'p', 1005, NULL); /* inside the emitted window: late */
    push_one(eb, 1, 't', 1010, NULL); /* at its end: late too */
    push_one(eb, 1, 't', 900, NULL);  /* before it: late */
    push_one(eb, 0, 'p', 1011, NULL); /* just after: in time, and safe at once */
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E1@1005[1005] t@1010 t@900 E2@1011[1011]");
    evbuild_stats_t st;
    evbuild_stats(eb, &st);
    ck_assert_uint_eq(st.late, 3);
    evbuild_input_stats_t is;
    evbuild_input_stats(eb, 1, &is);
    ck_assert_uint_eq(is.late, 3);
    ck_assert_uint_eq(is.frames, 3);
    ck_assert_uint_eq(is.depth_max, 300);
    evbuild_input_stats(eb, 0, &is);
    ck_assert_uint_eq(is.late, 0);
    evbuild_input_stats(eb, 7, &is); /* never pushed */
    ck_assert_uint_eq(is.frames, 0);
    flush_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E3@1200[1200]");
    evbuild_stats(eb, &st);
    ck_assert_uint_eq(st.frames_in, 6);
    ck_assert_uint_eq(st.frames_out, 6);
    ck_assert_uint_eq(st.events, 4);
    ck_assert_uint_eq(st.alone, 2);
    ck_assert_uint_eq(st.inputs, 2);
    evbuild_destroy(&eb);
}
END_TEST

START_TEST(forced_beyond_max_held)
{
    char text[512];
    evbuild_t *eb = new_builder(10, ADF_TIMESTAMP_MAX, 3);
    push_one(eb, 0, 'p', 0, NULL);
    push_one(eb, 0, 'p', 100, NULL);
    push_one(eb, 0, 'p', 200, NULL);
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "");
    push_one(eb, 0, 'p', 300, NULL); /* 4 held > 3: the earliest goes */
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E0@0[0]");
    push_one(eb, 0, 'p', 105, NULL); /* joins event 100, still held */
    take_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E1@100[100,105]");
    push_one(eb, 0, 'p', 5, NULL); /* its place went out: late */
    flush_text(eb, text, sizeof text);
    ck_assert_str_eq(text, "E2@5[5] E3@200[200] E4@300[300]");
    evbuild_stats_t st;
    evbuild_stats(eb, &st);
    ck_assert_uint_eq(st.forced, 2);
    ck_assert_uint_eq(st.late, 1);
    ck_assert_uint_eq(st.held_max, 4);
    ck_assert_uint_eq(st.frames_out, 6);
    evbuild_destroy(&eb);
}
END_TEST

/* ---- resumable output ----------------------------------------------------------------- */

START_TEST(flush_over_every_capacity)
{
    stream_t s = {0};
    gen_stream(&s, 8, 30, 12, 2);
    shuffle(&s, 200, false);
    oracle_t o;
    oracle_make(&o, &s, 10);
    tusk_error_t err;
    /* The reference: one writer large enough for everything. */
    evbuild_t *eb = new_builder(10, ADF_TIMESTAMP_MAX, 1000000);
    sink_t ref;
    sink_init(&ref, 1 << 20, 1 << 20);
    push_all(eb, &s, &ref, false);
    ck_assert_uint_eq(ref.size, 0);
    finish(eb, &ref);
    expect_output(ref.data, ref.size, &o);
    evbuild_destroy(&eb);

    for (size_t cap = o.max_item; cap <= ref.size + 1; cap++) {
        eb = new_builder(10, ADF_TIMESTAMP_MAX, 1000000);
        sink_t k;
        sink_init(&k, cap, cap);
        push_all(eb, &s, &k, true);
        finish(eb, &k);
        ck_assert_msg(k.size == ref.size && memcmp(k.data, ref.data, ref.size) == 0,
                      "output through writers of %zu bytes differs", cap);
        sink_free(&k);
        evbuild_destroy(&eb);
    }

    /* Too small for the largest item: TUSK_ELIMIT naming its size; a
     * larger writer then goes on where it stopped. */
    eb = new_builder(10, ADF_TIMESTAMP_MAX, 1000000);
    sink_t k;
    sink_init(&k, o.max_item - 1, o.max_item - 1);
    push_all(eb, &s, &k, false);
    ck_assert_int_eq(evbuild_flush(eb, &err), TUSK_OK);
    int rc;
    bool more;
    do {
        adf_writer_reset(k.w, k.buf, o.max_item - 1);
        rc = evbuild_take(eb, k.w, &more, &err);
        size_t used = adf_writer_used(k.w);
        k.data = realloc(k.data, k.size + used + 1);
        memcpy(k.data + k.size, k.buf, used);
        k.size += used;
    } while (rc == TUSK_OK && more);
    ck_assert_int_eq(rc, TUSK_ELIMIT);
    char size_text[32];
    snprintf(size_text, sizeof size_text, "of %zu bytes", o.max_item);
    tu_assert_error(&err, TUSK_ELIMIT, size_text);
    k.min_cap = k.max_cap = 1 << 16;
    free(k.buf);
    k.buf = malloc(1 << 16);
    drain(eb, &k);
    ck_assert_msg(k.size == ref.size && memcmp(k.data, ref.data, ref.size) == 0, "output after ELIMIT differs");
    sink_free(&k);
    evbuild_destroy(&eb);
    sink_free(&ref);
    oracle_free(&o);
    free(s.f);
}
END_TEST

/* ---- equal timestamps -------------------------------------------------------------------- */

/* Two arrival orders that keep each input's own order give the same bytes:
 * ties go by data:psa first, input, then arrival within the input. */
START_TEST(equal_timestamps_are_deterministic)
{
    for (int it = 0; it < 20; it++) {
        unsigned inputs = 2 + tu_below(3);
        stream_t s = {0};
        for (int i = 0; i < 80; i++) {
            tf_t *f = add(&s);
            uint64_t ts = 100 + tu_below(4) * 3;
            if (tu_below(3))
                make_psa(f, ts, (uint32_t)i);
            else
                make_simple(f, ADF_TYPE_DATA_TRUTH, ts, (uint32_t)i, 8);
            f->input = tu_below(inputs);
        }
        uint8_t *out[2];
        size_t size[2];
        for (int run = 0; run < 2; run++) {
            /* A random interleaving of the inputs, each in its own order. */
            stream_t a = {0};
            size_t *next = calloc(inputs, sizeof *next);
            for (size_t m = 0; m < s.n; m++) {
                unsigned in;
                size_t i;
                do {
                    in = tu_below(inputs);
                    for (i = next[in]; i < s.n && s.f[i].input != in; i++)
                        ;
                } while (i == s.n);
                *add(&a) = s.f[i];
                next[in] = i + 1;
            }
            free(next);
            evbuild_t *eb = new_builder(3, ADF_TIMESTAMP_MAX, 1000000);
            sink_t k;
            sink_init(&k, 1 << 16, 1 << 16);
            push_all(eb, &a, &k, tu_below(2));
            finish(eb, &k);
            if (run == 0) {
                oracle_t o;
                oracle_make(&o, &a, 3);
                expect_output(k.data, k.size, &o);
                oracle_free(&o);
            }
            out[run] = k.data;
            size[run] = k.size;
            k.data = NULL;
            sink_free(&k);
            evbuild_destroy(&eb);
            free(a.f);
        }
        ck_assert(size[0] == size[1] && memcmp(out[0], out[1], size[0]) == 0);
        free(out[0]);
        free(out[1]);
        free(s.f);
    }
}
END_TEST

/* ---- meta:eof ---------------------------------------------------------------------------- */

START_TEST(eof_held_to_the_end_and_recounted)
{
    evbuild_t *eb = new_builder(10, 1000, 1000);
    uint8_t buf[1024];
    size_t n = 0;
    uint8_t eof12[12] = {7, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0}; /* run 7, "99 frames" */
    tf_t p1, p2;
    make_psa(&p1, 50, 1);
    make_psa(&p2, 52, 2);
    n += tu_put_frame(buf + n, p1.key.type, p1.key.event, p1.key.timestamp, p1.payload, p1.size);
    n += tu_put_frame(buf + n, ADF_TYPE_META_EOF, 3, 10, eof12, 12);   /* counted */
    n += tu_put_frame(buf + n, p2.key.type, p2.key.event, p2.key.timestamp, p2.payload, p2.size);
    n += tu_put_frame(buf + n, ADF_TYPE_DATA_TRUTH, 2, 900, eof12, 4);
    n += tu_put_frame(buf + n, ADF_TYPE_META_EOF, 4, 5, NULL, 0);      /* AGATA's, empty */
    n += tu_put_frame(buf + n, ADF_TYPE_META_EOF, 5, 20, eof12, 12);   /* counted again */
    tusk_error_t err;
    ck_assert_int_eq(evbuild_push_buffer(eb, 0, buf, n, &err), TUSK_OK);
    sink_t k;
    sink_init(&k, 4096, 4096);
    finish(eb, &k);
    /* E0 (both data:psa), the truth, then the meta:eof frames: the first
     * counts the 2 frames before it, the empty one is a frame, the last
     * counts that one. */
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(r, k.data, k.size, 0);
    adf_frame_t fr;
    uint32_t want_type[] = {ADF_TYPE_EVENT_DATA_PSA, ADF_TYPE_DATA_TRUTH, ADF_TYPE_META_EOF, ADF_TYPE_META_EOF,
                            ADF_TYPE_META_EOF};
    uint32_t want_event[] = {0, 2, 3, 4, 5};
    uint64_t want_count[] = {0, 0, 2, 0, 1};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(adf_reader_next(r, &fr), ADF_OK);
        ck_assert_uint_eq(fr.key.type, want_type[i]);
        ck_assert_uint_eq(fr.key.event, want_event[i]);
        if (fr.key.type == ADF_TYPE_META_EOF && fr.payload_size) {
            adf_eof_t e;
            adf_error_t ae;
            ck_assert_int_eq(adf_eof_decode(&fr, &e, &ae), ADF_OK);
            ck_assert_uint_eq(e.run, 7);
            ck_assert_uint_eq(e.frames, want_count[i]);
        }
    }
    ck_assert_int_eq(adf_reader_next(r, &fr), ADF_END);
    evbuild_stats_t st;
    evbuild_stats(eb, &st);
    ck_assert_uint_eq(st.eofs, 3);
    ck_assert_uint_eq(st.frames_in, 6);
    ck_assert_uint_eq(st.frames_out, 6);
    adf_reader_destroy(&r);
    sink_free(&k);
    evbuild_destroy(&eb);
}
END_TEST

/* ---- bad input and settings ----------------------------------------------------------------- */

START_TEST(bad_input_is_named_and_nothing_pushed)
{
    evbuild_t *eb = new_builder(10, 1000, 1000);
    uint8_t buf[1024];
    tusk_error_t err;
    tf_t p;
    make_psa(&p, 50, 1);
    size_t good = tu_put_frame(buf, p.key.type, p.key.event, p.key.timestamp, p.payload, p.size);

    /* A data:psa whose payload is one byte short, at offset `good`. */
    size_t n = good + tu_put_frame(buf + good, ADF_TYPE_DATA_PSA, 2, 60, p.payload, p.size - 1);
    ck_assert_int_eq(evbuild_push_buffer(eb, 1, buf, n, &err), TUSK_EINVAL);
    char needle[64];
    snprintf(needle, sizeof needle, "input 1, offset %zu: data:psa", good);
    tu_assert_error(&err, TUSK_EINVAL, needle);

    /* A meta:eof of 5 bytes. */
    n = good + tu_put_frame(buf + good, ADF_TYPE_META_EOF, 2, 60, p.payload, 5);
    ck_assert_int_eq(evbuild_push_buffer(eb, 2, buf, n, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "meta:eof");

    /* A frame running past the end of the buffer. */
    ck_assert_int_eq(evbuild_push_buffer(eb, 3, buf, good - 1, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "input 3");
    tu_assert_error(&err, TUSK_EINVAL, "offset 0");

    /* The same frame alone, through evbuild_push, names its offset. */
    adf_frame_t fr = {.key = p.key, .payload = p.payload, .payload_size = (uint32_t)p.size - 2, .offset = 4242};
    ck_assert_int_eq(evbuild_push(eb, 0, &fr, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "offset 4242");

    /* An input index out of range. */
    fr.payload_size = (uint32_t)p.size;
    ck_assert_int_eq(evbuild_push(eb, EVBUILD_MAX_INPUTS, &fr, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "input");

    evbuild_stats_t st;
    evbuild_stats(eb, &st);
    ck_assert_uint_eq(st.frames_in, 0);
    ck_assert_uint_eq(st.held, 0);

    /* reset drops what is held and the counts. */
    ck_assert_int_eq(evbuild_push_buffer(eb, 0, buf, good, &err), TUSK_OK);
    evbuild_reset(eb);
    evbuild_stats(eb, &st);
    ck_assert_uint_eq(st.frames_in, 0);
    ck_assert_uint_eq(st.held, 0);
    ck_assert_int_eq(evbuild_flush(eb, &err), TUSK_OK);
    bool more;
    adf_writer_t *w = adf_writer_new();
    adf_writer_reset(w, buf, sizeof buf);
    ck_assert_int_eq(evbuild_take(eb, w, &more, &err), TUSK_OK);
    ck_assert(!more);
    ck_assert_uint_eq(adf_writer_used(w), 0);
    adf_writer_destroy(&w);
    evbuild_destroy(&eb);
}
END_TEST

static int read_settings(const char *text, evbuild_config_t *cfg, tusk_error_t *err)
{
    tusk_params_t *p = tusk_params_new();
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tusk_params_parse(p, text, strlen(text), "test", err), TUSK_OK);
    evbuild_config_default(cfg);
    int rc = evbuild_config_read(cfg, p, "settings", err);
    tusk_params_destroy(&p);
    return rc;
}

START_TEST(settings_are_checked_and_named)
{
    evbuild_config_t cfg;
    tusk_error_t err;
    ck_assert_int_eq(read_settings("window = 40\nreorder = 5000\nmax_held = 7\ninstance = 0\n", &cfg, &err), TUSK_OK);
    ck_assert_uint_eq(cfg.window, 40);
    ck_assert_uint_eq(cfg.reorder, 5000);
    ck_assert_uint_eq(cfg.max_held, 7);
    ck_assert_int_eq(read_settings("", &cfg, &err), TUSK_OK);
    ck_assert_uint_eq(cfg.window, EVBUILD_DEFAULT_WINDOW);
    ck_assert_uint_eq(cfg.reorder, EVBUILD_DEFAULT_REORDER);
    ck_assert_uint_eq(cfg.max_held, EVBUILD_DEFAULT_MAX_HELD);

    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"window = ten\n", "'window'"},
        {"window = 281474976710656\n", "window = 281474976710656"},
        {"reorder = -1\n", "'reorder'"},
        {"reorder = 281474976710656\n", "reorder"},
        {"max_held = 0\n", "max_held = 0"},
        {"max_held = 4294967296\n", "max_held"},
        {"windwo = 10\n", "'windwo'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(read_settings(bad[i].text, &cfg, &err), TUSK_EPARAM);
        tu_assert_error(&err, TUSK_EPARAM, bad[i].needle);
        tu_assert_error(&err, TUSK_EPARAM, "settings");
        ck_assert_uint_eq(cfg.window, EVBUILD_DEFAULT_WINDOW); /* untouched on failure */
    }
    evbuild_config_default(&cfg);
    cfg.max_held = 0;
    evbuild_t *keep = new_builder(10, 10, 10), *eb = keep;
    ck_assert_int_eq(evbuild_new(&eb, &cfg, &err), TUSK_EPARAM);
    ck_assert_ptr_null(eb);
    evbuild_destroy(&keep);
    tu_assert_error(&err, TUSK_EPARAM, "max_held");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("evbuild");
    TCase *tc = tcase_create("streams");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_streams_give_the_ideal_grouping);
    tcase_add_test(tc, random_streams_under_pressure_lose_nothing);
    tcase_add_test(tc, equal_timestamps_are_deterministic);
    suite_add_tcase(s, tc);
    tc = tcase_create("rules");
    tcase_add_test(tc, window_edges);
    tcase_add_test(tc, emitted_when_safe);
    tcase_add_test(tc, late_frames_are_counted_and_emitted);
    tcase_add_test(tc, forced_beyond_max_held);
    tcase_add_test(tc, eof_held_to_the_end_and_recounted);
    suite_add_tcase(s, tc);
    tc = tcase_create("output");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, flush_over_every_capacity);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, bad_input_is_named_and_nothing_pushed);
    tcase_add_test(tc, settings_are_checked_and_named);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
