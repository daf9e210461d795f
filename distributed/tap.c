/* tap.c - the online sampling tap (see tap.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "base/parse.h"
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

/* NAME or NAME[K] from p (up to `stop`, blanks around taken). */
static int one_end(const char *p, const char *stop, char *name, size_t size, unsigned *k, const char *what,
                   tusk_error_t *err)
{
    while (p < stop && isspace((unsigned char)*p))
        p++;
    while (stop > p && isspace((unsigned char)stop[-1]))
        stop--;
    const char *br = memchr(p, '[', (size_t)(stop - p));
    const char *end = br ? br : stop;
    size_t n = (size_t)(end - p);
    if (n == 0)
        return tusk_error_set(err, TUSK_EINVAL, "tap: no %s actor (UP[K]->DOWN[K])", what);
    if (n >= size)
        return tusk_error_set(err, TUSK_EINVAL, "tap: the %s actor's name is too long", what);
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == ']' || p[i] == '>')
            return tusk_error_set(err, TUSK_EINVAL, "tap: '%.*s' is no actor name", (int)n, p);
    memcpy(name, p, n);
    name[n] = '\0';
    *k = 0;
    if (br) {
        if (stop - br < 3 || stop[-1] != ']')
            return tusk_error_set(err, TUSK_EINVAL, "tap: the %s instance: NAME[K]", what);
        char num[16];
        size_t len = (size_t)(stop - br - 2);
        if (len >= sizeof num)
            return tusk_error_set(err, TUSK_EINVAL, "tap: the %s instance number is too long", what);
        memcpy(num, br + 1, len);
        num[len] = '\0';
        uint64_t v;
        if (tusk_parse_u64(num, 0, 65535, &v) != 0)
            return tusk_error_set(err, TUSK_EINVAL, "tap: the %s instance '%s' is no number", what, num);
        *k = (unsigned)v;
    }
    return TUSK_OK;
}

int tusk_tap_link_parse(const char *text, char *up, size_t up_size, unsigned *up_k, char *down, size_t down_size,
                        unsigned *down_k, unsigned *every, tusk_error_t *err)
{
    if (!text)
        return tusk_error_set(err, TUSK_EINVAL, "tap: which link? UP[K]->DOWN[K]");
    const char *arrow = strstr(text, "->");
    if (!arrow || strstr(arrow + 2, "->"))
        return tusk_error_set(err, TUSK_EINVAL, "tap: '%s': one link, UP[K]->DOWN[K]", text);
    const char *end = arrow + 2 + strlen(arrow + 2), *opt = strstr(arrow + 2, "every=");
    if (every)
        *every = 1;
    if (opt) {
        if (!every)
            return tusk_error_set(err, TUSK_EINVAL, "untap: no every= (it closes the tap)");
        uint64_t v;
        if (opt == arrow + 2 || !isspace((unsigned char)opt[-1]) || tusk_parse_u64(opt + 6, 1, UINT32_MAX, &v) != 0)
            return tusk_error_set(err, TUSK_EINVAL, "tap: '%s': every=N, N a whole number from 1, after the link",
                                  opt);
        *every = (unsigned)v;
        end = opt;
    }
    int rc = one_end(text, arrow, up, up_size, up_k, "upstream", err);
    if (rc == TUSK_OK)
        rc = one_end(arrow + 2, end, down, down_size, down_k, "downstream", err);
    return rc;
}
