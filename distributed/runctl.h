/* runctl.h - the pure parts of run control (ctlstate.h), apart so that
 * they are tested on their own (tests/check_runctl.c): the queue column's
 * estimate and the argument of `set`. */
#ifndef TUSK_DISTRIBUTED_RUNCTL_H
#define TUSK_DISTRIBUTED_RUNCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tusk/error.h"

/* A count as an instance reported it, and when it arrived (the
 * controller's monotonic clock, ms). */
typedef struct tusk_count_sample {
    bool valid;
    uint64_t at_ms;
    uint64_t count;
} tusk_count_sample_t;

/* Buffers queued on one link (sent by the upstream instance, not yet
 * received by the downstream one) at the moment the receiver's count was
 * taken. The two counts come from two processes at different moments, so
 * the sender's count is taken at the receiver's moment: interpolated
 * between its two last reports (same incarnation) when that moment lies
 * between them, else its nearest report. Never negative. Both counts
 * static (a stalled or paused link) gives the exact figure; a link moving
 * data is off by at most what one heartbeat period's rate change makes. */
uint64_t tusk_queue_estimate(const tusk_count_sample_t *sent_before, const tusk_count_sample_t *sent_last,
                             const tusk_count_sample_t *received);

/* `set`'s argument, "ACTOR.PARAM=VALUE" or "ACTOR[K].PARAM=VALUE", into
 * its parts (instance -1: every instance). TUSK_EINVAL saying what is
 * wrong. */
typedef struct tusk_set_arg {
    char actor[128];
    int instance;
    char key[128];
    char value[1024];
} tusk_set_arg_t;

int tusk_set_arg_parse(const char *text, tusk_set_arg_t *out, tusk_error_t *err);

#endif
