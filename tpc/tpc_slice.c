/* tpc_slice.c - steps I-VI of one slice on the CPU, for the reference and
 * the fast backend: the functions of tpc_shared.h called cluster after
 * cluster and tracklet after tracklet, the row-hit arrays laid out
 * [tracklet][row] (seed §6.3.1.1), the cluster weights' maximum taken in
 * tracklet order (the same maximum the device takes by atomics), and the
 * output step, which the OpenCL backend shares. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/grow.h"
#include "tpc_private.h"

void tpc_work_free(tpc_work_t *w)
{
    free(w->start);
    free(w->tracklet);
    free(w->hits);
    free(w->sel);
    memset(w, 0, sizeof *w);
}

void tpc_cpu_arrays_free(tpc_cpu_arrays_t *a)
{
    free(a->up);
    free(a->dn);
    free(a->link);
    free(a->weight);
    memset(a, 0, sizeof *a);
}

int tpc_cpu_arrays_room(tpc_cpu_arrays_t *a, uint64_t n)
{
    if (n + 1 <= a->cap)
        return 0;
    tpc_cpu_arrays_free(a);
    a->up = malloc((n + 1) * sizeof *a->up);
    a->dn = malloc((n + 1) * sizeof *a->dn);
    a->link = malloc((n + 1) * sizeof *a->link);
    a->weight = malloc((n + 1) * sizeof *a->weight);
    if (!a->up || !a->dn || !a->link || !a->weight) {
        tpc_cpu_arrays_free(a);
        return -1;
    }
    a->cap = n + 1;
    return 0;
}

void tpc_output_track(const tpc_data_t *d, size_t s, const tpc_slice_t *slice, const tpc_tracklet_t *tl,
                      uint32_t tracklet_id, const uint32_t *hits, uint32_t n_hits, adf_tpc_track_t *t,
                      adf_tpc_hit_t *h, const double *cs)
{
    const tpc_row_t *rows = d->row + s * TPC_ROWS;
    t->x = tl->x;
    t->param[0] = tl->y;
    t->param[1] = tl->z;
    t->param[2] = tl->sp;
    t->param[3] = tl->lam;
    t->param[4] = tl->qpt;
    memcpy(t->cov, tl->c, sizeof t->cov); /* the lower triangle of (Y, Z, sin(phi), lambda, q/pT) */
    t->chi2 = tl->chi2;
    t->ndf = (uint16_t)(tl->ndf < 65535u ? tl->ndf : 65535u);
    t->n_hits = (uint16_t)n_hits;
    t->flags = 0;
    t->tracklet = tracklet_id;
    for (uint32_t k = 0; k < n_hits; k++) {
        uint32_t c = hits[k] >> 1;
        unsigned r = d->row_of[c] - (unsigned)(s * TPC_ROWS);
        uint32_t id = d->id[c];
        const adf_tpc_cluster_t *cl = &slice->cluster[id];
        double x = (double)rows[r].x, y = (double)cl->y;
        h[k].cluster = id;
        h[k].row = (uint8_t)r;
        h[k].flags = (uint8_t)(hits[k] & 1u ? ADF_TPC_HIT_SHARED : 0u);
        h[k].x = (float)(x * cs[0] - y * cs[1]);
        h[k].y = (float)(x * cs[1] + y * cs[0]);
        h[k].z = cl->z;
    }
    t->first_row = h[0].row;
    t->last_row = h[n_hits - 1].row;
}

int tpc_cpu_slice(tpc_work_t *w, const tpc_data_t *d, tpc_cpu_arrays_t *a, size_t s, const tpc_params_t *pp,
                  const tpc_batch_t *b, tpc_chunk_t *ch, tpc_slice_res_t *res, tusk_error_t *err)
{
    const tpc_params_t p = *pp;
    const tpc_dev_slice_t *ds = &d->slice[s];
    const tpc_row_t *rows = d->row + s * TPC_ROWS;
    tpc_slice_t slice;
    tpc_batch_slice(b, s, &slice);
    /* I and II */
    double t0 = tusk_clock_s();
    for (uint32_t r = 0; r < TPC_ROWS; r++)
        for (uint32_t i = 0; i < rows[r].n; i++)
            tpc_neighbours(rows, r, i, d->yz, d->fbin, p, a->up, a->dn);
    double t1 = tusk_clock_s();
    for (uint32_t r = 0; r < TPC_ROWS; r++)
        for (uint32_t i = 0; i < rows[r].n; i++)
            tpc_clean(rows, r, i, a->up, a->dn, a->link);
    double t2 = tusk_clock_s();
    /* III: in (row, cluster) order */
    size_t n_start = 0;
    for (uint32_t r = 0; r < TPC_ROWS; r++)
        for (uint32_t i = 0; i < rows[r].n; i++)
            if (tpc_is_start(rows, r, i, a->link, p)) {
                if (tusk_grow(&w->start, &w->cap_start, n_start + 1, sizeof *w->start) != 0)
                    return tusk_error_set(err, TUSK_ENOMEM, "out of memory (start hits)");
                w->start[n_start++] = rows[r].first + i;
            }
    double t3 = tusk_clock_s();
    if (n_start > TPC_MAX_TRACKLETS)
        return tusk_error_set(err, TUSK_ELIMIT,
                              "event %u, slice %u: %zu start hits; the cluster weights allow at most %u a slice",
                              (unsigned)slice.event, (unsigned)slice.hdr.slice, n_start, TPC_MAX_TRACKLETS);
    /* IV */
    if (n_start > w->cap_tracklets) {
        free(w->tracklet);
        free(w->hits);
        w->tracklet = malloc(n_start * sizeof *w->tracklet);
        w->hits = malloc(n_start * TPC_ROWS * sizeof *w->hits);
        w->cap_tracklets = w->tracklet && w->hits ? n_start : 0;
        if (!w->cap_tracklets)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu tracklets)", n_start);
    }
    memset(a->weight + ds->first_cluster, 0, ds->n_clusters * sizeof *a->weight);
    uint32_t kept = 0;
    for (size_t t = 0; t < n_start; t++) {
        uint32_t c = w->start[t];
        uint32_t r0 = d->row_of[c] - ds->first_row;
        uint16_t *hits = w->hits + t * TPC_ROWS;
        tpc_tracklet_t *tl = &w->tracklet[t];
        tpc_construct(rows, d->yz, d->fbin, a->link, p, ds->bzk, r0, c - rows[r0].first, hits, 1u, tl);
        if (tl->n_hits == 0)
            continue;
        kept++;
        uint32_t key = tpc_weight_key(tl->n_hits, (uint32_t)t);
        for (uint32_t r = tl->first_row; r <= tl->last_row; r++)
            if (hits[r] != TPC_NONE) {
                uint32_t *wt = &a->weight[rows[r].first + hits[r]];
                if (key > *wt)
                    *wt = key;
            }
    }
    double t4 = tusk_clock_s();
    /* V and VI */
    double cs[2];
    tpc_slice_angle(slice.hdr.slice, &cs[0], &cs[1]);
    res->n_start = (uint32_t)n_start;
    res->n_tracklets = kept;
    res->t_off = ch->nt;
    res->h_off = ch->nh;
    double t_out = 0;
    for (size_t t = 0; t < n_start; t++) {
        tpc_tracklet_t *tl = &w->tracklet[t];
        if (tl->n_hits == 0)
            continue;
        const uint16_t *hits = w->hits + t * TPC_ROWS;
        uint32_t key = tpc_weight_key(tl->n_hits, (uint32_t)t);
        tpc_segments_t seg;
        tpc_select(rows, a->weight, key, tl->first_row, tl->last_row, p, hits, 1u, &seg);
        if (seg.n == 0)
            continue;
        double o0 = tusk_clock_s();
        if (tpc_chunk_room(ch, seg.n, seg.total) != 0 ||
            tusk_grow(&w->sel, &w->cap_sel, seg.total + 1, sizeof *w->sel) != 0)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (tracks)");
        uint32_t at = 0;
        for (uint32_t g = 0; g < seg.n; g++) {
            uint32_t n = tpc_select_emit(rows, a->weight, key, seg.first[g], seg.last[g], hits, 1u, w->sel + at);
            tpc_output_track(d, s, &slice, tl, (uint32_t)t, w->sel + at, n, &ch->t[ch->nt], &ch->h[ch->nh], cs);
            at += n;
            ch->nt++;
            ch->nh += n;
            res->n_tracks++;
            res->n_hits += n;
        }
        t_out += tusk_clock_s() - o0;
    }
    double t5 = tusk_clock_s();
    w->t_nf += t1 - t0;
    w->t_nc += t2 - t1;
    w->t_sh += t3 - t2;
    w->t_tc += t4 - t3;
    w->t_ts += t5 - t4 - t_out;
    w->t_out += t_out;
    return TUSK_OK;
}
