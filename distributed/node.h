/* node.h - one actor instance of a distributed run (tusk-actor).
 *
 * A node connects to the controller's control socket, announces itself
 * and then does what it is told: CONFIGURE (load the topology, the actor
 * library and the instance; bind its inputs; connect its outputs),
 * INITIALISE, START, PAUSE, RESUME, STOP, RESET, EXIT, mapped onto the
 * actor's hooks. While running it moves buffers: data arrives on one PULL
 * socket per source (so a fan-in actor knows where each came from), goes
 * through process_block and leaves to each sink actor, to the instance
 * that can take it (one PUSH socket per downstream instance: load sharing
 * and back-pressure without loss). Heartbeats with statistics go to the
 * controller from the same loop, between hook calls; liveness comes from a
 * thread of its own (heartbeat.h), so a long hook call is not silence.
 * Every buffer received is checked (its number on the link, its ADF
 * framing) and every input counted as finished or held back, for the
 * controller's loss accounting (see README.md). A message that is no data
 * message of this run (a broken header, a stranger's) is dropped and
 * counted, never fatal; connections that do not authenticate never get
 * in (security.h).
 */
#ifndef TUSK_NODE_H
#define TUSK_NODE_H

#include "tusk/error.h"
#include "runtime/wire.h"

typedef struct tusk_node_options {
    const char *control;      /* controller endpoint */
    const tusk_secrets_t *secrets; /* what tusk-run handed over (keys, token); NULL: no
                                      authentication on tcp, no token */
    const char *actor;        /* actor name in the topology */
    unsigned instance;
    unsigned incarnation;     /* 0, then +1 on every restart */
    unsigned orphan_ms;       /* end when the controller is silent this long (0: never) */
} tusk_node_options_t;

/* Run until told to exit (0), or until the controller is lost (1). */
int tusk_node_run(const tusk_node_options_t *options, tusk_error_t *err);

#endif
