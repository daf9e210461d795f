/* tpc_fast.c - the fast backend: step 0 and steps I-VI on a pool of
 * threads (base/pool.h), a slice a thread at a time (the thesis's OpenMP
 * over slices, seed §4.1), each thread writing into a chunk of the result
 * of its own. The tracks are the reference's, bit for bit: the same
 * functions on the same data (tpc_slice.c). */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tpc_private.h"

struct tpc_fast {
    tpc_config_t cfg;
    tpc_params_t p;
    tusk_pool_t *pool;
    tpc_work_t *w;            /* one a thread */
    unsigned threads;
    tpc_data_t data;
    tpc_cpu_arrays_t arrays;
    tpc_times_t t;
    /* the run in progress */
    const tpc_batch_t *batch;
    tpc_result_t *res;
    int *status;
    tusk_error_t *errs;
    size_t cap_status;
};

int tpc_fast_new(tpc_fast_t **out, const tpc_config_t *cfg, unsigned threads, tusk_error_t *err)
{
    *out = NULL;
    int st = tpc_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    tpc_fast_t *f = calloc(1, sizeof *f);
    if (!f)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    f->cfg = *cfg;
    tpc_params_of(cfg, &f->p);
    if ((st = tusk_pool_new(&f->pool, threads, err)) != TUSK_OK) {
        free(f);
        return st;
    }
    f->threads = tusk_pool_threads(f->pool);
    if (!(f->w = calloc(f->threads, sizeof *f->w))) {
        tusk_pool_destroy(&f->pool);
        free(f);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    *out = f;
    return TUSK_OK;
}

void tpc_fast_destroy(tpc_fast_t **fast)
{
    if (!fast || !*fast)
        return;
    tpc_fast_t *f = *fast;
    tusk_pool_destroy(&f->pool);
    for (unsigned t = 0; t < f->threads; t++)
        tpc_work_free(&f->w[t]);
    free(f->w);
    tpc_data_free(&f->data);
    tpc_cpu_arrays_free(&f->arrays);
    free(f->status);
    free(f->errs);
    free(f);
    *fast = NULL;
}

unsigned tpc_fast_threads(const tpc_fast_t *f)
{
    return f->threads;
}

void tpc_fast_times(const tpc_fast_t *f, tpc_times_t *t)
{
    *t = f->t;
}

static void one(void *ctx, size_t s, unsigned thread)
{
    tpc_fast_t *f = ctx;
    tpc_slice_res_t *r = &f->res->sl[s];
    r->chunk = thread;
    f->status[s] = tpc_cpu_slice(&f->w[thread], &f->data, &f->arrays, s, &f->p, f->batch, &f->res->chunk[thread], r,
                                 &f->errs[s]);
}

int tpc_fast_run(tpc_fast_t *f, const tpc_batch_t *b, tpc_result_t *res, tusk_error_t *err)
{
    double t0 = tusk_clock_s();
    memset(&f->t, 0, sizeof f->t);
    size_t n = tpc_batch_count(b);
    int st = tpc_result_reset(res, n, f->threads, err);
    if (st != TUSK_OK || n == 0)
        return st;
    if (n > f->cap_status) {
        free(f->status);
        free(f->errs);
        f->status = calloc(n, sizeof *f->status);
        f->errs = calloc(n, sizeof *f->errs);
        f->cap_status = f->status && f->errs ? n : 0;
        if (!f->cap_status)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    if ((st = tpc_data_plan(&f->data, b, f->cfg.min_bin_mm, f->pool, err)) ||
        (st = tpc_data_fill(&f->data, NULL, NULL, NULL, f->pool, err)))
        return st;
    if (tpc_cpu_arrays_room(&f->arrays, f->data.n_clusters) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%llu clusters)",
                              (unsigned long long)f->data.n_clusters);
    double t1 = tusk_clock_s();
    for (unsigned t = 0; t < f->threads; t++)
        f->w[t].t_nf = f->w[t].t_nc = f->w[t].t_sh = f->w[t].t_tc = f->w[t].t_ts = f->w[t].t_out = 0;
    f->batch = b;
    f->res = res;
    tusk_pool_run(f->pool, n, one, f);
    /* the lowest failing slice is reported */
    for (size_t s = 0; s < n; s++)
        if (f->status[s] != TUSK_OK)
            return tusk_error_set(err, f->status[s], "%s", f->errs[s].message);
    f->t.init = (t1 - t0) * 1e3;
    for (unsigned t = 0; t < f->threads; t++) {
        f->t.neighbours += f->w[t].t_nf * 1e3;
        f->t.clean += f->w[t].t_nc * 1e3;
        f->t.start += f->w[t].t_sh * 1e3;
        f->t.construct += f->w[t].t_tc * 1e3;
        f->t.select += f->w[t].t_ts * 1e3;
        f->t.output += f->w[t].t_out * 1e3;
    }
    f->t.total = (tusk_clock_s() - t0) * 1e3;
    return TUSK_OK;
}
