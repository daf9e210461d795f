/* tracker.c - gamma-ray tracking, the CPU reference (tusk/track.h):
 * settings, batches of points, the tracker, point extraction, the figure
 * of merit and the search over orders. Clustering and the pipeline that
 * both backends share are pipeline.c's. The algorithm is in README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tracking_private.h"
#include "tusk/compton.h"
#include "tusk/gexs.h"

/* ---- settings ---------------------------------------------------------------- */

static const char *const known_keys[] = {"preset", "points", "cone_deg", "recluster_deg", "max_points", "oversize",
                                         "merge_points", "recombine_points", "fom_max",
                                         "single_min_prob", "w0_mm", "w1_mm", "inner_radius_mm", "min_point_kev",
                                         NULL};

static const char *const points_names[] = {"psa", "truth", "truth_segments", NULL};

/* The presets (enum track_preset): the position resolution of their
 * points and the recombination (tracking/README.md, "Presets"). */
static const struct {
    const char *name;
    double w0_mm, w1_mm;
    unsigned recombine_points;
} presets[] = {
    {"psa", 3.0, 6.0, 0},   /* a PSA's position errors (the defaults) */
    {"exact", 0.2, 0.5, 7}, /* exact points (truth): docs/validation.md, "Tracking losses" */
};

void track_config_default(track_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    track_config_preset(cfg, TRACK_PRESET_PSA);
    cfg->points = TRACK_POINTS_PSA;
    cfg->cone_deg = 20.0;
    cfg->recluster_deg = 10.0;
    cfg->max_points = 7;
    cfg->oversize = TRACK_OVERSIZE_MERGE;
    cfg->merge_points = 6;
    cfg->fom_max = 3.5;
    cfg->single_min_prob = 0.05;
    cfg->inner_radius_mm = 0.0;
    cfg->min_point_kev = 0.0;
}

void track_config_preset(track_config_t *cfg, enum track_preset p)
{
    if ((unsigned)p >= sizeof presets / sizeof presets[0])
        return;
    cfg->preset = p;
    cfg->w0_mm = presets[p].w0_mm;
    cfg->w1_mm = presets[p].w1_mm;
    cfg->recombine_points = presets[p].recombine_points;
}

const char *track_preset_name(enum track_preset p)
{
    return (unsigned)p < sizeof presets / sizeof presets[0] ? presets[p].name : "?";
}

int track_preset_parse(const char *text)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (text && strcmp(text, presets[i].name) == 0)
            return (int)i;
    return -1;
}

const char *const *track_known_keys(void)
{
    return known_keys;
}

const char *track_points_name(enum track_points p)
{
    return (unsigned)p < 3 ? points_names[p] : "?";
}

int track_points_parse(const char *text)
{
    for (int i = 0; points_names[i]; i++)
        if (text && strcmp(text, points_names[i]) == 0)
            return i;
    return -1;
}

static int read_double(const tusk_params_t *p, const char *origin, const char *key, double *v, tusk_error_t *err)
{
    int st = tusk_params_double(p, key, *v, v, err);
    if (st)
        tusk_error_prefix(err, "%s", origin);
    return st;
}

int track_config_read(track_config_t *cfg, const tusk_params_t *params, bool strict, const char *origin,
                      tusk_error_t *err)
{
    if (!origin)
        origin = "tracking";
    int st;
    if (strict && (st = tusk_params_expect(params, known_keys, err))) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    const char *pre = tusk_params_get(params, "preset"); /* first: the keys below override it */
    if (pre) {
        int k = track_preset_parse(pre);
        if (k < 0)
            return tusk_error_set(err, TUSK_EPARAM, "%s: preset: '%s' is not psa or exact", origin, pre);
        track_config_preset(cfg, (enum track_preset)k);
    }
    const char *pts = tusk_params_get(params, "points");
    if (pts) {
        int k = track_points_parse(pts);
        if (k < 0)
            return tusk_error_set(err, TUSK_EPARAM, "%s: points: '%s' is not psa, truth or truth_segments", origin,
                                  pts);
        cfg->points = (enum track_points)k;
    }
    uint64_t mp = cfg->max_points;
    if ((st = tusk_params_u64(params, "max_points", mp, &mp, err))) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    if (mp < 1 || mp > TRACK_MAX_CLUSTER)
        return tusk_error_set(err, TUSK_EPARAM, "%s: max_points: %llu is outside 1 to %d", origin,
                              (unsigned long long)mp, TRACK_MAX_CLUSTER);
    cfg->max_points = (unsigned)mp;
    uint64_t mg = cfg->merge_points;
    if ((st = tusk_params_u64(params, "merge_points", mg, &mg, err))) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    if (mg < 2 || mg > TRACK_MAX_CLUSTER)
        return tusk_error_set(err, TUSK_EPARAM, "%s: merge_points: %llu is outside 2 to %d", origin,
                              (unsigned long long)mg, TRACK_MAX_CLUSTER);
    cfg->merge_points = (unsigned)mg;
    uint64_t rp = cfg->recombine_points;
    if ((st = tusk_params_u64(params, "recombine_points", rp, &rp, err))) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    if (rp == 1 || rp > TRACK_MAX_CLUSTER)
        return tusk_error_set(err, TUSK_EPARAM, "%s: recombine_points: %llu is neither 0 (off) nor in 2 to %d", origin,
                              (unsigned long long)rp, TRACK_MAX_CLUSTER);
    cfg->recombine_points = (unsigned)rp;
    const char *ov = tusk_params_get(params, "oversize");
    if (ov) {
        if (strcmp(ov, "merge") == 0)
            cfg->oversize = TRACK_OVERSIZE_MERGE;
        else if (strcmp(ov, "split") == 0)
            cfg->oversize = TRACK_OVERSIZE_SPLIT;
        else
            return tusk_error_set(err, TUSK_EPARAM, "%s: oversize: '%s' is not merge or split", origin, ov);
    }
    if ((st = read_double(params, origin, "cone_deg", &cfg->cone_deg, err)) ||
        (st = read_double(params, origin, "recluster_deg", &cfg->recluster_deg, err)) ||
        (st = read_double(params, origin, "fom_max", &cfg->fom_max, err)) ||
        (st = read_double(params, origin, "single_min_prob", &cfg->single_min_prob, err)) ||
        (st = read_double(params, origin, "w0_mm", &cfg->w0_mm, err)) ||
        (st = read_double(params, origin, "w1_mm", &cfg->w1_mm, err)) ||
        (st = read_double(params, origin, "inner_radius_mm", &cfg->inner_radius_mm, err)) ||
        (st = read_double(params, origin, "min_point_kev", &cfg->min_point_kev, err)))
        return st;
    return track_config_check(cfg, origin, err);
}

int track_config_check(const track_config_t *c, const char *origin, tusk_error_t *err)
{
    if (!origin)
        origin = "tracking";
    if ((unsigned)c->preset > TRACK_PRESET_EXACT)
        return tusk_error_set(err, TUSK_EPARAM, "%s: preset: unknown preset %d", origin, (int)c->preset);
    if ((unsigned)c->points > TRACK_POINTS_TRUTH_SEGMENTS)
        return tusk_error_set(err, TUSK_EPARAM, "%s: points: unknown mode %d", origin, (int)c->points);
    if (!(c->cone_deg > 0.0 && c->cone_deg < 180.0))
        return tusk_error_set(err, TUSK_EPARAM, "%s: cone_deg: %g is outside (0, 180) degrees", origin, c->cone_deg);
    if (!(c->recluster_deg > 0.0 && c->recluster_deg < c->cone_deg))
        return tusk_error_set(err, TUSK_EPARAM, "%s: recluster_deg: %g must be above 0 and below cone_deg (%g)",
                              origin, c->recluster_deg, c->cone_deg);
    if (c->max_points < 1 || c->max_points > TRACK_MAX_CLUSTER)
        return tusk_error_set(err, TUSK_EPARAM, "%s: max_points: %u is outside 1 to %d", origin, c->max_points,
                              TRACK_MAX_CLUSTER);
    if (c->merge_points < 2 || c->merge_points > TRACK_MAX_CLUSTER)
        return tusk_error_set(err, TUSK_EPARAM, "%s: merge_points: %u is outside 2 to %d", origin, c->merge_points,
                              TRACK_MAX_CLUSTER);
    if (c->recombine_points == 1 || c->recombine_points > TRACK_MAX_CLUSTER)
        return tusk_error_set(err, TUSK_EPARAM, "%s: recombine_points: %u is neither 0 (off) nor in 2 to %d", origin,
                              c->recombine_points, TRACK_MAX_CLUSTER);
    if ((unsigned)c->oversize > TRACK_OVERSIZE_SPLIT)
        return tusk_error_set(err, TUSK_EPARAM, "%s: oversize: unknown mode %d", origin, (int)c->oversize);
    if (!isfinite(c->fom_max))
        return tusk_error_set(err, TUSK_EPARAM, "%s: fom_max: %g is not finite", origin, c->fom_max);
    if (!(c->single_min_prob > 0.0 && c->single_min_prob <= 1.0))
        return tusk_error_set(err, TUSK_EPARAM, "%s: single_min_prob: %g is outside (0, 1]", origin,
                              c->single_min_prob);
    if (!(c->w0_mm >= 0.0 && c->w1_mm >= 0.0 && c->w0_mm + c->w1_mm > 0.0 && c->w0_mm < 1e3 && c->w1_mm < 1e3))
        return tusk_error_set(err, TUSK_EPARAM,
                              "%s: w0_mm, w1_mm: %g and %g mm: both must be in [0, 1000) and one above 0", origin,
                              c->w0_mm, c->w1_mm);
    if (!(c->inner_radius_mm >= 0.0 && c->inner_radius_mm < 1e5))
        return tusk_error_set(err, TUSK_EPARAM, "%s: inner_radius_mm: %g is outside [0, 100000) mm", origin,
                              c->inner_radius_mm);
    if (!(c->min_point_kev >= 0.0 && c->min_point_kev < 1e4))
        return tusk_error_set(err, TUSK_EPARAM, "%s: min_point_kev: %g is outside [0, 10000) keV", origin,
                              c->min_point_kev);
    return TUSK_OK;
}

/* ---- batches --------------------------------------------------------------------- */

track_batch_t *track_batch_new(void)
{
    return calloc(1, sizeof(track_batch_t));
}

void track_batch_destroy(track_batch_t **batch)
{
    if (!batch || !*batch)
        return;
    free((*batch)->ev);
    free((*batch)->pt);
    free((*batch)->g);
    free(*batch);
    *batch = NULL;
}

void track_batch_clear(track_batch_t *b)
{
    b->n_ev = b->n_pt = b->n_g = 0;
}

size_t track_batch_events(const track_batch_t *b)
{
    return b->n_ev;
}

size_t track_batch_points(const track_batch_t *b)
{
    return b->n_pt;
}

int track_batch_begin(track_batch_t *b, uint32_t event, uint64_t timestamp, tusk_error_t *err)
{
    if (tusk_grow(&b->ev, &b->ev_cap, b->n_ev + 1, sizeof *b->ev))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu events)", b->n_ev + 1);
    trk_event_t *e = &b->ev[b->n_ev++];
    memset(e, 0, sizeof *e);
    e->event = event;
    e->timestamp = timestamp;
    e->first = b->n_pt;
    return TUSK_OK;
}

int track_batch_add(track_batch_t *b, const track_point_t *p, tusk_error_t *err)
{
    if (b->n_ev == 0)
        return tusk_error_set(err, TUSK_EINVAL, "track_batch_add: no event begun");
    if (b->n_pt >= UINT32_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "more than %u points in a batch", (unsigned)UINT32_MAX);
    if (tusk_grow(&b->pt, &b->pt_cap, b->n_pt + 1, sizeof *b->pt))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu points)", b->n_pt + 1);
    b->pt[b->n_pt++] = *p;
    b->ev[b->n_ev - 1].n++;
    return TUSK_OK;
}

const track_point_t *track_batch_event_points(const track_batch_t *b, size_t i, size_t *n, uint32_t *event,
                                              uint64_t *timestamp)
{
    const trk_event_t *e = &b->ev[i];
    if (n)
        *n = e->n;
    if (event)
        *event = e->event;
    if (timestamp)
        *timestamp = e->timestamp;
    return b->pt + e->first;
}

void track_batch_result(const track_batch_t *b, size_t i, adf_tracked_t *out)
{
    const trk_event_t *e = &b->ev[i];
    out->n_gammas = (uint16_t)e->g_n;
    out->status = e->status;
    for (size_t k = 0; k < e->g_n; k++)
        out->gamma[k] = b->g[e->g_first + k];
}

/* ---- the tracker ------------------------------------------------------------------- */

static void make_table(track_t *t)
{
    t->setup.ln_e0 = log(TRK_TABLE_E_MIN);
    double step = (log(TRK_TABLE_E_MAX) - t->setup.ln_e0) / (TRK_TABLE_N - 1);
    t->setup.inv_step = 1.0 / step;
    const double per_mm = GEXS_DENSITY / 10.0; /* cm^2/g -> 1/mm */
    for (int i = 0; i < TRK_TABLE_N; i++) {
        gexs_mu_t mu;
        gexs_mass_attenuation(exp(t->setup.ln_e0 + i * step), &mu);
        t->mu[TRK_MU_TOTAL * TRK_TABLE_N + i] = log(mu.total * per_mm);
        t->mu[TRK_MU_COMPTON * TRK_TABLE_N + i] = log(mu.compton * per_mm);
        t->mu[TRK_MU_PHOTO * TRK_TABLE_N + i] = log(mu.photo * per_mm);
    }
    /* the least interaction term, ln mu_tot - ln mu_x, of any entry (and
     * so of any energy: the lookup interpolates between two entries) */
    t->gap_min = INFINITY;
    for (int i = 0; i < TRK_TABLE_N; i++) {
        const double lt = t->mu[TRK_MU_TOTAL * TRK_TABLE_N + i];
        t->gap_min = fmin(t->gap_min, fmin(lt - t->mu[TRK_MU_COMPTON * TRK_TABLE_N + i],
                                           lt - t->mu[TRK_MU_PHOTO * TRK_TABLE_N + i]));
    }
}

int track_new(track_t **out, const track_config_t *cfg, const array_t *array, tusk_error_t *err)
{
    *out = NULL;
    int st = track_config_check(cfg, "tracking", err);
    if (st)
        return st;
    track_t *t = calloc(1, sizeof *t);
    if (!t)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    t->cfg = *cfg;
    t->array = array;
    if (cfg->inner_radius_mm > 0.0) {
        t->setup.inner = cfg->inner_radius_mm;
    } else if (array) {
        double r = INFINITY;
        for (size_t i = 0; i < array_count(array); i++)
            r = fmin(r, array_place(array, i)->distance);
        t->setup.inner = r;
    } else {
        t->setup.inner = 235.0;
    }
    t->setup.w0 = cfg->w0_mm;
    t->setup.w1 = cfg->w1_mm;
    t->setup.mec2 = COMPTON_MEC2_KEV;
    make_table(t);
    if ((st = track_set_threads(t, 1, err))) {
        track_destroy(&t);
        return st;
    }
    *out = t;
    return TUSK_OK;
}

void track_destroy(track_t **tp)
{
    if (!tp || !*tp)
        return;
    track_t *t = *tp;
    trk_pipeline_free(t);
    free(t);
    *tp = NULL;
}

const track_config_t *track_config(const track_t *t)
{
    return &t->cfg;
}

double track_inner_radius(const track_t *t)
{
    return t->setup.inner;
}

void track_stats(const track_t *t, track_stats_t *s)
{
    *s = t->stats;
}

void track_stats_reset(track_t *t)
{
    memset(&t->stats, 0, sizeof t->stats);
}

size_t track_stats_format(const track_stats_t *s, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "%llu events, %llu points (%llu ignored), %llu clusters (%llu split, %llu merged), %llu orders; "
                     "%llu gammas accepted (%llu single, %llu in the second pass, %llu recombined; %.0f keV), %llu clusters "
                     "rejected in the first pass, %llu left unaccepted (%llu points, %.0f keV), %llu gammas "
                     "beyond a frame's %d",
                     (unsigned long long)s->events, (unsigned long long)s->points,
                     (unsigned long long)s->points_ignored, (unsigned long long)s->clusters,
                     (unsigned long long)s->splits, (unsigned long long)s->merged, (unsigned long long)s->permutations,
                     (unsigned long long)s->accepted, (unsigned long long)s->accepted_single,
                     (unsigned long long)s->accepted_second, (unsigned long long)s->accepted_recombined,
                     s->accepted_kev, (unsigned long long)s->rejected,
                     (unsigned long long)s->unaccepted, (unsigned long long)s->unaccepted_points, s->unaccepted_kev,
                     (unsigned long long)s->gammas_truncated, ADF_TRACKED_MAX_GAMMAS);
    return n < 0 ? 0 : (size_t)n;
}

/* ---- point extraction ------------------------------------------------------------------- */

/* The points tracking takes: a finite energy within +-MAX_POINT_KEV (100
 * MeV, far above any gamma ray a germanium array measures) at a finite
 * position within +-MAX_POINT_MM of the origin on every axis (10 m; an
 * array is well under a metre across), in the crystal's frame for psa
 * hits and the array's for truth points. Anything else is no measurement
 * but damage (a 3e38 keV hit once made a "track"): an error naming the
 * point, which track_frames_read prefixes with the frame. */
#define MAX_POINT_KEV 1e5
#define MAX_POINT_MM 1e4

/* Whether a point is one tracking takes; if not, what is wrong in why. */
static bool point_sane(const double pos[3], double energy, char *why, size_t n)
{
    if (!isfinite(energy) || !isfinite(pos[0]) || !isfinite(pos[1]) || !isfinite(pos[2])) {
        snprintf(why, n, "position (%g, %g, %g) mm or energy %g keV not finite", pos[0], pos[1], pos[2], energy);
        return false;
    }
    if (fabs(energy) > MAX_POINT_KEV) {
        snprintf(why, n, "energy %g keV is beyond +-%g keV", energy, MAX_POINT_KEV);
        return false;
    }
    if (fabs(pos[0]) > MAX_POINT_MM || fabs(pos[1]) > MAX_POINT_MM || fabs(pos[2]) > MAX_POINT_MM) {
        snprintf(why, n, "position (%g, %g, %g) mm is beyond +-%g mm", pos[0], pos[1], pos[2], MAX_POINT_MM);
        return false;
    }
    return true;
}

/* Add a point unless its energy is at or below min_point_kev. */
static int add_point(const track_t *t, const trk_sink_t *s, const double world[3], double energy, unsigned crystal,
                     int segment, tusk_error_t *err)
{
    if (!(energy > t->cfg.min_point_kev)) {
        (*s->ignored)++;
        return TUSK_OK;
    }
    if (s->no_event)
        return tusk_error_set(err, TUSK_EINVAL, "track_batch_add: no event begun");
    if (*s->n >= UINT32_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "more than %u points in a batch", (unsigned)UINT32_MAX);
    if (tusk_grow(s->pt, s->cap, *s->n + 1, sizeof **s->pt))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu points)", *s->n + 1);
    track_point_t p = {{(float)world[0], (float)world[1], (float)world[2]},
                       (float)energy,
                       (uint16_t)crystal,
                       (int16_t)segment};
    (*s->pt)[(*s->n)++] = p;
    if (s->ev_n)
        (*s->ev_n)++;
    return TUSK_OK;
}

int trk_psa_points(const track_t *t, const trk_sink_t *s, const adf_psa_t *psa, size_t n, tusk_error_t *err)
{
    if (!t->array)
        return tusk_error_set(err, TUSK_EINVAL, "psa points need the array geometry (setting 'array')");
    for (size_t r = 0; r < n; r++) {
        const adf_psa_t *p = &psa[r];
        int idx = array_index_of(t->array, p->crystal_id);
        if (idx < 0)
            return tusk_error_set(err, TUSK_EINVAL, "crystal %u is not in the array", (unsigned)p->crystal_id);
        for (unsigned h = 0; h < p->n_hits; h++) {
            const adf_psa_hit_t *hit = &p->hit[h];
            double local[3] = {hit->x, hit->y, hit->z}, world[3];
            char why[200];
            if (!point_sane(local, hit->energy, why, sizeof why))
                return tusk_error_set(err, TUSK_EINVAL, "crystal %u, hit %u: %s", (unsigned)p->crystal_id, h, why);
            array_to_world(t->array, (size_t)idx, local, world);
            int st = add_point(t, s, world, hit->energy, p->crystal_id, hit->segment, err);
            if (st)
                return st;
        }
    }
    return TUSK_OK;
}

int trk_truth_points(const track_t *t, trk_scratch_t *sc, const trk_sink_t *s, const adf_truth_t *truth,
                     bool segments, tusk_error_t *err)
{
    int st;
    for (unsigned i = 0; i < truth->n_points; i++) {
        const adf_truth_point_t *q = &truth->point[i];
        double w[3] = {q->world[0], q->world[1], q->world[2]};
        char why[200];
        if (!point_sane(w, q->energy, why, sizeof why))
            return tusk_error_set(err, TUSK_EINVAL, "truth point %u: %s", i, why);
    }
    if (!segments) {
        for (unsigned i = 0; i < truth->n_points; i++) {
            const adf_truth_point_t *q = &truth->point[i];
            double w[3] = {q->world[0], q->world[1], q->world[2]};
            if ((st = add_point(t, s, w, q->energy, q->crystal, q->segment, err)))
                return st;
        }
        return TUSK_OK;
    }
    /* Energy-weighted centroids per (crystal, segment), in order of first
     * appearance: crystal, segment, E, E x, E y, E z. */
    if (tusk_grow(&sc->merge, &sc->merge_cap, (size_t)truth->n_points * 6 + 6, sizeof *sc->merge))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    double *merge = sc->merge;
    size_t ng = 0;
    for (unsigned i = 0; i < truth->n_points; i++) {
        const adf_truth_point_t *q = &truth->point[i];
        size_t g = 0;
        while (g < ng && !(merge[6 * g] == q->crystal && merge[6 * g + 1] == q->segment))
            g++;
        double *m = merge + 6 * g;
        if (g == ng) {
            ng++;
            m[0] = q->crystal;
            m[1] = q->segment;
            m[2] = m[3] = m[4] = m[5] = 0.0;
        }
        double e = q->energy > 0.0f ? q->energy : 0.0;
        m[2] += e;
        for (int k = 0; k < 3; k++)
            m[3 + k] += e * q->world[k];
    }
    for (size_t g = 0; g < ng; g++) {
        const double *m = merge + 6 * g;
        double w[3] = {0.0, 0.0, 0.0};
        if (m[2] > 0.0)
            for (int k = 0; k < 3; k++)
                w[k] = m[3 + k] / m[2];
        if ((st = add_point(t, s, w, m[2], (unsigned)m[0], (int)m[1], err)))
            return st;
    }
    return TUSK_OK;
}

/* The batch's list, its last event (if any) and t's count of the ignored. */
static trk_sink_t batch_sink(track_t *t, track_batch_t *b)
{
    trk_sink_t s = {&b->pt, &b->n_pt, &b->pt_cap, b->n_ev ? &b->ev[b->n_ev - 1].n : NULL, &t->stats.points_ignored,
                    b->n_ev == 0};
    return s;
}

int track_add_psa(track_t *t, track_batch_t *b, const adf_psa_t *psa, size_t n, tusk_error_t *err)
{
    trk_sink_t s = batch_sink(t, b);
    return trk_psa_points(t, &s, psa, n, err);
}

int track_add_truth(track_t *t, track_batch_t *b, const adf_truth_t *truth, bool segments, tusk_error_t *err)
{
    trk_sink_t s = batch_sink(t, b);
    return trk_truth_points(t, &t->scratch[0], &s, truth, segments, err);
}

/* ---- the figure of merit ----------------------------------------------------------------- */

/* The formulas are track_shared.h's (in double here, in float in the
 * kernel); the search keeps the distances of a cluster's points. */

typedef struct geo {
    trk_geo_t g;
    double dist[TRACK_MAX_CLUSTER][TRACK_MAX_CLUSTER];
} geo_t;

void trk_geo_points(const track_t *t, const track_point_t *pts, unsigned n, trk_geo_t *g)
{
    g->n = 0;
    g->e0 = 0.0;
    for (unsigned i = 0; i < n; i++)
        trk_geo_add(g, &t->setup, pts[i].pos[0], pts[i].pos[1], pts[i].pos[2], pts[i].energy);
}

static void geo_init(const track_t *t, const track_point_t *pts, unsigned n, geo_t *g)
{
    trk_geo_points(t, pts, n, &g->g);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            g->dist[i][j] = trk_dist(&g->g, &t->setup, i, j);
}

double trk_fom_points(const track_t *t, const track_point_t *pts, const unsigned *perm, unsigned n)
{
    trk_geo_t g;
    trk_geo_points(t, pts, n, &g);
    return trk_fom_of(&g, t->mu, &t->setup, perm);
}

double track_fom(const track_t *t, const track_point_t *points, const unsigned *perm, unsigned n)
{
    if (n < 1 || n > TRACK_MAX_CLUSTER)
        return INFINITY;
    return trk_fom_points(t, points, perm, n);
}

void track_perm_of_rank(unsigned n, uint32_t rank, unsigned *perm)
{
    trk_perm_of_rank(n, rank, perm);
}

uint32_t track_rank_of_perm(unsigned n, const unsigned *perm)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned smaller = 0;
        for (unsigned j = i + 1; j < n; j++)
            smaller += perm[j] < perm[i];
        r += smaller * trk_factorial(n - 1 - i);
    }
    return r;
}

/* Depth-first over the orders in lexicographic order, the terms summed
 * as trk_fom_of sums them (so the values are the same to the bit); the
 * first strictly lowest wins, which is the lowest rank among equals. */
typedef struct search {
    const track_t *t;
    const geo_t *g;
    unsigned perm[TRACK_MAX_CLUSTER], best_perm[TRACK_MAX_CLUSTER];
    double best;
    uint64_t orders;
} search_t;

static void dfs(search_t *s, unsigned k, unsigned used, double L, double e, double e_prev)
{
    const geo_t *g = s->g;
    unsigned n = g->g.n;
    for (unsigned i = 0; i < n; i++) {
        if (used & (1u << i))
            continue;
        const int v = k ? (int)s->perm[k - 1] : -1;
        const double d = v < 0 ? g->g.depth[i] : g->dist[v][i];
        double L2 = trk_fom_add(L, &g->g, s->t->mu, &s->t->setup, k >= 2 ? (int)s->perm[k - 2] : -1, v, i,
                                k == n - 1, d, e, e_prev);
        s->perm[k] = i;
        if (k == n - 1) {
            s->orders++;
            double f = trk_fom_end(L2, n);
            if (f < s->best) {
                s->best = f;
                memcpy(s->best_perm, s->perm, n * sizeof *s->perm);
            }
        } else {
            dfs(s, k + 1, used | (1u << i), L2, e - g->g.e[i], e);
        }
    }
}

double trk_search(const track_t *t, const track_point_t *points, unsigned n, unsigned *best_perm, uint64_t *orders)
{
    geo_t g;
    geo_init(t, points, n, &g);
    search_t s;
    s.t = t;
    s.g = &g;
    s.best = INFINITY;
    s.orders = 0;
    for (unsigned i = 0; i < n; i++)
        s.best_perm[i] = i;
    dfs(&s, 0, 0, 0.0, g.g.e0, 0.0);
    memcpy(best_perm, s.best_perm, n * sizeof *best_perm);
    if (orders)
        *orders = s.orders;
    return s.best;
}

double track_best_order(const track_t *t, const track_point_t *points, unsigned n, unsigned *best_perm,
                        uint64_t *orders)
{
    if (orders)
        *orders = 0;
    if (n < 1 || n > TRACK_MAX_CLUSTER)
        return INFINITY;
    return trk_search(t, points, n, best_perm, orders);
}

/* ---- one event ------------------------------------------------------------------------------ */

int track_event(track_t *t, const track_point_t *points, size_t n, adf_tracked_t *out, tusk_error_t *err)
{
    track_batch_t *b = track_batch_new();
    if (!b)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int st = track_batch_begin(b, 0, 0, err);
    for (size_t i = 0; i < n && !st; i++)
        st = track_batch_add(b, &points[i], err);
    if (!st)
        st = track_run(t, b, err);
    if (!st)
        track_batch_result(b, 0, out);
    track_batch_destroy(&b);
    return st;
}
