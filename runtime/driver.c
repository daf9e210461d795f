/* driver.c - the one actor driver (see driver.h). */
#include <stdlib.h>

#include "base/clock.h"
#include "runtime/driver.h"

struct tusk_driver {
    tusk_driver_host_t host;
    uint32_t out_size;
    adf_reader_t *counter; /* counts the frames of outputs */
    tusk_driver_stats_t st;
};

int tusk_driver_new(tusk_driver_t **out, const tusk_driver_host_t *host, uint32_t out_size, tusk_error_t *err)
{
    *out = NULL;
    if (!host || !host->take || !host->give_back || !host->emit)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_driver_new: a host needs take, give_back and emit");
    tusk_driver_t *d = calloc(1, sizeof *d);
    if (d)
        d->counter = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!d || !d->counter) {
        free(d);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    d->host = *host;
    d->out_size = out_size;
    *out = d;
    return TUSK_OK;
}

void tusk_driver_destroy(tusk_driver_t **driver)
{
    if (!driver || !*driver)
        return;
    adf_reader_destroy(&(*driver)->counter);
    free(*driver);
    *driver = NULL;
}

const tusk_driver_stats_t *tusk_driver_stats(const tusk_driver_t *d)
{
    return &d->st;
}

void tusk_driver_reset_stats(tusk_driver_t *d)
{
    d->st = (tusk_driver_stats_t){0};
}

uint64_t tusk_driver_frames(tusk_driver_t *d, const void *data, uint32_t size, const adf_error_t **malformed)
{
    uint64_t frames = adf_count_frames(d->counter, data, size);
    if (malformed) {
        const adf_error_t *e = adf_reader_error(d->counter);
        *malformed = e->code == ADF_OK ? NULL : e;
    }
    return frames;
}

/* ---- one hook call, timed and announced ---------------------------------------- */

typedef enum { CALL_PRODUCE, CALL_FILTER, CALL_CONSUME, CALL_FLUSH } call_kind_t;

typedef struct call {
    call_kind_t kind;
    tusk_actor_t *actor;
    unsigned input;
    void *in;
    uint32_t in_size;
    void *out;
    uint32_t used;
    tusk_flow_t flow;
} call_t;

static int call_hook(tusk_driver_t *d, call_t *c, tusk_error_t *err)
{
    const tusk_driver_host_t *h = &d->host;
    c->used = 0;
    c->flow = TUSK_FLOW_DONE;
    if (c->kind != CALL_FLUSH)
        d->st.calls++;
    uint64_t t = tusk_clock_ns();
    if (h->enter)
        h->enter(h->ctx, c->kind == CALL_FLUSH ? "process_flush" : "process_block");
    int rc;
    switch (c->kind) {
    case CALL_PRODUCE: rc = tusk_actor_produce(c->actor, c->out, d->out_size, &c->used, &c->flow, err); break;
    case CALL_FILTER:
        rc = tusk_actor_filter(c->actor, c->input, c->in, c->in_size, c->out, d->out_size, &c->used, &c->flow, err);
        break;
    case CALL_CONSUME: rc = tusk_actor_consume(c->actor, c->in, c->in_size, err); break;
    default: rc = tusk_actor_flush(c->actor, c->out, d->out_size, &c->used, &c->flow, err); break;
    }
    if (h->leave)
        h->leave(h->ctx);
    d->st.ns += tusk_clock_ns() - t;
    return rc;
}

/* Hand on an output; counted once emit took it. */
static int emit(tusk_driver_t *d, void *buffer, uint32_t size, uint64_t frames, unsigned flags, tusk_error_t *err)
{
    int rc = d->host.emit(d->host.ctx, buffer, size, frames, flags, err);
    if (rc != TUSK_OK)
        return rc;
    d->st.buffers_out++;
    d->st.bytes_out += size;
    d->st.frames_out += frames;
    return d->host.emitted ? d->host.emitted(d->host.ctx, flags, err) : TUSK_OK;
}

static void count_input(tusk_driver_t *d, uint32_t size, uint64_t frames)
{
    d->st.buffers_in++;
    d->st.bytes_in += size;
    d->st.frames_in += frames;
}

/* Call an output hook (filter or flush) until it has written all its
 * output; *outcome says what became of the input (see driver.h). */
static int run_output_calls(tusk_driver_t *d, call_t *c, void *handle, uint64_t in_frames,
                            tusk_driver_outcome_t *outcome, tusk_error_t *err)
{
    const tusk_driver_host_t *h = &d->host;
    bool wrote = false, last_wrote = false;
    *outcome = TUSK_DRIVER_HELD;
    do {
        uint8_t *data = NULL;
        void *buffer = h->take(h->ctx, &data, err);
        if (!buffer)
            return err ? err->code : TUSK_ENOMEM;
        c->out = data;
        int rc = call_hook(d, c, err);
        if (rc != TUSK_OK) {
            h->give_back(h->ctx, buffer);
            return rc;
        }
        if (c->flow == TUSK_FLOW_FORWARD) {
            /* The input itself is the output: it moves on, uncopied. */
            h->give_back(h->ctx, buffer);
            *outcome = TUSK_DRIVER_FORWARDED;
            return emit(d, handle, c->in_size, in_frames, TUSK_EMIT_LAST | TUSK_EMIT_FORWARDED, err);
        }
        last_wrote = c->used > 0;
        if (c->used == 0) {
            h->give_back(h->ctx, buffer);
            continue;
        }
        unsigned flags = (c->flow == TUSK_FLOW_MORE ? 0u : TUSK_EMIT_LAST) |
                         (c->kind == CALL_FLUSH ? TUSK_EMIT_FLUSH : 0u);
        uint64_t frames = tusk_driver_frames(d, data, c->used, NULL);
        rc = emit(d, buffer, c->used, frames, flags, err);
        wrote = true;
        if (rc != TUSK_OK) {
            *outcome = TUSK_DRIVER_DONE_OPEN;
            return rc;
        }
    } while (c->flow == TUSK_FLOW_MORE);
    *outcome = !wrote ? TUSK_DRIVER_HELD : last_wrote ? TUSK_DRIVER_DONE : TUSK_DRIVER_DONE_OPEN;
    return TUSK_OK;
}

/* ---- the entry points ---------------------------------------------------------- */

int tusk_driver_produce(tusk_driver_t *d, tusk_actor_t *actor, bool *ended, tusk_error_t *err)
{
    const tusk_driver_host_t *h = &d->host;
    *ended = false;
    uint8_t *data = NULL;
    void *buffer = h->take(h->ctx, &data, err);
    if (!buffer)
        return err ? err->code : TUSK_ENOMEM;
    call_t c = {.kind = CALL_PRODUCE, .actor = actor, .out = data};
    int rc = call_hook(d, &c, err);
    if (rc != TUSK_OK) {
        h->give_back(h->ctx, buffer);
        return rc;
    }
    *ended = c.flow == TUSK_FLOW_END;
    if (c.used == 0) {
        h->give_back(h->ctx, buffer);
        return TUSK_OK;
    }
    return emit(d, buffer, c.used, tusk_driver_frames(d, data, c.used, NULL), TUSK_EMIT_LAST, err);
}

int tusk_driver_filter(tusk_driver_t *d, tusk_actor_t *actor, unsigned input, void *handle, void *data,
                       uint32_t size, uint64_t frames, tusk_driver_outcome_t *outcome, tusk_error_t *err)
{
    count_input(d, size, frames);
    call_t c = {.kind = CALL_FILTER, .actor = actor, .input = input, .in = data, .in_size = size};
    return run_output_calls(d, &c, handle, frames, outcome, err);
}

int tusk_driver_consume(tusk_driver_t *d, tusk_actor_t *actor, void *data, uint32_t size, uint64_t frames,
                        tusk_error_t *err)
{
    count_input(d, size, frames);
    call_t c = {.kind = CALL_CONSUME, .actor = actor, .in = data, .in_size = size};
    return call_hook(d, &c, err);
}

int tusk_driver_flush(tusk_driver_t *d, tusk_actor_t *actor, tusk_error_t *err)
{
    call_t c = {.kind = CALL_FLUSH, .actor = actor};
    tusk_driver_outcome_t ignored;
    return run_output_calls(d, &c, NULL, 0, &ignored, err);
}
