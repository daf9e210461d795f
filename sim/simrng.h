/* simrng.h - the Compton and Rayleigh scattering angles drawn from the
 * simulation's pseudo-random numbers.
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

#include "tusk/gexs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A Compton scattering angle: a cos theta distributed as Klein-Nishina
 * (tusk/compton.h) at e_kev (> 0), exactly, by Kahn's rejection
 * technique (sim/compton_sample.c): 3 uniforms per trial; acceptance
 * about 0.6 up to 1 MeV, 0.34 at 10 MeV, falling as ~1/ln E beyond (fine
 * for gamma-ray spectroscopy; Butcher-Messel would suit GeV photons). */
TUSK_INTERNAL double sim_compton_sample_cos_theta(double e_kev, uint64_t *rng_state);

/* The Rayleigh scattering angle of one material: cos theta distributed as
 * (1 + cos^2 theta) F^2(x), F its atomic form factor (gexs_form_factor,
 * x = sin(theta/2) / lambda), exactly (sim/rayleigh_sample.c): x^2 drawn
 * from F^2 by inverting its integral, kept with probability
 * (1 + cos^2 theta) / 2. The table is built once per material by
 * sim_rayleigh_init (no allocation, no global state) and then only read. */
typedef struct sim_rayleigh {
    double u[GEXS_FF_POINTS];   /* x^2 at the form factor's grid points, 1/angstrom^2 */
    double f2[GEXS_FF_POINTS];  /* F^2 there */
    double q[GEXS_FF_POINTS];   /* on [u_i, u_i+1] (i >= 1), F^2 = f2_i (u / u_i)^q_i */
    double cum[GEXS_FF_POINTS]; /* the integral of F^2 from 0 to u_i */
} sim_rayleigh_t;

TUSK_INTERNAL void sim_rayleigh_init(sim_rayleigh_t *table, gexs_material_t material);
/* The integral of F^2 from 0 to u (u = x^2, 1/angstrom^2). */
TUSK_INTERNAL double sim_rayleigh_integral(const sim_rayleigh_t *table, double u);
TUSK_INTERNAL double sim_rayleigh_sample_cos_theta(const sim_rayleigh_t *table, double e_kev, uint64_t *rng_state);
/* Without the form factor: (1 + cos^2 theta) / 2 (Thomson), exactly. */
TUSK_INTERNAL double sim_thomson_sample_cos_theta(uint64_t *rng_state);

#ifdef __cplusplus
}
#endif

#endif
