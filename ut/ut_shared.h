/* ut_shared.h - what the UT decoding and Compass tracking's host code and
 * its OpenCL kernels share (internal): the records that cross the
 * host/device boundary, the constants, and every formula of the algorithm
 * (spec §3.3; seed 003 §IV-V), written once.
 *
 * Written in the subset of C both compilers read, with the names of
 * opencl/gpu_common.h. The kernel's embedded source is gpu_common.h, this
 * file and kernels/ut.cl, concatenated by tools/embed-text.sh; the host
 * includes the same files.
 *
 * Exactness: the reference, the fast backend and the kernels give the
 * same hits and tracks bit for bit. The decoding is integer work (counts,
 * offsets, a sort on an integer key) and one float formula per hit; the
 * windows and the tracklets are the functions below, evaluated in the same
 * order on every side, in IEEE single precision without contraction into
 * fused multiply-adds (host files: -ffp-contract=off; kernels: `#pragma
 * OPENCL FP_CONTRACT OFF`) and with a correctly rounded division (the
 * kernels are built with -cl-fp32-correctly-rounded-divide-sqrt, or divide
 * in double, UT_DIV_VIA_DOUBLE, which rounds to the same float). Every
 * constant that takes a division or a square root (1/kick, 1/dz, the
 * windows' widths) is computed once on the host and handed to both sides
 * (ut_params_t, ut_dev_plane_t). Ties are broken by iteration order, which
 * is the same everywhere: the first hit or tracklet wins. */
#ifndef TUSK_UT_SHARED_H
#define TUSK_UT_SHARED_H

#ifndef __OPENCL_VERSION__
#include "opencl/gpu_common.h"
#else
#pragma OPENCL FP_CONTRACT OFF
#if defined(UT_DIV_VIA_DOUBLE) && UT_DIV_VIA_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#endif

#if defined(__OPENCL_VERSION__) && defined(UT_DIV_VIA_DOUBLE) && UT_DIV_VIA_DOUBLE
#define UT_DIV(a, b) ((float)((double)(a) / (double)(b)))
#else
#define UT_DIV(a, b) ((a) / (b))
#endif

#define UT_PLANES 4u            /* UTaX, UTaU, UTbV, UTbX */
#define UT_SLOTS 5u             /* sectors searched a plane, at most */
#define UT_MAX_GROUPS 256u      /* sector groups of the detector (84 by default) */
#define UT_MAX_SECTORS 1024u    /* sectors of the detector (984 by default): 10 bits of the LHCbID */
#define UT_MAX_STRIPS 1024u     /* strips a sector: 10 bits of a hit word */
#define UT_MAX_EVENT_HITS 32767u /* hits an event: window indices are 16 bits (the paper's int16) */
#define UT_WIN_NONE 0xFFFFu     /* an invalid window's first and size (the paper's -1) */
#define UT_NONE 0xFFFFFFFFu
#define UT_LHCBID_TYPE 0xB0000000u /* the detector type in the top 4 bits of an LHCbID (LHCb's UT is 11) */

/* ---- records crossing the host/device boundary ---------------------------------- */

/* A readout sector (a bank's source), as the decoding uses it. 48 bytes. */
typedef struct ut_dev_sector {
    tusk_u32 group;        /* the sector group of its first strip */
    tusk_u32 parts;        /* the sector groups its strips are shared among, equally: 1, 2 or 4 */
    tusk_u32 strips;
    tusk_u32 ykey;         /* the sector's place in y within its column: the sort key's high part */
    tusk_u32 plane;
    tusk_u32 reserved;
    tusk_f32 u_lo;         /* mm: x at y = 0 of strip 0's lower edge (u = x - y dxdy) */
    tusk_f32 qpitch;       /* mm: a quarter of the strip pitch */
    tusk_f32 y_begin, y_end; /* mm: the strips' y range */
    tusk_f32 z;            /* mm: z of the plane (at y = 0) */
    tusk_f32 weight;       /* 1/mm^2: 1 / (sigma of a cluster's x)^2 */
} ut_dev_sector_t;

/* A plane as the tracking uses it. 32 bytes. */
typedef struct ut_dev_plane {
    tusk_u32 first_group;  /* its sector groups: [first_group, first_group + n_groups), in u order */
    tusk_u32 n_groups;
    tusk_f32 z;            /* mm */
    tusk_f32 dxdy;         /* tan of the stereo angle: a strip at u holds the points x = u + y dxdy */
    tusk_f32 win;          /* mm: the x window's half width at this plane (settings) */
    tusk_f32 u_min, u_max; /* mm: the plane's extent in u */
    tusk_f32 y_max;        /* mm: and in |y| */
} ut_dev_plane_t;

/* The tracker's settings as the arithmetic uses them (ut_params_of). 64 bytes. */
typedef struct ut_params {
    tusk_u32 sectors;      /* 1, 3 or 5 */
    tusk_u32 candidates;   /* 1-16 */
    tusk_u32 n_groups;     /* sector groups of the geometry */
    tusk_u32 reserved;
    tusk_f32 z_kick;       /* mm: the magnet's kick plane */
    tusk_f32 z_mid;        /* mm: the fit's reference z */
    tusk_f32 inv_kick;     /* c/GeV per unit slope: q/p = (tx_UT - tx_VELO) inv_kick */
    tusk_f32 max_dtx;      /* the largest |tx_UT - tx_VELO| of a tracklet */
    tusk_f32 kink_tol;     /* mm: the UT segment at z_kick against the VELO track there */
    tusk_f32 hit_tol;      /* mm: a hit in the searched planes against the tracklet's line */
    tusk_f32 y_tol;        /* mm: a strip's y range against the track's y */
    tusk_f32 w_kink;       /* 1/mm^2: the weight of the VELO track's point at z_kick in the fit */
    tusk_f32 max_chi2;     /* a track's chi2 must be below this */
    tusk_f32 pt_min2;      /* GeV^2: a track's pT^2 must be at least this */
    tusk_f32 inv_dz_fwd;   /* 1 / (z2 - z0): the forward pair's slope */
    tusk_f32 inv_dz_bwd;   /* 1 / (z1 - z3): the backward pair's */
} ut_params_t;

/* A VELO track (the state at the end of the VELO). 24 bytes. */
typedef struct ut_dev_velo {
    tusk_f32 x, y, z;
    tusk_f32 tx, ty;
    tusk_u32 flags;        /* UT_VELO_BACKWARD */
} ut_dev_velo_t;
#define UT_VELO_BACKWARD 1u

/* A VELO+UT track. 32 bytes. */
typedef struct ut_dev_track {
    tusk_u32 velo;         /* the VELO track's index in its event */
    tusk_u32 id[4];        /* LHCbID per plane, 0 for none */
    tusk_f32 qop;          /* c/GeV */
    tusk_f32 chi2;
    tusk_u32 n_hits;       /* 3 or 4 */
} ut_dev_track_t;

/* One event of a launch (host to device). 32 bytes. */
typedef struct ut_dev_event {
    tusk_u32 first_bank;   /* its banks in the launch's bank table */
    tusk_u32 n_banks;
    tusk_u32 first_word;   /* its hit words in the launch's word array */
    tusk_u32 n_hits;
    tusk_u32 first_hit;    /* its decoded hits (first_word too: one hit a word) */
    tusk_u32 first_track;  /* its VELO tracks, windows and output tracks */
    tusk_u32 n_tracks;
    tusk_u32 reserved;
} ut_dev_event_t;

TUSK_STATIC_ASSERT(sizeof(ut_dev_sector_t) == 48, "ut_dev_sector_t is 48 bytes");
TUSK_STATIC_ASSERT(sizeof(ut_dev_plane_t) == 32, "ut_dev_plane_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(ut_params_t) == 64, "ut_params_t is 64 bytes");
TUSK_STATIC_ASSERT(sizeof(ut_dev_velo_t) == 24, "ut_dev_velo_t is 24 bytes");
TUSK_STATIC_ASSERT(sizeof(ut_dev_track_t) == 32, "ut_dev_track_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(ut_dev_event_t) == 32, "ut_dev_event_t is 32 bytes");

/* ---- decoding (seed §IV) ------------------------------------------------------------ */

/* A hit word (adf/FORMAT.md): bits 0-9 the strip, 10-11 the quarter. */
TUSK_FN tusk_u32 ut_word_strip(tusk_u32 word)
{
    return word & 0x3FFu;
}

/* The LHCbID of a strip: type 0xB, the sector, the strip. */
TUSK_FN tusk_u32 ut_lhcbid(tusk_u32 sector, tusk_u32 strip)
{
    return UT_LHCBID_TYPE | (sector << 10) | strip;
}
TUSK_FN tusk_u32 ut_lhcbid_sector(tusk_u32 id)
{
    return (id >> 10) & 0x3FFFFu;
}

/* The sector group of a strip of sector s: its strips are shared among
 * `parts` groups side by side, equally. */
TUSK_FN tusk_u32 ut_hit_group(ut_dev_sector_t s, tusk_u32 strip)
{
    return s.group + strip * s.parts / s.strips;
}

/* The order of a group's hits: by y (the sector's place in its column),
 * then by strip, which within a sector is by x. Unique in an event (one
 * cluster a strip, adf/FORMAT.md), so no sort can leave two hits' order
 * open. */
TUSK_FN tusk_u32 ut_sort_key(ut_dev_sector_t s, tusk_u32 strip)
{
    return (s.ykey << 10) | strip;
}

/* x at y = 0 of a hit: the cluster's centre, in quarters of a strip, the
 * middle of its quarter. */
TUSK_FN tusk_f32 ut_hit_x0(ut_dev_sector_t s, tusk_u32 word)
{
    tusk_u32 q = (ut_word_strip(word) << 2) | ((word >> 10) & 3u);
    return s.u_lo + ((tusk_f32)q + 0.5f) * s.qpitch;
}

/* ---- Compass: windows (seed §V-A) -------------------------------------------------- */

/* The VELO track at a plane (a straight line; the kick moves x by up to
 * `win` either way). */
typedef struct ut_extrap {
    tusk_f32 x, y;         /* mm, the straight line at the plane's z */
    tusk_f32 u;            /* x - y dxdy: where a strip through the point crosses y = 0 */
    tusk_f32 win;
} ut_extrap_t;

TUSK_FN ut_extrap_t ut_extrapolate(ut_dev_velo_t v, ut_dev_plane_t pl)
{
    ut_extrap_t e;
    tusk_f32 dz = pl.z - v.z;
    e.x = v.x + v.tx * dz;
    e.y = v.y + v.ty * dz;
    e.u = e.x - e.y * pl.dxdy;
    e.win = pl.win;
    return e;
}

/* Compass's acceptance: a forward track whose line crosses the first and
 * the last plane within their extent (the kick's reach and the tolerance
 * added). Others are skipped (the paper: outside the acceptance or
 * backwards). */
TUSK_FN int ut_track_active(ut_dev_velo_t v, ut_dev_plane_t first, ut_dev_plane_t last, tusk_f32 y_tol)
{
    if (v.flags & UT_VELO_BACKWARD)
        return 0;
    ut_extrap_t a = ut_extrapolate(v, first), b = ut_extrapolate(v, last);
    return a.u >= first.u_min - a.win && a.u <= first.u_max + a.win && b.u >= last.u_min - b.win &&
           b.u <= last.u_max + b.win && a.y >= -(first.y_max + y_tol) && a.y <= first.y_max + y_tol &&
           b.y >= -(last.y_max + y_tol) && b.y <= last.y_max + y_tol;
}

/* The central group of a plane for u: the last whose lower edge is at or
 * below u (the first when u is below them all): a binary search over the
 * groups' lower edges, in u order. */
TUSK_FN tusk_u32 ut_central_group(TUSK_GLOBAL const tusk_f32 *group_u_lo, ut_dev_plane_t pl, tusk_f32 u)
{
    tusk_u32 lo = 0, hi = pl.n_groups;
    while (hi - lo > 1u) {
        tusk_u32 mid = (lo + hi) >> 1;
        if (group_u_lo[pl.first_group + mid] <= u)
            lo = mid;
        else
            hi = mid;
    }
    return pl.first_group + lo;
}

/* The group of slot k (0 the central group, then -1, +1, -2, +2), or -1
 * outside the plane. */
TUSK_FN tusk_i32 ut_slot_group(tusk_u32 central, ut_dev_plane_t pl, tusk_u32 k)
{
    tusk_i32 off = k == 0u ? 0 : (k & 1u) ? -(tusk_i32)((k + 1u) >> 1) : (tusk_i32)(k >> 1);
    tusk_i32 g = (tusk_i32)central + off;
    if (g < (tusk_i32)pl.first_group || g >= (tusk_i32)(pl.first_group + pl.n_groups))
        return -1;
    return g;
}

/* Is hit h (x at y = 0: x0) in the track's x window at the plane? */
TUSK_FN int ut_hit_in_window(tusk_f32 x0, ut_extrap_t e)
{
    tusk_f32 d = x0 - e.u;
    return d >= -e.win && d <= e.win;
}

/* The window of one group [h0, h1) (event hit indices; the group's hits
 * are sorted by ut_sort_key, so their y ranges go up): the hits whose
 * strips reach the track's y within y_tol (two binary searches), then
 * narrowed from both ends to hits in the x window (the refinement of
 * §V-A). *first and *size: the result (size 0 when none). */
TUSK_FN void ut_group_window(TUSK_GLOBAL const tusk_f32 *x0, TUSK_GLOBAL const tusk_f32 *yb,
                             TUSK_GLOBAL const tusk_f32 *ye, tusk_u32 h0, tusk_u32 h1, ut_extrap_t e, tusk_f32 y_tol,
                             tusk_u32 *first, tusk_u32 *size)
{
    tusk_f32 ylo = e.y - y_tol, yhi = e.y + y_tol;
    tusk_u32 lo = h0, hi = h1;
    while (lo < hi) { /* the first hit whose strip ends at or above ylo */
        tusk_u32 mid = (lo + hi) >> 1;
        if (ye[mid] < ylo)
            lo = mid + 1u;
        else
            hi = mid;
    }
    tusk_u32 a = lo;
    hi = h1;
    while (lo < hi) { /* the first hit whose strip begins above yhi */
        tusk_u32 mid = (lo + hi) >> 1;
        if (yb[mid] <= yhi)
            lo = mid + 1u;
        else
            hi = mid;
    }
    tusk_u32 b = lo;
    while (a < b && !ut_hit_in_window(x0[a], e))
        a++;
    while (b > a && !ut_hit_in_window(x0[b - 1u], e))
        b--;
    *first = a;
    *size = b - a;
}

/* The windows of a track in a plane: per slot the first hit (relative to
 * the event's first hit) and the size, UT_WIN_NONE for both when the slot
 * is outside the plane or holds no hit. group_first: the event's group
 * offsets (n_groups + 1, relative to its first hit). */
TUSK_FN void ut_plane_windows(TUSK_GLOBAL const tusk_u32 *group_first, TUSK_GLOBAL const tusk_f32 *group_u_lo,
                              TUSK_GLOBAL const tusk_f32 *x0, TUSK_GLOBAL const tusk_f32 *yb,
                              TUSK_GLOBAL const tusk_f32 *ye, ut_dev_plane_t pl, ut_extrap_t e, tusk_f32 y_tol,
                              tusk_u32 sectors, tusk_u16 *wfirst, tusk_u16 *wsize)
{
    tusk_u32 c = ut_central_group(group_u_lo, pl, e.u);
    for (tusk_u32 k = 0; k < UT_SLOTS; k++) {
        wfirst[k] = (tusk_u16)UT_WIN_NONE;
        wsize[k] = (tusk_u16)UT_WIN_NONE;
        tusk_i32 g = k < sectors ? ut_slot_group(c, pl, k) : -1;
        if (g < 0)
            continue;
        tusk_u32 f, n;
        ut_group_window(x0, yb, ye, group_first[g], group_first[g + 1], e, y_tol, &f, &n);
        if (n > 0u) {
            wfirst[k] = (tusk_u16)f;
            wsize[k] = (tusk_u16)n;
        }
    }
}

/* A mask of the planes with at least one valid window (bit p). */
TUSK_FN tusk_u32 ut_window_planes(const tusk_u16 *wsize)
{
    tusk_u32 m = 0;
    for (tusk_u32 p = 0; p < UT_PLANES; p++)
        for (tusk_u32 k = 0; k < UT_SLOTS; k++)
            if (wsize[p * UT_SLOTS + k] != (tusk_u16)UT_WIN_NONE)
                m |= 1u << p;
    return m;
}

TUSK_FN tusk_u32 ut_popcount4(tusk_u32 m)
{
    return (m & 1u) + ((m >> 1) & 1u) + ((m >> 2) & 1u) + ((m >> 3) & 1u);
}

/* ---- Compass: tracklets (seed §V-B) ------------------------------------------------ */

/* The p-kick fit: the UT hits (x at the track's y, weight, z) and the
 * VELO track's point at z_kick (weight w_kink) on one straight line
 * x = a + b dz, dz = (z - z_mid) / 1000 (metres, for the sums' sake).
 * Returns chi2; *slope is the line's dx/dz. */
TUSK_FN tusk_f32 ut_fit(const tusk_f32 *xs, const tusk_f32 *ws, const tusk_f32 *zs, tusk_u32 n, tusk_f32 x_kink,
                        ut_params_t p, tusk_f32 *slope)
{
    tusk_f32 dzk = (p.z_kick - p.z_mid) * 0.001f;
    tusk_f32 s0 = p.w_kink, s1 = p.w_kink * dzk, s2 = p.w_kink * dzk * dzk;
    tusk_f32 r0 = p.w_kink * x_kink, r1 = p.w_kink * x_kink * dzk;
    for (tusk_u32 i = 0; i < n; i++) {
        tusk_f32 dz = (zs[i] - p.z_mid) * 0.001f;
        s0 = s0 + ws[i];
        s1 = s1 + ws[i] * dz;
        s2 = s2 + ws[i] * dz * dz;
        r0 = r0 + ws[i] * xs[i];
        r1 = r1 + ws[i] * xs[i] * dz;
    }
    tusk_f32 det = s0 * s2 - s1 * s1;
    tusk_f32 a = UT_DIV(r0 * s2 - r1 * s1, det);
    tusk_f32 b = UT_DIV(r1 * s0 - r0 * s1, det);
    tusk_f32 rk = x_kink - (a + b * dzk);
    tusk_f32 chi2 = p.w_kink * rk * rk;
    for (tusk_u32 i = 0; i < n; i++) {
        tusk_f32 dz = (zs[i] - p.z_mid) * 0.001f;
        tusk_f32 r = xs[i] - (a + b * dz);
        chi2 = chi2 + ws[i] * r * r;
    }
    *slope = b * 0.001f;
    return chi2;
}

/* pT >= pt_min for q/p and the slopes, without a root:
 * pT^2 = (tx^2 + ty^2) / (1 + tx^2 + ty^2) / qop^2. */
TUSK_FN int ut_pt_ok(tusk_f32 qop, tusk_f32 tx, tusk_f32 ty, tusk_f32 pt_min2)
{
    tusk_f32 t2 = tx * tx + ty * ty;
    return t2 >= pt_min2 * (qop * qop) * (1.0f + t2);
}

/* The best hit of a searched plane for a tracklet: the one whose x at
 * y = 0 is nearest xpred_u (the tracklet's line at the plane, as a strip
 * coordinate), within hit_tol, the first on a tie; -1 for none. Only
 * hits in the track's x window count. *dbest: its distance. */
TUSK_FN tusk_i32 ut_best_hit(TUSK_GLOBAL const tusk_f32 *x0, const tusk_u16 *wf, const tusk_u16 *ws, tusk_f32 xpred_u,
                             ut_extrap_t e, tusk_f32 hit_tol, tusk_f32 *dbest)
{
    tusk_i32 best = -1;
    tusk_f32 bd = hit_tol;
    for (tusk_u32 k = 0; k < UT_SLOTS; k++) {
        if (ws[k] == (tusk_u16)UT_WIN_NONE)
            continue;
        for (tusk_u32 h = wf[k]; h < (tusk_u32)wf[k] + ws[k]; h++) {
            if (!ut_hit_in_window(x0[h], e))
                continue;
            tusk_f32 d = x0[h] - xpred_u;
            d = d < 0.0f ? -d : d;
            if (d <= bd && (best < 0 || d < bd)) {
                best = (tusk_i32)h;
                bd = d;
            }
        }
    }
    *dbest = bd;
    return best;
}

/* Compass for one track: its windows (wfirst/wsize: UT_PLANES x UT_SLOTS,
 * event-relative), the event's hits (x0, weights, LHCbIDs), the planes.
 * Forward (pair 0-2, search 1 and 3), and backward (pair 3-1, search 2
 * and 0) only when forward found nothing; each pass walks the slots as one
 * range (central sector first); after `candidates` tracklets of 3 or 4
 * hits it stops. The best: more hits, then the lowest chi2 (the first on a
 * tie). 1 and *out filled when a track passes chi2 and pT, else 0. */
TUSK_FN int ut_tracklet(TUSK_GLOBAL const tusk_f32 *x0, TUSK_GLOBAL const tusk_f32 *w, TUSK_GLOBAL const tusk_u32 *id,
                        const tusk_u16 *wfirst, const tusk_u16 *wsize, ut_dev_velo_t v,
                        TUSK_GLOBAL const ut_dev_plane_t *planes, ut_params_t p, ut_dev_track_t *out)
{
    ut_extrap_t e[4];
    tusk_f32 zp[4];
    for (tusk_u32 q = 0; q < UT_PLANES; q++) {
        ut_dev_plane_t pl = planes[q];
        e[q] = ut_extrapolate(v, pl);
        zp[q] = pl.z;
    }
    tusk_f32 x_kink = v.x + v.tx * (p.z_kick - v.z);
    tusk_u32 considered = 0, best_n = 0;
    tusk_f32 best_chi2 = p.max_chi2, best_slope = 0.0f;
    tusk_i32 best_h[4] = {-1, -1, -1, -1};
    for (tusk_u32 dir = 0; dir < 2u && considered < p.candidates; dir++) {
        if (dir == 1u && best_n > 0u)
            break;
        tusk_u32 pa = dir ? 3u : 0u, pb = dir ? 1u : 2u, pc = dir ? 2u : 1u, pd = dir ? 0u : 3u;
        tusk_f32 inv_dz = dir ? p.inv_dz_bwd : p.inv_dz_fwd;
        const tusk_u16 *fa = wfirst + pa * UT_SLOTS, *sa = wsize + pa * UT_SLOTS;
        const tusk_u16 *fb = wfirst + pb * UT_SLOTS, *sb = wsize + pb * UT_SLOTS;
        for (tusk_u32 ka = 0; ka < UT_SLOTS && considered < p.candidates; ka++) {
            if (sa[ka] == (tusk_u16)UT_WIN_NONE)
                continue;
            for (tusk_u32 ha = fa[ka]; ha < (tusk_u32)fa[ka] + sa[ka] && considered < p.candidates; ha++) {
                if (!ut_hit_in_window(x0[ha], e[pa]))
                    continue;
                /* x of the hits at the track's y (their strips are inclined by dxdy) */
                tusk_f32 xa = x0[ha] + (e[pa].x - e[pa].u);
                for (tusk_u32 kb = 0; kb < UT_SLOTS && considered < p.candidates; kb++) {
                    if (sb[kb] == (tusk_u16)UT_WIN_NONE)
                        continue;
                    for (tusk_u32 hb = fb[kb]; hb < (tusk_u32)fb[kb] + sb[kb] && considered < p.candidates; hb++) {
                        if (!ut_hit_in_window(x0[hb], e[pb]))
                            continue;
                        tusk_f32 xb = x0[hb] + (e[pb].x - e[pb].u);
                        tusk_f32 t = (xb - xa) * inv_dz;
                        tusk_f32 dtx = t - v.tx;
                        if (dtx < -p.max_dtx || dtx > p.max_dtx)
                            continue;
                        tusk_f32 dk = xa + t * (p.z_kick - zp[pa]) - x_kink;
                        if (dk < -p.kink_tol || dk > p.kink_tol)
                            continue;
                        /* the searched planes: the line's x there, as a strip coordinate */
                        tusk_f32 dc, dd;
                        tusk_f32 uc = xa + t * (zp[pc] - zp[pa]) - (e[pc].x - e[pc].u);
                        tusk_f32 ud = xa + t * (zp[pd] - zp[pa]) - (e[pd].x - e[pd].u);
                        tusk_i32 hc = ut_best_hit(x0, wfirst + pc * UT_SLOTS, wsize + pc * UT_SLOTS, uc, e[pc],
                                                  p.hit_tol, &dc);
                        tusk_i32 hd = ut_best_hit(x0, wfirst + pd * UT_SLOTS, wsize + pd * UT_SLOTS, ud, e[pd],
                                                  p.hit_tol, &dd);
                        tusk_u32 n = 2u + (hc >= 0 ? 1u : 0u) + (hd >= 0 ? 1u : 0u);
                        if (n < 3u)
                            continue;
                        /* the fit, hits in plane order */
                        tusk_i32 hp[4];
                        hp[pa] = (tusk_i32)ha;
                        hp[pb] = (tusk_i32)hb;
                        hp[pc] = hc;
                        hp[pd] = hd;
                        tusk_f32 xs[4], ws[4], zs[4];
                        tusk_u32 m = 0;
                        for (tusk_u32 q = 0; q < UT_PLANES; q++) {
                            if (hp[q] < 0)
                                continue;
                            xs[m] = x0[hp[q]] + (e[q].x - e[q].u);
                            ws[m] = w[hp[q]];
                            zs[m] = zp[q];
                            m++;
                        }
                        tusk_f32 slope;
                        tusk_f32 chi2 = ut_fit(xs, ws, zs, m, x_kink, p, &slope);
                        considered++;
                        if (chi2 < p.max_chi2 && (n > best_n || (n == best_n && chi2 < best_chi2))) {
                            best_n = n;
                            best_chi2 = chi2;
                            best_slope = slope;
                            for (tusk_u32 q = 0; q < UT_PLANES; q++)
                                best_h[q] = hp[q];
                        }
                    }
                }
            }
        }
    }
    if (best_n == 0u)
        return 0;
    tusk_f32 qop = (best_slope - v.tx) * p.inv_kick;
    if (!ut_pt_ok(qop, v.tx, v.ty, p.pt_min2))
        return 0;
    out->n_hits = best_n;
    for (tusk_u32 q = 0; q < UT_PLANES; q++)
        out->id[q] = best_h[q] >= 0 ? id[best_h[q]] : 0u;
    out->qop = qop;
    out->chi2 = best_chi2;
    return 1;
}

#endif
