/* analyse.c - from data:crystal records to data:psa results: baseline,
 * calibration, T0, alignment, hit segments, search problems in rounds,
 * residual subtraction (see tusk/psa.h).
 *
 * A batch of records is a job (psa_job_t): two passes over its records on
 * the engine's threads, then the search.
 *   1. per record: the energy check, the hits, the core calibrated and T0;
 *      how many problems it makes;
 *   then, in order, each record's first problem (prefix sums) and room in
 *      the batch;
 *   2. per record: its problems (masks, slots) and their traces, each
 *      channel calibrated when a problem first needs it.
 * A record is read where it is: a decoded adf_crystal_t (psa_analyse) or a
 * data:crystal frame in place (adf_crystal_view_t, psa_analyse_start),
 * whose samples are decoded as they are used. psa_analyse calibrates every
 * channel of a record in pass 1 (eager), as does the residual mode for a
 * record of several hits, whose subtraction works on all of them;
 * psa_analyse_start otherwise only the core and the channels the masks
 * take (lazy). A channel is calibrated by the same
 * code either way, so the problems are the same, bit for bit. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/grow.h"
#include "psa_private.h"

/* ADF channel of basis channel c: segments as they are, the core's high gain. */
#define ADF_CORE_HIGH 37
#define ALL_CHANNELS ((UINT64_C(1) << PSA_CHANNELS) - 1)

typedef struct hitlist {
    unsigned n, next;              /* hits, and the next search (residual rounds) */
    unsigned searches;             /* n, or with residual n x (1 + refine) where n >= 2: search k is of
                                      hit k % n, a refinement from k = n on */
    uint8_t seg[PSA_SEGMENTS];     /* in decreasing energy */
    float energy[PSA_SEGMENTS];
    bool is_hit[PSA_SEGMENTS];
    double t0;                     /* samples from the record's first sample */
    double round_t0;               /* residual: the T0 this round's hit was aligned at (samples) */
    uint32_t best[PSA_SEGMENTS];   /* residual: each hit's point so far */
    double at[PSA_SEGMENTS];       /* and where its signal was placed (samples) */
    uint16_t rejected;             /* PSA_REJECT_* of the record (then no hits) */
    uint16_t n_samples;            /* the record's */
    uint64_t have;                 /* basis channels calibrated into the work traces (bits) */
} hitlist_t;

/* Which crystal, hit and T0 shift a problem of the batch is. */
typedef struct slot {
    uint32_t crystal;
    uint8_t hit;
    int8_t shift;
    bool own_trace;            /* the mask fell back to the hit's own trace (PSA_HIT_OWN_TRACE) */
} slot_t;

struct psa_job {
    /* The records, while psa_analyse_start (or psa_analyse) runs: one of the two. */
    const adf_crystal_t *crystals;
    const adf_crystal_view_t *views;
    size_t n;
    bool eager;                /* every channel calibrated in pass 1 */
    hitlist_t *hits;
    float *traces;             /* calibrated traces: crystal c at c * PSA_CHANNELS * per, channel k at k * n_samples */
    size_t per;
    void *mem;                 /* hits and traces */
    size_t mem_cap;
    size_t *first;             /* n + 1: each record's first problem of the round (from the batch's start) */
    size_t first_cap;
    psa_batch_t *batch;
    slot_t *slots;
    size_t slot_cap;
    size_t start;              /* the round's first problem in the batch */
    bool one_round;            /* this round: one hit a record (residual) */
    adf_psa_t *out;
    psa_stats_t *stats, local;
    bool submitted;            /* searching on the backend: psa_analyse_finish collects */
};

/* Where a record's fields and samples are. */
typedef struct source {
    const float *segment_energy, *core_energy;
    const int16_t *host;       /* adf_crystal_t: trace[channel][ADF_CRYSTAL_MAX_SAMPLES] */
    const uint8_t *le;         /* a frame's traces: int16 little-endian, channel-major, n samples each */
    unsigned n;
} source_t;

static source_t source_of(const psa_job_t *j, size_t c)
{
    if (j->crystals) {
        const adf_crystal_t *x = &j->crystals[c];
        return (source_t){x->segment_energy, x->core_energy, &x->trace[0][0], NULL, x->n_samples};
    }
    const adf_crystal_view_t *v = &j->views[c];
    return (source_t){v->segment_energy, v->core_energy, NULL, v->traces, v->n_samples};
}

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

/* Baseline off, ADC to keV: out[t] = basis channel c of the record. */
#define CALIBRATE(sample)                                                                                  \
    do {                                                                                                   \
        double b = 0.0;                                                                                    \
        for (unsigned t = 0; t < nb; t++)                                                                  \
            b += (sample);                                                                                 \
        b /= nb;                                                                                           \
        for (unsigned t = 0; t < n; t++)                                                                   \
            out[t] = (float)(((sample) - b) * g);                                                          \
    } while (0)

static void calibrate(const psa_engine_t *e, const source_t *r, unsigned c, float *out)
{
    const unsigned n = r->n, nb = e->cfg.baseline_samples < n ? e->cfg.baseline_samples : n;
    const float g = (float)(1.0 / e->cfg.gain);
    const unsigned ac = c < PSA_SEGMENTS ? c : ADF_CORE_HIGH;
    if (r->host) {
        const int16_t *tr = r->host + (size_t)ac * ADF_CRYSTAL_MAX_SAMPLES;
        CALIBRATE(tr[t]);
    } else {
        const uint8_t *tr = r->le + (size_t)ac * n * 2;
        CALIBRATE(tusk_get_i16(tr + 2 * t));
    }
}

static void find_hits(const psa_engine_t *e, const source_t *r, hitlist_t *h)
{
    memset(h, 0, sizeof *h);
    /* Non-finite or absurd energies: the record is rejected, never searched. */
    h->rejected = (uint16_t)psa_energies_check(&e->cfg, r->segment_energy, r->core_energy, NULL, 0);
    if (h->rejected)
        return;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++)
        if (r->segment_energy[s] >= e->cfg.threshold_kev && r->segment_energy[s] > 0.0f) {
            h->seg[h->n] = (uint8_t)s;
            h->energy[h->n] = r->segment_energy[s];
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

/* The leading edge of the core trace in work (samples from the record's
 * first sample; NaN if there is none), less the basis' mean edge: where
 * the aligned basis (engine.c) puts sample 0. */
static double core_t0(const psa_engine_t *e, const float *work, unsigned n)
{
    const float *core = work + (size_t)PSA_CORE * n;
    double a = 0.0;
    unsigned tail = n < 4 ? n : 4;
    for (unsigned t = n - tail; t < n; t++)
        a += core[t];
    a /= tail;
    return psa_leading_edge(core, n, a) - e->basis_t0;
}

/* A refinement's T0 for hit k (samples). The hits of a crystal happen
 * together, at the time where the model of the core, the sum of the hits'
 * signals found so far (each energy x its point's core signal, as the
 * basis has it: from the interaction), has the measured core's leading
 * edge; hit k's traces are then aligned where its point so far has its
 * edge (the aligned basis has every point's at basis_t0). The trace's own
 * edge would place each hit at the sum's, off by the difference between
 * the hits' offsets. Where the model has no edge: the placement so far. */
static double refined_t0(const psa_engine_t *e, const hitlist_t *h, unsigned k)
{
    const unsigned S = e->samples;
    float model[PSA_MAX_SAMPLES] = {0}, one[PSA_MAX_SAMPLES];
    for (unsigned m = 0; m < h->n; m++) {
        det_basis_trace(e->basis, h->seg[m], h->best[m], PSA_CORE, one);
        for (unsigned t = 0; t < S; t++)
            model[t] += h->energy[m] * one[t];
    }
    const double le = psa_leading_edge(model, S, model[S - 1]);
    if (!isfinite(le))
        return h->at[k];
    const double interaction = h->t0 + e->basis_t0 - le; /* record samples */
    return interaction + e->edge[h->seg[k]][h->best[k]] - e->basis_t0;
}

/* T0 of the record (samples): its core's. */
static double find_t0(const psa_engine_t *e, const float *work, unsigned n)
{
    const double t0 = core_t0(e, work, n);
    /* No edge (noise only): where it would be. */
    return isfinite(t0) ? t0 : (double)e->cfg.baseline_samples;
}

/* The interaction time of a hit (samples after the key's timestamp, the
 * record's sample cfg.pretrigger): t0 placed the trace's core leading
 * edge at the basis' mean edge; point q of segment s starts its edge
 * e->edge[s][q] samples after its interaction. */
static double psa_hit_t0(const psa_engine_t *e, double t0, unsigned s, uint32_t q)
{
    return t0 + e->basis_t0 - e->edge[s][q] - e->cfg.pretrigger;
}

/* The searches of a record in this round: from h->next, one (the residual
 * mode's rounds, refinements included), or every hit once (one round). */
static unsigned round_hits(const hitlist_t *h, bool one_round)
{
    unsigned last = one_round ? (h->next < h->searches ? h->next + 1 : h->next) : h->n;
    return last > h->next ? last - h->next : 0;
}

typedef struct pass {
    const psa_engine_t *e;
    psa_job_t *j;
} pass_t;

/* Pass 1, records first, first + step, ...: the check, the hits, the core
 * (every channel when eager) calibrated, T0; the result's header. */
static void pass_records(void *ctx, size_t first, size_t step, size_t end)
{
    const pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    for (size_t c = first; c < end; c += step) {
        const source_t r = source_of(j, c);
        hitlist_t *h = &j->hits[c];
        float *w = j->traces + c * PSA_CHANNELS * j->per;
        find_hits(e, &r, h);
        h->searches = h->n * (e->cfg.residual && h->n >= 2 ? 1 + e->cfg.refine : 1);
        h->n_samples = (uint16_t)r.n;
        /* Residual subtraction works on every channel: a record of
         * several hits needs them all (one hit subtracts nothing). */
        if (j->eager || (e->cfg.residual && h->n >= 2)) {
            for (unsigned k = 0; k < PSA_CHANNELS; k++)
                calibrate(e, &r, k, w + (size_t)k * r.n);
            h->have = ALL_CHANNELS;
        } else {
            calibrate(e, &r, PSA_CORE, w + (size_t)PSA_CORE * r.n);
            h->have = UINT64_C(1) << PSA_CORE;
        }
        h->t0 = find_t0(e, w, r.n);
        if (j->out) {
            adf_psa_t *o = &j->out[c];
            memset(o, 0, sizeof *o);
            o->crystal_id = j->crystals ? j->crystals[c].crystal_id : j->views[c].crystal_id;
            o->status = j->crystals ? j->crystals[c].status : j->views[c].status;
            o->core_energy[0] = r.core_energy[0];
            o->core_energy[1] = r.core_energy[1];
            o->core_time[0] = o->core_time[1] = (float)((h->t0 - e->cfg.pretrigger) * e->sample_ns);
            o->has_fom = true;
            o->psa_status = h->rejected;
        }
    }
}

/* Subtract energy x the (aligned) basis signal of point q of segment s,
 * placed at t0 (samples), from every channel of work. */
static void subtract(const psa_engine_t *e, float *work, unsigned n, unsigned s, uint32_t q, double t0, float energy)
{
    const unsigned S = e->samples;
    const size_t N = e->npoints[s];
    const float *blk = e->block[s];
    for (unsigned c = 0; c < PSA_CHANNELS; c++) {
        float *v = work + (size_t)c * n;
        const float *row = blk + (size_t)c * S * N + q;
        for (unsigned t = 0; t < n; t++)
            v[t] -= energy * psa_basis_at(row, N, S, (double)t - t0);
    }
}

/* Pass 2, records first, first + step, ...: their problems of the round
 * (one per hit and T0 shift, from j->start + j->first[c]), masks and
 * normalised, aligned traces; a channel is calibrated when first used. */
static void pass_problems(void *ctx, size_t first, size_t step, size_t end)
{
    const pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    psa_batch_t *b = j->batch;
    const unsigned S = e->samples;
    const int K = (int)e->cfg.t0_search;
    const uint32_t cand0 = b->cand_start[j->start];
    for (size_t c = first; c < end; c += step) {
        hitlist_t *h = &j->hits[c];
        const unsigned nh = round_hits(h, j->one_round);
        if (nh == 0)
            continue;
        const unsigned len = h->n_samples;
        float *work = j->traces + c * PSA_CHANNELS * j->per;
        size_t i = j->start + j->first[c];
        for (unsigned kn = h->next; kn < h->next + nh; kn++) {
            const unsigned k = kn % h->n, s = h->seg[k];
            /* A refinement: the hit's own signal so far back in, every
             * other hit's still subtracted. */
            if (kn >= h->n)
                subtract(e, work, len, s, h->best[k], h->at[k], -h->energy[k]);
            const double t0 = kn >= h->n ? refined_t0(e, h, k) : h->t0;
            h->round_t0 = t0;
            bool others[PSA_SEGMENTS];
            memcpy(others, h->is_hit, sizeof others);
            others[s] = false;
            uint8_t ch[PSA_CHANNELS];
            bool own;
            const unsigned nch = psa_engine_mask(e, s, others, ch, &own);
            for (unsigned q = 0; q < nch; q++)
                if (!((h->have >> ch[q]) & 1u)) {
                    const source_t r = source_of(j, c);
                    calibrate(e, &r, ch[q], work + (size_t)ch[q] * len);
                    h->have |= UINT64_C(1) << ch[q];
                }
            const float inv = 1.0f / h->energy[k];
            for (int shift = -K; shift <= K; shift++, i++) {
                b->segment[i] = (uint16_t)s;
                b->n_channels[i] = (uint16_t)nch;
                b->best[i] = 0;
                b->fom[i] = INFINITY;
                b->cand_start[i + 1] = cand0;
                memcpy(b->channel + i * PSA_CHANNELS, ch, nch);
                j->slots[i] = (slot_t){(uint32_t)c, (uint8_t)k, (int8_t)shift, own};
                for (unsigned q = 0; q < nch; q++) {
                    const float *v = work + (size_t)ch[q] * len;
                    float *m = b->trace + (i * PSA_CHANNELS + q) * S;
                    for (unsigned t = 0; t < S; t++)
                        m[t] = at_time(v, len, t0 + shift + t) * inv;
                }
            }
        }
    }
}

/* Append to the job's batch the problems of every record's hits of this
 * round (all, or one with one_round): their count, or -1 (out of
 * memory). */
static long build_round(const psa_engine_t *e, psa_job_t *j, bool one_round, struct tusk_pool *pool)
{
    psa_batch_t *b = j->batch;
    const size_t per_hit = 2 * (size_t)e->cfg.t0_search + 1;
    if (tusk_grow(&j->first, &j->first_cap, j->n + 1, sizeof *j->first) != 0)
        return -1;
    j->start = b->n;
    j->one_round = one_round;
    size_t total = 0;
    for (size_t c = 0; c < j->n; c++) {
        j->first[c] = total;
        total += round_hits(&j->hits[c], one_round) * per_hit;
    }
    j->first[j->n] = total;
    if (total == 0)
        return 0;
    if (total > LONG_MAX - b->n || psa_batch_reserve(b, b->n + total) != 0 ||
        (b->n + total > j->slot_cap && tusk_grow(&j->slots, &j->slot_cap, b->n + total, sizeof *j->slots) != 0))
        return -1;
    pass_t pass = {e, j};
    psa_parallel(pool, 0, j->n, e->cfg.threads, pass_problems, &pass);
    b->n += total;
    return (long)total;
}

/* Check the records, make room, pass 1 (out non-NULL: with the results'
 * headers), the record counts of the stats. */
static int job_begin(const psa_engine_t *e, psa_job_t *j, const adf_crystal_t *crystals,
                     const adf_crystal_view_t *views, size_t n, adf_psa_t *out, psa_stats_t *stats,
                     struct tusk_pool *pool, tusk_error_t *err)
{
    if (j->submitted)
        return tusk_error_set(err, TUSK_EINVAL, "the job's search is still under way: psa_analyse_finish it first");
    if (j->batch->samples != e->samples)
        return tusk_error_set(err, TUSK_EINVAL, "the job was made for an engine of %u samples, this one has %u",
                              j->batch->samples, e->samples);
    size_t per = 0;
    for (size_t c = 0; c < n; c++) {
        const unsigned ns = crystals ? crystals[c].n_samples : views[c].n_samples;
        if (ns < e->cfg.baseline_samples + 2 || ns > ADF_CRYSTAL_MAX_SAMPLES)
            return tusk_error_set(err, TUSK_EINVAL, "crystal %u (record %zu): %u samples per channel; PSA needs "
                                  "more than the %u baseline samples",
                                  crystals ? crystals[c].crystal_id : views[c].crystal_id, c, ns,
                                  e->cfg.baseline_samples + 1);
        per = ns > per ? ns : per;
    }
    const size_t need = n * (sizeof(hitlist_t) + PSA_CHANNELS * per * sizeof(float));
    if (need > j->mem_cap) {
        void *m = realloc(j->mem, need);
        if (!m)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu bytes for %zu crystals)", need, n);
        j->mem = m;
        j->mem_cap = need;
    }
    j->hits = n ? j->mem : NULL;
    j->traces = n ? (float *)(void *)(j->hits + n) : NULL;
    j->crystals = crystals;
    j->views = views;
    j->n = n;
    j->per = per;
    j->eager = crystals != NULL;
    j->out = out;
    j->stats = stats ? stats : &j->local;
    pass_t pass = {e, j};
    psa_parallel(pool, 0, n, e->cfg.threads, pass_records, &pass);
    if (!out)
        return TUSK_OK;
    psa_stats_t *st = j->stats;
    for (size_t c = 0; c < n; c++) {
        const hitlist_t *h = &j->hits[c];
        st->crystals++;
        st->hits += h->n;
        st->rejected_nonfinite += (h->rejected & PSA_REJECT_NONFINITE) != 0;
        st->rejected_range += (h->rejected & PSA_REJECT_RANGE) != 0;
    }
    return TUSK_OK;
}

/* The records are not read after this. */
static void job_let_go(psa_job_t *j)
{
    j->crystals = NULL;
    j->views = NULL;
}

/* The searched round's results to the records, in the order the problems
 * were made (for each hit the best of its T0 shifts); residual: each found
 * signal subtracted. */
static void take_results(const psa_engine_t *e, psa_job_t *j)
{
    const size_t per_hit = 2 * (size_t)e->cfg.t0_search + 1;
    const psa_batch_t *b = j->batch;
    psa_stats_t *st = j->stats;
    for (size_t c = 0; c < j->n; c++) {
        hitlist_t *h = &j->hits[c];
        const unsigned nh = round_hits(h, j->one_round);
        size_t i0 = j->start + j->first[c];
        for (unsigned kn = h->next; kn < h->next + nh; kn++, i0 += per_hit) {
            const unsigned k = kn % h->n;
            size_t bi = i0;
            for (size_t i = i0; i < i0 + per_hit; i++)
                if (b->fom[i] < b->fom[bi])
                    bi = i;
            int shift = (int)(bi - i0) - (int)e->cfg.t0_search;
            unsigned s = h->seg[k];
            uint32_t q = b->best[bi];
            adf_psa_t *o = &j->out[c];
            adf_psa_hit_t *hit = kn < h->n ? &o->hit[o->n_hits++] : &o->hit[k];
            float pos[3];
            det_basis_position(e->basis, s, q, pos);
            hit->status = j->slots[bi].own_trace ? PSA_HIT_OWN_TRACE : 0;
            st->own_trace += kn < h->n && j->slots[bi].own_trace;
            hit->segment = (int16_t)s;
            hit->crystal = (int16_t)o->crystal_id;
            hit->x = pos[0];
            hit->y = pos[1];
            hit->z = pos[2];
            hit->energy = h->energy[k];
            const double t0 = (j->one_round ? h->round_t0 : h->t0) + shift;
            hit->time = (float)(psa_hit_t0(e, t0, s, q) * e->sample_ns);
            hit->fom = b->fom[bi];
            if (e->cfg.residual) {
                h->best[k] = q;
                h->at[k] = t0;
                if (kn + 1 < h->searches) /* a search of the record follows */
                    subtract(e, j->traces + c * PSA_CHANNELS * j->per, h->n_samples, s, q, h->at[k], h->energy[k]);
            }
        }
        h->next += nh;
    }
}

/* The adaptive mode's fine pass: points of s within two grid steps of q. */
static int add_neighbourhood(const psa_engine_t *e, psa_batch_t *b, size_t i, unsigned s, uint32_t q)
{
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

static int set_coarse(const psa_engine_t *e, psa_batch_t *b, size_t i, unsigned s)
{
    size_t k = b->cand_start[i], n = e->coarse_n[s];
    if (k + n > b->cand_cap && tusk_grow(&b->cand, &b->cand_cap, k + n, sizeof *b->cand) != 0)
        return -1;
    memcpy(b->cand + k, e->coarse[s], n * sizeof *b->cand);
    b->cand_start[i + 1] = (uint32_t)(k + n);
    return 0;
}

/* The terms of a search over candidate lists. */
static void count_terms(const psa_batch_t *b, psa_stats_t *st)
{
    for (size_t i = 0; i < b->n; i++)
        st->fom_terms += (uint64_t)b->n_channels[i] * b->samples * (b->cand_start[i + 1] - b->cand_start[i]);
}

static int search(const psa_engine_t *e, const psa_backend_t *be, psa_batch_t *b, psa_stats_t *st,
                  tusk_error_t *err)
{
    if (b->n == 0)
        return TUSK_OK;
    if (e->cfg.mode == PSA_MODE_ADAPTIVE) {
        /* Coarse: candidate lists must be consecutive, problem by problem. */
        b->cand_start[0] = 0;
        for (size_t i = 0; i < b->n; i++) {
            b->cand_start[i + 1] = b->cand_start[i];
            if (set_coarse(e, b, i, b->segment[i]) != 0)
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory (candidate lists)");
        }
        int rc = be->search(be->ctx, e, b, err);
        if (rc != TUSK_OK)
            return rc;
        count_terms(b, st);
        uint32_t *coarse_best = malloc(b->n * sizeof *coarse_best);
        if (!coarse_best)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memcpy(coarse_best, b->best, b->n * sizeof *coarse_best);
        b->cand_start[0] = 0;
        for (size_t i = 0; i < b->n; i++) {
            b->cand_start[i + 1] = b->cand_start[i];
            if (add_neighbourhood(e, b, i, b->segment[i], coarse_best[i]) != 0) {
                free(coarse_best);
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory (candidate lists)");
            }
        }
        free(coarse_best);
        rc = be->search(be->ctx, e, b, err);
        count_terms(b, st);
        return rc;
    }
    int rc = be->search(be->ctx, e, b, err);
    for (size_t i = 0; i < b->n; i++)
        st->fom_terms += (uint64_t)b->n_channels[i] * b->samples * e->npoints[b->segment[i]];
    return rc;
}

/* The rounds: all hits at once, or (residual) one hit per crystal a
 * round, searched and taken; or (may_submit) the one round submitted. */
static int run_rounds(psa_engine_t *e, const psa_backend_t *be, psa_job_t *j, bool may_submit, tusk_error_t *err)
{
    struct tusk_pool *pool = psa_engine_pool(e);
    for (;;) {
        psa_batch_clear(j->batch);
        long nprob = build_round(e, j, e->cfg.residual, pool);
        if (nprob < 0)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (search problems)");
        if (nprob == 0)
            return TUSK_OK;
        j->stats->problems += j->batch->n;
        if (may_submit) {
            int rc = be->submit(be->ctx, e, j->batch, err);
            if (rc != TUSK_OK)
                return rc;
            j->submitted = true;
            return TUSK_OK;
        }
        int rc = search(e, be, j->batch, j->stats, err);
        if (rc != TUSK_OK)
            return rc;
        take_results(e, j);
        if (!e->cfg.residual)
            return TUSK_OK;
    }
}

static int check_mode(const psa_engine_t *e, const psa_backend_t *be, tusk_error_t *err)
{
    if (e->cfg.mode == PSA_MODE_ADAPTIVE && !be->candidates)
        return tusk_error_set(err, TUSK_EINVAL, "the adaptive mode needs a backend that takes candidate lists "
                              "(the CPU ones)");
    return TUSK_OK;
}

int psa_analyse(psa_engine_t *e, const psa_backend_t *be, const adf_crystal_t *in, size_t n, adf_psa_t *out,
                psa_stats_t *stats, tusk_error_t *err)
{
    int rc = check_mode(e, be, err);
    if (rc == TUSK_OK)
        rc = job_begin(e, e->job, in, NULL, n, out, stats, psa_engine_pool(e), err);
    if (rc == TUSK_OK)
        rc = run_rounds(e, be, e->job, false, err);
    job_let_go(e->job);
    return rc;
}

/* With residual: a record of the job has several hits (so more rounds
 * than one follow). */
static bool several_rounds(const psa_engine_t *e, const psa_job_t *j)
{
    if (!e->cfg.residual)
        return false;
    for (size_t c = 0; c < j->n; c++)
        if (j->hits[c].n >= 2)
            return true;
    return false;
}

int psa_analyse_start(psa_engine_t *e, const psa_backend_t *be, psa_job_t *job, const adf_crystal_view_t *in,
                      size_t n, adf_psa_t *out, psa_stats_t *stats, tusk_error_t *err)
{
    int rc = check_mode(e, be, err);
    if (rc == TUSK_OK)
        rc = job_begin(e, job, NULL, in, n, out, stats, psa_engine_pool(e), err);
    if (rc == TUSK_OK) {
        /* Residual rounds follow one another; an input without a record of
         * several hits has one round only, and is submitted as well. */
        const bool may_submit = be->submit && be->collect && e->cfg.mode == PSA_MODE_FULL && !several_rounds(e, job);
        rc = run_rounds(e, be, job, may_submit, err);
    }
    job_let_go(job);
    return rc;
}

int psa_analyse_finish(psa_engine_t *e, const psa_backend_t *be, psa_job_t *job, tusk_error_t *err)
{
    if (!job->submitted)
        return TUSK_OK;
    job->submitted = false;
    int rc = be->collect(be->ctx, job->batch, err);
    if (rc != TUSK_OK)
        return rc;
    const psa_batch_t *b = job->batch;
    for (size_t i = 0; i < b->n; i++)
        job->stats->fom_terms += (uint64_t)b->n_channels[i] * b->samples * e->npoints[b->segment[i]];
    take_results(e, job);
    return TUSK_OK;
}

int psa_job_new(psa_job_t **out, const psa_engine_t *e, tusk_error_t *err)
{
    *out = NULL;
    psa_job_t *j = calloc(1, sizeof *j);
    if (!j)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int rc = psa_batch_new(&j->batch, e->samples, 256, err);
    if (rc != TUSK_OK) {
        free(j);
        return rc;
    }
    *out = j;
    return TUSK_OK;
}

void psa_job_destroy(psa_job_t **job)
{
    if (!job || !*job)
        return;
    psa_job_t *j = *job;
    psa_batch_destroy(&j->batch);
    free(j->mem);
    free(j->first);
    free(j->slots);
    free(j);
    *job = NULL;
}

bool psa_job_pending(const psa_job_t *job)
{
    return job->submitted;
}

static int reference_search(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    (void)ctx;
    return psa_search_reference(e, b, err);
}

static int fast_search(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    /* The engine's threads, where its analyses made them. */
    return psa_search_fast_on(e, b, (unsigned)(uintptr_t)ctx, e->pool, err);
}

psa_backend_t psa_backend_reference(void)
{
    return (psa_backend_t){reference_search, NULL, true, NULL, NULL};
}

psa_backend_t psa_backend_fast(unsigned threads)
{
    return (psa_backend_t){fast_search, (void *)(uintptr_t)threads, true, NULL, NULL};
}

int psa_prepare(const psa_engine_t *e, const adf_crystal_t *in, size_t n, psa_batch_t *batch, tusk_error_t *err)
{
    if (batch->samples != e->samples)
        return tusk_error_set(err, TUSK_EINVAL, "the batch has %u samples per trace, the basis %u", batch->samples,
                              e->samples);
    /* A job of its own around the caller's batch, on the engine's threads
     * where there are. */
    psa_job_t j;
    memset(&j, 0, sizeof j);
    j.batch = batch;
    int rc = job_begin(e, &j, in, NULL, n, NULL, NULL, e->pool, err);
    if (rc == TUSK_OK && build_round(e, &j, false, e->pool) < 0)
        rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory (search problems)");
    free(j.mem);
    free(j.first);
    free(j.slots);
    return rc;
}
