/* wire.h - what travels between the processes of a distributed run.
 *
 * Data: every message is one ZeroMQ message of two frames, a 48-byte header
 * and the buffer itself (empty for the markers). Actors never see the
 * header. It is little-endian and decoded field by field:
 *
 *   0  u32 magic "TSKD"       24 u64 seq: buffers of this link (one sender
 *   4  u16 version (2)              instance -> one receiver instance) up
 *   6  u16 flags                    to and including this one (1-based);
 *   8  u32 run number               END_OF_RUN and EMPTY: the buffers the
 *  12  u16 incarnation (restarts    link carried so far (not one more)
 *          of the sender)      32 u64 input_seq: with COMPLETES, the seq
 *  14  u16 source actor (index         of the input buffer this finishes;
 *          in topology order)          with RELEASE, how many inputs
 *  16  u16 source instance     40 u32 payload size (= the second frame)
 *  18  u16 input actor   \  with COMPLETES or RELEASE: the link the
 *  20  u16 input instance/  inputs came over (0xFFFF: none)
 *  22  u16 reserved (0)        44 u32 reserved (0)
 *
 * Buffers are numbered per link; markers (EMPTY, END_OF_RUN) are not
 * buffers and take no number, so a receiver knows exactly which buffer
 * numbers it must see: 1, 2, ... up to the END_OF_RUN's count.
 *
 * Control: commands, replies, heartbeats and statistics are text messages
 * "VERB key=value key=value ...", values percent-escaped, on a socket of
 * their own, separate from the data. Besides the state commands and their
 * REPLYs: HEARTBEAT (statistics), ENDED, FAILED, BAD_DATA (a malformed
 * buffer arrived: from=, message=), PEER_LOST (actor= instance=
 * incarnation= [sent=N: stop waiting for it once N buffers came]),
 * PEER_BACK (actor= instance=: a lost peer respawned between runs),
 * RESEND_EOR, PING, and ALIVE [hook= hook_ms=] from each instance's
 * liveness thread, on a connection of its own.
 */
#ifndef TUSK_WIRE_H
#define TUSK_WIRE_H

#include "tusk/export.h"

#include <stddef.h>
#include <stdint.h>

#include "tusk/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TUSK_WIRE_MAGIC 0x444B5354u /* "TSKD" */
#define TUSK_WIRE_VERSION 2u
#define TUSK_WIRE_HEADER_SIZE 48u
#define TUSK_WIRE_NONE 0xFFFFu

enum tusk_wire_flag {
    TUSK_WIRE_END_OF_RUN = 1u << 0, /* the sender sends nothing more this run on this link */
    TUSK_WIRE_COMPLETES = 1u << 1,  /* the last output of input (input actor/instance, input_seq) */
    TUSK_WIRE_EMPTY = 1u << 2,      /* a marker, no buffer: with COMPLETES, an input whose last
                                       output was empty is finished; with RELEASE, see below */
    TUSK_WIRE_RELEASE = 1u << 3,    /* with EMPTY: input_seq inputs of the link (input actor,
                                       instance) that made no output of their own, held back by
                                       the sender, are finished now (its flush) */
    TUSK_WIRE_SHM = 1u << 4         /* a buffer in shared memory: the second frame is a slot
                                       descriptor (below), not the buffer; payload size is the
                                       buffer's */
};
#define TUSK_WIRE_KNOWN_FLAGS 0x1Fu

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

TUSK_INTERNAL void tusk_wire_encode(const tusk_wire_header_t *header, uint8_t out[TUSK_WIRE_HEADER_SIZE]);

/* Decode and check a header frame: its size, magic, version, known flags,
 * no payload with END_OF_RUN or EMPTY, END_OF_RUN alone, RELEASE only with
 * EMPTY and without COMPLETES. TUSK_EINVAL with a message. */
TUSK_INTERNAL int tusk_wire_decode(const uint8_t *in, size_t size, tusk_wire_header_t *header, tusk_error_t *err);

/* ---- shared-memory slots (tusk-run --transport shm) ---------------------- *
 *
 * With TUSK_WIRE_SHM the buffer lies in a slot of the sender's ring, a
 * memfd of the sender on this host (distributed/shmlink.h); the second
 * frame says which, in 32 bytes, little-endian:
 *
 *   0  u32 magic "TSHM"      16 u32 link: the sender's number of this link
 *   4  u32 pid of the sender        (the bit the receiver clears)
 *   8  u32 its memfd          20 u32 reserved (0)
 *  12  u32 slot               24 u64 the ring's nonce (in its header too)
 */
#define TUSK_WIRE_SHM_MAGIC 0x4D485354u /* "TSHM" */
#define TUSK_WIRE_SHM_SIZE 32u

typedef struct tusk_wire_shm {
    uint32_t pid, fd, slot, link;
    uint64_t nonce;
} tusk_wire_shm_t;

TUSK_INTERNAL void tusk_wire_shm_encode(const tusk_wire_shm_t *desc, uint8_t out[TUSK_WIRE_SHM_SIZE]);
/* Decode and check a slot descriptor: its size, magic, reserved zero, a
 * pid and an fd that can be ones (pid > 0, fd <= INT32_MAX), link < 64.
 * TUSK_EINVAL with a message. */
TUSK_INTERNAL int tusk_wire_shm_decode(const uint8_t *in, size_t size, tusk_wire_shm_t *desc, tusk_error_t *err);

/* ---- control messages --------------------------------------------------- */

typedef struct tusk_ctl tusk_ctl_t;

/* A message with verb `verb` (capital letters and '_') and no fields. */
TUSK_INTERNAL tusk_ctl_t *tusk_ctl_new(const char *verb);
TUSK_INTERNAL void tusk_ctl_destroy(tusk_ctl_t **msg);

/* Add a field (keys: letters, digits and _ . : -; values: any text). */
TUSK_INTERNAL int tusk_ctl_set(tusk_ctl_t *msg, const char *key, const char *value);
TUSK_INTERNAL int tusk_ctl_set_u64(tusk_ctl_t *msg, const char *key, uint64_t value);
TUSK_INTERNAL int tusk_ctl_setf(tusk_ctl_t *msg, const char *key, const char *fmt, ...) TUSK_PRINTF(3, 4);

/* The message as text (caller frees), and its length. */
TUSK_INTERNAL char *tusk_ctl_format(const tusk_ctl_t *msg, size_t *length);

/* Parse `size` bytes of text. TUSK_EINVAL naming what is wrong. */
TUSK_INTERNAL int tusk_ctl_parse(tusk_ctl_t **msg, const char *text, size_t size, tusk_error_t *err);

TUSK_INTERNAL const char *tusk_ctl_verb(const tusk_ctl_t *msg);
TUSK_INTERNAL size_t tusk_ctl_count(const tusk_ctl_t *msg);
TUSK_INTERNAL const char *tusk_ctl_key(const tusk_ctl_t *msg, size_t i);
TUSK_INTERNAL const char *tusk_ctl_value(const tusk_ctl_t *msg, size_t i);
/* The value of `key` (the first one), or NULL. */
TUSK_INTERNAL const char *tusk_ctl_get(const tusk_ctl_t *msg, const char *key);
/* `fallback` when absent; TUSK_EINVAL when not an unsigned integer. */
TUSK_INTERNAL int tusk_ctl_get_u64(const tusk_ctl_t *msg, const char *key, uint64_t fallback, uint64_t *value);

/* ---- run secrets and certificates ----------------------------------------
 *
 * What tusk-run hands every instance it starts on the launcher's standard
 * input (never on a command line, where any user sees it), and keeps for
 * `tusk-run --status` in RUN_FOLDER/keys (mode 0600). One "KEY VALUE" per
 * line; the value is the rest of the line:
 *
 *   tusk-secrets 1
 *   security curve            (or none: no authentication on tcp)
 *   public-key Z85            the key pair of this process: the run's,
 *   secret-key Z85              made by tusk-run (absent with certs)
 *   server-key Z85            the controller's public key (ditto)
 *   certs DIR                 configured keys: the certificate folder,
 *   cert NAME                   this process's certificate in it and
 *   server-cert NAME            the controller's
 *   token HEX                 the instance's own: part of its routing id
 *
 * Keys are CURVE keys in Z85 text: 40 characters of ZeroMQ's alphabet.
 *
 * A certificate is ZeroMQ's certificate text (ZPL, the format czmq's zcert
 * writes): NAME.key holds the public key, NAME.key_secret both:
 *
 *   metadata
 *       name = "NAME"
 *   curve
 *       public-key = "Z85"
 *       secret-key = "Z85"
 *
 * Lines starting with '#' are comments; other sections and keys are
 * ignored. */
#define TUSK_KEY_CHARS 40u
#define TUSK_SECRETS_MAX 8192u
#define TUSK_CERT_MAX 8192u

typedef struct tusk_secrets {
    int curve;                      /* 1: CURVE on tcp; 0: none */
    char public_key[TUSK_KEY_CHARS + 1], secret_key[TUSK_KEY_CHARS + 1], server_key[TUSK_KEY_CHARS + 1];
    char certs[4096];               /* "" without configured keys */
    char cert[128], server_cert[128];
    char token[65];                 /* hex; "" for none */
} tusk_secrets_t;

/* Is `text` (len bytes) a Z85 CURVE key? */
TUSK_INTERNAL int tusk_key_valid(const char *text, size_t len);

/* Parse secrets text. TUSK_EINVAL naming the line and what is wrong:
 * unknown keys, a key given twice, a malformed key or token, curve
 * without a key pair or certificate folder, both at once. */
TUSK_INTERNAL int tusk_secrets_parse(const char *text, size_t size, tusk_secrets_t *secrets, tusk_error_t *err);
/* The text (caller frees); NULL when out of memory. */
TUSK_INTERNAL char *tusk_secrets_format(const tusk_secrets_t *secrets, size_t *length);

typedef struct tusk_cert {
    char name[128];                 /* metadata name ("" if none) */
    char public_key[TUSK_KEY_CHARS + 1];
    char secret_key[TUSK_KEY_CHARS + 1]; /* "" in a public certificate */
} tusk_cert_t;

/* Parse certificate text: a public key is required, a secret key
 * optional. TUSK_EINVAL naming the line. */
TUSK_INTERNAL int tusk_cert_parse(const char *text, size_t size, tusk_cert_t *cert, tusk_error_t *err);
/* The text, with the secret key when `with_secret` (caller frees). */
TUSK_INTERNAL char *tusk_cert_format(const tusk_cert_t *cert, int with_secret, size_t *length);

#ifdef __cplusplus
}
#endif
#endif
