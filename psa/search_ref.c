/* search_ref.c - the reference grid search: plain loops, powf, the
 * oracle the other backends are compared with (see tusk/psa.h). */
#include <math.h>

#include "psa_private.h"

float psa_pow(float d, float p)
{
    return powf(fabsf(d), p);
}

/* Sum over the mask channels, then samples: the order every backend keeps. */
static float fom_of(const psa_engine_t *e, const psa_batch_t *b, size_t i, uint32_t q)
{
    const unsigned S = b->samples, s = b->segment[i];
    const size_t N = e->npoints[s];
    const float *blk = e->block[s];
    const float p = (float)e->cfg.p;
    float fom = 0.0f;
    for (unsigned j = 0; j < b->n_channels[i]; j++) {
        unsigned ch = b->channel[i * PSA_CHANNELS + j];
        const float *m = b->trace + (i * PSA_CHANNELS + j) * S;
        for (unsigned t = 0; t < S; t++)
            fom += psa_pow(m[t] - blk[((size_t)ch * S + t) * N + q], p);
    }
    return fom;
}

float psa_fom(const psa_engine_t *e, const psa_batch_t *b, size_t i, uint32_t point)
{
    return fom_of(e, b, i, point);
}

int psa_search_reference(const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    int st = psa_batch_check(e, b, err);
    if (st != TUSK_OK)
        return st;
    for (size_t i = 0; i < b->n; i++) {
        unsigned s = b->segment[i];
        float best = INFINITY;
        uint32_t at = 0;
        bool cand = b->cand && b->cand_start[i + 1] > b->cand_start[i];
        size_t n = cand ? b->cand_start[i + 1] - b->cand_start[i] : e->npoints[s];
        for (size_t k = 0; k < n; k++) {
            uint32_t q = cand ? b->cand[b->cand_start[i] + k] : (uint32_t)k;
            float f = fom_of(e, b, i, q);
            if (f < best || (f == best && q < at)) {
                best = f;
                at = q;
            }
        }
        b->best[i] = at;
        b->fom[i] = best;
    }
    return TUSK_OK;
}
