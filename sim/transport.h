/* transport.h - photon interactions in germanium and aluminium, and
 * transport in a homogeneous germanium slab (private to sim/; the slab is
 * for tests).
 *
 * The slab is infinite in x and y and occupies 0 <= z <= thickness. One
 * photon enters at the origin along +z. Free paths are sampled from the
 * total linear attenuation of tusk/gexs.h; the process from the partial
 * cross sections:
 *   photoelectric: the photon is absorbed, its energy deposited locally
 *     (fluorescence and electron range ignored);
 *   Compton: cos theta from Klein-Nishina (free electron at rest; the
 *     binding that XCOM's incoherent cross section includes changes only
 *     the rate, not this angle), azimuth uniform; E - E' deposited locally;
 *   Rayleigh: direction only, cos theta from (1 + cos^2 theta) F^2(x),
 *     F the material's atomic form factor (sim/simrng.h); the physics'
 *     `rayleigh` setting can drop F (TRANSPORT_RAYLEIGH_THOMSON: what
 *     tusk did before, for comparisons) - without it large angles are
 *     overestimated: at 1 MeV in germanium half of the Rayleigh
 *     scatterings turn by less than 1.5 degrees, not 60;
 *   pair: E - 2 m c^2 deposited locally; the positron annihilates at rest
 *     there into two back-to-back 511 keV photons in a random direction,
 *     both followed.
 * A photon leaving the slab (z < 0 or z > thickness) escapes with its
 * energy. Scattered photons below TRANSPORT_E_CUT_KEV (mean free path in
 * Ge < 0.1 mm) are absorbed at the point where they were made, their
 * energy added to that point's deposit.
 */
#ifndef TUSK_SIM_TRANSPORT_H
#define TUSK_SIM_TRANSPORT_H

#include "tusk/export.h"

#include <stdint.h>

#include "sim/simrng.h"
#include "tusk/gexs.h"

#define TRANSPORT_MAX_POINTS 64
#define TRANSPORT_E_CUT_KEV 10.0

typedef enum transport_process {
    TRANSPORT_PHOTO = 1,
    TRANSPORT_COMPTON = 2,
    TRANSPORT_RAYLEIGH = 3,
    TRANSPORT_PAIR = 4,
} transport_process_t;

typedef struct transport_point {
    double x, y, z;   /* cm */
    double edep_kev;  /* deposited here (0 for Rayleigh) */
    int process;      /* transport_process_t */
} transport_point_t;

typedef struct transport_result {
    int primary_unscattered;   /* 1: the primary crossed the slab without interacting */
    unsigned n_interactions;   /* all interactions, of all photons */
    unsigned n_points;         /* those stored in points[] (<= TRANSPORT_MAX_POINTS) */
    double deposited_kev;      /* total deposit */
    double escaped_kev;        /* energy of the photons that left the slab */
    transport_point_t points[TRANSPORT_MAX_POINTS]; /* in order of occurrence */
} transport_result_t;

/* How Rayleigh scattering turns a photon. */
enum transport_rayleigh {
    TRANSPORT_RAYLEIGH_FORM_FACTOR = 0, /* (1 + cos^2) F^2: the default */
    TRANSPORT_RAYLEIGH_THOMSON = 1      /* (1 + cos^2) alone: tusk before issue 22 */
};

/* What the interactions need besides the cross sections: the Rayleigh
 * tables of every material. Filled once (transport_physics_init), then
 * only read: share it between threads freely. */
typedef struct transport_physics {
    enum transport_rayleigh rayleigh;
    sim_rayleigh_t ff[GEXS_MATERIALS];
} transport_physics_t;

TUSK_INTERNAL void transport_physics_init(transport_physics_t *phys, enum transport_rayleigh rayleigh);

/* Follow one photon of e_kev (> 0) through a slab of thickness_cm (> 0);
 * fill *out (zeroed first, padding included, so results compare with
 * memcmp). Returns 0, or -1 for invalid arguments (*out then zeroed).
 * deposited_kev + escaped_kev == e_kev up to rounding. */
TUSK_INTERNAL int transport_slab(const transport_physics_t *phys, double e_kev, double thickness_cm, uint64_t *rng,
                                 transport_result_t *out);

/* What one interaction does to a photon (transport_interact). */
typedef struct transport_step {
    int process;        /* transport_process_t */
    double edep_kev;    /* deposited at the point */
    double e_kev;       /* the photon's energy afterwards; 0: absorbed */
    int annihilation;   /* pair: two 511 keV photons leave the point along +-ann_dir */
    double ann_dir[3];
} transport_step_t;

/* One interaction of a photon of e_kev travelling along dir[3] (a unit
 * vector, turned in place for Compton and Rayleigh) at a point in the
 * material: the process drawn from its partial cross sections, then as
 * described above (scattered photons under TRANSPORT_E_CUT_KEV absorbed).
 * Shared by the slab and the array transport so both follow the same
 * physics. */
void transport_interact(const transport_physics_t *phys, gexs_material_t material, double e_kev, double dir[3],
                        uint64_t *rng, transport_step_t *step);

/* Rotate the unit vector dir[3] by polar angle theta (cos_theta) and
 * azimuth phi about itself, in place; the result is a unit vector whose
 * dot product with the old one is cos_theta. Exposed for tests. */
TUSK_INTERNAL void transport_rotate(double dir[3], double cos_theta, double phi);

#endif
