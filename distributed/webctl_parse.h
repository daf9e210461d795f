/* webctl_parse.h - tusk-run --web's argument: where the status page
 * (webctl.h) is served. Plain text in, no libmicrohttpd: fuzzed by
 * fuzz/fuzz_webctl.c.
 */
#ifndef TUSK_DISTRIBUTED_WEBCTL_PARSE_H
#define TUSK_DISTRIBUTED_WEBCTL_PARSE_H

#include <stddef.h>

#include "tusk/error.h"

/* --web's argument: PORT, IPV4:PORT or [IPV6]:PORT. PORT is decimal
 * digits only, 0 to 65535 (0: any); the address is numeric, as the page's
 * server takes it (an IPv6 address in brackets, which are not copied).
 * *address is "" when none was given. TUSK_EINVAL naming the argument
 * and what is wrong; *address and *port are then unspecified. */
int tusk_webctl_parse(const char *spec, char *address, size_t address_size, unsigned *port, tusk_error_t *err);

#endif
