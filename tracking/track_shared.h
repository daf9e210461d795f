/* track_shared.h - what gamma-ray tracking's host code and its OpenCL
 * kernel share (internal): the records that cross the host/device
 * boundary, the constants, the figure of merit of an order and the
 * decoding of a permutation rank, written once.
 *
 * Written in the subset of C both compilers read, with the names of
 * opencl/gpu_common.h. The kernel's embedded source is gpu_common.h, this
 * file and kernels/track.cl, concatenated by tools/embed-text.sh; the host
 * includes this file through tracking_private.h. tests/check_tracking_cl.c
 * compares the records' layout and the constants on both sides.
 *
 * The figure of merit is computed in TRK_R: double on the host (the CPU
 * reference, and the FoM every backend reports), float in the kernel
 * (which only chooses the order). Both evaluate the same expressions in
 * the same order; TRK_C(x) writes a constant in TRK_R. The algorithm is
 * in README.md. */
#ifndef TUSK_TRACK_SHARED_H
#define TUSK_TRACK_SHARED_H

#ifndef __OPENCL_VERSION__
#include <math.h>

#include "opencl/gpu_common.h"
#endif

#ifdef __OPENCL_VERSION__
#define TRK_R float
#define TRK_C_(x) x##f
#else
#define TRK_R double
#define TRK_C_(x) x
#endif
#define TRK_C(x) TRK_C_(x)

/* A function of the figure of merit's inner loop that the host's
 * compiler must inline as the kernel's does (trk_angle_parts: its
 * results through pointers, which a call would cost in the search). */
#ifdef __OPENCL_VERSION__
#define TRK_INLINE TUSK_FN
#else
#define TRK_INLINE TUSK_FN __attribute__((always_inline))
#endif

/* Points of a cluster at most (TRACK_MAX_CLUSTER of tusk/track.h:
 * 8! = 40320 orders); a rank no order has. */
#define TRK_MAX_POINTS 8
#define TRK_NO_RANK 0xFFFFFFFFu

/* ln mu (1/mm) of germanium for the total, Compton and photo-absorption
 * coefficients, one table each of TRK_TABLE_N entries (one after the
 * other: mu[kind * TRK_TABLE_N + entry]) at energies evenly spaced in ln E
 * from TRK_TABLE_E_MIN to TRK_TABLE_E_MAX keV (tracker.c makes them from
 * tusk/gexs.h, which interpolates NIST XCOM log-log; this finer resampling
 * is what both sides interpolate, linearly in ln E, clamped at the ends). */
#define TRK_TABLE_N 512
#define TRK_TABLE_E_MIN 10.0
#define TRK_TABLE_E_MAX 10000.0
#define TRK_MU_TOTAL 0
#define TRK_MU_COMPTON 1
#define TRK_MU_PHOTO 2

/* Guard against coincident points in the angular uncertainty, mm^2. */
#define TRK_EPS_MM2 TRK_C(1e-3)

/* One point of a cluster as the kernel reads it (16 bytes): position in
 * the array's frame (mm) and energy (keV). A cluster's points take
 * TRK_MAX_POINTS records, those past its size unused. */
typedef struct trk_dev_point {
    tusk_f32 x, y, z;
    tusk_f32 energy;
} trk_dev_point_t;

/* What the kernel returns for a cluster (8 bytes). */
typedef struct trk_dev_result {
    tusk_u32 rank;     /* the best order's rank (the lowest among equal FoMs) */
    tusk_u32 fom_bits; /* its FoM in float, as bits (+inf: no order had a number) */
} trk_dev_result_t;

TUSK_STATIC_ASSERT(sizeof(trk_dev_point_t) == 16, "trk_dev_point_t is 16 bytes");
TUSK_STATIC_ASSERT(sizeof(trk_dev_result_t) == 8, "trk_dev_result_t is 8 bytes");

/* ---- permutations: ranks in lexicographic order ------------------------------------ */

/* n! for n <= 12. */
TUSK_FN tusk_u32 trk_factorial(unsigned n)
{
    tusk_u32 f = 1;
    for (unsigned i = 2; i <= n; i++)
        f *= i;
    return f;
}

/* The order of rank `rank` (< n!) of n <= TRK_MAX_POINTS points (the
 * factorial number system): perm[0 .. n - 1]. */
TUSK_FN void trk_perm_of_rank(unsigned n, tusk_u32 rank, unsigned *perm)
{
    unsigned avail[TRK_MAX_POINTS];
    for (unsigned i = 0; i < n; i++)
        avail[i] = i;
    tusk_u32 f = trk_factorial(n);
    for (unsigned i = 0; i < n; i++) {
        f /= n - i; /* (n - 1 - i)! */
        const unsigned d = (unsigned)(rank / f);
        rank -= d * f;
        perm[i] = avail[d];
        for (unsigned j = d; j + 1 < n - i; j++)
            avail[j] = avail[j + 1];
    }
}

/* ---- the figure of merit -------------------------------------------------------------- */

/* What the figure of merit takes besides the points, each side in its
 * TRK_R (not a record that crosses the boundary: the kernel gets the
 * values as arguments). */
typedef struct trk_setup {
    TRK_R inner;           /* mm from the target where germanium starts */
    TRK_R w0, w1;          /* position resolution: sigma = w0 + w1 sqrt(100 keV / E), mm */
    TRK_R ln_e0, inv_step; /* ln E of the tables' first entry, 1 / their step in ln E */
    TRK_R mec2;            /* the electron's rest energy, keV */
} trk_setup_t;

/* A cluster's points as the figure of merit uses them. */
typedef struct trk_geo {
    unsigned n;
    TRK_R p[TRK_MAX_POINTS][3];
    TRK_R e[TRK_MAX_POINTS];     /* keV */
    TRK_R s2[TRK_MAX_POINTS];    /* sigma^2, mm^2 */
    TRK_R depth[TRK_MAX_POINTS]; /* germanium before the point, coming from the target */
    TRK_R e0;                    /* the points' energy sum */
} trk_geo_t;

/* Append a point (start with n = 0 and e0 = 0). */
TUSK_FN void trk_geo_add(trk_geo_t *g, const trk_setup_t *su, TRK_R x, TRK_R y, TRK_R z, TRK_R energy)
{
    const unsigned i = g->n++;
    g->p[i][0] = x;
    g->p[i][1] = y;
    g->p[i][2] = z;
    g->e[i] = energy;
    g->e0 += energy;
    const TRK_R s = su->w0 + su->w1 * sqrt(TRK_C(100.0) / energy);
    g->s2[i] = s * s;
    const TRK_R r = sqrt(x * x + y * y + z * z);
    g->depth[i] = r > su->inner ? r - su->inner : TRK_C(0.0);
}

/* The germanium on the straight path from point a to point b: its
 * length less the stretch of it inside the sphere of radius inner about
 * the target (the empty inside of the shell, where germanium starts for
 * the first point too). A path between neighbouring points is all
 * germanium; one across the array (a photon scattered back to the other
 * side, which recombination joins) counts the germanium it leaves and
 * enters, not the empty middle. */
TUSK_FN TRK_R trk_dist(const trk_geo_t *g, const trk_setup_t *su, unsigned a, unsigned b)
{
    const TRK_R dx = g->p[b][0] - g->p[a][0], dy = g->p[b][1] - g->p[a][1], dz = g->p[b][2] - g->p[a][2];
    const TRK_R dd = dx * dx + dy * dy + dz * dz, d = sqrt(dd);
    /* |a + t (b - a)|^2 - inner^2 = dd t^2 + 2 h t + c, t in [0, 1] */
    const TRK_R h = g->p[a][0] * dx + g->p[a][1] * dy + g->p[a][2] * dz;
    const TRK_R c = g->p[a][0] * g->p[a][0] + g->p[a][1] * g->p[a][1] + g->p[a][2] * g->p[a][2] - su->inner * su->inner;
    const TRK_R disc = h * h - dd * c;
    if (!(dd > TRK_C(0.0)) || !(disc > TRK_C(0.0)))
        return d;
    const TRK_R s = sqrt(disc);
    TRK_R t0 = (-h - s) / dd, t1 = (-h + s) / dd;
    t0 = t0 > TRK_C(0.0) ? t0 : TRK_C(0.0);
    t1 = t1 < TRK_C(1.0) ? t1 : TRK_C(1.0);
    return t1 > t0 ? d * (TRK_C(1.0) - (t1 - t0)) : d;
}

/* ln mu (1/mm) of the three tables at energy e, linear in ln E, clamped
 * at the ends (NaN takes the first entry). */
TUSK_FN void trk_lookup(TUSK_GLOBAL const TRK_R *mu, const trk_setup_t *su, TRK_R e, TRK_R *lt, TRK_R *lc,
                        TRK_R *lp)
{
    TRK_R x = (log(e) - su->ln_e0) * su->inv_step;
    if (!(x > TRK_C(0.0)))
        x = TRK_C(0.0);
    if (x > (TRK_R)(TRK_TABLE_N - 1))
        x = (TRK_R)(TRK_TABLE_N - 1);
    int i = (int)x;
    if (i > TRK_TABLE_N - 2)
        i = TRK_TABLE_N - 2;
    const TRK_R f = x - (TRK_R)i;
    TUSK_GLOBAL const TRK_R *t = mu + TRK_MU_TOTAL * TRK_TABLE_N, *c = mu + TRK_MU_COMPTON * TRK_TABLE_N,
                            *p = mu + TRK_MU_PHOTO * TRK_TABLE_N;
    *lt = t[i] + f * (t[i + 1] - t[i]);
    *lc = c[i] + f * (c[i + 1] - c[i]);
    *lp = p[i] + f * (p[i + 1] - p[i]);
}

/* The parts of the scattering term at point v, coming from a (-1: the
 * target) and going to b, energies e_in before and e_out after: *d the
 * angle from positions less the angle from energies, *excess how far the
 * energies are beyond the Compton edge (in cos), *var the angular variance
 * from the points' position resolution. */
TRK_INLINE void trk_angle_parts(const trk_geo_t *g, TRK_R mec2, int a, unsigned v, unsigned b, TRK_R e_in, TRK_R e_out,
                                TRK_R *d, TRK_R *excess, TRK_R *var)
{
    TRK_R A[3], B[3];
    for (int k = 0; k < 3; k++) {
        A[k] = g->p[v][k] - (a < 0 ? TRK_C(0.0) : g->p[a][k]);
        B[k] = g->p[b][k] - g->p[v][k];
    }
    const TRK_R dot = A[0] * B[0] + A[1] * B[1] + A[2] * B[2];
    const TRK_R cx = A[1] * B[2] - A[2] * B[1], cy = A[2] * B[0] - A[0] * B[2], cz = A[0] * B[1] - A[1] * B[0];
    const TRK_R theta_p = atan2(sqrt(cx * cx + cy * cy + cz * cz), dot);
    TRK_R c = TRK_C(1.0) - mec2 * (TRK_C(1.0) / e_out - TRK_C(1.0) / e_in);
    TRK_R ex = TRK_C(0.0);
    if (c < TRK_C(-1.0)) {
        ex = TRK_C(-1.0) - c;
        c = TRK_C(-1.0);
    } else if (c > TRK_C(1.0)) {
        ex = c - TRK_C(1.0);
        c = TRK_C(1.0);
    }
    const TRK_R theta_e = acos(c);
    const TRK_R a2 = A[0] * A[0] + A[1] * A[1] + A[2] * A[2] + TRK_EPS_MM2;
    const TRK_R b2 = B[0] * B[0] + B[1] * B[1] + B[2] * B[2] + TRK_EPS_MM2;
    *var = ((a < 0 ? TRK_C(0.0) : g->s2[a]) + g->s2[v]) / a2 + (g->s2[v] + g->s2[b]) / b2;
    *d = theta_p - theta_e;
    *excess = ex;
}

/* The scattering term at point v (trk_angle_parts): half the squared
 * difference of the angles from positions and from energies (plus the
 * excess beyond the Compton edge) over the angular variance. */
TUSK_FN TRK_R trk_angle_term(const trk_geo_t *g, TRK_R mec2, int a, unsigned v, unsigned b, TRK_R e_in, TRK_R e_out)
{
    TRK_R d, excess, var;
    trk_angle_parts(g, mec2, a, v, b, e_in, e_out, &d, &excess, &var);
    return TRK_C(0.5) * (d * d + excess * excess) / var;
}

/* L plus the terms point i adds at its place in an order: the attenuation
 * over the path d to it (from the point v before it, or its depth when it
 * is the first, v = -1), -ln of the interaction's share of the
 * attenuation (Compton, or photo-absorption at the last point), at the
 * energy e before it interacts; then, after the first, the scattering
 * term at v (a before v, -1 the target; e_prev the energy before v). In
 * this order: (L + path) + angle. */
TUSK_FN TRK_R trk_fom_add(TRK_R L, const trk_geo_t *g, TUSK_GLOBAL const TRK_R *mu, const trk_setup_t *su, int a,
                          int v, unsigned i, int last, TRK_R d, TRK_R e, TRK_R e_prev)
{
    TRK_R lt, lc, lp;
    trk_lookup(mu, su, e, &lt, &lc, &lp);
    L = L + (exp(lt) * d + (lt - (last ? lp : lc)));
    if (v >= 0)
        L = L + trk_angle_term(g, su->mec2, a, (unsigned)v, i, e_prev, e);
    return L;
}

/* The figure of merit of a whole order from its terms' sum L: per term. */
TUSK_FN TRK_R trk_fom_end(TRK_R L, unsigned n)
{
    return L / (TRK_R)(2 * n - 1);
}

/* The figure of merit of the order perm of g's points. */
TUSK_FN TRK_R trk_fom_of(const trk_geo_t *g, TUSK_GLOBAL const TRK_R *mu, const trk_setup_t *su, const unsigned *perm)
{
    const unsigned n = g->n;
    TRK_R L = TRK_C(0.0), e = g->e0, e_prev = TRK_C(0.0);
    for (unsigned k = 0; k < n; k++) {
        const unsigned i = perm[k];
        const TRK_R d = k ? trk_dist(g, su, perm[k - 1], i) : g->depth[i];
        L = trk_fom_add(L, g, mu, su, k >= 2 ? (int)perm[k - 2] : -1, k ? (int)perm[k - 1] : -1, i, k == n - 1, d, e,
                        e_prev);
        e_prev = e;
        e -= g->e[i];
    }
    return trk_fom_end(L, n);
}

#endif
