/* compton.c - Compton kinematics and Klein-Nishina (see tusk/compton.h). */
#include "tusk/compton.h"

#include <math.h>

#include "tusk/simrng.h"

#define PI 3.14159265358979323846

double compton_scattered_energy(double e_kev, double cos_theta)
{
    return e_kev / (1.0 + (e_kev / COMPTON_MEC2_KEV) * (1.0 - cos_theta));
}

double compton_cos_theta_from_energies(double e_kev, double e_prime_kev)
{
    return 1.0 - COMPTON_MEC2_KEV * (1.0 / e_prime_kev - 1.0 / e_kev);
}

double klein_nishina_dsigma(double e_kev, double cos_theta)
{
    double p = 1.0 / (1.0 + (e_kev / COMPTON_MEC2_KEV) * (1.0 - cos_theta));
    double sin2 = 1.0 - cos_theta * cos_theta;
    return 0.5 * COMPTON_RE_CM * COMPTON_RE_CM * p * p * (p + 1.0 / p - sin2);
}

double klein_nishina_total(double e_kev)
{
    double k = e_kev / COMPTON_MEC2_KEV;
    if (k < 0.01) {
        /* sigma / sigma_T = 1 - 2k + 26/5 k^2 - 133/10 k^3 + 1144/35 k^4
         * - 544/7 k^5 + 3784/21 k^6 - 6148/15 k^7 + O(k^8) (Taylor series of
         * the closed form below; the next term is < 1e-13 here). */
        double s = -6148.0 / 15.0;
        s = s * k + 3784.0 / 21.0;
        s = s * k - 544.0 / 7.0;
        s = s * k + 1144.0 / 35.0;
        s = s * k - 133.0 / 10.0;
        s = s * k + 26.0 / 5.0;
        s = s * k - 2.0;
        s = s * k + 1.0;
        return COMPTON_THOMSON_CM2 * s;
    }
    double a = 1.0 + 2.0 * k;
    double l = log(a);
    double s = (1.0 + k) / (k * k) * (2.0 * (1.0 + k) / a - l / k) + l / (2.0 * k) - (1.0 + 3.0 * k) / (a * a);
    return 2.0 * PI * COMPTON_RE_CM * COMPTON_RE_CM * s;
}

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
double compton_sample_cos_theta(double e_kev, uint64_t *rng_state)
{
    double k = e_kev / COMPTON_MEC2_KEV;
    double a = 1.0 + 2.0 * k;
    double p1 = a / (9.0 + 2.0 * k);
    for (;;) {
        double r1 = sim_rng_uniform(rng_state);
        double r2 = sim_rng_uniform(rng_state);
        double r3 = sim_rng_uniform(rng_state);
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
