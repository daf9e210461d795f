/* node.c - tusk-actor's loop (see node.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "bufpool.h"
#include "layout.h"
#include "node.h"
#include "tusk/actor_host.h"
#include "tusk/adf_reader.h"
#include "tusk/wire.h"
#include "zutil.h"

#define HEARTBEAT_DEFAULT_MS 500
#define DATA_LINGER_MS 5000

typedef enum {
    ST_IDLE,       /* waiting for CONFIGURE */
    ST_CONFIGURED, /* instance created, sockets bound/connected */
    ST_READY,      /* initialised */
    ST_RUNNING,
    ST_PAUSED,
    ST_ENDED,      /* end of run sent downstream; waiting for STOP */
    ST_FAILED,     /* a hook failed; waiting for STOP or EXIT */
    ST_EXIT
} node_state_t;

static const char *const state_names[] = {"idle",  "configured", "ready",  "running",
                                          "paused", "ended",     "failed", "exit"};


/* ---- links ------------------------------------------------------------------ */

typedef struct out_link { /* to one downstream instance */
    void *sock;
    uint64_t sent;        /* data messages this run (EMPTY included) */
    bool lost;            /* PEER_LOST: skip it */
} out_link_t;

typedef struct sink { /* one actor reading our output */
    unsigned actor, n;
    out_link_t *links;
    unsigned rr;
} sink_t;

typedef struct in_peer { /* one upstream instance on an input */
    uint16_t incarnation;
    uint64_t received;       /* this incarnation, this run */
    uint64_t received_total; /* this run */
    bool ended, lost;
} in_peer_t;

typedef struct input {
    void *sock;
    unsigned actor, n;
    in_peer_t *peers;
} input_t;

/* Completed inputs seen in messages from source (sa, sk), per upstream
 * link (ia, ik) of that source: the controller counts loss with these. */
typedef struct done_entry {
    uint16_t sa, sk, ia, ik;
    uint64_t count;
} done_entry_t;

typedef struct node {
    tusk_node_options_t opt;
    void *zctx, *control;
    node_state_t state;
    char label[160];

    char *xml;
    tusk_topology_t *topo;
    unsigned index;
    const tusk_actor_spec_t *spec;
    tusk_layout_t layout;
    char *run_dir;
    unsigned heartbeat_ms;

    tusk_actor_lib_t *lib;
    tusk_actor_t *actor;
    input_t *inputs;
    unsigned n_inputs;
    sink_t *sinks;
    unsigned n_sinks;
    bufpool_t pool; /* output buffers */

    uint32_t run;
    bool end_sent;           /* end of run sent downstream this run */
    uint64_t in_buffers, in_bytes, out_buffers, out_bytes, calls, block_ns;
    uint64_t in_frames, out_frames; /* top-level ADF frames, for the statistics */
    adf_reader_t *counter;
    done_entry_t *done;
    size_t n_done, cap_done;

    uint64_t next_heartbeat, last_heard;
    char failure[TUSK_ERROR_MESSAGE_MAX];
    int busy;             /* inside a hook call or a send */
    bool pending_stop;    /* STOP arrived while busy */
    zmq_pollitem_t *items; /* control + inputs */
} node_t;

/* ---- control ---------------------------------------------------------------- */

static void add_stats(node_t *n, tusk_ctl_t *m)
{
    tusk_ctl_set(m, "state", state_names[n->state]);
    tusk_ctl_set_u64(m, "run", n->run);
    tusk_ctl_set_u64(m, "in_buffers", n->in_buffers);
    tusk_ctl_set_u64(m, "in_bytes", n->in_bytes);
    tusk_ctl_set_u64(m, "out_buffers", n->out_buffers);
    tusk_ctl_set_u64(m, "out_bytes", n->out_bytes);
    tusk_ctl_set_u64(m, "in_frames", n->in_frames);
    tusk_ctl_set_u64(m, "out_frames", n->out_frames);
    tusk_ctl_set_u64(m, "calls", n->calls);
    tusk_ctl_set_u64(m, "block_ns", n->block_ns);
    char key[64];
    for (unsigned s = 0; s < n->n_sinks; s++)
        for (unsigned k = 0; k < n->sinks[s].n; k++) {
            snprintf(key, sizeof key, "sent:%u:%u", n->sinks[s].actor, k);
            tusk_ctl_set_u64(m, key, n->sinks[s].links[k].sent);
        }
    for (unsigned j = 0; j < n->n_inputs; j++)
        for (unsigned k = 0; k < n->inputs[j].n; k++) {
            snprintf(key, sizeof key, "recv:%u:%u", n->inputs[j].actor, k);
            tusk_ctl_set_u64(m, key, n->inputs[j].peers[k].received_total);
        }
    for (size_t i = 0; i < n->n_done; i++) {
        const done_entry_t *d = &n->done[i];
        snprintf(key, sizeof key, "done:%u:%u:%u:%u", d->sa, d->sk, d->ia, d->ik);
        tusk_ctl_set_u64(m, key, d->count);
    }
}

/* Send VERB with the statistics (and `extra` key/value, if any). */
static void tell(node_t *n, const char *verb, const char *key, const char *value)
{
    tusk_ctl_t *m = tusk_ctl_new(verb);
    if (!m)
        return;
    if (key)
        tusk_ctl_set(m, key, value);
    add_stats(n, m);
    tusk_error_t err;
    if (zu_send_ctl(n->control, NULL, m, NULL, 0, &err) != TUSK_OK)
        fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
    tusk_ctl_destroy(&m);
}

static void heartbeat_if_due(node_t *n)
{
    uint64_t now = zu_now_ms();
    if (now >= n->next_heartbeat) {
        tell(n, "HEARTBEAT", NULL, NULL);
        n->next_heartbeat = now + n->heartbeat_ms;
    }
}

static void reply(node_t *n, const char *verb, int rc, const tusk_error_t *err)
{
    tusk_ctl_t *m = tusk_ctl_new("REPLY");
    if (!m)
        return;
    tusk_ctl_set(m, "to", verb);
    tusk_ctl_set(m, "status", rc == TUSK_OK ? "ok" : "error");
    if (rc != TUSK_OK)
        tusk_ctl_set(m, "message", err->message);
    add_stats(n, m);
    tusk_error_t e2;
    if (zu_send_ctl(n->control, NULL, m, NULL, 0, &e2) != TUSK_OK)
        fprintf(stderr, "tusk-actor %s: %s\n", n->label, e2.message);
    tusk_ctl_destroy(&m);
}

/* A hook failed while data was moving: stop moving data, tell the
 * controller, wait for its orders. */
static void fail(node_t *n, const tusk_error_t *err)
{
    n->state = ST_FAILED;
    snprintf(n->failure, sizeof n->failure, "%s", err->message);
    fprintf(stderr, "tusk-actor %s: %s\n", n->label, err->message);
    tell(n, "FAILED", "message", err->message);
}

/* ---- sending ------------------------------------------------------------------ */

static int handle_command(node_t *n, tusk_ctl_t *m, const char *payload, size_t payload_size);

/* Read and handle every pending control message. */
static void service_control(node_t *n)
{
    while (n->state != ST_EXIT) {
        tusk_ctl_t *m = NULL;
        char *payload = NULL;
        size_t psize = 0;
        tusk_error_t err;
        int rc = zu_recv_ctl(n->control, true, NULL, 0, &m, &payload, &psize, &err);
        if (rc == TUSK_EIO && errno == EAGAIN)
            return;
        n->last_heard = zu_now_ms();
        if (rc != TUSK_OK) {
            fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
        } else {
            handle_command(n, m, payload, psize);
        }
        tusk_ctl_destroy(&m);
        free(payload);
    }
}

/* Wait (servicing control and heartbeats) until a socket of `items` is
 * writable, or the node leaves the states that may send. */
static bool wait_writable(node_t *n, zmq_pollitem_t *items, int count)
{
    heartbeat_if_due(n);
    uint64_t now = zu_now_ms();
    long timeout = n->next_heartbeat > now ? (long)(n->next_heartbeat - now) : 0;
    items[count] = (zmq_pollitem_t){.socket = n->control, .events = ZMQ_POLLIN};
    if (zmq_poll(items, count + 1, timeout) < 0 && errno != EINTR)
        return false;
    if (items[count].revents & ZMQ_POLLIN)
        service_control(n);
    /* Blocked here for good (a stalled peer) and the controller gone: leave. */
    if (n->opt.orphan_ms && zu_now_ms() - n->last_heard > n->opt.orphan_ms) {
        fprintf(stderr, "tusk-actor %s: no word from the controller for %u ms while waiting to send: exiting\n",
                n->label, n->opt.orphan_ms);
        n->state = ST_EXIT;
    }
    /* STOP waits until this send is done (busy); EXIT does not. */
    return n->state == ST_RUNNING || n->state == ST_PAUSED || n->state == ST_ENDED;
}

/* Send one message (header + payload frame) to link `k` of sink `s`
 * without waiting; false when it cannot take it now. */
static bool try_send(sink_t *s, unsigned k, tusk_wire_header_t *h, zmq_msg_t *payload, int *error)
{
    out_link_t *l = &s->links[k];
    h->seq = (h->flags & TUSK_WIRE_END_OF_RUN) ? l->sent : l->sent + 1;
    uint8_t hdr[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_encode(h, hdr);
    if (zmq_send(l->sock, hdr, sizeof hdr, ZMQ_DONTWAIT | ZMQ_SNDMORE) < 0) {
        if (errno != EAGAIN)
            *error = errno;
        return false;
    }
    /* The first frame went, so the socket takes the rest of the message. */
    zmq_msg_t copy;
    zmq_msg_init(&copy);
    if (payload)
        zmq_msg_copy(&copy, payload);
    if (zmq_msg_send(&copy, l->sock, 0) < 0) {
        *error = errno;
        zmq_msg_close(&copy);
        return false;
    }
    if (!(h->flags & TUSK_WIRE_END_OF_RUN))
        l->sent++;
    return true;
}

/* Send to one instance of sink `s`, the next that can take it: load
 * sharing; waits (back-pressure) while none can. */
static int send_balanced(node_t *n, sink_t *s, tusk_wire_header_t *h, zmq_msg_t *payload, tusk_error_t *err)
{
    zmq_pollitem_t items[TUSK_MAX_INSTANCES + 1];
    while (true) {
        int error = 0, live = 0;
        for (unsigned i = 0; i < s->n; i++) {
            unsigned k = (s->rr + i) % s->n;
            if (s->links[k].lost)
                continue;
            live++;
            if (try_send(s, k, h, payload, &error)) {
                s->rr = (k + 1) % s->n;
                return TUSK_OK;
            }
            if (error)
                return tusk_error_set(err, TUSK_EIO, "actor %s: send to %s[%u] failed: %s", n->label,
                                      tusk_topology_actor(n->topo, s->actor)->name, k, zmq_strerror(error));
        }
        if (live == 0)
            return tusk_error_set(err, TUSK_EIO, "actor %s: every instance of %s is lost: nowhere to send", n->label,
                                  tusk_topology_actor(n->topo, s->actor)->name);
        int count = 0;
        for (unsigned k = 0; k < s->n; k++)
            if (!s->links[k].lost)
                items[count++] = (zmq_pollitem_t){.socket = s->links[k].sock, .events = ZMQ_POLLOUT};
        if (!wait_writable(n, items, count))
            return tusk_error_set(err, TUSK_EIO, "actor %s: stopped while waiting to send", n->label);
    }
}

/* Send to one given downstream instance, waiting as long as it takes
 * (end-of-run markers go to every instance). */
static int send_to(node_t *n, sink_t *s, unsigned k, tusk_wire_header_t *h, tusk_error_t *err)
{
    zmq_pollitem_t items[2];
    while (!s->links[k].lost) {
        int error = 0;
        if (try_send(s, k, h, NULL, &error))
            return TUSK_OK;
        if (error)
            return tusk_error_set(err, TUSK_EIO, "actor %s: send to %s[%u] failed: %s", n->label,
                                  tusk_topology_actor(n->topo, s->actor)->name, k, zmq_strerror(error));
        items[0] = (zmq_pollitem_t){.socket = s->links[k].sock, .events = ZMQ_POLLOUT};
        if (!wait_writable(n, items, 1))
            return tusk_error_set(err, TUSK_EIO, "actor %s: stopped while sending the end of run", n->label);
    }
    return TUSK_OK; /* lost meanwhile: nothing to tell it */
}

static tusk_wire_header_t header_for(const node_t *n, uint16_t flags)
{
    return (tusk_wire_header_t){.flags = flags,
                                .run = n->run,
                                .incarnation = (uint16_t)n->opt.incarnation,
                                .source_actor = (uint16_t)n->index,
                                .source_instance = (uint16_t)n->opt.instance,
                                .input_actor = TUSK_WIRE_NONE,
                                .input_instance = TUSK_WIRE_NONE};
}

/* Send a message (its payload shared, not copied) to every sink. */
static int emit_msg(node_t *n, zmq_msg_t *payload, uint32_t used, uint64_t frames, const tusk_wire_header_t *tmpl,
                    tusk_error_t *err)
{
    int rc = TUSK_OK;
    for (unsigned s = 0; s < n->n_sinks && rc == TUSK_OK; s++) {
        tusk_wire_header_t h = *tmpl;
        h.payload_size = used;
        rc = send_balanced(n, &n->sinks[s], &h, payload, err);
    }
    if (rc == TUSK_OK) {
        n->out_buffers++;
        n->out_bytes += used;
        n->out_frames += frames;
    }
    return rc;
}

/* Hand an output buffer (from the pool) to every sink, zero-copy. */
static int emit(node_t *n, void *buf, uint32_t used, const tusk_wire_header_t *tmpl, tusk_error_t *err)
{
    uint64_t frames = adf_count_frames(n->counter, buf, used);
    zmq_msg_t payload;
    if (zmq_msg_init_data(&payload, buf, used, bufpool_release, &n->pool) != 0) {
        bufpool_release(buf, &n->pool);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    int rc = emit_msg(n, &payload, used, frames, tmpl, err);
    zmq_msg_close(&payload);
    return rc;
}

/* End of run: tell every downstream instance how many buffers we sent it. */
static int send_end_of_run(node_t *n, tusk_error_t *err)
{
    for (unsigned s = 0; s < n->n_sinks; s++)
        for (unsigned k = 0; k < n->sinks[s].n; k++) {
            tusk_wire_header_t h = header_for(n, TUSK_WIRE_END_OF_RUN);
            int rc = send_to(n, &n->sinks[s], k, &h, err);
            if (rc != TUSK_OK)
                return rc;
        }
    n->end_sent = true;
    return TUSK_OK;
}

static void ended(node_t *n)
{
    n->state = ST_ENDED;
    tell(n, "ENDED", NULL, NULL);
}

/* ---- moving data ----------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void produce_one(node_t *n)
{
    tusk_error_t err;
    void *buf = bufpool_take(&n->pool);
    if (!buf) {
        tusk_error_set(&err, TUSK_ENOMEM, "actor %s: out of memory for an output buffer", n->label);
        fail(n, &err);
        return;
    }
    uint32_t used = 0;
    tusk_flow_t flow;
    uint64_t t = now_ns();
    n->calls++;
    int rc = tusk_actor_produce(n->actor, buf, n->spec->buffer_size, &used, &flow, &err);
    n->block_ns += now_ns() - t;
    if (rc == TUSK_OK && used > 0) {
        tusk_wire_header_t h = header_for(n, 0);
        rc = emit(n, buf, used, &h, &err);
    } else {
        bufpool_release(buf, &n->pool);
    }
    if (rc != TUSK_OK) {
        if (n->state == ST_RUNNING || n->state == ST_PAUSED)
            fail(n, &err);
        return;
    }
    if (flow == TUSK_FLOW_END) {
        rc = send_end_of_run(n, &err);
        if (rc != TUSK_OK)
            fail(n, &err);
        else
            ended(n);
    }
}

static done_entry_t *done_slot(node_t *n, uint16_t sa, uint16_t sk, uint16_t ia, uint16_t ik)
{
    for (size_t i = 0; i < n->n_done; i++) {
        done_entry_t *d = &n->done[i];
        if (d->sa == sa && d->sk == sk && d->ia == ia && d->ik == ik)
            return d;
    }
    if (n->n_done == n->cap_done) {
        size_t cap = n->cap_done ? 2 * n->cap_done : 16;
        done_entry_t *nd = realloc(n->done, cap * sizeof *nd);
        if (!nd)
            return NULL;
        n->done = nd;
        n->cap_done = cap;
    }
    n->done[n->n_done] = (done_entry_t){sa, sk, ia, ik, 0};
    return &n->done[n->n_done++];
}

static bool all_inputs_ended(const node_t *n)
{
    for (unsigned j = 0; j < n->n_inputs; j++)
        for (unsigned k = 0; k < n->inputs[j].n; k++)
            if (!n->inputs[j].peers[k].ended && !n->inputs[j].peers[k].lost)
                return false;
    return true;
}

/* Every upstream instance has ended: flush (filters), send our end of
 * run, report. */
static void finish_run(node_t *n)
{
    tusk_error_t err;
    if (n->spec->actor_class == TUSK_FILTER) {
        tusk_flow_t flow;
        do {
            void *buf = bufpool_take(&n->pool);
            uint32_t used = 0;
            uint64_t t = now_ns();
            int rc = buf ? tusk_actor_flush(n->actor, buf, n->spec->buffer_size, &used, &flow, &err)
                         : tusk_error_set(&err, TUSK_ENOMEM, "out of memory");
            n->block_ns += now_ns() - t;
            if (rc == TUSK_OK && used > 0) {
                tusk_wire_header_t h = header_for(n, 0);
                rc = emit(n, buf, used, &h, &err);
            } else if (buf) {
                bufpool_release(buf, &n->pool);
            }
            if (rc != TUSK_OK) {
                fail(n, &err);
                return;
            }
        } while (flow == TUSK_FLOW_MORE);
        if (send_end_of_run(n, &err) != TUSK_OK) {
            fail(n, &err);
            return;
        }
    }
    ended(n);
}

/* Tell the actors below that input `in_h` is done without output of ours
 * (the actor held it back, or it was itself an empty marker), so every
 * link's loss count holds. */
static int send_empty(node_t *n, const tusk_wire_header_t *in_h, tusk_error_t *err)
{
    tusk_wire_header_t e = header_for(n, 0);
    e.input_actor = in_h->source_actor;
    e.input_instance = in_h->source_instance;
    e.input_seq = in_h->seq;
    e.flags = TUSK_WIRE_COMPLETES | TUSK_WIRE_EMPTY;
    e.payload_size = 0;
    for (unsigned s = 0; s < n->n_sinks; s++) {
        int rc = send_balanced(n, &n->sinks[s], &e, NULL, err);
        if (rc != TUSK_OK)
            return rc;
    }
    return TUSK_OK;
}

/* Process one input buffer from (source actor h->source_actor, instance
 * h->source_instance); its outputs carry where they came from. */
static int process_buffer(node_t *n, unsigned input, const tusk_wire_header_t *in_h, zmq_msg_t *body,
                          tusk_error_t *err)
{
    void *data = zmq_msg_data(body);
    uint32_t size = (uint32_t)zmq_msg_size(body);
    uint64_t frames = adf_count_frames(n->counter, data, size);
    n->in_buffers++;
    n->in_bytes += size;
    n->in_frames += frames;
    if (n->spec->actor_class == TUSK_CONSUMER) {
        uint64_t t = now_ns();
        n->calls++;
        int rc = tusk_actor_consume(n->actor, data, size, err);
        n->block_ns += now_ns() - t;
        return rc;
    }
    tusk_wire_header_t h = header_for(n, 0);
    h.input_actor = in_h->source_actor;
    h.input_instance = in_h->source_instance;
    h.input_seq = in_h->seq;
    tusk_flow_t flow;
    bool wrote = false;
    do {
        void *buf = bufpool_take(&n->pool);
        if (!buf)
            return tusk_error_set(err, TUSK_ENOMEM, "actor %s: out of memory for an output buffer", n->label);
        uint32_t used = 0;
        uint64_t t = now_ns();
        n->calls++;
        int rc = tusk_actor_filter(n->actor, input, data, size, buf, n->spec->buffer_size, &used, &flow, err);
        n->block_ns += now_ns() - t;
        if (rc != TUSK_OK) {
            bufpool_release(buf, &n->pool);
            return rc;
        }
        if (flow == TUSK_FLOW_FORWARD) {
            /* Unchanged: the message that came in goes out, uncopied. */
            bufpool_release(buf, &n->pool);
            h.flags = TUSK_WIRE_COMPLETES;
            return emit_msg(n, body, size, frames, &h, err);
        }
        if (used == 0) {
            bufpool_release(buf, &n->pool);
            continue;
        }
        h.flags = flow == TUSK_FLOW_MORE ? 0 : TUSK_WIRE_COMPLETES;
        rc = emit(n, buf, used, &h, err);
        if (rc != TUSK_OK)
            return rc;
        wrote = true;
    } while (flow == TUSK_FLOW_MORE);
    if (!wrote || h.flags != TUSK_WIRE_COMPLETES)
        return send_empty(n, in_h, err); /* no output finished this input */
    return TUSK_OK;
}

/* Receive one message from input j. */
static void receive_one(node_t *n, unsigned j)
{
    input_t *in = &n->inputs[j];
    zmq_msg_t hdr, body;
    zmq_msg_init(&hdr);
    zmq_msg_init(&body);
    tusk_error_t err;
    if (zmq_msg_recv(&hdr, in->sock, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&hdr);
        zmq_msg_close(&body);
        return;
    }
    tusk_wire_header_t h;
    int more = zmq_msg_more(&hdr);
    int rc = tusk_wire_decode(zmq_msg_data(&hdr), zmq_msg_size(&hdr), &h, &err);
    if (more && zmq_msg_recv(&body, in->sock, 0) < 0)
        more = 0;
    zu_drain_more(in->sock);
    if (rc == TUSK_OK && !more)
        rc = tusk_error_set(&err, TUSK_EINVAL, "a data message without its buffer frame");
    if (rc == TUSK_OK && zmq_msg_size(&body) != h.payload_size)
        rc = tusk_error_set(&err, TUSK_EINVAL, "a data message of %zu bytes whose header says %u",
                            zmq_msg_size(&body), (unsigned)h.payload_size);
    if (rc == TUSK_OK && (h.source_actor != in->actor || h.source_instance >= in->n))
        rc = tusk_error_set(&err, TUSK_EINVAL, "a data message from actor %u[%u] on the input of actor %u",
                            (unsigned)h.source_actor, (unsigned)h.source_instance, in->actor);
    if (rc == TUSK_OK && h.run != n->run)
        rc = tusk_error_set(&err, TUSK_EINVAL, "a data message of run %u during run %u", (unsigned)h.run,
                            (unsigned)n->run);
    if (rc != TUSK_OK) {
        tusk_error_prefix(&err, "actor %s: input from %s", n->label, tusk_topology_actor(n->topo, in->actor)->name);
        fail(n, &err);
        zmq_msg_close(&hdr);
        zmq_msg_close(&body);
        return;
    }
    in_peer_t *p = &in->peers[h.source_instance];
    if (h.incarnation != p->incarnation) {
        /* A restarted upstream instance: its counts start again. */
        p->incarnation = h.incarnation;
        p->received = 0;
    }
    if (h.flags & TUSK_WIRE_END_OF_RUN) {
        if (!p->ended && h.seq > p->received)
            fprintf(stderr, "tusk-actor %s: %s[%u] sent %llu buffers on this link, %llu arrived\n", n->label,
                    tusk_topology_actor(n->topo, in->actor)->name, (unsigned)h.source_instance,
                    (unsigned long long)h.seq, (unsigned long long)p->received);
        p->ended = true;
    } else {
        p->received++;
        p->received_total++;
        if (h.flags & TUSK_WIRE_COMPLETES) {
            done_entry_t *d = done_slot(n, h.source_actor, h.source_instance, h.input_actor, h.input_instance);
            if (d)
                d->count++;
        }
        if (!(h.flags & TUSK_WIRE_EMPTY))
            rc = process_buffer(n, j, &h, &body, &err);
        else if (n->spec->actor_class == TUSK_FILTER)
            rc = send_empty(n, &h, &err); /* pass the marker on: the link above us completed */
        if (rc != TUSK_OK && n->state != ST_EXIT)
            fail(n, &err);
    }
    zmq_msg_close(&hdr);
    zmq_msg_close(&body);
    if (n->state == ST_RUNNING && all_inputs_ended(n))
        finish_run(n);
}

/* ---- configuration ---------------------------------------------------------------- */

static void *new_socket(node_t *n, int type, unsigned hwm)
{
    void *s = zmq_socket(n->zctx, type);
    if (!s)
        return NULL;
    int v = (int)hwm, linger = DATA_LINGER_MS, one = 1;
    zmq_setsockopt(s, type == ZMQ_PULL ? ZMQ_RCVHWM : ZMQ_SNDHWM, &v, sizeof v);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (type == ZMQ_PUSH) {
        zmq_setsockopt(s, ZMQ_IMMEDIATE, &one, sizeof one); /* queue only to live peers */
        /* A peer not there yet (starting, restarting) is tried again soon,
         * not after libzmq's default 100 ms. */
        int ivl = 10;
        zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
    }
    return s;
}

static int configure(node_t *n, tusk_ctl_t *m, const char *xml, size_t xml_size, tusk_error_t *err)
{
    if (!xml)
        return tusk_error_set(err, TUSK_EINVAL, "CONFIGURE without the topology");
    const char *name = tusk_ctl_get(m, "topology"), *run_dir = tusk_ctl_get(m, "run_dir"),
               *transport = tusk_ctl_get(m, "transport"), *actor_path = tusk_ctl_get(m, "actor_path");
    uint64_t base_port = 0, hb = HEARTBEAT_DEFAULT_MS;
    if (!run_dir || !transport || tusk_ctl_get_u64(m, "base_port", 0, &base_port) != TUSK_OK ||
        tusk_ctl_get_u64(m, "heartbeat_ms", HEARTBEAT_DEFAULT_MS, &hb) != TUSK_OK)
        return tusk_error_set(err, TUSK_EINVAL, "CONFIGURE: missing or bad run_dir, transport, base_port, heartbeat_ms");
    n->heartbeat_ms = hb ? (unsigned)hb : HEARTBEAT_DEFAULT_MS;
    int rc = tusk_topology_parse(&n->topo, xml, xml_size, name ? name : "topology", err);
    if (rc == TUSK_OK)
        rc = tusk_topology_resolve(n->topo, actor_path && *actor_path ? actor_path : NULL, err);
    if (rc != TUSK_OK)
        return rc;
    int idx = tusk_topology_find(n->topo, n->opt.actor);
    if (idx < 0)
        return tusk_error_set(err, TUSK_EINVAL, "the topology has no actor '%s'", n->opt.actor);
    n->index = (unsigned)idx;
    n->spec = tusk_topology_actor(n->topo, n->index);
    if (n->opt.instance >= n->spec->instances)
        return tusk_error_set(err, TUSK_EINVAL, "actor %s has %u instances, not %u", n->spec->name, n->spec->instances,
                              n->opt.instance + 1);
    n->run_dir = strdup(run_dir);
    n->layout = (tusk_layout_t){.transport = strcmp(transport, "tcp") == 0 ? TUSK_TRANSPORT_TCP : TUSK_TRANSPORT_IPC,
                                .run_dir = n->run_dir,
                                .base_port = (unsigned)base_port};
    /* The instance's configuration folder, on this host. */
    mkdir(run_dir, 0700);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s.%u", run_dir, n->spec->name, n->opt.instance);
    rc = tusk_actor_write_config(dir, n->spec, n->opt.instance, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_lib_open(&n->lib, n->spec->library_path, n->spec->actor_class, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_new(&n->actor, n->lib, n->spec->name, n->opt.instance, dir, err);
    if (rc != TUSK_OK)
        return rc;
    n->counter = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!n->counter)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int pool_rc = bufpool_reserve(&n->pool, n->spec->buffer_size ? n->spec->buffer_size : 1,
                                  (size_t)n->spec->hwm * (n->spec->n_sinks ? n->spec->n_sinks : 1) + 4);

    /* Inputs: bind one PULL per source. */
    n->n_inputs = n->spec->n_sources;
    n->inputs = calloc(n->n_inputs ? n->n_inputs : 1, sizeof *n->inputs);
    n->items = calloc(n->n_inputs + 1, sizeof *n->items);
    if (!n->inputs || !n->items || pool_rc != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    for (unsigned j = 0; j < n->n_inputs; j++) {
        input_t *in = &n->inputs[j];
        in->actor = n->spec->sources[j];
        in->n = tusk_topology_actor(n->topo, in->actor)->instances;
        in->peers = calloc(in->n, sizeof *in->peers);
        char ep[512];
        layout_bind_endpoint(n->topo, &n->layout, n->index, n->opt.instance, j, ep, sizeof ep);
        in->sock = new_socket(n, ZMQ_PULL, n->spec->hwm);
        if (!in->sock || zmq_bind(in->sock, ep) != 0)
            return tusk_error_set(err, TUSK_EIO, "actor %s: cannot bind input %u at %s: %s", n->label, j, ep,
                                  zmq_strerror(errno));
    }
    /* Outputs: one PUSH per downstream instance, connected to its input. */
    n->n_sinks = n->spec->n_sinks;
    n->sinks = calloc(n->n_sinks ? n->n_sinks : 1, sizeof *n->sinks);
    for (unsigned s = 0; s < n->n_sinks; s++) {
        sink_t *sk = &n->sinks[s];
        sk->actor = n->spec->sinks[s];
        const tusk_actor_spec_t *d = tusk_topology_actor(n->topo, sk->actor);
        sk->n = d->instances;
        sk->links = calloc(sk->n, sizeof *sk->links);
        unsigned input = 0;
        for (unsigned j = 0; j < d->n_sources; j++)
            if (d->sources[j] == n->index)
                input = j;
        for (unsigned k = 0; k < sk->n; k++) {
            char ep[512];
            layout_connect_endpoint(n->topo, &n->layout, sk->actor, k, input, ep, sizeof ep);
            sk->links[k].sock = new_socket(n, ZMQ_PUSH, d->hwm);
            if (!sk->links[k].sock || zmq_connect(sk->links[k].sock, ep) != 0)
                return tusk_error_set(err, TUSK_EIO, "actor %s: cannot connect to %s[%u] at %s: %s", n->label,
                                      d->name, k, ep, zmq_strerror(errno));
        }
    }
    return TUSK_OK;
}

static void reset_run_counters(node_t *n)
{
    n->in_buffers = n->in_bytes = n->out_buffers = n->out_bytes = n->calls = n->block_ns = 0;
    n->in_frames = n->out_frames = 0;
    n->n_done = 0;
    n->end_sent = false;
    for (unsigned j = 0; j < n->n_inputs; j++)
        for (unsigned k = 0; k < n->inputs[j].n; k++) {
            in_peer_t *p = &n->inputs[j].peers[k];
            p->received = p->received_total = 0;
            p->ended = false;
        }
    for (unsigned s = 0; s < n->n_sinks; s++)
        for (unsigned k = 0; k < n->sinks[s].n; k++)
            n->sinks[s].links[k].sent = 0;
}

/* PEER_LOST actor=a instance=k: stop waiting for it and sending to it. */
static void peer_lost(node_t *n, unsigned a, unsigned k)
{
    for (unsigned j = 0; j < n->n_inputs; j++)
        if (n->inputs[j].actor == a && k < n->inputs[j].n)
            n->inputs[j].peers[k].lost = true;
    for (unsigned s = 0; s < n->n_sinks; s++)
        if (n->sinks[s].actor == a && k < n->sinks[s].n)
            n->sinks[s].links[k].lost = true;
    if (n->state == ST_RUNNING && n->spec->actor_class != TUSK_PRODUCER && all_inputs_ended(n))
        finish_run(n);
}

/* RESEND_EOR actor=a instance=k: a restarted downstream instance needs our
 * end of run again (the first may have died with its predecessor). */
static void resend_end(node_t *n, unsigned a, unsigned k)
{
    if (!n->end_sent)
        return;
    tusk_error_t err;
    for (unsigned s = 0; s < n->n_sinks; s++)
        if (n->sinks[s].actor == a && k < n->sinks[s].n) {
            tusk_wire_header_t h = header_for(n, TUSK_WIRE_END_OF_RUN);
            if (send_to(n, &n->sinks[s], k, &h, &err) != TUSK_OK)
                fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
        }
}

static bool state_is(const node_t *n, node_state_t a, node_state_t b)
{
    return n->state == a || n->state == b;
}

static int handle_command(node_t *n, tusk_ctl_t *m, const char *payload, size_t payload_size)
{
    const char *verb = tusk_ctl_verb(m);
    tusk_error_t err;
    tusk_error_clear(&err);
    int rc = TUSK_OK;
    bool answer = true;
    if (strcmp(verb, "PING") == 0) {
        return TUSK_OK;
    } else if (strcmp(verb, "STATUS") == 0) {
        tell(n, "HEARTBEAT", NULL, NULL);
        return TUSK_OK;
    } else if (strcmp(verb, "PEER_LOST") == 0 || strcmp(verb, "RESEND_EOR") == 0) {
        uint64_t a, k;
        if (tusk_ctl_get_u64(m, "actor", UINT64_MAX, &a) == TUSK_OK &&
            tusk_ctl_get_u64(m, "instance", UINT64_MAX, &k) == TUSK_OK && a != UINT64_MAX && k != UINT64_MAX) {
            if (verb[0] == 'P')
                peer_lost(n, (unsigned)a, (unsigned)k);
            else
                resend_end(n, (unsigned)a, (unsigned)k);
        }
        return TUSK_OK;
    } else if (strcmp(verb, "CONFIGURE") == 0) {
        if (n->state != ST_IDLE)
            rc = tusk_error_set(&err, TUSK_EINVAL, "CONFIGURE in state %s", state_names[n->state]);
        else if ((rc = configure(n, m, payload, payload_size, &err)) == TUSK_OK)
            n->state = ST_CONFIGURED;
    } else if (strcmp(verb, "INITIALISE") == 0) {
        if (n->state != ST_CONFIGURED)
            rc = tusk_error_set(&err, TUSK_EINVAL, "INITIALISE in state %s", state_names[n->state]);
        else if ((rc = tusk_actor_initialise(n->actor, &err)) == TUSK_OK)
            n->state = ST_READY;
    } else if (strcmp(verb, "START") == 0) {
        uint64_t run = 0;
        tusk_ctl_get_u64(m, "run", 1, &run);
        if (n->state != ST_READY)
            rc = tusk_error_set(&err, TUSK_EINVAL, "START in state %s", state_names[n->state]);
        else {
            reset_run_counters(n);
            n->run = (uint32_t)run;
            if ((rc = tusk_actor_start(n->actor, &err)) == TUSK_OK)
                n->state = ST_RUNNING;
        }
    } else if (strcmp(verb, "PAUSE") == 0) {
        if (n->state == ST_RUNNING && (rc = tusk_actor_pause(n->actor, &err)) == TUSK_OK)
            n->state = ST_PAUSED;
    } else if (strcmp(verb, "RESUME") == 0) {
        if (n->state == ST_PAUSED && (rc = tusk_actor_resume(n->actor, &err)) == TUSK_OK)
            n->state = ST_RUNNING;
    } else if (strcmp(verb, "STOP") == 0) {
        if (n->busy) {
            /* Finish the buffer in hand first: it must not follow our end
             * of run. The main loop answers when it is done. */
            n->pending_stop = true;
            return TUSK_OK;
        }
        if (state_is(n, ST_RUNNING, ST_PAUSED) || state_is(n, ST_ENDED, ST_FAILED)) {
            /* A producer told to stop ends its data now. */
            if (n->spec->actor_class == TUSK_PRODUCER && !n->end_sent && n->state != ST_FAILED) {
                n->state = ST_ENDED; /* no more producing while the markers go */
                if (send_end_of_run(n, &err) != TUSK_OK)
                    fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
            }
            rc = tusk_actor_stop(n->actor, &err);
            n->state = ST_READY;
        }
    } else if (strcmp(verb, "RESET") == 0) {
        if (n->state == ST_READY && (rc = tusk_actor_reset(n->actor, &err)) == TUSK_OK)
            n->state = ST_CONFIGURED;
    } else if (strcmp(verb, "EXIT") == 0) {
        if (n->actor)
            rc = tusk_actor_destroy(&n->actor, &err);
        n->state = ST_EXIT;
    } else {
        rc = tusk_error_set(&err, TUSK_EINVAL, "unknown command %s", verb);
    }
    if (answer)
        reply(n, verb, rc, &err);
    return rc;
}

/* ---- the loop --------------------------------------------------------------------- */

static void node_free(node_t *n)
{
    for (unsigned j = 0; j < n->n_inputs; j++) {
        if (n->inputs[j].sock)
            zmq_close(n->inputs[j].sock);
        free(n->inputs[j].peers);
    }
    for (unsigned s = 0; s < n->n_sinks; s++) {
        for (unsigned k = 0; k < n->sinks[s].n; k++)
            if (n->sinks[s].links[k].sock)
                zmq_close(n->sinks[s].links[k].sock);
        free(n->sinks[s].links);
    }
    if (n->control)
        zmq_close(n->control);
    if (n->actor) {
        tusk_error_t err;
        if (tusk_actor_destroy(&n->actor, &err) != TUSK_OK)
            fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
    }
    /* Every message is released once the context is gone. */
    if (n->zctx)
        zmq_ctx_term(n->zctx);
    bufpool_fini(&n->pool);
    tusk_actor_lib_close(&n->lib);
    free(n->inputs);
    free(n->items);
    free(n->sinks);
    free(n->done);
    adf_reader_destroy(&n->counter);
    free(n->run_dir);
    tusk_topology_destroy(&n->topo);
}

int tusk_node_run(const tusk_node_options_t *opt, tusk_error_t *err)
{
    node_t nd = {0}, *n = &nd;
    n->opt = *opt;
    n->heartbeat_ms = HEARTBEAT_DEFAULT_MS;
    bufpool_init(&n->pool);
    char host[256] = "?";
    gethostname(host, sizeof host);
    snprintf(n->label, sizeof n->label, "%s[%u]@%s", opt->actor, opt->instance, host);
    n->zctx = zmq_ctx_new();
    n->control = n->zctx ? zmq_socket(n->zctx, ZMQ_DEALER) : NULL;
    char id[256];
    snprintf(id, sizeof id, "%s.%u.%u", opt->actor, opt->instance, opt->incarnation);
    int linger = 1000;
    if (!n->control || zmq_setsockopt(n->control, ZMQ_ROUTING_ID, id, strlen(id)) != 0 ||
        zmq_setsockopt(n->control, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_connect(n->control, opt->control) != 0) {
        tusk_error_set(err, TUSK_EIO, "tusk-actor %s: cannot connect to the controller at %s: %s", n->label,
                       opt->control, zmq_strerror(errno));
        node_free(n);
        return TUSK_EIO;
    }
    tusk_ctl_t *hello = tusk_ctl_new("HELLO");
    tusk_ctl_set(hello, "actor", opt->actor);
    tusk_ctl_set_u64(hello, "instance", opt->instance);
    tusk_ctl_set_u64(hello, "incarnation", opt->incarnation);
    tusk_ctl_set_u64(hello, "pid", (uint64_t)getpid());
    tusk_ctl_set(hello, "host", host);
    zu_send_ctl(n->control, NULL, hello, NULL, 0, err);
    tusk_ctl_destroy(&hello);

    int status = 0;
    n->last_heard = zu_now_ms();
    n->next_heartbeat = n->last_heard + n->heartbeat_ms;
    while (n->state != ST_EXIT) {
        if (n->state != ST_IDLE)
            heartbeat_if_due(n);
        uint64_t now = zu_now_ms();
        if (opt->orphan_ms && now - n->last_heard > opt->orphan_ms) {
            tusk_error_set(err, TUSK_EIO, "tusk-actor %s: no word from the controller for %u ms: exiting", n->label,
                           opt->orphan_ms);
            status = 1;
            break;
        }
        if (n->pending_stop) {
            n->pending_stop = false;
            tusk_ctl_t *stop = tusk_ctl_new("STOP");
            handle_command(n, stop, NULL, 0);
            tusk_ctl_destroy(&stop);
            continue;
        }
        bool producing = n->state == ST_RUNNING && n->spec->actor_class == TUSK_PRODUCER;
        if (producing) {
            service_control(n);
            if (n->state == ST_RUNNING && !n->pending_stop) {
                n->busy++;
                produce_one(n);
                n->busy--;
            }
            continue;
        }
        zmq_pollitem_t control_only[1];
        zmq_pollitem_t *items = n->items ? n->items : control_only;
        int count = 0;
        items[count++] = (zmq_pollitem_t){.socket = n->control, .events = ZMQ_POLLIN};
        bool reading = n->state == ST_RUNNING && n->spec->actor_class != TUSK_PRODUCER;
        if (reading)
            for (unsigned j = 0; j < n->n_inputs; j++)
                items[count++] = (zmq_pollitem_t){.socket = n->inputs[j].sock, .events = ZMQ_POLLIN};
        long timeout = n->next_heartbeat > now ? (long)(n->next_heartbeat - now) : 0;
        if (n->state == ST_IDLE)
            timeout = 100;
        if (zmq_poll(items, count, timeout) < 0) {
            if (errno == EINTR)
                continue;
            tusk_error_set(err, TUSK_EIO, "tusk-actor %s: poll failed: %s", n->label, zmq_strerror(errno));
            status = 1;
            break;
        }
        if (items[0].revents & ZMQ_POLLIN)
            service_control(n);
        for (int i = 1; i < count && n->state == ST_RUNNING && !n->pending_stop; i++)
            if (items[i].revents & ZMQ_POLLIN) {
                n->busy++;
                receive_one(n, (unsigned)(i - 1));
                n->busy--;
            }
    }
    node_free(n);
    return status;
}
