/* generate.c - the basis generator: fields, then traces of every point on
 * worker threads, added to the basis in a fixed order so that a given
 * configuration always gives the same file. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "progress.h"
#include "tusk/field.h"
#include "tusk/generate.h"
#include "tusk/signal.h"
#include "tusk/weighting.h"

/* Points computed per round before they are added to the basis. */
#define CHUNK 2048

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


typedef struct work {
    const det_signals_t *signals;
    const double *points; /* 3 per point of this chunk */
    size_t n;
    unsigned per_point;   /* electrodes * samples */
    float *traces;        /* n * per_point */
    int *incomplete;      /* n flags */
    pthread_mutex_t lock;
    size_t next;
    int status;
    tusk_error_t err;
} work_t;

static void *worker(void *arg)
{
    work_t *w = arg;
    det_path_t paths[2];
    memset(paths, 0, sizeof paths);
    for (;;) {
        pthread_mutex_lock(&w->lock);
        size_t i = w->status == TUSK_OK ? w->next++ : w->n;
        pthread_mutex_unlock(&w->lock);
        if (i >= w->n)
            break;
        det_signal_info_t info;
        tusk_error_t err;
        int st = det_signals_compute(w->signals, w->points + 3 * i, w->traces + i * w->per_point, &info, paths, &err);
        w->incomplete[i] = info.end[0] != DET_DRIFT_COLLECTED || info.end[1] != DET_DRIFT_COLLECTED;
        if (st) {
            pthread_mutex_lock(&w->lock);
            if (w->status == TUSK_OK) {
                w->status = st;
                w->err = err;
            }
            pthread_mutex_unlock(&w->lock);
        }
    }
    det_path_free(&paths[0]);
    det_path_free(&paths[1]);
    return NULL;
}

/* Run the chunk on `threads` threads (this one included). */
static int run_chunk(work_t *w, unsigned threads, tusk_error_t *err)
{
    pthread_t tid[64];
    unsigned started = 0;
    w->next = 0;
    for (unsigned t = 1; t < threads && t < 64; t++)
        if (pthread_create(&tid[started], NULL, worker, w) == 0)
            started++;
    worker(w);
    for (unsigned t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    if (w->status && err)
        *err = w->err;
    return w->status;
}

/* The basis points: half-step offset grid inside the germanium. */
static int basis_points(const det_crystal_t *c, double g, double **out, size_t *count, tusk_error_t *err)
{
    const det_config_t *cfg = det_crystal_config(c);
    long nr = (long)ceil(cfg->radius / g), nz = (long)ceil(cfg->length / g);
    size_t cap = 1024, n = 0;
    double *pts = malloc(cap * 3 * sizeof *pts);
    if (!pts)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    for (long k = 0; k < nz; k++)
        for (long j = -nr; j < nr; j++)
            for (long i = -nr; i < nr; i++) {
                double x = (i + 0.5) * g, y = (j + 0.5) * g, z = (k + 0.5) * g;
                if (!det_crystal_inside(c, x, y, z))
                    continue;
                if (n == cap) {
                    double *p = realloc(pts, 2 * cap * 3 * sizeof *p);
                    if (!p) {
                        free(pts);
                        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
                    }
                    pts = p;
                    cap *= 2;
                }
                pts[3 * n] = x;
                pts[3 * n + 1] = y;
                pts[3 * n + 2] = z;
                n++;
            }
    *out = pts;
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

    det_crystal_t *crystal = NULL;
    det_field_t *potential = NULL;
    det_weighting_t *weighting = NULL;
    det_signals_t *signals = NULL;
    det_basis_t *basis = NULL;
    double *points = NULL;
    work_t w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.lock, NULL);
    det_solve_options_t solve;
    memset(&solve, 0, sizeof solve);
    solve.progress = o->progress;
    solve.user = o->user;

    int st = det_crystal_new(&crystal, cfg, err);
    double t0 = now_s();
    if (!st) {
        det_progress(o->progress, o->user, "electric potential: Poisson, bias %.0f V, impurity %.2f..%.2f e10/cm3, grid %.2f mm", cfg->bias,
            cfg->impurity_front, cfg->impurity_back, cfg->field_grid);
        st = det_field_solve_potential(&potential, crystal, cfg->field_grid, &solve, err);
    }
    /* An undepleted crystal has no field in part of its volume: refuse. */
    if (!st)
        st = det_field_check_depletion(potential, cfg->bias, 0.0, err);
    s->potential_s = now_s() - t0;
    t0 = now_s();
    if (!st) {
        det_progress(o->progress, o->user, "weighting potentials: Laplace, %s, %u thread%s", cfg->symmetry ? "one sector rotated" : "every electrode",
            threads, threads == 1 ? "" : "s");
        st = det_weighting_new(&weighting, crystal, cfg->field_grid, &solve, threads, err);
    }
    if (!st)
        s->fields_solved = det_weighting_solved(weighting);
    s->weighting_s = now_s() - t0;
    t0 = now_s();
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
        if (!w.traces || !w.incomplete)
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        det_progress(o->progress, o->user, "signals: %zu basis points on a %.2f mm grid, %u samples of %.1f ns, %u threads", npoints,
            cfg->basis_grid, cfg->samples, cfg->sample_ns, threads);
    }
    double last_report = now_s();
    for (size_t first = 0; !st && first < npoints; first += CHUNK) {
        w.points = points + 3 * first;
        w.n = npoints - first < CHUNK ? npoints - first : CHUNK;
        st = run_chunk(&w, threads, err);
        for (size_t i = 0; !st && i < w.n; i++) {
            const double *p = w.points + 3 * i;
            float pos[3] = {(float)p[0], (float)p[1], (float)p[2]};
            int seg = det_crystal_segment_of(crystal, p[0], p[1], p[2]);
            s->incomplete += (size_t)w.incomplete[i];
            st = det_basis_add(basis, (unsigned)seg, pos, w.traces + i * w.per_point, err);
        }
        size_t done = first + w.n;
        double t = now_s();
        if (!st && (t - last_report > 5.0 || done == npoints)) {
            double rate = (double)done / (t - t0);
            det_progress(o->progress, o->user, "signals: %zu of %zu points (%.0f %%), %.0f points/s, %.0f s left", done, npoints,
                100.0 * (double)done / (double)npoints, rate, (double)(npoints - done) / rate);
            last_report = t;
        }
    }
    s->signals_s = now_s() - t0;
    s->points = npoints;
    if (!st && s->incomplete)
        det_progress(o->progress, o->user, "note: %zu of %zu points have a carrier that did not reach a contact (passivated surface, "
               "no field or longer than the drift limit); their traces end below 1",
            s->incomplete, npoints);
    free(cfgtext);
    free(points);
    free(w.traces);
    free(w.incomplete);
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
