/* heartbeat.h - tusk-actor's liveness thread.
 *
 * An actor may spend any time inside one hook call (a process_block of
 * minutes is valid), so liveness cannot come from the hook loop. A thread
 * of its own, on a control connection of its own (a ZeroMQ socket is used
 * by one thread only: this thread never touches the main thread's
 * sockets, and the main thread stops it through an inproc pipe), tells
 * the controller every period that the process lives, and which hook it
 * is in and for how long:
 *
 *     ALIVE                                   (between hooks)
 *     ALIVE hook=process_block hook_ms=31250  (inside one)
 *
 * The controller applies the actor's hook_timeout to hook_ms, and takes a
 * process that falls silent altogether (frozen, its host gone) for stalled.
 *
 * The thread also hears the controller's PINGs. When the controller has
 * been silent for `orphan_ms` (it died, or its host is unreachable), the
 * node is orphaned: tusk_hb_orphaned() turns true so the main loop ends
 * cleanly, and if the main thread is inside a hook (or does not end
 * within two periods) the thread ends the process itself: with the
 * controller gone nothing of the run can be saved, and an orphan must not
 * go on producing.
 */
#ifndef TUSK_HEARTBEAT_H
#define TUSK_HEARTBEAT_H

#include <stdbool.h>

#include "tusk/error.h"

typedef struct tusk_hb tusk_hb_t;
struct tusk_sec;

/* Connect a DEALER with routing id `identity` to `endpoint` in `zctx`
 * (authenticated as `sec` says) and start the thread. `orphan_ms` 0:
 * never orphaned. `label` names the instance in messages. */
int tusk_hb_start(tusk_hb_t **hb, void *zctx, struct tusk_sec *sec, const char *endpoint, const char *identity,
                  unsigned period_ms, unsigned orphan_ms, const char *label, tusk_error_t *err);

void tusk_hb_set_period(tusk_hb_t *hb, unsigned period_ms);

/* The main thread enters and leaves a hook call. `hook` must stay valid
 * (a string literal). */
void tusk_hb_enter(tusk_hb_t *hb, const char *hook);
void tusk_hb_leave(tusk_hb_t *hb);

/* The controller has been silent for orphan_ms. */
bool tusk_hb_orphaned(const tusk_hb_t *hb);

/* Stop and join the thread, close its sockets (before zmq_ctx_term). */
void tusk_hb_stop(tusk_hb_t **hb);

#endif
