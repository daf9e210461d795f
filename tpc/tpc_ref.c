/* tpc_ref.c - the reference backend: step 0, then steps I-VI slice after
 * slice on one thread (tusk/tpc.h; the steps are tpc_slice.c's). */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tpc_private.h"

struct tpc_ref {
    tpc_config_t cfg;
    tpc_params_t p;
    tpc_data_t data;
    tpc_cpu_arrays_t arrays;
    tpc_work_t w;
    tpc_times_t t;
};

int tpc_ref_new(tpc_ref_t **out, const tpc_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = tpc_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    tpc_ref_t *r = calloc(1, sizeof *r);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    r->cfg = *cfg;
    tpc_params_of(cfg, &r->p);
    *out = r;
    return TUSK_OK;
}

void tpc_ref_destroy(tpc_ref_t **ref)
{
    if (!ref || !*ref)
        return;
    tpc_data_free(&(*ref)->data);
    tpc_cpu_arrays_free(&(*ref)->arrays);
    tpc_work_free(&(*ref)->w);
    free(*ref);
    *ref = NULL;
}

void tpc_ref_times(const tpc_ref_t *r, tpc_times_t *t)
{
    *t = r->t;
}

int tpc_ref_run(tpc_ref_t *r, const tpc_batch_t *b, tpc_result_t *res, tusk_error_t *err)
{
    double t0 = tusk_clock_s();
    memset(&r->t, 0, sizeof r->t);
    size_t n = tpc_batch_count(b);
    int st = tpc_result_reset(res, n, 1, err);
    if (st != TUSK_OK || n == 0)
        return st;
    if ((st = tpc_data_plan(&r->data, b, r->cfg.min_bin_mm, NULL, err)) ||
        (st = tpc_data_fill(&r->data, NULL, NULL, NULL, NULL, err)))
        return st;
    if (tpc_cpu_arrays_room(&r->arrays, r->data.n_clusters) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%llu clusters)",
                              (unsigned long long)r->data.n_clusters);
    double t1 = tusk_clock_s();
    tpc_work_t *w = &r->w;
    w->t_nf = w->t_nc = w->t_sh = w->t_tc = w->t_ts = w->t_out = 0;
    for (size_t s = 0; s < n; s++) {
        res->sl[s].chunk = 0;
        if ((st = tpc_cpu_slice(w, &r->data, &r->arrays, s, &r->p, b, &res->chunk[0], &res->sl[s], err)) != TUSK_OK)
            return st;
    }
    r->t.init = (t1 - t0) * 1e3;
    r->t.neighbours = w->t_nf * 1e3;
    r->t.clean = w->t_nc * 1e3;
    r->t.start = w->t_sh * 1e3;
    r->t.construct = w->t_tc * 1e3;
    r->t.select = w->t_ts * 1e3;
    r->t.output = w->t_out * 1e3;
    r->t.total = (tusk_clock_s() - t0) * 1e3;
    return TUSK_OK;
}
