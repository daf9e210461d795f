/* sts_module.c - one module on the CPU: the parallel algorithm of spec
 * §4.3 (sort by the 64-bit key, channel offsets, neighbour links,
 * clusters from the chains, cluster sort, hits) as the fast backend runs
 * it on each thread, and the thesis's original status-array cluster
 * finder of the reference backend. Both end in the same cluster sort and
 * hit finder. The formulas are sts_shared.h's, the kernels' too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/radix.h"
#include "sts_private.h"

void sts_work_free(sts_work_t *w)
{
    free(w->keys);
    free(w->tmp);
    free(w->offsets);
    free(w->conn);
    free(w->status);
    free(w->cl);
    free(w->cl2);
    free(w->head);
    free(w->ckeys);
    free(w->ctmp);
    free(w->order);
    memset(w, 0, sizeof *w);
}

/* Room for a module of n digis (and so at most n clusters). */
static int room(sts_work_t *w, size_t n)
{
    if (!w->offsets && !(w->offsets = malloc((STS_MAX_CHANNELS + 1) * sizeof *w->offsets)))
        return -1;
    if (!w->status && !(w->status = malloc(STS_MAX_CHANNELS * sizeof *w->status)))
        return -1;
    if (n <= w->cap_keys && w->keys)
        return 0;
    size_t cap = n + n / 4 + 64;
    uint64_t *k = realloc(w->keys, cap * sizeof *k);
    if (k)
        w->keys = k;
    uint64_t *t = realloc(w->tmp, cap * sizeof *t);
    if (t)
        w->tmp = t;
    uint32_t *c = realloc(w->conn, cap * sizeof *c);
    if (c)
        w->conn = c;
    sts_cluster_t *cl = realloc(w->cl, cap * sizeof *cl);
    if (cl)
        w->cl = cl;
    sts_cluster_t *cl2 = realloc(w->cl2, cap * sizeof *cl2);
    if (cl2)
        w->cl2 = cl2;
    uint64_t *h = realloc(w->head, cap * sizeof *h);
    if (h)
        w->head = h;
    uint64_t *ck = realloc(w->ckeys, cap * sizeof *ck);
    if (ck)
        w->ckeys = ck;
    uint64_t *ct = realloc(w->ctmp, cap * sizeof *ct);
    if (ct)
        w->ctmp = ct;
    uint32_t *o = realloc(w->order, cap * sizeof *o);
    if (o)
        w->order = o;
    if (!k || !t || !c || !cl || !cl2 || !h || !ck || !ct || !o)
        return -1;
    w->cap_keys = w->cap_conn = w->cap_cl = w->cap_order = cap;
    return 0;
}

/* ---- step 1-2: sort by the 64-bit key; the channel offsets ------------------------------- */

/* The GPU's sort, on the CPU: a counting sort by channel (the key's top
 * bits; the counts are the channel offsets), then each channel's digis by
 * the rest of the key (time, charge). The result is the keys sorted. */
static void sort_digis(sts_work_t *w, const sts_module_t *m)
{
    uint32_t C = 2u * m->hdr.strips, n = m->hdr.n_digis;
    uint32_t *off = w->offsets;
    memset(off, 0, (C + 1) * sizeof *off);
    for (uint32_t i = 0; i < n; i++)
        off[sts_key_channel(m->digi[i]) + 1]++;
    for (uint32_t c = 0; c < C; c++)
        off[c + 1] += off[c];
    /* scatter with a cursor per channel (w->status lends its room) */
    uint32_t *cur = w->status;
    memcpy(cur, off, C * sizeof *cur);
    for (uint32_t i = 0; i < n; i++)
        w->keys[cur[sts_key_channel(m->digi[i])]++] = m->digi[i];
    for (uint32_t c = 0; c < C; c++)
        tusk_radix_sort_u64(w->keys + off[c], w->tmp, off[c + 1] - off[c]);
}

/* ---- step 3: the two-pointer walk, channel by channel (seed Code 3) ------------------------- */

static void link_digis(sts_work_t *w, const sts_module_t *m, uint32_t delta)
{
    uint32_t S = m->hdr.strips, C = 2u * S;
    const uint64_t *k = w->keys;
    const uint32_t *off = w->offsets;
    uint32_t *conn = w->conn;
    memset(conn, 0, m->hdr.n_digis * sizeof *conn);
    for (uint32_t c = 0; c + 1 < C; c++) {
        if (c == S - 1)
            continue; /* the front side's last strip and the back side's first are not neighbours */
        uint32_t cur = off[c], cur_end = off[c + 1], next = off[c + 1], next_end = off[c + 2];
        for (; cur < cur_end; cur++) {
            uint32_t tc = sts_key_time(k[cur]);
            while (next < next_end) {
                tusk_i32 o = sts_link_order(tc, sts_key_time(k[next]), delta);
                if (o > 0)
                    break;
                if (o < 0) {
                    next++;
                    continue;
                }
                conn[cur] |= next << 1;
                conn[next] |= STS_HAS_PREVIOUS;
                next++;
                break;
            }
        }
    }
}

/* ---- step 4: clusters from the chains (seed Code 6), in head-digi order ---------------- */

static size_t chain_clusters(sts_work_t *w, const sts_module_t *m, const sts_params_t *p, size_t *n_front)
{
    uint32_t S = m->hdr.strips, n = m->hdr.n_digis;
    size_t nc = 0, nf = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (w->conn[i] & STS_HAS_PREVIOUS)
            continue;
        sts_acc_t a;
        sts_acc_start(&a, w->keys[i]);
        for (uint32_t j = sts_conn_next(w->conn[i]); j; j = sts_conn_next(w->conn[j]))
            sts_acc_add(&a, w->keys[j]);
        sts_cluster_finish(&a, S, p->tvar_digi, p->qvar, p->sys_var, &w->cl[nc]);
        nf += a.first < S;
        nc++;
    }
    *n_front = nf;
    return nc;
}

int sts_par_clusters(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, size_t *n, size_t *n_front)
{
    if (room(w, m->hdr.n_digis) != 0)
        return TUSK_ENOMEM;
    sort_digis(w, m);
    link_digis(w, m, p->delta);
    *n = chain_clusters(w, m, p, n_front);
    return TUSK_OK;
}

/* ---- steps 5-6: cluster sort and hits -------------------------------------------------------- */

/* Sort each side's clusters by (floor(time), index) into w->ckeys (front
 * [0, nf), back [nf, n)), then pair them: for each front cluster in time
 * order, the back clusters of its window in time order (seed Code 7). */
static int sort_and_pair(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, size_t n, size_t nf,
                         sts_chunk_t *ch, sts_mod_res_t *r)
{
    sts_dev_module_t g;
    sts_dev_module_of(m, &g);
    float maxv[2] = {0.0f, 0.0f};
    for (size_t i = 0; i < n; i++) {
        w->ckeys[i] = (uint64_t)w->cl[i].tkey << 32 | (uint32_t)i;
        int side = i >= nf;
        if (w->cl[i].tvar > maxv[side])
            maxv[side] = w->cl[i].tvar;
    }
    tusk_radix_sort_u64(w->ckeys, w->ctmp, nf);
    tusk_radix_sort_u64(w->ckeys + nf, w->ctmp, n - nf);
    if (sts_chunk_room(ch, n, 0) != 0)
        return TUSK_ENOMEM;
    r->c_off = ch->nc;
    r->n_front = (uint32_t)nf;
    r->n_back = (uint32_t)(n - nf);
    if (n)
        memcpy(ch->c + ch->nc, w->cl, n * sizeof *w->cl);
    ch->nc += n;
    r->h_off = ch->nh;
    r->n_hits = 0;
    const uint64_t *back = w->ckeys + nf;
    size_t nb = n - nf;
    float win = sqrtf(p->cut2 * (maxv[0] + maxv[1])) + 1.0f;
    for (size_t i = 0; i < nf; i++) {
        const sts_cluster_t *f = &w->cl[(uint32_t)w->ckeys[i]];
        /* the first back cluster of the window: a binary search on the keys */
        uint64_t lo_key = (uint64_t)sts_window_low(f->time, win) << 32;
        size_t lo = 0, hi = nb;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (back[mid] < lo_key)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j < nb; j++) {
            uint32_t bi = (uint32_t)back[j];
            const sts_cluster_t *b = &w->cl[bi];
            if (sts_window_past(b->tkey, f->time, win))
                break;
            if (!sts_hit_time_ok(f->time, f->tvar, b->time, b->tvar, p->cut2))
                continue;
            sts_hit_t h;
            if (!sts_hit_make(*f, *b, g.pitch, g.tan_stereo, g.length, g.width, g.x0, g.y0, g.z0, p->y_tol, &h))
                continue;
            h.front = (uint32_t)w->ckeys[i];
            h.back = bi - (uint32_t)nf;
            if (sts_chunk_room(ch, 0, 1) != 0)
                return TUSK_ENOMEM;
            ch->h[ch->nh++] = h;
            r->n_hits++;
        }
    }
    return TUSK_OK;
}

int sts_par_module(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, sts_chunk_t *ch, sts_mod_res_t *r)
{
    size_t n, nf;
    int st = sts_par_clusters(w, p, m, &n, &nf);
    return st != TUSK_OK ? st : sort_and_pair(w, p, m, n, nf, ch, r);
}

/* ---- the original cluster finder (seed §3.2.1, Code 1) ------------------------------------------
 *
 * Over the module's digis in time order, with a status array holding per
 * channel the digi seen last (or none):
 *   - a digi in a free channel c is stored; then each neighbour c + 1 and
 *     c - 1 (on the same side) that holds a digi NOT within delta of the
 *     new one has its cluster closed: no later digi can join that
 *     neighbour, the input being in time order. Only this neighbour is
 *     looked at, not the far end of its cluster, which a later digi might
 *     still extend: the deviation of seed §3.2.2 (Fig 9, step 5.1);
 *   - a digi in a taken channel closes the cluster through c, then takes
 *     its place;
 *   - at the end, every cluster left is closed.
 * Closing walks left and right from a channel while neighbouring entries
 * are within delta of each other, makes them one cluster and frees them. */

/* The time-first key of a digi: time, channel, charge. */
static uint64_t time_key(uint64_t key)
{
    return (uint64_t)sts_key_time(key) << 32 | (uint64_t)sts_key_channel(key) << 16 | sts_key_charge(key);
}

static uint64_t key_of_time_key(uint64_t tk)
{
    return ((tk >> 16) & 0xFFFFu) << 48 | (tk >> 32) << 16 | (tk & 0xFFFFu);
}

typedef struct orig {
    sts_work_t *w;
    const sts_params_t *p;
    uint32_t S;
    size_t n;                 /* clusters so far */
} orig_t;

/* Close the cluster through channel c (c holds a digi). */
static void orig_close(orig_t *o, uint32_t c)
{
    uint32_t *st = o->w->status;
    const uint64_t *k = o->w->keys; /* time-sorted, as keys */
    uint32_t lo_side = c < o->S ? 0 : o->S, hi_side = lo_side + o->S;
    uint32_t l = c, r = c;
    while (l > lo_side && st[l - 1] != STS_NONE &&
           sts_in_delta(sts_key_time(k[st[l - 1]]), sts_key_time(k[st[l]]), o->p->delta))
        l--;
    while (r + 1 < hi_side && st[r + 1] != STS_NONE &&
           sts_in_delta(sts_key_time(k[st[r + 1]]), sts_key_time(k[st[r]]), o->p->delta))
        r++;
    sts_acc_t a;
    sts_acc_start(&a, k[st[l]]);
    for (uint32_t j = l + 1; j <= r; j++)
        sts_acc_add(&a, k[st[j]]);
    o->w->head[o->n] = k[st[l]];
    sts_cluster_finish(&a, o->S, o->p->tvar_digi, o->p->qvar, o->p->sys_var, &o->w->cl[o->n]);
    o->n++;
    for (uint32_t j = l; j <= r; j++)
        st[j] = STS_NONE;
}

/* The clusters in the order of their first digi by (channel, time,
 * charge), then their content: the order the parallel finder makes. A
 * merge sort of indices (no library sort takes a context). */
static int order_before(const sts_work_t *w, uint32_t i, uint32_t j)
{
    if (w->head[i] != w->head[j])
        return w->head[i] < w->head[j];
    return memcmp(&w->cl[i], &w->cl[j], sizeof w->cl[i]) < 0;
}

static void order_sort(const sts_work_t *w, uint32_t *a, uint32_t *tmp, size_t n)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = order_before(w, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
}

int sts_orig_clusters(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, size_t *n_out, size_t *n_front)
{
    uint32_t n = m->hdr.n_digis, S = m->hdr.strips, C = 2u * S;
    if (room(w, n) != 0)
        return TUSK_ENOMEM;
    /* time order (the detector's order; the thesis sorts it again) */
    for (uint32_t i = 0; i < n; i++)
        w->tmp[i] = time_key(m->digi[i]);
    memcpy(w->ckeys, w->tmp, n * sizeof *w->ckeys);
    tusk_radix_sort_u64(w->ckeys, w->tmp, n);
    for (uint32_t i = 0; i < n; i++)
        w->keys[i] = key_of_time_key(w->ckeys[i]);
    uint32_t *st = w->status;
    for (uint32_t c = 0; c < C; c++)
        st[c] = STS_NONE;
    orig_t o = {w, p, S, 0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = sts_key_channel(w->keys[i]), t = sts_key_time(w->keys[i]);
        if (st[c] != STS_NONE) {
            orig_close(&o, c);
            st[c] = i;
            continue;
        }
        st[c] = i;
        uint32_t lo_side = c < S ? 0 : S, hi_side = lo_side + S;
        if (c + 1 < hi_side && st[c + 1] != STS_NONE && !sts_in_delta(sts_key_time(w->keys[st[c + 1]]), t, p->delta))
            orig_close(&o, c + 1);
        if (c > lo_side && st[c - 1] != STS_NONE && !sts_in_delta(sts_key_time(w->keys[st[c - 1]]), t, p->delta))
            orig_close(&o, c - 1);
    }
    for (uint32_t c = 0; c < C; c++)
        if (st[c] != STS_NONE)
            orig_close(&o, c);
    /* head-digi order, then the clusters in it */
    for (size_t i = 0; i < o.n; i++)
        w->order[i] = (uint32_t)i;
    order_sort(w, w->order, w->conn, o.n);
    for (size_t i = 0; i < o.n; i++)
        w->cl2[i] = w->cl[w->order[i]];
    memcpy(w->cl, w->cl2, o.n * sizeof *w->cl);
    size_t nf = 0;
    for (size_t i = 0; i < o.n; i++)
        nf += w->cl[i].channel < S;
    *n_out = o.n;
    *n_front = nf;
    return TUSK_OK;
}

int sts_orig_module(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, sts_chunk_t *ch, sts_mod_res_t *r)
{
    size_t n, nf;
    int st = sts_orig_clusters(w, p, m, &n, &nf);
    return st != TUSK_OK ? st : sort_and_pair(w, p, m, n, nf, ch, r);
}
