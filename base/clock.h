/* clock.h - the one monotonic clock of tusk (internal).
 *
 * Every duration tusk measures (timings, rates, timeouts, progress) comes
 * from here: CLOCK_MONOTONIC, never the wall clock, so that a clock step
 * cannot make a duration negative. */
#ifndef TUSK_BASE_CLOCK_H
#define TUSK_BASE_CLOCK_H

#include <stdint.h>

/* Monotonic time in nanoseconds since an arbitrary origin. */
uint64_t tusk_clock_ns(void);

/* The same, in seconds. */
double tusk_clock_s(void);

/* The same, in whole milliseconds. */
uint64_t tusk_clock_ms(void);

#endif
