/* wire.h - what travels between the processes of a distributed run.
 *
 * Data: every buffer is one ZeroMQ message of two frames, a 48-byte header
 * and the buffer itself. Actors never see the header. It is little-endian
 * and decoded field by field:
 *
 *   0  u32 magic "TSKD"       24 u64 seq: 1-based number of this message on
 *   4  u16 version (1)              its link (one sender instance -> one
 *   6  u16 flags                    receiver instance); END_OF_RUN: how many
 *   8  u32 run number               buffers the link carried
 *  12  u16 incarnation (restarts  32 u64 input_seq: with COMPLETES, the seq
 *          of the sender)              of the input buffer this output
 *  14  u16 source actor (index         finishes
 *          in topology order)      40 u32 payload size (= the second frame)
 *  16  u16 source instance         44 u32 reserved (0)
 *  18  u16 input actor   \  with COMPLETES: the link the finished input
 *  20  u16 input instance/  came over (0xFFFF: none)
 *  22  u16 reserved (0)
 *
 * Control: commands, replies, heartbeats and statistics are text messages
 * "VERB key=value key=value ...", values percent-escaped, on a socket of
 * their own, separate from the data.
 */
#ifndef TUSK_WIRE_H
#define TUSK_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TUSK_WIRE_MAGIC 0x444B5354u /* "TSKD" */
#define TUSK_WIRE_VERSION 1u
#define TUSK_WIRE_HEADER_SIZE 48u
#define TUSK_WIRE_NONE 0xFFFFu

enum tusk_wire_flag {
    TUSK_WIRE_END_OF_RUN = 1u << 0, /* the sender sends nothing more this run on this link */
    TUSK_WIRE_COMPLETES = 1u << 1,  /* the last output of input (input actor/instance, input_seq) */
    TUSK_WIRE_EMPTY = 1u << 2       /* no buffer: an input that produced no output (progress only) */
};
#define TUSK_WIRE_KNOWN_FLAGS 0x7u

typedef struct tusk_wire_header {
    uint16_t flags;
    uint32_t run;
    uint16_t incarnation;
    uint16_t source_actor, source_instance;
    uint16_t input_actor, input_instance;
    uint64_t seq;
    uint64_t input_seq;
    uint32_t payload_size;
} tusk_wire_header_t;

void tusk_wire_encode(const tusk_wire_header_t *header, uint8_t out[TUSK_WIRE_HEADER_SIZE]);

/* Decode and check a header frame: its size, magic, version, known flags,
 * and no payload with END_OF_RUN or EMPTY. TUSK_EINVAL with a message. */
int tusk_wire_decode(const uint8_t *in, size_t size, tusk_wire_header_t *header, tusk_error_t *err);

/* ---- control messages --------------------------------------------------- */

typedef struct tusk_ctl tusk_ctl_t;

/* A message with verb `verb` (capital letters and '_') and no fields. */
tusk_ctl_t *tusk_ctl_new(const char *verb);
void tusk_ctl_destroy(tusk_ctl_t **msg);

/* Add a field (keys: letters, digits and _ . : -; values: any text). */
int tusk_ctl_set(tusk_ctl_t *msg, const char *key, const char *value);
int tusk_ctl_set_u64(tusk_ctl_t *msg, const char *key, uint64_t value);
int tusk_ctl_setf(tusk_ctl_t *msg, const char *key, const char *fmt, ...) TUSK_PRINTF(3, 4);

/* The message as text (caller frees), and its length. */
char *tusk_ctl_format(const tusk_ctl_t *msg, size_t *length);

/* Parse `size` bytes of text. TUSK_EINVAL naming what is wrong. */
int tusk_ctl_parse(tusk_ctl_t **msg, const char *text, size_t size, tusk_error_t *err);

const char *tusk_ctl_verb(const tusk_ctl_t *msg);
size_t tusk_ctl_count(const tusk_ctl_t *msg);
const char *tusk_ctl_key(const tusk_ctl_t *msg, size_t i);
const char *tusk_ctl_value(const tusk_ctl_t *msg, size_t i);
/* The value of `key` (the first one), or NULL. */
const char *tusk_ctl_get(const tusk_ctl_t *msg, const char *key);
/* `fallback` when absent; TUSK_EINVAL when not an unsigned integer. */
int tusk_ctl_get_u64(const tusk_ctl_t *msg, const char *key, uint64_t fallback, uint64_t *value);

#ifdef __cplusplus
}
#endif
#endif
