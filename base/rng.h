/* rng.h - pseudo-random numbers for simulations and tests (internal).
 *
 * splitmix64 (Steele, Lea, Flood 2014): the whole state is one uint64_t
 * owned by the caller (no global state; one per thread or stream), so a
 * run is reproduced from its 64-bit seed; any seed, 0 included, is valid.
 * Period 2^64. Not cryptographic. */
#ifndef TUSK_BASE_RNG_H
#define TUSK_BASE_RNG_H

#include "tusk/export.h"

#include <stdint.h>

/* Next 64 random bits; advances *state. */
TUSK_INTERNAL uint64_t tusk_rng_next(uint64_t *state);

/* Uniform in the open interval (0, 1): (k + 0.5) / 2^52 for a random
 * 52-bit k, never 0 or 1 (log(u) and 1/u are safe). */
TUSK_INTERNAL double tusk_rng_uniform(uint64_t *state);

/* Standard normal (Box-Muller). */
TUSK_INTERNAL double tusk_rng_gauss(uint64_t *state);

/* Poisson with the given mean (>= 0). */
TUSK_INTERNAL unsigned tusk_rng_poisson(uint64_t *state, double mean);

/* Exponential with the given mean (> 0). */
TUSK_INTERNAL double tusk_rng_exponential(uint64_t *state, double mean);

#endif
