/* pipeline.c - clustering and the pipeline both backends share
 * (tracking_private.h): the events of a call are cut into chunks of
 * consecutive events, and the host's threads (base/pool.h) take chunks:
 * clustering (both passes), acceptance, the gammas of each event and the
 * statistics. A backend that searches on the CPU does its search there
 * too, a chunk at a time (one job over the chunks for the whole call);
 * a device gets the clusters of a pass of every chunk at once (a job for
 * each step between its launches).
 *
 * Whatever the threads and chunks, the results are those of one thread:
 * an event's clusters and gammas depend on its points alone, the counts
 * are whole numbers, and the two energy sums of the statistics are added
 * on the caller's thread in the order one chunk would add them (each
 * chunk keeps its terms in that order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tracking_private.h"

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)
#define SPLIT_FACTOR 0.8    /* oversize clusters: the angle shrinks by this a step ... */
#define SPLIT_MIN_DEG 0.01  /* ... down to this, then they are cut in index order */
#define SPLIT_STACK 64      /* points of a split cluster the stack holds (more: the heap) */

/* Chunks: a few a thread, so that the threads finish together, of at
 * least CHUNK_MIN events (the cost of a chunk is a few lists) and at most
 * CHUNK_MAX (their lists stay in the caches). */
#define CHUNKS_A_THREAD 8
#define CHUNK_MIN 16
#define CHUNK_MAX 2048

/* KEV_*: the runs of a chunk's energy terms (trk_chunk_t.kev). */
enum { KEV_ACCEPTED_1, KEV_UNACCEPTED_1, KEV_ACCEPTED_2, KEV_UNACCEPTED_2 };

/* ---- clustering ------------------------------------------------------------------------- */

static unsigned find(unsigned *parent, unsigned i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static double radius(const track_point_t *p)
{
    return sqrt((double)p->pos[0] * p->pos[0] + (double)p->pos[1] * p->pos[1] + (double)p->pos[2] * p->pos[2]);
}

size_t trk_cluster_r(const track_point_t *pts, const double *r, size_t n, double angle_deg, unsigned *label)
{
    if (n == 0)
        return 0;
    /* label[] serves as the union-find forest first. */
    double cmin = cos(angle_deg * DEG);
    for (size_t i = 0; i < n; i++)
        label[i] = (unsigned)i;
    for (size_t i = 0; i < n; i++) {
        const double ri = r ? r[i] : radius(&pts[i]);
        for (size_t j = i + 1; j < n; j++) {
            const double rj = r ? r[j] : radius(&pts[j]);
            double dot = (double)pts[i].pos[0] * pts[j].pos[0] + (double)pts[i].pos[1] * pts[j].pos[1] +
                         (double)pts[i].pos[2] * pts[j].pos[2];
            double rr = ri * rj;
            /* angle < angle_deg <=> cos > cos(angle); a point at the origin joins nothing */
            if (rr > 0.0 && dot > cmin * rr) {
                unsigned a = find(label, (unsigned)i), b = find(label, (unsigned)j);
                if (a != b)
                    label[a > b ? a : b] = a < b ? a : b;
            }
        }
    }
    /* Roots are the smallest index of their tree: point every label at its
     * root, then number the roots in index order (a root comes before the
     * rest of its tree, so its number is there when they need it). */
    for (size_t i = 0; i < n; i++)
        label[i] = find(label, (unsigned)i);
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        label[i] = label[i] == i ? (unsigned)count++ : label[label[i]];
    return count;
}

size_t track_cluster(const track_point_t *pts, size_t n, double angle_deg, unsigned *label)
{
    return trk_cluster_r(pts, NULL, n, angle_deg, label);
}

/* ---- threads and chunks ------------------------------------------------------------------ */

static void scratch_free(trk_scratch_t *s)
{
    free(s->label);
    free(s->idx);
    free(s->r);
    free(s->gam);
    free(s->live);
    free(s->tail);
    free(s->merge);
    free(s->keys);
    free(s->psa);
    free(s->truth);
    adf_reader_destroy(&s->reader);
    adf_writer_destroy(&s->writer);
}

static void chunks_free(track_t *t)
{
    for (size_t k = 0; k < t->chunk_cap; k++) {
        free(t->chunk[k].cl);
        free(t->chunk[k].kev);
        free(t->chunk[k].g);
        free(t->chunk[k].pt);
    }
    free(t->chunk);
    t->chunk = NULL;
    t->chunk_cap = t->n_chunks = 0;
}

void trk_pipeline_free(track_t *t)
{
    tusk_pool_destroy(&t->pool);
    for (unsigned i = 0; t->scratch && i < t->threads; i++)
        scratch_free(&t->scratch[i]);
    free(t->scratch);
    t->scratch = NULL;
    t->threads = 0;
    chunks_free(t);
    free(t->frames);
    t->frames = NULL;
    t->frames_cap = 0;
}

int track_set_threads(track_t *t, unsigned threads, tusk_error_t *err)
{
    tusk_pool_t *pool = NULL;
    int st = tusk_pool_new(&pool, threads, err);
    if (st)
        return st;
    unsigned n = tusk_pool_threads(pool);
    trk_scratch_t *s = calloc(n, sizeof *s);
    if (!s) {
        tusk_pool_destroy(&pool);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    /* the chunks' lists are kept: they belong to no thread */
    tusk_pool_destroy(&t->pool);
    for (unsigned i = 0; t->scratch && i < t->threads; i++)
        scratch_free(&t->scratch[i]);
    free(t->scratch);
    t->pool = pool;
    t->threads = n;
    t->scratch = s;
    return TUSK_OK;
}

unsigned track_threads(const track_t *t)
{
    return t->threads;
}

void trk_chunks_run(track_t *t, void (*fn)(void *ctx, size_t chunk, unsigned thread), void *ctx)
{
    tusk_pool_run(t->pool, t->n_chunks, fn, ctx);
}

int trk_chunks_make(track_t *t, size_t first, size_t n_ev, tusk_error_t *err)
{
    size_t per = t->chunk_events;
    if (per == 0) {
        size_t parts = (size_t)t->threads * CHUNKS_A_THREAD;
        per = (n_ev + parts - 1) / parts;
        per = per < CHUNK_MIN ? CHUNK_MIN : per > CHUNK_MAX ? CHUNK_MAX : per;
    }
    size_t n = (n_ev + per - 1) / per;
    if (n > t->chunk_cap) {
        trk_chunk_t *c = realloc(t->chunk, n * sizeof *c);
        if (!c)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu chunks)", n);
        memset(c + t->chunk_cap, 0, (n - t->chunk_cap) * sizeof *c);
        t->chunk = c;
        t->chunk_cap = n;
    }
    for (size_t k = 0; k < n; k++) {
        trk_chunk_t *c = &t->chunk[k];
        c->first = first + k * per;
        c->n = n_ev - k * per < per ? n_ev - k * per : per;
        c->cl_n = c->n1 = c->n2 = c->from = c->multi = c->dev = 0;
        c->multi_orders = 0;
        c->kev_n = c->g_n = c->n_pt = 0;
        c->ignored = 0;
        memset(c->kev_end, 0, sizeof c->kev_end);
        memset(&c->stats, 0, sizeof c->stats);
        c->st = TUSK_OK;
    }
    t->n_chunks = n;
    return TUSK_OK;
}

/* The first failure among the chunks, in their order. */
static int chunks_status(const track_t *t, tusk_error_t *err)
{
    for (size_t k = 0; k < t->n_chunks; k++)
        if (t->chunk[k].st) {
            if (err)
                *err = t->chunk[k].err;
            return t->chunk[k].st;
        }
    return TUSK_OK;
}

static int fail(trk_chunk_t *c, int code, const char *what)
{
    if (!c->st)
        c->st = tusk_error_set(&c->err, code, "%s", what);
    return c->st;
}

trk_cluster_t *track_last_clusters(const track_t *t, size_t *n)
{
    size_t total = 0;
    for (size_t k = 0; k < t->n_chunks; k++)
        total += t->chunk[k].cl_n;
    trk_cluster_t *out = malloc((total ? total : 1) * sizeof *out), *o = out;
    if (!out)
        return NULL;
    for (int pass = 0; pass < 3; pass++)
        for (size_t k = 0; k < t->n_chunks; k++) {
            const trk_chunk_t *c = &t->chunk[k];
            size_t a = pass == 0 ? 0 : pass == 1 ? c->n1 : c->n2, b = pass == 0 ? c->n1 : pass == 1 ? c->n2 : c->cl_n;
            memcpy(o, c->cl + a, (b - a) * sizeof *o);
            o += b - a;
        }
    *n = total;
    return out;
}

/* ---- one chunk ---------------------------------------------------------------------------- */

void track_cluster_points(const track_batch_t *b, const trk_cluster_t *c, track_point_t *out)
{
    if (c->m <= c->n) {
        for (unsigned i = 0; i < c->n; i++)
            out[i] = b->pt[c->pt[i]];
        return;
    }
    double sum[TRACK_MAX_CLUSTER][4];
    memset(sum, 0, sizeof sum);
    for (unsigned i = c->m; i-- > 0;) /* downwards: each group ends with its first point's crystal and segment */
        out[c->grp[i]] = b->pt[c->pt[i]];
    for (unsigned i = 0; i < c->m; i++) {
        const track_point_t *p = &b->pt[c->pt[i]];
        double *s = sum[c->grp[i]];
        s[3] += p->energy;
        for (int k = 0; k < 3; k++)
            s[k] += (double)p->energy * p->pos[k];
    }
    for (unsigned g = 0; g < c->n; g++) {
        out[g].energy = (float)sum[g][3];
        if (sum[g][3] > 0.0)
            for (int k = 0; k < 3; k++)
                out[g].pos[k] = (float)(sum[g][k] / sum[g][3]);
    }
}

/* Merge the points of c (m of them in c->pt) into maxp groups: the two
 * groups whose energy-weighted centroids are nearest become one (the
 * first such pair in index order on ties), until maxp are left; groups
 * are numbered in the order of their first point. */
static void merge_nearest(const track_batch_t *b, trk_cluster_t *c, unsigned maxp)
{
    double e[TRK_CLUSTER_MEMBERS], x[TRK_CLUSTER_MEMBERS][3];
    unsigned root[TRK_CLUSTER_MEMBERS], groups = c->m;
    for (unsigned i = 0; i < c->m; i++) {
        const track_point_t *p = &b->pt[c->pt[i]];
        root[i] = i;
        e[i] = p->energy > 0.0f ? p->energy : 0.0;
        for (int k = 0; k < 3; k++)
            x[i][k] = p->pos[k];
    }
    while (groups > maxp) {
        unsigned bi = 0, bj = 0;
        double best = INFINITY;
        for (unsigned i = 0; i < c->m; i++) {
            if (root[i] != i)
                continue;
            for (unsigned j = i + 1; j < c->m; j++) {
                if (root[j] != j)
                    continue;
                const double dx = x[j][0] - x[i][0], dy = x[j][1] - x[i][1], dz = x[j][2] - x[i][2];
                const double d2 = dx * dx + dy * dy + dz * dz;
                if (d2 < best) {
                    best = d2;
                    bi = i;
                    bj = j;
                }
            }
        }
        const double et = e[bi] + e[bj];
        for (int k = 0; k < 3; k++)
            x[bi][k] = et > 0.0 ? (e[bi] * x[bi][k] + e[bj] * x[bj][k]) / et : x[bi][k];
        e[bi] = et;
        for (unsigned i = 0; i < c->m; i++)
            if (root[i] == bj)
                root[i] = bi;
        groups--;
    }
    unsigned number[TRK_CLUSTER_MEMBERS], n = 0;
    for (unsigned i = 0; i < c->m; i++) {
        if (root[i] == i)
            number[i] = n++;
        c->grp[i] = (uint8_t)number[root[i]]; /* root[i] <= i: numbered already */
    }
    c->n = (uint8_t)n;
}

static int push_cluster(trk_chunk_t *ch, const trk_cluster_t *c)
{
    if (tusk_grow(&ch->cl, &ch->cl_cap, ch->cl_n + 1, sizeof *ch->cl))
        return fail(ch, TUSK_ENOMEM, "out of memory (clusters)");
    ch->cl[ch->cl_n++] = *c;
    return TUSK_OK;
}

static int push_kev(trk_chunk_t *ch, double e)
{
    if (tusk_grow(&ch->kev, &ch->kev_cap, ch->kev_n + 1, sizeof *ch->kev))
        return fail(ch, TUSK_ENOMEM, "out of memory (statistics)");
    ch->kev[ch->kev_n++] = e;
    return TUSK_OK;
}

/* Add the cluster of points idx[0..cnt) (batch indices, ascending) of
 * event ev, made at `angle`. One of more than max_points points: with
 * oversize = merge, at most TRK_CLUSTER_MEMBERS points and may_merge,
 * the whole cluster with its nearest points merged until merge_points
 * (or max_points, if fewer) are left (merge_nearest), followed by the
 * parts the split below makes of it, its alternative (second_pass keeps
 * one); otherwise it is reclustered at angles shrinking
 * by SPLIT_FACTOR until it falls apart (each part treated the same way),
 * and below SPLIT_MIN_DEG (points in nearly the same direction) cut into
 * runs of max_points in index order. */
static int add_cluster(const track_t *t, trk_chunk_t *ch, const track_batch_t *b, uint32_t ev, const uint32_t *idx,
                       size_t cnt, double angle, unsigned pass, unsigned flags, bool may_merge)
{
    unsigned maxp = t->cfg.max_points;
    if (cnt <= maxp || (may_merge && t->cfg.oversize == TRACK_OVERSIZE_MERGE && cnt <= TRK_CLUSTER_MEMBERS)) {
        trk_cluster_t c;
        memset(&c, 0, sizeof c);
        c.ev = ev;
        c.n = c.m = (uint8_t)cnt;
        c.pass = (uint8_t)pass;
        c.flags = (uint16_t)flags;
        c.angle = angle;
        memcpy(c.pt, idx, cnt * sizeof *idx);
        if (cnt <= maxp)
            return push_cluster(ch, &c);
        /* the whole, merged, then its parts as oversize = split makes
         * them: the alternatives, of which second_pass keeps one */
        merge_nearest(b, &c, maxp < t->cfg.merge_points ? maxp : t->cfg.merge_points);
        c.flags |= TRACK_GAMMA_MERGED;
        ch->stats.merged++;
        const size_t w = ch->cl_n;
        int st = push_cluster(ch, &c);
        if (!st)
            st = add_cluster(t, ch, b, ev, idx, cnt, angle, pass, flags, false);
        if (!st)
            ch->cl[w].alt = (uint8_t)(ch->cl_n - w - 1);
        return st;
    }
    if (!(flags & TRACK_GAMMA_SPLIT))
        ch->stats.splits++;
    flags |= TRACK_GAMMA_SPLIT;
    track_point_t pts_s[SPLIT_STACK], *pts = pts_s;
    double r_s[SPLIT_STACK], *r = r_s;
    unsigned lab_s[SPLIT_STACK], *lab = lab_s;
    uint32_t sub_s[SPLIT_STACK], *sub = sub_s;
    if (cnt > SPLIT_STACK) {
        pts = malloc(cnt * sizeof *pts);
        r = malloc(cnt * sizeof *r);
        lab = malloc(cnt * sizeof *lab);
        sub = malloc(cnt * sizeof *sub);
    }
    int st = TUSK_OK;
    if (!pts || !r || !lab || !sub) {
        st = fail(ch, TUSK_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < cnt; i++) {
        pts[i] = b->pt[idx[i]];
        r[i] = radius(&pts[i]);
    }
    double a = angle;
    size_t parts = 1;
    while (parts == 1 && a >= SPLIT_MIN_DEG) {
        a *= SPLIT_FACTOR;
        parts = trk_cluster_r(pts, r, cnt, a, lab);
    }
    if (parts > 1) {
        for (size_t p = 0; p < parts && !st; p++) {
            size_t m = 0;
            for (size_t i = 0; i < cnt; i++)
                if (lab[i] == p)
                    sub[m++] = idx[i];
            st = add_cluster(t, ch, b, ev, sub, m, a, pass, flags, may_merge);
        }
    } else {
        for (size_t s = 0; s < cnt && !st; s += maxp)
            st = add_cluster(t, ch, b, ev, idx + s, cnt - s < maxp ? cnt - s : maxp, a, pass, flags, may_merge);
    }
done:
    if (cnt > SPLIT_STACK) {
        free(pts);
        free(r);
        free(lab);
        free(sub);
    }
    return st;
}

/* Count the clusters of 2+ points of the pass under evaluation. */
static void count_multi(trk_chunk_t *ch)
{
    ch->multi = 0;
    ch->multi_orders = 0;
    for (size_t i = ch->from; i < ch->cl_n; i++)
        if (ch->cl[i].n >= 2) {
            ch->multi++;
            ch->multi_orders += trk_factorial(ch->cl[i].n);
        }
}

/* The first pass: the clusters of the chunk's events at cone_deg. */
static int cluster_chunk(const track_t *t, trk_chunk_t *ch, const track_batch_t *b, trk_scratch_t *s)
{
    for (size_t e = ch->first; e < ch->first + ch->n; e++) {
        const trk_event_t *ev = &b->ev[e];
        if (ev->n == 0)
            continue;
        if (ev->n > s->cap) {
            size_t cap = s->cap;
            if (tusk_grow(&s->label, &cap, ev->n, sizeof *s->label))
                return fail(ch, TUSK_ENOMEM, "out of memory");
            cap = s->cap;
            if (tusk_grow(&s->idx, &cap, ev->n, sizeof *s->idx))
                return fail(ch, TUSK_ENOMEM, "out of memory");
            cap = s->cap;
            if (tusk_grow(&s->r, &cap, ev->n, sizeof *s->r))
                return fail(ch, TUSK_ENOMEM, "out of memory");
            s->cap = cap;
        }
        const track_point_t *pts = b->pt + ev->first;
        for (size_t i = 0; i < ev->n; i++)
            s->r[i] = radius(&pts[i]);
        size_t k = trk_cluster_r(pts, s->r, ev->n, t->cfg.cone_deg, s->label);
        if (k == 1) {
            /* all of them: idx is the points in order */
            for (size_t i = 0; i < ev->n; i++)
                s->idx[i] = (uint32_t)(ev->first + i);
            if (add_cluster(t, ch, b, (uint32_t)e, s->idx, ev->n, t->cfg.cone_deg, 0, 0, true))
                return ch->st;
            continue;
        }
        for (size_t c = 0; c < k; c++) {
            size_t m = 0;
            for (size_t i = 0; i < ev->n; i++)
                if (s->label[i] == c)
                    s->idx[m++] = (uint32_t)(ev->first + i);
            if (add_cluster(t, ch, b, (uint32_t)e, s->idx, m, t->cfg.cone_deg, 0, 0, true))
                return ch->st;
        }
    }
    ch->n1 = ch->cl_n;
    ch->from = 0;
    count_multi(ch);
    return TUSK_OK;
}

static double cluster_energy(const track_batch_t *b, const trk_cluster_t *c)
{
    double e = 0.0;
    for (unsigned i = 0; i < c->m; i++)
        e += b->pt[c->pt[i]].energy;
    return e;
}

/* FoM of the evaluator's order (or the single point's), and acceptance. */
static void decide(const track_t *t, const track_batch_t *b, trk_cluster_t *c, double single_max, track_stats_t *st)
{
    track_point_t pts[TRACK_MAX_CLUSTER];
    unsigned perm[TRACK_MAX_CLUSTER];
    if (c->n == 1)
        c->rank = 0;
    if (c->pass < 2) { /* a recombined cluster's FoM is union_order's */
        track_cluster_points(b, c, pts);
        trk_perm_of_rank(c->n, c->rank, perm);
        c->fom = trk_fom_points(t, pts, perm, c->n);
    }
    if (c->n == 1)
        c->accepted = c->fom <= single_max; /* exp(-FoM) is the probability */
    else
        c->accepted = c->fom <= t->cfg.fom_max; /* NaN: rejected */
    st->clusters++;
    if (c->pass < 2) /* a recombined cluster's orders are counted where they are scored */
        st->permutations += trk_factorial(c->n);
}

/* A merged cluster w and its alternative, the parts that follow it
 * (w->alt clusters, as oversize = split makes them): the whole is kept
 * when it is accepted and no part of 2+ points has a lower FoM (a gamma
 * cut into parts leaves them without part of their energy: worse fits;
 * two gammas in one cluster fit worse than each alone), otherwise the
 * parts; the other is dropped (neither accepted nor rejected, not
 * counted unaccepted, its points counted with the one kept). */
static void choose(trk_cluster_t *w)
{
    bool whole = w->accepted;
    for (unsigned k = 1; k <= w->alt && whole; k++)
        if (w[k].n >= 2 && w[k].fom < w->fom)
            whole = false;
    if (whole) {
        for (unsigned k = 1; k <= w->alt; k++) {
            w[k].accepted = 0;
            w[k].dropped = 1;
        }
    } else {
        w->accepted = 0;
        w->dropped = 1;
    }
}

/* After the first pass's evaluation: acceptance, and each rejected
 * cluster's points at a smaller angle (by recluster_deg / cone_deg) into
 * the second pass; one that does not fall apart stays rejected without a
 * second evaluation. */
static int second_pass(const track_t *t, trk_chunk_t *ch, const track_batch_t *b)
{
    const double single_max = -log(t->cfg.single_min_prob);
    for (size_t i = 0; i < ch->n1; i++)
        decide(t, b, &ch->cl[i], single_max, &ch->stats);
    for (size_t i = 0; i < ch->n1; i++)
        if (ch->cl[i].m > ch->cl[i].n)
            choose(ch->cl + i);
    const double shrink = t->cfg.recluster_deg / t->cfg.cone_deg;
    for (size_t i = 0; i < ch->n1; i++) {
        if (ch->cl[i].accepted || ch->cl[i].dropped)
            continue;
        ch->stats.rejected++;
        trk_cluster_t c = ch->cl[i]; /* ch->cl moves as clusters are added */
        track_point_t pts[TRK_CLUSTER_MEMBERS];
        unsigned lab[TRK_CLUSTER_MEMBERS];
        for (unsigned k = 0; k < c.m; k++) /* its batch points, merged or not */
            pts[k] = b->pt[c.pt[k]];
        double angle = c.angle * shrink;
        size_t parts = track_cluster(pts, c.m, angle, lab);
        if (parts < 2)
            continue; /* unaccepted, unless recombination takes it */
        ch->cl[i].split = 1;
        for (size_t p = 0; p < parts; p++) {
            uint32_t sub[TRK_CLUSTER_MEMBERS];
            size_t m = 0;
            for (unsigned k = 0; k < c.m; k++)
                if (lab[k] == p)
                    sub[m++] = c.pt[k];
            if (add_cluster(t, ch, b, c.ev, sub, m, angle, 1, c.flags, true))
                return ch->st;
        }
    }
    ch->from = ch->n1;
    count_multi(ch);
    return TUSK_OK;
}

/* Points of the part scored first whose every order a recombination
 * tries (more: its own best order only). */
#define RECOMBINE_FIRST_ALL 3

/* The recombination's bound (union_low) against rounding: it is
 * computed from the same points with energies summed in another order
 * (equal to within a few ulp), so the angle from energies may differ by
 * up to about 1e-7 rad where acos is steep (cos near +-1) and the excess
 * beyond the Compton edge by about 1e-14; the bound takes that much off
 * each angle term and a relative and absolute margin off the sum. */
#define BOUND_ANGLE_SLACK 1e-6 /* rad */
#define BOUND_EXCESS_SLACK 1e-9
#define BOUND_MARGIN 1e-9

/* What a joinable cluster brings to the bound of the unions it is part
 * of (union_low), from its own points in its own best order. */
typedef struct trk_tail {
    unsigned own[TRACK_MAX_CLUSTER]; /* its best order (its points in pt order) */
    double e;          /* its energy: what reaches its first point when it is scored second */
    double mu;         /*   mu_tot there (1/mm) */
    double first;      /*   its first point's interaction term there (ln mu_tot - ln mu_x:
                          photo-absorption for one point, else Compton) */
    double rest;       /* a lower bound of its terms after its first point's (paths,
                          interactions, the angles at its second point on): the same when
                          it is scored second in a union */
    double depth;      /* germanium before its first point */
    double min_depth;  /*   and before the nearest of its points */
} trk_tail_t;

/* The scattering term at v (trk_angle_parts) less what rounding of the
 * energies can change (BOUND_*_SLACK): at most the term of any order
 * that has a, v and b in a row with those energies. */
static double angle_low(const trk_geo_t *g, double mec2, int a, unsigned v, unsigned b, double e_in, double e_out)
{
    double d, ex, var;
    trk_angle_parts(g, mec2, a, v, b, e_in, e_out, &d, &ex, &var);
    const double dd = fmax(fabs(d) - BOUND_ANGLE_SLACK, 0.0), xx = fmax(ex - BOUND_EXCESS_SLACK, 0.0);
    const double term = 0.5 * (dd * dd + xx * xx) / var;
    return term >= 0.0 ? term : 0.0; /* NaN: no bound */
}

/* Cluster c's tail (c joinable: m = n, its order c->rank). */
static void tail_make(const track_t *t, const track_batch_t *b, const trk_cluster_t *c, trk_tail_t *tl)
{
    const trk_setup_t *su = &t->setup;
    track_point_t pts[TRACK_MAX_CLUSTER];
    memset(pts, 0, sizeof pts); /* (n >= 1: for the compiler) */
    trk_geo_t g;
    const unsigned n = c->n;
    for (unsigned i = 0; i < n; i++)
        pts[i] = b->pt[c->pt[i]];
    trk_geo_points(t, pts, n, &g);
    trk_perm_of_rank(n, n > 1 ? c->rank : 0, tl->own);
    const unsigned *o = tl->own;
    double lt, lc, lp;
    trk_lookup(t->mu, su, g.e0, &lt, &lc, &lp);
    tl->e = g.e0;
    tl->mu = exp(lt);
    tl->first = lt - (n == 1 ? lp : lc);
    tl->depth = g.depth[o[0]];
    tl->min_depth = INFINITY;
    for (unsigned i = 0; i < n; i++)
        tl->min_depth = fmin(tl->min_depth, g.depth[i]);
    double rest = 0.0, e = g.e0, e_prev = 0.0;
    for (unsigned k = 1; k < n; k++) {
        e_prev = e;
        e -= g.e[o[k - 1]]; /* what reaches o[k] */
        trk_lookup(t->mu, su, e, &lt, &lc, &lp);
        rest += exp(lt) * trk_dist(&g, su, o[k - 1], o[k]) + (lt - (k == n - 1 ? lp : lc));
        if (k >= 2)
            rest += angle_low(&g, su->mec2, (int)o[k - 2], o[k - 1], o[k], e_prev, e);
    }
    tl->rest = rest == rest ? rest : -INFINITY; /* NaN: no bound */
}

/* A lower bound of the FoM of every order union_order scores with part f
 * first and part l second (g: the union's points, in_f and in_l their
 * indices there), from what each order must hold (tracking/README.md,
 * "Recombination"): the first point's path from the target and its
 * Compton term at the union's energy (any of f's points when f takes
 * every order, else f's own first), f's other points' interaction terms
 * (at least the tables' least; their paths and angles are >= 0), l's
 * terms beyond its first point as when it was scored alone (the same
 * energies reach them; tail.rest), l's first point's interaction term,
 * and the crossing from f's last point a (any of f's, or its own last)
 * to l's first: the path mu_tot(E_l) d(a, l1), the angle at l1 (coming
 * from a), and with f of one point the angle at a (coming from the
 * target). Each term is one the FoM sums, or less; the margins
 * (BOUND_*) cover rounding. */
static double union_low(const track_t *t, const trk_geo_t *g, const trk_cluster_t *f, const trk_tail_t *F,
                        const unsigned *in_f, const trk_cluster_t *l, const trk_tail_t *T, const unsigned *in_l)
{
    const trk_setup_t *su = &t->setup;
    const bool all = f->n <= RECOMBINE_FIRST_ALL;
    const double e0 = F->e + T->e;
    double lt, lc, lp;
    trk_lookup(t->mu, su, e0, &lt, &lc, &lp);
    double L = exp(lt) * (all ? F->min_depth : F->depth) + (lt - lc);
    L += (double)(f->n - 1) * fmin(t->gap_min, 0.0);
    L += T->rest + T->first;
    const unsigned l1 = in_l[T->own[0]], l2 = l->n > 1 ? in_l[T->own[1]] : 0;
    double cross = INFINITY;
    for (unsigned k = 0; k < f->n; k++) {
        if (!all && k != F->own[f->n - 1])
            continue;
        const unsigned a = in_f[k];
        double x = T->mu * trk_dist(g, su, a, l1);
        if (l->n > 1)
            x += angle_low(g, su->mec2, (int)a, l1, l2, T->e, T->e - g->e[l1]);
        if (f->n == 1)
            x += angle_low(g, su->mec2, -1, a, l1, e0, T->e);
        cross = fmin(cross, x >= 0.0 ? x : 0.0);
    }
    L += cross;
    return (L * (1.0 - BOUND_MARGIN) - BOUND_MARGIN) / (double)(2 * (f->n + l->n) - 1);
}

/* The bound of the union of p and q (g, in_c: union_make) with either
 * part first: the lower of the two, NaN when either is NaN. */
static double pair_low(const track_t *t, const trk_geo_t *g, const trk_cluster_t *p, const trk_tail_t *tp,
                       const trk_cluster_t *q, const trk_tail_t *tq, unsigned in_c[2][TRACK_MAX_CLUSTER])
{
    const double a = union_low(t, g, p, tp, in_c[0], q, tq, in_c[1]);
    const double b = union_low(t, g, q, tq, in_c[1], p, tp, in_c[0]);
    return a != a || b != b ? NAN : fmin(a, b);
}

/* Whether no order of the union of p and q can make a union that is kept
 * (recombine_keep): its FoM is at least low, which is above fom_max (not
 * accepted) or not below the FoM of an accepted part of 2+ points (no
 * improvement). NaN: scored. */
static bool union_hopeless(const track_t *t, const trk_cluster_t *p, const trk_cluster_t *q, double low)
{
    if (low > t->cfg.fom_max)
        return true;
    return (p->accepted && p->n >= 2 && low >= p->fom) || (q->accepted && q->n >= 2 && low >= q->fom);
}

/* trk_fom_of of the order perm of g's points, its terms summed in the
 * same order (the same value to the bit), stopped as soon as the FoM of
 * the terms so far, L / (2n - 1), is above `over` or at least `atleast`
 * (with t->gap_min >= 0 every term is >= 0, so the order's FoM is then
 * above or at least that too), or when after term `at` the FoM of L and
 * `rest` (a lower bound of the terms after the next angle; BOUND_MARGIN
 * for the rounding) is: false, else true and *fom. NaN goes on. */
static bool fom_within(const track_t *t, const trk_geo_t *g, const unsigned *perm, double over, double atleast,
                       unsigned at, double rest, double *fom)
{
    const unsigned n = g->n;
    double L = 0.0, e = g->e0, e_prev = 0.0;
    for (unsigned k = 0; k < n; k++) {
        const unsigned i = perm[k];
        const double d = k ? trk_dist(g, &t->setup, perm[k - 1], i) : g->depth[i];
        L = trk_fom_add(L, g, t->mu, &t->setup, k >= 2 ? (int)perm[k - 2] : -1, k ? (int)perm[k - 1] : -1, i,
                        k == n - 1, d, e, e_prev);
        e_prev = e;
        e -= g->e[i];
        double v = trk_fom_end(L, n);
        if (v > over || v >= atleast)
            return false;
        if (k == at) {
            v = ((L + rest) * (1.0 - BOUND_MARGIN) - BOUND_MARGIN) / (double)(2 * n - 1);
            if (v > over || v >= atleast)
                return false;
        }
    }
    *fom = trk_fom_end(L, n);
    return true;
}

/* The order of recombined cluster c (the points of parts p and q, in
 * batch order; g: their figure of merit's view, in_c[k][i] where part k's
 * point i is in c) and its FoM: each part's points in a row - the photon
 * crosses from one part to the other once - p's then q's and q's then
 * p's, the part scored second in its own best order (own[k]: the energy
 * that reaches it is its own, as when it was evaluated alone), the first
 * in every order when it has at most RECOMBINE_FIRST_ALL points (the
 * energy that reaches it is not its own), else in its own best order.
 * The lowest FoM wins, the lower rank on ties. Sets c->rank and c->fom
 * and returns true when that FoM may be kept (recombine_keep: at most
 * fom_max, below the FoM of each accepted part of 2+ points); *orders:
 * the orders scored.
 *
 * With `prune`, an order is left as soon as its sum of terms so far
 * (from the second part's first point on with the bound of that part's
 * terms after it, trk_tail_t.rest) says it cannot be kept or cannot be
 * the lowest (fom_within: above fom_max, at least a part's FoM, or above
 * the lowest so far - ties go on to the rank): the order that wins is
 * the same whenever it may be kept. */
static bool union_order(const track_t *t, const trk_geo_t *g, trk_cluster_t *c, const trk_cluster_t *p,
                        const trk_cluster_t *q, unsigned in_c[2][TRACK_MAX_CLUSTER], const trk_tail_t *tail[2],
                        bool prune, unsigned *orders)
{
    const unsigned *own[2] = {tail[0]->own, tail[1]->own};
    /* the part scored second: its terms after its first point's at least its tail's rest */
    const double rest[2] = {prune ? tail[0]->rest : -INFINITY, prune ? tail[1]->rest : -INFINITY};
    const trk_cluster_t *part[2] = {p, q};
    double atleast = INFINITY; /* an accepted part's FoM: the union must be below it */
    for (int k = 0; k < 2; k++)
        if (part[k]->accepted && part[k]->n >= 2)
            atleast = fmin(atleast, part[k]->fom);
    prune = prune && t->gap_min >= 0.0;
    double over = prune ? t->cfg.fom_max : INFINITY, best = INFINITY;
    uint32_t best_rank = 0;
    unsigned scored = 0, done = 0;
    for (int first = 0; first < 2; first++) {
        const trk_cluster_t *f = part[first], *l = part[!first];
        const bool all = f->n <= RECOMBINE_FIRST_ALL;
        const uint32_t nf = all ? trk_factorial(f->n) : 1;
        for (uint32_t r = 0; r < nf; r++) {
            unsigned pf[TRACK_MAX_CLUSTER], perm[TRACK_MAX_CLUSTER];
            if (all)
                trk_perm_of_rank(f->n, r, pf);
            else
                memcpy(pf, own[first], f->n * sizeof *pf);
            for (unsigned i = 0; i < f->n; i++)
                perm[i] = in_c[first][pf[i]];
            for (unsigned i = 0; i < l->n; i++)
                perm[f->n + i] = in_c[!first][own[!first][i]];
            scored++;
            double fom;
            if (!fom_within(t, g, perm, over, prune ? atleast : INFINITY, f->n, rest[!first], &fom))
                continue;
            const uint32_t rank = track_rank_of_perm(c->n, perm);
            done++;
            if (done == 1 || fom < best || (fom == best && rank < best_rank) || (best != best && fom == fom)) {
                best = fom;
                best_rank = rank;
                if (prune && fom == fom)
                    over = fmin(over, fom);
            }
        }
    }
    *orders = scored;
    c->rank = best_rank;
    c->fom = best; /* trk_fom_points of that order, to the bit: the same view of the same points */
    return done > 0 && best <= t->cfg.fom_max && best < atleast;
}

/* The union c of clusters p and q of one event (pass 2, its points in
 * batch order), where each part's points are in it (in_c[0] p's, in_c[1]
 * q's) and the figure of merit's view of them (g). */
static void union_make(const track_t *t, const track_batch_t *b, const trk_cluster_t *p, const trk_cluster_t *q,
                       trk_cluster_t *c, unsigned in_c[2][TRACK_MAX_CLUSTER], trk_geo_t *g)
{
    memset(c, 0, sizeof *c);
    c->ev = p->ev;
    c->n = c->m = (uint8_t)(p->m + q->m);
    c->pass = 2;
    c->flags = (uint16_t)(TRACK_GAMMA_RECOMBINED | p->flags | q->flags);
    c->angle = p->angle > q->angle ? p->angle : q->angle;
    unsigned a = 0, k = 0;
    while (a < p->m || k < q->m) { /* both ascending: merge */
        if (k >= q->m || (a < p->m && p->pt[a] < q->pt[k])) {
            c->pt[a + k] = p->pt[a];
            in_c[0][a] = a + k;
            a++;
        } else {
            c->pt[a + k] = q->pt[k];
            in_c[1][k] = a + k;
            k++;
        }
    }
    track_point_t pts[TRACK_MAX_CLUSTER];
    for (unsigned i = 0; i < c->n; i++)
        pts[i] = b->pt[c->pt[i]];
    trk_geo_points(t, pts, c->n, g);
}

double track_recombine_low(const track_t *t, const track_batch_t *b, const trk_cluster_t *p, const trk_cluster_t *q)
{
    trk_cluster_t c;
    unsigned in_c[2][TRACK_MAX_CLUSTER];
    trk_geo_t g;
    trk_tail_t tp, tq;
    union_make(t, b, p, q, &c, in_c, &g);
    tail_make(t, b, p, &tp);
    tail_make(t, b, q, &tq);
    return pair_low(t, &g, p, &tp, q, &tq, in_c);
}

/* Whether cluster c can be joined with another in a recombination: a
 * cluster left as it is after both passes (not split into the second
 * pass, not dropped) and not merged, accepted or not. */
static bool joinable(const trk_cluster_t *c)
{
    return !c->dropped && !c->split && c->m == c->n;
}

/* After the second pass's evaluation: its acceptance (and the choice
 * between a merged cluster and its parts), then with recombine_points
 * the recombination's candidates: for each event, every pair of its
 * joinable clusters that have at most recombine_points points together,
 * as one cluster (pass 2, its points in batch order), its order and FoM
 * found here (union_order: no evaluator's search); finish keeps some.
 * A pair that cannot be kept is not listed: when its bound (union_low,
 * both parts first in turn) says so (union_hopeless) it is not scored,
 * and union_order leaves each of its orders as soon as their partial
 * sums say so. What is kept is the same as when every pair is scored to
 * the end and listed (t->recombine_all, for the tests). */
static int third_pass(const track_t *t, trk_chunk_t *ch, const track_batch_t *b, trk_scratch_t *s)
{
    const double single_max = -log(t->cfg.single_min_prob);
    for (size_t i = ch->n1; i < ch->cl_n; i++)
        decide(t, b, &ch->cl[i], single_max, &ch->stats);
    for (size_t i = ch->n1; i < ch->cl_n; i++)
        if (ch->cl[i].m > ch->cl[i].n)
            choose(ch->cl + i);
    ch->n2 = ch->cl_n;
    ch->from = ch->n2;
    const unsigned rp = t->cfg.recombine_points;
    if (rp >= 2) {
        /* per event: its clusters of both passes (each list in event order)
         * that can be joined with one of at least one point */
        size_t i1 = 0, i2 = ch->n1;
        for (size_t e = ch->first; e < ch->first + ch->n; e++) {
            size_t n = 0;
            for (int pass = 0; pass < 2; pass++) {
                size_t *i = pass ? &i2 : &i1, end = pass ? ch->n2 : ch->n1;
                for (; *i < end && ch->cl[*i].ev == e; (*i)++) {
                    if (!joinable(&ch->cl[*i]) || ch->cl[*i].m >= rp)
                        continue;
                    if (tusk_grow(&s->live, &s->live_cap, n + 1, sizeof *s->live) ||
                        tusk_grow(&s->tail, &s->tail_cap, n + 1, sizeof *s->tail))
                        return fail(ch, TUSK_ENOMEM, "out of memory (recombination)");
                    s->live[n++] = *i;
                }
            }
            if (n < 2)
                continue;
            for (size_t x = 0; x < n; x++)
                tail_make(t, b, &ch->cl[s->live[x]], &s->tail[x]);
            for (size_t x = 0; x < n; x++)
                for (size_t y = x + 1; y < n; y++) {
                    const trk_cluster_t *p = &ch->cl[s->live[x]], *q = &ch->cl[s->live[y]];
                    if ((unsigned)p->m + q->m > rp)
                        continue;
                    trk_cluster_t c;
                    unsigned in_c[2][TRACK_MAX_CLUSTER];
                    trk_geo_t g;
                    union_make(t, b, p, q, &c, in_c, &g);
                    const trk_tail_t *tp = &s->tail[x], *tq = &s->tail[y];
                    if (!t->recombine_all) {
                        if (union_hopeless(t, p, q, pair_low(t, &g, p, tp, q, tq, in_c)))
                            continue; /* track_recombine_low: the same */
                    }
                    c.part[0] = (uint32_t)s->live[x];
                    c.part[1] = (uint32_t)s->live[y];
                    const trk_tail_t *tail[2] = {tp, tq};
                    unsigned orders;
                    const bool may_keep = union_order(t, &g, &c, p, q, in_c, tail, !t->recombine_all, &orders);
                    ch->stats.permutations += orders;
                    if (!may_keep && !t->recombine_all)
                        continue; /* never kept: not listed */
                    if (push_cluster(ch, &c))
                        return ch->st;
                }
        }
    }
    ch->from = ch->cl_n; /* ordered here: nothing for an evaluator */
    count_multi(ch);
    return TUSK_OK;
}

/* Whether recombined cluster c may replace its two parts: accepted, and
 * a better fit (lower FoM) than each part accepted with 2+ points. */
static bool improves(const trk_chunk_t *ch, const trk_cluster_t *c)
{
    if (!c->accepted)
        return false;
    for (int k = 0; k < 2; k++) {
        const trk_cluster_t *p = &ch->cl[c->part[k]];
        if (p->accepted && p->n >= 2 && !(c->fom < p->fom))
            return false;
    }
    return true;
}

/* The recombined clusters of an event, cl[from .. to), after their
 * evaluation: those that improve on their parts are kept, the lowest FoM
 * first (the lower index on ties), each taking its two parts (which are
 * dropped) unless a kept one took either already; the rest dropped. */
static void recombine_keep(trk_chunk_t *ch, size_t from, size_t to)
{
    for (;;) {
        size_t best = to;
        for (size_t i = from; i < to; i++) {
            const trk_cluster_t *c = &ch->cl[i];
            if (c->dropped || !improves(ch, c) || ch->cl[c->part[0]].dropped || ch->cl[c->part[1]].dropped)
                continue;
            if (best == to || c->fom < ch->cl[best].fom)
                best = i;
        }
        if (best == to)
            break;
        trk_cluster_t *c = &ch->cl[best];
        c->dropped = 2; /* kept: marked until the others are dropped */
        for (int k = 0; k < 2; k++) {
            ch->cl[c->part[k]].accepted = 0;
            ch->cl[c->part[k]].dropped = 1;
        }
    }
    for (size_t i = from; i < to; i++) {
        trk_cluster_t *c = &ch->cl[i];
        c->accepted = c->dropped == 2;
        c->dropped = !c->accepted;
    }
}

/* gammas by energy, highest first; ties by the cluster's first point */
static bool before(const trk_gamma_t *a, const trk_gamma_t *b)
{
    if (a->g.energy != b->g.energy)
        return a->g.energy > b->g.energy;
    return a->first_point < b->first_point;
}

/* The gamma of an accepted cluster. */
static void gamma_of(const track_batch_t *b, const trk_cluster_t *c, trk_gamma_t *x)
{
    unsigned perm[TRACK_MAX_CLUSTER] = {0};
    track_point_t pts[TRACK_MAX_CLUSTER];
    trk_perm_of_rank(c->n, c->rank, perm);
    track_cluster_points(b, c, pts);
    const track_point_t *p1 = &pts[perm[0]], *p2 = &pts[perm[c->n > 1 ? 1 : 0]];
    memset(x, 0, sizeof *x);
    x->g.energy = (float)cluster_energy(b, c);
    memcpy(x->g.first, p1->pos, sizeof x->g.first);
    memcpy(x->g.second, p2->pos, sizeof x->g.second);
    x->g.fom = (float)c->fom;
    x->g.n_points = c->m;
    x->g.status = (uint16_t)((c->n == 1 ? TRACK_GAMMA_SINGLE : 0) | (c->pass == 1 ? TRACK_GAMMA_RECLUSTER : 0) | c->flags);
    x->first_point = c->pt[0];
}

/* After the second pass's evaluation: acceptance, the statistics, and
 * each event's accepted gammas, sorted, into the chunk's list (the
 * events' g_first relative to it until the gammas are copied). */
static int finish(const track_t *t, trk_chunk_t *ch, track_batch_t *b, trk_scratch_t *s)
{
    const double single_max = -log(t->cfg.single_min_prob);
    for (size_t i = ch->n2; i < ch->cl_n; i++)
        decide(t, b, &ch->cl[i], single_max, &ch->stats);
    for (size_t i = ch->n2; i < ch->cl_n;) { /* per event */
        size_t j = i;
        while (j < ch->cl_n && ch->cl[j].ev == ch->cl[i].ev)
            j++;
        recombine_keep(ch, i, j);
        i = j;
    }
    /* The energies, in the runs the statistics add up: accepted and left
     * unaccepted in the first pass, then in the second (with the
     * recombined ones). */
    for (size_t i = 0; i < ch->n1; i++)
        if (ch->cl[i].accepted && push_kev(ch, cluster_energy(b, &ch->cl[i])))
            return ch->st;
    ch->kev_end[KEV_ACCEPTED_1] = ch->kev_n;
    for (size_t i = 0; i < ch->n1; i++) {
        const trk_cluster_t *c = &ch->cl[i];
        if (c->accepted || c->dropped || c->split)
            continue;
        ch->stats.unaccepted++;
        ch->stats.unaccepted_points += c->m;
        if (push_kev(ch, cluster_energy(b, c)))
            return ch->st;
    }
    ch->kev_end[KEV_UNACCEPTED_1] = ch->kev_n;
    for (size_t i = ch->n1; i < ch->cl_n; i++)
        if (ch->cl[i].accepted && push_kev(ch, cluster_energy(b, &ch->cl[i])))
            return ch->st;
    ch->kev_end[KEV_ACCEPTED_2] = ch->kev_n;
    for (size_t i = ch->n1; i < ch->n2; i++) {
        const trk_cluster_t *c = &ch->cl[i];
        if (c->accepted || c->dropped)
            continue;
        ch->stats.unaccepted++;
        ch->stats.unaccepted_points += c->m;
        if (push_kev(ch, cluster_energy(b, c)))
            return ch->st;
    }
    ch->kev_end[KEV_UNACCEPTED_2] = ch->kev_n;
    for (size_t i = 0; i < ch->cl_n; i++) {
        const trk_cluster_t *c = &ch->cl[i];
        if (!c->accepted)
            continue;
        ch->stats.accepted++;
        ch->stats.accepted_single += c->n == 1;
        ch->stats.accepted_second += c->pass == 1;
        ch->stats.accepted_recombined += c->pass == 2;
    }
    ch->stats.events += ch->n;
    /* Per event: its accepted clusters of the first pass, then of the
     * second, then the recombined ones (each list in event order). */
    size_t at[3] = {0, ch->n1, ch->n2};
    for (size_t e = ch->first; e < ch->first + ch->n; e++) {
        trk_event_t *ev = &b->ev[e];
        ch->stats.points += ev->n;
        size_t n = 0;
        for (int pass = 0; pass < 3; pass++) {
            size_t *i = &at[pass], end = pass == 0 ? ch->n1 : pass == 1 ? ch->n2 : ch->cl_n;
            for (; *i < end && ch->cl[*i].ev == e; (*i)++) {
                const trk_cluster_t *c = &ch->cl[*i];
                if (!c->accepted)
                    continue;
                if (tusk_grow(&s->gam, &s->gam_cap, n + 1, sizeof *s->gam))
                    return fail(ch, TUSK_ENOMEM, "out of memory (gammas)");
                trk_gamma_t x;
                gamma_of(b, c, &x);
                /* insertion sort: the gammas of an event are few */
                size_t k = n++;
                while (k > 0 && before(&x, &s->gam[k - 1])) {
                    s->gam[k] = s->gam[k - 1];
                    k--;
                }
                s->gam[k] = x;
            }
        }
        ev->g_first = ch->g_n;
        ev->g_n = n < ADF_TRACKED_MAX_GAMMAS ? n : ADF_TRACKED_MAX_GAMMAS;
        ev->status = 0;
        if (n > ADF_TRACKED_MAX_GAMMAS) {
            ev->status |= TRACK_EVENT_TRUNCATED;
            ch->stats.gammas_truncated += n - ADF_TRACKED_MAX_GAMMAS;
        }
        if (tusk_grow(&ch->g, &ch->g_cap, ch->g_n + ev->g_n, sizeof *ch->g))
            return fail(ch, TUSK_ENOMEM, "out of memory (gammas)");
        for (size_t k = 0; k < ev->g_n; k++)
            ch->g[ch->g_n++] = s->gam[k].g;
    }
    return TUSK_OK;
}

/* ---- the jobs --------------------------------------------------------------------------------- */

typedef struct job {
    track_t *t;
    track_batch_t *b;
    const trk_eval_t *eval;
    size_t g_base;         /* where the call's gammas start in the batch's */
} job_t;

static int eval_local(const job_t *j, trk_chunk_t *ch)
{
    if (ch->multi == 0)
        return TUSK_OK;
    int st = j->eval->local(j->eval->ctx, j->t, j->b, ch->cl + ch->from, ch->cl_n - ch->from, &ch->err);
    if (st)
        ch->st = st;
    return st;
}

static int fetch(const job_t *j, trk_chunk_t *ch)
{
    if (ch->multi == 0)
        return TUSK_OK;
    int st = j->eval->fetch(j->eval->ctx, j->t, ch, &ch->err);
    if (st)
        ch->st = st;
    return st;
}

/* Everything of a chunk, with a CPU evaluator. */
static void job_all(void *ctx, size_t k, unsigned thread)
{
    const job_t *j = ctx;
    trk_chunk_t *ch = &j->t->chunk[k];
    trk_scratch_t *s = &j->t->scratch[thread];
    if (cluster_chunk(j->t, ch, j->b, s) || eval_local(j, ch) || second_pass(j->t, ch, j->b) || eval_local(j, ch) ||
        third_pass(j->t, ch, j->b, s))
        return;
    finish(j->t, ch, j->b, s);
}

static void job_first(void *ctx, size_t k, unsigned thread)
{
    const job_t *j = ctx;
    cluster_chunk(j->t, &j->t->chunk[k], j->b, &j->t->scratch[thread]);
}

static void job_second(void *ctx, size_t k, unsigned thread)
{
    const job_t *j = ctx;
    trk_chunk_t *ch = &j->t->chunk[k];
    (void)thread;
    if (!fetch(j, ch))
        second_pass(j->t, ch, j->b);
}

static void job_finish(void *ctx, size_t k, unsigned thread)
{
    const job_t *j = ctx;
    trk_chunk_t *ch = &j->t->chunk[k];
    if (!fetch(j, ch) && !third_pass(j->t, ch, j->b, &j->t->scratch[thread]))
        finish(j->t, ch, j->b, &j->t->scratch[thread]);
}

/* The chunk's gammas into the batch's, at g_base and the chunks' before. */
static void job_copy(void *ctx, size_t k, unsigned thread)
{
    const job_t *j = ctx;
    const trk_chunk_t *ch = &j->t->chunk[k];
    (void)thread;
    size_t base = j->g_base;
    for (size_t c = 0; c < k; c++)
        base += j->t->chunk[c].g_n;
    if (ch->g_n)
        memcpy(j->b->g + base, ch->g, ch->g_n * sizeof *ch->g);
    for (size_t e = ch->first; e < ch->first + ch->n; e++)
        j->b->ev[e].g_first += base;
}

int trk_pipeline(track_t *t, track_batch_t *b, size_t first, size_t n_ev, const trk_eval_t *eval,
                 tusk_error_t *err)
{
    if (first > b->n_ev || n_ev > b->n_ev - first)
        return tusk_error_set(err, TUSK_EINVAL, "events %zu to %zu of a batch of %zu", first, first + n_ev, b->n_ev);
    if (first == 0)
        b->n_g = 0;
    int st;
    if ((st = trk_chunks_make(t, first, n_ev, err)))
        return st;
    job_t j = {t, b, eval, b->n_g};
    if (eval->local) {
        tusk_pool_run(t->pool, t->n_chunks, job_all, &j);
    } else {
        tusk_pool_run(t->pool, t->n_chunks, job_first, &j);
        if ((st = chunks_status(t, err)) || (st = eval->global(eval->ctx, t, b, err)))
            return st;
        tusk_pool_run(t->pool, t->n_chunks, job_second, &j);
        if ((st = chunks_status(t, err)) || (st = eval->global(eval->ctx, t, b, err)))
            return st;
        tusk_pool_run(t->pool, t->n_chunks, job_finish, &j);
    }
    if ((st = chunks_status(t, err)))
        return st;
    /* The statistics: the counts, then the energies in one chunk's order. */
    size_t total = 0;
    track_stats_t *s = &t->stats;
    for (size_t k = 0; k < t->n_chunks; k++) {
        const track_stats_t *c = &t->chunk[k].stats;
        s->events += c->events;
        s->points += c->points;
        s->clusters += c->clusters;
        s->splits += c->splits;
        s->merged += c->merged;
        s->permutations += c->permutations;
        s->accepted += c->accepted;
        s->accepted_single += c->accepted_single;
        s->accepted_second += c->accepted_second;
        s->accepted_recombined += c->accepted_recombined;
        s->rejected += c->rejected;
        s->unaccepted += c->unaccepted;
        s->unaccepted_points += c->unaccepted_points;
        s->gammas_truncated += c->gammas_truncated;
        total += t->chunk[k].g_n;
    }
    for (int run = 0; run < 4; run += 2) /* accepted: the first pass's, then the second's */
        for (int pass = 0; pass < 2; pass++)
            for (size_t k = 0; k < t->n_chunks; k++) {
                const trk_chunk_t *c = &t->chunk[k];
                const int r = run / 2 + 2 * pass; /* KEV_ACCEPTED_1 + ... */
                size_t a = r ? c->kev_end[r - 1] : 0;
                double *sum = run ? &s->unaccepted_kev : &s->accepted_kev;
                for (size_t i = a; i < c->kev_end[r]; i++)
                    *sum += c->kev[i];
            }
    if (tusk_grow(&b->g, &b->g_cap, b->n_g + total, sizeof *b->g))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu gammas)", b->n_g + total);
    tusk_pool_run(t->pool, t->n_chunks, job_copy, &j);
    b->n_g += total;
    return TUSK_OK;
}

/* ---- the CPU evaluator ------------------------------------------------------------------------- */

/* Every order, depth first. */
static int eval_cpu(void *ctx, const track_t *t, const track_batch_t *b, trk_cluster_t *c, size_t n,
                    tusk_error_t *err)
{
    (void)ctx;
    (void)err;
    for (size_t i = 0; i < n; i++) {
        if (c[i].n < 2)
            continue;
        track_point_t pts[TRACK_MAX_CLUSTER];
        unsigned perm[TRACK_MAX_CLUSTER];
        track_cluster_points(b, &c[i], pts);
        trk_search(t, pts, c[i].n, perm, NULL);
        c[i].rank = track_rank_of_perm(c[i].n, perm);
    }
    return TUSK_OK;
}

static const trk_eval_t cpu_eval = {NULL, eval_cpu, NULL, NULL};

int track_run(track_t *t, track_batch_t *b, tusk_error_t *err)
{
    return trk_pipeline(t, b, 0, b->n_ev, &cpu_eval, err);
}

int track_run_range(track_t *t, track_batch_t *b, size_t first, size_t n, tusk_error_t *err)
{
    return trk_pipeline(t, b, first, n, &cpu_eval, err);
}
