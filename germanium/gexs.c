/* gexs.c - photon cross sections of germanium, and of the aluminium of
 * the capsules and cryostats (see tusk/gexs.h).
 *
 * Data source: NIST XCOM, Photon Cross Sections Database (NIST Standard
 * Reference Database 8; M.J. Berger, J.H. Hubbell, S.M. Seltzer et al.),
 * on XCOM's standard energy grid from 10 keV to 10 MeV plus its K-edge and
 * pair-threshold points. The values are XCOM's partial cross sections in
 * barn/atom, as XCOM prints them (4 significant digits); "compton" is
 * XCOM's incoherent scattering (bound electrons), "rayleigh" its coherent
 * scattering, "pair" the sum of its nuclear-field and electron-field pair
 * production columns. They are converted to cm^2/g with N_A / A.
 *
 * Germanium (Z = 32, A = 72.63 g/mol, REFERENCE.md): transcribed from
 * XCOM's output as tabulated for germanium in the GRETO gamma-ray
 * tracker's physics tables (data only), and checked against XCOM's own
 * data file for the element (MDATX3.032 of the XCOM 3.1 distribution, as
 * shipped in public repositories): the same numbers at every point
 * compared (10, 11.103 below and above the edge, 30, 100, 1000, 1250,
 * 3000 and 10000 keV, every column).
 *
 * Aluminium (Z = 13, A = 26.9815 g/mol, density 2.699 g/cm^3): XCOM's data
 * file for the element (MDATX3.013), the same energies (its K edge, 1.56
 * keV, lies below the table). At 1 MeV it gives 0.06146 cm^2/g in all,
 * NIST's tabulated attenuation coefficient of aluminium.
 *
 * With the germanium table, REFERENCE.md's reference values for Ge at 100,
 * 200, 500 and 662 keV are reproduced to better than 0.5 %
 * (tests/check_germanium.c checks 3 %).
 *
 * Interpolation: linear in (ln E, ln mu) between neighbouring table points.
 * The K edge appears twice (values below and above); an energy equal to the
 * edge gets the value above. Pair production is zero below 2 m_e c^2; on
 * the segment from the last zero point to the first non-zero one it is a
 * power law in (E - 2 m_e c^2) whose exponent continues the next segment
 * (pair is ~ (E - 2 m_e c^2)^p near threshold; the contribution there is
 * below 0.2 % of the total), and log-log between non-zero points.
 *
 * Atomic form factors (gexs_form_factor): J.H. Hubbell and I. Overbo,
 * "Relativistic atomic form factors and photon coherent scattering cross
 * sections", J. Phys. Chem. Ref. Data 8 (1979) 69 - the compilation from
 * which XCOM computes its coherent cross sections - on its 100-point grid
 * of x = sin(theta/2)/lambda from 0 to 1e9 per angstrom, as distributed
 * with EGSnrc (pgs4form.dat, the rows of Z = 32 and Z = 13; data only).
 * tests/check_germanium.c integrates (1 + cos^2) F^2 over angles and finds
 * XCOM's coherent cross sections above.
 */
#include "tusk/gexs.h"

#include <math.h>
#include <stddef.h>


typedef struct gexs_row {
    double e_kev;
    double photo, incoh, coh, pair_nuc, pair_el; /* barn/atom */
} gexs_row_t;

/*  E (keV)    photoelectric incoherent coherent  pair(nucl)  pair(elec) */
static const gexs_row_t ge_table[] = {
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


/* Aluminium, XCOM's MDATX3.013: the same energies. */
static const gexs_row_t al_table[] = {
    {10.0, 1.145e+03, 4.740e+00, 2.470e+01, 0.0, 0.0},
    {15.0, 3.367e+02, 5.668e+00, 1.405e+01, 0.0, 0.0},
    {20.0, 1.389e+02, 6.142e+00, 9.166e+00, 0.0, 0.0},
    {30.0, 3.908e+01, 6.561e+00, 4.908e+00, 0.0, 0.0},
    {40.0, 1.570e+01, 6.695e+00, 3.073e+00, 0.0, 0.0},
    {50.0, 7.696e+00, 6.702e+00, 2.096e+00, 0.0, 0.0},
    {60.0, 4.285e+00, 6.645e+00, 1.517e+00, 0.0, 0.0},
    {80.0, 1.695e+00, 6.447e+00, 8.982e-01, 0.0, 0.0},
    {100.0, 8.245e-01, 6.218e+00, 5.930e-01, 0.0, 0.0},
    {150.0, 2.237e-01, 5.678e+00, 2.743e-01, 0.0, 0.0},
    {200.0, 8.970e-02, 5.233e+00, 1.570e-01, 0.0, 0.0},
    {300.0, 2.573e-02, 4.573e+00, 7.078e-02, 0.0, 0.0},
    {400.0, 1.111e-02, 4.105e+00, 4.003e-02, 0.0, 0.0},
    {500.0, 6.021e-03, 3.752e+00, 2.568e-02, 0.0, 0.0},
    {600.0, 3.764e-03, 3.474e+00, 1.786e-02, 0.0, 0.0},
    {800.0, 1.905e-03, 3.053e+00, 1.006e-02, 0.0, 0.0},
    {1000.0, 1.184e-03, 2.746e+00, 6.443e-03, 0.0, 0.0},
    {1022.0, 1.115e-03, 2.717e+00, 6.169e-03, 0.0, 0.0},
    {1250.0, 7.562e-04, 2.456e+00, 4.125e-03, 1.404e-03, 0.0},
    {1500.0, 5.476e-04, 2.232e+00, 2.865e-03, 7.652e-03, 0.0},
    {2000.0, 3.420e-04, 1.905e+00, 1.612e-03, 3.023e-02, 0.0},
    {2044.0, 3.307e-04, 1.882e+00, 1.543e-03, 3.258e-02, 0.0},
    {3000.0, 1.892e-04, 1.499e+00, 7.166e-04, 8.595e-02, 5.245e-04},
    {4000.0, 1.291e-04, 1.250e+00, 4.031e-04, 1.390e-01, 2.142e-03},
    {5000.0, 9.746e-05, 1.080e+00, 2.580e-04, 1.861e-01, 4.267e-03},
    {6000.0, 7.812e-05, 9.545e-01, 1.792e-04, 2.284e-01, 6.554e-03},
    {7000.0, 6.511e-05, 8.579e-01, 1.316e-04, 2.660e-01, 8.836e-03},
    {8000.0, 5.577e-05, 7.808e-01, 1.008e-04, 2.999e-01, 1.105e-02},
    {9000.0, 4.876e-05, 7.178e-01, 7.963e-05, 3.305e-01, 1.318e-02},
    {10000.0, 4.330e-05, 6.650e-01, 6.450e-05, 3.584e-01, 1.520e-02},
};

/* Atomic form factors (Hubbell and Overbo 1979, via EGSnrc's
 * pgs4form.dat): x = sin(theta/2)/lambda in 1/angstrom, then F for
 * Z = 32 and for Z = 13. */
static const double ff_x[] = {
    0.0,  0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1,  0.11, 0.12, 0.13,   0.14, 0.15, 0.16,
    0.17, 0.18, 0.19, 0.2,  0.22, 0.24, 0.25, 0.26, 0.28, 0.3,  0.32, 0.34, 0.35, 0.36,   0.38, 0.4,  0.42,
    0.44, 0.45, 0.46, 0.48, 0.5,  0.55, 0.6,  0.65, 0.7,  0.8,  0.9,  1.0,  1.1,  1.2,    1.3,  1.4,  1.5,
    1.6,  1.7,  1.8,  1.9,  2.0,  2.2,  2.4,  2.5,  2.6,  2.8,  3.0,  3.3,  3.5,  3.6,    3.9,  4.0,  4.2,
    4.6,  5.0,  5.4,  5.5,  5.8,  6.0,  6.2,  6.6,  7.0,  7.4,  8.0,  9.0,  10.0, 11.0,   12.0, 14.0, 16.0,
    18.0, 20.0, 22.0, 25.0, 28.0, 31.0, 35.0, 40.0, 45.0, 50.0, 80.0, 100.0, 1000.0, 1e6, 1e9};
static const double ff_ge[] = {
    32.0,     31.97,    31.878,   31.729,   31.526,   31.276,   30.984,   30.657,   30.302,   29.926,
    29.534,   29.133,   28.725,   28.316,   27.908,   27.504,   27.104,   26.709,   26.322,   25.941,
    25.567,   24.839,   24.135,   23.791,   23.452,   22.787,   22.136,   21.498,   20.87,    20.56,
    20.253,   19.645,   19.047,   18.459,   17.882,   17.598,   17.317,   16.765,   16.227,   14.947,
    13.77,    12.702,   11.745,   10.151,   8.937,    8.028,    7.348,    6.83,     6.419,    6.076,
    5.774,    5.493,    5.224,    4.961,    4.702,    4.447,    3.9535,   3.4977,   3.287,    3.0885,
    2.7314,   2.428,    2.0649,   1.876,    1.7952,   1.598,    1.545,    1.4544,   1.3163,   1.213,
    1.1296,   1.1111,   1.0604,   1.03,     0.9964,   0.9354,   0.8767,   0.82,     0.739,    0.616,
    0.51,     0.421,    0.3475,   0.2385,   0.1663,   0.1183,   0.08591,  0.0636,   0.04189,  0.02862,
    0.02017,  0.0132,   0.008226, 0.005396, 0.003692, 6.737e-4, 3.016e-4, 1.348e-7, 1.627e-16, 2.383e-25};
static const double ff_al[] = {
    13.0,     12.976,   12.903,   12.786,   12.629,   12.439,   12.222,   11.987,   11.739,   11.485,
    11.23,    10.978,   10.733,   10.498,   10.273,   10.059,   9.857,    9.667,    9.487,    9.318,
    9.158,    8.862,    8.592,    8.465,    8.341,    8.103,    7.873,    7.648,    7.426,    7.316,
    7.205,    6.985,    6.766,    6.548,    6.33,     6.222,    6.115,    5.902,    5.692,    5.186,
    4.713,    4.277,    3.883,    3.221,    2.712,    2.33,     2.049,    1.841,    1.687,    1.571,
    1.481,    1.408,    1.346,    1.292,    1.243,    1.195,    1.1058,   1.0206,   0.979,    0.93801,
    0.85847,  0.783,    0.67857,  0.615,    0.58504,  0.50282,  0.478,    0.43208,  0.35356,  0.29,
    0.23852,  0.22726,  0.19681,  0.179,    0.1633,   0.1364,   0.1145,   0.09659,  0.07558,  0.05144,
    0.03601,  0.02585,  0.01898,  0.01085,  0.006617, 0.004252, 0.002852, 0.001982, 0.001214, 7.839e-4,
    5.288e-4, 3.303e-4, 1.967e-4, 1.245e-4, 8.269e-5, 1.341e-5, 5.69e-6,  1.391e-9, 9.56e-19, 1.017e-27};

_Static_assert(sizeof ff_x / sizeof ff_x[0] == GEXS_FF_POINTS && sizeof ff_ge / sizeof ff_ge[0] == GEXS_FF_POINTS &&
                   sizeof ff_al / sizeof ff_al[0] == GEXS_FF_POINTS,
               "form factor tables: one value per grid point");

typedef struct material {
    const char *name;
    const gexs_row_t *rows;
    size_t n;
    double a, density; /* g/mol, g/cm^3 */
    const double *ff;  /* form factor on ff_x */
} material_t;

static const material_t materials[GEXS_MATERIALS] = {
    [GEXS_GERMANIUM] = {"germanium", ge_table, sizeof ge_table / sizeof ge_table[0], GEXS_A, GEXS_DENSITY, ff_ge},
    [GEXS_ALUMINIUM] = {"aluminium", al_table, sizeof al_table / sizeof al_table[0], GEXS_AL_A, GEXS_AL_DENSITY,
                        ff_al},
};

/* An unknown material is germanium (the functions have no error path). */
static const material_t *material(gexs_material_t m)
{
    return (unsigned)m < GEXS_MATERIALS ? &materials[m] : &materials[GEXS_GERMANIUM];
}

static double pair_at(const gexs_row_t *table, size_t i)
{
    return table[i].pair_nuc + table[i].pair_el;
}

/* y0 * (y1/y0)^t: linear in ln y. */
static double log_lerp(double y0, double y1, double t)
{
    return y0 * exp(t * log(y1 / y0));
}

/* Index i with table[i].e_kev <= e < table[i + 1].e_kev and a segment of
 * non-zero width; requires table[0].e_kev <= e < table[n - 1].e_kev. */
static size_t find_segment(const gexs_row_t *table, size_t n, double e)
{
    size_t lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (table[mid].e_kev <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static double pair_interp(const gexs_row_t *table, size_t n, size_t i, double e)
{
    double p0 = pair_at(table, i), p1 = pair_at(table, i + 1);
    if (e <= GEXS_PAIR_THRESHOLD_KEV || p1 <= 0.0)
        return 0.0;
    if (p0 > 0.0) {
        double t = log(e / table[i].e_kev) / log(table[i + 1].e_kev / table[i].e_kev);
        return log_lerp(p0, p1, t);
    }
    /* Threshold segment: p1 * ((e - th) / (e1 - th))^n, n from the next
     * segment's slope in ln(E - th). */
    const double th = GEXS_PAIR_THRESHOLD_KEV;
    double k = 2.0;
    if (i + 2 < n && pair_at(table, i + 2) > 0.0)
        k = log(pair_at(table, i + 2) / p1) / log((table[i + 2].e_kev - th) / (table[i + 1].e_kev - th));
    return p1 * pow((e - th) / (table[i + 1].e_kev - th), k);
}

void gexs_material_mass_attenuation(gexs_material_t m, double energy_kev, gexs_mu_t *mu)
{
    const material_t *mat = material(m);
    const gexs_row_t *table = mat->rows;
    const size_t n = mat->n;
    double e = energy_kev;
    double photo, incoh, coh, pair;
    if (!(e > table[0].e_kev)) /* below the table, NaN, <= 0: clamp low */
        e = table[0].e_kev;
    if (e >= table[n - 1].e_kev) { /* clamp high */
        const gexs_row_t *r = &table[n - 1];
        photo = r->photo;
        incoh = r->incoh;
        coh = r->coh;
        pair = r->pair_nuc + r->pair_el;
    } else {
        size_t i = find_segment(table, n, e);
        const gexs_row_t *a = &table[i], *b = &table[i + 1];
        double t = log(e / a->e_kev) / log(b->e_kev / a->e_kev);
        photo = log_lerp(a->photo, b->photo, t);
        incoh = log_lerp(a->incoh, b->incoh, t);
        coh = log_lerp(a->coh, b->coh, t);
        pair = pair_interp(table, n, i, e);
    }
    const double barn = 1e-24 * GEXS_AVOGADRO / mat->a; /* barn/atom -> cm^2/g */
    mu->photo = photo * barn;
    mu->compton = incoh * barn;
    mu->rayleigh = coh * barn;
    mu->pair = pair * barn;
    mu->total = mu->photo + mu->compton + mu->rayleigh + mu->pair;
}

double gexs_material_linear_attenuation(gexs_material_t m, double energy_kev)
{
    gexs_mu_t mu;
    gexs_material_mass_attenuation(m, energy_kev, &mu);
    return mu.total * material(m)->density;
}

double gexs_material_density(gexs_material_t m)
{
    return material(m)->density;
}

const char *gexs_material_name(gexs_material_t m)
{
    return (unsigned)m < GEXS_MATERIALS ? materials[m].name : "?";
}

void gexs_mass_attenuation(double energy_kev, gexs_mu_t *mu)
{
    gexs_material_mass_attenuation(GEXS_GERMANIUM, energy_kev, mu);
}

double gexs_linear_attenuation(double energy_kev)
{
    return gexs_material_linear_attenuation(GEXS_GERMANIUM, energy_kev);
}

/* ---- atomic form factors ------------------------------------------------- */

void gexs_form_factor_table(gexs_material_t m, const double **x, const double **f)
{
    *x = ff_x;
    *f = material(m)->ff;
}

double gexs_form_factor(gexs_material_t m, double x)
{
    const double *f = material(m)->ff;
    if (!(x > 0.0)) /* 0, negative, NaN: forward */
        return f[0];
    if (x >= ff_x[GEXS_FF_POINTS - 1])
        return x == ff_x[GEXS_FF_POINTS - 1] ? f[GEXS_FF_POINTS - 1] : 0.0;
    if (x < ff_x[1]) /* F^2 linear in x^2 up to the first point */
        return sqrt(f[0] * f[0] + (f[1] * f[1] - f[0] * f[0]) * (x * x) / (ff_x[1] * ff_x[1]));
    size_t lo = 1, hi = GEXS_FF_POINTS - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ff_x[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    /* A power law between the points: F = F_lo (x / x_lo)^p. */
    double p = log(f[lo + 1] / f[lo]) / log(ff_x[lo + 1] / ff_x[lo]);
    return f[lo] * pow(x / ff_x[lo], p);
}
