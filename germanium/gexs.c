/* gexs.c - photon cross sections of germanium (see tusk/gexs.h).
 *
 * Data source: NIST XCOM, Photon Cross Sections Database (NIST Standard
 * Reference Database 8; M.J. Berger, J.H. Hubbell, S.M. Seltzer et al.),
 * element Ge (Z = 32), on XCOM's standard energy grid from 10 keV to 10 MeV
 * plus its K-edge and pair-threshold points. The values are XCOM's partial
 * cross sections in barn/atom, as XCOM prints them (4 significant digits);
 * "compton" is XCOM's incoherent scattering (bound electrons), "rayleigh"
 * its coherent scattering, "pair" the sum of its nuclear-field and
 * electron-field pair production columns. They are converted to cm^2/g
 * with N_A / A (A = 72.63 g/mol, REFERENCE.md).
 *
 * The numbers were transcribed from XCOM's output as tabulated for
 * germanium in the GRETO gamma-ray tracker's physics tables (data only);
 * a check against the XCOM web site is still to be done.
 *
 * With this table, REFERENCE.md's reference values for Ge at 100, 200, 500
 * and 662 keV are reproduced to better than 0.5 % (tests/check_germanium.c
 * checks 3 %).
 *
 * Interpolation: linear in (ln E, ln mu) between neighbouring table points.
 * The K edge appears twice (values below and above); an energy equal to the
 * edge gets the value above. Pair production is zero below 2 m_e c^2; on
 * the segment from the last zero point to the first non-zero one it is a
 * power law in (E - 2 m_e c^2) whose exponent continues the next segment
 * (pair is ~ (E - 2 m_e c^2)^p near threshold; the contribution there is
 * below 0.2 % of the total), and log-log between non-zero points.
 */
#include "tusk/gexs.h"

#include <math.h>
#include <stddef.h>

/* barn/atom -> cm^2/g */
#define BARN_TO_CM2G (1e-24 * GEXS_AVOGADRO / GEXS_A)

typedef struct gexs_row {
    double e_kev;
    double photo, incoh, coh, pair_nuc, pair_el; /* barn/atom */
} gexs_row_t;

/*  E (keV)    photoelectric incoherent coherent  pair(nucl)  pair(elec) */
static const gexs_row_t table[] = {
    {10.0, 4.306e+03, 8.579e+00, 1.972e+02, 0.0, 0.0},
    {GEXS_K_EDGE_KEV, 3.206e+03, 9.180e+00, 1.743e+02, 0.0, 0.0}, /* below K edge */
    {GEXS_K_EDGE_KEV, 2.371e+04, 9.180e+00, 1.743e+02, 0.0, 0.0}, /* above K edge */
    {15.0, 1.090e+04, 1.091e+01, 1.191e+02, 0.0, 0.0},
    {20.0, 4.996e+03, 1.238e+01, 8.159e+01, 0.0, 0.0},
    {30.0, 1.610e+03, 1.400e+01, 4.586e+01, 0.0, 0.0},
    {40.0, 7.045e+02, 1.475e+01, 2.907e+01, 0.0, 0.0},
    {50.0, 3.670e+02, 1.505e+01, 2.006e+01, 0.0, 0.0},
    {60.0, 2.140e+02, 1.512e+01, 1.475e+01, 0.0, 0.0},
    {80.0, 9.061e+01, 1.494e+01, 9.004e+00, 0.0, 0.0},
    {100.0, 4.624e+01, 1.459e+01, 6.083e+00, 0.0, 0.0},
    {150.0, 1.356e+01, 1.357e+01, 2.903e+00, 0.0, 0.0},
    {200.0, 5.706e+00, 1.263e+01, 1.688e+00, 0.0, 0.0},
    {300.0, 1.733e+00, 1.113e+01, 7.756e-01, 0.0, 0.0},
    {400.0, 7.731e-01, 1.003e+01, 4.431e-01, 0.0, 0.0},
    {500.0, 4.270e-01, 9.188e+00, 2.860e-01, 0.0, 0.0},
    {600.0, 2.699e-01, 8.516e+00, 1.996e-01, 0.0, 0.0},
    {800.0, 1.379e-01, 7.497e+00, 1.129e-01, 0.0, 0.0},
    {1000.0, 8.585e-02, 6.747e+00, 7.242e-02, 0.0, 0.0},
    {1022.0, 8.158e-02, 6.676e+00, 6.935e-02, 0.0, 0.0},
    {1250.0, 5.512e-02, 6.038e+00, 4.643e-02, 1.073e-02, 0.0},
    {1500.0, 3.968e-02, 5.490e+00, 3.227e-02, 5.320e-02, 0.0},
    {2000.0, 2.437e-02, 4.687e+00, 1.817e-02, 1.971e-01, 0.0},
    {2044.0, 2.353e-02, 4.629e+00, 1.740e-02, 2.116e-01, 0.0},
    {3000.0, 1.314e-02, 3.689e+00, 8.080e-03, 5.378e-01, 1.291e-03},
    {4000.0, 8.813e-03, 3.077e+00, 4.546e-03, 8.526e-01, 5.269e-03},
    {5000.0, 6.576e-03, 2.658e+00, 2.910e-03, 1.130e+00, 1.049e-02},
    {6000.0, 5.225e-03, 2.349e+00, 2.021e-03, 1.374e+00, 1.611e-02},
    {7000.0, 4.325e-03, 2.112e+00, 1.485e-03, 1.592e+00, 2.170e-02},
    {8000.0, 3.685e-03, 1.922e+00, 1.137e-03, 1.788e+00, 2.713e-02},
    {9000.0, 3.208e-03, 1.767e+00, 8.982e-04, 1.966e+00, 3.232e-02},
    {10000.0, 2.839e-03, 1.637e+00, 7.276e-04, 2.127e+00, 3.726e-02},
};

#define NROWS (sizeof table / sizeof table[0])

static double pair_at(size_t i)
{
    return table[i].pair_nuc + table[i].pair_el;
}

/* y0 * (y1/y0)^t: linear in ln y. */
static double log_lerp(double y0, double y1, double t)
{
    return y0 * exp(t * log(y1 / y0));
}

/* Index i with table[i].e_kev <= e < table[i + 1].e_kev and a segment of
 * non-zero width; requires table[0].e_kev <= e < table[NROWS - 1].e_kev. */
static size_t find_segment(double e)
{
    size_t lo = 0, hi = NROWS - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (table[mid].e_kev <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static double pair_interp(size_t i, double e)
{
    double p0 = pair_at(i), p1 = pair_at(i + 1);
    if (e <= GEXS_PAIR_THRESHOLD_KEV || p1 <= 0.0)
        return 0.0;
    if (p0 > 0.0) {
        double t = log(e / table[i].e_kev) / log(table[i + 1].e_kev / table[i].e_kev);
        return log_lerp(p0, p1, t);
    }
    /* Threshold segment: p1 * ((e - th) / (e1 - th))^n, n from the next
     * segment's slope in ln(E - th). */
    const double th = GEXS_PAIR_THRESHOLD_KEV;
    double n = 2.0;
    if (i + 2 < NROWS && pair_at(i + 2) > 0.0)
        n = log(pair_at(i + 2) / p1) / log((table[i + 2].e_kev - th) / (table[i + 1].e_kev - th));
    return p1 * pow((e - th) / (table[i + 1].e_kev - th), n);
}

void gexs_mass_attenuation(double energy_kev, gexs_mu_t *mu)
{
    double e = energy_kev;
    double photo, incoh, coh, pair;
    if (!(e > table[0].e_kev)) /* below the table, NaN, <= 0: clamp low */
        e = table[0].e_kev;
    if (e >= table[NROWS - 1].e_kev) { /* clamp high */
        const gexs_row_t *r = &table[NROWS - 1];
        photo = r->photo;
        incoh = r->incoh;
        coh = r->coh;
        pair = r->pair_nuc + r->pair_el;
    } else {
        size_t i = find_segment(e);
        const gexs_row_t *a = &table[i], *b = &table[i + 1];
        double t = log(e / a->e_kev) / log(b->e_kev / a->e_kev);
        photo = log_lerp(a->photo, b->photo, t);
        incoh = log_lerp(a->incoh, b->incoh, t);
        coh = log_lerp(a->coh, b->coh, t);
        pair = pair_interp(i, e);
    }
    mu->photo = photo * BARN_TO_CM2G;
    mu->compton = incoh * BARN_TO_CM2G;
    mu->rayleigh = coh * BARN_TO_CM2G;
    mu->pair = pair * BARN_TO_CM2G;
    mu->total = mu->photo + mu->compton + mu->rayleigh + mu->pair;
}

double gexs_linear_attenuation(double energy_kev)
{
    gexs_mu_t mu;
    gexs_mass_attenuation(energy_kev, &mu);
    return mu.total * GEXS_DENSITY;
}
