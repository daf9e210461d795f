/* clock.c - the one monotonic clock (see clock.h). */
#include "base/clock.h"

#include <time.h>

uint64_t tusk_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

double tusk_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t tusk_clock_ms(void)
{
    return tusk_clock_ns() / UINT64_C(1000000);
}
