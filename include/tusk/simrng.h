/* simrng.h - the simulation's pseudo-random numbers, and the Compton
 * scattering angle drawn from them.
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

/* A Compton scattering angle: a cos theta distributed as Klein-Nishina
 * (tusk/compton.h) at e_kev (> 0), exactly, by Kahn's rejection
 * technique (sim/compton_sample.c): 3 uniforms per trial; acceptance
 * about 0.6 up to 1 MeV, 0.34 at 10 MeV, falling as ~1/ln E beyond (fine
 * for gamma-ray spectroscopy; Butcher-Messel would suit GeV photons). */
double sim_compton_sample_cos_theta(double e_kev, uint64_t *rng_state);

#ifdef __cplusplus
}
#endif

#endif
