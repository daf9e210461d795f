/* bench_util.c - what the subcommands of tusk-bench share. */
#include "bench_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

bool bench_parse_ul(const char *prog, const char *opt, const char *s, unsigned long *v)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(s, &end, 10);
    if (end == s || *end || errno || s[0] == '-') {
        fprintf(stderr, "%s: %s: '%s' is not a whole number\n", prog, opt, s);
        return false;
    }
    *v = x;
    return true;
}
