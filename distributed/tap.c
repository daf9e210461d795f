/* tap.c - the online sampling tap (see tap.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "tap.h"

struct tusk_tap {
    void *sock;
    tusk_sec_t *sec;
    bool listening; /* someone subscribed */
    unsigned every;
    uint64_t seen;  /* buffers of the link since it opened */
    uint64_t sent, dropped;
    char bound[256];
};

int tusk_tap_open(tusk_tap_t **out, void *zctx, tusk_sec_t *sec, const char *endpoint, const char *name,
                  unsigned every, tusk_error_t *err)
{
    *out = NULL;
    tusk_tap_t *t = calloc(1, sizeof *t);
    if (!t)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    t->sec = sec;
    t->every = every ? every : 1;
    t->sock = zmq_socket(zctx, ZMQ_XPUB);
    if (!t->sock) {
        free(t);
        return tusk_error_set(err, TUSK_EIO, "tap: zmq_socket: %s", zmq_strerror(errno));
    }
    int hwm = TUSK_TAP_HWM, one = 1, linger = 0;
    zmq_setsockopt(t->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(t->sock, ZMQ_XPUB_NODROP, &one, sizeof one);
    zmq_setsockopt(t->sock, ZMQ_LINGER, &linger, sizeof linger);
    int rc = tusk_sec_bind(sec, t->sock, endpoint, name, t->bound, sizeof t->bound, err);
    if (rc != TUSK_OK) {
        tusk_sec_close(sec, t->sock);
        free(t);
        return rc;
    }
    *out = t;
    return TUSK_OK;
}

const char *tusk_tap_address(const tusk_tap_t *t)
{
    return t->bound;
}

/* Subscriptions that came: the first subscriber of "" and the last one
 * leaving are what XPUB passes on. */
static void read_subscriptions(tusk_tap_t *t)
{
    unsigned char msg[256];
    int n;
    while ((n = zmq_recv(t->sock, msg, sizeof msg, ZMQ_DONTWAIT)) >= 0)
        if (n >= 1 && (msg[0] == 0 || msg[0] == 1))
            t->listening = msg[0] == 1;
}

void tusk_tap_offer(tusk_tap_t *t, const void *header, size_t header_size, const void *data, size_t size)
{
    if (!t || t->seen++ % t->every != 0)
        return;
    read_subscriptions(t);
    if (!t->listening)
        return;
    /* The first frame decides: taken (the rest goes with it) or EAGAIN,
     * the queue full: dropped, before any copy of the buffer. */
    if (zmq_send(t->sock, header, header_size, ZMQ_DONTWAIT | ZMQ_SNDMORE) < 0) {
        t->dropped++;
        return;
    }
    if (zmq_send(t->sock, data, size, ZMQ_DONTWAIT) < 0) {
        t->dropped++; /* cannot happen once the first frame went; counted all the same */
        return;
    }
    t->sent++;
}

bool tusk_tap_listening(tusk_tap_t *t)
{
    if (!t)
        return false;
    read_subscriptions(t);
    return t->listening;
}

uint64_t tusk_tap_sent(const tusk_tap_t *t)
{
    return t ? t->sent : 0;
}

uint64_t tusk_tap_dropped(const tusk_tap_t *t)
{
    return t ? t->dropped : 0;
}

void tusk_tap_close(tusk_tap_t **tp)
{
    tusk_tap_t *t = *tp;
    if (!t)
        return;
    tusk_sec_close(t->sec, t->sock);
    free(t);
    *tp = NULL;
}
