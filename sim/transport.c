/* transport.c - photon transport in a germanium slab (see transport.h). */
#include "transport.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "tusk/compton.h"
#include "tusk/gexs.h"
#include "base/rng.h"
#include "sim/simrng.h"
#include "sim/simsource.h"

#define PI 3.14159265358979323846
#define STACK_MAX 8 /* photons waiting: at most 2 from one pair */

typedef struct photon {
    double pos[3], dir[3];
    double e_kev;
    int primary;
} photon_t;

void transport_rotate(double dir[3], double cos_theta, double phi)
{
    double u = dir[0], v = dir[1], w = dir[2];
    double ct = cos_theta > 1.0 ? 1.0 : (cos_theta < -1.0 ? -1.0 : cos_theta);
    double st = sqrt(1.0 - ct * ct);
    double cp = cos(phi), sp = sin(phi);
    double s2 = 1.0 - w * w;
    if (s2 > 1e-12) {
        /* Frame: e1 = (u w, v w, -s2)/s, e2 = (-v, u, 0)/s, both normal to
         * dir and to each other; new = ct dir + st (cp e1 + sp e2). */
        double s = sqrt(s2);
        dir[0] = u * ct + st * (u * w * cp - v * sp) / s;
        dir[1] = v * ct + st * (v * w * cp + u * sp) / s;
        dir[2] = w * ct - st * cp * s;
    } else {
        double sg = w >= 0.0 ? 1.0 : -1.0;
        dir[0] = st * cp;
        dir[1] = st * sp;
        dir[2] = sg * ct;
    }
    double n = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    dir[0] /= n;
    dir[1] /= n;
    dir[2] /= n;
}

void transport_physics_init(transport_physics_t *phys, enum transport_rayleigh rayleigh)
{
    phys->rayleigh = rayleigh;
    for (int m = 0; m < GEXS_MATERIALS; m++)
        sim_rayleigh_init(&phys->ff[m], (gexs_material_t)m);
}

void transport_interact(const transport_physics_t *phys, gexs_material_t material, double e_kev, double dir[3],
                        uint64_t *rng, transport_step_t *step)
{
    gexs_mu_t mu;
    gexs_material_mass_attenuation(material, e_kev, &mu);
    memset(step, 0, sizeof *step);
    double r = tusk_rng_uniform(rng) * mu.total;
    if (r < mu.photo) {
        step->process = TRANSPORT_PHOTO;
        step->edep_kev = e_kev;
        return;
    }
    if (r < mu.photo + mu.compton) {
        double ct = sim_compton_sample_cos_theta(e_kev, rng);
        double phi = 2.0 * PI * tusk_rng_uniform(rng);
        double e1 = compton_scattered_energy(e_kev, ct);
        step->process = TRANSPORT_COMPTON;
        if (e1 < TRANSPORT_E_CUT_KEV) {
            step->edep_kev = e_kev;
            return;
        }
        step->edep_kev = e_kev - e1;
        step->e_kev = e1;
        transport_rotate(dir, ct, phi);
        return;
    }
    if (r < mu.photo + mu.compton + mu.rayleigh || mu.pair <= 0.0) {
        double ct = phys->rayleigh == TRANSPORT_RAYLEIGH_THOMSON
                        ? sim_thomson_sample_cos_theta(rng)
                        : sim_rayleigh_sample_cos_theta(&phys->ff[(unsigned)material < GEXS_MATERIALS ? material : GEXS_GERMANIUM], e_kev,
                                                        rng);
        double phi = 2.0 * PI * tusk_rng_uniform(rng);
        step->process = TRANSPORT_RAYLEIGH;
        step->e_kev = e_kev;
        transport_rotate(dir, ct, phi);
        return;
    }
    /* Pair production: mu.pair > 0 only above 2 m c^2; the positron
     * annihilates at rest where it was made. */
    step->process = TRANSPORT_PAIR;
    step->edep_kev = e_kev - 2.0 * COMPTON_MEC2_KEV;
    step->annihilation = 1;
    sim_isotropic(step->ann_dir, rng);
}

static transport_point_t *add_point(transport_result_t *out, const double pos[3], double edep, int process)
{
    out->n_interactions++;
    out->deposited_kev += edep;
    if (out->n_points >= TRANSPORT_MAX_POINTS)
        return NULL;
    transport_point_t *p = &out->points[out->n_points++];
    p->x = pos[0];
    p->y = pos[1];
    p->z = pos[2];
    p->edep_kev = edep;
    p->process = process;
    return p;
}

int transport_slab(const transport_physics_t *phys, double e_kev, double thickness_cm, uint64_t *rng,
                   transport_result_t *out)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (!phys || !rng || !(e_kev > 0.0) || !(thickness_cm > 0.0) || isinf(e_kev) || isinf(thickness_cm))
        return -1;

    photon_t stack[STACK_MAX];
    size_t n = 0;
    stack[n++] = (photon_t){{0.0, 0.0, 0.0}, {0.0, 0.0, 1.0}, e_kev, 1};
    int primary_interacted = 0;

    while (n > 0) {
        photon_t ph = stack[--n];
        for (;;) {
            gexs_mu_t mu;
            gexs_mass_attenuation(ph.e_kev, &mu);
            double s = -log(tusk_rng_uniform(rng)) / (mu.total * GEXS_DENSITY);
            double z = ph.pos[2] + s * ph.dir[2];
            if (z < 0.0 || z > thickness_cm) {
                out->escaped_kev += ph.e_kev;
                if (ph.primary && !primary_interacted)
                    out->primary_unscattered = 1;
                break;
            }
            ph.pos[0] += s * ph.dir[0];
            ph.pos[1] += s * ph.dir[1];
            ph.pos[2] = z;
            if (ph.primary)
                primary_interacted = 1;

            transport_step_t st;
            transport_interact(phys, GEXS_GERMANIUM, ph.e_kev, ph.dir, rng, &st);
            add_point(out, ph.pos, st.edep_kev, st.process);
            if (st.e_kev > 0.0) {
                ph.e_kev = st.e_kev;
                continue;
            }
            if (!st.annihilation)
                break;
            const double m = COMPTON_MEC2_KEV;
            if (n + 2 > STACK_MAX) { /* cannot happen: 511 keV photons do not pair */
                out->deposited_kev += 2.0 * m;
                break;
            }
            photon_t a = {{ph.pos[0], ph.pos[1], ph.pos[2]}, {st.ann_dir[0], st.ann_dir[1], st.ann_dir[2]}, m, 0};
            photon_t b = a;
            b.dir[0] = -a.dir[0];
            b.dir[1] = -a.dir[1];
            b.dir[2] = -a.dir[2];
            stack[n++] = b;
            stack[n++] = a;
            break;
        }
    }
    return 0;
}
