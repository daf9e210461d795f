/* ut_cpu.c - the reference (one thread, events in sequence) and the fast
 * backend (the same code on a pool of threads, base/pool.h, an event a
 * thread at a time), both on ut_event.c. A batch is decoded into one SoA
 * of hits (kept, so that Compass can run again on it alone: the
 * benchmark's "Compass alone"); each event's tracks go to its own slots of
 * the result, so the threads never share a write and the result does not
 * depend on their number. */
#include <stdlib.h>
#include <string.h>

#include "ut_private.h"

int ut_cpu_init(ut_cpu_t *c, const ut_config_t *cfg, tusk_error_t *err)
{
    memset(c, 0, sizeof *c);
    int st = ut_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    if ((st = ut_geometry_new(&c->geo, &cfg->geo, err)) != TUSK_OK)
        return st;
    c->cfg = *cfg;
    ut_params_of(cfg, c->geo, &c->p, c->planes);
    ut_sectors_of(cfg, c->geo, c->sectors);
    return TUSK_OK;
}

void ut_cpu_free(ut_cpu_t *c)
{
    ut_geometry_destroy(&c->geo);
    ut_hits_free(&c->hits);
}

int ut_cpu_begin(ut_cpu_t *c, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err)
{
    if (stages < UT_DECODE || stages > UT_ALL)
        return tusk_error_set(err, TUSK_EINVAL, "UT: stages %d, expected 1 (decode), 2 (Compass) or 3 (both)", stages);
    if (!(stages & UT_DECODE) && (c->decoded != b || c->decoded_hits != ut_batch_hits(b)))
        return tusk_error_set(err, TUSK_EINVAL, "UT: Compass alone needs the decoding of the same batch first");
    int st = ut_result_reset(res, b, err);
    if (st == TUSK_OK && (stages & UT_DECODE)) {
        c->decoded = NULL;
        st = ut_hits_room(&c->hits, b, c->p.n_groups, err);
    }
    return st;
}

int ut_cpu_end(ut_cpu_t *c, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err)
{
    if (stages & UT_DECODE) {
        c->decoded = b;
        c->decoded_hits = ut_batch_hits(b);
    }
    return ut_result_set_hits(res, b, &c->hits, err);
}

/* ---- reference ---- */

struct ut_ref {
    ut_cpu_t c;
    ut_work_t w;
};

int ut_ref_new(ut_ref_t **out, const ut_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    ut_ref_t *r = calloc(1, sizeof *r);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int st = ut_cpu_init(&r->c, cfg, err);
    if (st != TUSK_OK) {
        free(r);
        return st;
    }
    *out = r;
    return TUSK_OK;
}

void ut_ref_destroy(ut_ref_t **ref)
{
    if (!ref || !*ref)
        return;
    ut_cpu_free(&(*ref)->c);
    ut_work_free(&(*ref)->w);
    free(*ref);
    *ref = NULL;
}

int ut_ref_run_stages(ut_ref_t *r, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err)
{
    ut_cpu_t *c = &r->c;
    int st = ut_cpu_begin(c, b, stages, res, err);
    if (st != TUSK_OK)
        return st;
    for (size_t i = 0; i < b->n; i++) {
        if ((stages & UT_DECODE) && ut_decode_event(&r->w, c->sectors, c->p.n_groups, b, i, &c->hits) != TUSK_OK)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (event %u, %u hits)", (unsigned)b->number[i],
                                  (unsigned)b->ev[i].n_hits);
        if (stages & UT_COMPASS)
            ut_compass_event(&c->p, c->planes, c->geo->group_u_lo, b, i, &c->hits, res);
    }
    return ut_cpu_end(c, b, stages, res, err);
}

int ut_ref_run(ut_ref_t *r, const ut_batch_t *b, ut_result_t *res, tusk_error_t *err)
{
    return ut_ref_run_stages(r, b, UT_ALL, res, err);
}

/* ---- fast ---- */

struct ut_fast {
    ut_cpu_t c;
    tusk_pool_t *pool;
    ut_work_t *w;             /* one a thread */
    unsigned threads;
    /* the run in progress */
    const ut_batch_t *batch;
    ut_result_t *res;
    int stages;
    size_t failed;            /* the lowest event that ran out of memory, SIZE_MAX none */
};

int ut_fast_new(ut_fast_t **out, const ut_config_t *cfg, unsigned threads, tusk_error_t *err)
{
    *out = NULL;
    ut_fast_t *f = calloc(1, sizeof *f);
    if (!f)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int st = ut_cpu_init(&f->c, cfg, err);
    if (st == TUSK_OK)
        st = tusk_pool_new(&f->pool, threads, err);
    if (st == TUSK_OK) {
        f->threads = tusk_pool_threads(f->pool);
        if (!(f->w = calloc(f->threads, sizeof *f->w)))
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    if (st != TUSK_OK) {
        ut_fast_destroy(&f);
        return st;
    }
    *out = f;
    return TUSK_OK;
}

void ut_fast_destroy(ut_fast_t **fast)
{
    if (!fast || !*fast)
        return;
    ut_fast_t *f = *fast;
    tusk_pool_destroy(&f->pool);
    for (unsigned t = 0; f->w && t < f->threads; t++)
        ut_work_free(&f->w[t]);
    free(f->w);
    ut_cpu_free(&f->c);
    free(f);
    *fast = NULL;
}

unsigned ut_fast_threads(const ut_fast_t *f)
{
    return f->threads;
}

static void one(void *ctx, size_t i, unsigned thread)
{
    ut_fast_t *f = ctx;
    ut_cpu_t *c = &f->c;
    if ((f->stages & UT_DECODE) &&
        ut_decode_event(&f->w[thread], c->sectors, c->p.n_groups, f->batch, i, &c->hits) != TUSK_OK) {
        /* the lowest failing event is reported; a race only picks among failures */
        size_t seen = __atomic_load_n(&f->failed, __ATOMIC_RELAXED);
        while (i < seen &&
               !__atomic_compare_exchange_n(&f->failed, &seen, i, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
        return;
    }
    if (f->stages & UT_COMPASS)
        ut_compass_event(&c->p, c->planes, c->geo->group_u_lo, f->batch, i, &c->hits, f->res);
}

int ut_fast_run_stages(ut_fast_t *f, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err)
{
    int st = ut_cpu_begin(&f->c, b, stages, res, err);
    if (st != TUSK_OK)
        return st;
    f->batch = b;
    f->res = res;
    f->stages = stages;
    f->failed = SIZE_MAX;
    tusk_pool_run(f->pool, b->n, one, f);
    if (f->failed != SIZE_MAX)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (event %u, %u hits)", (unsigned)b->number[f->failed],
                              (unsigned)b->ev[f->failed].n_hits);
    return ut_cpu_end(&f->c, b, stages, res, err);
}

int ut_fast_run(ut_fast_t *f, const ut_batch_t *b, ut_result_t *res, tusk_error_t *err)
{
    return ut_fast_run_stages(f, b, UT_ALL, res, err);
}
