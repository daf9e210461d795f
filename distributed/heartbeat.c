/* heartbeat.c - tusk-actor's liveness thread (see heartbeat.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "heartbeat.h"
#include "security.h"
#include "runtime/wire.h"
#include "zutil.h"
#include "base/clock.h"

struct tusk_hb {
    pthread_t thread;
    bool started;
    void *sock;        /* DEALER to the controller: the thread's only */
    void *pipe_main;   /* PAIR, the main thread's end: "stop" */
    void *pipe_thread; /* PAIR, the thread's end */
    _Atomic(const char *) hook;
    atomic_uint_fast64_t since_ms;
    atomic_uint period_ms;
    atomic_bool orphaned;
    unsigned orphan_ms;
    char label[160];
};

/* ALIVE [hook=H hook_ms=N], without waiting: with the controller gone the
 * queue fills, and this thread must go on counting the silence. */
static void send_alive(tusk_hb_t *hb, uint64_t now)
{
    tusk_ctl_t *m = tusk_ctl_new("ALIVE");
    if (!m)
        return;
    const char *hook = atomic_load(&hb->hook);
    if (hook) {
        uint64_t since = atomic_load(&hb->since_ms);
        tusk_ctl_set(m, "hook", hook);
        tusk_ctl_set_u64(m, "hook_ms", now > since ? now - since : 0);
    }
    size_t len;
    char *text = tusk_ctl_format(m, &len);
    if (text)
        zmq_send(hb->sock, text, len, ZMQ_DONTWAIT);
    free(text);
    tusk_ctl_destroy(&m);
}

static void *run(void *arg)
{
    tusk_hb_t *hb = arg;
    uint64_t now = tusk_clock_ms(), last_heard = now, next_send = now, orphaned_at = 0;
    while (true) {
        now = tusk_clock_ms();
        unsigned period = atomic_load(&hb->period_ms);
        if (now >= next_send) {
            send_alive(hb, now);
            next_send = now + period;
        }
        if (hb->orphan_ms && now - last_heard > hb->orphan_ms) {
            const char *hook = atomic_load(&hb->hook);
            if (!orphaned_at) {
                orphaned_at = now;
                atomic_store(&hb->orphaned, true);
                fprintf(stderr, "tusk-actor %s: no word from the controller for %u ms: ending\n", hb->label,
                        hb->orphan_ms);
            }
            /* The main loop ends by itself between hooks; inside one (or
             * stuck elsewhere) nothing else will end it. */
            if (hook || now - orphaned_at > 2u * period + 1000u) {
                fprintf(stderr, "tusk-actor %s: ending the process now%s%s\n", hb->label,
                        hook ? ", inside " : "", hook ? hook : "");
                fflush(stderr);
                _exit(1);
            }
        }
        long timeout = next_send > now ? (long)(next_send - now) : 0;
        zmq_pollitem_t items[2] = {{.socket = hb->sock, .events = ZMQ_POLLIN},
                                   {.socket = hb->pipe_thread, .events = ZMQ_POLLIN}};
        if (zmq_poll(items, 2, timeout) < 0) {
            if (errno == ETERM)
                break;
            continue; /* EINTR */
        }
        if (items[1].revents & ZMQ_POLLIN)
            break; /* told to stop */
        if (items[0].revents & ZMQ_POLLIN) {
            char buf[256];
            while (zmq_recv(hb->sock, buf, sizeof buf, ZMQ_DONTWAIT) >= 0)
                last_heard = tusk_clock_ms(); /* PINGs: only that the controller is there matters */
        }
    }
    return NULL;
}

static void destroy(tusk_hb_t *hb)
{
    if (hb->sock)
        zmq_close(hb->sock);
    if (hb->pipe_main)
        zmq_close(hb->pipe_main);
    if (hb->pipe_thread)
        zmq_close(hb->pipe_thread);
    free(hb);
}

int tusk_hb_start(tusk_hb_t **out, void *zctx, tusk_sec_t *sec, const char *endpoint, const char *identity,
                  unsigned period_ms, unsigned orphan_ms, const char *label, tusk_error_t *err)
{
    *out = NULL;
    tusk_hb_t *hb = calloc(1, sizeof *hb);
    if (!hb)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    atomic_init(&hb->hook, NULL);
    atomic_init(&hb->since_ms, 0);
    atomic_init(&hb->period_ms, period_ms ? period_ms : 500);
    atomic_init(&hb->orphaned, false);
    hb->orphan_ms = orphan_ms;
    snprintf(hb->label, sizeof hb->label, "%s", label);
    char pipe[64];
    snprintf(pipe, sizeof pipe, "inproc://tusk-hb-%p", (void *)hb);
    int linger = 0;
    hb->sock = zmq_socket(zctx, ZMQ_DEALER);
    hb->pipe_main = zmq_socket(zctx, ZMQ_PAIR);
    hb->pipe_thread = zmq_socket(zctx, ZMQ_PAIR);
    if (!hb->sock || !hb->pipe_main || !hb->pipe_thread ||
        zmq_setsockopt(hb->sock, ZMQ_ROUTING_ID, identity, strlen(identity)) != 0 ||
        zmq_setsockopt(hb->sock, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(hb->pipe_main, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(hb->pipe_thread, ZMQ_LINGER, &linger, sizeof linger) != 0 || zmq_bind(hb->pipe_main, pipe) != 0 ||
        zmq_connect(hb->pipe_thread, pipe) != 0) {
        tusk_error_set(err, TUSK_EIO, "tusk-actor %s: heartbeat connection to %s: %s", label, endpoint,
                       zmq_strerror(errno));
        destroy(hb);
        return TUSK_EIO;
    }
    if (tusk_sec_connect(sec, hb->sock, endpoint, NULL, err) != TUSK_OK) {
        tusk_error_prefix(err, "tusk-actor %s: heartbeat connection", label);
        destroy(hb);
        return TUSK_EIO;
    }
    /* pthread_create is a full barrier: the thread may use the sockets made here. */
    if (pthread_create(&hb->thread, NULL, run, hb) != 0) {
        tusk_error_set(err, TUSK_EIO, "tusk-actor %s: cannot start the heartbeat thread", label);
        destroy(hb);
        return TUSK_EIO;
    }
    hb->started = true;
    *out = hb;
    return TUSK_OK;
}

void tusk_hb_set_period(tusk_hb_t *hb, unsigned period_ms)
{
    if (hb && period_ms)
        atomic_store(&hb->period_ms, period_ms);
}

void tusk_hb_enter(tusk_hb_t *hb, const char *hook)
{
    if (!hb)
        return;
    atomic_store(&hb->since_ms, tusk_clock_ms()); /* first: the thread reads the hook, then its start */
    atomic_store(&hb->hook, hook);
}

void tusk_hb_leave(tusk_hb_t *hb)
{
    if (hb)
        atomic_store(&hb->hook, NULL);
}

bool tusk_hb_orphaned(const tusk_hb_t *hb)
{
    return hb && atomic_load(&((tusk_hb_t *)hb)->orphaned);
}

void tusk_hb_stop(tusk_hb_t **hbp)
{
    if (!hbp || !*hbp)
        return;
    tusk_hb_t *hb = *hbp;
    if (hb->started) {
        zmq_send(hb->pipe_main, "stop", 4, 0);
        pthread_join(hb->thread, NULL); /* a barrier too: the sockets are ours again */
    }
    destroy(hb);
    *hbp = NULL;
}
