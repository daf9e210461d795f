/* zutil.h - small ZeroMQ helpers shared by tusk-actor and tusk-run. */
#ifndef TUSK_ZUTIL_H
#define TUSK_ZUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tusk/error.h"
#include "runtime/wire.h"

/* snprintf that may cut the text short on purpose (messages into fixed
 * buffers). */
void zu_format(char *out, size_t size, const char *fmt, ...) TUSK_PRINTF(3, 4);

/* `src` for a log line: bytes outside printable ASCII become '?' (a
 * peer's words must not drive the terminal). */
void zu_printable(char *out, size_t size, const char *src);

/* Send a control message: [identity] text [payload]. `identity` is NULL on
 * a DEALER socket, the peer's routing id on a ROUTER. */
int zu_send_ctl(void *sock, const char *identity, const tusk_ctl_t *msg, const void *payload, size_t payload_size,
                tusk_error_t *err);

/* Receive one control message (blocking unless `dontwait`). With
 * `identity` (a ROUTER), its first frame is the sender's routing id.
 * With `user`, the sender's user id as the authentication handler gave it
 * ("" for none; security.h). *payload (may be NULL) receives an optional
 * last frame, malloc'ed. Returns TUSK_OK, TUSK_EINVAL for a malformed
 * message (already received and dropped, see err), or TUSK_EIO (e.g.
 * EAGAIN with dontwait: err->code is TUSK_EIO and errno is EAGAIN). */
int zu_recv_ctl(void *sock, bool dontwait, char *identity, size_t identity_size, char *user, size_t user_size,
                tusk_ctl_t **msg, char **payload, size_t *payload_size, tusk_error_t *err);

/* Drop the remaining frames of a multipart message. */
void zu_drain_more(void *sock);

#endif
