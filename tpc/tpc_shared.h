/* tpc_shared.h - what the TPC slice tracker's host code and its OpenCL
 * kernels share (internal): the records that cross the host/device
 * boundary, the constants, and every step of the algorithm (spec §1.3,
 * seed 000 §2.3), written once: the Neighbours Finder, the Neighbours
 * Cleaner, the Start Hits Finder, the Tracklet Constructor with its Kalman
 * filter, and the Tracklet Selector. The reference and fast backends call
 * these functions from C, the kernels from OpenCL C (the thesis's common
 * source, GPUd()/GPUh(), by gpu_common.h's names).
 *
 * Written in the subset of C both compilers read. The kernel's embedded
 * source is opencl/gpu_common.h, this file and kernels/tpc.cl, concatenated
 * by tools/embed-text.sh; the host includes the same files.
 *
 * Exactness: the three backends give the same tracks bit for bit. The
 * integer parts (grid, links, weights, selection) are exact; the floats
 * are computed by the functions below in the same order on both sides, in
 * IEEE single precision without contraction into fused multiply-adds (the
 * host files are compiled with -ffp-contract=off, the kernel has
 * `#pragma OPENCL FP_CONTRACT OFF`), with a correctly rounded division and
 * square root (the kernel is built with
 * -cl-fp32-correctly-rounded-divide-sqrt, or on a device without it
 * divides and takes roots in double, which rounds to the same float) and
 * no other library function: the arc length's asin is a series written
 * here. Which tracklet a start hit becomes is fixed by the start hits'
 * order, (row, cluster), on every backend (spec §1.3 "Determinism"). */
#ifndef TUSK_TPC_SHARED_H
#define TUSK_TPC_SHARED_H

#ifndef __OPENCL_VERSION__
#include <math.h>

#include "opencl/gpu_common.h"
#else
/* Before any formula: OpenCL C contracts a * b + c into a fused
 * multiply-add unless told not to, and the host does not. */
#pragma OPENCL FP_CONTRACT OFF
#if defined(TPC_DIV_VIA_DOUBLE) && TPC_DIV_VIA_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#endif

/* A correctly rounded float division and square root on both sides. */
#if defined(__OPENCL_VERSION__) && defined(TPC_DIV_VIA_DOUBLE) && TPC_DIV_VIA_DOUBLE
#define TPC_DIV(a, b) ((float)((double)(a) / (double)(b)))
#define TPC_SQRT(a) ((float)sqrt((double)(a)))
#elif defined(__OPENCL_VERSION__)
#define TPC_DIV(a, b) ((a) / (b))
#define TPC_SQRT(a) sqrt(a)
#else
#define TPC_DIV(a, b) ((a) / (b))
#define TPC_SQRT(a) sqrtf(a)
#endif

#define TPC_ROWS 159u                /* pad rows a slice (= ADF_TPC_ROWS) */
#define TPC_SLICES 36u               /* (= ADF_TPC_SLICES) */
#define TPC_NONE 0xFFFFu             /* no link, no cluster in a tracklet's row */
#define TPC_MAX_ROW_CLUSTERS 65535u  /* clusters a row (in-row indices are 16 bits, TPC_NONE apart) */
#define TPC_MAX_TRACKLETS 65536u     /* start hits a slice: the cluster weight's low 16 bits */
#define TPC_NF_MAX 32u               /* Neighbours Finder candidates in row r-2, at most (a setting picks <=) */
#define TPC_SEG_MAX 16u              /* tracks from one tracklet, at most (min_hits >= 6 allows 15) */
#define TPC_FIND_MAX 256u            /* clusters the 4-bin search looks at, at most (degenerate input only) */
#define TPC_TAN_EDGE 0.17632698f     /* tan 10 degrees: a slice's half opening */

/* q/pT in c/GeV times this times B in tesla is the curvature in 1/mm;
 * the sign makes d sin(phi) / dx = (q/pT) bzk for bzk = -TPC_CLIGHT B
 * (a positive particle turns clockwise seen from +z in a field along +z). */
#define TPC_CLIGHT 0.299792458e-3f

/* Status bits of a launch on the device. */
#define TPC_STATUS_TRACKLETS 1u      /* a slice has more than TPC_MAX_TRACKLETS start hits */

/* ---- the geometry ----------------------------------------------------------------
 * The rows' slice-local x, the ALICE TPC's pad rows (EXT, tpc/README.md):
 * 63 rows of 7.5 mm from 852.25 mm, 64 of 10 mm from 1351 mm, 32 of 15 mm
 * from 1993.5 mm. Every value is exact in float. */
TUSK_FN tusk_f32 tpc_row_x(tusk_u32 r)
{
    if (r < 63u)
        return 852.25f + 7.5f * (tusk_f32)r;
    if (r < 127u)
        return 1351.0f + 10.0f * (tusk_f32)(r - 63u);
    return 1993.5f + 15.0f * (tusk_f32)(r - 127u);
}

/* ---- records crossing the host/device boundary ---------------------------------- */

/* One row of one slice in a launch: where its clusters and grid are, the
 * grid, and the clusters' compression (seed §2.4.1: y and z as 16 bits
 * over the row's range). 64 bytes. */
typedef struct tpc_row {
    tusk_u32 first;        /* its first cluster in the launch's cluster arrays */
    tusk_u32 n;            /* its clusters, sorted by grid bin */
    tusk_u32 first_bin;    /* its first FirstClusterInBin entry (ny nz + 1 of them) */
    tusk_u32 ny, nz;       /* grid bins in y and z, >= 1 each; bin = iz ny + iy */
    tusk_u32 reserved;
    tusk_f32 x;            /* mm */
    tusk_f32 ymin, ystep;  /* y = ymin + u ystep for the 16-bit u; the grid starts at ymin */
    tusk_f32 zmin, zstep;
    tusk_f32 inv_sy, inv_sz; /* 1 / bin size */
    tusk_f32 reserved_f[3];
} tpc_row_t;

/* One slice of a launch. 32 bytes. */
typedef struct tpc_dev_slice {
    tusk_u32 first_row;    /* its row 0 in the launch's row array */
    tusk_u32 first_cluster;
    tusk_u32 n_clusters;
    tusk_u32 first_start;  /* its first start hit (tracklet) in the launch */
    tusk_u32 n_start;
    tusk_u32 slice;        /* the detector's slice, 0-35 */
    tusk_f32 bzk;          /* -TPC_CLIGHT B: the curvature per q/pT, 1/mm per c/GeV */
    tusk_u32 n_tracklets;  /* tracklets kept (the device counts them) */
} tpc_dev_slice_t;

/* The tracker's settings as the arithmetic uses them (tpc_params_of). 80 bytes. */
typedef struct tpc_params {
    tusk_f32 sy2, sz2;     /* a cluster's variance in y and z, mm^2 */
    tusk_f32 tan_y, tan_z; /* the hit areas' half-widths per mm of row distance */
    tusk_f32 seed_chi2;    /* the seed fit's chi2 per degree of freedom, at most */
    tusk_f32 cluster_chi2; /* a cluster's chi2 (2 degrees of freedom), at most */
    tusk_f32 max_sin_phi;  /* |sin(phi)| above this ends the extrapolation */
    tusk_f32 max_c00;      /* C00 above this (mm^2) ends the extrapolation */
    tusk_f32 init_c22, init_c33, init_c44; /* the seed's starting variances of sin(phi), lambda, q/pT */
    tusk_f32 noise;        /* process noise: added to the variance of sin(phi) and lambda per mm */
    tusk_u32 nf_max;       /* Neighbours Finder candidates in row r-2, <= TPC_NF_MAX */
    tusk_u32 min_seed;     /* a seed's clusters, at least (4) */
    tusk_u32 min_hits;     /* a tracklet's and a track's clusters, at least (10) */
    tusk_u32 max_gap;      /* the extrapolation stops after more rows than this without a cluster (4) */
    tusk_u32 sel_gap;      /* a track segment ends after this many rows without a cluster (5) */
    tusk_u32 reserved[3];
} tpc_params_t;

/* A tracklet (Tracklet Constructor, kept when n_hits > 0): the Kalman
 * filter's state at x, after the backward pass, at the innermost row it
 * has a cluster in; the covariance's lower triangle row by row (C00, C10,
 * C11, C20, ..., C44, as data:tpc_tracks has it). 104 bytes. */
typedef struct tpc_tracklet {
    tusk_f32 x;
    tusk_f32 y, z, sp, lam, qpt;
    tusk_f32 c[15];
    tusk_f32 chi2;
    tusk_u32 n_hits;       /* 0: dropped */
    tusk_u32 first_row, last_row;
    tusk_u32 ndf;
} tpc_tracklet_t;

/* A track the Tracklet Selector made on the device, in tracklet order
 * (the host packs them). 16 bytes. */
typedef struct tpc_sel_track {
    tusk_u32 tracklet;     /* launch index */
    tusk_u32 first_hit;    /* in the launch's hit array: each hit the launch cluster index << 1 | shared */
    tusk_u32 n_hits;
    tusk_u32 first_row;
} tpc_sel_track_t;

/* The launch's counters on the device (words 0, 2, 3 written by the
 * prefix sums). 32 bytes. */
typedef struct tpc_counters {
    tusk_u32 n_start;      /* start hits, all slices */
    tusk_u32 n_tracklets;  /* tracklets kept */
    tusk_u32 n_tracks;     /* tracks selected */
    tusk_u32 n_hits;       /* their clusters */
    tusk_u32 status;       /* TPC_STATUS_* */
    tusk_u32 reserved[3];
} tpc_counters_t;

TUSK_STATIC_ASSERT(sizeof(tpc_row_t) == 64, "tpc_row_t is 64 bytes");
TUSK_STATIC_ASSERT(sizeof(tpc_dev_slice_t) == 32, "tpc_dev_slice_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(tpc_params_t) == 80, "tpc_params_t is 80 bytes");
TUSK_STATIC_ASSERT(sizeof(tpc_tracklet_t) == 104, "tpc_tracklet_t is 104 bytes");
TUSK_STATIC_ASSERT(sizeof(tpc_sel_track_t) == 16, "tpc_sel_track_t is 16 bytes");
TUSK_STATIC_ASSERT(sizeof(tpc_counters_t) == 32, "tpc_counters_t is 32 bytes");

/* ---- clusters: 16-bit coordinates and the grid ------------------------------------ */

TUSK_FN tusk_f32 tpc_cluster_y(const TUSK_GLOBAL tpc_row_t *row, tusk_u32 yz)
{
    return row->ymin + (tusk_f32)(yz & 0xFFFFu) * row->ystep;
}
TUSK_FN tusk_f32 tpc_cluster_z(const TUSK_GLOBAL tpc_row_t *row, tusk_u32 yz)
{
    return row->zmin + (tusk_f32)(yz >> 16) * row->zstep;
}

/* A coordinate's bin along one axis of n bins from lo, clamped into the grid. */
TUSK_FN tusk_u32 tpc_bin_axis(tusk_f32 v, tusk_f32 lo, tusk_f32 inv, tusk_u32 n)
{
    tusk_f32 f = (v - lo) * inv;
    if (!(f >= 1.0f))
        return 0u;
    if (f >= (tusk_f32)n)
        return n - 1u;
    return (tusk_u32)f;
}

/* ---- step I: Neighbours Finder (seed §2.3.1) ----------------------------------------
 * For cluster i of row r (2 <= r <= 156): among the clusters of rows r-2
 * and r+2 inside the hit areas - centred where the line from the origin
 * through the cluster crosses those rows, half-widths tan_y and tan_z per
 * mm of row distance - the pair minimising S = (S+y - S-y)^2 + (S+z -
 * S-z)^2, S(+-)j the slope from the cluster to the other. The first
 * nf_max candidates of each row (in bin order) are taken, which bounds
 * the work whatever the input; ties go to the first pair found. Writes
 * the in-row indices, TPC_NONE when there is no pair (and always at the
 * edge rows 0, 1, 157, 158). */
TUSK_FN void tpc_neighbours(const TUSK_GLOBAL tpc_row_t *rows, tusk_u32 r, tusk_u32 i, const TUSK_GLOBAL tusk_u32 *yz,
                            const TUSK_GLOBAL tusk_u16 *fbin, tpc_params_t p, TUSK_GLOBAL tusk_u16 *up,
                            TUSK_GLOBAL tusk_u16 *dn)
{
    const TUSK_GLOBAL tpc_row_t *row = rows + r;
    tusk_u32 c = row->first + i;
    up[c] = (tusk_u16)TPC_NONE;
    dn[c] = (tusk_u16)TPC_NONE;
    if (r < 2u || r + 2u >= TPC_ROWS)
        return;
    const TUSK_GLOBAL tpc_row_t *rd = rows + r - 2u, *ru = rows + r + 2u;
    if (rd->n == 0u || ru->n == 0u)
        return;
    tusk_u32 v = yz[c];
    tusk_f32 x0 = row->x, y0 = tpc_cluster_y(row, v), z0 = tpc_cluster_z(row, v);
    tusk_f32 sy[TPC_NF_MAX], sz[TPC_NF_MAX];
    tusk_u32 si[TPC_NF_MAX];
    tusk_u32 n = 0, nmax = p.nf_max < TPC_NF_MAX ? p.nf_max : TPC_NF_MAX;
    /* row r-2: the candidates' slopes, once */
    {
        tusk_f32 dx = rd->x - x0;
        tusk_f32 k = TPC_DIV(rd->x, x0), inv = TPC_DIV(1.0f, dx);
        tusk_f32 yp = y0 * k, zp = z0 * k, wy = -dx * p.tan_y, wz = -dx * p.tan_z;
        tusk_u32 iy0 = tpc_bin_axis(yp - wy, rd->ymin, rd->inv_sy, rd->ny);
        tusk_u32 iy1 = tpc_bin_axis(yp + wy, rd->ymin, rd->inv_sy, rd->ny);
        tusk_u32 iz0 = tpc_bin_axis(zp - wz, rd->zmin, rd->inv_sz, rd->nz);
        tusk_u32 iz1 = tpc_bin_axis(zp + wz, rd->zmin, rd->inv_sz, rd->nz);
        for (tusk_u32 iz = iz0; iz <= iz1 && n < nmax; iz++) {
            tusk_u32 b = rd->first_bin + iz * rd->ny;
            tusk_u32 k0 = fbin[b + iy0], k1 = fbin[b + iy1 + 1u];
            for (tusk_u32 k2 = k0; k2 < k1 && n < nmax; k2++) {
                tusk_u32 w = yz[rd->first + k2];
                tusk_f32 dy = tpc_cluster_y(rd, w) - y0, dz = tpc_cluster_z(rd, w) - z0;
                tusk_f32 ey = tpc_cluster_y(rd, w) - yp, ez = tpc_cluster_z(rd, w) - zp;
                if (ey < -wy || ey > wy || ez < -wz || ez > wz)
                    continue;
                sy[n] = dy * inv;
                sz[n] = dz * inv;
                si[n] = k2;
                n++;
            }
        }
    }
    if (n == 0u)
        return;
    /* row r+2: each candidate against every stored one */
    tusk_f32 best = 0.0f;
    tusk_u32 bu = TPC_NONE, bd = TPC_NONE;
    {
        tusk_f32 dx = ru->x - x0;
        tusk_f32 k = TPC_DIV(ru->x, x0), inv = TPC_DIV(1.0f, dx);
        tusk_f32 yp = y0 * k, zp = z0 * k, wy = dx * p.tan_y, wz = dx * p.tan_z;
        tusk_u32 iy0 = tpc_bin_axis(yp - wy, ru->ymin, ru->inv_sy, ru->ny);
        tusk_u32 iy1 = tpc_bin_axis(yp + wy, ru->ymin, ru->inv_sy, ru->ny);
        tusk_u32 iz0 = tpc_bin_axis(zp - wz, ru->zmin, ru->inv_sz, ru->nz);
        tusk_u32 iz1 = tpc_bin_axis(zp + wz, ru->zmin, ru->inv_sz, ru->nz);
        tusk_u32 m = 0;
        for (tusk_u32 iz = iz0; iz <= iz1 && m < nmax; iz++) {
            tusk_u32 b = ru->first_bin + iz * ru->ny;
            tusk_u32 k0 = fbin[b + iy0], k1 = fbin[b + iy1 + 1u];
            for (tusk_u32 k2 = k0; k2 < k1 && m < nmax; k2++) {
                tusk_u32 w = yz[ru->first + k2];
                tusk_f32 ey = tpc_cluster_y(ru, w) - yp, ez = tpc_cluster_z(ru, w) - zp;
                if (ey < -wy || ey > wy || ez < -wz || ez > wz)
                    continue;
                m++;
                tusk_f32 uy = (tpc_cluster_y(ru, w) - y0) * inv, uz = (tpc_cluster_z(ru, w) - z0) * inv;
                for (tusk_u32 j = 0; j < n; j++) {
                    tusk_f32 ay = uy - sy[j], az = uz - sz[j];
                    tusk_f32 s = ay * ay + az * az;
                    if (bu == TPC_NONE || s < best) {
                        best = s;
                        bu = k2;
                        bd = si[j];
                    }
                }
            }
        }
    }
    up[c] = (tusk_u16)bu;
    dn[c] = (tusk_u16)bd;
}

/* ---- step II: Neighbours Cleaner (seed §2.3.2) ---------------------------------------
 * A link is kept only when it is mutual. Reads the finder's links, writes
 * the cleaned pair as one word: up | down << 16. */
TUSK_FN tusk_u32 tpc_link_up(tusk_u32 link)
{
    return link & 0xFFFFu;
}
TUSK_FN tusk_u32 tpc_link_dn(tusk_u32 link)
{
    return link >> 16;
}

TUSK_FN void tpc_clean(const TUSK_GLOBAL tpc_row_t *rows, tusk_u32 r, tusk_u32 i, const TUSK_GLOBAL tusk_u16 *up,
                       const TUSK_GLOBAL tusk_u16 *dn, TUSK_GLOBAL tusk_u32 *link)
{
    tusk_u32 c = rows[r].first + i;
    tusk_u32 u = up[c], d = dn[c];
    if (u != TPC_NONE && dn[rows[r + 2u].first + u] != i)
        u = TPC_NONE;
    if (d != TPC_NONE && up[rows[r - 2u].first + d] != i)
        d = TPC_NONE;
    link[c] = u | (d << 16);
}

/* ---- step III: Start Hits Finder (seed §2.3.3, §6.2.2.9) ------------------------------
 * A start hit has an up link and no down link, and its chain of up links
 * holds at least min_seed clusters. */
TUSK_FN tusk_u32 tpc_is_start(const TUSK_GLOBAL tpc_row_t *rows, tusk_u32 r, tusk_u32 i,
                              const TUSK_GLOBAL tusk_u32 *link, tpc_params_t p)
{
    tusk_u32 l = link[rows[r].first + i];
    if (tpc_link_up(l) == TPC_NONE || tpc_link_dn(l) != TPC_NONE)
        return 0u;
    tusk_u32 count = 1u, k = tpc_link_up(l);
    while (k != TPC_NONE && count < p.min_seed) {
        r += 2u;
        count++;
        k = tpc_link_up(link[rows[r].first + k]);
    }
    return count >= p.min_seed ? 1u : 0u;
}

/* ---- the Kalman filter (seed §2.1.4-2.1.6) ---------------------------------------------
 * The state r = (Y, Z, sin(phi), lambda, q/pT) at x and its full
 * covariance (lower triangle, c[i (i + 1) / 2 + j] = C_ij). The thesis's
 * filter step (eq. 2.29) splits the covariance into the blocks {Y,
 * sin(phi), q/pT} and {Z, lambda}; they stay apart only if the
 * propagation drops Z's dependence on sin(phi) and q/pT through the arc
 * length, which leaves the Z and lambda errors too small (pulls of 1.3 on
 * tusk's events, which have no material noise to hide it). tusk keeps
 * that dependence, the full covariance and the exact gain of the two
 * measurements, which are uncorrelated as eq. 2.29 assumes
 * (tpc/README.md). */

typedef struct tpc_state {
    tusk_f32 x, y, z, sp, lam, qpt;
    tusk_f32 c[15];
    tusk_f32 chi2;
    tusk_i32 ndf;
} tpc_state_t;

/* asin(u) / u for |u| <= 1/4 (the arc over the chord, dS = dl asin(dl k/2) / (dl k/2)),
 * its Taylor series to u^10: relative error below 1e-9 there (a row step
 * of 30 mm at pT 0.05 GeV/c in 0.5 T has u = 0.045). */
TUSK_FN tusk_f32 tpc_asin_ratio(tusk_f32 u)
{
    tusk_f32 u2 = u * u;
    tusk_f32 s = 0.0223721591f;                /* 63/2816 */
    s = 0.0303819444f + u2 * s;                /* 35/1152 */
    s = 0.0446428571f + u2 * s;                /* 5/112 */
    s = 0.075f + u2 * s;                       /* 3/40 */
    s = 0.166666667f + u2 * s;                 /* 1/6 */
    return 1.0f + u2 * s;
}

/* Propagate to x (seed eq. 2.27, its second form; the Jacobian of eq.
 * 2.28 at the current state). 0 when |sin(phi)| is or would be above
 * max_sin_phi or the step's dl k / 2 above 1/4 (a step the series does
 * not cover): the state is then unchanged. */
TUSK_FN int tpc_propagate(tpc_state_t *t, tusk_f32 x, tusk_f32 bzk, tpc_params_t p)
{
    tusk_f32 dx = x - t->x;
    tusk_f32 k = t->qpt * bzk;
    tusk_f32 s0 = t->sp, s1 = s0 + dx * k;
    if (!(s0 <= p.max_sin_phi && s0 >= -p.max_sin_phi && s1 <= p.max_sin_phi && s1 >= -p.max_sin_phi))
        return 0;
    tusk_f32 c0 = TPC_SQRT(1.0f - s0 * s0), c1 = TPC_SQRT(1.0f - s1 * s1);
    tusk_f32 cc = c0 + c1;
    tusk_f32 tg = TPC_DIV(s0 + s1, cc);
    tusk_f32 dy = dx * tg;
    tusk_f32 dl = TPC_SQRT(dx * dx + dy * dy);
    tusk_f32 u = dl * k * 0.5f;
    if (!(u <= 0.25f && u >= -0.25f))
        return 0;
    tusk_f32 ratio = tpc_asin_ratio(u);
    tusk_f32 ds = dl * ratio;
    if (dx < 0.0f)
        ds = -ds;
    /* Jacobian: dY/dsin(phi) = a, dY/d(q/pT) = b, dsin(phi)/d(q/pT) = e,
     * dZ/dlambda = ds, dZ/dsin(phi) = zs and dZ/d(q/pT) = zk through the
     * chord (the asin series' own slope is of second order, left out) */
    tusk_f32 h = TPC_DIV(1.0f + s0 * s1 + c0 * c1, c0 * c1 * cc);
    tusk_f32 a = dx * h;
    tusk_f32 b = TPC_DIV(a * dx * bzk * c0, cc);
    tusk_f32 e = dx * bzk;
    tusk_f32 g = dl > 0.0f ? TPC_DIV(dy * ratio, dl) : 0.0f;
    if (dx < 0.0f)
        g = -g;
    tusk_f32 zs = t->lam * g * a, zk = t->lam * g * b;
    tusk_f32 d = ds;
    t->x = x;
    t->y = t->y + dy;
    t->z = t->z + t->lam * ds;
    t->sp = s1;
    /* C' = J C J^T: P = J C, then C' = P J^T, lower triangle */
    const tusk_f32 *c = t->c;
    tusk_f32 C[5][5];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j <= i; j++) {
            C[i][j] = c[i * (i + 1) / 2 + j];
            C[j][i] = C[i][j];
        }
    tusk_f32 P[5][5];
    for (int j = 0; j < 5; j++) {
        P[0][j] = C[0][j] + a * C[2][j] + b * C[4][j];
        P[1][j] = C[1][j] + zs * C[2][j] + d * C[3][j] + zk * C[4][j];
        P[2][j] = C[2][j] + e * C[4][j];
        P[3][j] = C[3][j];
        P[4][j] = C[4][j];
    }
    tusk_f32 q = p.noise * (ds < 0.0f ? -ds : ds);
    for (int i = 0; i < 5; i++) {
        tusk_f32 v0 = P[i][0] + a * P[i][2] + b * P[i][4];
        tusk_f32 v1 = P[i][1] + zs * P[i][2] + d * P[i][3] + zk * P[i][4];
        tusk_f32 v2 = P[i][2] + e * P[i][4];
        tusk_f32 v[5] = {v0, v1, v2, P[i][3], P[i][4]};
        for (int j = 0; j <= i; j++)
            t->c[i * (i + 1) / 2 + j] = v[j];
    }
    t->c[5] = t->c[5] + q;
    t->c[9] = t->c[9] + q;
    return 1;
}

/* The filter step: when the cluster's chi2 (two measurements,
 * uncorrelated, eq. 2.29) is at most cut, add it and return 1; else 0,
 * the state unchanged. */
TUSK_FN int tpc_filter(tpc_state_t *t, tusk_f32 y, tusk_f32 z, tusk_f32 sy2, tusk_f32 sz2, tusk_f32 cut)
{
    tusk_f32 ry = y - t->y, rz = z - t->z;
    tusk_f32 *c = t->c;
    tusk_f32 s00 = sy2 + c[0], s11 = sz2 + c[2], s10 = c[1];
    tusk_f32 det = s00 * s11 - s10 * s10;
    if (!(det > 0.0f))
        return 0;
    tusk_f32 i00 = TPC_DIV(s11, det), i11 = TPC_DIV(s00, det), i10 = TPC_DIV(-s10, det);
    tusk_f32 chi2 = ry * ry * i00 + 2.0f * ry * rz * i10 + rz * rz * i11;
    if (!(chi2 <= cut))
        return 0;
    /* the columns C_i0 and C_i1 before the update */
    tusk_f32 c0[5] = {c[0], c[1], c[3], c[6], c[10]};
    tusk_f32 c1[5] = {c[1], c[2], c[4], c[7], c[11]};
    tusk_f32 k0[5], k1[5];
    for (int i = 0; i < 5; i++) {
        k0[i] = c0[i] * i00 + c1[i] * i10;
        k1[i] = c0[i] * i10 + c1[i] * i11;
    }
    t->y = t->y + k0[0] * ry + k1[0] * rz;
    t->z = t->z + k0[1] * ry + k1[1] * rz;
    t->sp = t->sp + k0[2] * ry + k1[2] * rz;
    t->lam = t->lam + k0[3] * ry + k1[3] * rz;
    t->qpt = t->qpt + k0[4] * ry + k1[4] * rz;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j <= i; j++)
            c[i * (i + 1) / 2 + j] = c[i * (i + 1) / 2 + j] - (k0[i] * c0[j] + k1[i] * c1[j]);
    t->chi2 = t->chi2 + chi2;
    t->ndf = t->ndf + 2;
    return 1;
}

/* The state at the seed's first cluster (y0, z0 at x0), its direction
 * from the second (y1, z1 at x1): the "arbitrary state with huge
 * variances" of seed §2.1.3, made of the seed's first two clusters;
 * ndf -3 (two measurements, five parameters). */
TUSK_FN void tpc_seed_state(tpc_state_t *t, tusk_f32 x0, tusk_f32 y0, tusk_f32 z0, tusk_f32 x1, tusk_f32 y1,
                            tusk_f32 z1, tpc_params_t p)
{
    tusk_f32 ty = TPC_DIV(y1 - y0, x1 - x0);
    tusk_f32 n = TPC_SQRT(1.0f + ty * ty);
    t->x = x0;
    t->y = y0;
    t->z = z0;
    t->sp = TPC_DIV(ty, n);
    t->lam = TPC_DIV(z1 - z0, (x1 - x0) * n);
    t->qpt = 0.0f;
    for (int i = 0; i < 15; i++)
        t->c[i] = 0.0f;
    t->c[0] = p.sy2;
    t->c[2] = p.sz2;
    t->c[5] = p.init_c22;
    t->c[9] = p.init_c33;
    t->c[14] = p.init_c44;
    t->chi2 = 0.0f;
    t->ndf = -3;
}

/* The cluster of row `row` nearest (y, z) among the 4 grid bins nearest
 * the point (seed §2.3.4 (b)): its in-row index and coordinates, or
 * TPC_NONE. Ties go to the first in bin order; at most TPC_FIND_MAX
 * clusters are looked at (a grid holds about one a bin: only degenerate
 * input reaches it). */
TUSK_FN tusk_u32 tpc_find(const TUSK_GLOBAL tpc_row_t *row, const TUSK_GLOBAL tusk_u32 *yz,
                          const TUSK_GLOBAL tusk_u16 *fbin, tusk_f32 y, tusk_f32 z, tusk_f32 *cy, tusk_f32 *cz)
{
    if (row->n == 0u)
        return TPC_NONE;
    tusk_f32 fy = (y - row->ymin) * row->inv_sy - 0.5f, fz = (z - row->zmin) * row->inv_sz - 0.5f;
    tusk_u32 iy0 = 0u, iz0 = 0u;
    if (row->ny > 1u && fy >= 1.0f)
        iy0 = fy >= (tusk_f32)(row->ny - 2u) ? row->ny - 2u : (tusk_u32)fy;
    if (row->nz > 1u && fz >= 1.0f)
        iz0 = fz >= (tusk_f32)(row->nz - 2u) ? row->nz - 2u : (tusk_u32)fz;
    tusk_u32 iy1 = iy0 + 1u < row->ny ? iy0 + 1u : iy0;
    tusk_u32 iz1 = iz0 + 1u < row->nz ? iz0 + 1u : iz0;
    tusk_u32 best = TPC_NONE, seen = 0;
    tusk_f32 bd = 0.0f;
    for (tusk_u32 iz = iz0; iz <= iz1; iz++) {
        tusk_u32 b = row->first_bin + iz * row->ny;
        tusk_u32 k1 = fbin[b + iy1 + 1u];
        for (tusk_u32 k = fbin[b + iy0]; k < k1 && seen < TPC_FIND_MAX; k++, seen++) {
            tusk_u32 w = yz[row->first + k];
            tusk_f32 ky = tpc_cluster_y(row, w), kz = tpc_cluster_z(row, w);
            tusk_f32 dy = ky - y, dz = kz - z;
            tusk_f32 dd = dy * dy + dz * dz;
            if (best == TPC_NONE || dd < bd) {
                best = k;
                bd = dd;
                *cy = ky;
                *cz = kz;
            }
        }
    }
    return best;
}

/* One row of an extrapolation: propagate, find, filter. 1 when a cluster
 * was added (hits[row] set), 0 when none was, -1 when the extrapolation
 * must stop (the propagation failed or C00 passed max_c00). */
TUSK_FN int tpc_extend(tpc_state_t *t, const TUSK_GLOBAL tpc_row_t *rows, tusk_u32 r, const TUSK_GLOBAL tusk_u32 *yz,
                       const TUSK_GLOBAL tusk_u16 *fbin, tusk_f32 bzk, tpc_params_t p, TUSK_GLOBAL tusk_u16 *hits,
                       tusk_u32 stride)
{
    const TUSK_GLOBAL tpc_row_t *row = rows + r;
    if (!tpc_propagate(t, row->x, bzk, p) || !(t->c[0] <= p.max_c00))
        return -1;
    tusk_f32 cy = 0.0f, cz = 0.0f;
    tusk_u32 k = tpc_find(row, yz, fbin, t->y, t->z, &cy, &cz);
    if (k == TPC_NONE || !tpc_filter(t, cy, cz, p.sy2, p.sz2, p.cluster_chi2))
        return 0;
    hits[r * stride] = (tusk_u16)k;
    return 1;
}

/* ---- step IV: Tracklet Constructor (seed §2.3.4) ------------------------------------------
 * The tracklet of the start hit (row r0, in-row index i0) of a slice
 * whose rows are rows[0..158]: (a) fit the seed (its up links), dropped
 * when its chi2 per degree of freedom passes seed_chi2; (b) extrapolate
 * forward from the row above the seed's last, a row at a time; (c)
 * backward from the row below the seed's last, two rows at a time down to
 * r0 - 1, then a row at a time. (b) and the second part of (c) stop after
 * more than max_gap rows in a row without a cluster. The row-hit array
 * (hits[row * stride], in-row indices) is set first to TPC_NONE (seed
 * §6.2.2.7). A tracklet of fewer than min_hits clusters is dropped
 * (n_hits 0). */
TUSK_FN void tpc_construct(const TUSK_GLOBAL tpc_row_t *rows, const TUSK_GLOBAL tusk_u32 *yz,
                           const TUSK_GLOBAL tusk_u16 *fbin, const TUSK_GLOBAL tusk_u32 *link, tpc_params_t p,
                           tusk_f32 bzk, tusk_u32 r0, tusk_u32 i0, TUSK_GLOBAL tusk_u16 *hits, tusk_u32 stride,
                           TUSK_GLOBAL tpc_tracklet_t *out)
{
    for (tusk_u32 r = 0; r < TPC_ROWS; r++)
        hits[r * stride] = (tusk_u16)TPC_NONE;
    out->n_hits = 0u;
    /* (a) the seed */
    tusk_u32 i1 = tpc_link_up(link[rows[r0].first + i0]);
    tusk_u32 v0 = yz[rows[r0].first + i0], v1 = yz[rows[r0 + 2u].first + i1];
    tpc_state_t t;
    tpc_seed_state(&t, rows[r0].x, tpc_cluster_y(rows + r0, v0), tpc_cluster_z(rows + r0, v0), rows[r0 + 2u].x,
                   tpc_cluster_y(rows + r0 + 2u, v1), tpc_cluster_z(rows + r0 + 2u, v1), p);
    hits[r0 * stride] = (tusk_u16)i0;
    tusk_u32 n = 1u, r = r0, k = i1;
    while (k != TPC_NONE) {
        r += 2u;
        const TUSK_GLOBAL tpc_row_t *row = rows + r;
        tusk_u32 v = yz[row->first + k];
        if (!tpc_propagate(&t, row->x, bzk, p) ||
            !tpc_filter(&t, tpc_cluster_y(row, v), tpc_cluster_z(row, v), p.sy2, p.sz2, 3.0e38f))
            return;
        hits[r * stride] = (tusk_u16)k;
        n++;
        k = tpc_link_up(link[row->first + k]);
    }
    tusk_u32 top = r;
    if (n < 3u || (t.ndf > 0 && t.chi2 > p.seed_chi2 * (tusk_f32)t.ndf))
        return;
    tusk_u32 first = r0, last = top;
    /* (b) forward */
    tusk_u32 gap = 0u;
    for (r = top + 1u; r < TPC_ROWS; r++) {
        int got = tpc_extend(&t, rows, r, yz, fbin, bzk, p, hits, stride);
        if (got < 0)
            break;
        if (got > 0) {
            n++;
            last = r;
            gap = 0u;
        } else if (++gap > p.max_gap)
            break;
    }
    /* (c) backward: the rows the seed skipped, then on down */
    int stop = 0;
    for (r = top - 1u; r + 1u >= r0 && !stop; r -= 2u) {
        int got = tpc_extend(&t, rows, r, yz, fbin, bzk, p, hits, stride);
        if (got < 0)
            stop = 1;
        else if (got > 0) {
            n++;
            if (r < first)
                first = r;
        }
        if (r < 2u)
            break;
    }
    gap = 0u;
    for (r = r0 - 1u; r > 0u && !stop;) {
        r--;
        int got = tpc_extend(&t, rows, r, yz, fbin, bzk, p, hits, stride);
        if (got < 0)
            break;
        if (got > 0) {
            n++;
            first = r;
            gap = 0u;
        } else if (++gap > p.max_gap)
            break;
    }
    if (n < p.min_hits)
        return;
    /* the state at the innermost cluster's row (the backward pass may have
     * gone a few rows further without finding one) */
    if (t.x != rows[first].x)
        tpc_propagate(&t, rows[first].x, bzk, p);
    out->x = t.x;
    out->y = t.y;
    out->z = t.z;
    out->sp = t.sp;
    out->lam = t.lam;
    out->qpt = t.qpt;
    for (int i = 0; i < 15; i++)
        out->c[i] = t.c[i];
    out->chi2 = t.chi2;
    out->ndf = t.ndf > 0 ? (tusk_u32)t.ndf : 0u;
    out->first_row = first;
    out->last_row = last;
    out->n_hits = n;
}

/* The cluster weight of a kept tracklet (seed §2.3.4): its length above
 * its id in the slice, so the longest tracklet wins and ties go to the
 * higher id, whatever the order the weights are written in. */
TUSK_FN tusk_u32 tpc_weight_key(tusk_u32 n_hits, tusk_u32 id)
{
    return (n_hits << 16) | (id & 0xFFFFu);
}

/* ---- step V: Tracklet Selector (seed §2.3.5) ---------------------------------------------
 * Walk the tracklet's rows from its first: a row's cluster is taken when
 * its weight is the tracklet's own key, or as a shared cluster when the
 * segment's shared clusters, this one included, do not outnumber its own
 * ones so far (spec §1.3's reading). A segment ends after sel_gap rows in
 * a row without a cluster taken, or at the last row; one of at least
 * min_hits clusters is a track, and the walk goes on.
 *
 * tpc_select counts: the kept segments (first and last row, clusters),
 * at most TPC_SEG_MAX (min_hits >= 6 keeps them below). tpc_select_emit
 * replays one kept segment and writes its clusters, the launch index << 1
 * | shared, rising rows. Neither writes the row-hit array, so the step can
 * run twice (count, then write into places a prefix sum gives). */
typedef struct tpc_segments {
    tusk_u32 n;
    tusk_u32 total;        /* clusters of all segments */
    tusk_u32 first[TPC_SEG_MAX], last[TPC_SEG_MAX], hits[TPC_SEG_MAX];
} tpc_segments_t;

/* Whether row r's cluster h is taken, given the segment's counts so far
 * (updated when it is). */
TUSK_FN int tpc_take(const TUSK_GLOBAL tpc_row_t *rows, const TUSK_GLOBAL tusk_u32 *weight, tusk_u32 key, tusk_u32 r,
                     tusk_u32 h, tusk_u32 *own, tusk_u32 *shared, tusk_u32 *is_shared)
{
    *is_shared = 0u;
    if (h == TPC_NONE)
        return 0;
    if (weight[rows[r].first + h] == key) {
        *own = *own + 1u;
        return 1;
    }
    if (*shared + 1u <= *own) {
        *shared = *shared + 1u;
        *is_shared = 1u;
        return 1;
    }
    return 0;
}

TUSK_FN void tpc_select(const TUSK_GLOBAL tpc_row_t *rows, const TUSK_GLOBAL tusk_u32 *weight, tusk_u32 key,
                        tusk_u32 first_row, tusk_u32 last_row, tpc_params_t p, const TUSK_GLOBAL tusk_u16 *hits,
                        tusk_u32 stride, tpc_segments_t *seg)
{
    seg->n = 0u;
    seg->total = 0u;
    tusk_u32 own = 0u, shared = 0u, gap = 0u, start = first_row, end = first_row, sh = 0u;
    for (tusk_u32 r = first_row; r <= last_row; r++) {
        if (tpc_take(rows, weight, key, r, hits[r * stride], &own, &shared, &sh)) {
            if (own + shared == 1u)
                start = r;
            end = r;
            gap = 0u;
        } else
            gap++;
        if (gap >= p.sel_gap || r == last_row) {
            tusk_u32 got = own + shared;
            if (got >= p.min_hits && seg->n < TPC_SEG_MAX) {
                seg->first[seg->n] = start;
                seg->last[seg->n] = end;
                seg->hits[seg->n] = got;
                seg->n++;
                seg->total += got;
            }
            own = shared = gap = 0u;
        }
    }
}

TUSK_FN tusk_u32 tpc_select_emit(const TUSK_GLOBAL tpc_row_t *rows, const TUSK_GLOBAL tusk_u32 *weight, tusk_u32 key,
                                 tusk_u32 first, tusk_u32 last, const TUSK_GLOBAL tusk_u16 *hits, tusk_u32 stride,
                                 TUSK_GLOBAL tusk_u32 *out)
{
    tusk_u32 own = 0u, shared = 0u, sh = 0u, n = 0u;
    for (tusk_u32 r = first; r <= last; r++) {
        tusk_u32 h = hits[r * stride];
        if (tpc_take(rows, weight, key, r, h, &own, &shared, &sh))
            out[n++] = (rows[r].first + h) << 1 | sh;
    }
    return n;
}

#endif
