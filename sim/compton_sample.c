/* compton_sample.c - the Klein-Nishina scattering angle drawn from the
 * simulation's generator (base/rng.h; declared in sim/simrng.h); the cross sections and the
 * kinematics it samples are libtusk-germanium's (tusk/compton.h). */
#include <stdint.h>

#include "tusk/compton.h"
#include "base/rng.h"
#include "sim/simrng.h"

/* Kahn's rejection technique (H. Kahn, "Applications of Monte Carlo",
 * AECU-3259, 1954; as described e.g. in the MCNP theory manual).
 * With x = E/E' in [1, 1 + 2k], the Klein-Nishina density in x is split
 * into two parts, each sampled exactly and accepted with a bounded weight:
 *   with probability (1 + 2k) / (9 + 2k): x uniform in [1, 1 + 2k],
 *     accepted with probability 4 (1/x - 1/x^2);
 *   otherwise: x = (1 + 2k) / (1 + 2k r) (1/x uniform),
 *     accepted with probability (cos^2 theta + 1/x) / 2;
 * and cos theta = 1 - (x - 1)/k. The cosine is computed in forms free of
 * the 1/k cancellation so that low energies stay exact. */
double sim_compton_sample_cos_theta(double e_kev, uint64_t *rng_state)
{
    double k = e_kev / COMPTON_MEC2_KEV;
    double a = 1.0 + 2.0 * k;
    double p1 = a / (9.0 + 2.0 * k);
    for (;;) {
        double r1 = tusk_rng_uniform(rng_state);
        double r2 = tusk_rng_uniform(rng_state);
        double r3 = tusk_rng_uniform(rng_state);
        if (r1 <= p1) {
            double x = 1.0 + 2.0 * k * r2;
            if (r3 <= 4.0 * (1.0 / x - 1.0 / (x * x)))
                return 1.0 - 2.0 * r2; /* 1 - (x - 1)/k */
        } else {
            double d = 1.0 + 2.0 * k * r2;
            double x = a / d;
            double mu = 1.0 - 2.0 * (1.0 - r2) / d; /* 1 - (x - 1)/k */
            if (r3 <= 0.5 * (mu * mu + 1.0 / x))
                return mu;
        }
    }
}
