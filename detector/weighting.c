/* weighting.c - all electrodes' weighting potentials, solved in parallel,
 * one sector standing for all when the crystal allows it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "progress.h"
#include "tusk/weighting.h"

struct det_weighting {
    const det_crystal_t *crystal;
    unsigned electrodes, sectors, rings, core;
    bool symmetric;
    unsigned nfields;
    det_field_t **fields; /* symmetric: ring r of sector 0 (segment r) at [r], core at [rings]; else by electrode */
};

/* One solve job per field, on a pool of threads (base/pool.h); after a
 * failure the jobs left are skipped. */
typedef struct job_queue {
    pthread_mutex_t lock;
    unsigned n;
    const unsigned *electrodes;
    det_field_t **fields;
    const det_crystal_t *crystal;
    double h;
    const det_solve_options_t *options;
    int status;
    tusk_error_t err;
    unsigned done;
    pthread_mutex_t progress_lock;
} job_queue_t;

/* The user's progress callback, one thread at a time. */
static void locked_progress(void *user, const char *line)
{
    job_queue_t *q = user;
    pthread_mutex_lock(&q->progress_lock);
    q->options->progress(q->options->user, line);
    pthread_mutex_unlock(&q->progress_lock);
}

static void solve_one(void *ctx, size_t item, unsigned thread)
{
    (void)thread;
    job_queue_t *q = ctx;
    unsigned i = (unsigned)item;
    pthread_mutex_lock(&q->lock);
    bool failed = q->status != TUSK_OK;
    pthread_mutex_unlock(&q->lock);
    if (failed)
        return;
    tusk_error_t err;
    det_field_t *f = NULL;
    /* One progress line per field (not per grid level): there are 37. */
    det_solve_options_t opt = *q->options;
    opt.progress = NULL;
    int st = det_field_solve_weighting(&f, q->crystal, q->electrodes[i], q->h, &opt, &err);
    pthread_mutex_lock(&q->lock);
    if (st && q->status == TUSK_OK) {
        q->status = st;
        q->err = err;
    }
    q->fields[i] = f;
    unsigned done = ++q->done;
    pthread_mutex_unlock(&q->lock);
    if (!st && q->options->progress) {
        unsigned sweeps;
        double change;
        char name[8];
        det_field_convergence(f, &sweeps, &change);
        det_progress(locked_progress, q, "weighting potential %u of %u (%s): %u sweeps at the finest level, max change %.1e",
                     done, q->n, det_crystal_electrode_name(q->crystal, q->electrodes[i], name, sizeof name), sweeps,
                     change);
    }
}

int det_weighting_new(det_weighting_t **out, const det_crystal_t *crystal, double h,
                      const det_solve_options_t *options, unsigned threads, tusk_error_t *err)
{
    *out = NULL;
    det_solve_options_t none;
    memset(&none, 0, sizeof none);
    if (!options)
        options = &none;
    det_weighting_t *w = calloc(1, sizeof *w);
    if (!w)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    const det_config_t *cfg = det_crystal_config(crystal);
    w->crystal = crystal;
    w->electrodes = det_crystal_electrodes(crystal);
    w->sectors = cfg->sectors;
    w->rings = cfg->rings;
    w->core = det_crystal_core(crystal);
    w->symmetric = cfg->symmetry && det_crystal_symmetric(crystal) && cfg->sectors > 1;
    w->nfields = w->symmetric ? w->rings + 1 : w->electrodes;
    w->fields = calloc(w->nfields, sizeof *w->fields);
    unsigned *which = calloc(w->nfields, sizeof *which);
    if (!w->fields || !which) {
        free(which);
        det_weighting_destroy(&w);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < w->nfields; i++)
        which[i] = w->symmetric ? (i < w->rings ? i : w->core) : i;

    job_queue_t q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.lock, NULL);
    pthread_mutex_init(&q.progress_lock, NULL);
    q.n = w->nfields;
    q.electrodes = which;
    q.fields = w->fields;
    q.crystal = crystal;
    q.h = h;
    q.options = options;
    if (threads < 1)
        threads = 1;
    if (threads > q.n)
        threads = q.n;
    if (threads > 64)
        threads = 64;
    tusk_pool_t *pool = NULL;
    q.status = tusk_pool_new(&pool, threads, &q.err);
    if (q.status == TUSK_OK)
        tusk_pool_run(pool, q.n, solve_one, &q); /* this thread works too */
    tusk_pool_destroy(&pool);
    pthread_mutex_destroy(&q.lock);
    pthread_mutex_destroy(&q.progress_lock);
    free(which);
    if (q.status) {
        det_weighting_destroy(&w);
        if (err)
            *err = q.err;
        return q.status;
    }
    *out = w;
    return TUSK_OK;
}

void det_weighting_destroy(det_weighting_t **wp)
{
    if (!wp || !*wp)
        return;
    det_weighting_t *w = *wp;
    for (unsigned i = 0; w->fields && i < w->nfields; i++)
        det_field_destroy(&w->fields[i]);
    free(w->fields);
    free(w);
    *wp = NULL;
}

unsigned det_weighting_solved(const det_weighting_t *w)
{
    return w->nfields;
}

const det_field_t *det_weighting_field(const det_weighting_t *w, unsigned e, int *steps)
{
    if (!w->symmetric || e == w->core) {
        *steps = 0;
        return w->fields[w->symmetric ? w->rings : e];
    }
    *steps = (int)(e / w->rings);
    return w->fields[e % w->rings];
}

double det_weighting_value(const det_weighting_t *w, unsigned e, double x, double y, double z)
{
    int steps;
    const det_field_t *f = det_weighting_field(w, e, &steps);
    /* Segment (r, s) at p is segment (r, 0) at p turned back by s sectors. */
    if (steps)
        det_crystal_rotate(w->crystal, -steps, &x, &y);
    return det_field_value(f, x, y, z);
}

void det_weighting_values(const det_weighting_t *w, double x, double y, double z, double *out)
{
    if (!w->symmetric) {
        for (unsigned e = 0; e < w->electrodes; e++)
            out[e] = det_field_value(w->fields[e], x, y, z);
        return;
    }
    for (unsigned s = 0; s < w->sectors; s++) {
        double rx = x, ry = y;
        det_crystal_rotate(w->crystal, -(int)s, &rx, &ry);
        for (unsigned r = 0; r < w->rings; r++)
            out[s * w->rings + r] = det_field_value(w->fields[r], rx, ry, z);
    }
    out[w->core] = det_field_value(w->fields[w->rings], x, y, z);
}
