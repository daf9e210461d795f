/* zf_fast.c - the fast backend: the reference's code on a pool of
 * threads, one RoI per thread at a time, each thread with its own lists
 * and histograms (tusk/zfinder.h). Results are those of the reference,
 * bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "zf_private.h"

struct zf_fast {
    zf_config_t cfg;
    tusk_pool_t *pool;
    zf_ref_work_t *work;      /* one per thread */
    unsigned threads;
};

typedef struct job {
    zf_fast_t *f;
    const zf_batch_t *b;
    zf_result_t *res;
    tusk_error_t *errs;       /* per thread: the error of its lowest failing RoI */
    size_t *err_roi;          /* per thread: that RoI, SIZE_MAX none */
} job_t;

int zf_fast_new(zf_fast_t **out, const zf_config_t *cfg, unsigned threads, tusk_error_t *err)
{
    *out = NULL;
    int st = zf_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    zf_fast_t *f = calloc(1, sizeof *f);
    if (!f)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    f->cfg = *cfg;
    if ((st = tusk_pool_new(&f->pool, threads, err)) != TUSK_OK) {
        free(f);
        return st;
    }
    f->threads = tusk_pool_threads(f->pool);
    if (!(f->work = calloc(f->threads, sizeof *f->work))) {
        zf_fast_destroy(&f);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    for (unsigned t = 0; t < f->threads; t++)
        if ((st = zf_ref_work_init(&f->work[t], cfg, err)) != TUSK_OK) {
            zf_fast_destroy(&f);
            return st;
        }
    *out = f;
    return TUSK_OK;
}

void zf_fast_destroy(zf_fast_t **fast)
{
    if (!fast || !*fast)
        return;
    zf_fast_t *f = *fast;
    tusk_pool_destroy(&f->pool);
    if (f->work)
        for (unsigned t = 0; t < f->threads; t++)
            zf_ref_work_free(&f->work[t]);
    free(f->work);
    free(f);
    *fast = NULL;
}

unsigned zf_fast_threads(const zf_fast_t *f)
{
    return f->threads;
}

static void one(void *ctx, size_t i, unsigned thread)
{
    job_t *j = ctx;
    zf_roi_t roi;
    zf_batch_roi(j->b, i, &roi);
    zf_result_t *res = &j->res[i];
    memset(res, 0, sizeof *res);
    tusk_error_t e;
    int st = j->f->cfg.precision == ZF_PREC_DOUBLE ? zf_ref_roi_d(&j->f->work[thread], &j->f->cfg, &roi, res, &e)
                                                   : zf_ref_roi_f(&j->f->work[thread], &j->f->cfg, &roi, res, &e);
    if (st != TUSK_OK && i < j->err_roi[thread]) {
        j->err_roi[thread] = i;
        j->errs[thread] = e;
    }
}

int zf_fast_run(zf_fast_t *f, const zf_batch_t *b, zf_result_t *res, tusk_error_t *err)
{
    job_t j = {f, b, res, calloc(f->threads, sizeof(tusk_error_t)), calloc(f->threads, sizeof(size_t))};
    if (!j.errs || !j.err_roi) {
        free(j.errs);
        free(j.err_roi);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    for (unsigned t = 0; t < f->threads; t++)
        j.err_roi[t] = SIZE_MAX;
    tusk_pool_run(f->pool, zf_batch_count(b), one, &j);
    size_t worst = SIZE_MAX;
    unsigned who = 0;
    for (unsigned t = 0; t < f->threads; t++)
        if (j.err_roi[t] < worst)
            worst = j.err_roi[t], who = t;
    int st = TUSK_OK;
    if (worst != SIZE_MAX) {
        st = j.errs[who].code;
        if (err)
            *err = j.errs[who];
    }
    free(j.errs);
    free(j.err_roi);
    return st;
}
