/* sts_ref.c - the reference backend: the thesis's original cluster
 * finder, then the cluster sort and hit finder, one module after the
 * other on one thread (tusk/sts.h; the finder is in sts_module.c). */
#include <stdlib.h>

#include "sts_private.h"

struct sts_ref {
    sts_params_t p;
    sts_work_t w;
};

int sts_ref_new(sts_ref_t **out, const sts_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = sts_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    sts_ref_t *r = calloc(1, sizeof *r);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    sts_params_of(cfg, &r->p);
    *out = r;
    return TUSK_OK;
}

void sts_ref_destroy(sts_ref_t **ref)
{
    if (!ref || !*ref)
        return;
    sts_work_free(&(*ref)->w);
    free(*ref);
    *ref = NULL;
}

int sts_ref_run(sts_ref_t *r, const sts_batch_t *b, sts_result_t *res, tusk_error_t *err)
{
    size_t n = sts_batch_count(b);
    int st = sts_result_reset(res, n, 1, err);
    if (st != TUSK_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        if (sts_orig_module(&r->w, &r->p, &m, &res->chunk[0], &res->mod[i]) != TUSK_OK)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (timeslice %u, module %u, %u digis)",
                                  (unsigned)m.timeslice, (unsigned)m.hdr.module, (unsigned)m.hdr.n_digis);
    }
    return TUSK_OK;
}
