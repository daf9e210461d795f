/* drift.c - carrier drift along the electric field with a field-dependent
 * mobility, stopping at the surfaces. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/drift.h"
#include "base/grow.h"

/* REFERENCE.md, <100>: E0 in V/cm, beta; reference speeds at 1 kV/cm. */
static const double e0_v_per_cm[2] = {507.7, 181.9};
static const double beta_ref[2] = {0.80422, 0.73526};
static const double speed_at_1kv[2] = {0.100, 0.086}; /* mm/ns */

double det_mobility_speed(const det_mobility_t *m, enum det_carrier c, double field)
{
    double r = field / m->e0[c];
    return m->mu0[c] * field / pow(1.0 + pow(r, m->beta[c]), 1.0 / m->beta[c]);
}

void det_mobility_default(det_mobility_t *m)
{
    for (int c = 0; c < 2; c++) {
        m->e0[c] = e0_v_per_cm[c] / 10.0; /* V/mm */
        m->beta[c] = beta_ref[c];
        m->mu0[c] = 1.0;
        /* v is linear in mu0: scale it to the reference speed at 100 V/mm. */
        m->mu0[c] = speed_at_1kv[c] / det_mobility_speed(m, (enum det_carrier)c, 100.0);
    }
}

void det_path_free(det_path_t *p)
{
    free(p->xyz);
    memset(p, 0, sizeof *p);
}

static int push(det_path_t *p, const double x[3], tusk_error_t *err)
{
    if (p->n == p->cap && tusk_grow(&p->xyz, &p->cap, p->n + 1, 3 * sizeof *p->xyz) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    memcpy(p->xyz + 3 * p->n, x, 3 * sizeof *x);
    p->n++;
    return TUSK_OK;
}

/* Velocity (mm/ns) of a carrier at x; false where there is no field. */
static bool velocity(const det_field_t *pot, const det_mobility_t *m, enum det_carrier c, const double x[3],
                     double v[3])
{
    double g[3];
    if (!det_field_gradient(pot, x[0], x[1], x[2], g))
        return false;
    double e = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]); /* |E| = |grad| */
    if (!(e > 1e-6))
        return false;
    /* Holes along E = -grad, electrons against E. */
    double s = det_mobility_speed(m, c, e) / e * (c == DET_HOLE ? -1.0 : 1.0);
    for (int i = 0; i < 3; i++)
        v[i] = s * g[i];
    return true;
}

int det_drift(const det_field_t *pot, const det_crystal_t *crystal, const det_mobility_t *m, enum det_carrier c,
              const double start[3], double dt, size_t max_steps, det_path_t *path, tusk_error_t *err)
{
    path->n = 0;
    path->end = DET_DRIFT_TIMEOUT;
    path->end_electrode = -1;
    if (!det_crystal_inside(crystal, start[0], start[1], start[2]))
        return tusk_error_set(err, TUSK_EINVAL, "drift start (%.2f, %.2f, %.2f) mm is not inside the crystal",
                              start[0], start[1], start[2]);
    double x[3] = {start[0], start[1], start[2]};
    int st = push(path, x, err);
    for (size_t k = 0; !st && k < max_steps; k++) {
        double v1[3], mid[3], v2[3], next[3];
        if (!velocity(pot, m, c, x, v1)) {
            path->end = DET_DRIFT_STUCK;
            return TUSK_OK;
        }
        for (int i = 0; i < 3; i++)
            mid[i] = x[i] + 0.5 * dt * v1[i];
        if (!velocity(pot, m, c, mid, v2))
            memcpy(v2, v1, sizeof v2);
        for (int i = 0; i < 3; i++)
            next[i] = x[i] + dt * v2[i];
        if (det_crystal_inside(crystal, next[0], next[1], next[2])) {
            memcpy(x, next, sizeof x);
            st = push(path, x, err);
            continue;
        }
        /* Crossed the surface during this step: find where (bisection),
         * stop there, and note which surface it was. */
        double in[3], out[3];
        memcpy(in, x, sizeof in);
        memcpy(out, next, sizeof out);
        for (int it = 0; it < 30; it++) {
            double half[3];
            for (int i = 0; i < 3; i++)
                half[i] = 0.5 * (in[i] + out[i]);
            if (det_crystal_inside(crystal, half[0], half[1], half[2]))
                memcpy(in, half, sizeof in);
            else
                memcpy(out, half, sizeof out);
        }
        st = push(path, in, err);
        path->end_electrode = det_crystal_contact_of(crystal, out[0], out[1], out[2]);
        path->end = path->end_electrode >= 0 ? DET_DRIFT_COLLECTED : DET_DRIFT_PASSIVATED;
        return st;
    }
    return st;
}
