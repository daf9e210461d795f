/* ut.cl - UT decoding and Compass tracking on an OpenCL device, many
 * events a launch (Allen's throughput model; spec §3.3 and §3.6; the host
 * side is ut_cl.c, the design ut/README.md). Preceded in the embedded
 * source by opencl/gpu_common.h and ut_shared.h: the records and every
 * formula come from there.
 *
 * Build-time constants (-D):
 *   UT_WG     work-items of a group (the local lists' and scans' room)
 *   UT_S      sectors searched a plane (1, 3 or 5): the window layout
 *   UT_LKEYS  an event's sort keys kept in local memory when it has at most
 *             this many hits (else they are read from global memory)
 *   UT_DIV_VIA_DOUBLE  divide floats in double (a device without a correctly
 *             rounded float division), see ut_shared.h
 *
 * Kernels, in order (a launch of E events runs each over E groups):
 *   ut_decode     one work-group an event: the hits counted per sector group
 *                 (local atomics over the raw banks' words), a prefix sum (the
 *                 groups' offsets), each hit placed in its group (local
 *                 atomics: any order), then each group sorted by its key (a
 *                 hit's rank among its group's keys: the order no atomic can
 *                 change) and the hits written in SoA at their sorted places
 *                 (the paper's count, prefix sum, pre-decode, find permutation
 *                 and decode-in-order kernels, fused per event)
 *   ut_windows    one work-group an event: the active tracks (forward, in
 *                 the UT's acceptance) compacted into a local list, then one
 *                 work-item a (track, plane): the windows of UT_S sectors,
 *                 16-bit first and size, plane after plane (the paper's 2-D
 *                 window kernel over the compacted tracks)
 *   ut_tracklets  one work-group an event: the tracks with windows in 3 or 4
 *                 planes compacted, their windows cached in local memory, a
 *                 work-item a track: the tracklet search; a found track takes
 *                 its place in the event's output with an atomic add
 *   ut_copy       the bandwidth probe: a plain copy */

#ifndef UT_WG
#define UT_WG 128
#endif
#ifndef UT_S
#define UT_S 5
#endif
#ifndef UT_LKEYS
#define UT_LKEYS 2048
#endif
#define UT_W2 (2 * UT_S) /* 16-bit words of a (track, plane)'s windows: UT_S firsts, then UT_S sizes */

/* Exclusive prefix sum of a[0..n) in local memory by the whole group:
 * every work-item sums a contiguous piece, the pieces' sums are scanned
 * (Hillis-Steele over UT_WG entries), then added back. Returns the total.
 * Every work-item must call it. */
static uint ut_scan_local(__local uint *a, uint n, __local uint *part)
{
    uint lid = get_local_id(0);
    uint per = (n + UT_WG - 1) / UT_WG, lo = min(n, lid * per), hi = min(n, lo + per);
    uint sum = 0;
    for (uint i = lo; i < hi; i++) {
        uint v = a[i];
        a[i] = sum;
        sum += v;
    }
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < UT_WG; d *= 2) {
        uint v = lid >= d ? part[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint before = lid > 0 ? part[lid - 1] : 0, total = part[UT_WG - 1];
    for (uint i = lo; i < hi; i++)
        a[i] += before;
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* The group's compaction: each work-item's flag (0 or 1) scanned; returns
 * this item's place among the flagged ones and the count in *total. */
static uint ut_compact(uint flag, __local uint *part, uint *total)
{
    uint lid = get_local_id(0);
    part[lid] = flag;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < UT_WG; d *= 2) {
        uint v = lid >= d ? part[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint incl = part[lid];
    *total = part[UT_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return incl - flag;
}

/* The bank of an event's hit h: the last of its banks whose first word is
 * at or before it (an empty bank shares its first word with the next). */
static uint ut_bank_of(__global const uint *bank_first, uint first_bank, uint n_banks, uint word)
{
    uint lo = 0, hi = n_banks;
    while (hi - lo > 1) {
        uint mid = (lo + hi) >> 1;
        if (bank_first[first_bank + mid] <= word)
            lo = mid;
        else
            hi = mid;
    }
    return first_bank + lo;
}

__kernel __attribute__((reqd_work_group_size(UT_WG, 1, 1))) void
ut_decode(__global const ut_dev_event_t *events, __global const uint *bank_info, __global const uint *bank_first,
          __global const ushort *words, __global const ut_dev_sector_t *sectors, __global const ut_params_t *params,
          __global uint *key_tmp, __global uint *pos_tmp, __global float *x0, __global float *z0,
          __global float *yb, __global float *ye, __global float *w, __global uint *id, __global uint *group_first)
{
    __local uint cnt[UT_MAX_GROUPS + 1];
    __local uint off[UT_MAX_GROUPS + 1];
    __local uint part[UT_WG];
    __local uint lkey[UT_LKEYS];
    uint lid = get_local_id(0), e = get_group_id(0);
    ut_dev_event_t ev = events[e];
    uint G = params->n_groups, fh = ev.first_hit;
    for (uint g = lid; g <= G; g += UT_WG)
        off[g] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* count a sector group's hits */
    for (uint h = lid; h < ev.n_hits; h += UT_WG) {
        uint j = ut_bank_of(bank_first, ev.first_bank, ev.n_banks, ev.first_word + h);
        uint word = words[ev.first_word + h];
        atomic_inc(&off[ut_hit_group(sectors[bank_info[j] >> 16], ut_word_strip(word))]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the groups' offsets */
    ut_scan_local(off, G, part);
    if (lid == 0)
        off[G] = ev.n_hits;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint g = lid; g <= G; g += UT_WG) {
        group_first[(size_t)e * (G + 1) + g] = off[g];
        cnt[g] = off[g];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* place each hit in its group, in any order */
    for (uint h = lid; h < ev.n_hits; h += UT_WG) {
        uint j = ut_bank_of(bank_first, ev.first_bank, ev.n_banks, ev.first_word + h);
        uint s = bank_info[j] >> 16, word = words[ev.first_word + h], strip = ut_word_strip(word);
        ut_dev_sector_t sec = sectors[s];
        uint pos = atomic_inc(&cnt[ut_hit_group(sec, strip)]);
        uint key = ut_sort_key(sec, strip);
        key_tmp[fh + pos] = key;
        pos_tmp[fh + pos] = (s << 16) | word;
        if (ev.n_hits <= UT_LKEYS)
            lkey[pos] = key;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    /* each hit's rank in its group by the key (unique in an event): its place */
    for (uint k = lid; k < ev.n_hits; k += UT_WG) {
        uint packed = pos_tmp[fh + k], s = packed >> 16, word = packed & 0xFFFFu, strip = ut_word_strip(word);
        ut_dev_sector_t sec = sectors[s];
        uint g = ut_hit_group(sec, strip), key = ut_sort_key(sec, strip), rank = 0;
        uint a = off[g], b = off[g + 1];
        if (ev.n_hits <= UT_LKEYS) {
            for (uint m = a; m < b; m++)
                rank += lkey[m] < key;
        } else {
            for (uint m = a; m < b; m++)
                rank += key_tmp[fh + m] < key;
        }
        uint dst = fh + a + rank;
        x0[dst] = ut_hit_x0(sec, word);
        z0[dst] = sec.z;
        yb[dst] = sec.y_begin;
        ye[dst] = sec.y_end;
        w[dst] = sec.weight;
        id[dst] = ut_lhcbid(s, strip);
    }
}

__kernel __attribute__((reqd_work_group_size(UT_WG, 1, 1))) void
ut_windows(__global const ut_dev_event_t *events, __global const ut_dev_velo_t *velo,
           __global const ut_dev_plane_t *planes, __global const float *group_u_lo, __global const ut_params_t *params,
           __global const float *x0, __global const float *yb, __global const float *ye,
           __global const uint *group_first, __global ushort *win, __global uint *mask, __global uint *n_active)
{
    __local uint part[UT_WG];
    __local uint list[UT_WG];
    __local uint lmask[UT_WG];
    uint lid = get_local_id(0), e = get_group_id(0);
    ut_dev_event_t ev = events[e];
    ut_params_t p = *params;
    ut_dev_plane_t first = planes[0], last = planes[UT_PLANES - 1];
    __global const float *ex0 = x0 + ev.first_hit, *eyb = yb + ev.first_hit, *eye = ye + ev.first_hit;
    __global const uint *gf = group_first + (size_t)e * (p.n_groups + 1);
    uint active_here = 0;
    for (uint base = 0; base < ev.n_tracks; base += UT_WG) {
        uint t = base + lid;
        uint act = t < ev.n_tracks && ut_track_active(velo[ev.first_track + t], first, last, p.y_tol) ? 1u : 0u;
        uint count;
        uint at = ut_compact(act, part, &count);
        if (act)
            list[at] = t;
        else if (t < ev.n_tracks)
            mask[ev.first_track + t] = 0;
        lmask[lid] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        active_here += count;
        /* a work-item a (track, plane), planes fastest: each track's windows are written together */
        for (uint i = lid; i < count * UT_PLANES; i += UT_WG) {
            uint slot = i / UT_PLANES, q = i % UT_PLANES, trk = list[slot];
            ut_dev_velo_t v = velo[ev.first_track + trk];
            ut_dev_plane_t pl = planes[q];
            tusk_u16 wf[UT_SLOTS], ws[UT_SLOTS];
            ut_plane_windows(gf, group_u_lo, ex0, eyb, eye, pl, ut_extrapolate(v, pl), p.y_tol, UT_S, wf, ws);
            __global ushort *o = win + ((size_t)(ev.first_track + trk) * UT_PLANES + q) * UT_W2;
            uint valid = 0;
            for (uint k = 0; k < UT_S; k++) {
                o[k] = wf[k];
                o[UT_S + k] = ws[k];
                valid |= ws[k] != (tusk_u16)UT_WIN_NONE;
            }
            if (valid)
                atomic_or(&lmask[slot], 1u << q);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < count)
            mask[ev.first_track + list[lid]] = lmask[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && active_here > 0)
        atomic_add(n_active, active_here);
}

__kernel __attribute__((reqd_work_group_size(UT_WG, 1, 1))) void
ut_tracklets(__global const ut_dev_event_t *events, __global const ut_dev_velo_t *velo,
             __global const ut_dev_plane_t *planes, __global const ut_params_t *params, __global const float *x0,
             __global const float *w, __global const uint *id, __global const ushort *win,
             __global const uint *mask, __global ut_dev_track_t *out, __global uint *counts)
{
    __local uint part[UT_WG];
    __local uint list[UT_WG];
    __local ushort cache[UT_WG * UT_PLANES * UT_W2];
    uint lid = get_local_id(0), e = get_group_id(0);
    ut_dev_event_t ev = events[e];
    ut_params_t p = *params;
    __global const float *ex0 = x0 + ev.first_hit, *ew = w + ev.first_hit;
    __global const uint *eid = id + ev.first_hit;
    for (uint base = 0; base < ev.n_tracks; base += UT_WG) {
        uint t = base + lid;
        uint ok = t < ev.n_tracks && ut_popcount4(mask[ev.first_track + t]) >= 3u ? 1u : 0u;
        uint count;
        uint at = ut_compact(ok, part, &count);
        if (ok)
            list[at] = t;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the listed tracks' windows into local memory, coalesced */
        for (uint i = lid; i < count * UT_PLANES * UT_W2; i += UT_WG) {
            uint slot = i / (UT_PLANES * UT_W2), k = i % (UT_PLANES * UT_W2);
            cache[i] = win[(size_t)(ev.first_track + list[slot]) * UT_PLANES * UT_W2 + k];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < count) {
            uint trk = list[lid];
            tusk_u16 wf[UT_PLANES * UT_SLOTS], ws[UT_PLANES * UT_SLOTS];
            for (uint q = 0; q < UT_PLANES; q++)
                for (uint k = 0; k < UT_SLOTS; k++) {
                    __local const ushort *c = cache + (lid * UT_PLANES + q) * UT_W2;
                    wf[q * UT_SLOTS + k] = k < UT_S ? c[k] : (tusk_u16)UT_WIN_NONE;
                    ws[q * UT_SLOTS + k] = k < UT_S ? c[UT_S + k] : (tusk_u16)UT_WIN_NONE;
                }
            ut_dev_track_t tr;
            if (ut_tracklet(ex0, ew, eid, wf, ws, velo[ev.first_track + trk], planes, p, &tr)) {
                tr.velo = trk;
                uint idx = atomic_inc(&counts[e]);
                out[ev.first_track + idx] = tr;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The bandwidth probe: dst = src, n uint4s, grid-strided. */
__kernel void ut_copy(__global const uint4 *src, __global uint4 *dst, uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        dst[i] = src[i];
}
