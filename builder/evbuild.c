/* evbuild.c - the event builder: a reorder buffer (binary heap) of copied
 * frames, the decision of what is safe to emit, and the output queue that
 * evbuild_take writes out resumably. See tusk/evbuild.h and README.md. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/adf.h"
#include "tusk/evbuild.h"
#include "base/grow.h"

/* A held or ready frame: its key and a copy of its payload. */
typedef struct frame {
    adf_key_t key;
    uint64_t seq;      /* arrival number, all inputs together */
    uint32_t input;
    uint32_t rank;     /* 0 data:psa, 1 other: data:psa first at equal timestamps */
    uint8_t *payload;  /* key.length - ADF_KEY_SIZE bytes (NULL when 0) */
} frame_t;

enum group_kind { GROUP_EVENT, GROUP_ALONE, GROUP_EOF };

/* One unit of output: an event (composite of its first n_psa frames, then
 * the rest alone) or one frame alone. Its frames are consecutive in the
 * ready queue. */
typedef struct group {
    uint64_t t0;
    uint32_t event;
    uint32_t n_psa, n;
    uint32_t done;     /* frames written so far (the composite's at once) */
    enum group_kind kind;
} group_t;

/* A growable FIFO of fixed-size items: [head, n) are live. */
typedef struct fifo {
    void *items;
    size_t head, n, cap, size;
} fifo_t;

struct evbuild {
    evbuild_config_t cfg;
    frame_t *heap;             /* reorder buffer, ordered by frame_before */
    size_t n_heap, cap_heap;
    fifo_t ready;              /* frame_t, in output order */
    fifo_t groups;             /* group_t */
    fifo_t eofs;               /* frame_t: meta:eof frames until the flush */
    frame_t *gather;           /* an event's frames while it is gathered */
    size_t cap_gather;
    evbuild_input_stats_t *in;
    unsigned cap_in;
    adf_reader_t *reader;
    adf_psa_t *psa;            /* decoding check */
    uint64_t seq;
    uint64_t newest;           /* largest timestamp pushed */
    uint64_t floor;            /* frames with ts < floor are late */
    uint32_t next_event;
    uint64_t since_eof;        /* top-level frames written since the last counted meta:eof */
    evbuild_stats_t st;
};

const char *const evbuild_config_keys[] = {"window", "reorder", "max_held", NULL};

/* ---- configuration ---------------------------------------------------------- */

void evbuild_config_default(evbuild_config_t *cfg)
{
    cfg->window = EVBUILD_DEFAULT_WINDOW;
    cfg->reorder = EVBUILD_DEFAULT_REORDER;
    cfg->max_held = EVBUILD_DEFAULT_MAX_HELD;
}

int evbuild_config_check(const evbuild_config_t *cfg, tusk_error_t *err)
{
    if (cfg->window > ADF_TIMESTAMP_MAX)
        return tusk_error_set(err, TUSK_EPARAM, "window = %" PRIu64 ": at most %" PRIu64 " ticks (48 bits)",
                              cfg->window, (uint64_t)ADF_TIMESTAMP_MAX);
    if (cfg->reorder > ADF_TIMESTAMP_MAX)
        return tusk_error_set(err, TUSK_EPARAM, "reorder = %" PRIu64 ": at most %" PRIu64 " ticks (48 bits)",
                              cfg->reorder, (uint64_t)ADF_TIMESTAMP_MAX);
    if (cfg->max_held < 1 || cfg->max_held > UINT32_MAX)
        return tusk_error_set(err, TUSK_EPARAM, "max_held = %" PRIu64 ": must be 1 to %" PRIu32 " frames",
                              cfg->max_held, UINT32_MAX);
    return TUSK_OK;
}

int evbuild_config_read(evbuild_config_t *cfg, const tusk_params_t *params, const char *origin, tusk_error_t *err)
{
    evbuild_config_t c = *cfg;
    int rc = tusk_params_expect(params, evbuild_config_keys, err);
    if (rc == TUSK_OK)
        rc = tusk_params_u64(params, "window", c.window, &c.window, err);
    if (rc == TUSK_OK)
        rc = tusk_params_u64(params, "reorder", c.reorder, &c.reorder, err);
    if (rc == TUSK_OK)
        rc = tusk_params_u64(params, "max_held", c.max_held, &c.max_held, err);
    if (rc == TUSK_OK)
        rc = evbuild_config_check(&c, err);
    if (rc != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return rc;
    }
    *cfg = c;
    return TUSK_OK;
}

/* ---- containers -------------------------------------------------------------- */

static void *fifo_at(const fifo_t *f, size_t i)
{
    return (char *)f->items + i * f->size;
}

static size_t fifo_len(const fifo_t *f)
{
    return f->n - f->head;
}

/* Room for one more item at the end; compacts first when half is spent. */
static void *fifo_push(fifo_t *f)
{
    if (f->n == f->cap && f->head > 0) {
        memmove(f->items, fifo_at(f, f->head), fifo_len(f) * f->size);
        f->n -= f->head;
        f->head = 0;
    }
    if (tusk_grow(&f->items, &f->cap, f->n + 1, f->size) != 0)
        return NULL;
    return fifo_at(f, f->n++);
}

static void frame_free(frame_t *fr)
{
    free(fr->payload);
    fr->payload = NULL;
}

/* The reorder buffer's order: timestamp, data:psa first, input, arrival. */
static bool frame_before(const frame_t *a, const frame_t *b)
{
    if (a->key.timestamp != b->key.timestamp)
        return a->key.timestamp < b->key.timestamp;
    if (a->rank != b->rank)
        return a->rank < b->rank;
    if (a->input != b->input)
        return a->input < b->input;
    return a->seq < b->seq;
}

static bool heap_push(evbuild_t *eb, const frame_t *fr)
{
    if (tusk_grow(&eb->heap, &eb->cap_heap, eb->n_heap + 1, sizeof *eb->heap) != 0)
        return false;
    size_t i = eb->n_heap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!frame_before(fr, &eb->heap[parent]))
            break;
        eb->heap[i] = eb->heap[parent];
        i = parent;
    }
    eb->heap[i] = *fr;
    return true;
}

static frame_t heap_pop(evbuild_t *eb)
{
    frame_t top = eb->heap[0];
    frame_t last = eb->heap[--eb->n_heap];
    size_t i = 0, n = eb->n_heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && frame_before(&eb->heap[c + 1], &eb->heap[c]))
            c++;
        if (!frame_before(&eb->heap[c], &last))
            break;
        eb->heap[i] = eb->heap[c];
        i = c;
    }
    if (n)
        eb->heap[i] = last;
    return top;
}

/* ---- life cycle ---------------------------------------------------------------- */

int evbuild_new(evbuild_t **out, const evbuild_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int rc = evbuild_config_check(cfg, err);
    if (rc != TUSK_OK)
        return rc;
    evbuild_t *eb = calloc(1, sizeof *eb);
    if (!eb)
        return tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory");
    eb->cfg = *cfg;
    eb->ready.size = sizeof(frame_t);
    eb->eofs.size = sizeof(frame_t);
    eb->groups.size = sizeof(group_t);
    eb->reader = adf_reader_new(ADF_ON_ERROR_STOP);
    eb->psa = malloc(sizeof *eb->psa);
    if (!eb->reader || !eb->psa) {
        evbuild_destroy(&eb);
        return tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory");
    }
    *out = eb;
    return TUSK_OK;
}

static void drop_frames(evbuild_t *eb)
{
    for (size_t i = 0; i < eb->n_heap; i++)
        frame_free(&eb->heap[i]);
    eb->n_heap = 0;
    fifo_t *lists[] = {&eb->ready, &eb->eofs};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = lists[k]->head; i < lists[k]->n; i++)
            frame_free(fifo_at(lists[k], i));
        lists[k]->head = lists[k]->n = 0;
    }
    eb->groups.head = eb->groups.n = 0;
}

void evbuild_destroy(evbuild_t **ebp)
{
    if (!ebp || !*ebp)
        return;
    evbuild_t *eb = *ebp;
    drop_frames(eb);
    free(eb->heap);
    free(eb->ready.items);
    free(eb->eofs.items);
    free(eb->groups.items);
    free(eb->gather);
    free(eb->in);
    free(eb->psa);
    adf_reader_destroy(&eb->reader);
    free(eb);
    *ebp = NULL;
}

void evbuild_reset(evbuild_t *eb)
{
    drop_frames(eb);
    if (eb->in)
        memset(eb->in, 0, eb->cap_in * sizeof *eb->in);
    memset(&eb->st, 0, sizeof eb->st);
    eb->seq = eb->newest = eb->floor = eb->since_eof = 0;
    eb->next_event = 0;
}

const evbuild_config_t *evbuild_config(const evbuild_t *eb)
{
    return &eb->cfg;
}

/* ---- deciding what goes out --------------------------------------------------- */

/* Append a group whose frames the caller then appends to the ready queue. */
static group_t *new_group(evbuild_t *eb, enum group_kind kind, uint64_t t0)
{
    group_t *g = fifo_push(&eb->groups);
    if (!g)
        return NULL;
    *g = (group_t){.t0 = t0, .kind = kind};
    if (kind == GROUP_EVENT) {
        g->event = eb->next_event++;
        eb->st.events++;
    } else if (kind == GROUP_ALONE) {
        eb->st.alone++;
    }
    return g;
}

static bool to_ready(evbuild_t *eb, group_t *g, const frame_t *fr)
{
    frame_t *slot = fifo_push(&eb->ready);
    if (!slot)
        return false;
    *slot = *fr;
    g->n++;
    if (g->kind == GROUP_EVENT && fr->rank == 0)
        g->n_psa++;
    eb->st.ready++;
    return true;
}

static void raise_floor(evbuild_t *eb, uint64_t end)
{
    if (end + 1 > eb->floor)
        eb->floor = end + 1;
}

/* The window end of what the reorder buffer's earliest frame starts. */
static uint64_t top_end(const evbuild_t *eb)
{
    const frame_t *top = &eb->heap[0];
    return top->key.timestamp + (top->rank == 0 ? eb->cfg.window : 0);
}

/* Put gathered frames back after a failed allocation (the heap has had
 * room for them, so this allocates nothing). */
static void put_back(evbuild_t *eb, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        heap_push(eb, &eb->gather[i]);
        eb->st.held++;
    }
}

/* Move the earliest event (or lone frame) from the reorder buffer to the
 * ready queue: the event's data:psa frames (its composite), then its other
 * frames, each in the heap's order. On a failed allocation everything goes
 * back, so nothing is lost. */
static int emit_top(evbuild_t *eb, tusk_error_t *err)
{
    uint64_t end = top_end(eb);
    bool event = eb->heap[0].rank == 0;
    size_t n = 0;
    /* A frame alone takes only itself: data:psa comes first at equal
     * timestamps, so no held data:psa is at or before it. */
    while (eb->n_heap && eb->heap[0].key.timestamp <= end && (event || n == 0)) {
        if (tusk_grow(&eb->gather, &eb->cap_gather, n + 1, sizeof *eb->gather) != 0) {
            put_back(eb, n);
            return tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory (an event of %zu frames)", n + 1);
        }
        eb->gather[n] = heap_pop(eb);
        eb->st.held--;
        n++;
    }
    /* With room reserved, fifo_push below neither fails nor compacts. */
    if (tusk_grow(&eb->ready.items, &eb->ready.cap, eb->ready.n + n, eb->ready.size) != 0 ||
        tusk_grow(&eb->groups.items, &eb->groups.cap, eb->groups.n + 1, eb->groups.size) != 0) {
        put_back(eb, n);
        return tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory (an event of %zu frames)", n);
    }
    group_t *g = new_group(eb, event ? GROUP_EVENT : GROUP_ALONE, eb->gather[0].key.timestamp);
    for (size_t i = 0; i < n; i++)
        if (eb->gather[i].rank == 0)
            to_ready(eb, g, &eb->gather[i]);
    for (size_t i = 0; i < n; i++)
        if (eb->gather[i].rank != 0)
            to_ready(eb, g, &eb->gather[i]);
    raise_floor(eb, end);
    return TUSK_OK;
}

/* Emit whatever is safe, and the earliest while too much is held. */
static int decide(evbuild_t *eb, tusk_error_t *err)
{
    while (eb->n_heap) {
        bool forced = eb->n_heap > eb->cfg.max_held;
        if (!forced && !(eb->newest > top_end(eb) + eb->cfg.reorder))
            break;
        int rc = emit_top(eb, err);
        if (rc != TUSK_OK)
            return rc;
        eb->st.forced += forced;
    }
    return TUSK_OK;
}

/* ---- pushing ---------------------------------------------------------------------- */

static evbuild_input_stats_t *input_stats(evbuild_t *eb, unsigned input, tusk_error_t *err)
{
    if (input >= EVBUILD_MAX_INPUTS) {
        tusk_error_set(err, TUSK_EINVAL, "event builder: input %u: at most %u inputs", input, EVBUILD_MAX_INPUTS);
        return NULL;
    }
    if (input >= eb->cap_in) {
        unsigned cap = eb->cap_in ? eb->cap_in : 4;
        while (cap <= input)
            cap *= 2;
        evbuild_input_stats_t *p = realloc(eb->in, cap * sizeof *p);
        if (!p) {
            tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory");
            return NULL;
        }
        memset(p + eb->cap_in, 0, (cap - eb->cap_in) * sizeof *p);
        eb->in = p;
        eb->cap_in = cap;
    }
    if (input + 1 > eb->st.inputs)
        eb->st.inputs = input + 1;
    return &eb->in[input];
}

/* The payload checks of a frame the builder decodes: data:psa (it goes
 * into a composite) and meta:eof (its count is rewritten). */
static int check_frame(evbuild_t *eb, unsigned input, const adf_frame_t *frame, tusk_error_t *err)
{
    adf_error_t ae;
    int rc = ADF_OK;
    const char *what = NULL;
    if (frame->key.type == ADF_TYPE_DATA_PSA) {
        what = "data:psa";
        rc = adf_psa_decode(frame, eb->psa, &ae);
    } else if (frame->key.type == ADF_TYPE_META_EOF) {
        adf_eof_t eof;
        what = "meta:eof";
        rc = adf_eof_decode(frame, &eof, &ae);
    }
    if (rc != ADF_OK)
        return tusk_error_set(err, TUSK_EINVAL, "input %u, offset %" PRIu64 ": %s frame does not decode: %s", input,
                              frame->offset, what, ae.message);
    return TUSK_OK;
}

/* Push a frame whose payload check_frame has passed. */
static int push_checked(evbuild_t *eb, unsigned input, const adf_frame_t *frame, tusk_error_t *err)
{
    evbuild_input_stats_t *is = input_stats(eb, input, err);
    if (!is)
        return err ? err->code : TUSK_EINVAL;
    frame_t fr = {.key = frame->key, .seq = eb->seq, .input = input,
                  .rank = frame->key.type == ADF_TYPE_DATA_PSA ? 0u : 1u};
    size_t size = frame->payload_size;
    if (size) {
        if (!(fr.payload = malloc(size)))
            return tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory (a frame of %zu bytes)", size);
        memcpy(fr.payload, frame->payload, size);
    }
    uint64_t ts = fr.key.timestamp;
    bool late = ts < eb->floor && fr.key.type != ADF_TYPE_META_EOF;
    bool ok;
    if (fr.key.type == ADF_TYPE_META_EOF) {
        frame_t *slot = fifo_push(&eb->eofs);
        if ((ok = slot != NULL))
            *slot = fr;
    } else if (late) {
        /* Its place went out already: out at once, on its own. */
        ok = tusk_grow(&eb->ready.items, &eb->ready.cap, eb->ready.n + 1, eb->ready.size) == 0;
        group_t *g = ok ? new_group(eb, fr.rank == 0 ? GROUP_EVENT : GROUP_ALONE, ts) : NULL;
        ok = g && to_ready(eb, g, &fr);
    } else {
        ok = heap_push(eb, &fr);
        if (ok) {
            eb->st.held++;
            if (eb->st.held > eb->st.held_max)
                eb->st.held_max = eb->st.held;
        }
    }
    if (!ok) {
        frame_free(&fr);
        return tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory");
    }
    eb->seq++;
    is->frames++;
    eb->st.frames_in++;
    if (fr.rank == 0) {
        is->psa++;
        eb->st.psa_in++;
    }
    if (fr.key.type == ADF_TYPE_META_EOF) {
        eb->st.eofs++;
        return TUSK_OK;
    }
    if (late) {
        is->late++;
        eb->st.late++;
    }
    if (ts > eb->newest)
        eb->newest = ts;
    uint64_t depth = eb->newest - ts;
    if (depth > is->depth_max)
        is->depth_max = depth;
    if (depth > eb->st.depth_max)
        eb->st.depth_max = depth;
    return decide(eb, err);
}

int evbuild_push(evbuild_t *eb, unsigned input, const adf_frame_t *frame, tusk_error_t *err)
{
    int rc = check_frame(eb, input, frame, err);
    return rc == TUSK_OK ? push_checked(eb, input, frame, err) : rc;
}

int evbuild_push_buffer(evbuild_t *eb, unsigned input, const void *data, size_t size, tusk_error_t *err)
{
    adf_frame_t fr;
    int rc;
    adf_reader_reset(eb->reader, size ? data : NULL, size, 0);
    while ((rc = adf_reader_next(eb->reader, &fr)) == ADF_OK)
        if ((rc = check_frame(eb, input, &fr, err)) != TUSK_OK)
            return rc;
    if (rc != ADF_END)
        return tusk_error_set(err, TUSK_EINVAL, "input %u, buffer of %zu bytes: %s", input, size,
                              adf_reader_error(eb->reader)->message);
    adf_reader_reset(eb->reader, size ? data : NULL, size, 0);
    while (adf_reader_next(eb->reader, &fr) == ADF_OK)
        if ((rc = push_checked(eb, input, &fr, err)) != TUSK_OK)
            return rc;
    return TUSK_OK;
}

int evbuild_flush(evbuild_t *eb, tusk_error_t *err)
{
    /* Everything held, in order; after a failed allocation the rest stays
     * held for the next flush (nothing is lost). */
    while (eb->n_heap) {
        int rc = emit_top(eb, err);
        if (rc != TUSK_OK)
            return rc;
    }
    while (fifo_len(&eb->eofs)) {
        if (tusk_grow(&eb->ready.items, &eb->ready.cap, eb->ready.n + 1, eb->ready.size) != 0 ||
            tusk_grow(&eb->groups.items, &eb->groups.cap, eb->groups.n + 1, eb->groups.size) != 0)
            return tusk_error_set(err, TUSK_ENOMEM, "event builder: out of memory");
        frame_t *fr = fifo_at(&eb->eofs, eb->eofs.head++);
        group_t *g = new_group(eb, GROUP_EOF, fr->key.timestamp);
        to_ready(eb, g, fr);
    }
    return TUSK_OK;
}

/* ---- writing ------------------------------------------------------------------------ */

static size_t frame_bytes(const frame_t *fr)
{
    return fr->key.length;
}

static int write_frame(evbuild_t *eb, adf_writer_t *w, const frame_t *fr)
{
    size_t size = fr->key.length - ADF_KEY_SIZE;
    if (fr->key.type != ADF_TYPE_META_EOF)
        return adf_writer_put(w, &fr->key, fr->payload, size);
    /* A meta:eof counts this stage's frames before it. */
    adf_frame_t view = {.key = fr->key, .payload = fr->payload, .payload_size = (uint32_t)size, .offset = 0};
    adf_eof_t eof;
    adf_error_t ae;
    int rc = adf_eof_decode(&view, &eof, &ae);
    if (rc != ADF_OK)
        return rc;
    if (!eof.has_counts)
        return adf_writer_put(w, &fr->key, fr->payload, size);
    eof.frames = eb->since_eof;
    return adf_eof_encode(w, fr->key.event, fr->key.timestamp, &eof, &ae);
}

/* The composite of group g (frames from the ready queue's head). */
static int write_event(adf_writer_t *w, const group_t *g, const frame_t *frames)
{
    adf_key_t key = {.length = 0, .type = ADF_TYPE_EVENT_DATA_PSA, .event = g->event, .timestamp = g->t0};
    int rc = adf_writer_begin(w, &key);
    for (uint32_t i = 0; rc == ADF_OK && i < g->n_psa; i++)
        rc = adf_writer_put(w, &frames[i].key, frames[i].payload, frames[i].key.length - ADF_KEY_SIZE);
    if (rc == ADF_OK)
        return adf_writer_end(w);
    /* A refused frame took the composite back already; not another error. */
    if (rc != ADF_EFULL && rc != ADF_ETOOBIG && adf_writer_depth(w))
        adf_writer_abort(w);
    return rc;
}

int evbuild_take(evbuild_t *eb, adf_writer_t *w, bool *more, tusk_error_t *err)
{
    *more = false;
    while (fifo_len(&eb->groups)) {
        group_t *g = fifo_at(&eb->groups, eb->groups.head);
        frame_t *fr = fifo_at(&eb->ready, eb->ready.head);
        uint32_t step = 1;
        size_t bytes;
        int rc;
        bool composite = g->kind == GROUP_EVENT && g->done == 0;
        if (composite) {
            step = g->n_psa;
            bytes = ADF_KEY_SIZE;
            for (uint32_t i = 0; i < step; i++)
                bytes += frame_bytes(&fr[i]);
            rc = write_event(w, g, fr);
        } else {
            bytes = frame_bytes(fr);
            rc = write_frame(eb, w, fr);
        }
        if (rc == ADF_EFULL) {
            *more = true;
            return TUSK_OK;
        }
        if (rc == ADF_ETOOBIG)
            return tusk_error_set(err, TUSK_ELIMIT,
                                  "event builder: %s of %zu bytes (timestamp %" PRIu64 ") cannot fit an output "
                                  "buffer: %s",
                                  composite ? "event:data:psa" : "frame",
                                  bytes, g->t0, adf_writer_error(w)->message);
        if (rc != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "event builder: writing the output (timestamp %" PRIu64 "): %s",
                                  g->t0, adf_writer_error(w)->message);
        bool counted_eof = false;
        for (uint32_t i = 0; i < step; i++) {
            eb->st.frames_out++;
            eb->st.psa_out += fr[i].rank == 0;
            counted_eof = fr[i].key.type == ADF_TYPE_META_EOF && fr[i].key.length > ADF_KEY_SIZE;
            frame_free(&fr[i]);
        }
        eb->since_eof = counted_eof ? 0 : eb->since_eof + 1;
        eb->ready.head += step;
        eb->st.ready -= step;
        g->done += step;
        if (g->done == g->n)
            eb->groups.head++;
    }
    eb->groups.head = eb->groups.n = 0;
    eb->ready.head = eb->ready.n = 0;
    return TUSK_OK;
}

/* ---- statistics ----------------------------------------------------------------------- */

void evbuild_stats(const evbuild_t *eb, evbuild_stats_t *stats)
{
    *stats = eb->st;
}

void evbuild_input_stats(const evbuild_t *eb, unsigned input, evbuild_input_stats_t *stats)
{
    if (input < eb->cap_in)
        *stats = eb->in[input];
    else
        memset(stats, 0, sizeof *stats);
}
