/* zf_ref_impl.h - the reference z-finder in one precision (internal):
 * zf_ref_float.c and zf_ref_double.c read it with ZF_DOUBLE 0 and 1.
 *
 * The serial algorithm of spec §2.3 (seed §3.2), with the kernel's slice
 * orientation, pair set and bin layout:
 *   1. lists: for each point n of slice s, layer l: inext[n] = first[s][l],
 *      first[s][l] = n (one O(N) pass; the seed's counts are not needed);
 *   2. pairs: p1 of slice s, layer L1; p2 of slice s-1, s or s+1 in a
 *      layer L2 > L1 (each pair of points is formed once); per slice the
 *      three slices' lists are walked once into arrays grouped by layer
 *      (central points first), as the kernel does in local memory;
 *   3. z_V = zf_intercept; its bin, dropped outside the histogram;
 *   4. triplets: kept only when a point of a layer above L2, in slice
 *      s-1, s or s+1, passes zf_triplet_ok;
 *   5. nHisto[bin] += 1, zHisto[bin] += z_V, in fixed point: Sum q of
 *      the intercepts' places in their bins (zf_bin_q, zf_shared.h);
 *   6. peak: the densest window of three bins (zf_window_better), z0 =
 *      zf_window_z of zf_window_sum; a second vertex with the window's
 *      bins zeroed.
 * A neighbour across the 360 degree seam has its phi shifted by 2 pi, as
 * the kernel shifts it. */
#include <string.h>

#include "zf_private.h"
#include "zf_real.h"

/* Steps 6: the peaks of nh/zs (restored afterwards). */
static void ZF_FN(peaks)(const zf_consts_t *kc, uint32_t *nh, uint64_t *zs, bool second, zf_result_t *res)
{
    const unsigned bins = kc->bins;
    uint32_t saved_n[2][3];
    uint64_t saved_z[2][3];
    res->n_vertices = 0;
    for (unsigned v = 0; v < (second ? 2u : 1u); v++) {
        uint32_t best_c = 0, best_b = 0;
        for (uint32_t b = 0; b + 2 < bins; b++) {
            uint32_t c = nh[b] + nh[b + 1] + nh[b + 2];
            if (zf_window_better(c, b, best_c, best_b))
                best_c = c, best_b = b;
        }
        if (best_c == 0)
            break;
        uint64_t sum = zf_window_sum(nh[best_b + 1], nh[best_b + 2], zs[best_b], zs[best_b + 1], zs[best_b + 2]);
        res->vertex[v].z0 = (double)ZF_FN(zf_window_z)(best_b, sum, best_c, (ZF_R)kc->z_min, (ZF_R)kc->bin);
        res->vertex[v].count = best_c;
        res->vertex[v].bin = best_b;
        res->n_vertices = v + 1;
        for (int k = 0; k < 3; k++) {
            saved_n[v][k] = nh[best_b + k];
            saved_z[v][k] = zs[best_b + k];
            nh[best_b + k] = 0;
            zs[best_b + k] = 0;
        }
    }
    for (unsigned v = res->n_vertices; v-- > 0;)
        for (int k = 0; k < 3; k++) {
            nh[res->vertex[v].bin + k] = saved_n[v][k];
            zs[res->vertex[v].bin + k] = saved_z[v][k];
        }
}

int ZF_FN(zf_ref_roi)(zf_ref_work_t *w, const zf_config_t *cfg, const zf_roi_t *roi, zf_result_t *res,
                      tusk_error_t *err)
{
    int wrap;
    uint32_t S = zf_roi_slices(cfg, roi->phi_width, &wrap);
    int st = zf_ref_work_room(w, roi->n, S, err);
    if (st == TUSK_OK)
        st = zf_slices_of(&w->k, roi, S, wrap, w->slice, w->phi_rel, err);
    if (st != TUSK_OK)
        return st;
    const uint32_t N = roi->n;
    /* 1. the lists */
    for (uint32_t n = 0; n < N; n++) {
        size_t k = (size_t)w->slice[n] * ZF_MAX_LAYERS + roi->pt[n].layer;
        w->inext[n] = w->first[k];
        w->first[k] = n;
    }
    const unsigned bins = w->k.bins;
    uint32_t *nh = w->nh;
    uint64_t *zs = w->zs;
    memset(nh, 0, bins * sizeof *nh);
    memset(zs, 0, bins * sizeof *zs);
    const ZF_R z_min = (ZF_R)w->k.z_min, inv_bin = (ZF_R)w->k.inv_bin, n_bins = (ZF_R)w->k.n_bins;
    const ZF_R tol_z = (ZF_R)w->k.tol_z, tol_phi = (ZF_R)w->k.tol_phi;
    const ZF_R two_pi = (ZF_R)ZF_TWO_PI_F;
    uint64_t pairs = 0, entries = 0;
    /* 2.-5. Slice by slice: its lists and its neighbours', walked once
     * into arrays grouped by layer, the central slice's points first in
     * each layer (the kernel's order, seed §5.4.2), then every pair: p1 a
     * central point of layer L1, p2 any point of a higher layer. */
    float *g_rho = w->g_rho, *g_z = w->g_z;
    ZF_R *g_phi = (ZF_R *)w->g_phi;
    uint8_t *g_layer = w->g_layer;
    for (uint32_t s = 0; s < S; s++) {
        /* the central slice, the one below, the one above */
        int32_t nb[ZF_NEIGHBOURS] = {(int32_t)s, (int32_t)s - 1, (int32_t)s + 1};
        ZF_R shift[ZF_NEIGHBOURS] = {(ZF_R)0, (ZF_R)0, (ZF_R)0};
        if (s == 0) {
            nb[1] = wrap ? (int32_t)S - 1 : -1;
            shift[1] = -two_pi;
        }
        if (s + 1 == S) {
            nb[2] = wrap ? 0 : -1;
            shift[2] = two_pi;
        }
        if (w->first[(size_t)s * ZF_MAX_LAYERS] == ZF_NONE) {
            /* no point in layer 0 of the slice: any in the others? */
            unsigned l = 1;
            while (l < ZF_MAX_LAYERS && w->first[(size_t)s * ZF_MAX_LAYERS + l] == ZF_NONE)
                l++;
            if (l == ZF_MAX_LAYERS)
                continue; /* no inner point, no pair */
        }
        uint32_t start[ZF_LAYER_SLOTS], central[ZF_MAX_LAYERS], n = 0;
        for (unsigned l = 0; l < ZF_MAX_LAYERS; l++) {
            start[l] = n;
            for (int c = 0; c < ZF_NEIGHBOURS; c++) {
                if (nb[c] < 0)
                    continue;
                for (uint32_t p = w->first[(size_t)nb[c] * ZF_MAX_LAYERS + l]; p != ZF_NONE; p = w->inext[p]) {
                    g_rho[n] = roi->pt[p].rho;
                    g_z[n] = roi->pt[p].z;
                    g_phi[n] = (ZF_R)w->phi_rel[p] + shift[c];
                    g_layer[n] = (uint8_t)l;
                    n++;
                }
                if (c == 0)
                    central[l] = n - start[l];
            }
        }
        start[ZF_MAX_LAYERS] = n;
        for (unsigned l1 = 0; l1 + 1 < ZF_MAX_LAYERS; l1++) {
            const uint32_t above = start[l1 + 1];
            for (uint32_t i1 = start[l1]; i1 < start[l1] + central[l1]; i1++) {
                const ZF_R r1 = (ZF_R)g_rho[i1], z1 = (ZF_R)g_z[i1];
                pairs += n - above;
                for (uint32_t i2 = above; i2 < n; i2++) {
                    const ZF_R r2 = (ZF_R)g_rho[i2], z2 = (ZF_R)g_z[i2];
                    const ZF_R zv = ZF_FN(zf_intercept)(r1, z1, r2, z2);
                    const tusk_i32 b = ZF_FN(zf_bin)(zv, z_min, inv_bin, n_bins);
                    if (b < 0)
                        continue;
                    if (w->triplets) {
                        /* a third point in a layer above p2's, in the three slices */
                        const ZF_R f1 = g_phi[i1], f2 = g_phi[i2];
                        int ok = 0;
                        for (uint32_t i3 = start[g_layer[i2] + 1]; i3 < n && !ok; i3++)
                            ok = ZF_FN(zf_triplet_ok)(r1, f1, z1, r2, f2, z2, (ZF_R)g_rho[i3], g_phi[i3],
                                                      (ZF_R)g_z[i3], tol_z, tol_phi);
                        if (!ok)
                            continue;
                    }
                    nh[b]++;
                    zs[b] += ZF_FN(zf_bin_q)(zv, z_min, inv_bin, b);
                    entries++;
                }
            }
        }
    }
    /* the lists empty again for the next RoI */
    for (uint32_t n = 0; n < N; n++) {
        size_t k = (size_t)w->slice[n] * ZF_MAX_LAYERS + roi->pt[n].layer;
        w->first[k] = ZF_NONE;
    }
    res->pairs = pairs;
    res->entries = entries;
    ZF_FN(peaks)(&w->k, nh, zs, w->second, res);
    return TUSK_OK;
}
