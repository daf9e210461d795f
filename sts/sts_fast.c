/* sts_fast.c - the fast backend: the parallel algorithm (sts_module.c)
 * on a pool of threads (base/pool.h), one module a thread at a time, each
 * thread writing into a chunk of the result of its own. The results are
 * those of the kernels, bit for bit (sts_shared.h). */
#include <stdlib.h>
#include <string.h>

#include "sts_private.h"

struct sts_fast {
    sts_params_t p;
    tusk_pool_t *pool;
    sts_work_t *w;            /* one a thread */
    unsigned threads;
    /* the run in progress */
    const sts_batch_t *batch;
    sts_result_t *res;
    size_t failed;            /* the lowest module that ran out of memory, SIZE_MAX none */
};

int sts_fast_new(sts_fast_t **out, const sts_config_t *cfg, unsigned threads, tusk_error_t *err)
{
    *out = NULL;
    int st = sts_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    sts_fast_t *f = calloc(1, sizeof *f);
    if (!f)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    sts_params_of(cfg, &f->p);
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

void sts_fast_destroy(sts_fast_t **fast)
{
    if (!fast || !*fast)
        return;
    sts_fast_t *f = *fast;
    tusk_pool_destroy(&f->pool);
    for (unsigned t = 0; t < f->threads; t++)
        sts_work_free(&f->w[t]);
    free(f->w);
    free(f);
    *fast = NULL;
}

unsigned sts_fast_threads(const sts_fast_t *f)
{
    return f->threads;
}

static void one(void *ctx, size_t i, unsigned thread)
{
    sts_fast_t *f = ctx;
    sts_module_t m;
    sts_batch_module(f->batch, i, &m);
    sts_mod_res_t *r = &f->res->mod[i];
    r->chunk = thread;
    if (sts_par_module(&f->w[thread], &f->p, &m, &f->res->chunk[thread], r) != TUSK_OK) {
        /* the lowest failing module is reported; a race only picks among failures */
        size_t seen = __atomic_load_n(&f->failed, __ATOMIC_RELAXED);
        while (i < seen && !__atomic_compare_exchange_n(&f->failed, &seen, i, false, __ATOMIC_RELAXED,
                                                        __ATOMIC_RELAXED))
            ;
    }
}

int sts_fast_run(sts_fast_t *f, const sts_batch_t *b, sts_result_t *res, tusk_error_t *err)
{
    size_t n = sts_batch_count(b);
    int st = sts_result_reset(res, n, f->threads, err);
    if (st != TUSK_OK)
        return st;
    f->batch = b;
    f->res = res;
    f->failed = SIZE_MAX;
    tusk_pool_run(f->pool, n, one, f);
    if (f->failed != SIZE_MAX) {
        sts_module_t m;
        sts_batch_module(b, f->failed, &m);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (timeslice %u, module %u, %u digis)",
                              (unsigned)m.timeslice, (unsigned)m.hdr.module, (unsigned)m.hdr.n_digis);
    }
    return TUSK_OK;
}
