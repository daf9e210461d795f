/* tap_link.h - the link a sampling tap is put on (tap.h), as the
 * controller's `tap` and `untap` commands and tusk-run --tap/--untap name
 * it. Plain text in, no ZeroMQ: fuzzed by fuzz/fuzz_tap_link.c.
 */
#ifndef TUSK_DISTRIBUTED_TAP_LINK_H
#define TUSK_DISTRIBUTED_TAP_LINK_H

#include <stddef.h>

#include "tusk/error.h"

/* A link as the `tap` command names it: "UP[K]->DOWN[K]" ("[K]" may be
 * left out: instance 0; blanks around "->" taken), then, for `tap`,
 * optionally " every=N" (N from 1; default 1, in *every when not NULL;
 * with every NULL it is refused). TUSK_EINVAL saying what is wrong. */
int tusk_tap_link_parse(const char *text, char *up, size_t up_size, unsigned *up_k, char *down, size_t down_size,
                        unsigned *down_k, unsigned *every, tusk_error_t *err);

#endif
