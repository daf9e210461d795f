/* zfinder.cl - the z-finder on a device (spec §2.3, seed §5-§6; the host
 * side is zfinder/zf_cl.c, the design zfinder/README.md).
 *
 * Prepended when embedded: opencl/gpu_common.h, zfinder/zf_shared.h (the
 * records, zf_window_sum, zf_window_better) and zfinder/zf_real.h
 * (zf_intercept, zf_bin, zf_bin_q, zf_triplet_ok, zf_window_z in ZF_R, the
 * precision's type).
 *
 * Built with these -D constants (zf_cl.c):
 *   ZF_DOUBLE      0 float, 1 double arithmetic
 *   ZF_NBINS       histogram bins
 *   ZF_CAP         points a work-group keeps (its slice and the two neighbours)
 *   ZF_PEAK_WG     work-items of zf_peak (a power of two)
 *   ZF_TRIPLETS    1: a pair counts only with a third point on its line
 *   ZF_SECOND      1: zf_peak also looks for a second vertex
 *   ZF_BARE        1: the roofline variant, the pair loop without histograms
 *   ZF_DIV_VIA_DOUBLE  1 on a float device without a correctly rounded division
 *   ZF_ATOM64      1: zHisto's 64-bit sums by atom_add (cl_khr_int64_base_atomics)
 *
 * A launch covers many RoIs. Its input is one buffer: the RoI records
 * (zf_roi_desc_t), then every RoI's slice starts, then every RoI's points
 * (zf_point_t) sorted by slice. zf_find runs one work-group per (RoI,
 * slice); zf_peak one per RoI. The histograms of a RoI in global memory:
 * nHisto, one 32-bit word a bin, and zHisto's fixed-point sums
 * (zf_shared.h), two words a bin. */
/* FP_CONTRACT OFF and the extensions are switched on in zf_shared.h,
 * before the first formula. */
#pragma OPENCL FP_CONTRACT OFF

/* zHisto's 64-bit fixed-point sums (zf_shared.h) in global memory: two
 * 32-bit words a bin, the low one first (a ulong on the little-endian
 * devices tusk runs on). With cl_khr_int64_base_atomics one atom_add;
 * without, the low word's atomic_add returns what it held, which tells
 * whether it wrapped, and the carry goes to the high word: after the
 * kernel (every add done) the two words hold the exact 64-bit sum
 * whatever the order. */
static void zs_add_global(__global tusk_u32 *w, tusk_u64 v)
{
#if ZF_ATOM64
    atom_add((volatile __global ulong *)w, v);
#else
    tusk_u32 lo = (tusk_u32)v, hi = (tusk_u32)(v >> 32);
    if (lo && atomic_add(&w[0], lo) > 0xFFFFFFFFu - lo)
        hi++;
    if (hi)
        atomic_add(&w[1], hi);
#endif
}

static tusk_u64 zs_get(__global const tusk_u32 *w)
{
    return (tusk_u64)w[0] | (tusk_u64)w[1] << 32;
}

#if ZF_DOUBLE
static tusk_u64 z_bits(double z)
{
    return as_ulong(z);
}
#else
static tusk_u64 z_bits(float z)
{
    return (tusk_u64)as_uint(z);
}
#endif

/* One work-group per (RoI, phi slice): the slice's pairs into the RoI's
 * histograms. */
__kernel void zf_find(__global const uchar *in, tusk_u32 off_slices, tusk_u32 off_points, tusk_u32 n_rois,
                      __global tusk_u32 *g_nh, __global tusk_u32 *g_zs, __global zf_dev_result_t *res, ZF_R z_min,
                      ZF_R inv_bin, ZF_R n_bins, ZF_R tol_z, ZF_R tol_phi)
{
    __local tusk_u32 cnt[ZF_NEIGHBOURS][ZF_LAYER_SLOTS], fill[ZF_NEIGHBOURS][ZF_LAYER_SLOTS];
    __local tusk_u32 off[ZF_NEIGHBOURS][ZF_LAYER_SLOTS];
    __local tusk_u32 ifirst[ZF_LAYER_SLOTS], pfirst[ZF_LAYER_SLOTS];
    __local float lrho[ZF_CAP], lz[ZF_CAP];
#if ZF_TRIPLETS
    __local ZF_R lphi[ZF_CAP];
    __local uchar llayer[ZF_CAP];
#endif
#if !ZF_BARE
    __local tusk_u32 lnh[ZF_NBINS], lzs[ZF_NBINS]; /* nHisto; zHisto's sums, low 32 bits */
#endif
    __local tusk_u32 lentries;

    const tusk_u32 lid = (tusk_u32)get_local_id(0), wg = (tusk_u32)get_local_size(0);
    /* Groups go slice by slice over the launch's RoIs, so the groups that
     * run at the same time belong to many RoIs and their adds into the
     * RoIs' histograms in global memory seldom meet on one bin. */
    const tusk_u32 g = (tusk_u32)get_group_id(0);
    __global const zf_roi_desc_t *rois = (__global const zf_roi_desc_t *)in;
    const tusk_u32 r = g % n_rois, s = g / n_rois;
    const zf_roi_desc_t d = rois[r];
    const tusk_u32 S = d.n_slices;
    __global const tusk_u32 *ss = (__global const tusk_u32 *)(in + off_slices) + d.first_slice;
    __global const zf_point_t *pts = (__global const zf_point_t *)(in + off_points) + d.first_point;

    /* the central slice, the one below, the one above (spec §2.3 step 2);
     * none beyond the RoI's last slice (a RoI with fewer slices than the
     * launch's widest) */
    tusk_u32 first[ZF_NEIGHBOURS], n[ZF_NEIGHBOURS];
    ZF_R shift[ZF_NEIGHBOURS];
    for (int c = 0; c < ZF_NEIGHBOURS; c++) {
        first[c] = 0;
        n[c] = 0;
        shift[c] = (ZF_R)0;
    }
    if (s < S) {
        first[0] = ss[s];
        n[0] = ss[s + 1] - ss[s];
        if (s > 0 || d.wrap) {
            tusk_u32 t = s > 0 ? s - 1 : S - 1;
            first[1] = ss[t];
            n[1] = ss[t + 1] - ss[t];
            if (s == 0)
                shift[1] = -(ZF_R)ZF_TWO_PI_F;
        }
        if (s + 1 < S || d.wrap) {
            tusk_u32 t = s + 1 < S ? s + 1 : 0;
            first[2] = ss[t];
            n[2] = ss[t + 1] - ss[t];
            if (s + 1 == S)
                shift[2] = (ZF_R)ZF_TWO_PI_F;
        }
    }
    const tusk_u32 total = n[0] + n[1] + n[2];
    if (n[0] == 0)
        return; /* no inner point, no pair (or no slice): the whole group leaves */
    if (total > ZF_CAP) {
        if (lid == 0)
            atomic_or(&res[r].status, ZF_STATUS_OVERFLOW);
        return;
    }

    /* Initialisation (seed §5.4.2): per-layer counts of the three slices,
     * their scan into s_ifirst (central slice first in each layer), the
     * points copied into local memory in that order. */
    for (tusk_u32 i = lid; i < ZF_NEIGHBOURS * ZF_LAYER_SLOTS; i += wg) {
        cnt[i / ZF_LAYER_SLOTS][i % ZF_LAYER_SLOTS] = 0;
        fill[i / ZF_LAYER_SLOTS][i % ZF_LAYER_SLOTS] = 0;
    }
    if (lid == 0)
        lentries = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (tusk_u32 i = lid; i < total; i += wg) {
        tusk_u32 c = i < n[0] ? 0u : i < n[0] + n[1] ? 1u : 2u;
        tusk_u32 k = c == 0 ? i : c == 1 ? i - n[0] : i - n[0] - n[1];
        atomic_inc(&cnt[c][pts[first[c] + k].layer]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        tusk_u32 run = 0;
        for (tusk_u32 l = 0; l < ZF_MAX_LAYERS; l++) {
            ifirst[l] = run;
            for (tusk_u32 c = 0; c < ZF_NEIGHBOURS; c++) {
                off[c][l] = run;
                run += cnt[c][l];
            }
        }
        ifirst[ZF_MAX_LAYERS] = run;
        /* s_pfirst: pairs of the layers below L (seed §5.4.4) */
        pfirst[0] = 0;
        for (tusk_u32 l = 0; l < ZF_MAX_LAYERS; l++)
            pfirst[l + 1] = pfirst[l] + cnt[0][l] * (ifirst[ZF_MAX_LAYERS] - ifirst[l + 1]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* (no early return here: every work-item must reach every barrier
     * below, and PoCL is strict about a return between barriers) */
    const tusk_u32 npairs = pfirst[ZF_MAX_LAYERS];
    for (tusk_u32 i = lid; i < total; i += wg) {
        tusk_u32 c = i < n[0] ? 0u : i < n[0] + n[1] ? 1u : 2u;
        tusk_u32 k = c == 0 ? i : c == 1 ? i - n[0] : i - n[0] - n[1];
        zf_point_t p = pts[first[c] + k];
        tusk_u32 pos = off[c][p.layer] + atomic_inc(&fill[c][p.layer]);
        lrho[pos] = p.rho;
        lz[pos] = p.z;
#if ZF_TRIPLETS
        lphi[pos] = (ZF_R)p.phi + shift[c];
        llayer[pos] = (uchar)p.layer;
#endif
    }
#if !ZF_BARE
    for (tusk_u32 b = lid; b < ZF_NBINS; b += wg) {
        lnh[b] = 0;
        lzs[b] = 0;
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    /* The pairs, numbered with one index over all layers (seed §5.4.3-4):
     * pairs of layer L are n_central(L) x nAbove(L), p1 the central
     * point, p2 any point of a higher layer. */
    tusk_u32 entries = 0, l = 0;
    const tusk_u32 all = ifirst[ZF_MAX_LAYERS];
#if !ZF_BARE
    __global tusk_u32 *nh = g_nh + (size_t)r * ZF_NBINS;
    __global tusk_u32 *zs = g_zs + (size_t)r * 2 * ZF_NBINS;
#endif
    for (tusk_u32 pair = lid; pair < npairs; pair += wg) {
        while (pair >= pfirst[l + 1])
            l++;
        const tusk_u32 above = all - ifirst[l + 1];
        tusk_u32 i1 = ifirst[l], i2 = ifirst[l + 1] + (pair - pfirst[l]);
        while (i2 >= all) {
            i1++;
            i2 -= above;
        }
        const ZF_R r1 = (ZF_R)lrho[i1], z1 = (ZF_R)lz[i1], r2 = (ZF_R)lrho[i2], z2 = (ZF_R)lz[i2];
        const ZF_R zv = ZF_FN(zf_intercept)(r1, z1, r2, z2);
        const tusk_i32 b = ZF_FN(zf_bin)(zv, z_min, inv_bin, n_bins);
        if (b < 0)
            continue;
#if ZF_TRIPLETS
        {
            const ZF_R f1 = lphi[i1], f2 = lphi[i2];
            int ok = 0;
            for (tusk_u32 k = ifirst[llayer[i2] + 1]; k < all && !ok; k++)
                ok = ZF_FN(zf_triplet_ok)(r1, f1, z1, r2, f2, z2, (ZF_R)lrho[k], lphi[k], (ZF_R)lz[k], tol_z,
                                          tol_phi);
            if (!ok)
                continue;
        }
#endif
#if ZF_BARE
        entries += (tusk_u32)b + 1u;
#else
        const tusk_u32 q = ZF_FN(zf_bin_q)(zv, z_min, inv_bin, b);
        atomic_inc(&lnh[b]);
        /* the one add that wraps the low word carries its 2^32 over */
        if (atomic_add(&lzs[b], q) > 0xFFFFFFFFu - q)
            zs_add_global(zs + 2 * b, (tusk_u64)1 << 32);
        entries++;
#endif
    }
    if (entries)
        atomic_add(&lentries, entries);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Into the RoI's histograms: only the bins this slice filled. */
#if !ZF_BARE
    for (tusk_u32 b = lid; b < ZF_NBINS; b += wg) {
        tusk_u32 c = lnh[b], z = lzs[b];
        if (c)
            atomic_add(&nh[b], c);
        if (z)
            zs_add_global(zs + 2 * b, z);
    }
#endif
    if (lid == 0) {
        atomic_add(&res[r].pairs, npairs);
        atomic_add(&res[r].entries, lentries);
    }
}

/* One work-group per RoI: the densest window of three bins (the lowest on
 * ties), z0 from it, then optionally the second vertex with the window
 * cleared (seed §3.2; on the device as the seed's §8.1.3 suggests). */
__kernel void zf_peak(__global const tusk_u32 *g_nh, __global const tusk_u32 *g_zs, __global zf_dev_result_t *res,
                      ZF_R z_min, ZF_R width)
{
    __local tusk_u32 pn[ZF_NBINS];
    __local tusk_u64 pz[ZF_NBINS];
    __local tusk_u32 bc[ZF_PEAK_WG], bb[ZF_PEAK_WG];
    const tusk_u32 lid = (tusk_u32)get_local_id(0), r = (tusk_u32)get_group_id(0);
    __global const tusk_u32 *nh = g_nh + (size_t)r * ZF_NBINS;
    __global const tusk_u32 *zs = g_zs + (size_t)r * 2 * ZF_NBINS;
    for (tusk_u32 b = lid; b < ZF_NBINS; b += ZF_PEAK_WG) {
        pn[b] = nh[b];
        pz[b] = zs_get(zs + 2 * b);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    tusk_u32 found = 0;
    for (tusk_u32 v = 0; v < (ZF_SECOND ? 2u : 1u); v++) {
        tusk_u32 best_c = 0, best_b = 0;
        for (tusk_u32 b = lid; b + 2 < ZF_NBINS; b += ZF_PEAK_WG) {
            tusk_u32 c = pn[b] + pn[b + 1] + pn[b + 2];
            if (zf_window_better(c, b, best_c, best_b)) {
                best_c = c;
                best_b = b;
            }
        }
        bc[lid] = best_c;
        bb[lid] = best_b;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (tusk_u32 step = ZF_PEAK_WG / 2; step > 0; step >>= 1) {
            if (lid < step && zf_window_better(bc[lid + step], bb[lid + step], bc[lid], bb[lid])) {
                bc[lid] = bc[lid + step];
                bb[lid] = bb[lid + step];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const tusk_u32 c = bc[0], b = bb[0];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (c == 0)
            break;
        if (lid == 0) {
            res[r].bin[v] = b;
            res[r].count[v] = c;
            const tusk_u64 sum = zf_window_sum(pn[b + 1], pn[b + 2], pz[b], pz[b + 1], pz[b + 2]);
            res[r].z0_bits[v] = z_bits(ZF_FN(zf_window_z)(b, sum, c, z_min, width));
        }
        found = v + 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 3) {
            pn[b + lid] = 0;
            pz[b + lid] = 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        res[r].n_vertices = found;
}
