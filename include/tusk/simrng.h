/* simrng.h - the simulation's pseudo-random numbers.
 *
 * splitmix64 (Steele, Lea, Flood 2014): the whole state is one uint64_t,
 * so a run is reproduced from its 64-bit seed (the seed is the initial
 * state; any value, 0 included, is valid). Period 2^64; every output of a
 * full period appears once. Not cryptographic. The state belongs to the
 * caller: no global state, one state per thread or stream.
 */
#ifndef TUSK_SIMRNG_H
#define TUSK_SIMRNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Next 64 random bits; advances *state. */
uint64_t sim_rng_next(uint64_t *state);

/* Uniform double in the open interval (0, 1): (k + 0.5) / 2^52 for a
 * random 52-bit k, so in [2^-53, 1 - 2^-53], never 0 or 1 (log(u) and
 * 1/u are safe). */
double sim_rng_uniform(uint64_t *state);

#ifdef __cplusplus
}
#endif

#endif
