/* tap.h - the online sampling tap: a monitoring consumer on a link of a
 * running chain, which gets a sample of the link's buffers and never
 * slows the chain (NARVAL's spy, FairMQ's sampler).
 *
 * The sending instance of the link opens, when told (controller command
 * `tap UP[K]->DOWN[K]`, TAP to the instance), a ZeroMQ XPUB socket of its
 * own, bound and authenticated like its inputs (security.h). After each
 * buffer it sent on the link (or each EVERY-th: `tap LINK every=N`), it
 * offers a copy to the tap:
 *   - nobody subscribed: nothing is done (no copy, nothing counted);
 *   - the tap's queue (its high-water mark, 8 messages) has room: the
 *     buffer is copied and queued: `sent`;
 *   - it is full (the monitor is slower than the chain): the buffer is
 *     not copied and counted as `dropped`. Never waited for.
 * XPUB_NODROP makes a full queue an EAGAIN the sender sees, so drops are
 * counted, not silent. A message is the link's two frames: the 48-byte
 * wire header (runtime/wire.h: run, sender, buffer number on the link)
 * and the buffer. `untap` closes the socket; its counts stay with the
 * link. The counts go to the controller with the instance's statistics
 * (tap:A:K address, tap_listening:A:K 0|1, tap_sent:A:K, tap_dropped:A:K).
 */
#ifndef TUSK_DISTRIBUTED_TAP_H
#define TUSK_DISTRIBUTED_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "security.h"
#include "tap_link.h"
#include "tusk/error.h"

#define TUSK_TAP_HWM 8 /* messages queued for a slow monitor before drops */

typedef struct tusk_tap tusk_tap_t;

/* Bind a tap at `endpoint` ("tcp://ADDR:*" or "ipc://PATH"), through
 * `sec` (ZAP, CURVE on tcp), watched as `name`, offered every `every`-th
 * buffer (1: each; the 1st, the N+1-th, ... since it opened). */
int tusk_tap_open(tusk_tap_t **tap, void *zctx, tusk_sec_t *sec, const char *endpoint, const char *name,
                  unsigned every, tusk_error_t *err);
/* Where it bound (the port the kernel picked). */
const char *tusk_tap_address(const tusk_tap_t *tap);

/* Offer one buffer (see the top); never blocks. */
void tusk_tap_offer(tusk_tap_t *tap, const void *header, size_t header_size, const void *data, size_t size);

/* Whether someone is subscribed now (the subscriptions that came are
 * read first): what an operator or a test waits for before a run whose
 * every buffer the tap is to see. */
bool tusk_tap_listening(tusk_tap_t *tap);

uint64_t tusk_tap_sent(const tusk_tap_t *tap);
uint64_t tusk_tap_dropped(const tusk_tap_t *tap);

void tusk_tap_close(tusk_tap_t **tap);

#endif
