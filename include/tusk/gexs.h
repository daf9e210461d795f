/* gexs.h - photon cross sections of germanium (libtusk-germanium).
 *
 * Mass attenuation coefficients (cm^2/g) of natural germanium by process,
 * from a table of NIST XCOM values between 10 keV and 10 MeV interpolated
 * log-log (linear in ln E and ln mu); see germanium/gexs.c for the table
 * and its source. The functions are pure: no global mutable state, safe
 * from any thread.
 *
 * Energies outside the table are clamped: below GEXS_E_MIN_KEV (and for
 * NaN or non-positive energies) the values at GEXS_E_MIN_KEV are returned,
 * above GEXS_E_MAX_KEV those at GEXS_E_MAX_KEV. Pair production is exactly
 * zero below GEXS_PAIR_THRESHOLD_KEV whatever the clamping.
 */
#ifndef TUSK_GEXS_H
#define TUSK_GEXS_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GEXS_Z 32
#define GEXS_A 72.63                    /* g/mol */
#define GEXS_DENSITY 5.323              /* g/cm^3 */
#define GEXS_K_EDGE_KEV 11.103          /* K-shell absorption edge */
#define GEXS_PAIR_THRESHOLD_KEV 1021.9979 /* 2 m_e c^2 */
#define GEXS_E_MIN_KEV 10.0             /* table limits (clamped outside) */
#define GEXS_E_MAX_KEV 10000.0
#define GEXS_AVOGADRO 6.02214076e23     /* 1/mol */

/* Mass attenuation coefficients, cm^2/g. pair is nuclear + electron field;
 * total = photo + compton + rayleigh + pair. */
typedef struct gexs_mu {
    double photo;    /* photoelectric absorption */
    double compton;  /* incoherent (Compton) scattering, bound electrons */
    double rayleigh; /* coherent (Rayleigh) scattering */
    double pair;     /* pair production, nuclear + electron field */
    double total;
} gexs_mu_t;

/* Fill *mu for a photon of energy_kev (clamped as described above). */
TUSK_API void gexs_mass_attenuation(double energy_kev, gexs_mu_t *mu);

/* Total linear attenuation coefficient, 1/cm: total * GEXS_DENSITY. */
TUSK_API double gexs_linear_attenuation(double energy_kev);

#ifdef __cplusplus
}
#endif

#endif
