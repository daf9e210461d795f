/* zutil.c - see zutil.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "zutil.h"

void zu_format(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

void zu_printable(char *out, size_t size, const char *src)
{
    size_t j = 0;
    for (; src && *src && j + 1 < size; src++)
        out[j++] = (*src >= 0x20 && *src < 0x7F) ? *src : '?';
    if (size)
        out[j] = '\0';
}

int zu_send_ctl(void *sock, const char *identity, const tusk_ctl_t *msg, const void *payload, size_t payload_size,
                tusk_error_t *err)
{
    size_t len;
    char *text = tusk_ctl_format(msg, &len);
    if (!text)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int rc = 0;
    if (identity)
        rc = zmq_send(sock, identity, strlen(identity), ZMQ_SNDMORE);
    if (rc >= 0)
        rc = zmq_send(sock, text, len, payload ? ZMQ_SNDMORE : 0);
    if (rc >= 0 && payload)
        rc = zmq_send(sock, payload, payload_size, 0);
    free(text);
    if (rc < 0)
        return tusk_error_set(err, TUSK_EIO, "control %s: send failed: %s", tusk_ctl_verb(msg), zmq_strerror(errno));
    return TUSK_OK;
}

void zu_drain_more(void *sock)
{
    int more = 0;
    size_t sz = sizeof more;
    while (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz) == 0 && more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sock, 0) < 0) {
            zmq_msg_close(&m);
            return;
        }
        zmq_msg_close(&m);
    }
}

static bool has_more(void *sock)
{
    int more = 0;
    size_t sz = sizeof more;
    return zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz) == 0 && more;
}

/* The authentication handler's user id of a received frame. */
static void user_of(zmq_msg_t *part, char *user, size_t user_size)
{
    if (!user)
        return;
    const char *u = zmq_msg_gets(part, "User-Id");
    snprintf(user, user_size, "%s", u ? u : "");
}

int zu_recv_ctl(void *sock, bool dontwait, char *identity, size_t identity_size, char *user, size_t user_size,
                tusk_ctl_t **msg, char **payload, size_t *payload_size, tusk_error_t *err)
{
    *msg = NULL;
    if (user && user_size)
        user[0] = '\0';
    if (payload) {
        *payload = NULL;
        *payload_size = 0;
    }
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, sock, dontwait ? ZMQ_DONTWAIT : 0) < 0) {
        int e = errno;
        zmq_msg_close(&part);
        errno = e;
        if (e == EAGAIN) {
            /* Nothing there: the common case in a busy loop, no message. */
            if (err)
                err->code = TUSK_EIO;
            return TUSK_EIO;
        }
        return tusk_error_set(err, TUSK_EIO, "control receive failed: %s", zmq_strerror(e));
    }
    if (identity) {
        size_t n = zmq_msg_size(&part);
        if (n >= identity_size)
            n = identity_size - 1;
        /* Printable only: it goes into log lines. (A peer without an id
         * of its own gets one from the ROUTER, starting with a 0 byte.) */
        const char *raw = zmq_msg_data(&part);
        for (size_t i = 0; i < n; i++)
            identity[i] = (raw[i] >= 0x20 && raw[i] < 0x7F) ? raw[i] : '?';
        identity[n] = '\0';
        bool more = has_more(sock);
        zmq_msg_close(&part);
        zmq_msg_init(&part);
        if (!more || zmq_msg_recv(&part, sock, 0) < 0) {
            zmq_msg_close(&part);
            return tusk_error_set(err, TUSK_EINVAL, "control message from '%s' without content", identity);
        }
    }
    user_of(&part, user, user_size);
    int rc = tusk_ctl_parse(msg, zmq_msg_data(&part), zmq_msg_size(&part), err);
    zmq_msg_close(&part);
    if (has_more(sock)) {
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, sock, 0) >= 0 && payload && rc == TUSK_OK) {
            *payload_size = zmq_msg_size(&part);
            *payload = malloc(*payload_size + 1);
            if (*payload) {
                memcpy(*payload, zmq_msg_data(&part), *payload_size);
                (*payload)[*payload_size] = '\0';
            }
        }
        zmq_msg_close(&part);
        zu_drain_more(sock);
    }
    if (rc != TUSK_OK)
        tusk_ctl_destroy(msg);
    return rc;
}
