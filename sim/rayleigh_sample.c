/* rayleigh_sample.c - the Rayleigh scattering angle: (1 + cos^2 theta)
 * F^2(x), F the atomic form factor of libtusk-germanium (see
 * sim/simrng.h).
 *
 * With u = x^2 = sin^2(theta/2) / lambda^2, cos theta = 1 - 2 u / u_max
 * (u_max = 1 / lambda^2, theta = pi) and d(cos theta) = -2 du / u_max, so
 * the distribution in u is (1 + cos^2) / 2 * F^2(u) on [0, u_max]. u is
 * drawn from F^2 by inverting its integral, which is exact piece by piece
 * for gexs_form_factor's interpolation (F^2 linear in u below the first
 * grid point, a power of u between points), and kept with probability
 * (1 + cos^2 theta) / 2 >= 1/2. */
#include "sim/simrng.h"

#include <math.h>
#include <stddef.h>

#include "base/rng.h"

/* The integral of F^2 over [u_i, u] on piece i. */
static double piece_integral(const sim_rayleigh_t *r, size_t i, double u)
{
    if (i == 0) {
        double a = (r->f2[1] - r->f2[0]) / r->u[1];
        return r->f2[0] * u + 0.5 * a * u * u;
    }
    double q1 = r->q[i] + 1.0, t = u / r->u[i];
    if (fabs(q1) < 1e-9)
        return r->f2[i] * r->u[i] * log(t);
    return r->f2[i] * r->u[i] / q1 * (pow(t, q1) - 1.0);
}

/* The u on piece i whose integral from u_i is a. */
static double piece_inverse(const sim_rayleigh_t *r, size_t i, double a)
{
    if (i == 0) {
        /* f2_0 u + s u^2 / 2 = a, s = (f2_1 - f2_0) / u_1 < 0 */
        double s = (r->f2[1] - r->f2[0]) / r->u[1], b = r->f2[0];
        double d = b * b + 2.0 * s * a;
        return 2.0 * a / (b + sqrt(d > 0.0 ? d : 0.0));
    }
    double q1 = r->q[i] + 1.0, k = a / (r->f2[i] * r->u[i]);
    if (fabs(q1) < 1e-9)
        return r->u[i] * exp(k);
    double base = 1.0 + q1 * k;
    return r->u[i] * pow(base > 0.0 ? base : 0.0, 1.0 / q1);
}

/* The piece holding u: u_i <= u < u_{i+1} (the last piece beyond). */
static size_t piece_of(const sim_rayleigh_t *r, double u)
{
    size_t lo = 0, hi = GEXS_FF_POINTS - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->u[mid] <= u)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void sim_rayleigh_init(sim_rayleigh_t *r, gexs_material_t m)
{
    const double *x, *f;
    gexs_form_factor_table(m, &x, &f);
    for (size_t i = 0; i < GEXS_FF_POINTS; i++) {
        r->u[i] = x[i] * x[i];
        r->f2[i] = f[i] * f[i];
    }
    r->q[0] = 0.0;
    for (size_t i = 1; i + 1 < GEXS_FF_POINTS; i++)
        r->q[i] = log(f[i + 1] / f[i]) / log(x[i + 1] / x[i]); /* F ~ x^p: F^2 ~ u^p */
    r->q[GEXS_FF_POINTS - 1] = r->q[GEXS_FF_POINTS - 2];
    r->cum[0] = 0.0;
    for (size_t i = 0; i + 1 < GEXS_FF_POINTS; i++)
        r->cum[i + 1] = r->cum[i] + piece_integral(r, i, r->u[i + 1]);
}

double sim_rayleigh_integral(const sim_rayleigh_t *r, double u)
{
    if (!(u > 0.0))
        return 0.0;
    size_t i = piece_of(r, u);
    return r->cum[i] + piece_integral(r, i, u);
}

double sim_rayleigh_sample_cos_theta(const sim_rayleigh_t *r, double e_kev, uint64_t *rng)
{
    double umax = e_kev / GEXS_HC_KEV_A;
    umax *= umax;
    double amax = sim_rayleigh_integral(r, umax);
    for (;;) {
        double a = tusk_rng_uniform(rng) * amax;
        /* the piece where the integral reaches a */
        size_t lo = 0, hi = GEXS_FF_POINTS - 1;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (r->cum[mid] <= a)
                lo = mid;
            else
                hi = mid;
        }
        double u = piece_inverse(r, lo, a - r->cum[lo]);
        double c = 1.0 - 2.0 * u / umax;
        if (c < -1.0)
            c = -1.0;
        if (c > 1.0)
            c = 1.0;
        if (tusk_rng_uniform(rng) * 2.0 < 1.0 + c * c)
            return c;
    }
}

double sim_thomson_sample_cos_theta(uint64_t *rng)
{
    /* cos theta from (1 + cos^2 theta) / 2 on [-1, 1]: the CDF is
     * (c^3 + 3c + 4)/8; solve c^3 + 3c = 8r - 4 (Cardano, one real root). */
    double q = 4.0 * tusk_rng_uniform(rng) - 2.0; /* c^3 + 3c - 2q = 0 */
    double d = sqrt(q * q + 1.0);
    double c = cbrt(q + d) + cbrt(q - d);
    return c > 1.0 ? 1.0 : (c < -1.0 ? -1.0 : c);
}
