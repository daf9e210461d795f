/* ut_qa.c - the quality analysis (tusk/ut.h; the paper's §III-B and
 * Table 3; spec §3.4): each event's UT tracks against its truth.
 *
 *  - a particle is reconstructible in the UT with hits in at least 3 of
 *    the 4 planes; the categories ask it to be reconstructible in the VELO
 *    too, and forward: long (it reaches the SciFi) or VELO+UT (it does
 *    not), each also with p above the cut;
 *  - a track is matched to a particle when at least 70 % of its hits are
 *    the particle's, counting the UT hits and the VELO track (which counts
 *    for its own particle; TUSK, spec §3.4): 3 of 4, 4 of 5;
 *  - efficiency: reconstructible particles with a matched track over the
 *    reconstructible ones; clones: matched tracks after a particle's
 *    first, over its category's matched tracks; fakes: tracks matched to
 *    nothing, over all tracks;
 *  - momentum: (p - p_true) / p_true of matched tracks, p = 1 / |q/p|, and
 *    whether the charge is right.
 * An event's frames may come in any order and over any buffers; an event
 * is analysed when its four have come, and the sums do not depend on the
 * order events come in. */
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
#include "tusk/adf.h"
#include "ut_private.h"

#define PBINS 18 /* momentum bins of the efficiency picture, log-spaced from 0.1 to 100 GeV, 6 a decade */
#define DBINS 80 /* bins of the momentum resolution, -0.4 to 0.4 */

enum { HAS_RAW = 1, HAS_VELO = 2, HAS_TRACKS = 4, HAS_TRUTH = 8, HAS_ALL = 15 };

/* An event, its frames gathered (base/gather.h: unit the event, part 0,
 * have the HAS_* bits). */
typedef struct pending {
    tusk_part_t head;
    uint32_t *ids;            /* the raw hits' LHCbIDs, bank order */
    uint32_t n_hits;
    uint32_t n_velo;
    adf_ut_track_t *tracks;
    uint32_t n_tracks;
    adf_ut_particle_t *part;
    uint32_t n_part;
    uint32_t *hit_part, *velo_part;
    uint32_t truth_hits, truth_velo;
} pending_t;

struct ut_qa {
    ut_qa_config_t cfg;
    uint32_t digest;
    tusk_gather_t g;          /* the events still open */
    uint32_t *done;           /* events analysed, sorted at finish to find twins */
    size_t n_done, cap_done;
    ut_qa_summary_t s;
    bool backend_set, finished;
    double *dp;               /* (p - p_true) / p_true of every matched track */
    size_t n_dp, cap_dp;
    uint64_t p_reco[2][PBINS], p_found[2][PBINS]; /* long, VELO+UT against p */
    uint64_t dhist[DBINS + 2];
};

static const char *const cat_names[UT_QA_CATEGORIES] = {"long", "long, p > 5 GeV", "VELO+UT", "VELO+UT, p > 5 GeV"};

const char *ut_qa_category_name(int c)
{
    return c >= 0 && c < UT_QA_CATEGORIES ? cat_names[c] : "?";
}

void ut_qa_config_default(ut_qa_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    ut_config_default(&cfg->alg);
    snprintf(cfg->label, sizeof cfg->label, "sample");
    cfg->p_cut_gev = 5.0;
}

static void pending_free(void *rec);

int ut_qa_new(ut_qa_t **out, const ut_qa_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = ut_config_check(&cfg->alg, err);
    if (st != TUSK_OK)
        return st;
    ut_qa_t *q = calloc(1, sizeof *q);
    if (!q)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    q->cfg = *cfg;
    q->digest = ut_config_digest(&cfg->alg);
    tusk_gather_init(&q->g, sizeof(pending_t), pending_free, "event", "part");
    snprintf(q->s.label, sizeof q->s.label, "%s", cfg->label);
    q->s.sectors = cfg->alg.sectors;
    q->s.candidates = cfg->alg.candidates;
    *out = q;
    return TUSK_OK;
}

static void pending_free(void *rec)
{
    pending_t *p = rec;
    free(p->ids);
    free(p->tracks);
    free(p->part);
    free(p->hit_part);
    free(p->velo_part);
    memset(p, 0, sizeof *p);
}

void ut_qa_destroy(ut_qa_t **qa)
{
    if (!qa || !*qa)
        return;
    ut_qa_t *q = *qa;
    tusk_gather_free(&q->g);
    free(q->done);
    free(q->dp);
    free(q);
    *qa = NULL;
}

typedef struct idp {
    uint32_t id, particle;
} idp_t;

static int by_id(const void *a, const void *b)
{
    const idp_t *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int pbin(double p)
{
    double b = floor((log10(p) + 1.0) * 6.0);
    return b < 0 ? -1 : b >= PBINS ? -1 : (int)b;
}

/* The categories a particle is reconstructible in (a bit each), 0 for none. */
static unsigned categories(const adf_ut_particle_t *x, double p_cut)
{
    unsigned planes = ut_popcount4(x->planes);
    if (!(x->flags & ADF_UT_VELO) || (x->flags & ADF_UT_BACKWARD) || planes < 3)
        return 0;
    unsigned c = (x->flags & ADF_UT_LONG) ? 1u << UT_QA_LONG : 1u << UT_QA_UP;
    if (x->p > p_cut)
        c |= (x->flags & ADF_UT_LONG) ? 1u << UT_QA_LONG_P5 : 1u << UT_QA_UP_P5;
    return c;
}

static int analyse(ut_qa_t *q, pending_t *p, tusk_error_t *err)
{
    if (p->truth_hits != p->n_hits || p->truth_velo != p->n_velo)
        return tusk_error_set(err, TUSK_EINVAL,
                              "UT analysis: event %u: its truth is of %u hits and %u VELO tracks, the event has %u and %u",
                              (unsigned)p->head.unit, (unsigned)p->truth_hits, (unsigned)p->truth_velo, (unsigned)p->n_hits,
                              (unsigned)p->n_velo);
    idp_t *map = malloc(((size_t)p->n_hits + 1) * sizeof *map);
    uint32_t *nmatch = calloc((size_t)p->n_part + 1, sizeof *nmatch);
    if (!map || !nmatch) {
        free(map);
        free(nmatch);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT analysis, event %u)", (unsigned)p->head.unit);
    }
    for (uint32_t j = 0; j < p->n_hits; j++) {
        map[j].id = p->ids[j];
        map[j].particle = p->hit_part[j];
    }
    qsort(map, p->n_hits, sizeof *map, by_id);
    int st = TUSK_OK;
    for (uint32_t t = 0; t < p->n_tracks; t++) {
        const adf_ut_track_t *tr = &p->tracks[t];
        if (tr->velo >= p->n_velo) {
            st = tusk_error_set(err, TUSK_EINVAL, "UT analysis: event %u: UT track %u names VELO track %u of %u",
                                (unsigned)p->head.unit, (unsigned)t, (unsigned)tr->velo, (unsigned)p->n_velo);
            break;
        }
        uint32_t who[5], votes[5], n = 0, total = 0;
        uint32_t owner[5];
        owner[total++] = p->velo_part[tr->velo];
        for (int k = 0; k < 4 && st == TUSK_OK; k++) {
            if (!tr->id[k])
                continue;
            idp_t key = {tr->id[k], 0};
            idp_t *hit = bsearch(&key, map, p->n_hits, sizeof *map, by_id);
            if (!hit) {
                st = tusk_error_set(err, TUSK_EINVAL, "UT analysis: event %u: UT track %u has hit 0x%08X, which the "
                                                      "event's raw banks do not",
                                    (unsigned)p->head.unit, (unsigned)t, (unsigned)tr->id[k]);
                break;
            }
            owner[total++] = hit->particle;
        }
        if (st != TUSK_OK)
            break;
        for (uint32_t i = 0; i < total; i++) {
            if (owner[i] == ADF_UT_NONE)
                continue;
            uint32_t k = 0;
            while (k < n && who[k] != owner[i])
                k++;
            if (k == n) {
                who[n] = owner[i];
                votes[n++] = 0;
            }
            votes[k]++;
        }
        uint32_t best = ADF_UT_NONE, bv = 0;
        for (uint32_t k = 0; k < n; k++)
            if (votes[k] > bv) {
                bv = votes[k];
                best = who[k];
            }
        q->s.tracks++;
        if (best == ADF_UT_NONE || 10 * bv < 7 * total) {
            q->s.fakes++;
            continue;
        }
        const adf_ut_particle_t *x = &p->part[best];
        unsigned cats = categories(x, q->cfg.p_cut_gev);
        for (int c = 0; c < UT_QA_CATEGORIES; c++)
            if (cats & (1u << c)) {
                q->s.matched[c]++;
                if (nmatch[best] > 0)
                    q->s.clones[c]++;
            }
        nmatch[best]++;
        if (!(x->flags & ADF_UT_BACKWARD) && tr->qop != 0.0f) {
            double prec = 1.0 / fabs((double)tr->qop), dp = (prec - (double)x->p) / (double)x->p;
            if (tusk_grow(&q->dp, &q->cap_dp, q->n_dp + 1, sizeof *q->dp) != 0) {
                st = tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT analysis, event %u)", (unsigned)p->head.unit);
                break;
            }
            q->dp[q->n_dp++] = dp;
            double fb = floor((dp + 0.4) / 0.8 * DBINS);
            q->dhist[!(fb >= 0) ? 0 : fb >= DBINS ? DBINS + 1 : (int)fb + 1]++;
            q->s.charge_tried++;
            q->s.charge_right += (tr->qop > 0) == (x->charge > 0);
        }
    }
    if (st == TUSK_OK) {
        for (uint32_t i = 0; i < p->n_part; i++) {
            unsigned cats = categories(&p->part[i], q->cfg.p_cut_gev);
            for (int c = 0; c < UT_QA_CATEGORIES; c++)
                if (cats & (1u << c)) {
                    q->s.reconstructible[c]++;
                    q->s.found[c] += nmatch[i] > 0;
                }
            int b = pbin(p->part[i].p);
            if (b >= 0 && (cats & ((1u << UT_QA_LONG) | (1u << UT_QA_UP)))) {
                int k = (cats & (1u << UT_QA_LONG)) ? 0 : 1;
                q->p_reco[k][b]++;
                q->p_found[k][b] += nmatch[i] > 0;
            }
        }
        q->s.events++;
        q->s.velo_tracks += p->n_velo;
        q->s.hits += p->n_hits;
        if (tusk_grow(&q->done, &q->cap_done, q->n_done + 1, sizeof *q->done) != 0)
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT analysis)");
        else
            q->done[q->n_done++] = p->head.unit;
    }
    free(map);
    free(nmatch);
    return st;
}

/* One frame of an event into its pending record. */
static int take(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    ut_qa_t *q = ctx;
    adf_error_t e;
    unsigned what = f->key.type == ADF_TYPE_DATA_UT_RAW ? HAS_RAW
                    : f->key.type == ADF_TYPE_DATA_VELO_TRACKS ? HAS_VELO
                    : f->key.type == ADF_TYPE_DATA_UT_TRACKS   ? HAS_TRACKS
                    : f->key.type == ADF_TYPE_DATA_UT_TRUTH    ? HAS_TRUTH
                                                               : 0;
    if (!what)
        return TUSK_OK;
    pending_t *p = tusk_gather_part(&q->g, f->key.event, 0, err);
    if (!p)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT analysis)");
    if (p->head.have & what)
        return tusk_error_set(err, TUSK_EINVAL, "UT analysis: a second %s of event %u at offset %llu",
                              adf_type_name(f->key.type), (unsigned)f->key.event, (unsigned long long)f->offset);
    int st = TUSK_OK;
    if (what == HAS_RAW) {
        adf_ut_raw_t r;
        if (adf_ut_raw_decode(f, &r, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        adf_ut_bank_t *banks = malloc(((size_t)r.n_banks + 1) * sizeof *banks);
        uint16_t *words = malloc(((size_t)r.n_hits + 1) * sizeof *words);
        p->ids = malloc(((size_t)r.n_hits + 1) * sizeof *p->ids);
        if (!banks || !words || !p->ids) {
            free(banks);
            free(words);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT analysis)");
        }
        adf_ut_raw_read(&r, banks, words);
        uint32_t j = 0;
        for (unsigned b = 0; b < r.n_banks; b++)
            for (unsigned k = 0; k < banks[b].n_hits; k++, j++)
                p->ids[j] = ut_lhcbid(banks[b].sector, ut_word_strip(words[j]));
        p->n_hits = r.n_hits;
        free(banks);
        free(words);
    } else if (what == HAS_VELO) {
        adf_velo_tracks_t v;
        if (adf_velo_tracks_decode(f, &v, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        p->n_velo = v.n_tracks;
    } else if (what == HAS_TRACKS) {
        adf_ut_tracks_t t;
        if (adf_ut_tracks_decode(f, &t, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (t.settings != q->digest)
            return tusk_error_set(err, TUSK_EINVAL,
                                  "UT analysis: data:ut_tracks of event %u at offset %llu was made with other settings "
                                  "than this analysis (digest 0x%08X, here 0x%08X): give the analysis the tracker's "
                                  "settings",
                                  (unsigned)f->key.event, (unsigned long long)f->offset, (unsigned)t.settings,
                                  (unsigned)q->digest);
        if (q->backend_set && t.backend != q->s.backend)
            return tusk_error_set(err, TUSK_EINVAL,
                                  "UT analysis: data:ut_tracks of event %u at offset %llu is of backend %s, the ones "
                                  "before of %s: one analysis a backend",
                                  (unsigned)f->key.event, (unsigned long long)f->offset,
                                  adf_ut_backend_name(t.backend), adf_ut_backend_name((unsigned)q->s.backend));
        q->s.backend = t.backend;
        q->backend_set = true;
        if (!(p->tracks = malloc(((size_t)t.n_tracks + 1) * sizeof *p->tracks)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT analysis)");
        for (uint32_t i = 0; i < t.n_tracks; i++)
            adf_ut_track(&t, i, &p->tracks[i]);
        p->n_tracks = t.n_tracks;
    } else {
        adf_ut_truth_t t;
        if (adf_ut_truth_decode(f, &t, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        p->part = malloc(((size_t)t.n_particles + 1) * sizeof *p->part);
        p->hit_part = malloc(((size_t)t.n_hits + 1) * sizeof *p->hit_part);
        p->velo_part = malloc(((size_t)t.n_velo + 1) * sizeof *p->velo_part);
        if (!p->part || !p->hit_part || !p->velo_part)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT analysis)");
        for (uint32_t i = 0; i < t.n_particles; i++)
            adf_ut_truth_particle(&t, i, &p->part[i]);
        adf_ut_truth_hits(&t, 0, t.n_hits, p->hit_part);
        adf_ut_truth_velo(&t, 0, t.n_velo, p->velo_part);
        p->n_part = t.n_particles;
        p->truth_hits = t.n_hits;
        p->truth_velo = t.n_velo;
    }
    p->head.have |= what;
    if (p->head.have == HAS_ALL) {
        st = analyse(q, p, err);
        tusk_gather_close(&q->g, p);
    }
    return st;
}

/* A frame, or an event's frames together in its composite. */
static int take_any(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    if (f->key.type != ADF_TYPE_EVENT_DATA_UT)
        return take(ctx, f, err);
    return adf_frames_read(f->payload, f->payload_size, f->offset + ADF_KEY_SIZE, ADF_FRAMES_ALL, take, ctx, err);
}

int ut_qa_feed(ut_qa_t *q, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    if (q->finished)
        return tusk_error_set(err, TUSK_EINVAL, "UT analysis: data after the end");
    return adf_frames_read(buf, size, base, ADF_FRAMES_ALL, take_any, q, err);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int ut_qa_finish(ut_qa_t *q, tusk_error_t *err)
{
    if (q->finished)
        return TUSK_OK;
    const tusk_part_t *p = tusk_gather_lowest(&q->g);
    if (p) {
        static const char *const names[4] = {"data:ut_raw", "data:velo_tracks", "data:ut_tracks", "data:ut_truth"};
        char missing[96];
        tusk_gather_missing(p->have, names, 4, missing, sizeof missing);
        return tusk_error_set(err, TUSK_EINVAL, "UT analysis: event %u (and %zu more) never got its %s",
                              (unsigned)p->unit, q->g.n - 1, missing);
    }
    if (q->s.events == 0)
        return tusk_error_set(err, TUSK_EINVAL,
                              "UT analysis: no event with its data:ut_raw, data:velo_tracks, data:ut_tracks and "
                              "data:ut_truth frames");
    qsort(q->done, q->n_done, sizeof *q->done, cmp_u32);
    for (size_t i = 1; i < q->n_done; i++)
        if (q->done[i] == q->done[i - 1])
            return tusk_error_set(err, TUSK_EINVAL, "UT analysis: event %u came twice", (unsigned)q->done[i]);
    /* the momentum resolution */
    if (q->n_dp > 0) {
        tusk_moments_t m = {0};
        for (size_t i = 0; i < q->n_dp; i++)
            tusk_moments_add(&m, q->dp[i]);
        q->s.dp_mean = tusk_moments_mean(&m);
        q->s.dp_rms = tusk_moments_std(&m);
        qsort(q->dp, q->n_dp, sizeof *q->dp, tusk_cmp_double);
        double med = q->dp[q->n_dp / 2];
        for (size_t i = 0; i < q->n_dp; i++)
            q->dp[i] = fabs(q->dp[i] - med);
        qsort(q->dp, q->n_dp, sizeof *q->dp, tusk_cmp_double);
        q->s.dp_core = q->dp[(size_t)(0.68 * (double)(q->n_dp - 1))];
    }
    q->finished = true;
    return TUSK_OK;
}

void ut_qa_summary(const ut_qa_t *q, ut_qa_summary_t *s)
{
    *s = q->s;
}

void ut_qa_print(const ut_qa_t *q, FILE *out)
{
    const ut_qa_summary_t *s = &q->s;
    fprintf(out,
            "UT tracking, %s: backend %s, %u sectors, %u candidates; %llu events, %.1f VELO tracks, %.1f UT hits and "
            "%.1f UT tracks an event\n",
            s->label, ut_backend_name(s->backend), s->sectors, s->candidates, (unsigned long long)s->events,
            s->events ? (double)s->velo_tracks / (double)s->events : 0.0,
            s->events ? (double)s->hits / (double)s->events : 0.0,
            s->events ? (double)s->tracks / (double)s->events : 0.0);
    fprintf(out, "  %-22s %15s %10s %10s %10s %10s\n", "category", "reconstructible", "found", "efficiency", "clones",
            "clone rate");
    for (int c = 0; c < UT_QA_CATEGORIES; c++) {
        char name[48];
        if (c == UT_QA_LONG_P5 || c == UT_QA_UP_P5)
            snprintf(name, sizeof name, "%s, p > %g GeV", c == UT_QA_LONG_P5 ? "long" : "VELO+UT", q->cfg.p_cut_gev);
        else
            snprintf(name, sizeof name, "%s", cat_names[c]);
        fprintf(out, "  %-22s %15llu %10llu %9.2f%% %10llu %9.2f%%\n", name,
                (unsigned long long)s->reconstructible[c], (unsigned long long)s->found[c],
                tusk_pct(s->found[c], s->reconstructible[c]), (unsigned long long)s->clones[c],
                tusk_pct(s->clones[c], s->matched[c]));
    }
    fprintf(out, "  fake (ghost) rate: %.2f%% of %llu tracks\n", tusk_pct(s->fakes, s->tracks),
            (unsigned long long)s->tracks);
    fprintf(out,
            "  momentum: (p - p_true) / p_true of matched tracks: mean %+.4f, RMS %.4f, 68%% within %.4f of the median; "
            "charge right %.2f%%\n",
            s->dp_mean, s->dp_rms, s->dp_core, tusk_pct(s->charge_right, s->charge_tried));
}

/* The picture's data: the efficiencies against p, the momentum resolution. */
static void write_eff_dat(FILE *fp, const void *ctx, bool svg)
{
    const ut_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "# p bin centre (GeV), long: reconstructible found efficiency %%, VELO+UT: the same\n");
    for (int b = 0; b < PBINS; b++) {
        double pc = pow(10.0, (b + 0.5) / 6.0 - 1.0);
        fprintf(fp, "%.4g %llu %llu %.4g %llu %llu %.4g\n", pc, (unsigned long long)q->p_reco[0][b],
                (unsigned long long)q->p_found[0][b], tusk_pct(q->p_found[0][b], q->p_reco[0][b]),
                (unsigned long long)q->p_reco[1][b], (unsigned long long)q->p_found[1][b],
                tusk_pct(q->p_found[1][b], q->p_reco[1][b]));
    }
}

static void write_dp_dat(FILE *fp, const void *ctx, bool svg)
{
    const ut_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "# (p - p_true) / p_true, bin centre, and matched tracks (under- and overflow not drawn)\n");
    for (int b = 0; b < DBINS; b++)
        fprintf(fp, "%.4g %llu\n", -0.4 + (b + 0.5) * 0.8 / DBINS, (unsigned long long)q->dhist[b + 1]);
}

static void write_qa_gp(FILE *fp, const void *ctx, bool svg)
{
    const ut_qa_t *q = ctx;
    tusk_gnuplot_head(fp, "ut-qa", "ut/ut_qa.c", "ut-qa-eff.dat and ut-qa-dp.dat", svg, 1100, 450);
    fprintf(fp, "set multiplot layout 1,2 title ");
    char title[200];
    snprintf(title, sizeof title, "%s: Compass, %s, %u sectors, %u candidates (%llu events)", q->s.label,
             ut_backend_name(q->s.backend), q->s.sectors, q->s.candidates, (unsigned long long)q->s.events);
    tusk_gnuplot_quote(fp, title);
    fprintf(fp, "\nset logscale x\nset xrange [0.1:100]\nset yrange [0:105]\nset xlabel 'p (GeV/c)'\n"
                "set ylabel 'efficiency (%%)'\nset key bottom right\nset grid\n"
                "plot 'ut-qa-eff.dat' using 1:($2 > 0 ? $4 : 1/0) with linespoints pt 7 lc rgb '#3060c0' title 'long', \\\n"
                "     'ut-qa-eff.dat' using 1:($5 > 0 ? $7 : 1/0) with linespoints pt 5 lc rgb '#c04020' title 'VELO+UT'\n"
                "unset logscale x\nset xrange [-0.4:0.4]\nset yrange [0:*]\nset xlabel '(p - p_{true}) / p_{true}'\n"
                "set ylabel 'matched tracks'\nset style fill solid 0.6 noborder\n"
                "plot 'ut-qa-dp.dat' using 1:2 with boxes lc rgb '#208040' notitle\n"
                "unset multiplot\n");
}

/* The picture, its data and script (base/report.h). */
static int write_plot(const void *ctx, const char *dir, const char *format, tusk_error_t *err)
{
    static const tusk_report_file_t files[] = {
        {"ut-qa-eff.dat", write_eff_dat}, {"ut-qa-dp.dat", write_dp_dat}, {"ut-qa.gp", write_qa_gp}};
    return tusk_report_picture(dir, "ut-qa", format, files, 3, ctx, err);
}

static void write_summary(FILE *fp, const void *ctx, bool svg)
{
    const ut_qa_t *q = ctx;
    const ut_qa_summary_t *s = &q->s;
    (void)svg;
    fprintf(fp, "sample,backend,sectors,candidates,events,velo_tracks,hits,tracks");
    for (int k = 0; k < UT_QA_CATEGORIES; k++)
        fprintf(fp, ",%s_reconstructible,%s_found,%s_efficiency,%s_clones,%s_clone_rate",
                k == 0 ? "long" : k == 1 ? "long_p5" : k == 2 ? "up" : "up_p5",
                k == 0 ? "long" : k == 1 ? "long_p5" : k == 2 ? "up" : "up_p5",
                k == 0 ? "long" : k == 1 ? "long_p5" : k == 2 ? "up" : "up_p5",
                k == 0 ? "long" : k == 1 ? "long_p5" : k == 2 ? "up" : "up_p5",
                k == 0 ? "long" : k == 1 ? "long_p5" : k == 2 ? "up" : "up_p5");
    fprintf(fp, ",fakes,fake_rate,dp_mean,dp_rms,dp_core,charge_right\n");
    fprintf(fp, "%s,%s,%u,%u,%llu,%llu,%llu,%llu", s->label, ut_backend_name(s->backend), s->sectors, s->candidates,
            (unsigned long long)s->events, (unsigned long long)s->velo_tracks, (unsigned long long)s->hits,
            (unsigned long long)s->tracks);
    for (int k = 0; k < UT_QA_CATEGORIES; k++)
        fprintf(fp, ",%llu,%llu,%.4f,%llu,%.4f", (unsigned long long)s->reconstructible[k],
                (unsigned long long)s->found[k], tusk_pct(s->found[k], s->reconstructible[k]),
                (unsigned long long)s->clones[k], tusk_pct(s->clones[k], s->matched[k]));
    fprintf(fp, ",%llu,%.4f,%.6f,%.6f,%.6f,%.4f\n", (unsigned long long)s->fakes, tusk_pct(s->fakes, s->tracks),
            s->dp_mean, s->dp_rms, s->dp_core, tusk_pct(s->charge_right, s->charge_tried));
}

static void write_momentum(FILE *fp, const void *ctx, bool svg)
{
    const ut_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "p_gev,long_reconstructible,long_found,up_reconstructible,up_found\n");
    for (int b = 0; b < PBINS; b++)
        fprintf(fp, "%.4g,%llu,%llu,%llu,%llu\n", pow(10.0, (b + 0.5) / 6.0 - 1.0),
                (unsigned long long)q->p_reco[0][b], (unsigned long long)q->p_found[0][b],
                (unsigned long long)q->p_reco[1][b], (unsigned long long)q->p_found[1][b]);
}

int ut_qa_write(const ut_qa_t *q, const char *dir, bool plot, const char *format, tusk_error_t *err)
{
    if (!q->finished)
        return tusk_error_set(err, TUSK_EINVAL, "UT analysis: write before finish");
    static const tusk_report_file_t files[] = {{"summary.csv", write_summary}, {"momentum.csv", write_momentum}};
    return tusk_report_write(dir, files, 2, q, plot ? write_plot : NULL, format, err);
}
