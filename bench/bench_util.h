/* bench_util.h - what the subcommands of tusk-bench share. */
#ifndef TUSK_BENCH_UTIL_H
#define TUSK_BENCH_UTIL_H

#include <stdbool.h>

/* Monotonic time, seconds. */
double bench_now_s(void);

/* A whole number option value (no sign, nothing after it); on failure
 * prints "PROG: OPT: 'S' is not a whole number" and returns false. */
bool bench_parse_ul(const char *prog, const char *opt, const char *s, unsigned long *v);

#endif
