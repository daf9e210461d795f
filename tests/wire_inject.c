/* wire_inject.c - send something to a socket of a running tusk run, as a
 * stray sender, an insider or an outsider would (tests/distributed.sh,
 * tests/distributed_security.sh). Test use only.
 *
 *   wire_inject [KEYS] ENDPOINT RUN SOURCE_ACTOR SOURCE_INSTANCE INCARNATION SEQ [FILE]
 *       one data message with a header of the caller's choosing (the
 *       buffer is FILE's bytes, none without it): a duplicate, a forgery;
 *   wire_inject [KEYS] --control ENDPOINT ID TEXT
 *       a DEALER with routing id ID sends the control message TEXT (e.g.
 *       "CLI cmd=stop") and prints the reply, if one comes within 10 s;
 *   wire_inject [KEYS] --data ENDPOINT TEXT
 *       one single-frame message TEXT on a PUSH (garbage for a data input);
 *   wire_inject --raw ENDPOINT TEXT
 *       TEXT's bytes on a plain socket (tcp://HOST:PORT or ipc://PATH), no
 *       ZeroMQ at all; "\xHH" in TEXT is the byte HH.
 *
 * KEYS: --keys FILE     the run's secrets (RUN_FOLDER/keys: the owner's);
 *       --stranger KEY  a key pair of its own, and KEY as the server's
 *                       public key (an outsider who knows it);
 *       none            no CURVE (on ipc: the caller's user id).
 *
 * The ZeroMQ modes watch their own connection (it is tried once, never
 * again): exit 0 when the handshake went through and the message left,
 * 3 when the peer refused the connection ("refused: ..." on stderr), 4
 * when nothing happened within 20 s, 1 on other errors, 2 on bad usage.
 * --raw exits 0 once the bytes went out, 3 when the connection itself was
 * refused (e.g. no permission to reach an ipc socket). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netdb.h>
#include <unistd.h>
#include <zmq.h>

#include "base/clock.h"
#include "base/textfile.h"
#include "runtime/wire.h"

#define PROG "wire_inject"

static int number(const char *s, uint64_t max, uint64_t *v)
{
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *end || errno || x > max) {
        fprintf(stderr, PROG ": '%s' is not a number up to %llu\n", s, (unsigned long long)max);
        return -1;
    }
    *v = x;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: " PROG " [--keys FILE | --stranger KEY] ENDPOINT RUN SOURCE_ACTOR SOURCE_INSTANCE "
                    "INCARNATION SEQ [FILE]\n"
                    "       " PROG " [--keys FILE | --stranger KEY] --control ENDPOINT ID TEXT\n"
                    "       " PROG " [--keys FILE | --stranger KEY] --data ENDPOINT TEXT\n"
                    "       " PROG " --raw ENDPOINT TEXT\n");
}

/* TEXT with "\xHH" turned into bytes; returns the length. */
static size_t unescape(const char *text, char *out)
{
    size_t n = 0;
    for (const char *p = text; *p;) {
        unsigned v;
        if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &v) == 1 && p[2] && p[3]) {
            out[n++] = (char)v;
            p += 4;
        } else {
            out[n++] = *p++;
        }
    }
    return n;
}

static int raw(const char *endpoint, const char *text)
{
    char *bytes = malloc(strlen(text) + 1);
    size_t n = unescape(text, bytes);
    int fd = -1, rc;
    if (strncmp(endpoint, "ipc://", 6) == 0) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", endpoint + 6);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&a, sizeof a);
    } else if (strncmp(endpoint, "tcp://", 6) == 0 && strrchr(endpoint, ':') > endpoint + 6) {
        char host[256];
        const char *colon = strrchr(endpoint, ':');
        snprintf(host, sizeof host, "%.*s", (int)(colon - endpoint - 6), endpoint + 6);
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
        if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai) {
            fprintf(stderr, PROG ": %s: cannot resolve\n", endpoint);
            free(bytes);
            return 1;
        }
        fd = socket(ai->ai_family, SOCK_STREAM, 0);
        rc = fd < 0 ? -1 : connect(fd, ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(ai);
    } else {
        fprintf(stderr, PROG ": --raw %s: tcp://HOST:PORT or ipc://PATH\n", endpoint);
        free(bytes);
        return 2;
    }
    if (rc != 0) {
        fprintf(stderr, "refused: %s: %s\n", endpoint, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(bytes);
        return 3;
    }
    int status = send(fd, bytes, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : 1;
    if (status)
        fprintf(stderr, PROG ": %s: send: %s\n", endpoint, strerror(errno));
    shutdown(fd, SHUT_WR);
    char sink[256];
    while (read(fd, sink, sizeof sink) > 0) /* until the peer closes: it has seen the bytes */
        ;
    close(fd);
    free(bytes);
    return status;
}

/* Set the CURVE keys of a client socket. */
static int keys(void *s, const char *keys_file, const char *stranger)
{
    char pub[41], sec[41], server[41];
    if (keys_file) {
        char *text = NULL;
        size_t size = 0;
        tusk_error_t err;
        tusk_secrets_t sx;
        if (tusk_file_read(keys_file, TUSK_SECRETS_MAX, &text, &size, &err) != TUSK_OK ||
            tusk_secrets_parse(text, size, &sx, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --keys %s: %s\n", keys_file, err.message);
            free(text);
            return -1;
        }
        free(text);
        if (!sx.curve || !sx.public_key[0]) {
            fprintf(stderr, PROG ": --keys %s: no key pair in it\n", keys_file);
            return -1;
        }
        memcpy(pub, sx.public_key, sizeof pub);
        memcpy(sec, sx.secret_key, sizeof sec);
        memcpy(server, sx.server_key, sizeof server);
    } else if (stranger) {
        if (zmq_curve_keypair(pub, sec) != 0 || strlen(stranger) != 40) {
            fprintf(stderr, PROG ": --stranger: a key of 40 characters, and a libzmq with CURVE\n");
            return -1;
        }
        memcpy(server, stranger, sizeof server);
    } else {
        return 0;
    }
    if (zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server, 40) != 0 || zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40) != 0 ||
        zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40) != 0) {
        fprintf(stderr, PROG ": CURVE keys: %s\n", zmq_strerror(errno));
        return -1;
    }
    return 0;
}

/* Connect once, watching the connection: 0 when the handshake went
 * through, 3 refused, 4 nothing within 20 s. */
static int connect_watched(void *ctx, void *s, const char *endpoint)
{
    int never = -1;
    zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &never, sizeof never);
    if (zmq_socket_monitor(s, "inproc://wire-inject-monitor", ZMQ_EVENT_ALL) != 0)
        return 1;
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    int zero = 0;
    zmq_setsockopt(mon, ZMQ_RCVHWM, &zero, sizeof zero);
    zmq_setsockopt(mon, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_connect(mon, "inproc://wire-inject-monitor") != 0 || zmq_connect(s, endpoint) != 0) {
        fprintf(stderr, PROG ": %s: %s\n", endpoint, zmq_strerror(errno));
        zmq_close(mon);
        return 1;
    }
    uint64_t end = tusk_clock_ms() + 20000;
    int status = 4;
    while (status == 4 && tusk_clock_ms() < end) {
        zmq_pollitem_t item = {.socket = mon, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 100) <= 0)
            continue;
        zmq_msg_t m;
        zmq_msg_init(&m);
        zmq_msg_recv(&m, mon, 0);
        uint16_t ev = 0;
        uint32_t value = 0;
        if (zmq_msg_size(&m) >= 6) {
            memcpy(&ev, zmq_msg_data(&m), 2);
            memcpy(&value, (char *)zmq_msg_data(&m) + 2, 4);
        }
        zmq_msg_close(&m);
        zmq_msg_init(&m);
        zmq_msg_recv(&m, mon, 0); /* the endpoint */
        zmq_msg_close(&m);
        if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            status = 0;
        } else if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
                   ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || ev == ZMQ_EVENT_DISCONNECTED ||
                   ev == ZMQ_EVENT_CLOSED) {
            fprintf(stderr, "refused: %s: the handshake failed (event 0x%x, %u)\n", endpoint, ev, value);
            status = 3;
        }
    }
    zmq_socket_monitor(s, NULL, 0);
    zmq_close(mon);
    if (status == 4)
        fprintf(stderr, PROG ": %s: no connection within 20 s\n", endpoint);
    return status;
}

int main(int argc, char **argv)
{
    const char *keys_file = NULL, *stranger = NULL;
    int i = 1;
    while (i + 1 < argc && (strcmp(argv[i], "--keys") == 0 || strcmp(argv[i], "--stranger") == 0)) {
        if (argv[i][2] == 'k')
            keys_file = argv[i + 1];
        else
            stranger = argv[i + 1];
        i += 2;
    }
    if (i < argc && strcmp(argv[i], "--raw") == 0) {
        if (argc - i != 3 || keys_file || stranger) {
            usage();
            return 2;
        }
        return raw(argv[i + 1], argv[i + 2]);
    }
    enum { DATA_HEADER, CONTROL, DATA_TEXT } mode = DATA_HEADER;
    if (i < argc && strcmp(argv[i], "--control") == 0) {
        mode = CONTROL;
        i++;
        if (argc - i != 3) {
            usage();
            return 2;
        }
    } else if (i < argc && strcmp(argv[i], "--data") == 0) {
        mode = DATA_TEXT;
        i++;
        if (argc - i != 2) {
            usage();
            return 2;
        }
    } else if (argc - i != 6 && argc - i != 7) {
        usage();
        return 2;
    }
    const char *endpoint = argv[i];
    uint8_t hdr[TUSK_WIRE_HEADER_SIZE];
    char *data = NULL;
    size_t size = 0;
    if (mode == DATA_HEADER) {
        uint64_t run, actor, instance, incarnation, seq;
        if (number(argv[i + 1], UINT32_MAX, &run) || number(argv[i + 2], 0xFFFE, &actor) ||
            number(argv[i + 3], 0xFFFE, &instance) || number(argv[i + 4], 0xFFFF, &incarnation) ||
            number(argv[i + 5], UINT64_MAX, &seq))
            return 2;
        if (argc - i == 7) {
            tusk_error_t err;
            if (tusk_file_read(argv[i + 6], 1u << 30, &data, &size, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": %s\n", err.message);
                return 1;
            }
        }
        tusk_wire_header_t h = {.flags = 0,
                                .run = (uint32_t)run,
                                .incarnation = (uint16_t)incarnation,
                                .source_actor = (uint16_t)actor,
                                .source_instance = (uint16_t)instance,
                                .input_actor = TUSK_WIRE_NONE,
                                .input_instance = TUSK_WIRE_NONE,
                                .seq = seq,
                                .payload_size = (uint32_t)size};
        tusk_wire_encode(&h, hdr);
    }
    void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, mode == CONTROL ? ZMQ_DEALER : ZMQ_PUSH);
    int linger = 10000, status = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (mode == CONTROL)
        zmq_setsockopt(s, ZMQ_ROUTING_ID, argv[i + 1], strlen(argv[i + 1]));
    if (keys(s, keys_file, stranger) != 0)
        status = 1;
    if (status == 0)
        status = connect_watched(ctx, s, endpoint);
    if (status == 0) {
        int rc;
        if (mode == DATA_HEADER)
            rc = zmq_send(s, hdr, sizeof hdr, ZMQ_SNDMORE) < 0 ? -1 : zmq_send(s, data ? data : "", size, 0);
        else
            rc = zmq_send(s, argv[i + (mode == CONTROL ? 2 : 1)], strlen(argv[i + (mode == CONTROL ? 2 : 1)]), 0);
        if (rc < 0) {
            fprintf(stderr, PROG ": %s: %s\n", endpoint, zmq_strerror(errno));
            status = 1;
        }
    }
    if (status == 0 && mode == CONTROL) {
        zmq_pollitem_t item = {.socket = s, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 10000) == 1) {
            char reply[4096];
            int n = zmq_recv(s, reply, sizeof reply - 1, 0);
            if (n >= 0) {
                reply[n < (int)sizeof reply ? n : (int)sizeof reply - 1] = '\0';
                printf("reply: %s\n", reply);
            }
        } else {
            printf("no reply\n");
        }
    }
    if (status != 0) {
        int zero = 0;
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    }
    zmq_close(s);
    zmq_ctx_term(ctx); /* waits (linger) until the message has left */
    free(data);
    return status;
}
