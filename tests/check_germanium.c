/* check_germanium.c - germanium photon physics (libtusk-germanium):
 * cross sections against REFERENCE.md, their shape and clamping, Compton
 * kinematics (four-momentum conservation, the inverse, the edge), and
 * Klein-Nishina (analytic total against numeric integration, Thomson
 * limit); aluminium's cross sections; the atomic form factors (their
 * values, shape, and XCOM's coherent cross sections recovered by
 * integrating them over angles). The sampled angles are the
 * simulation's: check_sim_physics. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tusk/compton.h"
#include "tusk/gexs.h"

#define PI 3.14159265358979323846

static double rel(double a, double b)
{
    return fabs(a - b) / fabs(b);
}

/* ---- cross-section table ---- */

typedef struct ref_point {
    double e_kev, total, photo, compton, rayleigh; /* < 0: not given */
} ref_point_t;

/* REFERENCE.md, "Photon interactions in germanium". */
static const ref_point_t reference[] = {
    {100.0, 0.555, 0.384, 0.121, 0.050},
    {200.0, 0.166, 0.047, 0.105, -1.0},
    {500.0, 0.0821, 0.00354, 0.0762, -1.0},
    {662.0, 0.0708, 0.00177, 0.0677, -1.0},
};

static void check_within(const char *what, double e, double got, double want, double tol)
{
    ck_assert_msg(rel(got, want) <= tol, "%s at %g keV: %.5g vs reference %.5g (%.2f %%)", what, e, got, want,
                  100.0 * rel(got, want));
}

START_TEST(table_matches_reference)
{
    for (size_t i = 0; i < sizeof reference / sizeof reference[0]; i++) {
        const ref_point_t *r = &reference[i];
        gexs_mu_t mu;
        gexs_mass_attenuation(r->e_kev, &mu);
        check_within("total", r->e_kev, mu.total, r->total, 0.03);
        check_within("photo", r->e_kev, mu.photo, r->photo, 0.03);
        check_within("compton", r->e_kev, mu.compton, r->compton, 0.03);
        if (r->rayleigh > 0.0)
            check_within("rayleigh", r->e_kev, mu.rayleigh, r->rayleigh, 0.03);
        ck_assert_double_eq(mu.pair, 0.0);
        ck_assert_double_eq_tol(gexs_linear_attenuation(r->e_kev), mu.total * 5.323, 1e-12);
    }
}
END_TEST

static double log_grid(double lo, double hi, int i, int n)
{
    return lo * pow(hi / lo, (double)i / (n - 1));
}

START_TEST(table_shape)
{
    const int n = 2000;
    gexs_mu_t prev, mu;
    /* Photoelectric strictly decreasing above the K edge. */
    gexs_mass_attenuation(GEXS_K_EDGE_KEV, &prev);
    for (int i = 1; i < n; i++) {
        double e = log_grid(GEXS_K_EDGE_KEV, GEXS_E_MAX_KEV, i, n);
        gexs_mass_attenuation(e, &mu);
        tu_check(mu.photo < prev.photo);
        prev = mu;
    }
    /* Total strictly decreasing from 100 keV to 1 MeV. */
    gexs_mass_attenuation(100.0, &prev);
    for (int i = 1; i < n; i++) {
        gexs_mass_attenuation(log_grid(100.0, 1000.0, i, n), &mu);
        tu_check(mu.total < prev.total);
        prev = mu;
    }
    /* Every part positive (pair aside), total the sum, continuity away
     * from the K edge (no jump at table points). */
    for (int i = 0; i < n; i++) {
        double e = log_grid(GEXS_E_MIN_KEV, GEXS_E_MAX_KEV, i, n);
        gexs_mass_attenuation(e, &mu);
        tu_check(mu.photo > 0.0 && mu.compton > 0.0 && mu.rayleigh > 0.0 && mu.pair >= 0.0);
        tu_check(rel(mu.total, mu.photo + mu.compton + mu.rayleigh + mu.pair) < 1e-15);
        if (fabs(e - GEXS_K_EDGE_KEV) > 0.01) {
            gexs_mu_t lo, hi;
            gexs_mass_attenuation(e * (1.0 - 1e-9), &lo);
            gexs_mass_attenuation(e * (1.0 + 1e-9), &hi);
            tu_check(rel(lo.total, hi.total) < 1e-7);
        }
    }
    /* The K edge: photo jumps by ~7.4 across it. */
    gexs_mu_t below, above;
    gexs_mass_attenuation(GEXS_K_EDGE_KEV * (1.0 - 1e-9), &below);
    gexs_mass_attenuation(GEXS_K_EDGE_KEV, &above);
    double jump = above.photo / below.photo;
    ck_assert_msg(jump > 7.0 && jump < 8.0, "K-edge jump %g", jump);
    /* Pair: zero below 2 m c^2, positive and increasing above. */
    for (int i = 0; i < n; i++) {
        gexs_mass_attenuation(log_grid(1.0, GEXS_PAIR_THRESHOLD_KEV, i, n), &mu);
        tu_check(mu.pair == 0.0);
    }
    gexs_mass_attenuation(1022.0, &mu); /* 2 keV above threshold */
    ck_assert(mu.pair < 1e-12 * mu.total);
    gexs_mass_attenuation(1025.0, &prev);
    ck_assert(prev.pair > 0.0 && prev.pair < 1e-6);
    for (int i = 1; i < n; i++) {
        gexs_mass_attenuation(log_grid(1025.0, GEXS_E_MAX_KEV, i, n), &mu);
        tu_check(mu.pair > prev.pair);
        prev = mu;
    }
    /* In Ge, pair production overtakes Compton between 8 and 9 MeV. */
    gexs_mass_attenuation(8000.0, &mu);
    ck_assert(mu.pair < mu.compton);
    gexs_mass_attenuation(9000.0, &mu);
    ck_assert(mu.pair > mu.compton);
}
END_TEST

START_TEST(table_clamps)
{
    gexs_mu_t lo, at, hi, nan_mu, neg;
    gexs_mass_attenuation(GEXS_E_MIN_KEV, &at);
    gexs_mass_attenuation(1.0, &lo);
    gexs_mass_attenuation(NAN, &nan_mu);
    gexs_mass_attenuation(-5.0, &neg);
    ck_assert(memcmp(&lo, &at, sizeof at) == 0);
    ck_assert(memcmp(&nan_mu, &at, sizeof at) == 0);
    ck_assert(memcmp(&neg, &at, sizeof at) == 0);
    gexs_mass_attenuation(GEXS_E_MAX_KEV, &at);
    gexs_mass_attenuation(1e6, &hi);
    ck_assert(memcmp(&hi, &at, sizeof at) == 0);
    gexs_mass_attenuation(INFINITY, &hi);
    ck_assert(memcmp(&hi, &at, sizeof at) == 0);
    ck_assert(isfinite(gexs_linear_attenuation(0.0)));
}
END_TEST

/* ---- Compton kinematics ---- */

START_TEST(compton_kinematics)
{
    const double m = 510.99895;
    for (int i = 0; i < 200000; i++) {
        double e = log_grid(1.0, 20000.0, (int)tu_below(100000), 100000);
        double c = 2.0 * tu_uniform() - 1.0;
        tu_check(c >= -1.0 && c <= 1.0);
        double e1 = compton_scattered_energy(e, c);
        /* Four-momentum conservation: the electron takes T = E - E' and
         * momentum p = k - k'; (T + m)^2 = p^2 + m^2, i.e. T^2 + 2 m T = p^2. */
        double t = e - e1;
        double p2 = e * e + e1 * e1 - 2.0 * e * e1 * c;
        tu_check(fabs(t * t + 2.0 * m * t - p2) <= 1e-9 * e * e);
        tu_check(e1 <= e && e1 >= e / (1.0 + 2.0 * e / m) * (1.0 - 1e-15));
        tu_check(fabs(compton_cos_theta_from_energies(e, e1) - c) < 1e-9);
    }
    ck_assert_double_eq_tol(compton_scattered_energy(662.0, 1.0), 662.0, 1e-12);
    ck_assert_double_eq_tol(compton_scattered_energy(m, -1.0), m / 3.0, 1e-12);
    ck_assert_double_eq_tol(compton_scattered_energy(m, 0.0), m / 2.0, 1e-12);
    ck_assert_double_eq_tol(compton_cos_theta_from_energies(1000.0, 1000.0 / (1.0 + 2000.0 / m)), -1.0, 1e-12);
    /* Beyond the Compton edge: outside [-1, 1], not clamped. */
    ck_assert(compton_cos_theta_from_energies(1000.0, 100.0) < -1.0);
}
END_TEST

/* ---- Klein-Nishina ---- */

/* Simpson's rule of 2 pi dsigma/dOmega over [a, b] with n (even) steps. */
static double kn_integral(double e, double a, double b, int n)
{
    double h = (b - a) / n;
    double s = klein_nishina_dsigma(e, a) + klein_nishina_dsigma(e, b);
    for (int i = 1; i < n; i++)
        s += (i % 2 ? 4.0 : 2.0) * klein_nishina_dsigma(e, a + i * h);
    return 2.0 * PI * s * h / 3.0;
}

START_TEST(kn_total_and_thomson)
{
    const double energies[] = {1e-3, 0.1, 5.0, 5.10998, 5.11, 50.0, 100.0, 511.0, 662.0, 1332.5, 5000.0, 10000.0};
    for (size_t i = 0; i < sizeof energies / sizeof energies[0]; i++) {
        double e = energies[i];
        double num = kn_integral(e, -1.0, 1.0, 20000);
        ck_assert_msg(rel(klein_nishina_total(e), num) < 1e-6, "KN total at %g keV: %.10g vs numeric %.10g", e,
                      klein_nishina_total(e), num);
    }
    const double re = 2.8179403262e-13, thomson = 8.0 * PI / 3.0 * re * re;
    ck_assert(rel(COMPTON_THOMSON_CM2, thomson) < 1e-14);
    ck_assert(rel(klein_nishina_total(1e-6), thomson) < 1e-8);
    ck_assert(rel(klein_nishina_total(1e-3), thomson) < 1e-5);
    ck_assert(klein_nishina_total(1e-3) < thomson);
    /* Series and closed form agree at their boundary (k = 0.01). */
    double eb = 0.01 * 510.99895;
    ck_assert(rel(klein_nishina_total(eb * (1.0 - 1e-12)), klein_nishina_total(eb * (1.0 + 1e-12))) < 1e-11);
    /* Decreasing with energy; times Z N_A / A gives the free-electron
     * Compton attenuation, above the bound-electron table at 662 keV by
     * at most a few %. */
    for (int i = 1; i < 1000; i++)
        tu_check(klein_nishina_total(log_grid(0.01, 1e5, i, 1000)) < klein_nishina_total(log_grid(0.01, 1e5, i - 1, 1000)));
    gexs_mu_t mu;
    gexs_mass_attenuation(662.0, &mu);
    double kn = klein_nishina_total(662.0) * 32.0 * 6.02214076e23 / 72.63;
    ck_assert_msg(kn > mu.compton && kn < 1.03 * mu.compton, "KN %g vs table %g", kn, mu.compton);
    /* Forward: dsigma(cos 0) = r_e^2 at any energy. */
    ck_assert(rel(klein_nishina_dsigma(1000.0, 1.0), re * re) < 1e-14);
}
END_TEST

/* ---- aluminium ---- */

START_TEST(aluminium_table)
{
    /* NIST's attenuation coefficients of aluminium (cm^2/g), which XCOM's
     * partial cross sections add up to: 0.1704 at 100 keV, 0.08445 at 500
     * keV, 0.06146 at 1 MeV (with coherent scattering). */
    const double e[] = {100.0, 500.0, 1000.0}, total[] = {0.1704, 0.08445, 0.06146};
    for (int i = 0; i < 3; i++) {
        gexs_mu_t mu;
        gexs_material_mass_attenuation(GEXS_ALUMINIUM, e[i], &mu);
        check_within("Al total", e[i], mu.total, total[i], 0.005);
        ck_assert_double_eq_tol(gexs_material_linear_attenuation(GEXS_ALUMINIUM, e[i]), mu.total * 2.699, 1e-12);
    }
    ck_assert_str_eq(gexs_material_name(GEXS_ALUMINIUM), "aluminium");
    ck_assert_str_eq(gexs_material_name(GEXS_GERMANIUM), "germanium");
    ck_assert_double_eq(gexs_material_density(GEXS_ALUMINIUM), 2.699);
    /* Germanium is the same through both calls. */
    gexs_mu_t a, b;
    gexs_mass_attenuation(662.0, &a);
    gexs_material_mass_attenuation(GEXS_GERMANIUM, 662.0, &b);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    /* Germanium attenuates more than aluminium per mm at every energy (the
     * simulation's delta tracking takes germanium's as the majorant): at
     * most 0.55 of it (near 1 MeV, where Compton scattering per electron
     * rules and aluminium has more electrons per gram). */
    double worst = 0.0;
    for (int i = 0; i < 4000; i++) {
        double en = log_grid(GEXS_E_MIN_KEV, GEXS_E_MAX_KEV, i, 4000);
        double r = gexs_material_linear_attenuation(GEXS_ALUMINIUM, en) / gexs_linear_attenuation(en);
        worst = fmax(worst, r);
    }
    ck_assert_msg(worst < 0.56 && worst > 0.5, "aluminium / germanium attenuation up to %g", worst);
    /* Pair production in aluminium: zero below threshold, rising above. */
    gexs_mu_t lo, hi;
    gexs_material_mass_attenuation(GEXS_ALUMINIUM, 1000.0, &lo);
    gexs_material_mass_attenuation(GEXS_ALUMINIUM, 5000.0, &hi);
    ck_assert(lo.pair == 0.0 && hi.pair > 0.0);
}
END_TEST

/* ---- atomic form factors ---- */

START_TEST(form_factor_values)
{
    /* F(0) = Z; the tabulated points themselves (Hubbell and Overbo 1979):
     * Ge at x = 0.5 and 2 per angstrom, Al at 0.5. */
    ck_assert_double_eq(gexs_form_factor(GEXS_GERMANIUM, 0.0), 32.0);
    ck_assert_double_eq(gexs_form_factor(GEXS_ALUMINIUM, 0.0), 13.0);
    ck_assert_double_eq_tol(gexs_form_factor(GEXS_GERMANIUM, 0.5), 16.227, 1e-9);
    ck_assert_double_eq_tol(gexs_form_factor(GEXS_GERMANIUM, 2.0), 4.447, 1e-9);
    ck_assert_double_eq_tol(gexs_form_factor(GEXS_ALUMINIUM, 0.5), 5.692, 1e-9);
    ck_assert_double_eq(gexs_form_factor(GEXS_GERMANIUM, -1.0), 32.0);
    ck_assert_double_eq(gexs_form_factor(GEXS_GERMANIUM, NAN), 32.0);
    ck_assert_double_eq(gexs_form_factor(GEXS_GERMANIUM, 2e9), 0.0);
    /* Decreasing and continuous everywhere on the grid; the grid itself
     * as the table says. */
    const double *x, *f;
    gexs_form_factor_table(GEXS_GERMANIUM, &x, &f);
    ck_assert_double_eq(x[0], 0.0);
    ck_assert_double_eq(x[GEXS_FF_POINTS - 1], 1e9);
    for (int m = 0; m < GEXS_MATERIALS; m++) {
        double prev = gexs_form_factor((gexs_material_t)m, 0.0);
        for (int i = 1; i < 20000; i++) {
            double xi = log_grid(1e-4, 1e8, i, 20000), v = gexs_form_factor((gexs_material_t)m, xi);
            tu_check(v <= prev && v > 0.0);
            tu_check(rel(gexs_form_factor((gexs_material_t)m, xi * (1.0 + 1e-9)), v) < 1e-6);
            prev = v;
        }
        gexs_form_factor_table((gexs_material_t)m, &x, &f);
        for (int i = 0; i < GEXS_FF_POINTS; i++)
            tu_check(rel(gexs_form_factor((gexs_material_t)m, x[i]), f[i]) < 1e-12);
    }
}
END_TEST

/* pi r_e^2 times the integral of (1 + cos^2) F^2 over cos theta, barn:
 * the coherent cross section the form factor gives. u = sin^2(theta/2) =
 * w^4 resolves the forward peak. */
static double coherent_barn(gexs_material_t m, double e_kev)
{
    const double re = 2.8179403262e-13;
    const int n = 400000;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double w = (i + 0.5) / n, u = w * w * w * w, du = 4.0 * w * w * w / n, c = 1.0 - 2.0 * u;
        double f = gexs_form_factor(m, sqrt(u) * e_kev / GEXS_HC_KEV_A);
        s += (1.0 + c * c) * f * f * 2.0 * du;
    }
    return PI * re * re * s / 1e-24;
}

START_TEST(form_factor_gives_xcom_coherent)
{
    /* XCOM computes its coherent cross sections from the same form
     * factors: integrating them over angles gives XCOM's column (to 0.1 %;
     * 0.5 % asked). A form factor in other units, for another element or
     * mistyped would not. */
    const double e[] = {20.0, 100.0, 300.0, 1000.0, 3000.0};
    for (int m = 0; m < GEXS_MATERIALS; m++)
        for (int i = 0; i < 5; i++) {
            gexs_mu_t mu;
            gexs_material_mass_attenuation((gexs_material_t)m, e[i], &mu);
            double a = m == GEXS_GERMANIUM ? GEXS_A : GEXS_AL_A;
            double xcom = mu.rayleigh * a / GEXS_AVOGADRO / 1e-24, got = coherent_barn((gexs_material_t)m, e[i]);
            ck_assert_msg(rel(got, xcom) < 0.005, "%s at %g keV: form factor gives %.5g b, XCOM %.5g b",
                          gexs_material_name((gexs_material_t)m), e[i], got, xcom);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("germanium");
    TCase *tc = tcase_create("cross_sections");
    tcase_add_test(tc, table_matches_reference);
    tcase_add_test(tc, table_shape);
    tcase_add_test(tc, table_clamps);
    tcase_add_test(tc, aluminium_table);
    suite_add_tcase(s, tc);
    tc = tcase_create("form_factors");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, form_factor_values);
    tcase_add_test(tc, form_factor_gives_xcom_coherent);
    suite_add_tcase(s, tc);
    tc = tcase_create("compton");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, compton_kinematics);
    tcase_add_test(tc, kn_total_and_thomson);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
