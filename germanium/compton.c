/* compton.c - Compton kinematics and Klein-Nishina (see tusk/compton.h). */
#include "tusk/compton.h"

#include <math.h>

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
