/* node.c - tusk-actor's loop (see node.h). The actor's hooks on buffers
 * are called through the one actor driver (runtime/driver.h), which keeps
 * the counts and the timing; this file moves the buffers over ZeroMQ. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "bufpool.h"
#include "heartbeat.h"
#include "layout.h"
#include "node.h"
#include "security.h"
#include "tap.h"
#include "shmlink.h"
#include "tusk/actor_host.h"
#include "tusk/adf_reader.h"
#include "tusk/params.h"
#include "runtime/wire.h"
#include "zutil.h"
#include "base/clock.h"
#include "base/grow.h"
#include "runtime/driver.h"

#define HEARTBEAT_DEFAULT_MS 500
/* Linger of the data sockets: what was sent still leaves after EXIT. The
 * controller kills a failed instance that is still there after 3 s, so
 * an instance that exits by itself has flushed everything it sent (see
 * controller.c, on_failure_how). */
#define DATA_LINGER_MS 5000
/* Dropped messages said in the log: the first ones, then every 1000th. */
#define DROPS_SAID 5
/* How long an output waits for a free slot of the ring before it goes as
 * a copy (only when slots lent to a receiver that died do not come back:
 * see take_slot). */
#define SLOT_WAIT_MS 5000

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
    uint64_t sent;        /* buffers this run (markers are not buffers) */
    bool lost;            /* PEER_LOST: skip it */
    bool shm;             /* buffers of the node's ring go as slot descriptors (shmlink.h) */
    unsigned bit;         /* this link's bit in the ring's slots */
    unsigned hwm;         /* the receiver's hwm: slots it may hold before others are preferred */
    tusk_tap_t *tap;      /* the sampling tap on it (tap.h), while attached */
    uint64_t tap_sent, tap_dropped; /* counts of the taps closed before */
} out_link_t;

typedef struct sink { /* one actor reading our output */
    unsigned actor, n;
    out_link_t *links;
    unsigned rr;
} sink_t;

typedef struct peer_inc { /* what came from one incarnation of an upstream instance */
    uint16_t incarnation;
    uint64_t received;       /* buffers, this run (duplicates included) */
    uint64_t last_seq;       /* the highest buffer number seen */
} peer_inc_t;

typedef struct in_peer { /* one upstream instance (slot) on an input, this run */
    peer_inc_t *incs;
    size_t n_incs, cap_incs;
    uint64_t received_total; /* buffers from every incarnation */
    uint64_t finished;       /* inputs whose every output has left (consumer: consumed) */
    uint64_t held;           /* inputs that made no output of their own: held back until the flush */
    uint64_t duplicates;     /* buffers numbered again (dropped) */
    uint64_t gaps;           /* buffer numbers skipped */
    uint64_t malformed;      /* buffers whose ADF framing is broken */
    bool ended, lost;
    /* PEER_LOST with a count: lost once that many buffers of that
     * incarnation arrived (its last ones may still be on the way). */
    bool lost_pending;
    uint16_t lost_incarnation;
    uint64_t lost_after;
} in_peer_t;

typedef struct input {
    void *sock;
    unsigned actor, n;
    in_peer_t *peers;
    char bound[512];  /* where it bound (for the controller, which tells the senders) */
    uint64_t dropped; /* messages that were no data message of this run: dropped */
} input_t;

/* Inputs finished by source (sa, sk) in its incarnation si, per upstream
 * link (ia, ik) of that source, as seen in the messages that came from it:
 * the controller counts with these what a source that died had finished. */
typedef struct done_entry {
    uint16_t sa, sk, si, ia, ik;
    uint64_t count;
} done_entry_t;

typedef struct node {
    tusk_node_options_t opt;
    void *zctx, *control;
    tusk_sec_t *sec;      /* who may connect (security.h) */
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
    char *param_dir;      /* its parameters.conf's folder, made by the host (NULL: the actor's own
                             <config_dir>): tusk-run --set rewrites it (update_params) */
    input_t *inputs;
    unsigned n_inputs;
    sink_t *sinks;
    unsigned n_sinks;
    bufpool_t pool; /* output buffers */
    /* tusk-run --transport shm: output buffers are slots of this ring,
     * inputs may lie in the rings of our senders (shmlink.h). */
    tusk_shm_ring_t *ring;
    bool ring_starved;       /* no slot came in time: pool buffers (copies) until one is free */
    tusk_shm_map_t **maps;   /* our senders' rings, mapped */
    size_t n_maps, cap_maps;
    bool in_view;            /* the input in hand lies in a sender's ring */

    uint32_t run;
    bool end_sent;           /* end of run sent downstream this run */
    tusk_driver_t *drv;      /* calls the actor on buffers; calls, buffers, frames, bytes, time */
    /* While a filter works on an input: the header of its outputs (where
     * they came from). */
    bool filtering;
    tusk_wire_header_t out_header;
    done_entry_t *done;
    size_t n_done, cap_done;

    uint64_t next_heartbeat;
    tusk_hb_t *hb; /* the liveness thread */
    char failure[TUSK_ERROR_MESSAGE_MAX];
    int busy;             /* inside a hook call or a send */
    bool pending_stop;    /* STOP arrived while busy */
    zmq_pollitem_t *items; /* control + inputs */
} node_t;

/* ---- control ---------------------------------------------------------------- */

/* The statistics of this incarnation, this run. `final` says they can no
 * longer change (no data moves in this state), so the controller may take
 * them as exact even if the process dies later. */
static void add_stats(node_t *n, tusk_ctl_t *m)
{
    static const tusk_driver_stats_t none = {0};
    const tusk_driver_stats_t *st = n->drv ? tusk_driver_stats(n->drv) : &none;
    tusk_ctl_set(m, "state", state_names[n->state]);
    tusk_ctl_set_u64(m, "incarnation", n->opt.incarnation);
    tusk_ctl_set(m, "final", n->state == ST_RUNNING || n->state == ST_PAUSED ? "0" : "1");
    tusk_ctl_set_u64(m, "run", n->run);
    tusk_ctl_set_u64(m, "in_buffers", st->buffers_in);
    tusk_ctl_set_u64(m, "in_bytes", st->bytes_in);
    tusk_ctl_set_u64(m, "out_buffers", st->buffers_out);
    tusk_ctl_set_u64(m, "out_bytes", st->bytes_out);
    tusk_ctl_set_u64(m, "in_frames", st->frames_in);
    tusk_ctl_set_u64(m, "out_frames", st->frames_out);
    tusk_ctl_set_u64(m, "calls", st->calls);
    tusk_ctl_set_u64(m, "block_ns", st->ns);
    char key[64];
    for (unsigned s = 0; s < n->n_sinks; s++)
        for (unsigned k = 0; k < n->sinks[s].n; k++) {
            snprintf(key, sizeof key, "sent:%u:%u", n->sinks[s].actor, k);
            tusk_ctl_set_u64(m, key, n->sinks[s].links[k].sent);
            const out_link_t *l = &n->sinks[s].links[k];
            if (l->tap || l->tap_sent || l->tap_dropped) { /* tap.h */
                snprintf(key, sizeof key, "tap_sent:%u:%u", n->sinks[s].actor, k);
                tusk_ctl_set_u64(m, key, l->tap_sent + tusk_tap_sent(l->tap));
                snprintf(key, sizeof key, "tap_dropped:%u:%u", n->sinks[s].actor, k);
                tusk_ctl_set_u64(m, key, l->tap_dropped + tusk_tap_dropped(l->tap));
                if (l->tap) {
                    snprintf(key, sizeof key, "tap:%u:%u", n->sinks[s].actor, k);
                    tusk_ctl_set(m, key, tusk_tap_address(l->tap));
                    /* Read its subscriptions here: this thread owns its socket. */
                    snprintf(key, sizeof key, "tap_listening:%u:%u", n->sinks[s].actor, k);
                    tusk_ctl_set(m, key, tusk_tap_listening(l->tap) ? "1" : "0");
                }
            }
        }
    for (unsigned j = 0; j < n->n_inputs; j++)
        for (unsigned k = 0; k < n->inputs[j].n; k++) {
            const in_peer_t *p = &n->inputs[j].peers[k];
            unsigned a = n->inputs[j].actor;
            snprintf(key, sizeof key, "recv:%u:%u", a, k);
            tusk_ctl_set_u64(m, key, p->received_total);
            for (size_t i = 0; i < p->n_incs; i++) {
                snprintf(key, sizeof key, "recvi:%u:%u:%u", a, k, (unsigned)p->incs[i].incarnation);
                tusk_ctl_set_u64(m, key, p->incs[i].received);
            }
            static const char *const names[] = {"fin", "held", "dup", "gap", "bad", "ended"};
            const uint64_t values[] = {p->finished, p->held, p->duplicates, p->gaps, p->malformed, p->ended};
            for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
                if (values[i] || i == 0) {
                    snprintf(key, sizeof key, "%s:%u:%u", names[i], a, k);
                    tusk_ctl_set_u64(m, key, values[i]);
                }
        }
    for (size_t i = 0; i < n->n_done; i++) {
        const done_entry_t *d = &n->done[i];
        snprintf(key, sizeof key, "done:%u:%u:%u:%u:%u", d->sa, d->sk, d->si, d->ia, d->ik);
        tusk_ctl_set_u64(m, key, d->count);
    }
    /* What was kept out: connections refused at the door (garbage, wrong
     * keys, strangers) and messages dropped inside (no data message of
     * this run). */
    uint64_t dropped = 0;
    for (unsigned j = 0; j < n->n_inputs; j++)
        dropped += n->inputs[j].dropped;
    tusk_sec_counts_t sc = tusk_sec_counts(n->sec, NULL);
    tusk_ctl_set_u64(m, "dropped", dropped);
    tusk_ctl_set_u64(m, "refused", sc.refused);
    tusk_ctl_set_u64(m, "denied", sc.denied);
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
    uint64_t now = tusk_clock_ms();
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
    if (rc == TUSK_OK && strcmp(verb, "CONFIGURE") == 0)
        for (unsigned j = 0; j < n->n_inputs; j++) {
            char key[32];
            snprintf(key, sizeof key, "bound:%u", j);
            tusk_ctl_set(m, key, n->inputs[j].bound); /* where its senders are to connect */
        }
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
        int rc = zu_recv_ctl(n->control, true, NULL, 0, NULL, 0, &m, &payload, &psize, &err);
        if (rc == TUSK_EIO && errno == EAGAIN)
            return;
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
    uint64_t now = tusk_clock_ms();
    long timeout = n->next_heartbeat > now ? (long)(n->next_heartbeat - now) : 0;
    items[count] = (zmq_pollitem_t){.socket = n->control, .events = ZMQ_POLLIN};
    if (zmq_poll(items, count + 1, timeout) < 0 && errno != EINTR)
        return false;
    if (items[count].revents & ZMQ_POLLIN)
        service_control(n);
    /* Blocked here for good (a stalled peer) and the controller gone: leave. */
    if (tusk_hb_orphaned(n->hb))
        n->state = ST_EXIT;
    /* STOP waits until this send is done (busy); EXIT does not. */
    return n->state == ST_RUNNING || n->state == ST_PAUSED || n->state == ST_ENDED;
}

/* A copy of a buffer that went on link `l` to its tap, if one is
 * attached (tap.h: never waits; a full tap drops and counts). */
static void tap_offer(out_link_t *l, const tusk_wire_header_t *h, const void *data, size_t size)
{
    if (!l->tap)
        return;
    uint8_t hdr[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_encode(h, hdr);
    tusk_tap_offer(l->tap, hdr, sizeof hdr, data, size);
}

/* Send one message (header + payload frame) to link `k` of sink `s`
 * without waiting; false when it cannot take it now. A buffer in a slot
 * of `ring` (`slot`, not NULL) goes as its slot descriptor on a shm link
 * (`payload` is then unused). */
static bool try_send(tusk_shm_ring_t *ring, sink_t *s, unsigned k, tusk_wire_header_t *h, zmq_msg_t *payload,
                     const void *slot, int *error)
{
    out_link_t *l = &s->links[k];
    /* Buffers are numbered; markers carry the count so far. */
    bool marker = (h->flags & (TUSK_WIRE_END_OF_RUN | TUSK_WIRE_EMPTY)) != 0;
    h->seq = marker ? l->sent : l->sent + 1;
    uint8_t hdr[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_header_t wh = *h;
    if (slot)
        wh.flags |= TUSK_WIRE_SHM;
    tusk_wire_encode(&wh, hdr);
    if (zmq_send(l->sock, hdr, sizeof hdr, ZMQ_DONTWAIT | ZMQ_SNDMORE) < 0) {
        if (errno != EAGAIN)
            *error = errno;
        return false;
    }
    /* The first frame went, so the socket takes the rest of the message. */
    if (slot) {
        tusk_wire_shm_t d;
        uint8_t desc[TUSK_WIRE_SHM_SIZE];
        tusk_shm_ring_lend(ring, slot, l->bit, h->seq, &d);
        tusk_wire_shm_encode(&d, desc);
        if (zmq_send(l->sock, desc, sizeof desc, 0) < 0) {
            *error = errno;
            tusk_shm_ring_unlend(ring, slot, l->bit);
            return false;
        }
        l->sent++;
        tap_offer(l, h, slot, h->payload_size);
        return true;
    }
    zmq_msg_t copy;
    zmq_msg_init(&copy);
    if (payload)
        zmq_msg_copy(&copy, payload);
    if (zmq_msg_send(&copy, l->sock, 0) < 0) {
        *error = errno;
        zmq_msg_close(&copy);
        return false;
    }
    if (!marker) {
        l->sent++;
        if (payload)
            tap_offer(l, h, zmq_msg_data(payload), zmq_msg_size(payload));
    }
    return true;
}

/* Send to one instance of sink `s`, the next that can take it: load
 * sharing; waits (back-pressure) while none can. `slot`: see try_send. */
static int send_balanced(node_t *n, sink_t *s, tusk_wire_header_t *h, zmq_msg_t *payload, const void *slot,
                         tusk_error_t *err)
{
    zmq_pollitem_t items[TUSK_MAX_INSTANCES + 1];
    while (true) {
        int error = 0, live = 0;
        /* A slot goes first to an instance holding fewer than its hwm of
         * ours (the queue in messages says little when a message is a
         * descriptor): load sharing that follows each one's pace; then,
         * when all hold that many, to the next that takes it. */
        for (int pass = slot ? 0 : 1; pass < 2; pass++)
            for (unsigned i = 0; i < s->n; i++) {
                unsigned k = (s->rr + i) % s->n;
                const out_link_t *l = &s->links[k];
                if (l->lost || (pass == 0 && (!l->shm || tusk_shm_ring_lent(n->ring, l->bit) >= l->hwm)))
                    continue;
                live += pass;
                if (try_send(n->ring, s, k, h, payload, l->shm ? slot : NULL, &error)) {
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
        if (try_send(n->ring, s, k, h, NULL, NULL, &error))
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

/* Send a message (its payload shared, not copied) to every sink; or,
 * with `slot`, a slot of the ring (see try_send). */
static int emit_msg(node_t *n, zmq_msg_t *payload, const void *slot, uint32_t used, const tusk_wire_header_t *tmpl,
                    tusk_error_t *err)
{
    int rc = TUSK_OK;
    for (unsigned s = 0; s < n->n_sinks && rc == TUSK_OK; s++) {
        tusk_wire_header_t h = *tmpl;
        h.payload_size = used;
        rc = send_balanced(n, &n->sinks[s], &h, payload, slot, err);
    }
    return rc;
}

/* Hand an output buffer (from the pool, or a slot of the ring) to every
 * sink, zero-copy. */
static int emit(node_t *n, void *buf, uint32_t used, const tusk_wire_header_t *tmpl, tusk_error_t *err)
{
    if (tusk_shm_ring_owns(n->ring, buf)) {
        /* Lent to every link it went to: the sender's hold ends. */
        int rc = emit_msg(n, NULL, buf, used, tmpl, err);
        tusk_shm_ring_put(n->ring, buf);
        return rc;
    }
    zmq_msg_t payload;
    if (zmq_msg_init_data(&payload, buf, used, bufpool_release, &n->pool) != 0) {
        bufpool_release(buf, &n->pool);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    int rc = emit_msg(n, &payload, NULL, used, tmpl, err);
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

/* Hook calls are announced to the liveness thread, which reports them. */
static void hook_enter(node_t *n, const char *hook)
{
    tusk_hb_enter(n->hb, hook);
}

static void hook_leave(node_t *n)
{
    tusk_hb_leave(n->hb);
}

/* ---- the driver's host: output buffers from the pool, sent zero-copy ------------- */

/* A free slot of the ring for an output: waits (control and heartbeats
 * served) while every slot is lent, as on a full queue. After
 * SLOT_WAIT_MS without one, NULL (the output goes as a copy, from the
 * pool), and at once until a slot is free again: slots lent to a
 * receiver that restarted come back only once its successor has seen a
 * buffer of ours in shared memory (shmlink.h), so copies keep the data
 * moving meanwhile. The same bytes arrive either way. TUSK_EIO when the
 * node leaves the states that move data while it waits. */
static int take_slot(node_t *n, uint8_t **out, tusk_error_t *err)
{
    uint8_t *slot = tusk_shm_ring_take(n->ring);
    *out = NULL;
    if (slot || n->ring_starved) {
        n->ring_starved = slot == NULL;
        *out = slot;
        return TUSK_OK;
    }
    uint64_t give_up = tusk_clock_ms() + SLOT_WAIT_MS;
    while (!(slot = tusk_shm_ring_take(n->ring))) {
        if (tusk_clock_ms() >= give_up) {
            n->ring_starved = true;
            fprintf(stderr, "tusk-actor %s: no free shared-memory slot for %u ms: outputs go as copies until "
                            "one is free\n", n->label, SLOT_WAIT_MS);
            return TUSK_OK;
        }
        heartbeat_if_due(n);
        zmq_pollitem_t item = {.socket = n->control, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 1) > 0 && (item.revents & ZMQ_POLLIN))
            service_control(n);
        if (tusk_hb_orphaned(n->hb))
            n->state = ST_EXIT;
        if (!(n->state == ST_RUNNING || n->state == ST_PAUSED || n->state == ST_ENDED))
            return tusk_error_set(err, TUSK_EIO, "actor %s: stopped while waiting for a free shared-memory slot",
                                  n->label);
    }
    *out = slot;
    return TUSK_OK;
}

static void *host_take(void *ctx, uint8_t **data, tusk_error_t *err)
{
    node_t *n = ctx;
    if (n->ring) {
        uint8_t *slot;
        if (take_slot(n, &slot, err) != TUSK_OK) {
            *data = NULL;
            return NULL;
        }
        if (slot) {
            *data = slot;
            return slot;
        }
    }
    void *buf = bufpool_take(&n->pool);
    if (!buf)
        tusk_error_set(err, TUSK_ENOMEM, "actor %s: out of memory for an output buffer", n->label);
    *data = buf;
    return buf;
}

static void host_give_back(void *ctx, void *buffer)
{
    node_t *n = ctx;
    if (tusk_shm_ring_owns(n->ring, buffer))
        tusk_shm_ring_put(n->ring, buffer);
    else
        bufpool_release(buffer, &n->pool);
}

/* A filter's outputs name the input they came from; the last one (and a
 * forwarded input) completes it. A producer's and the flush's are plain. */
static int host_emit(void *ctx, void *buffer, uint32_t size, uint64_t frames, unsigned flags, tusk_error_t *err)
{
    (void)frames;
    node_t *n = ctx;
    tusk_wire_header_t h = header_for(n, 0);
    if (n->filtering && !(flags & TUSK_EMIT_FLUSH)) {
        h = n->out_header;
        h.flags = (flags & TUSK_EMIT_LAST) ? TUSK_WIRE_COMPLETES : 0;
    }
    if ((flags & TUSK_EMIT_FORWARDED) && n->in_view) {
        /* An input in a sender's ring goes on as a copy (into a slot of
         * ours, or a message): its slot goes back when the input is done,
         * so nothing of a sender's ring outlives the call (a receiver
         * declared lost holds nothing). */
        zmq_msg_t *in = buffer;
        uint8_t *slot = NULL;
        if (n->ring && size <= tusk_shm_ring_slot_size(n->ring) && take_slot(n, &slot, err) != TUSK_OK)
            return TUSK_EIO;
        if (slot) {
            memcpy(slot, zmq_msg_data(in), size);
            return emit(n, slot, size, &h, err);
        }
        zmq_msg_t copy;
        if (zmq_msg_init_size(&copy, size) != 0)
            return tusk_error_set(err, TUSK_ENOMEM, "actor %s: out of memory", n->label);
        memcpy(zmq_msg_data(&copy), zmq_msg_data(in), size);
        int rc = emit_msg(n, &copy, NULL, size, &h, err);
        zmq_msg_close(&copy);
        return rc;
    }
    if (flags & TUSK_EMIT_FORWARDED) /* unchanged: the message that came in goes out, uncopied */
        return emit_msg(n, buffer, NULL, size, &h, err);
    return emit(n, buffer, size, &h, err);
}

static void host_enter(void *ctx, const char *hook)
{
    hook_enter(ctx, hook);
}

static void host_leave(void *ctx)
{
    hook_leave(ctx);
}

static void produce_one(node_t *n)
{
    tusk_error_t err;
    bool end;
    int rc = tusk_driver_produce(n->drv, n->actor, &end, &err);
    if (rc != TUSK_OK) {
        if (n->state == ST_RUNNING || n->state == ST_PAUSED)
            fail(n, &err);
        return;
    }
    if (end) {
        rc = send_end_of_run(n, &err);
        if (rc != TUSK_OK)
            fail(n, &err);
        else
            ended(n);
    }
}

static done_entry_t *done_slot(node_t *n, uint16_t sa, uint16_t sk, uint16_t si, uint16_t ia, uint16_t ik)
{
    for (size_t i = 0; i < n->n_done; i++) {
        done_entry_t *d = &n->done[i];
        if (d->sa == sa && d->sk == sk && d->si == si && d->ia == ia && d->ik == ik)
            return d;
    }
    if (tusk_grow(&n->done, &n->cap_done, n->n_done + 1, sizeof *n->done) != 0)
        return NULL;
    n->done[n->n_done] = (done_entry_t){sa, sk, si, ia, ik, 0};
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

/* A marker (no buffer) to one instance of every sink: the input (ia, ik,
 * input_seq) finished with an empty last call (COMPLETES), or `count`
 * held-back inputs of link (ia, ik) finished by the flush (RELEASE). The
 * actors below count these, so what this instance had finished is known
 * even if it dies. */
static int send_marker(node_t *n, uint16_t flags, uint16_t ia, uint16_t ik, uint64_t input_seq, tusk_error_t *err)
{
    tusk_wire_header_t e = header_for(n, (uint16_t)(TUSK_WIRE_EMPTY | flags));
    e.input_actor = ia;
    e.input_instance = ik;
    e.input_seq = input_seq;
    e.payload_size = 0;
    for (unsigned s = 0; s < n->n_sinks; s++) {
        int rc = send_balanced(n, &n->sinks[s], &e, NULL, NULL, err);
        if (rc != TUSK_OK)
            return rc;
    }
    return TUSK_OK;
}

/* Every upstream instance has ended: flush (filters), release what was
 * held back, send our end of run, report. */
static void finish_run(node_t *n)
{
    tusk_error_t err;
    if (n->spec->actor_class == TUSK_FILTER) {
        if (tusk_driver_flush(n->drv, n->actor, &err) != TUSK_OK) {
            fail(n, &err);
            return;
        }
        /* The flush gave out whatever was held back: those inputs are
         * finished now. */
        for (unsigned j = 0; j < n->n_inputs; j++)
            for (unsigned k = 0; k < n->inputs[j].n; k++) {
                in_peer_t *p = &n->inputs[j].peers[k];
                if (!p->held)
                    continue;
                if (send_marker(n, TUSK_WIRE_RELEASE, (uint16_t)n->inputs[j].actor, (uint16_t)k, p->held, &err) !=
                    TUSK_OK) {
                    fail(n, &err);
                    return;
                }
                p->finished += p->held;
                p->held = 0;
            }
        if (send_end_of_run(n, &err) != TUSK_OK) {
            fail(n, &err);
            return;
        }
    }
    ended(n);
}

/* Process one input buffer from (source actor h->source_actor, instance
 * h->source_instance); its outputs carry where they came from. The input
 * counts as finished once its last output has left (a consumer: once
 * consumed), as held back when it made no output of its own. */
static int process_buffer(node_t *n, unsigned input, in_peer_t *p, const tusk_wire_header_t *in_h, zmq_msg_t *body,
                          uint64_t frames, tusk_error_t *err)
{
    void *data = zmq_msg_data(body);
    uint32_t size = (uint32_t)zmq_msg_size(body);
    if (n->spec->actor_class == TUSK_CONSUMER) {
        int rc = tusk_driver_consume(n->drv, n->actor, data, size, frames, err);
        if (rc == TUSK_OK)
            p->finished++;
        return rc;
    }
    n->out_header = header_for(n, 0);
    n->out_header.input_actor = in_h->source_actor;
    n->out_header.input_instance = in_h->source_instance;
    n->out_header.input_seq = in_h->seq;
    n->filtering = true;
    tusk_driver_outcome_t outcome;
    int rc = tusk_driver_filter(n->drv, n->actor, input, body, data, size, frames, &outcome, err);
    n->filtering = false;
    if (rc != TUSK_OK)
        return rc;
    if (outcome == TUSK_DRIVER_HELD) {
        p->held++; /* nothing of its own went out: the actor may keep its data until the flush */
        return TUSK_OK;
    }
    if (outcome == TUSK_DRIVER_DONE_OPEN) {
        /* Its last call wrote nothing: finished all the same. */
        rc = send_marker(n, TUSK_WIRE_COMPLETES, in_h->source_actor, in_h->source_instance, in_h->seq, err);
        if (rc != TUSK_OK)
            return rc;
    }
    p->finished++;
    return TUSK_OK;
}

/* What came from incarnation `inc` of an upstream instance (NULL: no memory). */
static peer_inc_t *peer_inc(in_peer_t *p, uint16_t inc)
{
    for (size_t i = 0; i < p->n_incs; i++)
        if (p->incs[i].incarnation == inc)
            return &p->incs[i];
    if (tusk_grow(&p->incs, &p->cap_incs, p->n_incs + 1, sizeof *p->incs) != 0)
        return NULL;
    p->incs[p->n_incs] = (peer_inc_t){.incarnation = inc};
    return &p->incs[p->n_incs++];
}

static const char *peer_name(const node_t *n, const input_t *in)
{
    return tusk_topology_actor(n->topo, in->actor)->name;
}

/* Completions seen in a message from (source, incarnation): for the
 * controller, in case the source dies. */
static void count_done(node_t *n, const tusk_wire_header_t *h, uint64_t count)
{
    done_entry_t *d = done_slot(n, h->source_actor, h->source_instance, h->incarnation, h->input_actor,
                                h->input_instance);
    if (d)
        d->count += count;
}

/* The end of run of one upstream instance: it says how many buffers it
 * sent on this link. More arrived than it sent: extra buffers (counted in
 * the statistics as received, flagged here). Fewer: they are lost (the
 * controller counts them), unless this instance is a restart, which saw
 * only what came after its predecessor. */
static void end_of_run_from(node_t *n, const input_t *in, in_peer_t *p, const peer_inc_t *pi,
                            const tusk_wire_header_t *h)
{
    if (h->seq < pi->received)
        fprintf(stderr, "tusk-actor %s: link %s[%u] -> here: %llu buffers arrived, but the sender sent %llu: "
                        "%llu extra\n",
                n->label, peer_name(n, in), (unsigned)h->source_instance, (unsigned long long)pi->received,
                (unsigned long long)h->seq, (unsigned long long)(pi->received - h->seq));
    else if (h->seq > pi->received && n->opt.incarnation == 0)
        fprintf(stderr, "tusk-actor %s: link %s[%u] -> here: the sender sent %llu buffers, %llu arrived\n", n->label,
                peer_name(n, in), (unsigned)h->source_instance, (unsigned long long)h->seq,
                (unsigned long long)pi->received);
    p->ended = true;
}

/* Check a buffer's number on its link: true for the next one (or one
 * after a gap, which is reported); false for a number seen before (a
 * duplicate, or a stray sender): it is counted and dropped. A restarted
 * instance may start anywhere: its predecessor had the first ones. */
static bool buffer_number(node_t *n, const input_t *in, in_peer_t *p, peer_inc_t *pi, const tusk_wire_header_t *h)
{
    bool first = pi->received == 1;
    if (!first && h->seq <= pi->last_seq) {
        if (p->duplicates++ == 0)
            fprintf(stderr, "tusk-actor %s: link %s[%u] -> here: buffer %llu arrived again after buffer %llu "
                            "(a duplicate, or a stray sender): dropped, counted as extra\n",
                    n->label, peer_name(n, in), (unsigned)h->source_instance, (unsigned long long)h->seq,
                    (unsigned long long)pi->last_seq);
        return false;
    }
    uint64_t expected = pi->last_seq + 1;
    if (h->seq > expected && !(first && n->opt.incarnation > 0)) {
        if (p->gaps == 0)
            fprintf(stderr, "tusk-actor %s: link %s[%u] -> here: buffer %llu arrived where %llu was due: %llu "
                            "missing\n",
                    n->label, peer_name(n, in), (unsigned)h->source_instance, (unsigned long long)h->seq,
                    (unsigned long long)expected, (unsigned long long)(h->seq - expected));
        p->gaps += h->seq - expected;
    }
    pi->last_seq = h->seq;
    return true;
}

/* Count a buffer's frames (for the statistics) and check its ADF framing.
 * A malformed buffer is still passed on to the actor (its reader applies
 * its own error policy), but it is reported here, naming the link and
 * the sender, to the controller at once, and in the statistics, so the
 * run cannot end as clean. */
static uint64_t count_frames(node_t *n, const input_t *in, in_peer_t *p, const tusk_wire_header_t *h,
                             zmq_msg_t *body)
{
    uint32_t size = (uint32_t)zmq_msg_size(body);
    /* A NARVAL C actor's buffers (generic_*, its library set by a NARVAL
     * script) are NARVAL's: bytes of its own format, carried unchecked. */
    if (tusk_topology_actor(n->topo, in->actor)->narval_library)
        return 0;
    const adf_error_t *e;
    uint64_t frames = tusk_driver_frames(n->drv, zmq_msg_data(body), size, &e);
    if (!e)
        return frames;
    char what[TUSK_ERROR_MESSAGE_MAX];
    zu_format(what, sizeof what, "malformed buffer %llu of %u bytes from %s[%u] (incarnation %u): %s",
              (unsigned long long)h->seq, (unsigned)size, peer_name(n, in), (unsigned)h->source_instance,
              (unsigned)h->incarnation, e->message);
    fprintf(stderr, "tusk-actor %s: %s\n", n->label, what);
    if (p->malformed++ == 0) {
        tusk_ctl_t *m = tusk_ctl_new("BAD_DATA");
        if (m) {
            tusk_ctl_setf(m, "from", "%s[%u]", peer_name(n, in), (unsigned)h->source_instance);
            tusk_ctl_set(m, "message", what);
            add_stats(n, m);
            tusk_error_t err;
            if (zu_send_ctl(n->control, NULL, m, NULL, 0, &err) != TUSK_OK)
                fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
            tusk_ctl_destroy(&m);
        }
    }
    return frames;
}

/* A buffer in a sender's ring (TUSK_WIRE_SHM): `body` holds its slot
 * descriptor. It becomes a message over the slot itself, which gives the
 * slot back when it is closed; *map: the ring's map. */
static int shm_view(node_t *n, const tusk_wire_header_t *h, zmq_msg_t *body, tusk_shm_map_t **map,
                    tusk_error_t *err)
{
    tusk_wire_shm_t d;
    int rc = tusk_wire_shm_decode(zmq_msg_data(body), zmq_msg_size(body), &d, err);
    if (rc != TUSK_OK)
        return rc;
    tusk_shm_map_t *m = NULL;
    for (size_t i = 0; i < n->n_maps && !m; i++)
        if (tusk_shm_map_is(n->maps[i], &d))
            m = n->maps[i];
    if (!m) {
        if (tusk_grow(&n->maps, &n->cap_maps, n->n_maps + 1, sizeof *n->maps) != 0)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        if ((rc = tusk_shm_map_open(&m, &d, err)) != TUSK_OK)
            return rc;
        n->maps[n->n_maps++] = m;
    }
    uint8_t *data;
    if ((rc = tusk_shm_map_slot(m, &d, h->payload_size, &data, err)) != TUSK_OK)
        return rc;
    zmq_msg_close(body);
    if (zmq_msg_init_data(body, data, h->payload_size, tusk_shm_map_release, m) != 0) {
        zmq_msg_init(body);
        tusk_shm_map_release(data, m);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    *map = m;
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
    if (rc == TUSK_OK && !(h.flags & TUSK_WIRE_SHM) && zmq_msg_size(&body) != h.payload_size)
        rc = tusk_error_set(&err, TUSK_EINVAL, "a data message of %zu bytes whose header says %u",
                            zmq_msg_size(&body), (unsigned)h.payload_size);
    if (rc == TUSK_OK && (h.source_actor != in->actor || h.source_instance >= in->n))
        rc = tusk_error_set(&err, TUSK_EINVAL, "a data message from actor %u[%u] on the input of actor %u",
                            (unsigned)h.source_actor, (unsigned)h.source_instance, in->actor);
    if (rc == TUSK_OK && h.run != n->run)
        rc = tusk_error_set(&err, TUSK_EINVAL, "a data message of run %u during run %u", (unsigned)h.run,
                            (unsigned)n->run);
    /* A buffer in a sender's ring, looked at only once it is of this run:
     * one left from an earlier run (its slot since free again: the sender
     * starts each run with every slot free) is never touched. */
    tusk_shm_map_t *view = NULL;
    if (rc == TUSK_OK && (h.flags & TUSK_WIRE_SHM))
        rc = shm_view(n, &h, &body, &view, &err);
    if (rc != TUSK_OK) {
        /* Not a data message of this run: whoever sent it, it is no
         * buffer of any link. Dropped and counted (the run does not end
         * clean), never fatal; the first ones are said. */
        in->dropped++;
        if (in->dropped <= DROPS_SAID || in->dropped % 1000 == 0) {
            const char *user = zmq_msg_gets(&hdr, "User-Id");
            fprintf(stderr, "tusk-actor %s: input from %s: dropped a message (%llu so far; its sender: %s): %s%s\n",
                    n->label, tusk_topology_actor(n->topo, in->actor)->name, (unsigned long long)in->dropped,
                    user && *user ? user : "unauthenticated", err.message,
                    in->dropped == DROPS_SAID ? " (further drops are counted, one in 1000 said)" : "");
        }
        zmq_msg_close(&hdr);
        zmq_msg_close(&body);
        return;
    }
    in_peer_t *p = &in->peers[h.source_instance];
    peer_inc_t *pi = peer_inc(p, h.incarnation);
    if (!pi) {
        tusk_error_set(&err, TUSK_ENOMEM, "actor %s: out of memory", n->label);
        fail(n, &err);
    } else if (h.flags & TUSK_WIRE_END_OF_RUN) {
        end_of_run_from(n, in, p, pi, &h);
    } else if (h.flags & TUSK_WIRE_EMPTY) {
        /* A marker: what the sender finished (see send_marker). */
        count_done(n, &h, (h.flags & TUSK_WIRE_RELEASE) ? h.input_seq : 1);
    } else {
        pi->received++;
        p->received_total++;
        if (view)
            tusk_shm_map_seen(view, h.seq);
        bool fresh = buffer_number(n, in, p, pi, &h);
        if (fresh) {
            if (h.flags & TUSK_WIRE_COMPLETES)
                count_done(n, &h, 1);
            uint64_t frames = count_frames(n, in, p, &h, &body);
            n->in_view = view != NULL;
            rc = process_buffer(n, j, p, &h, &body, frames, &err);
            n->in_view = false;
            if (rc != TUSK_OK && n->state != ST_EXIT)
                fail(n, &err);
        }
    }
    if (p->lost_pending && pi && pi->incarnation == p->lost_incarnation && pi->received >= p->lost_after) {
        p->lost_pending = false;
        p->lost = true; /* everything it sent has come */
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

/* The run folder on this host (see configure). */
static int local_run_dir(node_t *n, const char *run_dir, tusk_error_t *err)
{
    struct stat st;
    if (lstat(run_dir, &st) == 0 || errno != ENOENT) {
        int rc = tusk_private_folder(run_dir, false, err);
        if (rc != TUSK_OK)
            return rc;
        n->run_dir = strdup(run_dir);
    } else {
        if (n->layout.transport == TUSK_TRANSPORT_IPC)
            return tusk_error_set(err, TUSK_EIO, "run folder %s: not on this host (ipc needs it)", run_dir);
        char mine[4096];
        const char *slash = strrchr(run_dir, '/'), *base = slash ? slash + 1 : run_dir;
        int rc = tusk_private_dir(mine, sizeof mine, err);
        if (rc != TUSK_OK)
            return rc;
        size_t used = strlen(mine);
        snprintf(mine + used, sizeof mine - used, "/%s", *base ? base : "run");
        if ((rc = tusk_private_folder(mine, true, err)) != TUSK_OK)
            return rc;
        n->run_dir = strdup(mine);
    }
    return n->run_dir ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
}

/* The folder of the parameters.conf the host made (tusk-run --set
 * rewrites it between runs), with the values changed by --set in earlier
 * runs (set:KEY in CONFIGURE: a restarted instance keeps them). */
static int keep_param_dir(node_t *n, const tusk_ctl_t *m, const char *dir, tusk_error_t *err)
{
    free(n->param_dir);
    if (!(n->param_dir = strdup(dir)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    tusk_params_t *p = NULL;
    bool changed = false;
    int rc = tusk_params_load(&p, dir, err);
    for (size_t i = 0; rc == TUSK_OK && i < tusk_ctl_count(m); i++)
        if (strncmp(tusk_ctl_key(m, i), "set:", 4) == 0) {
            rc = tusk_params_set(p, tusk_ctl_key(m, i) + 4, tusk_ctl_value(m, i), err);
            changed = true;
        }
    if (rc == TUSK_OK && changed)
        rc = tusk_params_save(p, dir, err);
    tusk_params_destroy(&p);
    return rc;
}

/* UPDATE set:KEY=VALUE ...: between runs, parameters the actor declares
 * changeable (actor.h, process_changeable) take new values: its
 * parameters.conf rewritten, then process_update; when that fails, the
 * old parameters.conf is put back. */
static int update_params(node_t *n, const tusk_ctl_t *m, tusk_error_t *err)
{
    if (!n->param_dir)
        return tusk_error_set(err, TUSK_EINVAL, "actor %s: its configuration folder is its own (<config_dir> %s): "
                              "change the files there and configure again", n->label,
                              n->spec->config_dir ? n->spec->config_dir : "?");
    size_t count = 0;
    for (size_t i = 0; i < tusk_ctl_count(m); i++) {
        const char *key = tusk_ctl_key(m, i);
        if (strncmp(key, "set:", 4) != 0)
            continue;
        count++;
        if (!tusk_actor_lib_is_changeable(n->lib, key + 4)) {
            const char *list = tusk_actor_lib_changeable(n->lib);
            return tusk_error_set(err, TUSK_EINVAL, "actor %s: parameter '%s' cannot change between runs (%s%s)",
                                  n->label, key + 4,
                                  *list ? "changeable: " : "it declares none changeable: actor.h, process_changeable",
                                  list);
        }
    }
    if (!count)
        return tusk_error_set(err, TUSK_EINVAL, "UPDATE without a set:KEY");
    tusk_params_t *old = NULL, *p = NULL;
    int rc = tusk_params_load(&old, n->param_dir, err);
    if (rc == TUSK_OK)
        rc = tusk_params_load(&p, n->param_dir, err);
    for (size_t i = 0; rc == TUSK_OK && i < tusk_ctl_count(m); i++)
        if (strncmp(tusk_ctl_key(m, i), "set:", 4) == 0)
            rc = tusk_params_set(p, tusk_ctl_key(m, i) + 4, tusk_ctl_value(m, i), err);
    if (rc == TUSK_OK)
        rc = tusk_params_save(p, n->param_dir, err);
    if (rc == TUSK_OK) {
        hook_enter(n, "process_update");
        rc = tusk_actor_update(n->actor, n->param_dir, err);
        hook_leave(n);
        tusk_error_t ignored;
        if (rc != TUSK_OK && tusk_params_save(old, n->param_dir, &ignored) != TUSK_OK)
            fprintf(stderr, "tusk-actor %s: could not put back %s/parameters.conf: %s\n", n->label, n->param_dir,
                    ignored.message);
    }
    tusk_params_destroy(&old);
    tusk_params_destroy(&p);
    return rc;
}

/* shm=1 in CONFIGURE (tusk-run --transport shm; every instance on this
 * host): the outputs are slots of a ring in shared memory, enough for
 * every link's queue (its receiver's hwm) and 4 more, within
 * RING_MAX_BYTES (and at least 4). More than TUSK_SHM_MAX_LINKS links: no ring (ipc). */
#define RING_MAX_BYTES ((uint64_t)2 << 30)
static int shm_ring(node_t *n, const tusk_ctl_t *m, tusk_error_t *err)
{
    const char *shm = tusk_ctl_get(m, "shm");
    unsigned links = 0;
    for (unsigned s = 0; s < n->n_sinks; s++)
        links += n->sinks[s].n;
    if (!shm || strcmp(shm, "1") != 0 || n->layout.transport != TUSK_TRANSPORT_IPC || links == 0)
        return TUSK_OK;
    if (links > TUSK_SHM_MAX_LINKS) {
        fprintf(stderr, "tusk-actor %s: %u output links, shared memory serves at most %u: ipc\n", n->label, links,
                TUSK_SHM_MAX_LINKS);
        return TUSK_OK;
    }
    uint32_t size = n->spec->buffer_size ? n->spec->buffer_size : 1;
    uint64_t slots = 4, most = RING_MAX_BYTES / size;
    for (unsigned s = 0; s < n->n_sinks; s++)
        slots += (uint64_t)tusk_topology_actor(n->topo, n->sinks[s].actor)->hwm * n->sinks[s].n;
    if (slots > most)
        slots = most < 4 ? 4 : most;
    int rc = tusk_shm_ring_new(&n->ring, size, (uint32_t)slots, links, err);
    if (rc != TUSK_OK) {
        tusk_error_prefix(err, "actor %s", n->label);
        return rc;
    }
    unsigned bit = 0;
    for (unsigned s = 0; s < n->n_sinks; s++)
        for (unsigned k = 0; k < n->sinks[s].n; k++) {
            n->sinks[s].links[k].shm = true;
            n->sinks[s].links[k].bit = bit++;
            n->sinks[s].links[k].hwm = tusk_topology_actor(n->topo, n->sinks[s].actor)->hwm;
        }
    fprintf(stderr, "tusk-actor %s: outputs in shared memory: %u slots of %u bytes for %u links\n", n->label,
            (unsigned)slots, (unsigned)tusk_shm_ring_slot_size(n->ring), links);
    return TUSK_OK;
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
    tusk_hb_set_period(n->hb, n->heartbeat_ms);
    int rc = tusk_topology_parse(&n->topo, xml, xml_size, name ? name : "topology", err);
    /* tusk-run --narval-script: the NARVAL scripts naming the libraries
     * of generic_* actors (narval_script:0, :1, ...; read here, so the
     * same path on every host), as tusk-emulate takes them. */
    for (unsigned i = 0; rc == TUSK_OK; i++) {
        char key[32];
        snprintf(key, sizeof key, "narval_script:%u", i);
        const char *script = tusk_ctl_get(m, key);
        if (!script)
            break;
        rc = tusk_topology_narval_script(n->topo, script, err);
    }
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
    n->layout = (tusk_layout_t){.transport = strcmp(transport, "tcp") == 0 ? TUSK_TRANSPORT_TCP : TUSK_TRANSPORT_IPC,
                                .base_port = (unsigned)base_port};
    /* The instance's configuration folder, on this host: in the run
     * folder (here, or on a shared file system), which must be a private
     * folder of ours; on a host without it, in our private folder there. */
    rc = local_run_dir(n, run_dir, err);
    if (rc != TUSK_OK)
        return rc;
    n->layout.run_dir = n->run_dir;
    /* Its own folder (<config_dir>, as NARVAL gives it), or one made in
     * the run folder: the emulator's rule (tusk_actor_config_folder). */
    char made_dir[4096];
    const char *dir = NULL;
    bool made = false;
    snprintf(made_dir, sizeof made_dir, "%s/%s.%u", n->run_dir, n->spec->name, n->opt.instance);
    rc = tusk_actor_config_folder(n->spec, n->opt.instance, made_dir, &dir, &made, err);
    if (rc == TUSK_OK && made)
        rc = keep_param_dir(n, m, made_dir, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_lib_open(&n->lib, n->spec->library_path, n->spec->actor_class, err);
    if (rc == TUSK_OK) {
        hook_enter(n, "process_config/process_register");
        rc = tusk_actor_new(&n->actor, n->lib, n->spec->name, n->opt.instance, dir, err);
        hook_leave(n);
    }
    if (rc != TUSK_OK)
        return rc;
    const tusk_driver_host_t host = {.ctx = n,
                                     .take = host_take,
                                     .give_back = host_give_back,
                                     .emit = host_emit,
                                     .enter = host_enter,
                                     .leave = host_leave};
    rc = tusk_driver_new(&n->drv, &host, n->spec->buffer_size, err);
    if (rc != TUSK_OK)
        return rc;
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
        /* Where it binds: a restart takes its predecessor's place
         * (rebind:J), so the senders' connections find it again. */
        char ep[512], key[32], what[64];
        snprintf(key, sizeof key, "rebind:%u", j);
        const char *again = tusk_ctl_get(m, key);
        if (again)
            snprintf(ep, sizeof ep, "%s", again);
        else
            layout_bind_endpoint(n->topo, &n->layout, n->index, n->opt.instance, j, ep, sizeof ep);
        snprintf(what, sizeof what, "input %u", j);
        in->sock = new_socket(n, ZMQ_PULL, n->spec->hwm);
        if (!in->sock)
            return tusk_error_set(err, TUSK_EIO, "actor %s: cannot make input %u: %s", n->label, j,
                                  zmq_strerror(errno));
        if ((rc = tusk_sec_bind(n->sec, in->sock, ep, what, in->bound, sizeof in->bound, err)) != TUSK_OK)
            return rc;
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
            /* Where it bound, as the controller says (to:A:K). */
            char key[48];
            snprintf(key, sizeof key, "to:%u:%u", sk->actor, k);
            const char *ep = tusk_ctl_get(m, key);
            if (!ep)
                return tusk_error_set(err, TUSK_EINVAL, "CONFIGURE: no %s (where %s[%u] listens, input %u)", key,
                                      d->name, k, input);
            sk->links[k].sock = new_socket(n, ZMQ_PUSH, d->hwm);
            if (!sk->links[k].sock)
                return tusk_error_set(err, TUSK_EIO, "actor %s: cannot make a socket: %s", n->label,
                                      zmq_strerror(errno));
            if ((rc = tusk_sec_connect(n->sec, sk->links[k].sock, ep, d->hostname, err)) != TUSK_OK) {
                tusk_error_prefix(err, "actor %s: to %s[%u]", n->label, d->name, k);
                return rc;
            }
        }
    }
    return shm_ring(n, m, err);
}

static void reset_run_counters(node_t *n)
{
    tusk_driver_reset_stats(n->drv);
    n->n_done = 0;
    n->end_sent = false;
    for (unsigned j = 0; j < n->n_inputs; j++)
        for (unsigned k = 0; k < n->inputs[j].n; k++) {
            in_peer_t *p = &n->inputs[j].peers[k];
            peer_inc_t *incs = p->incs;
            size_t cap = p->cap_incs;
            bool lost = p->lost; /* lost stays lost: it is gone for good */
            *p = (in_peer_t){.incs = incs, .cap_incs = cap, .lost = lost};
        }
    for (unsigned s = 0; s < n->n_sinks; s++)
        for (unsigned k = 0; k < n->sinks[s].n; k++)
            n->sinks[s].links[k].sent = 0;
    /* Every slot free: the last run's receivers are done with theirs, and
     * one of its buffers still queued somewhere is dropped unread (its run
     * is not this one: receive_one). */
    if (n->ring)
        tusk_shm_ring_reset(n->ring);
    n->ring_starved = false;
    for (size_t i = 0; i < n->n_maps; i++)
        tusk_shm_map_new_run(n->maps[i]);
}

/* PEER_LOST actor=a instance=k [incarnation=i sent=N]: stop sending to
 * it, and stop waiting for it: at once, or, with `sent` (its own final
 * count of the buffers it sent us), once they have all come: a failed
 * instance's last buffers may still be on their way when the word of its
 * failure, which takes another path, arrives. */
static void peer_lost(node_t *n, unsigned a, unsigned k, bool counted, uint16_t inc, uint64_t sent)
{
    for (unsigned j = 0; j < n->n_inputs; j++)
        if (n->inputs[j].actor == a && k < n->inputs[j].n) {
            in_peer_t *p = &n->inputs[j].peers[k];
            const peer_inc_t *pi = counted ? peer_inc(p, inc) : NULL;
            if (pi && pi->received < sent) {
                p->lost_pending = true;
                p->lost_incarnation = inc;
                p->lost_after = sent;
            } else {
                p->lost_pending = false;
                p->lost = true;
            }
        }
    for (unsigned s = 0; s < n->n_sinks; s++)
        if (n->sinks[s].actor == a && k < n->sinks[s].n) {
            n->sinks[s].links[k].lost = true;
            if (n->sinks[s].links[k].shm) /* it holds no slot of ours any more */
                tusk_shm_ring_drop_link(n->ring, n->sinks[s].links[k].bit);
        }
    if (n->state == ST_RUNNING && n->spec->actor_class != TUSK_PRODUCER && all_inputs_ended(n))
        finish_run(n);
}

/* PEER_BACK actor=a instance=k: a peer lost in an earlier run was
 * respawned between runs (the controller's respawn_lost): send to it and
 * wait for it again. */
static void peer_back(node_t *n, unsigned a, unsigned k)
{
    for (unsigned j = 0; j < n->n_inputs; j++)
        if (n->inputs[j].actor == a && k < n->inputs[j].n) {
            n->inputs[j].peers[k].lost = false;
            n->inputs[j].peers[k].lost_pending = false;
        }
    for (unsigned s = 0; s < n->n_sinks; s++)
        if (n->sinks[s].actor == a && k < n->sinks[s].n)
            n->sinks[s].links[k].lost = false;
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

/* A state hook, announced to the liveness thread. */
static int call_hook(node_t *n, const char *name, int (*hook)(tusk_actor_t *, tusk_error_t *), tusk_error_t *err)
{
    hook_enter(n, name);
    int rc = hook(n->actor, err);
    hook_leave(n);
    return rc;
}

static int destroy_actor(node_t *n, tusk_error_t *err)
{
    hook_enter(n, "process_unload");
    int rc = tusk_actor_destroy(&n->actor, err);
    hook_leave(n);
    return rc;
}

/* TAP actor= instance= on=1|0: attach a sampling tap to our link to that
 * instance, or detach it (tap.h). Its address goes with the statistics
 * (tap:A:K), in the reply too. */
static int tap_command(node_t *n, const tusk_ctl_t *m, tusk_error_t *err)
{
    uint64_t a, k, on, every;
    if (tusk_ctl_get_u64(m, "actor", UINT64_MAX, &a) != TUSK_OK ||
        tusk_ctl_get_u64(m, "instance", UINT64_MAX, &k) != TUSK_OK || tusk_ctl_get_u64(m, "on", 1, &on) != TUSK_OK ||
        tusk_ctl_get_u64(m, "every", 1, &every) != TUSK_OK || every == 0 || every > UINT32_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "TAP: actor, instance, every");
    out_link_t *l = NULL;
    for (unsigned s = 0; s < n->n_sinks; s++)
        if (n->sinks[s].actor == a && k < n->sinks[s].n)
            l = &n->sinks[s].links[k];
    if (!l)
        return tusk_error_set(err, TUSK_EINVAL, "TAP: %s sends nothing to actor %llu instance %llu", n->label,
                              (unsigned long long)a, (unsigned long long)k);
    if (!on) {
        l->tap_sent += tusk_tap_sent(l->tap);
        l->tap_dropped += tusk_tap_dropped(l->tap);
        tusk_tap_close(&l->tap);
        return TUSK_OK;
    }
    if (l->tap)
        return TUSK_OK; /* attached already: its address is in the statistics */
    char ep[600], name[64];
    if (n->layout.transport == TUSK_TRANSPORT_IPC)
        snprintf(ep, sizeof ep, "ipc://%s/tap%u.%u.%u.%u", n->run_dir, n->index, n->opt.instance, (unsigned)a,
                 (unsigned)k);
    else
        snprintf(ep, sizeof ep, "tcp://%s:*", n->spec->interface ? n->spec->interface : "127.0.0.1");
    snprintf(name, sizeof name, "tap %u.%u", (unsigned)a, (unsigned)k);
    return tusk_tap_open(&l->tap, n->zctx, n->sec, ep, name, (unsigned)every, err);
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
    } else if (strcmp(verb, "PEER_BACK") == 0) {
        uint64_t a, k;
        if (tusk_ctl_get_u64(m, "actor", UINT64_MAX, &a) == TUSK_OK &&
            tusk_ctl_get_u64(m, "instance", UINT64_MAX, &k) == TUSK_OK && a < UINT32_MAX && k < UINT32_MAX)
            peer_back(n, (unsigned)a, (unsigned)k);
        return TUSK_OK;
    } else if (strcmp(verb, "PEER_LOST") == 0 || strcmp(verb, "RESEND_EOR") == 0) {
        uint64_t a, k, inc, sent;
        if (tusk_ctl_get_u64(m, "actor", UINT64_MAX, &a) == TUSK_OK &&
            tusk_ctl_get_u64(m, "instance", UINT64_MAX, &k) == TUSK_OK && a != UINT64_MAX && k != UINT64_MAX &&
            tusk_ctl_get_u64(m, "incarnation", 0, &inc) == TUSK_OK &&
            tusk_ctl_get_u64(m, "sent", UINT64_MAX, &sent) == TUSK_OK) {
            if (verb[0] == 'P')
                peer_lost(n, (unsigned)a, (unsigned)k, sent != UINT64_MAX, (uint16_t)inc, sent);
            else
                resend_end(n, (unsigned)a, (unsigned)k);
        }
        return TUSK_OK;
    } else if (strcmp(verb, "TAP") == 0) {
        /* A tap that cannot open is no failure of the instance: an ok
         * reply says it (tap_error). */
        tusk_ctl_t *r = tusk_ctl_new("REPLY");
        if (!r)
            return TUSK_OK;
        tusk_ctl_set(r, "to", verb);
        tusk_ctl_set(r, "status", "ok");
        if (tap_command(n, m, &err) != TUSK_OK)
            tusk_ctl_set(r, "tap_error", err.message);
        add_stats(n, r);
        if (zu_send_ctl(n->control, NULL, r, NULL, 0, &err) != TUSK_OK)
            fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
        tusk_ctl_destroy(&r);
        return TUSK_OK;
    } else if (strcmp(verb, "CONFIGURE") == 0) {
        if (n->state != ST_IDLE)
            rc = tusk_error_set(&err, TUSK_EINVAL, "CONFIGURE in state %s", state_names[n->state]);
        else if ((rc = configure(n, m, payload, payload_size, &err)) == TUSK_OK)
            n->state = ST_CONFIGURED;
    } else if (strcmp(verb, "INITIALISE") == 0) {
        if (n->state != ST_CONFIGURED)
            rc = tusk_error_set(&err, TUSK_EINVAL, "INITIALISE in state %s", state_names[n->state]);
        else if ((rc = call_hook(n, "process_initialise", tusk_actor_initialise, &err)) == TUSK_OK)
            n->state = ST_READY;
    } else if (strcmp(verb, "START") == 0) {
        uint64_t run = 0;
        tusk_ctl_get_u64(m, "run", 1, &run);
        if (n->state != ST_READY)
            rc = tusk_error_set(&err, TUSK_EINVAL, "START in state %s", state_names[n->state]);
        else {
            reset_run_counters(n);
            n->run = (uint32_t)run;
            if ((rc = call_hook(n, "process_start", tusk_actor_start, &err)) == TUSK_OK)
                n->state = ST_RUNNING;
        }
    } else if (strcmp(verb, "PAUSE") == 0) {
        if (n->state == ST_RUNNING && (rc = call_hook(n, "process_pause", tusk_actor_pause, &err)) == TUSK_OK)
            n->state = ST_PAUSED;
    } else if (strcmp(verb, "RESUME") == 0) {
        if (n->state == ST_PAUSED && (rc = call_hook(n, "process_resume", tusk_actor_resume, &err)) == TUSK_OK)
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
            rc = call_hook(n, "process_stop", tusk_actor_stop, &err);
            n->state = ST_READY;
        }
    } else if (strcmp(verb, "UPDATE") == 0) {
        /* Between runs only: never while data moves. */
        if (!state_is(n, ST_READY, ST_CONFIGURED))
            rc = tusk_error_set(&err, TUSK_EINVAL, "UPDATE in state %s: parameters change between runs",
                                state_names[n->state]);
        else
            rc = update_params(n, m, &err);
    } else if (strcmp(verb, "RESET") == 0) {
        if (n->state == ST_READY && (rc = call_hook(n, "process_reset", tusk_actor_reset, &err)) == TUSK_OK)
            n->state = ST_CONFIGURED;
    } else if (strcmp(verb, "EXIT") == 0) {
        if (n->actor)
            rc = destroy_actor(n, &err);
        n->state = ST_EXIT;
    } else {
        rc = tusk_error_set(&err, TUSK_EINVAL, "unknown command %s", verb);
    }
    if (answer)
        reply(n, verb, rc, &err);
    return rc;
}

/* ---- the loop --------------------------------------------------------------------- */

/* Close a data socket; an orphan does not wait for its queue to leave. */
static void close_data(tusk_sec_t *sec, void *sock, bool orphaned)
{
    if (!sock)
        return;
    if (orphaned) {
        int zero = 0;
        zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero);
    }
    tusk_sec_close(sec, sock);
}

static void node_free(node_t *n)
{
    bool orphaned = tusk_hb_orphaned(n->hb);
    for (unsigned j = 0; j < n->n_inputs; j++) {
        close_data(n->sec, n->inputs[j].sock, orphaned);
        for (unsigned k = 0; n->inputs[j].peers && k < n->inputs[j].n; k++)
            free(n->inputs[j].peers[k].incs);
        free(n->inputs[j].peers);
    }
    for (unsigned s = 0; s < n->n_sinks; s++) {
        for (unsigned k = 0; n->sinks[s].links && k < n->sinks[s].n; k++) {
            close_data(n->sec, n->sinks[s].links[k].sock, orphaned);
            tusk_tap_close(&n->sinks[s].links[k].tap);
        }
        free(n->sinks[s].links);
    }
    if (n->control)
        zmq_close(n->control);
    if (n->actor) {
        tusk_error_t err;
        if (destroy_actor(n, &err) != TUSK_OK)
            fprintf(stderr, "tusk-actor %s: %s\n", n->label, err.message);
    }
    tusk_hb_stop(&n->hb);
    /* The sockets it guards are closed: its handler may go. */
    tusk_sec_destroy(&n->sec);
    /* Every message is released once the context is gone. */
    if (n->zctx)
        zmq_ctx_term(n->zctx);
    bufpool_fini(&n->pool);
    tusk_shm_ring_destroy(&n->ring);
    for (size_t i = 0; i < n->n_maps; i++)
        tusk_shm_map_close(&n->maps[i]);
    free(n->maps);
    tusk_actor_lib_close(&n->lib);
    free(n->inputs);
    free(n->items);
    free(n->sinks);
    free(n->done);
    tusk_driver_destroy(&n->drv);
    free(n->run_dir);
    free(n->param_dir);
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
    static const tusk_secrets_t none = {0};
    const tusk_secrets_t *sx = opt->secrets ? opt->secrets : &none;
    if (!n->zctx || tusk_sec_new(&n->sec, n->zctx, sx, n->label, err) != TUSK_OK) {
        if (!n->zctx)
            tusk_error_set(err, TUSK_EIO, "tusk-actor %s: no ZeroMQ context: %s", n->label, zmq_strerror(errno));
        node_free(n);
        return TUSK_EIO;
    }
    n->control = zmq_socket(n->zctx, ZMQ_DEALER);
    /* Its routing id: the slot and incarnation, and the token tusk-run
     * gave it, which nobody else knows: no other process can take its
     * place (a restart's predictable name claimed first). */
    char id[256];
    snprintf(id, sizeof id, "%s.%u.%u%s%s", opt->actor, opt->instance, opt->incarnation, sx->token[0] ? "~" : "",
             sx->token);
    int linger = 1000;
    if (!n->control || zmq_setsockopt(n->control, ZMQ_ROUTING_ID, id, strlen(id)) != 0 ||
        zmq_setsockopt(n->control, ZMQ_LINGER, &linger, sizeof linger) != 0) {
        tusk_error_set(err, TUSK_EIO, "tusk-actor %s: cannot connect to the controller at %s: %s", n->label,
                       opt->control, zmq_strerror(errno));
        node_free(n);
        return TUSK_EIO;
    }
    if (tusk_sec_connect(n->sec, n->control, opt->control, NULL, err) != TUSK_OK) {
        tusk_error_prefix(err, "tusk-actor %s: the controller", n->label);
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
    /* Liveness on a connection of its own, id "<id>/hb". */
    char hb_id[272];
    snprintf(hb_id, sizeof hb_id, "%s/hb", id);
    if (tusk_hb_start(&n->hb, n->zctx, n->sec, opt->control, hb_id, n->heartbeat_ms, opt->orphan_ms, n->label,
                      err) != TUSK_OK) {
        node_free(n);
        return TUSK_EIO;
    }

    int status = 0;
    n->next_heartbeat = tusk_clock_ms() + n->heartbeat_ms;
    while (n->state != ST_EXIT) {
        if (n->state != ST_IDLE)
            heartbeat_if_due(n);
        uint64_t now = tusk_clock_ms();
        if (tusk_hb_orphaned(n->hb)) {
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
