/* analyse.c - from data:crystal records to data:psa results: baseline,
 * calibration, T0, alignment, hit segments, search problems in rounds,
 * residual subtraction (see tusk/psa.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psa_private.h"
#include "base/grow.h"

/* ADF channel of basis channel c: segments as they are, the core's high gain. */
#define ADF_CORE_HIGH 37

typedef struct hitlist {
    unsigned n, next;              /* hits, and the next to search (residual rounds) */
    uint8_t seg[PSA_SEGMENTS];     /* in decreasing energy */
    float energy[PSA_SEGMENTS];
    bool is_hit[PSA_SEGMENTS];
    double t0;                     /* samples from the record's first sample */
    uint16_t rejected;             /* PSA_REJECT_* of the record (then no hits) */
} hitlist_t;

/* Value of calibrated trace v (n samples) at fractional sample x: linear
 * between samples, the first value before, the last after. */
static float at_time(const float *v, unsigned n, double x)
{
    if (x <= 0.0)
        return v[0];
    if (x >= (double)(n - 1))
        return v[n - 1];
    unsigned k = (unsigned)x;
    float f = (float)(x - k);
    return v[k] + f * (v[k + 1] - v[k]);
}

/* Baseline off, ADC to keV: work[c * n + t] for basis channels c. */
static void calibrate(const psa_engine_t *e, const adf_crystal_t *in, float *work)
{
    const unsigned n = in->n_samples, nb = e->cfg.baseline_samples < n ? e->cfg.baseline_samples : n;
    const float g = (float)(1.0 / e->cfg.gain);
    for (unsigned c = 0; c < PSA_CHANNELS; c++) {
        const int16_t *tr = in->trace[c < PSA_SEGMENTS ? c : ADF_CORE_HIGH];
        double b = 0.0;
        for (unsigned t = 0; t < nb; t++)
            b += tr[t];
        b /= nb;
        for (unsigned t = 0; t < n; t++)
            work[c * n + t] = (float)((tr[t] - b) * g);
    }
}

static void find_hits(const psa_engine_t *e, const adf_crystal_t *in, hitlist_t *h)
{
    memset(h, 0, sizeof *h);
    /* Non-finite or absurd energies: the record is rejected, never searched. */
    h->rejected = (uint16_t)psa_record_check(&e->cfg, in, NULL, 0);
    if (h->rejected)
        return;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++)
        if (in->segment_energy[s] >= e->cfg.threshold_kev && in->segment_energy[s] > 0.0f) {
            h->seg[h->n] = (uint8_t)s;
            h->energy[h->n] = in->segment_energy[s];
            h->is_hit[s] = true;
            h->n++;
        }
    /* Decreasing energy; equal energies by segment (insertion sort: n <= 36). */
    for (unsigned i = 1; i < h->n; i++)
        for (unsigned k = i; k > 0 && (h->energy[k] > h->energy[k - 1] ||
                                       (h->energy[k] == h->energy[k - 1] && h->seg[k] < h->seg[k - 1]));
             k--) {
            uint8_t ts = h->seg[k];
            float te = h->energy[k];
            h->seg[k] = h->seg[k - 1];
            h->energy[k] = h->energy[k - 1];
            h->seg[k - 1] = ts;
            h->energy[k - 1] = te;
        }
}

/* T0 of the record (samples): the core's leading edge minus the basis'. */
static double find_t0(const psa_engine_t *e, const float *work, unsigned n)
{
    const float *core = work + (size_t)PSA_CORE * n;
    double a = 0.0;
    unsigned tail = n < 4 ? n : 4;
    for (unsigned t = n - tail; t < n; t++)
        a += core[t];
    a /= tail;
    double le = psa_leading_edge(core, n, a);
    if (!isfinite(le))
        le = e->cfg.baseline_samples + e->basis_t0; /* no edge (noise only): where it would be */
    return le - e->basis_t0;
}

/* Which crystal, hit and T0 shift a problem of the batch is. */
typedef struct slot {
    uint32_t crystal;
    uint8_t hit;
    int8_t shift;
    bool own_trace;            /* the mask fell back to the hit's own trace (PSA_HIT_OWN_TRACE) */
} slot_t;

/* Where the preprocessed crystals are. */
typedef struct prepared {
    const adf_crystal_t *in;
    size_t n;
    hitlist_t *hits;
    float *traces;             /* crystal c at c * PSA_CHANNELS * per */
    size_t per;
} prepared_t;

typedef struct prep_job {
    const psa_engine_t *e;
    const prepared_t *p;
    psa_batch_t *b;
    const slot_t *slots;
} prep_job_t;

/* Baseline, calibration, hits and T0 of crystals first, first + step, ... */
static void prep_crystals(void *ctx, size_t first, size_t step, size_t n)
{
    prep_job_t *j = ctx;
    const prepared_t *p = j->p;
    for (size_t c = first; c < n; c += step) {
        float *w = p->traces + c * PSA_CHANNELS * p->per;
        calibrate(j->e, &p->in[c], w);
        find_hits(j->e, &p->in[c], &p->hits[c]);
        p->hits[c].t0 = find_t0(j->e, w, p->in[c].n_samples);
    }
}

/* The normalised, aligned traces of problems first, first + step, ... */
static void fill_problems(void *ctx, size_t first, size_t step, size_t n)
{
    prep_job_t *j = ctx;
    const unsigned S = j->e->samples;
    psa_batch_t *b = j->b;
    for (size_t i = first; i < n; i += step) {
        const slot_t *sl = &j->slots[i];
        const hitlist_t *h = &j->p->hits[sl->crystal];
        const unsigned len = j->p->in[sl->crystal].n_samples;
        const float *work = j->p->traces + (size_t)sl->crystal * PSA_CHANNELS * j->p->per;
        const float inv = 1.0f / h->energy[sl->hit];
        const double t0 = h->t0 + sl->shift;
        for (unsigned k = 0; k < b->n_channels[i]; k++) {
            const float *v = work + (size_t)b->channel[i * PSA_CHANNELS + k] * len;
            float *m = b->trace + (i * PSA_CHANNELS + k) * S;
            for (unsigned t = 0; t < S; t++)
                m[t] = at_time(v, len, t0 + t) * inv;
        }
    }
}

/* Append the problems of every crystal's hits `next` .. (all of them, or
 * one with one_round): one per hit and T0 shift, masks set here, traces
 * filled on `threads` threads. *slots grows with the batch. Returns the
 * problems added, or -1 (out of memory). */
static long build_problems(const psa_engine_t *e, psa_batch_t *b, slot_t **slots, size_t *slot_cap,
                           const prepared_t *p, bool one_round, unsigned threads)
{
    const size_t start = b->n;
    const int K = (int)e->cfg.t0_search;
    for (size_t c = 0; c < p->n; c++) {
        const hitlist_t *h = &p->hits[c];
        unsigned last = one_round ? (h->next < h->n ? h->next + 1 : h->next) : h->n;
        for (unsigned k = h->next; k < last; k++) {
            const unsigned s = h->seg[k];
            bool others[PSA_SEGMENTS];
            memcpy(others, h->is_hit, sizeof others);
            others[s] = false;
            uint8_t ch[PSA_CHANNELS];
            bool own;
            unsigned nch = psa_engine_mask(e, s, others, ch, &own);
            for (int shift = -K; shift <= K; shift++) {
                long i = psa_batch_add(b, s);
                if (i < 0)
                    return -1;
                if ((size_t)i >= *slot_cap && tusk_grow(slots, slot_cap, (size_t)i + 1, sizeof **slots) != 0)
                    return -1;
                (*slots)[i] = (slot_t){(uint32_t)c, (uint8_t)k, (int8_t)shift, own};
                b->n_channels[i] = (uint16_t)nch;
                memcpy(b->channel + (size_t)i * PSA_CHANNELS, ch, nch);
            }
        }
    }
    prep_job_t job = {e, p, b, *slots};
    psa_parallel(start, b->n, threads, fill_problems, &job);
    return (long)(b->n - start);
}

/* Steps 1 and 2 for every crystal, on `threads` threads. */
static void prepare(const psa_engine_t *e, const prepared_t *p, unsigned threads)
{
    prep_job_t job = {e, p, NULL, NULL};
    psa_parallel(0, p->n, threads, prep_crystals, &job);
}

/* Subtract energy x the basis signal of point q of segment s, placed at
 * t0 (samples), from every channel of work. */
static void subtract(const psa_engine_t *e, float *work, unsigned n, unsigned s, uint32_t q, double t0, float energy)
{
    const unsigned S = e->samples;
    const size_t N = e->npoints[s];
    const float *blk = e->block[s];
    for (unsigned c = 0; c < PSA_CHANNELS; c++) {
        float *v = work + (size_t)c * n;
        for (unsigned t = 0; t < n; t++) {
            double x = (double)t - t0; /* basis time */
            float b;
            if (x <= 0.0) {
                b = 0.0f;
            } else if (x >= (double)(S - 1)) {
                b = blk[((size_t)c * S + S - 1) * N + q];
            } else {
                unsigned k = (unsigned)x;
                float f = (float)(x - k), b0 = blk[((size_t)c * S + k) * N + q],
                      b1 = blk[((size_t)c * S + k + 1) * N + q];
                b = b0 + f * (b1 - b0);
            }
            v[t] -= energy * b;
        }
    }
}

/* The adaptive mode's fine pass: points of s within two grid steps of q. */
static int add_neighbourhood(psa_engine_t *e, size_t i, unsigned s, uint32_t q)
{
    psa_batch_t *b = e->batch;
    float p[3];
    det_basis_position(e->basis, s, q, p);
    long c[3] = {det_grid_node(e->grid, p[0]), det_grid_node(e->grid, p[1]), det_grid_node(e->grid, p[2])};
    for (long dk = -2; dk <= 2; dk++)
        for (long dj = -2; dj <= 2; dj++)
            for (long di = -2; di <= 2; di++) {
                unsigned seg;
                uint32_t idx;
                if (!det_grid_at(e->grid, c[0] + di, c[1] + dj, c[2] + dk, &seg, &idx) || seg != s)
                    continue;
                size_t k = b->cand_start[i + 1];
                if (k + 1 > b->cand_cap && tusk_grow(&b->cand, &b->cand_cap, k + 1, sizeof *b->cand) != 0)
                    return -1;
                b->cand[k] = idx;
                b->cand_start[i + 1] = (uint32_t)(k + 1);
            }
    return 0;
}

static int set_coarse(psa_engine_t *e, size_t i, unsigned s)
{
    psa_batch_t *b = e->batch;
    size_t k = b->cand_start[i], n = e->coarse_n[s];
    if (k + n > b->cand_cap && tusk_grow(&b->cand, &b->cand_cap, k + n, sizeof *b->cand) != 0)
        return -1;
    memcpy(b->cand + k, e->coarse[s], n * sizeof *b->cand);
    b->cand_start[i + 1] = (uint32_t)(k + n);
    return 0;
}

static int search(psa_engine_t *e, const psa_backend_t *be, psa_stats_t *st, tusk_error_t *err)
{
    psa_batch_t *b = e->batch;
    if (b->n == 0)
        return TUSK_OK;
    if (e->cfg.mode == PSA_MODE_ADAPTIVE) {
        /* Coarse: candidate lists must be consecutive, problem by problem. */
        b->cand_start[0] = 0;
        for (size_t i = 0; i < b->n; i++) {
            b->cand_start[i + 1] = b->cand_start[i];
            if (set_coarse(e, i, b->segment[i]) != 0)
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory (candidate lists)");
        }
        int rc = be->search(be->ctx, e, b, err);
        if (rc != TUSK_OK)
            return rc;
        for (size_t i = 0; i < b->n; i++)
            st->fom_terms += (uint64_t)b->n_channels[i] * b->samples * (b->cand_start[i + 1] - b->cand_start[i]);
        uint32_t *coarse_best = malloc(b->n * sizeof *coarse_best);
        if (!coarse_best)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memcpy(coarse_best, b->best, b->n * sizeof *coarse_best);
        b->cand_start[0] = 0;
        for (size_t i = 0; i < b->n; i++) {
            b->cand_start[i + 1] = b->cand_start[i];
            if (add_neighbourhood(e, i, b->segment[i], coarse_best[i]) != 0) {
                free(coarse_best);
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory (candidate lists)");
            }
        }
        free(coarse_best);
        rc = be->search(be->ctx, e, b, err);
        for (size_t i = 0; i < b->n; i++)
            st->fom_terms += (uint64_t)b->n_channels[i] * b->samples * (b->cand_start[i + 1] - b->cand_start[i]);
        return rc;
    }
    int rc = be->search(be->ctx, e, b, err);
    for (size_t i = 0; i < b->n; i++)
        st->fom_terms += (uint64_t)b->n_channels[i] * b->samples * e->npoints[b->segment[i]];
    return rc;
}

int psa_analyse(psa_engine_t *e, const psa_backend_t *be, const adf_crystal_t *in, size_t n, adf_psa_t *out,
                psa_stats_t *stats, tusk_error_t *err)
{
    psa_stats_t local = {0};
    psa_stats_t *st = stats ? stats : &local;
    if (e->cfg.mode == PSA_MODE_ADAPTIVE && !be->candidates)
        return tusk_error_set(err, TUSK_EINVAL, "the adaptive mode needs a backend that takes candidate lists "
                              "(the CPU ones)");
    /* Working memory: calibrated traces of every crystal, and hit lists. */
    size_t per = 0;
    for (size_t c = 0; c < n; c++) {
        if (in[c].n_samples < e->cfg.baseline_samples + 2 || in[c].n_samples > ADF_CRYSTAL_MAX_SAMPLES)
            return tusk_error_set(err, TUSK_EINVAL, "crystal %u (record %zu): %u samples per channel; PSA needs "
                                  "more than the %u baseline samples", in[c].crystal_id, c, in[c].n_samples,
                                  e->cfg.baseline_samples + 1);
        per = in[c].n_samples > per ? in[c].n_samples : per;
    }
    size_t need = n * (PSA_CHANNELS * per * sizeof(float) + sizeof(hitlist_t));
    if (need > e->work_cap) {
        float *w = realloc(e->work, need);
        if (!w)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu bytes for %zu crystals)", need, n);
        e->work = w;
        e->work_cap = need;
    }
    hitlist_t *hits = (hitlist_t *)(void *)e->work;
    float *traces = (float *)(void *)(hits + n);
    prepared_t prep = {in, n, hits, traces, per};
    prepare(e, &prep, e->cfg.threads);
    for (size_t c = 0; c < n; c++) {
        adf_psa_t *o = &out[c];
        memset(o, 0, sizeof *o);
        o->crystal_id = in[c].crystal_id;
        o->status = in[c].status;
        o->core_energy[0] = in[c].core_energy[0];
        o->core_energy[1] = in[c].core_energy[1];
        o->core_time[0] = o->core_time[1] = (float)(hits[c].t0 * e->sample_ns);
        o->has_fom = true;
        o->psa_status = hits[c].rejected;
        st->crystals++;
        st->hits += hits[c].n;
        st->rejected_nonfinite += (hits[c].rejected & PSA_REJECT_NONFINITE) != 0;
        st->rejected_range += (hits[c].rejected & PSA_REJECT_RANGE) != 0;
    }
    /* Rounds: all hits at once, or (residual) one hit per crystal a round. */
    const unsigned per_problem = 2 * e->cfg.t0_search + 1;
    int rc = TUSK_OK;
    for (;;) {
        psa_batch_clear(e->batch);
        long nprob = build_problems(e, e->batch, &e->slots, &e->slot_cap, &prep, e->cfg.residual, e->cfg.threads);
        if (nprob < 0)
            rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory (search problems)");
        if (rc != TUSK_OK || nprob <= 0)
            break;
        st->problems += e->batch->n;
        if ((rc = search(e, be, st, err)) != TUSK_OK)
            break;
        /* Results back to the crystals, in the order the problems were made. */
        size_t p = 0;
        for (size_t c = 0; c < n; c++) {
            hitlist_t *h = &hits[c];
            unsigned last = e->cfg.residual ? (h->next < h->n ? h->next + 1 : h->next) : h->n;
            for (unsigned k = h->next; k < last; k++, p++) {
                size_t i0 = p * per_problem, bi = i0;
                for (size_t i = i0; i < i0 + per_problem; i++)
                    if (e->batch->fom[i] < e->batch->fom[bi])
                        bi = i;
                int shift = (int)(bi - i0) - (int)e->cfg.t0_search;
                unsigned s = h->seg[k];
                uint32_t q = e->batch->best[bi];
                adf_psa_t *o = &out[c];
                adf_psa_hit_t *hit = &o->hit[o->n_hits++];
                float pos[3];
                det_basis_position(e->basis, s, q, pos);
                hit->status = e->slots[bi].own_trace ? PSA_HIT_OWN_TRACE : 0;
                st->own_trace += e->slots[bi].own_trace;
                hit->segment = (int16_t)s;
                hit->crystal = (int16_t)in[c].crystal_id;
                hit->x = pos[0];
                hit->y = pos[1];
                hit->z = pos[2];
                hit->energy = h->energy[k];
                hit->time = (float)((h->t0 + shift) * e->sample_ns);
                hit->fom = e->batch->fom[bi];
                if (e->cfg.residual)
                    subtract(e, traces + c * PSA_CHANNELS * per, in[c].n_samples, s, q, h->t0 + shift,
                             h->energy[k]);
            }
            h->next = last;
        }
        if (!e->cfg.residual)
            break;
    }
    return rc;
}

static int reference_search(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    (void)ctx;
    return psa_search_reference(e, b, err);
}

static int fast_search(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    return psa_search_fast(e, b, (unsigned)(uintptr_t)ctx, err);
}

psa_backend_t psa_backend_reference(void)
{
    return (psa_backend_t){reference_search, NULL, true};
}

psa_backend_t psa_backend_fast(unsigned threads)
{
    return (psa_backend_t){fast_search, (void *)(uintptr_t)threads, true};
}

int psa_prepare(const psa_engine_t *e, const adf_crystal_t *in, size_t n, psa_batch_t *batch, tusk_error_t *err)
{
    if (batch->samples != e->samples)
        return tusk_error_set(err, TUSK_EINVAL, "the batch has %u samples per trace, the basis %u", batch->samples,
                              e->samples);
    size_t per = 0;
    for (size_t c = 0; c < n; c++) {
        if (in[c].n_samples < e->cfg.baseline_samples + 2 || in[c].n_samples > ADF_CRYSTAL_MAX_SAMPLES)
            return tusk_error_set(err, TUSK_EINVAL, "crystal %u (record %zu): %u samples per channel",
                                  in[c].crystal_id, c, in[c].n_samples);
        per = in[c].n_samples > per ? in[c].n_samples : per;
    }
    hitlist_t *hits = malloc((n ? n : 1) * sizeof *hits);
    float *traces = malloc((n ? n : 1) * PSA_CHANNELS * (per ? per : 1) * sizeof *traces);
    slot_t *slots = NULL;
    size_t slot_cap = 0;
    int rc = TUSK_OK;
    if (!hits || !traces) {
        rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu crystals)", n);
    } else {
        prepared_t prep = {in, n, hits, traces, per};
        prepare(e, &prep, e->cfg.threads);
        if (build_problems(e, batch, &slots, &slot_cap, &prep, false, e->cfg.threads) < 0)
            rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory (search problems)");
    }
    free(slots);
    free(traces);
    free(hits);
    return rc;
}
