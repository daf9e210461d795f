/* tpc_batch.c - slices in memory, and the results of a run (tusk/tpc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tpc_private.h"

typedef struct entry {
    tpc_slice_t s;            /* cluster unused: clusters + first */
    size_t first;
} entry_t;

struct tpc_batch {
    entry_t *sl;
    size_t n, cap;
    adf_tpc_cluster_t *cl;
    size_t n_cl, cap_cl;
};

tpc_batch_t *tpc_batch_new(void)
{
    return calloc(1, sizeof(tpc_batch_t));
}

void tpc_batch_destroy(tpc_batch_t **b)
{
    if (!b || !*b)
        return;
    free((*b)->sl);
    free((*b)->cl);
    free(*b);
    *b = NULL;
}

void tpc_batch_clear(tpc_batch_t *b)
{
    b->n = 0;
    b->n_cl = 0;
}

int tpc_batch_add_room(tpc_batch_t *b, const tpc_slice_t *s, adf_tpc_cluster_t **clusters, tusk_error_t *err)
{
    size_t n = s->hdr.n_clusters;
    if (tusk_grow(&b->sl, &b->cap, b->n + 1, sizeof *b->sl) != 0 ||
        tusk_grow(&b->cl, &b->cap_cl, b->n_cl + n + 1, sizeof *b->cl) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (event %u, slice %u, %zu clusters)", (unsigned)s->event,
                              (unsigned)s->hdr.slice, n);
    entry_t *e = &b->sl[b->n++];
    e->s = *s;
    e->s.hdr.raw = NULL;
    e->s.cluster = NULL;
    e->first = b->n_cl;
    *clusters = b->cl + b->n_cl;
    b->n_cl += n;
    return TUSK_OK;
}

int tpc_batch_add(tpc_batch_t *b, const tpc_slice_t *s, tusk_error_t *err)
{
    adf_error_t e;
    if (adf_tpc_clusters_check(&s->hdr, s->cluster, &e) != ADF_OK)
        return tusk_error_set(err, TUSK_EINVAL, "event %u: %s", (unsigned)s->event, e.message);
    adf_tpc_cluster_t *cl;
    int st = tpc_batch_add_room(b, s, &cl, err);
    if (st == TUSK_OK && s->hdr.n_clusters)
        memcpy(cl, s->cluster, s->hdr.n_clusters * sizeof *cl);
    return st;
}

size_t tpc_batch_count(const tpc_batch_t *b)
{
    return b->n;
}

uint64_t tpc_batch_clusters(const tpc_batch_t *b)
{
    return b->n_cl;
}

void tpc_batch_slice(const tpc_batch_t *b, size_t i, tpc_slice_t *s)
{
    *s = b->sl[i].s;
    s->cluster = b->cl + b->sl[i].first;
}

/* ---- results ------------------------------------------------------------------------------ */

tpc_result_t *tpc_result_new(void)
{
    return calloc(1, sizeof(tpc_result_t));
}

void tpc_result_destroy(tpc_result_t **res)
{
    if (!res || !*res)
        return;
    tpc_result_t *r = *res;
    for (unsigned c = 0; c < r->cap_chunks; c++) {
        free(r->chunk[c].t);
        free(r->chunk[c].h);
    }
    free(r->chunk);
    free(r->sl);
    free(r);
    *res = NULL;
}

int tpc_result_reset(tpc_result_t *r, size_t n_slices, unsigned n_chunks, tusk_error_t *err)
{
    if (tusk_grow(&r->sl, &r->cap_sl, n_slices, sizeof *r->sl) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (results of %zu slices)", n_slices);
    if (n_chunks > r->cap_chunks) {
        tpc_chunk_t *c = realloc(r->chunk, n_chunks * sizeof *c);
        if (!c)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memset(c + r->cap_chunks, 0, (n_chunks - r->cap_chunks) * sizeof *c);
        r->chunk = c;
        r->cap_chunks = n_chunks;
    }
    r->n_sl = n_slices;
    if (n_slices)
        memset(r->sl, 0, n_slices * sizeof *r->sl);
    r->n_chunks = n_chunks;
    for (unsigned c = 0; c < n_chunks; c++)
        r->chunk[c].nt = r->chunk[c].nh = 0;
    return TUSK_OK;
}

int tpc_chunk_room(tpc_chunk_t *ch, size_t more_tracks, size_t more_hits)
{
    /* one more than asked: the arrays exist even when nothing is in them */
    if (tusk_grow(&ch->t, &ch->cap_t, ch->nt + more_tracks + 1, sizeof *ch->t) != 0 ||
        tusk_grow(&ch->h, &ch->cap_h, ch->nh + more_hits + 1, sizeof *ch->h) != 0)
        return -1;
    return 0;
}

size_t tpc_result_slices(const tpc_result_t *r)
{
    return r->n_sl;
}

void tpc_result_slice(const tpc_result_t *r, size_t i, tpc_slice_result_t *out)
{
    const tpc_slice_res_t *s = &r->sl[i];
    const tpc_chunk_t *ch = &r->chunk[s->chunk];
    out->n_tracks = s->n_tracks;
    out->n_hits = s->n_hits;
    out->track = ch->t ? ch->t + s->t_off : NULL;
    out->hit = ch->h ? ch->h + s->h_off : NULL;
    out->n_start = s->n_start;
    out->n_tracklets = s->n_tracklets;
}

void tpc_result_totals(const tpc_result_t *r, uint64_t *tracks, uint64_t *hits, uint64_t *tracklets)
{
    uint64_t t = 0, h = 0, l = 0;
    for (size_t i = 0; i < r->n_sl; i++) {
        t += r->sl[i].n_tracks;
        h += r->sl[i].n_hits;
        l += r->sl[i].n_tracklets;
    }
    if (tracks)
        *tracks = t;
    if (hits)
        *hits = h;
    if (tracklets)
        *tracklets = l;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The first field two tracks differ in, or NULL. */
static const char *track_diff(const adf_tpc_track_t *a, const adf_tpc_track_t *b)
{
    if (bits(a->x) != bits(b->x))
        return "x";
    for (int k = 0; k < 5; k++)
        if (bits(a->param[k]) != bits(b->param[k]))
            return k == 0 ? "Y" : k == 1 ? "Z" : k == 2 ? "sin(phi)" : k == 3 ? "lambda" : "q/pT";
    for (int k = 0; k < 15; k++)
        if (bits(a->cov[k]) != bits(b->cov[k]))
            return "covariance";
    if (bits(a->chi2) != bits(b->chi2))
        return "chi2";
    if (a->ndf != b->ndf || a->first_row != b->first_row || a->last_row != b->last_row || a->n_hits != b->n_hits ||
        a->flags != b->flags || a->tracklet != b->tracklet)
        return "ndf, rows, clusters, flags or tracklet";
    return NULL;
}

bool tpc_result_equal(const tpc_result_t *a, const tpc_result_t *b, char *why, size_t cap)
{
    if (a->n_sl != b->n_sl) {
        snprintf(why, cap, "%zu slices against %zu", a->n_sl, b->n_sl);
        return false;
    }
    for (size_t i = 0; i < a->n_sl; i++) {
        tpc_slice_result_t x, y;
        tpc_result_slice(a, i, &x);
        tpc_result_slice(b, i, &y);
        if (x.n_tracks != y.n_tracks || x.n_hits != y.n_hits || x.n_start != y.n_start ||
            x.n_tracklets != y.n_tracklets) {
            snprintf(why, cap,
                     "slice %zu: %u tracks of %u clusters (%u seeds, %u tracklets) against %u of %u (%u, %u)", i,
                     (unsigned)x.n_tracks, (unsigned)x.n_hits, (unsigned)x.n_start, (unsigned)x.n_tracklets,
                     (unsigned)y.n_tracks, (unsigned)y.n_hits, (unsigned)y.n_start, (unsigned)y.n_tracklets);
            return false;
        }
        for (uint32_t k = 0; k < x.n_tracks; k++) {
            const char *d = track_diff(&x.track[k], &y.track[k]);
            if (d) {
                snprintf(why, cap,
                         "slice %zu, track %u (tracklet %u against %u): %s differs (Y %.9g Z %.9g q/pT %.9g against "
                         "%.9g %.9g %.9g)",
                         i, (unsigned)k, (unsigned)x.track[k].tracklet, (unsigned)y.track[k].tracklet, d,
                         (double)x.track[k].param[0], (double)x.track[k].param[1], (double)x.track[k].param[4],
                         (double)y.track[k].param[0], (double)y.track[k].param[1], (double)y.track[k].param[4]);
                return false;
            }
        }
        for (uint32_t k = 0; k < x.n_hits; k++) {
            const adf_tpc_hit_t *p = &x.hit[k], *q = &y.hit[k];
            if (p->cluster != q->cluster || p->row != q->row || p->flags != q->flags || bits(p->x) != bits(q->x) ||
                bits(p->y) != bits(q->y) || bits(p->z) != bits(q->z)) {
                snprintf(why, cap,
                         "slice %zu, hit %u: cluster %u (row %u, flags %u) against cluster %u (row %u, flags %u)", i,
                         (unsigned)k, (unsigned)p->cluster, (unsigned)p->row, (unsigned)p->flags, (unsigned)q->cluster,
                         (unsigned)q->row, (unsigned)q->flags);
                return false;
            }
        }
    }
    return true;
}
