/* driver.h - the one actor driver (internal, not installed): how a host
 * calls an actor's output hooks on buffers, shared by tusk-emulate
 * (emulator/), tusk-actor (distributed/node.c) and, through the emulator,
 * the offline commands.
 *
 * A driver drives one actor of a topology (all its instances: the host
 * says which instance each call goes to) and owns what every host did the
 * same way:
 *
 *   - the call loop: a filter is called on an input until it has written
 *     all its output (TUSK_ACTOR_MORE_OUTPUT: the same input again, with a
 *     fresh output buffer), a forwarded input (TUSK_ACTOR_FORWARD) goes on
 *     itself, uncopied; process_flush is called until it is done; an empty
 *     output buffer goes back to the host, never on;
 *   - the counts: process_block calls, buffers, frames and bytes in and
 *     out, and the time spent in process_block and process_flush (one
 *     clock: base/clock.h);
 *   - the error report: every failure is the actor host's message (actor,
 *     instance, hook, buffer number, status, the actor's own words: see
 *     tusk/actor_host.h) or the host's own, unchanged.
 *
 * The host owns the buffers and where they go: it lends output buffers
 * (take), gets back the ones not used (give_back) and hands on the ones
 * written (emit). Counts of outputs include only buffers that emit took
 * without failing.
 *
 * One thread: a driver is called from one thread at a time. A host's
 * emit and emitted may call drivers again (the emulator lets an output
 * travel the chain at once; tusk-actor, waiting to send, may be told to
 * flush): a driver keeps nothing of a call in progress but its counts.
 */
#ifndef TUSK_RUNTIME_DRIVER_H
#define TUSK_RUNTIME_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "tusk/actor_host.h"
#include "tusk/adf_reader.h"
#include "tusk/error.h"

/* emit's flags. */
enum {
    /* The last output of its input (the call that wrote it did not ask
     * for more) or of the flush; a producer's outputs all are. */
    TUSK_EMIT_LAST = 1u << 0,
    /* The output is the input itself (TUSK_ACTOR_FORWARD): `buffer` is the
     * handle the host gave with the input. Always with TUSK_EMIT_LAST. */
    TUSK_EMIT_FORWARDED = 1u << 1,
    /* Written by process_flush. */
    TUSK_EMIT_FLUSH = 1u << 2
};

typedef struct tusk_driver_host {
    void *ctx; /* given to every function below */
    /* An output buffer of at least the driver's out_size bytes: returns its
     * handle and sets *data; NULL with `err` filled when there is none. */
    void *(*take)(void *ctx, uint8_t **data, tusk_error_t *err);
    /* An output buffer that was not used. */
    void (*give_back)(void *ctx, void *buffer);
    /* Hand on `buffer` (from take, or a forwarded input) holding `size`
     * bytes, `frames` top-level ADF frames. It is the host's from now on,
     * also when emit fails. */
    int (*emit)(void *ctx, void *buffer, uint32_t size, uint64_t frames, unsigned flags, tusk_error_t *err);
    /* Optional (NULL: none): called after an output was emitted and
     * counted (the emulator lets it travel down the chain here); a
     * failure stops the call loop. */
    int (*emitted)(void *ctx, unsigned flags, tusk_error_t *err);
    /* Optional (NULL: none): called just before and after every hook call,
     * with the hook's name ("process_block", "process_flush"). */
    void (*enter)(void *ctx, const char *hook);
    void (*leave)(void *ctx);
} tusk_driver_host_t;

typedef struct tusk_driver_stats {
    uint64_t calls;                               /* process_block calls */
    uint64_t buffers_in, frames_in, bytes_in;     /* inputs given to filter / consume */
    uint64_t buffers_out, frames_out, bytes_out;  /* outputs emitted (forwarded inputs too) */
    uint64_t ns;                                  /* in process_block and process_flush */
} tusk_driver_stats_t;

/* What became of one input of a filter. */
typedef enum tusk_driver_outcome {
    TUSK_DRIVER_HELD,      /* no output of its own: the actor may keep its data until the flush */
    TUSK_DRIVER_DONE,      /* output written, the last one flagged TUSK_EMIT_LAST */
    TUSK_DRIVER_DONE_OPEN, /* output written, but the last call wrote nothing: none flagged last */
    TUSK_DRIVER_FORWARDED  /* the input itself was handed to emit (which owns it now) */
} tusk_driver_outcome_t;

typedef struct tusk_driver tusk_driver_t;

/* A driver for an actor whose output buffers hold `out_size` bytes (the
 * topology's <size>; unused by consumers). `host` is copied. */
int tusk_driver_new(tusk_driver_t **driver, const tusk_driver_host_t *host, uint32_t out_size, tusk_error_t *err);
void tusk_driver_destroy(tusk_driver_t **driver);

/* One producer call on `actor`: its output (if any) emitted. *ended: the
 * producer said END_OF_DATA (set also when emit failed). */
int tusk_driver_produce(tusk_driver_t *driver, tusk_actor_t *actor, bool *ended, tusk_error_t *err);

/* A filter on one input buffer (`data`, `size` bytes, `frames` frames,
 * from source number `input`; `handle` is what emit gets if the actor
 * forwards it): called until it has written all its output. *outcome is
 * set in every case (TUSK_DRIVER_FORWARDED also when that emit failed). */
int tusk_driver_filter(tusk_driver_t *driver, tusk_actor_t *actor, unsigned input, void *handle, void *data,
                       uint32_t size, uint64_t frames, tusk_driver_outcome_t *outcome, tusk_error_t *err);

/* A consumer on one input buffer. */
int tusk_driver_consume(tusk_driver_t *driver, tusk_actor_t *actor, void *data, uint32_t size, uint64_t frames,
                        tusk_error_t *err);

/* End of data: process_flush until the actor has written all it held. */
int tusk_driver_flush(tusk_driver_t *driver, tusk_actor_t *actor, tusk_error_t *err);

/* Top-level ADF frames of a buffer, up to the first malformed one; when
 * `malformed` is not NULL it is set to the reader's error there, or NULL
 * for a well-formed buffer (valid until the next call). Counts nothing. */
uint64_t tusk_driver_frames(tusk_driver_t *driver, const void *data, uint32_t size, const adf_error_t **malformed);

const tusk_driver_stats_t *tusk_driver_stats(const tusk_driver_t *driver);
/* Zero the counts (a new run). */
void tusk_driver_reset_stats(tusk_driver_t *driver);

#endif
