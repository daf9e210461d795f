/* simrng.h - the Compton scattering angle drawn from the simulation's
 * pseudo-random numbers.
 *
 * The generator is libtusk-base's splitmix64 (base/rng.h, internal): the
 * whole state is one uint64_t owned by the caller, so a run is reproduced
 * from its 64-bit seed (the seed is the initial state; any value, 0
 * included, is valid). No global state: one state per thread or stream.
 */
#ifndef TUSK_SIMRNG_H
#define TUSK_SIMRNG_H

#include "tusk/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A Compton scattering angle: a cos theta distributed as Klein-Nishina
 * (tusk/compton.h) at e_kev (> 0), exactly, by Kahn's rejection
 * technique (sim/compton_sample.c): 3 uniforms per trial; acceptance
 * about 0.6 up to 1 MeV, 0.34 at 10 MeV, falling as ~1/ln E beyond (fine
 * for gamma-ray spectroscopy; Butcher-Messel would suit GeV photons). */
TUSK_INTERNAL double sim_compton_sample_cos_theta(double e_kev, uint64_t *rng_state);

#ifdef __cplusplus
}
#endif

#endif
