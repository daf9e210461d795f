/* zf_ref.c - the reference z-finder, one thread (tusk/zfinder.h); the
 * algorithm itself is zf_ref_impl.h, read once per precision. */
#include <stdlib.h>
#include <string.h>

#include "zf_private.h"

struct zf_ref {
    zf_config_t cfg;
    zf_ref_work_t w;
};

int zf_ref_work_init(zf_ref_work_t *w, const zf_config_t *cfg, tusk_error_t *err)
{
    memset(w, 0, sizeof *w);
    int st = zf_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    zf_consts_of(cfg, &w->k);
    w->triplets = cfg->mode == ZF_TRIPLETS;
    w->second = cfg->second_vertex;
    w->nh = calloc(w->k.bins, sizeof *w->nh);
    w->zs = calloc(w->k.bins, sizeof *w->zs);
    if (!w->nh || !w->zs) {
        zf_ref_work_free(w);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (z-finder histograms)");
    }
    return TUSK_OK;
}

void zf_ref_work_free(zf_ref_work_t *w)
{
    free(w->first);
    free(w->inext);
    free(w->slice);
    free(w->phi_rel);
    free(w->g_rho);
    free(w->g_z);
    free(w->g_phi);
    free(w->g_layer);
    free(w->nh);
    free(w->zs);
    memset(w, 0, sizeof *w);
}

int zf_ref_work_room(zf_ref_work_t *w, size_t n, size_t s, tusk_error_t *err)
{
    if (s > w->lists_cap) {
        size_t cap = s + s / 4;
        uint32_t *f = realloc(w->first, cap * ZF_MAX_LAYERS * sizeof *f);
        if (!f)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (z-finder lists of %zu slices)", cap);
        w->first = f;
        /* new lists start empty; old ones are empty between RoIs */
        for (size_t i = w->lists_cap * ZF_MAX_LAYERS; i < cap * ZF_MAX_LAYERS; i++)
            f[i] = ZF_NONE;
        w->lists_cap = cap;
    }
    if (n > w->points_cap) {
        size_t cap = n + n / 4 + 16;
        uint32_t *in = realloc(w->inext, cap * sizeof *in);
        if (in)
            w->inext = in;
        int32_t *sl = realloc(w->slice, cap * sizeof *sl);
        if (sl)
            w->slice = sl;
        float *pr = realloc(w->phi_rel, cap * sizeof *pr);
        if (pr)
            w->phi_rel = pr;
        float *gr = realloc(w->g_rho, cap * sizeof *gr);
        if (gr)
            w->g_rho = gr;
        float *gz = realloc(w->g_z, cap * sizeof *gz);
        if (gz)
            w->g_z = gz;
        double *gp = realloc(w->g_phi, cap * sizeof *gp);
        if (gp)
            w->g_phi = gp;
        uint8_t *gl = realloc(w->g_layer, cap * sizeof *gl);
        if (gl)
            w->g_layer = gl;
        if (!in || !sl || !pr || !gr || !gz || !gp || !gl)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (z-finder room for %zu points)", cap);
        w->points_cap = cap;
    }
    return TUSK_OK;
}

int zf_ref_new(zf_ref_t **out, const zf_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    zf_ref_t *r = calloc(1, sizeof *r);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    r->cfg = *cfg;
    int st = zf_ref_work_init(&r->w, cfg, err);
    if (st != TUSK_OK) {
        free(r);
        return st;
    }
    *out = r;
    return TUSK_OK;
}

void zf_ref_destroy(zf_ref_t **ref)
{
    if (!ref || !*ref)
        return;
    zf_ref_work_free(&(*ref)->w);
    free(*ref);
    *ref = NULL;
}

int zf_ref_roi(zf_ref_t *r, const zf_roi_t *roi, zf_result_t *res, tusk_error_t *err)
{
    memset(res, 0, sizeof *res);
    return r->cfg.precision == ZF_PREC_DOUBLE ? zf_ref_roi_d(&r->w, &r->cfg, roi, res, err)
                                              : zf_ref_roi_f(&r->w, &r->cfg, roi, res, err);
}

int zf_ref_run(zf_ref_t *r, const zf_batch_t *b, zf_result_t *res, tusk_error_t *err)
{
    size_t n = zf_batch_count(b);
    for (size_t i = 0; i < n; i++) {
        zf_roi_t roi;
        zf_batch_roi(b, i, &roi);
        int st = zf_ref_roi(r, &roi, &res[i], err);
        if (st != TUSK_OK)
            return st;
    }
    return TUSK_OK;
}

const uint32_t *zf_ref_nhisto(const zf_ref_t *r)
{
    return r->w.nh;
}

const uint64_t *zf_ref_zsum(const zf_ref_t *r)
{
    return r->w.zs;
}

void zf_ref_zhisto(const zf_ref_t *r, double *zh)
{
    for (unsigned b = 0; b < r->w.k.bins; b++)
        zh[b] = zf_zhisto(&r->cfg, b, r->w.nh[b], r->w.zs[b]);
}
