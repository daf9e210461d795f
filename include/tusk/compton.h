/* compton.h - Compton scattering (libtusk-germanium): kinematics and
 * Klein-Nishina cross sections.
 *
 * Energies in keV, cross sections per free electron at rest in cm^2
 * (differential: cm^2/sr). Pure functions. The simulation samples the
 * scattering angle from them: sim_compton_sample_cos_theta (sim/simrng.h, internal).
 */
#ifndef TUSK_COMPTON_H
#define TUSK_COMPTON_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COMPTON_MEC2_KEV 510.99895         /* electron rest energy (CODATA 2018) */
#define COMPTON_RE_CM 2.8179403262e-13     /* classical electron radius */
/* Thomson cross section 8 pi r_e^2 / 3, cm^2. */
#define COMPTON_THOMSON_CM2 (8.0 * 3.14159265358979323846 / 3.0 * COMPTON_RE_CM * COMPTON_RE_CM)

/* Scattered photon energy E' = E / (1 + (E / m c^2)(1 - cos theta)). */
TUSK_API double compton_scattered_energy(double e_kev, double cos_theta);

/* The inverse: cos theta = 1 - m c^2 (1/E' - 1/E). Not clamped: energies
 * that no Compton scattering can give (E' beyond the Compton edge or
 * E' > E) return values outside [-1, 1], which a tracker can use as a
 * measure of the violation. */
TUSK_API double compton_cos_theta_from_energies(double e_kev, double e_prime_kev);

/* Klein-Nishina d sigma / d Omega per electron, cm^2/sr:
 * r_e^2 / 2 P^2 (P + 1/P - sin^2 theta), P = E'/E. */
TUSK_API double klein_nishina_dsigma(double e_kev, double cos_theta);

/* Klein-Nishina total cross section per electron, cm^2 (analytic; a series
 * in k = E / m c^2 for k < 0.01, where the closed form cancels). Tends to
 * COMPTON_THOMSON_CM2 as E -> 0. */
TUSK_API double klein_nishina_total(double e_kev);

#ifdef __cplusplus
}
#endif

#endif
