/* clock.h - the one monotonic clock of tusk (internal).
 *
 * Every duration tusk measures (timings, rates, timeouts, progress) comes
 * from here: CLOCK_MONOTONIC, never the wall clock, so that a clock step
 * cannot make a duration negative. */
#ifndef TUSK_BASE_CLOCK_H
#define TUSK_BASE_CLOCK_H

#include "tusk/export.h"

#include <stdint.h>

/* Monotonic time in nanoseconds since an arbitrary origin. */
TUSK_INTERNAL uint64_t tusk_clock_ns(void);

/* The same, in seconds. */
TUSK_INTERNAL double tusk_clock_s(void);

/* The same, in whole milliseconds. */
TUSK_INTERNAL uint64_t tusk_clock_ms(void);

#endif
