/* parse.h - numbers from text, strictly (internal).
 *
 * strtoull alone takes "-1" (as a huge number), " 7", "7x" and "" without
 * complaint; strtod takes "nan" and "1e999". These take a number only when
 * the whole text is one, in range:
 *   whole numbers: decimal digits only (no sign, no space, no suffix);
 *   real numbers:  what strtod reads, finite, and nothing after it.
 * They return 0 and store the value, or -1 and leave *out alone. */
#ifndef TUSK_BASE_PARSE_H
#define TUSK_BASE_PARSE_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stdint.h>

TUSK_INTERNAL int tusk_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* The same, or hexadecimal digits after "0x" or "0X" (settings, seeds,
 * type codes); a leading 0 is no octal prefix: "010" is ten. */
TUSK_INTERNAL int tusk_parse_u64x(const char *text, uint64_t min, uint64_t max, uint64_t *out);
TUSK_INTERNAL int tusk_parse_unsigned(const char *text, unsigned min, unsigned max, unsigned *out);
TUSK_INTERNAL int tusk_parse_double(const char *text, double min, double max, double *out);

/* For command-line tools: parse, or print "PROG: OPT wants a whole number
 * from MIN to MAX, not 'TEXT'" (or "of at least MIN" when MAX is the
 * type's largest; for real numbers likewise, or no range at all for
 * -DBL_MAX..DBL_MAX) to stderr and return false. */
TUSK_INTERNAL bool tusk_cli_u64(const char *prog, const char *opt, const char *text, uint64_t min, uint64_t max,
                                uint64_t *out);
TUSK_INTERNAL bool tusk_cli_unsigned(const char *prog, const char *opt, const char *text, unsigned min, unsigned max,
                                     unsigned *out);
TUSK_INTERNAL bool tusk_cli_double(const char *prog, const char *opt, const char *text, double min, double max,
                                   double *out);

/* A command line's `--set KEY=VALUE` into params (a later KEY replaces an
 * earlier one): true, or false after "PROG: --set wants KEY=VALUE, not
 * 'TEXT'" (or the parameter store's complaint) on stderr. */
struct tusk_params;
TUSK_INTERNAL bool tusk_cli_set(const char *prog, struct tusk_params *params, const char *arg);

#endif
