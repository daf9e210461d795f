/* check_field.c - the field solver (detector/field.c): the 37 weighting
 * potentials add up to 1, are 1 on their own contact and 0 on the others
 * and lie within [0, 1]; the core's weighting potential and the electric
 * potential of a long coax against the analytic solutions; the depletion
 * check; convergence failure; agreement between grid steps; gradients
 * against differences of values; the grid accessors and bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tusk/crystal.h"
#include "tusk/field.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* rho/eps per 1e10 cm^-3 in V/mm^2, computed here independently of
 * field.c: q * 1e16 m^-3 / (16 eps0), m^-2 -> mm^-2. */
static double source_per_unit(void)
{
    return 1.602176634e-19 * 1e16 / (16.0 * 8.8541878128e-12) * 1e-6;
}

static det_crystal_t *make_crystal(const det_config_t *cfg)
{
    det_crystal_t *c = NULL;
    tusk_error_t err;
    int rc = det_crystal_new(&c, cfg, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    return c;
}

static det_field_t *solve_potential(const det_crystal_t *c, double h, const det_solve_options_t *o)
{
    det_field_t *f = NULL;
    tusk_error_t err;
    int rc = det_field_solve_potential(&f, c, h, o, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    ck_assert_ptr_nonnull(f);
    return f;
}

static det_field_t *solve_weighting(const det_crystal_t *c, unsigned e, double h)
{
    det_field_t *f = NULL;
    tusk_error_t err;
    int rc = det_field_solve_weighting(&f, c, e, h, NULL, &err);
    ck_assert_msg(rc == TUSK_OK, "electrode %u: %s", e, err.message);
    ck_assert_ptr_nonnull(f);
    return f;
}

/* A random point inside the crystal, at least about `margin` from its
 * surface (checked along the 26 directions to the neighbours of a cube). */
static void inside_point(const det_crystal_t *c, double margin, double p[3])
{
    const det_config_t *cfg = det_crystal_config(c);
    for (;;) {
        p[0] = (2 * tu_uniform() - 1) * cfg->radius;
        p[1] = (2 * tu_uniform() - 1) * cfg->radius;
        p[2] = tu_uniform() * cfg->length;
        bool ok = det_crystal_inside(c, p[0], p[1], p[2]);
        for (int d = 0; ok && margin > 0 && d < 27; d++) {
            int dx = d % 3 - 1, dy = d / 3 % 3 - 1, dz = d / 9 - 1;
            double len = sqrt((double)(dx * dx + dy * dy + dz * dz));
            if (len == 0)
                continue;
            double s = margin / len;
            ok = det_crystal_inside(c, p[0] + s * dx, p[1] + s * dy, p[2] + s * dz);
        }
        if (ok)
            return;
    }
}

/* The segment of a ring and a sector (whatever the numbering). */
static unsigned segment_at(const det_crystal_t *c, unsigned ring, unsigned sector)
{
    for (unsigned e = 0; e < det_crystal_segments(c); e++)
        if (det_crystal_ring_of_segment(c, e) == ring && det_crystal_sector_of_segment(c, e) == sector)
            return e;
    ck_abort_msg("no segment of ring %u, sector %u", ring, sector);
    return 0;
}

/* A long coax: one segment (mantle and front face) and the core, whose
 * hole ends 1 mm behind the front. Far from the front, and up to the
 * passivated back face (zero normal field, as in an infinite coax), the
 * fields are those of an infinite coax. */
static void coax_config(det_config_t *cfg)
{
    det_config_default(cfg);
    cfg->radius = 20;
    cfg->length = 60;
    cfg->hole_radius = 3;
    cfg->hole_front = 1;
    cfg->rings = 1;
    cfg->ring_thickness[0] = 60;
    cfg->sectors = 1;
    cfg->impurity_front = cfg->impurity_back = 1.0;
    cfg->bias = 3000;
    cfg->field_grid = 1;
}

/* ---- weighting potentials ------------------------------------------------ */

START_TEST(weighting_sum_is_one)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    const unsigned ne = det_crystal_electrodes(c);
    ck_assert_uint_eq(ne, 37);
    const double h = 3.0;
    det_field_t *w[37];
    for (unsigned e = 0; e < ne; e++)
        w[e] = solve_weighting(c, e, h);

    size_t nx, ny, nz;
    double step, origin[3];
    det_field_grid(w[0], &nx, &ny, &nz, &step, origin);
    ck_assert(step == h);
    for (unsigned e = 0; e < ne; e++) {
        size_t own = 0;
        for (size_t k = 0; k < nz; k++)
            for (size_t j = 0; j < ny; j++)
                for (size_t i = 0; i < nx; i++) {
                    float v = det_field_node_value(w[e], i, j, k);
                    enum det_node kind = det_field_node_kind(w[e], i, j, k);
                    tu_check(kind == det_field_node_kind(w[0], i, j, k));
                    if (kind == DET_NODE_CONTACT) {
                        double x = origin[0] + (double)i * h, y = origin[1] + (double)j * h,
                               z = origin[2] + (double)k * h;
                        int which = det_crystal_contact_of(c, x, y, z);
                        tu_check(which >= 0);
                        tu_check(v == ((unsigned)which == e ? 1.0f : 0.0f));
                        own += (unsigned)which == e;
                    } else if (kind == DET_NODE_INSIDE) {
                        tu_check(v >= -1e-6f && v <= 1.0f + 1e-6f);
                    }
                }
        ck_assert_msg(own > 0, "electrode %u has no contact nodes", e);
    }

    /* The sum, and each value within [0, 1], at random points anywhere
     * inside (surface cells included). */
    double worst = 0;
    for (int n = 0; n < 500; n++) {
        double p[3];
        inside_point(c, 0.0, p);
        double sum = 0;
        for (unsigned e = 0; e < ne; e++) {
            double v = det_field_value(w[e], p[0], p[1], p[2]);
            tu_check(v >= -1e-6 && v <= 1 + 1e-6);
            sum += v;
        }
        worst = fmax(worst, fabs(sum - 1));
    }
    ck_assert_msg(worst < 1e-3, "sum of the weighting potentials off 1 by %g", worst);

    /* Near the middle of its mantle contact each segment's weighting
     * potential is the largest. */
    for (unsigned s = 0; s < det_crystal_segments(c); s++) {
        unsigned ring = det_crystal_ring_of_segment(c, s), sector = det_crystal_sector_of_segment(c, s);
        double z = 0;
        for (unsigned r = 0; r < ring; r++)
            z += cfg.ring_thickness[r];
        z += cfg.ring_thickness[ring] / 2;
        double a = (cfg.sector_offset_deg + (sector + 0.5) * 360.0 / cfg.sectors) * M_PI / 180;
        double x = (cfg.radius - 4) * cos(a), y = (cfg.radius - 4) * sin(a);
        ck_assert_int_eq(det_crystal_segment_of(c, x, y, z), (int)s);
        unsigned best = 0;
        for (unsigned e = 1; e < ne; e++)
            if (det_field_value(w[e], x, y, z) > det_field_value(w[best], x, y, z))
                best = e;
        ck_assert_msg(best == s, "at the middle of segment %u electrode %u is largest", s, best);
        ck_assert_msg(det_field_value(w[s], x, y, z) > 0.3, "segment %u: %g", s, det_field_value(w[s], x, y, z));
    }
    for (unsigned e = 0; e < ne; e++)
        det_field_destroy(&w[e]);
    ck_assert_ptr_null(w[0]);
    det_crystal_destroy(&c);
}
END_TEST

/* Rotating by one sector maps sector s's weighting potential onto sector
 * s + 1's, up to the Cartesian grid: the contacts' edges are resolved to
 * about h/2, which near an edge (steep there) makes a difference of up
 * to ~0.1 at 2 mm; on average far less. */
START_TEST(weighting_rotates_with_sectors)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    det_field_t *a = solve_weighting(c, segment_at(c, 2, 0), 2.0); /* A3 */
    det_field_t *b = solve_weighting(c, segment_at(c, 2, 1), 2.0); /* B3 */
    double worst = 0, sum2 = 0;
    const int n = 400;
    for (int i = 0; i < n; i++) {
        double p[3];
        inside_point(c, 2.0, p);
        double q[2] = {p[0], p[1]};
        det_crystal_rotate(c, 1, &q[0], &q[1]);
        double d = det_field_value(a, p[0], p[1], p[2]) - det_field_value(b, q[0], q[1], p[2]);
        worst = fmax(worst, fabs(d));
        sum2 += d * d;
    }
    double rms = sqrt(sum2 / n);
    ck_assert_msg(worst < 0.25 && rms < 0.02, "A3 at p and B3 at p turned by 60 degrees differ by %g (rms %g)",
                  worst, rms);
    det_field_destroy(&a);
    det_field_destroy(&b);
    det_crystal_destroy(&c);
}
END_TEST

START_TEST(weighting_coax_analytic)
{
    det_config_t cfg;
    coax_config(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    ck_assert_uint_eq(det_crystal_electrodes(c), 2);
    det_field_t *core = solve_weighting(c, det_crystal_core(c), 1.0);
    det_field_t *seg = solve_weighting(c, 0, 1.0);
    const double R = cfg.radius, rh = cfg.hole_radius;
    double worst = 0, worst_sum = 0;
    for (int n = 0; n < 400; n++) {
        double r = rh + 1 + tu_uniform() * (R - rh - 2), a = 2 * M_PI * tu_uniform();
        double z = 35 + 10 * tu_uniform(); /* mid-length and beyond, away from the front */
        double x = r * cos(a), y = r * sin(a);
        double expect = log(R / r) / log(R / rh);
        double got = det_field_value(core, x, y, z);
        worst = fmax(worst, fabs(got - expect));
        worst_sum = fmax(worst_sum, fabs(got + det_field_value(seg, x, y, z) - 1));
    }
    ck_assert_msg(worst < 0.01, "core weighting potential off ln(R/r)/ln(R/rh) by %g", worst);
    ck_assert_msg(worst_sum < 1e-4, "core + segment off 1 by %g", worst_sum);
    det_field_destroy(&core);
    det_field_destroy(&seg);
    det_crystal_destroy(&c);
}
END_TEST

/* ---- the electric potential ---------------------------------------------- */

START_TEST(potential_coax_analytic)
{
    det_config_t cfg;
    coax_config(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    det_field_t *f = solve_potential(c, 1.0, NULL);
    /* phi(r) = -(a/4) r^2 + A ln r + B, a = rho/eps, phi(rh) = V, phi(R) = 0. */
    const double R = cfg.radius, rh = cfg.hole_radius, V = cfg.bias;
    const double a = source_per_unit() * cfg.impurity_front;
    ck_assert(fabs(a - 11.31) < 0.01);
    const double A = (V + a / 4 * (rh * rh - R * R)) / log(rh / R), B = a / 4 * R * R - A * log(R);
    double worst = 0, worst_field = 0, worst_axial = 0;
    for (int n = 0; n < 400; n++) {
        double r = rh + 1 + tu_uniform() * (R - rh - 2), t = 2 * M_PI * tu_uniform();
        double z = 35 + 10 * tu_uniform();
        double x = r * cos(t), y = r * sin(t);
        double expect = -a / 4 * r * r + A * log(r) + B;
        worst = fmax(worst, fabs(det_field_value(f, x, y, z) - expect));
        if (r >= rh + 2 && r <= R - 2) {
            double g[3];
            ck_assert(det_field_gradient(f, x, y, z, g));
            double dr = (g[0] * x + g[1] * y) / r, dr_expect = -a / 2 * r + A / r;
            worst_field = fmax(worst_field, fabs(dr - dr_expect) / fabs(dr_expect));
            worst_axial = fmax(worst_axial, fabs(g[2]) / fabs(dr_expect));
        }
    }
    ck_assert_msg(worst < 0.01 * V, "potential off the analytic coax by %g V", worst);
    /* Interpolated up to the surfaces, it reaches the contacts' voltages there. */
    for (int n = 0; n < 100; n++) {
        double t = 2 * M_PI * tu_uniform();
        tu_check(fabs(det_field_value(f, rh * cos(t), rh * sin(t), 40) - V) < 0.015 * V);
        tu_check(fabs(det_field_value(f, R * cos(t), R * sin(t), 40)) < 0.015 * V);
    }
    ck_assert_msg(worst_field < 0.03, "radial field off by %.3g (relative)", worst_field);
    ck_assert_msg(worst_axial < 0.01, "axial field %.3g of the radial one", worst_axial);
    /* Without space charge the answer would differ by far more. */
    double r = 11.5, laplace = V * log(R / r) / log(R / rh);
    ck_assert(fabs(det_field_value(f, r, 0, 40) - laplace) > 0.1 * V);
    det_field_destroy(&f);
    det_crystal_destroy(&c);
}
END_TEST

START_TEST(potential_coarse_to_fine)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    det_field_t *coarse = solve_potential(c, 2.0, NULL);
    det_field_t *fine = solve_potential(c, 1.0, NULL);
    double worst = 0, sum2 = 0;
    const int n = 300;
    for (int i = 0; i < n; i++) {
        double p[3];
        inside_point(c, 3.0, p);
        double d = det_field_value(coarse, p[0], p[1], p[2]) - det_field_value(fine, p[0], p[1], p[2]);
        worst = fmax(worst, fabs(d));
        sum2 += d * d;
    }
    double rms = sqrt(sum2 / n);
    ck_assert_msg(worst < 0.01 * cfg.bias && rms < 0.002 * cfg.bias, "h = 2 and h = 1 mm differ by %g V (rms %g V)",
                  worst, rms);
    /* The grid is symmetric about x = 0 and y = 0, and so is the solution. */
    for (int i = 0; i < 100; i++) {
        double p[3];
        inside_point(c, 0.0, p);
        double v = det_field_value(fine, p[0], p[1], p[2]);
        tu_check(fabs(v - det_field_value(fine, -p[0], p[1], p[2])) < 1e-2);
        tu_check(fabs(v - det_field_value(fine, p[0], -p[1], p[2])) < 1e-2);
    }
    det_field_destroy(&coarse);
    det_field_destroy(&fine);
    det_crystal_destroy(&c);
}
END_TEST

/* The gradient (node differences, interpolated) against differences of
 * the interpolated values, for the potential (stored gradients) and a
 * weighting potential (computed when asked). */
START_TEST(gradient_matches_values)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    det_field_t *fields[2] = {solve_potential(c, 2.0, NULL), solve_weighting(c, 9, 2.0)};
    for (int which = 0; which < 2; which++) {
        const det_field_t *f = fields[which];
        double scale = 0, worst = 0;
        for (int n = 0; n < 200; n++) {
            double p[3], g[3], d = 2.0;
            inside_point(c, 7.0, p); /* every node involved in the bulk */
            ck_assert(det_field_gradient(f, p[0], p[1], p[2], g));
            for (int a = 0; a < 3; a++) {
                double q1[3] = {p[0], p[1], p[2]}, q0[3] = {p[0], p[1], p[2]};
                q1[a] += d;
                q0[a] -= d;
                double diff = (det_field_value(f, q1[0], q1[1], q1[2]) - det_field_value(f, q0[0], q0[1], q0[2])) /
                              (2 * d);
                worst = fmax(worst, fabs(diff - g[a]));
                scale = fmax(scale, fabs(diff));
            }
        }
        ck_assert_msg(worst < 0.05 * scale, "%s: gradient off differences by %g (largest %g)",
                      which ? "weighting" : "potential", worst, scale);
    }
    /* E = -grad points from the core (high) to the mantle (0). */
    double g[3];
    ck_assert(det_field_gradient(fields[0], 20, 0, 50, g));
    ck_assert(g[0] < -50);
    det_field_destroy(&fields[0]);
    det_field_destroy(&fields[1]);
    det_crystal_destroy(&c);
}
END_TEST

/* ---- depletion and convergence --------------------------------------------- */

START_TEST(depletion_check)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    det_field_t *f = solve_potential(c, 2.0, NULL);
    tusk_error_t err;
    int rc = det_field_check_depletion(f, cfg.bias, 10.0, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    /* A field minimum no crystal reaches. */
    ck_assert_int_eq(det_field_check_depletion(f, cfg.bias, 1e4, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "deplet");
    ck_assert_msg(strstr(err.message, "V/mm") && strstr(err.message, " mm"), "%s", err.message);
    det_field_destroy(&f);
    det_crystal_destroy(&c);

    /* Too low a bias, then too many impurities. */
    for (int t = 0; t < 2; t++) {
        det_config_default(&cfg);
        if (t == 0)
            cfg.bias = 300;
        else
            cfg.impurity_front = cfg.impurity_back = 3.0;
        c = make_crystal(&cfg);
        f = solve_potential(c, 2.0, NULL);
        ck_assert_int_eq(det_field_check_depletion(f, cfg.bias, 0.0, &err), TUSK_EINVAL);
        tu_assert_error(&err, TUSK_EINVAL, "not fully deplet");
        ck_assert_msg(strstr(err.message, "bias") && strstr(err.message, "too low"), "%s", err.message);
        det_field_destroy(&f);
        det_crystal_destroy(&c);
    }

    /* Only an electric potential can be checked. */
    det_config_default(&cfg);
    c = make_crystal(&cfg);
    f = solve_weighting(c, 0, 4.0);
    ck_assert_int_eq(det_field_check_depletion(f, cfg.bias, 0.0, &err), TUSK_EINVAL);
    det_field_destroy(&f);
    det_crystal_destroy(&c);
}
END_TEST

static void count_lines(void *user, const char *line)
{
    ck_assert_ptr_nonnull(strstr(line, "level"));
    ck_assert_ptr_nonnull(strstr(line, "sweeps"));
    (*(unsigned *)user)++;
}

START_TEST(convergence_limit_and_progress)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    tusk_error_t err;
    det_field_t *f = (det_field_t *)&err; /* must come back NULL */
    det_solve_options_t o;
    memset(&o, 0, sizeof o);
    o.max_sweeps = 3;
    ck_assert_int_eq(det_field_solve_potential(&f, c, 2.0, &o, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "convergence");
    ck_assert_ptr_null(f);
    ck_assert_int_eq(det_field_solve_weighting(&f, c, 5, 2.0, &o, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "3 sweeps");
    ck_assert_ptr_null(f);

    /* One progress line per level; the finest level's convergence. */
    unsigned lines = 0;
    memset(&o, 0, sizeof o);
    o.progress = count_lines;
    o.user = &lines;
    o.tolerance = 1e-6;
    f = solve_potential(c, 2.0, &o);
    ck_assert_uint_eq(lines, 2); /* automatic: 4 mm, 2 mm */
    unsigned sweeps;
    double change;
    det_field_convergence(f, &sweeps, &change);
    ck_assert_uint_gt(sweeps, 10);
    ck_assert(change < 1e-6 * cfg.bias && change >= 0);
    det_field_destroy(&f);
    lines = 0;
    o.levels = 1;
    f = solve_potential(c, 2.0, &o);
    ck_assert_uint_eq(lines, 1);
    det_field_destroy(&f);
    det_field_destroy(&f); /* harmless twice */
    det_field_destroy(NULL);
    det_crystal_destroy(&c);
}
END_TEST

/* ---- the grid ------------------------------------------------------------ */

START_TEST(grid_and_nodes)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    const double h = 2.0;
    det_field_t *f = solve_potential(c, h, NULL);
    size_t nx, ny, nz;
    double step, o[3];
    det_field_grid(f, &nx, &ny, &nz, &step, o);
    ck_assert(step == h);
    /* The bounding box plus one node on every side. */
    ck_assert(o[0] <= -cfg.radius - h + 1e-9 && o[1] <= -cfg.radius - h + 1e-9 && o[2] <= -h + 1e-9);
    ck_assert(o[0] + (double)(nx - 1) * h >= cfg.radius + h - 1e-9);
    ck_assert(o[1] + (double)(ny - 1) * h >= cfg.radius + h - 1e-9);
    ck_assert(o[2] + (double)(nz - 1) * h >= cfg.length + h - 1e-9);
    ck_assert(nx * ny * nz < 200000);

    /* Every node's kind agrees with the geometry; contacts hold their value. */
    size_t counts[3] = {0, 0, 0};
    for (size_t k = 0; k < nz; k++)
        for (size_t j = 0; j < ny; j++)
            for (size_t i = 0; i < nx; i++) {
                double x = o[0] + (double)i * h, y = o[1] + (double)j * h, z = o[2] + (double)k * h;
                enum det_node kind = det_field_node_kind(f, i, j, k);
                float v = det_field_node_value(f, i, j, k);
                tu_check(kind <= DET_NODE_OUTSIDE);
                counts[kind]++;
                if (kind == DET_NODE_INSIDE) {
                    tu_check(det_crystal_inside(c, x, y, z));
                    tu_check(v >= 0 && v <= cfg.bias * (1 + 1e-6));
                } else {
                    tu_check(!det_crystal_inside(c, x, y, z));
                    int e = det_crystal_contact_of(c, x, y, z);
                    tu_check((kind == DET_NODE_CONTACT) == (e >= 0));
                    if (kind == DET_NODE_CONTACT)
                        tu_check(v == ((unsigned)e == det_crystal_core(c) ? (float)cfg.bias : 0.0f));
                    tu_check(isfinite(v));
                }
            }
    ck_assert(counts[0] > 0 && counts[1] > 0 && counts[2] > 0);
    /* About the crystal's volume in inside nodes. */
    double volume = M_PI * cfg.radius * cfg.radius * cfg.length -
                    M_PI * cfg.hole_radius * cfg.hole_radius * (cfg.length - cfg.hole_front);
    ck_assert_msg(fabs((double)counts[0] * h * h * h / volume - 1) < 0.05, "%zu inside nodes", counts[0]);

    ck_assert(isnan(det_field_node_value(f, nx, 0, 0)));
    ck_assert(det_field_node_kind(f, 0, ny, 0) == DET_NODE_OUTSIDE);
    double g[3];
    ck_assert(isnan(det_field_value(f, o[0] - 0.1, 0, 40)));
    ck_assert(isnan(det_field_value(f, 0, 0, o[2] + (double)nz * h)));
    ck_assert(isnan(det_field_value(f, NAN, 0, 40)));
    ck_assert(!det_field_gradient(f, 0, o[1] - 1, 40, g));
    ck_assert(det_field_gradient(f, o[0], o[1], o[2], g)); /* corners of the box are in it */
    ck_assert(isfinite(det_field_value(f, o[0] + (double)(nx - 1) * h, o[1] + (double)(ny - 1) * h,
                                       o[2] + (double)(nz - 1) * h)));
    /* Interpolation reproduces node values at nodes. */
    for (int n = 0; n < 50; n++) {
        size_t i = 1 + tu_below((uint32_t)nx - 2), j = 1 + tu_below((uint32_t)ny - 2),
               k = 1 + tu_below((uint32_t)nz - 2);
        if (det_field_node_kind(f, i, j, k) != DET_NODE_INSIDE)
            continue;
        double v = det_field_value(f, o[0] + (double)i * h, o[1] + (double)j * h, o[2] + (double)k * h);
        tu_check(fabs(v - det_field_node_value(f, i, j, k)) < 1e-3);
    }
    det_field_destroy(&f);
    det_crystal_destroy(&c);
}
END_TEST

START_TEST(bad_arguments)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = make_crystal(&cfg);
    tusk_error_t err;
    det_field_t *f = NULL;
    ck_assert_int_eq(det_field_solve_potential(&f, c, 0.0, NULL, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "grid step");
    ck_assert_int_eq(det_field_solve_potential(&f, c, -1.0, NULL, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_field_solve_potential(&f, c, NAN, NULL, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_field_solve_weighting(&f, c, 37, 2.0, NULL, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "electrode 37");
    det_solve_options_t o;
    memset(&o, 0, sizeof o);
    o.tolerance = -1;
    ck_assert_int_eq(det_field_solve_weighting(&f, c, 0, 2.0, &o, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "tolerance");
    /* A grid beyond any memory. */
    ck_assert_int_eq(det_field_solve_potential(&f, c, 1e-3, NULL, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "nodes");
    ck_assert_ptr_null(f);
    det_crystal_destroy(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("field");
    TCase *tc = tcase_create("weighting");
    tcase_add_test(tc, weighting_sum_is_one);
    tcase_add_test(tc, weighting_rotates_with_sectors);
    tcase_add_test(tc, weighting_coax_analytic);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("potential");
    tcase_add_test(tc, potential_coax_analytic);
    tcase_add_test(tc, potential_coarse_to_fine);
    tcase_add_test(tc, gradient_matches_values);
    tcase_add_test(tc, depletion_check);
    tcase_add_test(tc, convergence_limit_and_progress);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("grid");
    tcase_add_test(tc, grid_and_nodes);
    tcase_add_test(tc, bad_arguments);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
