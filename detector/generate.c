/* generate.c - the basis generator: fields, then traces of every point on
 * worker threads, added to the basis in a fixed order so that a given
 * configuration always gives the same file. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "progress.h"
#include "tusk/field.h"
#include "detector/generate.h"
#include "tusk/signal.h"
#include "tusk/weighting.h"
#include "base/clock.h"
#include "base/grow.h"
#include "base/pool.h"

/* Points computed per round before they are added to the basis. */
#define CHUNK 2048

typedef struct work {
    const det_signals_t *signals;
    const double *points; /* 3 per point of this chunk */
    size_t n;
    unsigned per_point;   /* electrodes * samples */
    float *traces;        /* n * per_point */
    int *incomplete;      /* n flags */
    int *collected;       /* n: the segment the holes reach, or -1 */
    det_path_t (*paths)[2]; /* drift paths, scratch of each pool thread */
    pthread_mutex_t lock;
    int status;
    tusk_error_t err;
} work_t;

/* One point; after a failure the points left are skipped. */
static void compute(void *ctx, size_t i, unsigned thread)
{
    work_t *w = ctx;
    pthread_mutex_lock(&w->lock);
    bool failed = w->status != TUSK_OK;
    pthread_mutex_unlock(&w->lock);
    if (failed)
        return;
    det_signal_info_t info;
    tusk_error_t err;
    int st = det_signals_compute(w->signals, w->points + 3 * i, w->traces + i * w->per_point, &info, w->paths[thread],
                                 &err);
    w->incomplete[i] = info.end[0] != DET_DRIFT_COLLECTED || info.end[1] != DET_DRIFT_COLLECTED;
    w->collected[i] = st ? -1 : info.collected;
    if (st) {
        pthread_mutex_lock(&w->lock);
        if (w->status == TUSK_OK) {
            w->status = st;
            w->err = err;
        }
        pthread_mutex_unlock(&w->lock);
    }
}

/* Run the chunk on the pool (this thread included). */
static int run_chunk(work_t *w, tusk_pool_t *pool, tusk_error_t *err)
{
    tusk_pool_run(pool, w->n, compute, w);
    if (w->status && err)
        *err = w->err;
    return w->status;
}

/* The basis points: half-step offset grid inside the germanium. */
static int basis_points(const det_crystal_t *c, double g, double **out, size_t *count, tusk_error_t *err)
{
    const det_config_t *cfg = det_crystal_config(c);
    long nr = (long)ceil(cfg->radius / g), nz = (long)ceil(cfg->length / g);
    size_t cap = 0, n = 0;
    double (*pts)[3] = NULL;
    for (long k = 0; k < nz; k++)
        for (long j = -nr; j < nr; j++)
            for (long i = -nr; i < nr; i++) {
                double x = (i + 0.5) * g, y = (j + 0.5) * g, z = (k + 0.5) * g;
                if (!det_crystal_inside(c, x, y, z))
                    continue;
                if (tusk_grow(&pts, &cap, n + 1, sizeof *pts) != 0) {
                    free(pts);
                    return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
                }
                pts[n][0] = x;
                pts[n][1] = y;
                pts[n][2] = z;
                n++;
            }
    *out = pts ? pts[0] : NULL;
    *count = n;
    return TUSK_OK;
}

int det_basis_generate(const det_config_t *cfg, const det_generate_options_t *options, det_basis_t **out,
                       det_generate_stats_t *stats, tusk_error_t *err)
{
    *out = NULL;
    det_generate_options_t none;
    memset(&none, 0, sizeof none);
    const det_generate_options_t *o = options ? options : &none;
    det_generate_stats_t local;
    det_generate_stats_t *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    unsigned threads = o->threads ? o->threads : 1;
    if (threads > 64)
        threads = 64;

    det_crystal_t *crystal = NULL;
    det_field_t *potential = NULL;
    det_weighting_t *weighting = NULL;
    det_signals_t *signals = NULL;
    det_basis_t *basis = NULL;
    double *points = NULL;
    tusk_pool_t *pool = NULL;
    work_t w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.lock, NULL);
    det_solve_options_t solve;
    memset(&solve, 0, sizeof solve);
    solve.progress = o->progress;
    solve.user = o->user;

    int st = det_crystal_new(&crystal, cfg, err);
    double t0 = tusk_clock_s();
    if (!st) {
        det_progress(o->progress, o->user, "electric potential: Poisson, bias %.0f V, impurity %.2f..%.2f e10/cm3, grid %.2f mm", cfg->bias,
            cfg->impurity_front, cfg->impurity_back, cfg->field_grid);
        st = det_field_solve_potential(&potential, crystal, cfg->field_grid, &solve, err);
    }
    /* An undepleted crystal has no field in part of its volume: refuse. */
    if (!st)
        st = det_field_check_depletion(potential, cfg->bias, 0.0, err);
    s->potential_s = tusk_clock_s() - t0;
    t0 = tusk_clock_s();
    if (!st) {
        det_progress(o->progress, o->user, "weighting potentials: Laplace, %s, %u thread%s", cfg->symmetry ? "one sector rotated" : "every electrode",
            threads, threads == 1 ? "" : "s");
        st = det_weighting_new(&weighting, crystal, cfg->field_grid, &solve, threads, err);
    }
    if (!st)
        s->fields_solved = det_weighting_solved(weighting);
    s->weighting_s = tusk_clock_s() - t0;
    t0 = tusk_clock_s();
    if (!st)
        st = det_signals_new(&signals, crystal, potential, weighting, NULL, err);
    size_t npoints = 0;
    if (!st)
        st = basis_points(crystal, cfg->basis_grid, &points, &npoints, err);
    char *cfgtext = NULL;
    if (!st) {
        size_t len = det_config_format(cfg, NULL, 0);
        cfgtext = malloc(len + 1);
        if (!cfgtext)
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        else
            det_config_format(cfg, cfgtext, len + 1);
    }
    unsigned electrodes = crystal ? det_crystal_electrodes(crystal) : 0;
    if (!st) {
        det_basis_shape_t shape;
        memset(&shape, 0, sizeof shape);
        shape.segments = det_crystal_segments(crystal);
        shape.channels = electrodes;
        shape.samples = cfg->samples;
        shape.sample_ns = cfg->sample_ns;
        shape.grid_mm = cfg->basis_grid;
        shape.config = cfgtext;
        shape.generator = PACKAGE_NAME "-basis " PACKAGE_VERSION;
        st = det_basis_new(&basis, &shape, err);
    }
    if (!st) {
        w.signals = signals;
        w.per_point = electrodes * cfg->samples;
        w.traces = malloc((size_t)CHUNK * w.per_point * sizeof *w.traces);
        w.incomplete = malloc(CHUNK * sizeof *w.incomplete);
        w.collected = malloc(CHUNK * sizeof *w.collected);
        w.paths = calloc(threads, sizeof *w.paths);
        if (!w.traces || !w.incomplete || !w.collected || !w.paths)
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        else
            st = tusk_pool_new(&pool, threads, err);
        det_progress(o->progress, o->user, "signals: %zu basis points on a %.2f mm grid, %u samples of %.1f ns, %u threads", npoints,
            cfg->basis_grid, cfg->samples, cfg->sample_ns, threads);
    }
    double last_report = tusk_clock_s();
    for (size_t first = 0; !st && first < npoints; first += CHUNK) {
        w.points = points + 3 * first;
        w.n = npoints - first < CHUNK ? npoints - first : CHUNK;
        st = run_chunk(&w, pool, err);
        for (size_t i = 0; !st && i < w.n; i++) {
            const double *p = w.points + 3 * i;
            float pos[3] = {(float)p[0], (float)p[1], (float)p[2]};
            /* Grouped by the segment that collects the charge; a point
             * whose holes reach no segment stays with its slab. */
            int slab = det_crystal_segment_of(crystal, p[0], p[1], p[2]);
            int seg = w.collected[i] >= 0 ? w.collected[i] : slab;
            s->incomplete += (size_t)w.incomplete[i];
            s->uncollected += w.collected[i] < 0;
            s->moved += seg != slab;
            st = det_basis_add_point(basis, (unsigned)seg, (unsigned)slab, pos, w.traces + i * w.per_point, err);
        }
        size_t done = first + w.n;
        double t = tusk_clock_s();
        if (!st && (t - last_report > 5.0 || done == npoints)) {
            double rate = (double)done / (t - t0);
            det_progress(o->progress, o->user, "signals: %zu of %zu points (%.0f %%), %.0f points/s, %.0f s left", done, npoints,
                100.0 * (double)done / (double)npoints, rate, (double)(npoints - done) / rate);
            last_report = t;
        }
    }
    s->signals_s = tusk_clock_s() - t0;
    s->points = npoints;
    if (!st && s->incomplete)
        det_progress(o->progress, o->user, "note: %zu of %zu points have a carrier that did not reach a contact (passivated surface, "
               "no field or longer than the drift limit); their traces end below 1",
            s->incomplete, npoints);
    free(cfgtext);
    free(points);
    tusk_pool_destroy(&pool);
    for (unsigned t = 0; w.paths && t < threads; t++) {
        det_path_free(&w.paths[t][0]);
        det_path_free(&w.paths[t][1]);
    }
    free(w.paths);
    free(w.traces);
    free(w.incomplete);
    free(w.collected);
    pthread_mutex_destroy(&w.lock);
    det_signals_destroy(&signals);
    det_weighting_destroy(&weighting);
    det_field_destroy(&potential);
    det_crystal_destroy(&crystal);
    if (st) {
        det_basis_destroy(&basis);
        return st;
    }
    *out = basis;
    return TUSK_OK;
}
