/* zfinder.cl - the z-finder on a device (spec §2.3, seed §5-§6; the host
 * side is zfinder/zf_cl.c, the design zfinder/README.md).
 *
 * Prepended when embedded: opencl/gpu_common.h, zfinder/zf_shared.h (the
 * records, zf_window_better) and zfinder/zf_real.h (zf_intercept, zf_bin,
 * zf_triplet_ok, zf_window_z in ZF_R, the precision's type).
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
 *
 * A launch covers many RoIs. Its input is one buffer: the RoI records
 * (zf_roi_desc_t), then every RoI's slice starts, then every RoI's points
 * (zf_point_t) sorted by slice. zf_find runs one work-group per (RoI,
 * slice); zf_peak one per RoI. */
/* FP_CONTRACT OFF and the extensions are switched on in zf_shared.h,
 * before the first formula. */
#pragma OPENCL FP_CONTRACT OFF

/* zHisto += v without float atomics: compare-exchange on the bit pattern
 * (spec §2.3, TUSK (OpenCL)). */
#if ZF_DOUBLE
static void zh_add_local(volatile __local double *p, double v)
{
    ulong old, next;
    do {
        old = as_ulong(*p);
        next = as_ulong(as_double(old) + v);
    } while (atom_cmpxchg((volatile __local ulong *)p, old, next) != old);
}

static void zh_add_global(volatile __global double *p, double v)
{
    ulong old, next;
    do {
        old = as_ulong(*p);
        next = as_ulong(as_double(old) + v);
    } while (atom_cmpxchg((volatile __global ulong *)p, old, next) != old);
}

static tusk_u64 z_bits(double z)
{
    return as_ulong(z);
}
#else
static void zh_add_local(volatile __local float *p, float v)
{
    uint old, next;
    do {
        old = as_uint(*p);
        next = as_uint(as_float(old) + v);
    } while (atomic_cmpxchg((volatile __local uint *)p, old, next) != old);
}

static void zh_add_global(volatile __global float *p, float v)
{
    uint old, next;
    do {
        old = as_uint(*p);
        next = as_uint(as_float(old) + v);
    } while (atomic_cmpxchg((volatile __global uint *)p, old, next) != old);
}

static tusk_u64 z_bits(float z)
{
    return (tusk_u64)as_uint(z);
}
#endif

/* The RoI of work-group g: the last one whose first group is <= g. */
static tusk_u32 roi_of(__global const zf_roi_desc_t *roi, tusk_u32 n_rois, tusk_u32 g)
{
    tusk_u32 lo = 0, hi = n_rois;
    while (hi - lo > 1) {
        tusk_u32 mid = (lo + hi) / 2;
        if (roi[mid].first_group <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* One work-group per (RoI, phi slice): the slice's pairs into the RoI's
 * histograms. */
__kernel void zf_find(__global const uchar *in, tusk_u32 off_slices, tusk_u32 off_points, tusk_u32 n_rois,
                      __global tusk_u32 *g_nh, __global ZF_R *g_zh, __global zf_dev_result_t *res, ZF_R z_min,
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
    __local tusk_u32 lnh[ZF_NBINS];
    __local ZF_R lzh[ZF_NBINS];
#endif
    __local tusk_u32 lentries;

    const tusk_u32 lid = (tusk_u32)get_local_id(0), wg = (tusk_u32)get_local_size(0);
    const tusk_u32 g = (tusk_u32)get_group_id(0);
    __global const zf_roi_desc_t *rois = (__global const zf_roi_desc_t *)in;
    const tusk_u32 r = roi_of(rois, n_rois, g);
    const zf_roi_desc_t d = rois[r];
    const tusk_u32 s = g - d.first_group, S = d.n_slices;
    __global const tusk_u32 *ss = (__global const tusk_u32 *)(in + off_slices) + d.first_slice;
    __global const zf_point_t *pts = (__global const zf_point_t *)(in + off_points) + d.first_point;

    /* the central slice, the one below, the one above (spec §2.3 step 2) */
    tusk_u32 first[ZF_NEIGHBOURS], n[ZF_NEIGHBOURS];
    ZF_R shift[ZF_NEIGHBOURS];
    first[0] = ss[s];
    n[0] = ss[s + 1] - ss[s];
    shift[0] = (ZF_R)0;
    shift[1] = (ZF_R)0;
    shift[2] = (ZF_R)0;
    n[1] = 0;
    n[2] = 0;
    first[1] = 0;
    first[2] = 0;
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
    const tusk_u32 total = n[0] + n[1] + n[2];
    if (n[0] == 0)
        return; /* no inner point, no pair: the whole group leaves */
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
        lzh[b] = (ZF_R)0;
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    /* The pairs, numbered with one index over all layers (seed §5.4.3-4):
     * pairs of layer L are n_central(L) x nAbove(L), p1 the central
     * point, p2 any point of a higher layer. */
    tusk_u32 entries = 0, l = 0;
    const tusk_u32 all = ifirst[ZF_MAX_LAYERS];
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
        atomic_inc(&lnh[b]);
        zh_add_local(&lzh[b], zv);
        entries++;
#endif
    }
    if (entries)
        atomic_add(&lentries, entries);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Into the RoI's histograms: only the bins this slice filled. */
#if !ZF_BARE
    __global tusk_u32 *nh = g_nh + (size_t)r * ZF_NBINS;
    __global ZF_R *zh = g_zh + (size_t)r * ZF_NBINS;
    for (tusk_u32 b = lid; b < ZF_NBINS; b += wg) {
        tusk_u32 c = lnh[b];
        if (c) {
            atomic_add(&nh[b], c);
            zh_add_global(&zh[b], lzh[b]);
        }
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
__kernel void zf_peak(__global const tusk_u32 *g_nh, __global const ZF_R *g_zh, __global zf_dev_result_t *res)
{
    __local tusk_u32 pn[ZF_NBINS];
    __local ZF_R pz[ZF_NBINS];
    __local tusk_u32 bc[ZF_PEAK_WG], bb[ZF_PEAK_WG];
    const tusk_u32 lid = (tusk_u32)get_local_id(0), r = (tusk_u32)get_group_id(0);
    __global const tusk_u32 *nh = g_nh + (size_t)r * ZF_NBINS;
    __global const ZF_R *zh = g_zh + (size_t)r * ZF_NBINS;
    for (tusk_u32 b = lid; b < ZF_NBINS; b += ZF_PEAK_WG) {
        pn[b] = nh[b];
        pz[b] = zh[b];
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
            res[r].z0_bits[v] = z_bits(ZF_FN(zf_window_z)(pz[b], pz[b + 1], pz[b + 2], c));
        }
        found = v + 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 3) {
            pn[b + lid] = 0;
            pz[b + lid] = (ZF_R)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        res[r].n_vertices = found;
}
