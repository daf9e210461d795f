/* gexs.h - photon cross sections of germanium (libtusk-germanium), and of
 * the aluminium of the crystals' capsules and cryostats.
 *
 * Mass attenuation coefficients (cm^2/g) by process, from tables of NIST
 * XCOM values between 10 keV and 10 MeV interpolated log-log (linear in
 * ln E and ln mu); atomic form factors for Rayleigh scattering (Hubbell
 * and Overbo 1979, the compilation XCOM's coherent cross sections come
 * from). See germanium/gexs.c for the tables and their sources. The
 * functions are pure: no global mutable state, safe from any thread.
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
#define GEXS_AL_Z 13
#define GEXS_AL_A 26.9815385            /* g/mol */
#define GEXS_AL_DENSITY 2.699           /* g/cm^3 */
/* h c in keV angstrom: a photon of E keV has lambda = GEXS_HC_KEV_A / E. */
#define GEXS_HC_KEV_A 12.398419843320026
/* Points of the form-factor grid (gexs_form_factor_table). */
#define GEXS_FF_POINTS 100

/* The materials with tables. */
typedef enum gexs_material {
    GEXS_GERMANIUM = 0, /* the crystals */
    GEXS_ALUMINIUM = 1, /* capsules and cryostats */
    GEXS_MATERIALS
} gexs_material_t;

/* Mass attenuation coefficients, cm^2/g. pair is nuclear + electron field;
 * total = photo + compton + rayleigh + pair. */
typedef struct gexs_mu {
    double photo;    /* photoelectric absorption */
    double compton;  /* incoherent (Compton) scattering, bound electrons */
    double rayleigh; /* coherent (Rayleigh) scattering */
    double pair;     /* pair production, nuclear + electron field */
    double total;
} gexs_mu_t;

/* Fill *mu for a photon of energy_kev in germanium (clamped as described
 * above). */
TUSK_API void gexs_mass_attenuation(double energy_kev, gexs_mu_t *mu);

/* Total linear attenuation coefficient of germanium, 1/cm: total *
 * GEXS_DENSITY. */
TUSK_API double gexs_linear_attenuation(double energy_kev);

/* The same for any material (an unknown one is germanium), its density
 * (g/cm^3) and name ("germanium", "aluminium"). */
TUSK_API void gexs_material_mass_attenuation(gexs_material_t m, double energy_kev, gexs_mu_t *mu);
TUSK_API double gexs_material_linear_attenuation(gexs_material_t m, double energy_kev);
TUSK_API double gexs_material_density(gexs_material_t m);
TUSK_API const char *gexs_material_name(gexs_material_t m);

/* The atomic form factor F(x) of the material's element (germanium,
 * aluminium), x = sin(theta/2) / lambda in 1/angstrom: F(0) = Z, falling
 * to 0. Between grid points F is a power law of x; below the first
 * non-zero point F^2 is linear in x^2; x <= 0 or NaN gives F(0), beyond
 * the grid (1e9) 0. Rayleigh scattering by angle theta goes as
 * (1 + cos^2 theta) F^2. */
TUSK_API double gexs_form_factor(gexs_material_t m, double x_per_angstrom);
/* The grid and the values themselves: GEXS_FF_POINTS each, x increasing
 * from 0 (for samplers that integrate F^2 piece by piece). */
TUSK_API void gexs_form_factor_table(gexs_material_t m, const double **x, const double **f);

#ifdef __cplusplus
}
#endif

#endif
