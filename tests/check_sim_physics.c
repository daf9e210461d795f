/* check_sim_physics.c - photon physics of the simulation: germanium cross
 * sections against REFERENCE.md, Compton kinematics, Klein-Nishina
 * (analytic total, sampled angles by chi^2), transport in a Ge slab
 * (attenuation exp(-mu x), energy conservation), reproducibility. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "transport.h"
#include "tusk/compton.h"
#include "tusk/gexs.h"
#include "tusk/simrng.h"

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
        double c = i % 2 ? 2.0 * tu_uniform() - 1.0 : compton_sample_cos_theta(e, &(uint64_t){tu_rand()});
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

static void kn_chi2(double e)
{
    uint64_t rng = tu_rand();
    static long counts[KN_BINS];
    memset(counts, 0, sizeof counts);
    for (int i = 0; i < KN_SAMPLES; i++) {
        double c = compton_sample_cos_theta(e, &rng);
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
    double p = chi2_pvalue(chi2, KN_BINS - 1);
    ck_assert_msg(p >= 1e-4, "KN sampling at %g keV: chi2 = %.1f for %d dof, p = %.3g", e, chi2, KN_BINS - 1, p);
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
        tu_check(transport_slab(e, x, &rng, &r) == 0);
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
        tu_check(transport_slab(e, x, &rng, &r) == 0);
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
    ck_assert_int_eq(transport_slab(-1.0, 1.0, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(100.0, 0.0, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(NAN, 1.0, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(100.0, INFINITY, &rng, &r), -1);
    ck_assert_int_eq(transport_slab(100.0, 1.0, NULL, &r), -1);
    ck_assert_int_eq(transport_slab(100.0, 1.0, &rng, NULL), -1);
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
        transport_slab(661.657, 30.0, &rng, &r);
        full += r.escaped_kev == 0.0;
    }
    ck_assert_msg(full > 0.75 * n && full < 0.97 * n, "full-energy fraction %g", (double)full / n);
}
END_TEST

/* ---- reproducibility ---- */

START_TEST(rng_known_values)
{
    /* splitmix64 from state 0 (reference sequence of the published
     * algorithm). */
    uint64_t s = 0;
    ck_assert_uint_eq(sim_rng_next(&s), UINT64_C(0xE220A8397B1DCDAF));
    ck_assert_uint_eq(sim_rng_next(&s), UINT64_C(0x6E789E6AA1B965F4));
    s = tu_rand();
    double sum = 0.0;
    for (int i = 0; i < 1000000; i++) {
        double u = sim_rng_uniform(&s);
        tu_check(u > 0.0 && u < 1.0);
        sum += u;
    }
    ck_assert(fabs(sum / 1e6 - 0.5) < 5.0 * sqrt(1.0 / 12.0 / 1e6));
    /* The extreme outputs map strictly inside (0, 1): states whose next
     * output is all zeros / all ones are found by stepping back. */
    const uint64_t gamma = UINT64_C(0x9E3779B97F4A7C15);
    uint64_t z0 = 0, z1 = 0;
    /* Inverse of splitmix64's output mix, to build the states. */
    for (int w = 0; w < 2; w++) {
        uint64_t v = w ? UINT64_MAX : 0;
        v ^= v >> 31 ^ v >> 62;
        v *= UINT64_C(0x319642B2D24D8EC3);
        v ^= v >> 27 ^ v >> 54;
        v *= UINT64_C(0x96DE1B173F119089);
        v ^= v >> 30 ^ v >> 60;
        *(w ? &z1 : &z0) = v - gamma;
    }
    uint64_t t0 = z0, t1 = z1;
    ck_assert_uint_eq(sim_rng_next(&t0), 0);
    ck_assert_uint_eq(sim_rng_next(&t1), UINT64_MAX);
    t0 = z0;
    t1 = z1;
    double umin = sim_rng_uniform(&t0), umax = sim_rng_uniform(&t1);
    ck_assert(umin > 0.0 && umin < 1e-15);
    ck_assert(umax < 1.0 && umax > 1.0 - 1e-15);
}
END_TEST

START_TEST(same_seed_same_results)
{
    enum { N = 3000 };
    static transport_result_t a[N], b[N];
    uint64_t seed = tu_rand();
    uint64_t s1 = seed, s2 = seed;
    for (int i = 0; i < N; i++)
        transport_slab(50.0 + 3.3 * i, 0.5 + (i % 7), &s1, &a[i]);
    for (int i = 0; i < N; i++)
        transport_slab(50.0 + 3.3 * i, 0.5 + (i % 7), &s2, &b[i]);
    ck_assert_uint_eq(s1, s2);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    uint64_t s3 = seed + 1;
    int differ = 0;
    for (int i = 0; i < N; i++) {
        transport_slab(50.0 + 3.3 * i, 0.5 + (i % 7), &s3, &b[i]);
        differ += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    }
    ck_assert(differ > N / 2);
    uint64_t k1 = seed, k2 = seed;
    for (int i = 0; i < 1000; i++)
        tu_check(compton_sample_cos_theta(300.0, &k1) == compton_sample_cos_theta(300.0, &k2));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_physics");
    TCase *tc = tcase_create("cross_sections");
    tcase_add_test(tc, table_matches_reference);
    tcase_add_test(tc, table_shape);
    tcase_add_test(tc, table_clamps);
    suite_add_tcase(s, tc);
    tc = tcase_create("compton");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, compton_kinematics);
    tcase_add_test(tc, kn_total_and_thomson);
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
    tc = tcase_create("reproducibility");
    tcase_add_test(tc, rng_known_values);
    tcase_add_test(tc, same_seed_same_results);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
