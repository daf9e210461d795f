/* check_sim_physics.c - photon physics of the simulation: Klein-Nishina
 * angles sampled by chi^2 (and their kinematics), Rayleigh angles with
 * the atomic form factor by chi^2 (the sampler's integral of F^2 against
 * the form factor itself, the forward peak it makes), transport in a Ge
 * slab (attenuation exp(-mu x), energy conservation), reproducibility.
 * The germanium cross sections, form factors and Compton formulas
 * themselves: check_germanium. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "transport.h"
#include "tusk/compton.h"
#include "tusk/gexs.h"
#include "sim/simrng.h"

#define PI 3.14159265358979323846

/* The Rayleigh tables, made once in main (read only afterwards). */
static transport_physics_t phys;

static double rel(double a, double b)
{
    return fabs(a - b) / fabs(b);
}

static double log_grid(double lo, double hi, int i, int n)
{
    return lo * pow(hi / lo, (double)i / (n - 1));
}

/* ---- Compton kinematics of the sampled angles ---- */

START_TEST(sampled_kinematics)
{
    /* The kinematics of libtusk-germanium hold for the sampler's angles
     * (check_germanium: the same for uniform angles, and fixed points). */
    const double m = 510.99895;
    for (int i = 0; i < 100000; i++) {
        double e = log_grid(1.0, 20000.0, (int)tu_below(100000), 100000);
        double c = sim_compton_sample_cos_theta(e, &(uint64_t){tu_rand()});
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

/* Upper tail of chi^2 with dof degrees of freedom: Q(dof/2, x/2), from the
 * series of the lower regularised gamma function. */
static double chi2_pvalue(double x, int dof)
{
    double a = 0.5 * dof, y = 0.5 * x;
    if (y <= 0.0)
        return 1.0;
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 100000; n++) {
        term *= y / (a + n);
        sum += term;
        if (term < sum * 1e-17)
            break;
    }
    double p = exp(a * log(y) - y - lgamma(a)) * sum;
    return p >= 1.0 ? 0.0 : 1.0 - p;
}

START_TEST(chi2_pvalue_self_test)
{
    /* dof 2: Q = exp(-x/2); dof 1: Q = erfc(sqrt(x/2)). */
    ck_assert(rel(chi2_pvalue(10.0, 2), exp(-5.0)) < 1e-10);
    ck_assert(rel(chi2_pvalue(3.0, 1), erfc(sqrt(1.5))) < 1e-9);
    ck_assert(chi2_pvalue(39.0, 39) > 0.4 && chi2_pvalue(39.0, 39) < 0.5);
    ck_assert(chi2_pvalue(500.0, 39) < 1e-50);
}
END_TEST

enum { KN_BINS = 40, KN_SAMPLES = 400000 };

/* The chi^2 p-value of KN_SAMPLES sampled angles at e keV against the
 * Klein-Nishina distribution, in KN_BINS bins of cos(theta). */
static double kn_chi2_p(double e, uint64_t *rng, double *chi2_out)
{
    static long counts[KN_BINS];
    memset(counts, 0, sizeof counts);
    for (int i = 0; i < KN_SAMPLES; i++) {
        double c = sim_compton_sample_cos_theta(e, rng);
        tu_check(c >= -1.0 && c <= 1.0);
        int b = (int)((c + 1.0) * 0.5 * KN_BINS);
        counts[b < KN_BINS ? b : KN_BINS - 1]++;
    }
    double expect[KN_BINS], sum = 0.0;
    for (int b = 0; b < KN_BINS; b++) {
        expect[b] = kn_integral(e, -1.0 + 2.0 * b / KN_BINS, -1.0 + 2.0 * (b + 1) / KN_BINS, 64);
        sum += expect[b];
    }
    ck_assert(rel(sum, klein_nishina_total(e)) < 1e-6);
    double chi2 = 0.0;
    for (int b = 0; b < KN_BINS; b++) {
        double x = expect[b] / sum * KN_SAMPLES;
        chi2 += (counts[b] - x) * (counts[b] - x) / x;
    }
    *chi2_out = chi2;
    return chi2_pvalue(chi2, KN_BINS - 1);
}

/* A sampler bias the size of one bin's statistical error gives p far
 * below 1e-10 with 400,000 samples; a correct sampler gives p < 1e-4 in
 * 1 of 10,000 samples. So a p below 1e-4 is confirmed on a second,
 * independent sample before the test fails: a correct sampler then fails
 * 1 run in 10^8 (four calls per run), a biased one still every time. */
static void kn_chi2(double e)
{
    uint64_t rng = tu_rand();
    double chi2 = 0.0, chi2b = 0.0;
    double p = kn_chi2_p(e, &rng, &chi2);
    if (p >= 1e-4)
        return;
    double p2 = kn_chi2_p(e, &rng, &chi2b);
    ck_assert_msg(p2 >= 1e-4, "KN sampling at %g keV: chi2 = %.1f then %.1f for %d dof, p = %.3g then %.3g", e,
                  chi2, chi2b, KN_BINS - 1, p, p2);
}

START_TEST(kn_sampling_662)
{
    kn_chi2(662.0);
}
END_TEST

START_TEST(kn_sampling_100)
{
    kn_chi2(100.0);
}
END_TEST

START_TEST(kn_sampling_other_energies)
{
    kn_chi2(10.0);
    kn_chi2(10000.0);
}
END_TEST

/* ---- transport ---- */

START_TEST(rotation)
{
    for (int i = 0; i < 100000; i++) {
        double d[3];
        if (i % 10 == 0) { /* along +-z, where the general frame degenerates */
            d[0] = i % 20 ? 1e-9 : 0.0;
            d[1] = 0.0;
            d[2] = i % 3 ? 1.0 : -1.0;
            double n = sqrt(d[0] * d[0] + d[2] * d[2]);
            d[0] /= n;
            d[2] /= n;
        } else {
            double w = 2.0 * tu_uniform() - 1.0, ph = 2.0 * PI * tu_uniform(), s = sqrt(1.0 - w * w);
            d[0] = s * cos(ph);
            d[1] = s * sin(ph);
            d[2] = w;
        }
        double old[3] = {d[0], d[1], d[2]};
        double c = 2.0 * tu_uniform() - 1.0;
        transport_rotate(d, c, 2.0 * PI * tu_uniform());
        tu_check(fabs(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - 1.0) < 1e-12);
        tu_check(fabs(d[0] * old[0] + d[1] * old[1] + d[2] * old[2] - c) < 1e-9);
    }
}
END_TEST

static void attenuation(double e, double x)
{
    const int n = 200000;
    uint64_t rng = tu_rand();
    transport_result_t r;
    int pass = 0;
    for (int i = 0; i < n; i++) {
        tu_check(transport_slab(&phys, e, x, &rng, &r) == 0);
        pass += r.primary_unscattered;
        tu_check(!r.primary_unscattered || (r.n_interactions == 0 && r.escaped_kev == e));
    }
    double p = exp(-gexs_linear_attenuation(e) * x);
    double sigma = sqrt(n * p * (1.0 - p));
    ck_assert_msg(fabs(pass - n * p) <= 4.0 * sigma, "%g keV, %g cm: %d of %d pass, exp(-mu x) expects %.1f +- %.1f", e,
                  x, pass, n, n * p, sigma);
}

START_TEST(attenuation_1mev)
{
    attenuation(1000.0, 1.0);
    attenuation(1000.0, 3.0);
}
END_TEST

START_TEST(attenuation_200kev)
{
    attenuation(200.0, 1.0);
    attenuation(200.0, 3.0);
}
END_TEST

START_TEST(transport_conserves_energy)
{
    uint64_t rng = tu_rand();
    transport_result_t r;
    unsigned pairs = 0, photos = 0, comptons = 0, rayleighs = 0;
    for (int i = 0; i < 50000; i++) {
        double e = i % 5 ? log_grid(10.0, 10000.0, (int)tu_below(10000), 10000) : 5000.0;
        double x = log_grid(0.05, 20.0, (int)tu_below(1000), 1000);
        tu_check(transport_slab(&phys, e, x, &rng, &r) == 0);
        tu_check(fabs(r.deposited_kev + r.escaped_kev - e) <= 1e-9 * e);
        tu_check(r.deposited_kev >= 0.0 && r.escaped_kev >= 0.0);
        tu_check(r.n_points <= TRANSPORT_MAX_POINTS && r.n_points <= r.n_interactions);
        double sum = 0.0;
        for (unsigned k = 0; k < r.n_points; k++) {
            const transport_point_t *p = &r.points[k];
            tu_check(p->z >= 0.0 && p->z <= x && p->edep_kev >= 0.0);
            tu_check(p->process >= TRANSPORT_PHOTO && p->process <= TRANSPORT_PAIR);
            tu_check(p->process != TRANSPORT_PAIR || e > GEXS_PAIR_THRESHOLD_KEV);
            pairs += p->process == TRANSPORT_PAIR;
            photos += p->process == TRANSPORT_PHOTO;
            comptons += p->process == TRANSPORT_COMPTON;
            rayleighs += p->process == TRANSPORT_RAYLEIGH;
            sum += p->edep_kev;
        }
        if (r.n_points == r.n_interactions)
            tu_check(fabs(sum - r.deposited_kev) <= 1e-9 * e);
        if (r.primary_unscattered)
            tu_check(r.n_interactions == 0 && r.escaped_kev == e);
    }
    ck_assert(pairs > 100 && photos > 1000 && comptons > 1000 && rayleighs > 100);
    /* Bad arguments. */
    ck_assert_int_eq(transport_slab(&phys, -1.0, 1.0, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(&phys, 100.0, 0.0, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(&phys, NAN, 1.0, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(&phys, 100.0, INFINITY, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(&phys, 100.0, 1.0, NULL, &r), -1);
    ck_assert_int_eq(transport_slab(&phys, 100.0, 1.0, &rng, NULL), -1);
    ck_assert_int_eq(transport_slab(NULL, 100.0, 1.0, &rng, &r), -1);
}
END_TEST

START_TEST(full_energy_thick_slab)
{
    /* 662 keV into 30 cm of Ge, entering at the surface: most photons are
     * fully absorbed, a minority back-scatter out of the front face. */
    uint64_t rng = tu_rand();
    transport_result_t r;
    int full = 0, n = 20000;
    for (int i = 0; i < n; i++) {
        transport_slab(&phys, 661.657, 30.0, &rng, &r);
        full += r.escaped_kev == 0.0;
    }
    ck_assert_msg(full > 0.75 * n && full < 0.97 * n, "full-energy fraction %g", (double)full / n);
}
END_TEST

/* ---- reproducibility ---- */

START_TEST(same_seed_same_results)
{
    enum { N = 3000 };
    static transport_result_t a[N], b[N];
    uint64_t seed = tu_rand();
    uint64_t s1 = seed, s2 = seed;
    for (int i = 0; i < N; i++)
        transport_slab(&phys, 50.0 + 3.3 * i, 0.5 + (i % 7), &s1, &a[i]);
    for (int i = 0; i < N; i++)
        transport_slab(&phys, 50.0 + 3.3 * i, 0.5 + (i % 7), &s2, &b[i]);
    ck_assert_uint_eq(s1, s2);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    uint64_t s3 = seed + 1;
    int differ = 0;
    for (int i = 0; i < N; i++) {
        transport_slab(&phys, 50.0 + 3.3 * i, 0.5 + (i % 7), &s3, &b[i]);
        differ += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    }
    ck_assert(differ > N / 2);
    uint64_t k1 = seed, k2 = seed;
    for (int i = 0; i < 1000; i++)
        tu_check(sim_compton_sample_cos_theta(300.0, &k1) == sim_compton_sample_cos_theta(300.0, &k2));
}
END_TEST

/* ---- Rayleigh scattering ---- */

START_TEST(rayleigh_integral)
{
    /* The sampler's integral of F^2 against Simpson's rule over
     * gexs_form_factor itself, for both materials, in pieces up to x = 80
     * per angstrom (1 MeV's backward scattering). */
    for (int m = 0; m < GEXS_MATERIALS; m++) {
        const sim_rayleigh_t *t = &phys.ff[m];
        const double edges[] = {0.0, 0.005, 0.01, 0.1, 0.3, 1.0, 3.0, 10.0, 80.0};
        double acc = 0.0;
        for (int k = 0; k + 1 < 9; k++) {
            double a = edges[k] * edges[k], b = edges[k + 1] * edges[k + 1], h = (b - a) / 20000, sum = 0.0;
            for (int i = 0; i <= 20000; i++) {
                double f = gexs_form_factor((gexs_material_t)m, sqrt(a + i * h));
                sum += (i == 0 || i == 20000 ? 1.0 : i % 2 ? 4.0 : 2.0) * f * f;
            }
            acc += sum * h / 3.0;
            double got = sim_rayleigh_integral(t, b);
            ck_assert_msg(rel(got, acc) < 1e-6, "%s: integral of F^2 to x = %g: %.9g vs Simpson %.9g",
                          gexs_material_name((gexs_material_t)m), edges[k + 1], got, acc);
        }
        ck_assert_double_eq(sim_rayleigh_integral(t, 0.0), 0.0);
        ck_assert(sim_rayleigh_integral(t, 1e30) >= sim_rayleigh_integral(t, 1e6));
    }
}
END_TEST

enum { RAY_BINS = 30, RAY_SAMPLES = 300000 };

/* The density of u = sin^2(theta/2)/lambda^2 in [0, umax]: (1 + c^2)/2
 * F^2, c = 1 - 2 u / umax; with_ff false: (1 + c^2)/2 alone. */
static double ray_density(gexs_material_t m, double u, double umax, bool with_ff)
{
    double c = 1.0 - 2.0 * u / umax, f = with_ff ? gexs_form_factor(m, sqrt(u)) : 1.0;
    return 0.5 * (1.0 + c * c) * f * f;
}

/* The chi^2 p-value of RAY_SAMPLES angles drawn at e keV in material m
 * (with the form factor, or Thomson's) against the density above, in bins
 * of u holding similar shares. */
static double rayleigh_chi2_p(gexs_material_t m, double e, bool with_ff, uint64_t *rng, double *chi2_out)
{
    const double umax = (e / GEXS_HC_KEV_A) * (e / GEXS_HC_KEV_A);
    /* Edges: equal shares of the integral of F^2 (bisection). */
    double edge[RAY_BINS + 1];
    const sim_rayleigh_t *t = &phys.ff[m];
    double total = with_ff ? sim_rayleigh_integral(t, umax) : umax;
    edge[0] = 0.0;
    edge[RAY_BINS] = umax;
    for (int b = 1; b < RAY_BINS; b++) {
        double want = total * b / RAY_BINS, lo = 0.0, hi = umax;
        for (int it = 0; it < 200; it++) {
            double mid = 0.5 * (lo + hi);
            if ((with_ff ? sim_rayleigh_integral(t, mid) : mid) < want)
                lo = mid;
            else
                hi = mid;
        }
        edge[b] = 0.5 * (lo + hi);
    }
    double expect[RAY_BINS], sum = 0.0;
    for (int b = 0; b < RAY_BINS; b++) {
        const int n = 2000;
        double h = (edge[b + 1] - edge[b]) / n, s = 0.0;
        for (int i = 0; i <= n; i++)
            s += (i == 0 || i == n ? 1.0 : i % 2 ? 4.0 : 2.0) * ray_density(m, edge[b] + i * h, umax, with_ff);
        expect[b] = s * h / 3.0;
        sum += expect[b];
    }
    static long counts[RAY_BINS];
    memset(counts, 0, sizeof counts);
    for (int i = 0; i < RAY_SAMPLES; i++) {
        double c = with_ff ? sim_rayleigh_sample_cos_theta(t, e, rng) : sim_thomson_sample_cos_theta(rng);
        tu_check(c >= -1.0 && c <= 1.0);
        double u = 0.5 * (1.0 - c) * umax;
        int lo = 0, hi = RAY_BINS;
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (edge[mid] <= u)
                lo = mid;
            else
                hi = mid;
        }
        counts[lo]++;
    }
    double chi2 = 0.0;
    for (int b = 0; b < RAY_BINS; b++) {
        double x = expect[b] / sum * RAY_SAMPLES;
        chi2 += (counts[b] - x) * (counts[b] - x) / x;
    }
    *chi2_out = chi2;
    return chi2_pvalue(chi2, RAY_BINS - 1);
}

/* As kn_chi2: a p below 1e-4 is confirmed on a second sample. */
static void rayleigh_chi2(gexs_material_t m, double e, bool with_ff)
{
    uint64_t rng = tu_rand();
    double chi2 = 0.0, chi2b = 0.0;
    double p = rayleigh_chi2_p(m, e, with_ff, &rng, &chi2);
    if (p >= 1e-4)
        return;
    double p2 = rayleigh_chi2_p(m, e, with_ff, &rng, &chi2b);
    ck_assert_msg(p2 >= 1e-4, "Rayleigh sampling (%s, %s) at %g keV: chi2 = %.1f then %.1f for %d dof, p = %.3g then %.3g",
                  gexs_material_name(m), with_ff ? "form factor" : "thomson", e, chi2, chi2b, RAY_BINS - 1, p, p2);
}

START_TEST(rayleigh_form_factor_angles)
{
    rayleigh_chi2(GEXS_GERMANIUM, 30.0, true);
    rayleigh_chi2(GEXS_GERMANIUM, 300.0, true);
    rayleigh_chi2(GEXS_GERMANIUM, 1000.0, true);
    rayleigh_chi2(GEXS_ALUMINIUM, 100.0, true);
    rayleigh_chi2(GEXS_GERMANIUM, 500.0, false);
}
END_TEST

START_TEST(rayleigh_forward)
{
    /* What the form factor does (quartiles of the angle from the form
     * factor by numeric integration): at 1 MeV in germanium half of the
     * Rayleigh scatterings turn by less than 1.74 degrees, at 300 keV by
     * less than 5.45 and at 60 keV by less than 18.4 - where Thomson's
     * (1 + cos^2) alone turns half of them by more than 90 degrees. */
    uint64_t rng = tu_rand();
    const double e[] = {1000.0, 300.0, 60.0}, median_deg[] = {1.74, 5.45, 18.38};
    const int n = 40000;
    for (int k = 0; k < 3; k++) {
        int below = 0;
        for (int i = 0; i < n; i++)
            below += sim_rayleigh_sample_cos_theta(&phys.ff[GEXS_GERMANIUM], e[k], &rng) > cos(median_deg[k] * PI / 180.0);
        /* a binomial half: sigma = 100; 6 sigma */
        ck_assert_msg(abs(below - n / 2) < 600, "%g keV: %d of %d within %g degrees", e[k], below, n, median_deg[k]);
    }
    int backwards = 0;
    for (int i = 0; i < n; i++)
        backwards += sim_thomson_sample_cos_theta(&rng) < 0.0;
    ck_assert_msg(abs(backwards - n / 2) < 600, "thomson: %d of %d backwards", backwards, n);
}
END_TEST

int main(void)
{
    transport_physics_init(&phys, TRANSPORT_RAYLEIGH_FORM_FACTOR);
    Suite *s = suite_create("sim_physics");
    TCase *tc = tcase_create("compton");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sampled_kinematics);
    tcase_add_test(tc, chi2_pvalue_self_test);
    tcase_add_test(tc, kn_sampling_662);
    tcase_add_test(tc, kn_sampling_100);
    tcase_add_test(tc, kn_sampling_other_energies);
    suite_add_tcase(s, tc);
    tc = tcase_create("transport");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, rotation);
    tcase_add_test(tc, attenuation_1mev);
    tcase_add_test(tc, attenuation_200kev);
    tcase_add_test(tc, transport_conserves_energy);
    tcase_add_test(tc, full_energy_thick_slab);
    suite_add_tcase(s, tc);
    tc = tcase_create("rayleigh");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, rayleigh_integral);
    tcase_add_test(tc, rayleigh_form_factor_angles);
    tcase_add_test(tc, rayleigh_forward);
    suite_add_tcase(s, tc);
    tc = tcase_create("reproducibility");
    tcase_add_test(tc, same_seed_same_results);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
