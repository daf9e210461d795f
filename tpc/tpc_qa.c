/* tpc_qa.c - the slice tracker against the truth: the quality figures of
 * the thesis's Table 9.1 (tusk/tpc.h; the definitions are in
 * tpc/README.md, "Quality").
 *
 * A slice of an event is analysed once its three frames have come
 * (data:tpc_clusters, data:tpc_truth, data:tpc_tracks, in any order, over
 * any buffers):
 *   - a particle is reconstructible in the slice when it left at least
 *     min_clusters clusters there (spec §1.4, TUSK); a reference particle
 *     is a reconstructible one of momentum >= ref_p_gev;
 *   - a track matches the particle owning at least `match` of its
 *     clusters, else it is a fake (noise clusters own nothing);
 *   - a reconstructible particle is found when a track matches it; further
 *     tracks matching it are clones;
 *   - the first track matching each reconstructible particle gives the
 *     residuals and pulls of its five parameters against the particle's
 *     helix at the track's x (the crossing nearest the fit; a particle
 *     going inwards is seen reversed, as the tracker parametrises it).
 * Events are complete when they have had as many slices as their
 * data:tpc_clusters frames announce. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf/adf_frames.h"
#include "base/gather.h"
#include "base/gnuplot.h"
#include "base/grow.h"
#include "base/report.h"
#include "base/stats.h"
#include "tpc_private.h"

#define PI 3.14159265358979323846

enum { F_CLUSTERS = 1, F_TRUTH = 2, F_TRACKS = 4, F_ALL = 7 };

/* A slice of an event, its frames gathered (base/gather.h: unit the
 * event, part the slice, have the F_* bits). */
typedef struct pending {
    tusk_part_t head;
    uint32_t n_clusters;      /* from data:tpc_clusters */
    float bz;
    uint32_t truth_clusters, track_clusters;
    adf_tpc_particle_t *pt;
    uint32_t n_pt;
    uint32_t *cp;
    adf_tpc_track_t *tr;
    uint32_t n_tr;
    adf_tpc_hit_t *hit;
    uint32_t n_hit;
    int backend;
} pending_t;

static const double p_edges[TPC_QA_PBINS + 1] = {0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 5.0, 20.0};

struct tpc_qa {
    tpc_qa_config_t cfg;
    uint32_t digest;
    tusk_gather_t g;          /* the slices still open; events as units */
    bool finished;
    int backend;
    uint64_t slices, clusters, noise, tracks, hits, fakes, matched_other;
    tpc_qa_eff_t all, ref, extra, pbin[TPC_QA_PBINS];
    tusk_moments_t res[5], pull[5], ptres, purity; /* their "RMS" is the standard deviation */
    double *pulls[5];         /* every pull, for the core width */
    size_t n_pulls[5], cap_pulls[5];
    double pull_core[5];      /* set by tpc_qa_finish */
    /* scratch */
    uint32_t *count, *first;
    size_t cap_count;
};

void tpc_qa_config_default(tpc_qa_config_t *c)
{
    memset(c, 0, sizeof *c);
    tpc_config_default(&c->alg);
    c->min_clusters = 30;
    c->match = 0.9;
    c->ref_p_gev = 1.0;
    snprintf(c->label, sizeof c->label, "sample");
}

static void free_pending(void *rec)
{
    pending_t *p = rec;
    free(p->pt);
    free(p->cp);
    free(p->tr);
    free(p->hit);
}

int tpc_qa_new(tpc_qa_t **out, const tpc_qa_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = tpc_config_check(&cfg->alg, err);
    if (st != TUSK_OK)
        return st;
    if (cfg->min_clusters < 1 || cfg->min_clusters > TPC_ROWS * 4u)
        return tusk_error_set(err, TUSK_EINVAL, "TPC analysis: min_clusters %u, expected 1 to %u", cfg->min_clusters,
                              TPC_ROWS * 4u);
    if (!(cfg->match > 0.5 && cfg->match <= 1.0))
        return tusk_error_set(err, TUSK_EINVAL, "TPC analysis: match %g, expected more than 0.5 and at most 1",
                              cfg->match);
    if (!(cfg->ref_p_gev >= 0.0 && cfg->ref_p_gev < 1e4))
        return tusk_error_set(err, TUSK_EINVAL, "TPC analysis: ref_p_gev %g, expected 0 to 10000", cfg->ref_p_gev);
    tpc_qa_t *q = calloc(1, sizeof *q);
    if (!q)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    q->cfg = *cfg;
    q->cfg.label[sizeof q->cfg.label - 1] = '\0';
    tusk_gather_init(&q->g, sizeof(pending_t), free_pending, "event", "slice");
    q->digest = tpc_config_digest(&cfg->alg);
    *out = q;
    return TUSK_OK;
}

void tpc_qa_destroy(tpc_qa_t **qa)
{
    if (!qa || !*qa)
        return;
    tpc_qa_t *q = *qa;
    tusk_gather_free(&q->g);
    free(q->count);
    free(q->first);
    for (int k = 0; k < 5; k++)
        free(q->pulls[k]);
    free(q);
    *qa = NULL;
}

/* ---- the truth's helix in a slice ------------------------------------------------------------- */

/* The particle's state at slice-local x, as the tracker parametrises it
 * (moving towards +x): the crossing nearest (y_fit, z_fit). 0 when the
 * helix never crosses x. */
static int true_state(const adf_tpc_particle_t *p, float bz, unsigned slice, double x, double y_fit, double z_fit,
                      double st[5])
{
    double px = p->p[0], py = p->p[1], pz = p->p[2];
    double pt = sqrt(px * px + py * py);
    if (!(pt > 0))
        return 0;
    double w = -(double)TPC_CLIGHT * (double)bz * (double)p->charge / pt;
    double phi0 = atan2(py, px), lam = pz / pt;
    double ca, sa;
    tpc_slice_angle(slice, &ca, &sa);
    double alpha = atan2(sa, ca);
    double A = (double)p->vertex[0] * ca + (double)p->vertex[1] * sa;
    double psi0 = phi0 - alpha, s0 = sin(psi0);
    double u = w * (x - A) + s0;
    if (u < -1.0 || u > 1.0)
        return 0;
    double period = 2.0 * PI / fabs(w), best = -1;
    for (int br = 0; br < 2; br++) {
        double psi = br == 0 ? asin(u) : PI - asin(u);
        double t0 = fmod((psi - psi0) / w, period);
        if (t0 < 0)
            t0 += period;
        for (int turn = 0; turn < 8; turn++) {
            double t = t0 + turn * period;
            double a = phi0 + w * t;
            double X = p->vertex[0] + (sin(a) - sin(phi0)) / w, Y = p->vertex[1] - (cos(a) - cos(phi0)) / w;
            double z = p->vertex[2] + lam * t;
            double yl = -X * sa + Y * ca;
            double d = fabs(yl - y_fit) + fabs(z - z_fit);
            if (best < 0 || d < best) {
                best = d;
                double sp = sin(a - alpha), cp = cos(a - alpha), q = (double)p->charge / pt, l = lam;
                if (cp < 0) { /* going inwards: the tracker sees it reversed */
                    sp = -sp;
                    l = -l;
                    q = -q;
                }
                st[0] = yl;
                st[1] = z;
                st[2] = sp;
                st[3] = l;
                st[4] = q;
            }
        }
    }
    return 1;
}

/* ---- one slice ------------------------------------------------------------------------------------- */

static int bin_of(double p)
{
    for (int b = 0; b < TPC_QA_PBINS; b++)
        if (p >= p_edges[b] && p < p_edges[b + 1])
            return b;
    return -1;
}

static int analyse(tpc_qa_t *q, const pending_t *p, tusk_error_t *err)
{
    size_t cap = q->cap_count;
    if (tusk_grow(&q->count, &q->cap_count, (size_t)p->n_pt + 1, sizeof *q->count) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (q->cap_count != cap || !q->first) {
        uint32_t *f = realloc(q->first, q->cap_count * sizeof *q->first);
        if (!f)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        q->first = f;
    }
    memset(q->count, 0, ((size_t)p->n_pt + 1) * sizeof *q->count);
    memset(q->first, 0xFF, ((size_t)p->n_pt + 1) * sizeof *q->first);
    for (uint32_t i = 0; i < p->n_clusters; i++) {
        if (p->cp[i] == ADF_TPC_NOISE)
            q->noise++;
        else
            q->count[p->cp[i]]++;
    }
    q->slices++;
    q->clusters += p->n_clusters;
    q->tracks += p->n_tr;
    q->hits += p->n_hit;
    if (p->n_tr)
        q->backend = p->backend;
    /* each track's particle */
    uint32_t h = 0;
    for (uint32_t t = 0; t < p->n_tr; t++) {
        const adf_tpc_track_t *tr = &p->tr[t];
        uint32_t n = tr->n_hits, best = ADF_TPC_NOISE, most = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t pk = p->cp[p->hit[h + k].cluster];
            if (pk == ADF_TPC_NOISE || pk == best)
                continue;
            uint32_t c = 0;
            for (uint32_t j = 0; j < n; j++)
                c += p->cp[p->hit[h + j].cluster] == pk;
            if (c > most) {
                most = c;
                best = pk;
            }
        }
        h += n;
        if (best == ADF_TPC_NOISE || (double)most < q->cfg.match * (double)n) {
            q->fakes++;
            continue;
        }
        tusk_moments_add(&q->purity, (double)most / (double)n);
        if (q->count[best] < q->cfg.min_clusters) {
            q->matched_other++;
            continue;
        }
        const adf_tpc_particle_t *pt = &p->pt[best];
        double mom = sqrt((double)pt->p[0] * pt->p[0] + (double)pt->p[1] * pt->p[1] + (double)pt->p[2] * pt->p[2]);
        bool is_ref = mom >= q->cfg.ref_p_gev;
        int b = bin_of(mom);
        if (q->first[best] != UINT32_MAX) {
            q->all.clones++;
            (is_ref ? &q->ref : &q->extra)->clones++;
            if (b >= 0)
                q->pbin[b].clones++;
            continue;
        }
        q->first[best] = t;
        double st[5];
        if (true_state(pt, p->bz, p->head.part, tr->x, tr->param[0], tr->param[1], st)) {
            static const int diag[5] = {0, 2, 5, 9, 14};
            for (int k = 0; k < 5; k++) {
                double r = (double)tr->param[k] - st[k], v = tr->cov[diag[k]];
                tusk_moments_add(&q->res[k], r);
                if (v > 0) {
                    if (tusk_grow(&q->pulls[k], &q->cap_pulls[k], q->n_pulls[k] + 1, sizeof *q->pulls[k]) != 0)
                        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
                    q->pulls[k][q->n_pulls[k]++] = r / sqrt(v);
                    tusk_moments_add(&q->pull[k], r / sqrt(v));
                }
            }
            if (tr->param[4] != 0.0f && st[4] != 0.0)
                tusk_moments_add(&q->ptres, (1.0 / fabs((double)tr->param[4]) - 1.0 / fabs(st[4])) * fabs(st[4]));
        }
    }
    /* the particles */
    for (uint32_t k = 0; k < p->n_pt; k++) {
        if (q->count[k] < q->cfg.min_clusters)
            continue;
        const adf_tpc_particle_t *pt = &p->pt[k];
        double mom = sqrt((double)pt->p[0] * pt->p[0] + (double)pt->p[1] * pt->p[1] + (double)pt->p[2] * pt->p[2]);
        bool found = q->first[k] != UINT32_MAX;
        tpc_qa_eff_t *cat = mom >= q->cfg.ref_p_gev ? &q->ref : &q->extra;
        q->all.particles++;
        cat->particles++;
        q->all.found += found;
        cat->found += found;
        int b = bin_of(mom);
        if (b >= 0) {
            q->pbin[b].particles++;
            q->pbin[b].found += found;
        }
    }
    return TUSK_OK;
}

/* ---- frames ----------------------------------------------------------------------------------------- */

static int twice(const adf_frame_t *f, unsigned slice, const char *what, tusk_error_t *err)
{
    return tusk_error_set(err, TUSK_EINVAL, "event %u: slice %u's %s came twice (offset %llu)", (unsigned)f->key.event,
                          slice, what, (unsigned long long)f->offset);
}

static int on_frame(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    tpc_qa_t *q = ctx;
    adf_error_t e;
    pending_t *p = NULL;
    switch (f->key.type) {
    case ADF_TYPE_DATA_TPC_CLUSTERS: {
        adf_tpc_clusters_t c;
        if (adf_tpc_clusters_decode(f, &c, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (!(p = tusk_gather_part(&q->g, f->key.event, c.slice, err)))
            return TUSK_ENOMEM;
        if (p->head.have & F_CLUSTERS)
            return twice(f, c.slice, "clusters", err);
        p->n_clusters = c.n_clusters;
        p->bz = c.bz;
        p->head.have |= F_CLUSTERS;
        int st = tusk_gather_unit(&q->g, f->key.event, c.slices, err);
        if (st != TUSK_OK)
            return st;
        break;
    }
    case ADF_TYPE_DATA_TPC_TRUTH: {
        adf_tpc_truth_t t;
        if (adf_tpc_truth_decode(f, &t, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (!(p = tusk_gather_part(&q->g, f->key.event, t.slice, err)))
            return TUSK_ENOMEM;
        if (p->head.have & F_TRUTH)
            return twice(f, t.slice, "truth", err);
        p->pt = malloc((t.n_particles ? t.n_particles : 1) * sizeof *p->pt);
        p->cp = malloc((t.n_clusters ? t.n_clusters : 1) * sizeof *p->cp);
        if (!p->pt || !p->cp)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < t.n_particles; i++)
            adf_tpc_truth_particle(&t, i, &p->pt[i]);
        adf_tpc_truth_clusters(&t, 0, t.n_clusters, p->cp);
        p->n_pt = t.n_particles;
        p->truth_clusters = t.n_clusters;
        p->head.have |= F_TRUTH;
        break;
    }
    case ADF_TYPE_DATA_TPC_TRACKS: {
        adf_tpc_tracks_t t;
        if (adf_tpc_tracks_decode(f, &t, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (t.settings != q->digest)
            return tusk_error_set(
                err, TUSK_EINVAL,
                "data:tpc_tracks at offset %llu (event %u, slice %u) was made with other settings than "
                "this analysis (digest 0x%08X, here 0x%08X): give the analysis the tracker's keys",
                (unsigned long long)f->offset, (unsigned)f->key.event, (unsigned)t.slice, (unsigned)t.settings,
                (unsigned)q->digest);
        if (!(p = tusk_gather_part(&q->g, f->key.event, t.slice, err)))
            return TUSK_ENOMEM;
        if (p->head.have & F_TRACKS)
            return twice(f, t.slice, "tracks", err);
        p->tr = malloc((t.n_tracks ? t.n_tracks : 1) * sizeof *p->tr);
        p->hit = malloc((t.n_hits ? t.n_hits : 1) * sizeof *p->hit);
        if (!p->tr || !p->hit)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < t.n_tracks; i++)
            adf_tpc_track(&t, i, &p->tr[i]);
        for (uint32_t j = 0; j < t.n_hits; j++)
            adf_tpc_hit(&t, j, &p->hit[j]);
        p->n_tr = t.n_tracks;
        p->n_hit = t.n_hits;
        p->track_clusters = t.n_clusters;
        p->backend = t.backend;
        p->head.have |= F_TRACKS;
        break;
    }
    default: return TUSK_OK;
    }
    if (p->head.have != F_ALL)
        return TUSK_OK;
    int st = TUSK_OK;
    if (p->truth_clusters != p->n_clusters || p->track_clusters != p->n_clusters)
        st = tusk_error_set(err, TUSK_EINVAL,
                            "event %u, slice %u: %u clusters, but truth for %u and tracks of a slice of %u",
                            (unsigned)p->head.unit, (unsigned)p->head.part, (unsigned)p->n_clusters,
                            (unsigned)p->truth_clusters, (unsigned)p->track_clusters);
    if (st == TUSK_OK)
        st = analyse(q, p, err);
    tusk_gather_close(&q->g, p);
    return st;
}

int tpc_qa_feed(tpc_qa_t *q, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    if (q->finished)
        return tusk_error_set(err, TUSK_EINVAL, "TPC analysis: frames after the end");
    return adf_frames_read(buf, size, base, ADF_FRAMES_ALL, on_frame, q, err);
}

/* Half the distance between the 15.87 % and 84.13 % quantiles: a
 * Gaussian's sigma, blind to the tails (what a Gaussian fit to the core
 * gives); the RMS counts the tails as well. Sorts v. */
static double core_width(double *v, size_t n)
{
    if (n < 2)
        return 0.0;
    qsort(v, n, sizeof *v, tusk_cmp_double);
    size_t lo = (size_t)floor(0.158655 * (double)(n - 1) + 0.5), hi = (size_t)floor(0.841345 * (double)(n - 1) + 0.5);
    return 0.5 * (v[hi] - v[lo]);
}

int tpc_qa_finish(tpc_qa_t *q, tusk_error_t *err)
{
    if (q->finished)
        return TUSK_OK;
    const tusk_part_t *p = tusk_gather_open(&q->g);
    const tusk_unit_t *u = tusk_gather_short(&q->g);
    if (p) {
        static const char *const names[] = {"data:tpc_clusters", "data:tpc_truth", "data:tpc_tracks"};
        char missing[96];
        tusk_gather_missing(p->have, names, 3, missing, sizeof missing);
        return tusk_error_set(err, TUSK_EINVAL, "event %u, slice %u: no %s came (%zu slices incomplete)",
                              (unsigned)p->unit, (unsigned)p->part, missing, q->g.n);
    }
    if (u)
        return tusk_error_set(err, TUSK_EINVAL, "event %u: %u of its %u slices came", (unsigned)u->unit,
                              (unsigned)u->seen, (unsigned)u->expected);
    for (int k = 0; k < 5; k++)
        q->pull_core[k] = core_width(q->pulls[k], q->n_pulls[k]);
    q->finished = true;
    return TUSK_OK;
}

void tpc_qa_summary(const tpc_qa_t *q, tpc_qa_summary_t *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->label, sizeof s->label, "%s", q->cfg.label);
    s->backend = q->backend;
    s->events = q->g.n_units;
    s->slices = q->slices;
    s->clusters = q->clusters;
    s->noise_clusters = q->noise;
    s->tracks = q->tracks;
    s->hits = q->hits;
    s->fakes = q->fakes;
    s->matched_other = q->matched_other;
    s->all = q->all;
    s->ref = q->ref;
    s->extra = q->extra;
    s->efficiency = tusk_pct(q->all.found, q->all.particles);
    s->clone_rate = tusk_pct(q->all.clones, q->all.found + q->all.clones);
    s->fake_rate = tusk_pct(q->fakes, q->tracks);
    s->ref_efficiency = tusk_pct(q->ref.found, q->ref.particles);
    for (int k = 0; k < 5; k++) {
        s->res[k].n = (uint64_t)q->res[k].n;
        s->res[k].mean = tusk_moments_mean(&q->res[k]);
        s->res[k].rms = tusk_moments_std(&q->res[k]);
        s->res[k].pull_mean = tusk_moments_mean(&q->pull[k]);
        s->res[k].pull_rms = tusk_moments_std(&q->pull[k]);
        s->res[k].pull_core = q->pull_core[k];
    }
    s->pt_res = tusk_moments_std(&q->ptres);
    memcpy(s->p_edge, p_edges, sizeof s->p_edge);
    memcpy(s->pbin, q->pbin, sizeof s->pbin);
    s->hits_per_track = q->tracks ? (double)q->hits / (double)q->tracks : 0.0;
    s->purity = tusk_moments_mean(&q->purity);
}

void tpc_qa_print(const tpc_qa_t *q, FILE *out)
{
    tpc_qa_summary_t s;
    tpc_qa_summary(q, &s);
    fprintf(out,
            "%s (%s): %llu events, %llu slices, %llu clusters (%.2f %% noise), %llu tracks (%.1f clusters a track, "
            "purity %.4f)\n",
            s.label, tpc_backend_name(s.backend), (unsigned long long)s.events, (unsigned long long)s.slices,
            (unsigned long long)s.clusters, tusk_pct(s.noise_clusters, s.clusters), (unsigned long long)s.tracks,
            s.hits_per_track, s.purity);
    fprintf(out, "  %-26s %10s %10s %9s %8s %9s\n", "category", "particles", "found", "eff %", "clones", "clone %");
    const struct {
        const char *name;
        const tpc_qa_eff_t *e;
    } cats[] = {{"all reconstructible", &s.all}, {"reference (p >= ref)", &s.ref}, {"extra (p < ref)", &s.extra}};
    for (int k = 0; k < 3; k++)
        fprintf(out, "  %-26s %10llu %10llu %9.3f %8llu %9.3f\n", cats[k].name,
                (unsigned long long)cats[k].e->particles, (unsigned long long)cats[k].e->found,
                tusk_pct(cats[k].e->found, cats[k].e->particles), (unsigned long long)cats[k].e->clones,
                tusk_pct(cats[k].e->clones, cats[k].e->found + cats[k].e->clones));
    fprintf(out, "  fakes: %llu of %llu tracks (%.3f %%); tracks of particles not reconstructible: %llu\n",
            (unsigned long long)s.fakes, (unsigned long long)s.tracks, s.fake_rate,
            (unsigned long long)s.matched_other);
    fprintf(out, "  Table 9.1: efficiency %.3f %% (reference %.3f %%), fake %.3f %%, clone %.3f %%\n", s.efficiency,
            s.ref_efficiency, s.fake_rate, s.clone_rate);
    static const char *const names[5] = {"Y (mm)", "Z (mm)", "sin(phi)", "lambda", "q/pT (c/GeV)"};
    fprintf(out, "  %-14s %10s %12s %12s %10s %10s %10s\n", "parameter", "tracks", "residual", "RMS", "pull mean",
            "pull RMS", "pull core");
    for (int k = 0; k < 5; k++)
        fprintf(out, "  %-14s %10llu %12.4g %12.4g %10.3f %10.3f %10.3f\n", names[k], (unsigned long long)s.res[k].n,
                s.res[k].mean, s.res[k].rms, s.res[k].pull_mean, s.res[k].pull_rms, s.res[k].pull_core);
    fprintf(out, "  (pull core: half the 15.87-84.13 %% quantile range, a Gaussian's sigma without the tails)\n");
    fprintf(out, "  pT resolution (RMS of (pT fit - pT true) / pT true): %.4f\n", s.pt_res);
    fprintf(out, "  (reconstructible: %u clusters in the slice; match: %.0f %% of a track's clusters; reference: p >= "
                 "%g GeV/c)\n",
            q->cfg.min_clusters, 100.0 * q->cfg.match, q->cfg.ref_p_gev);
}

/* A report's context: the analysis and its summary. */
typedef struct report {
    const tpc_qa_t *q;
    tpc_qa_summary_t s;
} report_t;

static void write_efficiency_gp(FILE *fp, const void *ctx, bool svg)
{
    const tpc_qa_t *q = ((const report_t *)ctx)->q;
    tusk_gnuplot_head(fp, "efficiency", "tpc/tpc_qa.c", "momentum.csv", svg, 900, 600);
    fprintf(fp, "set datafile separator ','\nset title ");
    char title[160];
    snprintf(title, sizeof title, "%s: TPC slice tracker efficiency and clone rate against momentum (%s)",
             q->cfg.label, tpc_backend_name(q->backend));
    tusk_gnuplot_quote(fp, title);
    fprintf(
        fp,
        "\nset logscale x\nset xrange [0.04:25]\nset xlabel 'momentum p (GeV/c)'\nset ylabel '%%'\nset yrange [0:105]\n"
        "set key bottom right\nset grid\n"
        "plot 'momentum.csv' every ::1 using 4:($5 > 0 ? 100.0 * $6 / $5 : 1/0) with linespoints pt 7 "
        "title 'efficiency', \\\n"
        "     '' every ::1 using 4:($6 + $7 > 0 ? 100.0 * $7 / ($6 + $7) : 1/0) with linespoints pt 5 "
        "title 'clone rate'\n");
}

/* The picture, its script (its data is momentum.csv; base/report.h). */
static int write_plot(const void *ctx, const char *dir, const char *format, tusk_error_t *err)
{
    static const tusk_report_file_t files[] = {{"efficiency.gp", write_efficiency_gp}};
    return tusk_report_picture(dir, "efficiency", format, files, 1, ctx, err);
}

static void write_summary(FILE *fp, const void *ctx, bool svg)
{
    const tpc_qa_summary_t *s = &((const report_t *)ctx)->s;
    (void)svg;
    fprintf(fp, "sample,backend,events,slices,clusters,noise_clusters,tracks,hits,fakes,matched_other,"
                "reconstructible,found,clones,reference,reference_found,reference_clones,efficiency_pct,"
                "reference_efficiency_pct,fake_pct,clone_pct,res_y_mm,res_z_mm,res_sinphi,res_lambda,res_qpt,"
                "pull_y,pull_z,pull_sinphi,pull_lambda,pull_qpt,pt_resolution,pull_core_y,pull_core_z,pull_core_sinphi,"
                "pull_core_lambda,pull_core_qpt\n");
    fprintf(fp, "%s,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.4f,%.4f,%.4f,%.4f",
            s->label, tpc_backend_name(s->backend), (unsigned long long)s->events, (unsigned long long)s->slices,
            (unsigned long long)s->clusters, (unsigned long long)s->noise_clusters, (unsigned long long)s->tracks,
            (unsigned long long)s->hits, (unsigned long long)s->fakes, (unsigned long long)s->matched_other,
            (unsigned long long)s->all.particles, (unsigned long long)s->all.found, (unsigned long long)s->all.clones,
            (unsigned long long)s->ref.particles, (unsigned long long)s->ref.found, (unsigned long long)s->ref.clones,
            s->efficiency, s->ref_efficiency, s->fake_rate, s->clone_rate);
    for (int k = 0; k < 5; k++)
        fprintf(fp, ",%.6g", s->res[k].rms);
    for (int k = 0; k < 5; k++)
        fprintf(fp, ",%.6g", s->res[k].pull_rms);
    fprintf(fp, ",%.6g", s->pt_res);
    for (int k = 0; k < 5; k++)
        fprintf(fp, ",%.6g", s->res[k].pull_core);
    fputc('\n', fp);
}

static void write_momentum(FILE *fp, const void *ctx, bool svg)
{
    const tpc_qa_summary_t *s = &((const report_t *)ctx)->s;
    (void)svg;
    fprintf(fp, "sample,p_low,p_high,p_centre,particles,found,clones\n");
    for (int b = 0; b < TPC_QA_PBINS; b++)
        fprintf(fp, "%s,%g,%g,%.6g,%llu,%llu,%llu\n", s->label, s->p_edge[b], s->p_edge[b + 1],
                sqrt(s->p_edge[b] * s->p_edge[b + 1]), (unsigned long long)s->pbin[b].particles,
                (unsigned long long)s->pbin[b].found, (unsigned long long)s->pbin[b].clones);
}

int tpc_qa_write(const tpc_qa_t *q, const char *dir, bool plot, const char *format, tusk_error_t *err)
{
    if (!q->finished)
        return tusk_error_set(err, TUSK_EINVAL, "TPC analysis: write before finish");
    report_t r;
    r.q = q;
    tpc_qa_summary(q, &r.s);
    static const tusk_report_file_t files[] = {{"summary.csv", write_summary}, {"momentum.csv", write_momentum}};
    return tusk_report_write(dir, files, 2, &r, plot ? write_plot : NULL, format, err);
}

/* ---- two reconstructions, track by track ------------------------------------------------------------------ */

typedef struct tslice {
    uint32_t event;
    unsigned slice;
    adf_tpc_tracks_t t;       /* views into the buffer */
    uint32_t *first_hit;      /* per track */
} tslice_t;

typedef struct tlist {
    tslice_t *s;
    size_t n, cap;
} tlist_t;

static void tlist_free(tlist_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i].first_hit);
    free(l->s);
}

static int read_tracks(const void *buf, size_t size, const char *name, tlist_t *l, tusk_error_t *err)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type != ADF_TYPE_DATA_TPC_TRACKS)
            continue;
        adf_error_t e;
        tslice_t s;
        if (adf_tpc_tracks_decode(&f, &s.t, &e) != ADF_OK) {
            st = tusk_error_set(err, TUSK_EINVAL, "%s: %s", name, e.message);
            break;
        }
        s.event = f.key.event;
        s.slice = s.t.slice;
        for (size_t i = 0; i < l->n; i++)
            if (l->s[i].event == s.event && l->s[i].slice == s.slice) {
                st = tusk_error_set(err, TUSK_EINVAL, "%s: event %u, slice %u has two data:tpc_tracks frames", name,
                                    (unsigned)s.event, s.slice);
                break;
            }
        if (st != TUSK_OK)
            break;
        if (!(s.first_hit = malloc((s.t.n_tracks + 1u) * sizeof *s.first_hit)) ||
            tusk_grow(&l->s, &l->cap, l->n + 1, sizeof *l->s) != 0) {
            free(s.first_hit);
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            break;
        }
        uint32_t h = 0;
        for (uint32_t i = 0; i < s.t.n_tracks; i++) {
            adf_tpc_track_t tr;
            adf_tpc_track(&s.t, i, &tr);
            s.first_hit[i] = h;
            h += tr.n_hits;
        }
        l->s[l->n++] = s;
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s: %s", name, adf_reader_error(r)->message);
    adf_reader_destroy(&r);
    return st;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void compare_slice(const tslice_t *a, const tslice_t *b, tpc_compare_t *c)
{
    c->tracks_a += a->t.n_tracks;
    c->tracks_b += b->t.n_tracks;
    /* both are in (tracklet, first row) order */
    uint32_t i = 0, j = 0;
    while (i < a->t.n_tracks || j < b->t.n_tracks) {
        adf_tpc_track_t x, y;
        if (i < a->t.n_tracks)
            adf_tpc_track(&a->t, i, &x);
        if (j < b->t.n_tracks)
            adf_tpc_track(&b->t, j, &y);
        uint64_t kx = i < a->t.n_tracks ? (uint64_t)x.tracklet << 8 | x.first_row : UINT64_MAX;
        uint64_t ky = j < b->t.n_tracks ? (uint64_t)y.tracklet << 8 | y.first_row : UINT64_MAX;
        if (kx < ky) {
            c->only_a++;
            i++;
            continue;
        }
        if (ky < kx) {
            c->only_b++;
            j++;
            continue;
        }
        /* the same tracklet and first row: the clusters, then the numbers */
        uint32_t n = x.n_hits > y.n_hits ? x.n_hits : y.n_hits, differ = 0;
        for (uint32_t k = 0; k < n; k++) {
            adf_tpc_hit_t hx, hy;
            if (k >= x.n_hits || k >= y.n_hits) {
                differ++;
                continue;
            }
            adf_tpc_hit(&a->t, a->first_hit[i] + k, &hx);
            adf_tpc_hit(&b->t, b->first_hit[j] + k, &hy);
            differ += hx.cluster != hy.cluster || hx.flags != hy.flags;
        }
        c->hits_compared += n;
        c->hits_differ += differ;
        if (!differ) {
            c->same_clusters++;
            bool same = fbits(x.x) == fbits(y.x) && fbits(x.chi2) == fbits(y.chi2);
            for (int k = 0; k < 5; k++) {
                same = same && fbits(x.param[k]) == fbits(y.param[k]);
                double d = fabs((double)x.param[k] - (double)y.param[k]);
                double s = fabs((double)x.param[k]) > 1e-6 ? d / fabs((double)x.param[k]) : d;
                if (s > c->max_param_diff)
                    c->max_param_diff = s;
            }
            for (int k = 0; k < 15; k++)
                same = same && fbits(x.cov[k]) == fbits(y.cov[k]);
            c->same += same;
        }
        i++;
        j++;
    }
}

int tpc_compare_buffers(const void *a, size_t size_a, const void *b, size_t size_b, tpc_compare_t *cmp,
                        tusk_error_t *err)
{
    memset(cmp, 0, sizeof *cmp);
    tlist_t la = {0}, lb = {0};
    int st = read_tracks(a, size_a, "first", &la, err);
    if (st == TUSK_OK)
        st = read_tracks(b, size_b, "second", &lb, err);
    for (size_t i = 0; st == TUSK_OK && i < la.n; i++) {
        const tslice_t *x = &la.s[i], *y = NULL;
        for (size_t j = 0; j < lb.n; j++)
            if (lb.s[j].event == x->event && lb.s[j].slice == x->slice)
                y = &lb.s[j];
        if (!y) {
            st = tusk_error_set(err, TUSK_EINVAL, "event %u, slice %u has tracks in the first and none in the second",
                                (unsigned)x->event, x->slice);
            break;
        }
        compare_slice(x, y, cmp);
        cmp->slices++;
    }
    if (st == TUSK_OK && lb.n != la.n)
        st = tusk_error_set(err, TUSK_EINVAL, "the second has %zu slices of tracks, the first %zu", lb.n, la.n);
    tlist_free(&la);
    tlist_free(&lb);
    return st;
}
