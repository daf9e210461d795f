/* sts_qa.c - the STS reconstruction against the truth (tusk/sts.h; the
 * definitions are in sts/README.md, "Quality").
 *
 * A module of a timeslice is analysed once its four frames have come
 * (data:sts_digis, data:sts_truth, data:sts_clusters, data:sts_hits, in
 * any order, over any buffers):
 *   - each cluster's Monte Carlo point: over its strips, the digi of each
 *     strip nearest the cluster's time (within delta x size), their charge
 *     summed per point; the point with the most charge, or none (noise):
 *     a fake cluster;
 *   - a point is found on a side when a cluster of that side has it; it is
 *     reconstructable on a side when it left a digi there;
 *   - a hit is true when its front and back clusters have the same point;
 *     a point is hit when a true hit has it;
 *   - residuals: a matched cluster's position against the point's strip
 *     coordinate on its side, a true hit's x, y and time against the
 *     point's; pulls divide by the errors the reconstruction gave;
 *   - with `compare`, the module's digis go through both cluster finders
 *     again (the original and the parallel one, this analysis's settings)
 *     and the clusters either has that the other lacks are counted.
 * Timeslices are complete when they have had as many modules as their
 * data:sts_digis frames announce. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf/adf_frames.h"
#include "base/gather.h"
#include "base/gnuplot.h"
#include "base/grow.h"
#include "base/radix.h"
#include "base/report.h"
#include "base/stats.h"
#include "sts_private.h"

#define HBINS 120

enum { F_DIGIS = 1, F_TRUTH = 2, F_CLUSTERS = 4, F_HITS = 8, F_ALL = 15 };

/* A module of a timeslice, its frames gathered (base/gather.h: unit the
 * timeslice, part the module, have the F_* bits). */
typedef struct pending {
    tusk_part_t head;
    sts_module_t m;           /* from data:sts_digis; m.digi -> keys */
    uint64_t *keys;
    uint32_t *digi_point;
    adf_sts_point_t *pt;
    uint32_t n_points;
    adf_sts_cluster_t *cl;
    uint32_t n_front, n_back;
    adf_sts_hit_t *hit;
    uint32_t n_hits;
    uint32_t truth_digis;     /* the digis the truth speaks of */
    uint16_t cl_strips;       /* the strips the clusters speak of */
    int backend;
} pending_t;

typedef struct acc {
    uint64_t points, points_side[2], points_both;
    uint64_t clusters[2], matched[2], found[2];
    uint64_t hits, hits_true, points_hit;
    tusk_moments_t res[2], pull[2], hx, hy, ht, px, py, pt; /* RMS about zero */
} acc_t;

/* One module's sums, added up at the end in (timeslice, module) order:
 * the totals do not depend on the order the modules arrived in. */
typedef struct done {
    uint32_t ts;
    uint16_t module;
    uint8_t station;
    acc_t a;
} done_t;

static void acc_merge(acc_t *t, const acc_t *a)
{
    t->points += a->points;
    t->points_both += a->points_both;
    t->hits += a->hits;
    t->hits_true += a->hits_true;
    t->points_hit += a->points_hit;
    for (int s = 0; s < 2; s++) {
        t->points_side[s] += a->points_side[s];
        t->clusters[s] += a->clusters[s];
        t->matched[s] += a->matched[s];
        t->found[s] += a->found[s];
        tusk_moments_merge(&t->res[s], &a->res[s]);
        tusk_moments_merge(&t->pull[s], &a->pull[s]);
    }
    tusk_moments_merge(&t->hx, &a->hx);
    tusk_moments_merge(&t->hy, &a->hy);
    tusk_moments_merge(&t->ht, &a->ht);
    tusk_moments_merge(&t->px, &a->px);
    tusk_moments_merge(&t->py, &a->py);
    tusk_moments_merge(&t->pt, &a->pt);
}

struct sts_qa {
    sts_qa_config_t cfg;
    sts_params_t p;
    uint32_t digest;
    tusk_gather_t g;          /* the modules still open; timeslices as units */
    acc_t all, st[256];
    done_t *done;
    size_t n_done, cap_done;
    int max_station;
    int backend;
    uint64_t timeslices, modules, digis, noise_digis, compared, differ_orig, differ_par;
    sts_work_t w;
    /* per module scratch */
    uint64_t *sorted;         /* (time << 32 | digi index), by channel then time */
    uint64_t *tmp;
    uint32_t *chan_off;
    size_t cap_sorted;
    uint32_t *best, *pt_flags;
    double *charge;
    size_t cap_pt;
    uint32_t *cl_point;
    size_t cap_cl;
    sts_cluster_t *cmp_a, *cmp_b;
    size_t cap_cmp;
    /* histograms for the picture: cluster residuals (um) front/back, hit x/y (um) */
    double hlim[4];
    uint64_t h[4][HBINS + 2];
    sts_qa_row_t *rows;
    size_t n_rows;
    bool finished;
};

void sts_qa_config_default(sts_qa_config_t *c)
{
    memset(c, 0, sizeof *c);
    sts_config_default(&c->alg);
    c->compare = true;
    snprintf(c->label, sizeof c->label, "sample");
}

static void free_pending(void *rec)
{
    pending_t *p = rec;
    free(p->keys);
    free(p->digi_point);
    free(p->pt);
    free(p->cl);
    free(p->hit);
    memset(p, 0, sizeof *p);
}

int sts_qa_new(sts_qa_t **out, const sts_qa_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = sts_config_check(&cfg->alg, err);
    if (st != TUSK_OK)
        return st;
    sts_qa_t *q = calloc(1, sizeof *q);
    if (!q)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    q->cfg = *cfg;
    tusk_gather_init(&q->g, sizeof(pending_t), free_pending, "timeslice", "module");
    sts_params_of(&cfg->alg, &q->p);
    q->digest = sts_config_digest(&cfg->alg);
    q->max_station = -1;
    q->hlim[0] = q->hlim[1] = 60.0;  /* um */
    q->hlim[2] = 60.0;
    q->hlim[3] = 1200.0;
    *out = q;
    return TUSK_OK;
}

void sts_qa_destroy(sts_qa_t **qa)
{
    if (!qa || !*qa)
        return;
    sts_qa_t *q = *qa;
    tusk_gather_free(&q->g);
    free(q->done);
    sts_work_free(&q->w);
    free(q->sorted);
    free(q->tmp);
    free(q->chan_off);
    free(q->best);
    free(q->pt_flags);
    free(q->charge);
    free(q->cl_point);
    free(q->cmp_a);
    free(q->cmp_b);
    free(q->rows);
    free(q);
    *qa = NULL;
}

static void histo(sts_qa_t *q, int k, double x)
{
    double lim = q->hlim[k];
    /* not a number (a fuzzed frame's) counts as overflow */
    int b = !(x < lim) ? HBINS + 1 : x < -lim ? 0 : 1 + (int)((x + lim) / (2 * lim) * HBINS);
    if (b > HBINS + 1)
        b = HBINS + 1;
    q->h[k][b]++;
}

/* The strip-scale residual of a cluster at x against a point at u on a
 * side of S strips; the back side's strips continue across its edges. */
static double strip_residual(double x, double u, uint32_t S, int side)
{
    double r = x - u;
    if (side) {
        if (r > 0.5 * S)
            r -= S;
        else if (r < -0.5 * S)
            r += S;
    }
    return r;
}

static int cmp_record(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(sts_cluster_t));
}

static int analyse(sts_qa_t *q, pending_t *p, tusk_error_t *err)
{
    const sts_module_t *m = &p->m;
    uint32_t n = m->hdr.n_digis, S = m->hdr.strips, C = 2 * S, np = p->n_points, nc = p->n_front + p->n_back;
    if (p->n_hits && nc == 0)
        return tusk_error_set(err, TUSK_EINVAL, "timeslice %u, module %u: hits without clusters",
                              (unsigned)p->head.unit, (unsigned)p->head.part);
    for (uint32_t k = 0; k < p->n_hits; k++)
        if (p->hit[k].front >= p->n_front || p->hit[k].back >= p->n_back)
            return tusk_error_set(err, TUSK_EINVAL,
                                  "timeslice %u, module %u: hit %u names clusters %u (front) and %u (back), the module "
                                  "has %u and %u",
                                  (unsigned)p->head.unit, (unsigned)p->head.part, (unsigned)k,
                                  (unsigned)p->hit[k].front, (unsigned)p->hit[k].back, (unsigned)p->n_front,
                                  (unsigned)p->n_back);
    if (q->backend == 0)
        q->backend = p->backend;
    /* digis by channel, then time: (time << 32 | index) in channel segments */
    if (n > q->cap_sorted || !q->sorted) {
        size_t cap = n + n / 4 + 64;
        uint64_t *a = realloc(q->sorted, cap * sizeof *a), *b = a ? realloc(q->tmp, cap * sizeof *b) : NULL;
        if (a)
            q->sorted = a;
        if (b)
            q->tmp = b;
        if (!a || !b)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        q->cap_sorted = cap;
    }
    if (!q->chan_off && !(q->chan_off = malloc((STS_MAX_CHANNELS + 2) * sizeof *q->chan_off)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    uint32_t *off = q->chan_off;
    memset(off, 0, (C + 2) * sizeof *off);
    for (uint32_t i = 0; i < n; i++)
        off[sts_key_channel(p->keys[i]) + 2]++;
    for (uint32_t c = 0; c < C; c++)
        off[c + 2] += off[c + 1];
    for (uint32_t i = 0; i < n; i++)
        q->sorted[off[sts_key_channel(p->keys[i]) + 1]++] = (uint64_t)sts_key_time(p->keys[i]) << 32 | i;
    for (uint32_t c = 0; c < C; c++)
        tusk_radix_sort_u64(q->sorted + off[c], q->tmp, off[c + 1] - off[c]);
    /* per point: which sides it left digis on (bits 0, 1), found on (2, 3), hit (4) */
    size_t need = np > nc ? np : nc;
    if (need + 1 > q->cap_pt) {
        size_t cap = need + need / 4 + 64;
        uint32_t *b = realloc(q->best, cap * sizeof *b), *f = b ? realloc(q->pt_flags, cap * sizeof *f) : NULL;
        double *ch = f ? realloc(q->charge, cap * sizeof *ch) : NULL;
        if (b)
            q->best = b;
        if (f)
            q->pt_flags = f;
        if (ch)
            q->charge = ch;
        if (!b || !f || !ch)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        q->cap_pt = cap;
    }
    if (nc + 1 > q->cap_cl) {
        size_t cap = nc + nc / 4 + 64;
        uint32_t *c = realloc(q->cl_point, cap * sizeof *c);
        if (!c)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        q->cl_point = c;
        q->cap_cl = cap;
    }
    memset(q->pt_flags, 0, np * sizeof *q->pt_flags);
    uint64_t noise = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = p->digi_point[i];
        if (k == ADF_STS_NOISE)
            noise++;
        else
            q->pt_flags[k] |= sts_key_channel(p->keys[i]) >= S ? 2u : 1u;
    }
    /* each cluster's point */
    int station = m->hdr.station;
    if (station > q->max_station)
        q->max_station = station;
    if (tusk_grow(&q->done, &q->cap_done, q->n_done + 1, sizeof *q->done) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    done_t *dn = &q->done[q->n_done++];
    memset(dn, 0, sizeof *dn);
    dn->ts = p->head.unit;
    dn->module = p->head.part;
    dn->station = (uint8_t)station;
    acc_t *sa = &dn->a;
    for (uint32_t k = 0; k < nc; k++) {
        const adf_sts_cluster_t *c = &p->cl[k];
        double window = (double)q->p.delta * c->size + 1.0;
        /* candidate points and their charge, in a few slots */
        uint32_t cand[64];
        double qc[64];
        unsigned n_cand = 0;
        for (uint32_t ch = c->channel; ch < (uint32_t)c->channel + c->size && ch < C; ch++) {
            uint32_t lo = off[ch], hi = off[ch + 1], best = UINT32_MAX;
            double bd = 0;
            for (uint32_t j = lo; j < hi; j++) {
                double d = fabs((double)(q->sorted[j] >> 32) - (double)c->time);
                if (best == UINT32_MAX || d < bd) {
                    best = (uint32_t)q->sorted[j];
                    bd = d;
                }
            }
            if (best == UINT32_MAX || bd > window)
                continue;
            uint32_t pt = p->digi_point[best];
            unsigned s = 0;
            while (s < n_cand && cand[s] != pt)
                s++;
            if (s == n_cand) {
                if (n_cand == 64)
                    continue;
                cand[n_cand] = pt;
                qc[n_cand++] = 0;
            }
            qc[s] += sts_key_charge(p->keys[best]);
        }
        uint32_t pt = ADF_STS_NOISE;
        double bq = -1;
        for (unsigned s = 0; s < n_cand; s++)
            if (qc[s] > bq) {
                bq = qc[s];
                pt = cand[s];
            }
        q->cl_point[k] = pt;
        int side = k >= p->n_front;
        sa->clusters[side]++;
        if (pt == ADF_STS_NOISE)
            continue;
        sa->matched[side]++;
        q->pt_flags[pt] |= side ? 8u : 4u;
        double u = side ? p->pt[pt].u_back : p->pt[pt].u_front;
        double r = strip_residual(c->position, u, S, side);
        double pull = c->position_error > 0 ? r / c->position_error : 0.0;
        tusk_moments_add(&sa->res[side], r);
        tusk_moments_add(&sa->pull[side], pull);
        histo(q, side, r * m->hdr.pitch_mm * 1000.0);
    }
    for (uint32_t k = 0; k < p->n_hits; k++) {
        const adf_sts_hit_t *h = &p->hit[k];
        uint32_t a = q->cl_point[h->front], b = q->cl_point[p->n_front + h->back];
        sa->hits++;
        if (a == ADF_STS_NOISE || a != b)
            continue;
        sa->hits_true++;
        q->pt_flags[a] |= 16u;
        const adf_sts_point_t *t = &p->pt[a];
        double dx = (double)h->x - t->x, dy = (double)h->y - t->y, dt = (double)h->time - t->time;
        tusk_moments_add(&sa->hx, dx * 1000.0);
        tusk_moments_add(&sa->hy, dy * 1000.0);
        tusk_moments_add(&sa->ht, dt);
        tusk_moments_add(&sa->px, h->sigma_x > 0 ? dx / h->sigma_x : 0);
        tusk_moments_add(&sa->py, h->sigma_y > 0 ? dy / h->sigma_y : 0);
        tusk_moments_add(&sa->pt, h->time_error > 0 ? dt / h->time_error : 0);
        histo(q, 2, dx * 1000.0);
        histo(q, 3, dy * 1000.0);
    }
    for (uint32_t k = 0; k < np; k++) {
        uint32_t f = q->pt_flags[k];
        sa->points++;
        for (int side = 0; side < 2; side++)
            if (f & (1u << side)) {
                sa->points_side[side]++;
                sa->found[side] += (f >> (2 + side)) & 1u;
            }
        if ((f & 3u) == 3u) {
            sa->points_both++;
            sa->points_hit += (f >> 4) & 1u;
        }
    }
    q->modules++;
    q->digis += n;
    q->noise_digis += noise;
    /* the two cluster finders on these digis */
    if (q->cfg.compare) {
        sts_module_t mm = *m;
        mm.digi = p->keys;
        size_t na, nfa, nb, nfb;
        if (sts_orig_clusters(&q->w, &q->p, &mm, &na, &nfa) != TUSK_OK)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        if (na + 1 > q->cap_cmp || n + 1 > q->cap_cmp) {
            size_t cap = (na > n ? na : n) + 64;
            sts_cluster_t *a = realloc(q->cmp_a, cap * sizeof *a), *b = a ? realloc(q->cmp_b, cap * sizeof *b) : NULL;
            if (a)
                q->cmp_a = a;
            if (b)
                q->cmp_b = b;
            if (!a || !b)
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            q->cap_cmp = cap;
        }
        memcpy(q->cmp_a, q->w.cl, na * sizeof *q->cmp_a);
        if (sts_par_clusters(&q->w, &q->p, &mm, &nb, &nfb) != TUSK_OK)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memcpy(q->cmp_b, q->w.cl, nb * sizeof *q->cmp_b);
        /* as multisets: both sorted by their bytes, then merged */
        qsort(q->cmp_a, na, sizeof *q->cmp_a, cmp_record);
        qsort(q->cmp_b, nb, sizeof *q->cmp_b, cmp_record);
        size_t i = 0, j = 0;
        while (i < na || j < nb) {
            int d;
            if (i == na)
                d = 1;
            else if (j == nb)
                d = -1;
            else
                d = cmp_record(&q->cmp_a[i], &q->cmp_b[j]);
            if (d == 0) {
                i++;
                j++;
            } else if (d < 0) {
                q->differ_orig++;
                i++;
            } else {
                q->differ_par++;
                j++;
            }
        }
        q->compared += nb;
    }
    return TUSK_OK;
}

static int settings_ok(sts_qa_t *q, uint32_t settings, const adf_frame_t *f, const char *what, tusk_error_t *err)
{
    if (settings == q->digest)
        return TUSK_OK;
    return tusk_error_set(err, TUSK_EINVAL,
                          "%s at offset %llu (timeslice %u) was made with other settings than this analysis (digest "
                          "0x%08X, here 0x%08X): give the analysis the reconstruction's keys",
                          what, (unsigned long long)f->offset, (unsigned)f->key.event, (unsigned)settings,
                          (unsigned)q->digest);
}

static int on_frame(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    sts_qa_t *q = ctx;
    adf_error_t e;
    pending_t *p = NULL;
    switch (f->key.type) {
    case ADF_TYPE_DATA_STS_DIGIS: {
        adf_sts_digis_t d;
        if (adf_sts_digis_decode(f, &d, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (!(p = tusk_gather_part(&q->g, f->key.event, d.module, err)))
            return TUSK_ENOMEM;
        if (p->head.have & F_DIGIS)
            return tusk_error_set(err, TUSK_EINVAL, "timeslice %u: module %u's digis came twice", (unsigned)f->key.event,
                                  (unsigned)d.module);
        if (!(p->keys = malloc((d.n_digis ? d.n_digis : 1) * sizeof *p->keys)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        adf_sts_digis_keys(&d, 0, d.n_digis, p->keys);
        p->m.timeslice = f->key.event;
        p->m.timestamp = f->key.timestamp;
        p->m.hdr = d;
        p->m.hdr.raw = NULL;
        p->m.digi = p->keys;
        p->head.have |= F_DIGIS;
        int st = tusk_gather_unit(&q->g, f->key.event, d.modules, err);
        if (st != TUSK_OK)
            return st;
        break;
    }
    case ADF_TYPE_DATA_STS_TRUTH: {
        adf_sts_truth_t t;
        if (adf_sts_truth_decode(f, &t, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (!(p = tusk_gather_part(&q->g, f->key.event, t.module, err)))
            return TUSK_ENOMEM;
        if (p->head.have & F_TRUTH)
            return tusk_error_set(err, TUSK_EINVAL, "timeslice %u: module %u's truth came twice", (unsigned)f->key.event,
                                  (unsigned)t.module);
        p->pt = malloc((t.n_points ? t.n_points : 1) * sizeof *p->pt);
        p->digi_point = malloc((t.n_digis ? t.n_digis : 1) * sizeof *p->digi_point);
        if (!p->pt || !p->digi_point)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < t.n_points; i++)
            adf_sts_truth_point(&t, i, &p->pt[i]);
        adf_sts_truth_digis(&t, 0, t.n_digis, p->digi_point);
        p->n_points = t.n_points;
        p->truth_digis = t.n_digis;
        p->head.have |= F_TRUTH;
        break;
    }
    case ADF_TYPE_DATA_STS_CLUSTERS: {
        adf_sts_clusters_t c;
        if (adf_sts_clusters_decode(f, &c, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        int st = settings_ok(q, c.settings, f, "data:sts_clusters", err);
        if (st != TUSK_OK)
            return st;
        if (!(p = tusk_gather_part(&q->g, f->key.event, c.module, err)))
            return TUSK_ENOMEM;
        if (p->head.have & F_CLUSTERS)
            return tusk_error_set(err, TUSK_EINVAL, "timeslice %u: module %u's clusters came twice",
                                  (unsigned)f->key.event, (unsigned)c.module);
        uint32_t nc = c.n_front + c.n_back;
        if (!(p->cl = malloc((nc ? nc : 1) * sizeof *p->cl)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < nc; i++)
            adf_sts_cluster(&c, i, &p->cl[i]);
        p->n_front = c.n_front;
        p->n_back = c.n_back;
        p->backend = c.backend;
        p->cl_strips = c.strips;
        p->head.have |= F_CLUSTERS;
        break;
    }
    case ADF_TYPE_DATA_STS_HITS: {
        adf_sts_hits_t h;
        if (adf_sts_hits_decode(f, &h, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        int st = settings_ok(q, h.settings, f, "data:sts_hits", err);
        if (st != TUSK_OK)
            return st;
        if (!(p = tusk_gather_part(&q->g, f->key.event, h.module, err)))
            return TUSK_ENOMEM;
        if (p->head.have & F_HITS)
            return tusk_error_set(err, TUSK_EINVAL, "timeslice %u: module %u's hits came twice", (unsigned)f->key.event,
                                  (unsigned)h.module);
        if (!(p->hit = malloc((h.n_hits ? h.n_hits : 1) * sizeof *p->hit)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < h.n_hits; i++)
            adf_sts_hit(&h, i, &p->hit[i]);
        p->n_hits = h.n_hits;
        p->head.have |= F_HITS;
        break;
    }
    default: return TUSK_OK;
    }
    if (p->head.have != F_ALL)
        return TUSK_OK;
    int st = TUSK_OK;
    if (p->truth_digis != p->m.hdr.n_digis)
        st = tusk_error_set(err, TUSK_EINVAL, "timeslice %u, module %u: truth for %u digis, the module has %u",
                            (unsigned)p->head.unit, (unsigned)p->head.part, (unsigned)p->truth_digis,
                            (unsigned)p->m.hdr.n_digis);
    else if (p->cl_strips != p->m.hdr.strips)
        st = tusk_error_set(err, TUSK_EINVAL,
                            "timeslice %u, module %u: clusters of %u strips a side, the module has %u",
                            (unsigned)p->head.unit, (unsigned)p->head.part, (unsigned)p->cl_strips,
                            (unsigned)p->m.hdr.strips);
    if (st == TUSK_OK)
        st = analyse(q, p, err);
    tusk_gather_close(&q->g, p);
    return st;
}

int sts_qa_feed(sts_qa_t *q, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    if (q->finished)
        return tusk_error_set(err, TUSK_EINVAL, "STS analysis: frames after the end");
    return adf_frames_read(buf, size, base, ADF_FRAMES_ALL, on_frame, q, err);
}

static void row_of(const acc_t *a, int station, sts_qa_row_t *r)
{
    memset(r, 0, sizeof *r);
    r->station = station;
    r->points = a->points;
    r->points_front = a->points_side[0];
    r->points_back = a->points_side[1];
    r->points_both = a->points_both;
    for (int s = 0; s < 2; s++) {
        r->clusters[s] = a->clusters[s];
        r->clusters_matched[s] = a->matched[s];
        r->points_found[s] = a->found[s];
        r->res_mean[s] = tusk_moments_mean(&a->res[s]);
        r->res_rms[s] = tusk_moments_rms(&a->res[s]);
        r->pull_mean[s] = tusk_moments_mean(&a->pull[s]);
        r->pull_rms[s] = tusk_moments_rms(&a->pull[s]);
    }
    r->hits = a->hits;
    r->hits_true = a->hits_true;
    r->points_hit = a->points_hit;
    r->hx_rms = tusk_moments_rms(&a->hx);
    r->hy_rms = tusk_moments_rms(&a->hy);
    r->ht_rms = tusk_moments_rms(&a->ht);
    r->hx_pull = tusk_moments_rms(&a->px);
    r->hy_pull = tusk_moments_rms(&a->py);
    r->ht_pull = tusk_moments_rms(&a->pt);
}

static int by_module(const void *a, const void *b)
{
    const done_t *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->module < y->module ? -1 : x->module > y->module;
}

int sts_qa_finish(sts_qa_t *q, tusk_error_t *err)
{
    if (q->finished)
        return TUSK_OK;
    const tusk_part_t *p = tusk_gather_open(&q->g);
    const tusk_unit_t *u = tusk_gather_short(&q->g);
    if (p) {
        static const char *const names[] = {"data:sts_digis", "data:sts_truth", "data:sts_clusters", "data:sts_hits"};
        char missing[96];
        tusk_gather_missing(p->have, names, 4, missing, sizeof missing);
        return tusk_error_set(err, TUSK_EINVAL,
                              "STS analysis: %zu module%s never got all four frames; the first, timeslice %u module "
                              "%u, lacks %s",
                              q->g.n, q->g.n == 1 ? "" : "s", (unsigned)p->unit, (unsigned)p->part, missing);
    }
    if (u)
        return tusk_error_set(err, TUSK_EINVAL, "STS analysis: timeslice %u had %u of its %u modules",
                              (unsigned)u->unit, (unsigned)u->seen, (unsigned)u->expected);
    q->timeslices = q->g.n_units;
    if (q->n_done)
        qsort(q->done, q->n_done, sizeof *q->done, by_module);
    for (size_t i = 0; i < q->n_done; i++) {
        acc_merge(&q->all, &q->done[i].a);
        acc_merge(&q->st[q->done[i].station], &q->done[i].a);
    }
    size_t n = 1 + (size_t)(q->max_station + 1);
    if (!(q->rows = calloc(n, sizeof *q->rows)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    row_of(&q->all, -1, &q->rows[0]);
    for (int s = 0; s <= q->max_station; s++)
        row_of(&q->st[s], s, &q->rows[1 + s]);
    q->n_rows = n;
    q->finished = true;
    return TUSK_OK;
}

void sts_qa_summary(const sts_qa_t *q, sts_qa_summary_t *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->label, sizeof s->label, "%s", q->cfg.label);
    s->backend = q->backend;
    s->timeslices = q->timeslices;
    s->modules = q->modules;
    s->digis = q->digis;
    s->noise_digis = q->noise_digis;
    s->compared = q->compared;
    s->differ_original = q->differ_orig;
    s->differ_parallel = q->differ_par;
    s->rows = q->n_rows;
    s->row = q->rows;
}

void sts_qa_print(const sts_qa_t *q, FILE *out)
{
    fprintf(out, "%s (%s): %llu timeslices, %llu modules, %llu digis (%.2f %% noise)\n", q->cfg.label,
            sts_backend_name(q->backend), (unsigned long long)q->timeslices, (unsigned long long)q->modules,
            (unsigned long long)q->digis, tusk_pct(q->noise_digis, q->digis));
    if (q->cfg.compare)
        fprintf(out,
                "  original against parallel cluster finder: %llu clusters; %llu (%.4f %%) only the original makes, "
                "%llu (%.4f %%) only the parallel\n",
                (unsigned long long)q->compared, (unsigned long long)q->differ_orig,
                tusk_pct(q->differ_orig, q->compared), (unsigned long long)q->differ_par,
                tusk_pct(q->differ_par, q->compared));
    fprintf(out, "  %-7s %9s %8s %8s %7s %7s %8s %8s %8s %8s %8s %8s %8s %8s %7s %7s %7s %6s %6s %6s\n", "station",
            "points", "eff F %", "eff B %", "fake F%", "fake B%", "res F", "res B", "pull F", "pull B", "hits",
            "hit eff%", "ghost %", "hit x", "hit y", "hit t", "pull x", "pull y", "pull t", "");
    for (size_t i = 0; i < q->n_rows; i++) {
        const sts_qa_row_t *r = &q->rows[i];
        char st[16];
        if (r->station < 0)
            snprintf(st, sizeof st, "all");
        else
            snprintf(st, sizeof st, "%d", r->station);
        fprintf(out,
                "  %-7s %9llu %8.2f %8.2f %7.2f %7.2f %8.4f %8.4f %8.3f %8.3f %8llu %8.2f %8.2f %6.1fum %5.0fum "
                "%5.2fns %6.3f %6.3f %6.3f\n",
                st, (unsigned long long)r->points, tusk_pct(r->points_found[0], r->points_front),
                tusk_pct(r->points_found[1], r->points_back),
                tusk_pct(r->clusters[0] - r->clusters_matched[0], r->clusters[0]),
                tusk_pct(r->clusters[1] - r->clusters_matched[1], r->clusters[1]), r->res_rms[0], r->res_rms[1],
                r->pull_rms[0], r->pull_rms[1], (unsigned long long)r->hits, tusk_pct(r->points_hit, r->points_both),
                tusk_pct(r->hits - r->hits_true, r->hits), r->hx_rms, r->hy_rms, r->ht_rms, r->hx_pull, r->hy_pull,
                r->ht_pull);
    }
    fprintf(out, "  (efficiency: points found among those that left digis on the side; fake: clusters of no point; res: "
                 "cluster residual RMS in strips; pulls: RMS; ghost: hits whose clusters have different points)\n");
}

/* The picture's data: the residual histograms. */
static void write_residuals_dat(FILE *fp, const void *ctx, bool svg)
{
    const sts_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "# STS residuals (um, bin centre) and entries: front clusters, back clusters (strip direction), hit "
                "x, hit y\n");
    for (int b = 1; b <= HBINS; b++) {
        for (int k = 0; k < 4; k++) {
            double lim = q->hlim[k], x = -lim + (b - 0.5) * 2 * lim / HBINS;
            fprintf(fp, "%s%.6g %llu", k ? " " : "", x, (unsigned long long)q->h[k][b]);
        }
        fprintf(fp, "\n");
    }
}

static void write_residuals_gp(FILE *fp, const void *ctx, bool svg)
{
    const sts_qa_t *q = ctx;
    tusk_gnuplot_head(fp, "residuals", "sts/sts_qa.c", "residuals.dat", svg, 1000, 700);
    fprintf(fp, "set multiplot layout 2,2 title ");
    char title[160];
    snprintf(title, sizeof title, "%s: STS residuals against the Monte Carlo truth (%s)", q->cfg.label,
             sts_backend_name(q->backend));
    tusk_gnuplot_quote(fp, title);
    fprintf(fp, "\nset style fill solid 0.6 noborder\nset ylabel 'entries'\nset yrange [0:*]\nset key top right\n");
    static const char *const what[4] = {"front clusters: position - truth (um)", "back clusters: position - truth (um)",
                                        "hits: x - x_true (um)", "hits: y - y_true (um)"};
    for (int k = 0; k < 4; k++) {
        fprintf(fp, "set xrange [%g:%g]\nset xlabel '%s'\n", -q->hlim[k], q->hlim[k], what[k]);
        fprintf(fp, "plot 'residuals.dat' using %d:%d with boxes lc rgb '%s' notitle\n", 2 * k + 1, 2 * k + 2,
                k < 2 ? "#3060c0" : "#208040");
    }
    fprintf(fp, "unset multiplot\n");
}

/* The picture, its data and script (base/report.h). */
static int write_plot(const void *ctx, const char *dir, const char *format, tusk_error_t *err)
{
    static const tusk_report_file_t files[] = {{"residuals.dat", write_residuals_dat},
                                               {"residuals.gp", write_residuals_gp}};
    return tusk_report_picture(dir, "residuals", format, files, 2, ctx, err);
}

static void write_summary(FILE *fp, const void *ctx, bool svg)
{
    const sts_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "sample,backend,timeslices,modules,digis,noise_digis,compared,only_original,only_parallel,"
                "fraction_original,fraction_parallel\n");
    fprintf(fp, "%s,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.8f,%.8f\n", q->cfg.label, sts_backend_name(q->backend),
            (unsigned long long)q->timeslices, (unsigned long long)q->modules, (unsigned long long)q->digis,
            (unsigned long long)q->noise_digis, (unsigned long long)q->compared, (unsigned long long)q->differ_orig,
            (unsigned long long)q->differ_par, q->compared ? (double)q->differ_orig / (double)q->compared : 0.0,
            q->compared ? (double)q->differ_par / (double)q->compared : 0.0);
}

static void write_stations(FILE *fp, const void *ctx, bool svg)
{
    const sts_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "sample,station,points,points_front,points_back,points_both,clusters_front,clusters_back,"
                "matched_front,matched_back,found_front,found_back,res_mean_front,res_rms_front,res_mean_back,"
                "res_rms_back,pull_mean_front,pull_rms_front,pull_mean_back,pull_rms_back,hits,hits_true,points_hit,"
                "hit_x_rms_um,hit_y_rms_um,hit_t_rms_ns,pull_x_rms,pull_y_rms,pull_t_rms\n");
    for (size_t i = 0; i < q->n_rows; i++) {
        const sts_qa_row_t *r = &q->rows[i];
        fprintf(fp,
                "%s,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%llu,"
                "%llu,%llu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                q->cfg.label, r->station, (unsigned long long)r->points, (unsigned long long)r->points_front,
                (unsigned long long)r->points_back, (unsigned long long)r->points_both,
                (unsigned long long)r->clusters[0], (unsigned long long)r->clusters[1],
                (unsigned long long)r->clusters_matched[0], (unsigned long long)r->clusters_matched[1],
                (unsigned long long)r->points_found[0], (unsigned long long)r->points_found[1], r->res_mean[0],
                r->res_rms[0], r->res_mean[1], r->res_rms[1], r->pull_mean[0], r->pull_rms[0], r->pull_mean[1],
                r->pull_rms[1], (unsigned long long)r->hits, (unsigned long long)r->hits_true,
                (unsigned long long)r->points_hit, r->hx_rms, r->hy_rms, r->ht_rms, r->hx_pull, r->hy_pull,
                r->ht_pull);
    }
}

int sts_qa_write(const sts_qa_t *q, const char *dir, bool plot, const char *format, tusk_error_t *err)
{
    if (!q->finished)
        return tusk_error_set(err, TUSK_EINVAL, "STS analysis: write before finish");
    static const tusk_report_file_t files[] = {{"summary.csv", write_summary}, {"stations.csv", write_stations}};
    return tusk_report_write(dir, files, 2, q, plot ? write_plot : NULL, format, err);
}
