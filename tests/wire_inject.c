/* wire_inject.c - send one data message, with a header of the caller's
 * choosing, to a tusk-actor input: a stray sender, or a duplicate of a
 * buffer already sent, for the distributed tests (tests/distributed.sh).
 *
 *   wire_inject ENDPOINT RUN SOURCE_ACTOR SOURCE_INSTANCE INCARNATION SEQ [FILE]
 *
 * The buffer is FILE's bytes (none without it). Waits until the message
 * has left (at most 10 s). Test use only. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "base/textfile.h"
#include "runtime/wire.h"

static int number(const char *s, uint64_t max, uint64_t *v)
{
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *end || errno || x > max) {
        fprintf(stderr, "wire_inject: '%s' is not a number up to %llu\n", s, (unsigned long long)max);
        return -1;
    }
    *v = x;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: wire_inject ENDPOINT RUN SOURCE_ACTOR SOURCE_INSTANCE INCARNATION SEQ [FILE]\n");
        return 2;
    }
    uint64_t run, actor, instance, incarnation, seq;
    if (number(argv[2], UINT32_MAX, &run) || number(argv[3], 0xFFFE, &actor) || number(argv[4], 0xFFFE, &instance) ||
        number(argv[5], 0xFFFF, &incarnation) || number(argv[6], UINT64_MAX, &seq))
        return 2;
    char *data = NULL;
    size_t size = 0;
    if (argc == 8) {
        tusk_error_t err;
        if (tusk_file_read(argv[7], 1u << 30, &data, &size, &err) != TUSK_OK) {
            fprintf(stderr, "wire_inject: %s\n", err.message);
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
    uint8_t hdr[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_encode(&h, hdr);
    void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_PUSH);
    int linger = 10000, status = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(s, argv[1]) != 0 || zmq_send(s, hdr, sizeof hdr, ZMQ_SNDMORE) < 0 ||
        zmq_send(s, data ? data : "", size, 0) < 0) {
        fprintf(stderr, "wire_inject: %s: %s\n", argv[1], zmq_strerror(errno));
        status = 1;
    }
    zmq_close(s);
    zmq_ctx_term(ctx); /* waits (linger) until the message has left */
    free(data);
    return status;
}
