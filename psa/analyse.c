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
 * With residual, a record of several hits takes part in further rounds
 * (set_rounds): each round is made on the engine's threads (pass 2 again,
 * the other hits' signals subtracted from the problems' traces), then
 * searched; or, with a backend that makes them itself (psa_cl with double
 * precision: psa_private.h's psa_backend_ext), all the rounds after the
 * first are handed to it at once (device_rounds) and their results
 * written when they come back (res_finish): the same problems, by the
 * formulas of psa_shared.h. When a job's rounds are over, subgrid = yes
 * fits its hits' positions between the grid points (job_done,
 * subgrid.c) from the same calibrated traces. A record is read where it
 * is: a decoded adf_crystal_t
 * (psa_analyse) or a data:crystal frame in place (adf_crystal_view_t,
 * psa_analyse_start), whose samples are decoded as they are used.
 * psa_analyse calibrates every channel of a record in pass 1 (eager);
 * psa_analyse_start only the core and the channels the masks take (lazy:
 * all the masks of a record's hits in its first round, so that the later
 * rounds, which psa_analyse_finish may run, read no record). A channel is
 * calibrated by the same code either way, so the problems are the same,
 * bit for bit. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/grow.h"
#include "base/clock.h"
#include "psa_private.h"

/* ADF channel of basis channel c: segments as they are, the core's high gain. */
#define ADF_CORE_HIGH 37
#define ALL_CHANNELS ((UINT64_C(1) << PSA_CHANNELS) - 1)

typedef struct hitlist {
    unsigned n;                    /* hits */
    unsigned passes;               /* rounds finding the hits (round_hits) */
    unsigned rounds;               /* its search rounds: passes, then with residual `refine` more */
    unsigned found;                /* residual: hits 0 .. found - 1 have a point so far */
    uint64_t redo;                 /* the hits (bits) searched this round (select_round) */
    uint8_t seg[PSA_SEGMENTS];     /* in decreasing energy */
    float energy[PSA_SEGMENTS];
    bool is_hit[PSA_SEGMENTS];
    double t0;                     /* samples from the record's first sample */
    double placed[PSA_SEGMENTS];   /* where each hit's traces were aligned this round (samples) */
    uint32_t best[PSA_SEGMENTS];   /* residual: each hit's point so far */
    double at[PSA_SEGMENTS];       /* and where its signal was placed (samples) */
    uint16_t rejected;             /* PSA_REJECT_* of the record (then no hits) */
    uint16_t n_samples;            /* the record's */
    uint64_t have;                 /* basis channels calibrated into the work traces (bits) */
} hitlist_t;

/* Trace samples kept for a hit of segment s in the residual's later
 * rounds on a device: its whole mask, and the hit's own trace, which
 * psa_engine_mask adds where every mask segment is another hit, so that
 * job_begin places the traces before the masks are taken. */
#define RES_ROOM(e, s, len) (((size_t)(e)->mask_n[s] + 1) * (len))

/* A record in the residual's later rounds on a device. */
typedef struct res_part {
    size_t c, hit, trace;
} res_part_t;

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
    unsigned round;            /* the round being made or searched (set_rounds) */
    adf_psa_t *out;
    psa_stats_t *stats, local;
    bool submitted;            /* searching on the backend: psa_analyse_finish collects */
    /* Residual's later rounds on the backend's device (device_rounds):
     * the records taking part (each one's index, first hit and first
     * trace sample there), and where their hits come back. */
    bool res_on;               /* what is submitted is those rounds */
    res_part_t *part;
    size_t part_n, part_cap, res_hits, res_floats; /* res_floats: room for every hit's whole mask */
    unsigned res_rounds;
    psa_res_view_t res_view;
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

/* Resampling a trace at T0 plus a shift (psa_private.h: psa_resample_t):
 * planned once for every channel of a problem. */
static void resample_plan(psa_resample_t *p, double a, unsigned n, unsigned S)
{
    /* x and k as psa_trace_at has them: x in (0, n - 1) between lo and hi, so
     * k = (int32_t)x is (unsigned)x (signed conversions vectorise). */
    double x[PSA_MAX_SAMPLES];
    int32_t k[PSA_MAX_SAMPLES];
    for (unsigned t = 0; t < S; t++)
        x[t] = a + (double)(int32_t)t;
    unsigned lo = 0, hi = S;
    while (lo < S && x[lo] <= 0.0)
        lo++;
    while (hi > lo && x[hi - 1] >= (double)(n - 1))
        hi--;
    for (unsigned t = lo; t < hi; t++) {
        k[t] = (int32_t)x[t];
        p->f[t] = (float)(x[t] - (double)k[t]);
    }
    int32_t off = 0;
    for (unsigned t = lo; t < hi; t++)
        off |= k[t] - k[lo] - (int32_t)(t - lo);
    const bool straight = off == 0;
    p->a = a;
    p->n = n;
    p->S = S;
    p->lo = lo;
    p->hi = hi;
    p->k0 = lo < hi ? (unsigned)k[lo] : 0;
    p->straight = straight;
}

static void resample(const psa_resample_t *p, const float *v, float *m)
{
    const unsigned lo = p->lo, hi = p->hi;
    for (unsigned t = 0; t < lo; t++)
        m[t] = v[0];
    if (p->straight) {
        const float *w = v + p->k0, *f = p->f + lo;
        float *o = m + lo;
        for (unsigned u = 0; u < hi - lo; u++)
            o[u] = w[u] + f[u] * (w[u + 1] - w[u]);
    } else {
        for (unsigned t = lo; t < hi; t++)
            m[t] = psa_trace_at(v, p->n, p->a + t);
    }
    for (unsigned t = hi; t < p->S; t++)
        m[t] = v[p->n - 1];
}

void psa_resample_plan(psa_resample_t *p, double a, unsigned n, unsigned S)
{
    resample_plan(p, a, n, S);
}

void psa_resample(const psa_resample_t *p, const float *v, float *m)
{
    resample(p, v, m);
}

/* Baseline off, ADC to keV: out[t] = basis channel c of the record,
 * ((double)x[t] - b) * g rounded to float, b the mean of the first
 * baseline_samples in double, g = 1 / gain as a float. The baseline's sum
 * is exact in int32 (at most 1024 samples of 2^15), as every partial sum
 * of a double accumulation is, so b is that double. Plain loops over
 * contiguous samples, no branch per sample: they vectorise (a frame's
 * int16 little-endian samples decoded byte by byte in the loop). */
static void calibrate(const psa_engine_t *e, const source_t *r, unsigned c, float *out)
{
    const unsigned n = r->n, nb = e->cfg.baseline_samples < n ? e->cfg.baseline_samples : n;
    const double g = (double)(float)(1.0 / e->cfg.gain);
    const unsigned ac = c < PSA_SEGMENTS ? c : ADF_CORE_HIGH;
    int32_t sum = 0;
    if (r->host) {
        const int16_t *tr = r->host + (size_t)ac * ADF_CRYSTAL_MAX_SAMPLES;
        for (unsigned t = 0; t < nb; t++)
            sum += tr[t];
        const double b = (double)sum / nb;
        for (unsigned t = 0; t < n; t++)
            out[t] = (float)(((double)tr[t] - b) * g);
    } else {
        const uint8_t *tr = r->le + (size_t)ac * n * 2;
        for (size_t t = 0; t < nb; t++)
            sum += tusk_get_i16(tr + 2 * t);
        const double b = (double)sum / nb;
        for (size_t t = 0; t < n; t++)
            out[t] = (float)(((double)tusk_get_i16(tr + 2 * t) - b) * g);
    }
}

static void find_hits(const psa_engine_t *e, const source_t *r, hitlist_t *h)
{
    memset(h, 0, sizeof *h);
    /* Non-finite or absurd energies: the record is rejected, never searched. */
    bool fine = true; /* every energy within +-max_kev (so finite: NaN fails): nothing to check */
    for (unsigned s = 0; s < PSA_SEGMENTS; s++)
        fine &= fabs((double)r->segment_energy[s]) <= e->cfg.max_kev;
    for (unsigned s = 0; s < ADF_CRYSTAL_CORES; s++)
        fine &= fabs((double)r->core_energy[s]) <= e->cfg.max_kev;
    h->rejected = fine ? 0 : (uint16_t)psa_energies_check(&e->cfg, r->segment_energy, r->core_energy, NULL, 0);
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
static double core_t0(const psa_engine_t *e, const float *core, unsigned n)
{
    double a = 0.0;
    unsigned tail = n < 4 ? n : 4;
    for (unsigned t = n - tail; t < n; t++)
        a += core[t];
    a /= tail;
    return psa_leading_edge(core, n, a) - e->basis_t0;
}

/* A refinement round's interaction time of a crystal (record samples;
 * NaN where there is none). The hits of a crystal happen together, at the
 * time where the model of the core, the sum of the hits' signals found so
 * far (each energy x its point's core signal, as the basis has it: from
 * the interaction), has the measured core's leading edge. Each hit's
 * traces are then aligned where its point so far has its edge (the
 * aligned basis has every point's at basis_t0): the trace's own edge
 * would place each hit at the sum's, off by the difference between the
 * hits' offsets. */
static double interaction_time(const psa_engine_t *e, const hitlist_t *h)
{
    const unsigned S = e->samples;
    float model[PSA_MAX_SAMPLES] = {0}, one[PSA_MAX_SAMPLES];
    for (unsigned m = 0; m < h->n; m++) {
        det_basis_trace(e->basis, h->seg[m], h->best[m], PSA_CORE, one);
        for (unsigned t = 0; t < S; t++)
            model[t] += h->energy[m] * one[t];
    }
    return psa_interaction_time(model, S, h->t0, e->basis_t0);
}

/* T0 of the record (samples): its core's. */
static double find_t0(const psa_engine_t *e, const float *core, unsigned n)
{
    const double t0 = core_t0(e, core, n);
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

/* A record's rounds. Without residual (or with one hit): one, every hit
 * searched as it is. With residual, a record of several hits: 1 + refine
 * passes of two rounds each, every round searching its hits of every
 * record of the job at once: first the strongest hit, then all the others
 * together, each with the signal so far of every other hit found
 * subtracted. The first pass finds the hits (the strongest on its traces
 * as they are, the others with the strongest's signal subtracted: for the
 * two hits that most crystals of several hits have, the one-after-the-
 * other subtraction); each refinement pass searches them again, every
 * other hit's signal subtracted. Two rounds a pass whatever the hits: few
 * searches one after another, each of many problems. */
#define PASS_ROUNDS 2u

static void set_rounds(const psa_config_t *cfg, hitlist_t *h)
{
    const bool res = cfg->residual && h->n >= 2;
    h->passes = res ? PASS_ROUNDS : 1;
    h->rounds = h->passes * (1 + (res ? cfg->refine : 0));
}

/* The hits a record searches in round r, *lo .. *lo + count - 1 (a pass:
 * set_rounds); none once its rounds are done. */
static unsigned round_hits(const hitlist_t *h, unsigned r, unsigned *lo)
{
    *lo = 0;
    if (r >= h->rounds)
        return 0;
    const unsigned rr = r % h->passes;
    *lo = rr;
    return rr + 1 < h->passes ? 1 : h->n - rr;
}

/* A round of fewer problems (a residual round in a buffer of few crystals
 * of several hits) is made and taken on the calling thread: waking the
 * threads would cost more than its work. */
#define SMALL_ROUND 128

typedef struct pass {
    const psa_engine_t *e;
    psa_job_t *j;
} pass_t;

/* The hits each record searches in round j->round, as bits (h->redo). */
static void select_round(psa_job_t *j)
{
    for (size_t c = 0; c < j->n; c++) {
        hitlist_t *h = &j->hits[c];
        unsigned lo;
        const unsigned nh = round_hits(h, j->round, &lo);
        h->redo = nh ? ((UINT64_C(1) << nh) - 1) << lo : 0;
    }
}

/* Ask the memory for what a record read in place will be calibrated from,
 * a few records ahead of its turn: its core (pass 1, masks false), or the
 * channels of its hits' masks not calibrated yet (pass 2). The samples lie
 * in the input buffer, 2 n bytes a channel, 38 channels a record: read as
 * they come, each channel waits for memory; asked for ahead, they are in
 * the cache when their turn comes. Changes nothing but the timing. */
static void prefetch_record(const psa_engine_t *e, const psa_job_t *j, size_t c, bool masks)
{
#if defined(__GNUC__) || defined(__clang__)
    if (!j->views)
        return;
    const adf_crystal_view_t *v = &j->views[c];
    const size_t bytes = (size_t)v->n_samples * 2;
    uint64_t want = UINT64_C(1) << PSA_CORE;
    if (masks) {
        const hitlist_t *h = &j->hits[c];
        want = 0;
        for (unsigned k = 0; k < h->n; k++)
            for (unsigned q = 0; q < e->mask_n[h->seg[k]]; q++)
                want |= UINT64_C(1) << e->mask[h->seg[k]][q];
        want &= ~h->have;
    }
    for (unsigned ch = 0; ch < PSA_CHANNELS; ch++)
        if ((want >> ch) & 1u) {
            /* Every cache line of the channel. The empty asm keeps the
             * loop: GCC 12 otherwise deletes it, prefetches and all, as
             * a loop without effect. */
            const uint8_t *at = v->traces + (size_t)(ch < PSA_SEGMENTS ? ch : ADF_CORE_HIGH) * bytes;
            for (size_t o = 0; o < bytes; o += 64) {
                __builtin_prefetch(at + o);
                __asm__ __volatile__("");
            }
            __builtin_prefetch(at + bytes - 1);
        }
#else
    (void)e;
    (void)j;
    (void)c;
    (void)masks;
#endif
}

/* Pass 1, records first, first + step, ...: the check, the hits, the core
 * (every channel when eager) calibrated, T0; the result's header. */
static void pass_records(void *ctx, size_t first, size_t step, size_t end)
{
    const pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    for (size_t c = first; c < end; c += step) {
        if (c + 4 * step < end)
            prefetch_record(e, j, c + 4 * step, false);
        const source_t r = source_of(j, c);
        hitlist_t *h = &j->hits[c];
        float *w = j->traces + c * PSA_CHANNELS * j->per, core[ADF_CRYSTAL_MAX_SAMPLES];
        find_hits(e, &r, h);
        set_rounds(&e->cfg, h);
        h->n_samples = (uint16_t)r.n;
        if (j->eager) {
            for (unsigned k = 0; k < PSA_CHANNELS; k++)
                calibrate(e, &r, k, w + (size_t)k * r.n);
            h->have = ALL_CHANNELS;
        } else if (e->cfg.residual) {
            calibrate(e, &r, PSA_CORE, w + (size_t)PSA_CORE * r.n);
            h->have = UINT64_C(1) << PSA_CORE;
        } else {
            /* One round: the core for T0 only, not kept (pass 2
             * calibrates what the masks take, the core with include_core). */
            calibrate(e, &r, PSA_CORE, core);
            h->have = 0;
        }
        h->t0 = find_t0(e, h->have ? w + (size_t)PSA_CORE * r.n : core, r.n);
        if (j->out) {
            adf_psa_t *o = &j->out[c];
            /* The header and the hits to come (3 kB for all 64 a record:
             * memory traffic); hit[] beyond n_hits is left as it was. */
            memset(o, 0, offsetof(adf_psa_t, hit) + h->n * sizeof o->hit[0]);
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

/* The mask channels of hit k of record c (psa_engine_mask, the other hits
 * left out), each calibrated into the record's work traces if it is not
 * yet: their count. */
static unsigned hit_mask(const psa_engine_t *e, psa_job_t *j, size_t c, unsigned k, uint8_t ch[PSA_CHANNELS],
                         bool *own)
{
    hitlist_t *h = &j->hits[c];
    const unsigned s = h->seg[k], len = h->n_samples;
    float *work = j->traces + c * PSA_CHANNELS * j->per;
    bool others[PSA_SEGMENTS];
    memcpy(others, h->is_hit, sizeof others);
    others[s] = false;
    const unsigned nch = psa_engine_mask(e, s, others, ch, own);
    for (unsigned q = 0; q < nch; q++)
        if (!((h->have >> ch[q]) & 1u)) {
            const source_t r = source_of(j, c);
            calibrate(e, &r, ch[q], work + (size_t)ch[q] * len);
            h->have |= UINT64_C(1) << ch[q];
        }
    return nch;
}

/* m[t] -= energy x the basis signal `row` (S samples, one after the
 * other) placed `from` samples after the problem's first sample, t = 0
 * .. S - 1: psa_subtract_placed (psa_shared.h, the formula the device's
 * rounds use) sample by sample, written as its three runs so that the
 * interpolation is a loop that vectorises (the same floats, bit for bit:
 * tests/check_psa.c). */
void psa_subtract_row(float *m, const float *row, unsigned S, double from, float energy)
{
    int32_t k0;
    float f;
    psa_place_from(from, &k0, &f);
    /* t < lo: k0 + t < 0, or 0 with f = 0 (nothing); lo <= t < hi: between
     * samples; t >= hi: k0 + t >= S - 1 (the last sample). */
    long lo = k0 >= 0 ? 0 : -(long)k0;
    if ((long)k0 + lo == 0 && f == 0.0f)
        lo++;
    long hi = (long)S - 1 - (long)k0;
    if (hi < 0)
        hi = 0;
    if (hi > (long)S)
        hi = (long)S;
    if (lo > hi)
        lo = hi;
    const float *w = row + ((long)k0 + lo);
    for (long t = lo; t < hi; t++, w++)
        m[t] -= energy * (w[0] + f * (w[1] - w[0]));
    for (long t = hi; t < (long)S; t++)
        m[t] -= energy * row[S - 1];
}

/* Pass 2, records first, first + step, ...: their problems of the round
 * (one per hit and T0 shift, from j->start + j->first[c]), masks and
 * normalised, aligned traces; a channel is calibrated when first used.
 * From round 1 on (residual), hit k's traces are the record's less the
 * signal so far of every other hit found (round_hits): energy x the
 * aligned basis signal of its point, placed where it was found; from
 * round 2 hit k is aligned at the crystal's interaction time plus its own
 * point's offset. The mask channels only are made; a record's are
 * calibrated by psa_analyse_start (the records are not read after it),
 * in rounds 0 and 1 (psa_analyse_finish: residual, several hits). */
static void pass_problems(void *ctx, size_t first, size_t step, size_t end)
{
    const pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    psa_batch_t *b = j->batch;
    const unsigned S = e->samples, round = j->round;
    const int K = (int)e->cfg.t0_search;
    const uint32_t cand0 = b->cand_start[j->start];
    for (size_t c = first; c < end; c += step) {
        if (c + 2 * step < end)
            prefetch_record(e, j, c + 2 * step, true);
        hitlist_t *h = &j->hits[c];
        if (!h->redo)
            continue;
        const unsigned len = h->n_samples;
        float *work = j->traces + c * PSA_CHANNELS * j->per;
        size_t i = j->start + j->first[c];
        const double inter = round >= h->passes ? interaction_time(e, h) : NAN;
        for (unsigned k = 0; k < h->n; k++) {
            if (!((h->redo >> k) & 1u))
                continue;
            const unsigned s = h->seg[k];
            const double t0 = round < h->passes ? h->t0
                                                : psa_refined_t0(inter, e->edge[s][h->best[k]], e->basis_t0, h->at[k]);
            h->placed[k] = t0;
            uint8_t ch[PSA_CHANNELS];
            bool own;
            const unsigned nch = hit_mask(e, j, c, k, ch, &own);
            const float inv = 1.0f / h->energy[k];
            for (int shift = -K; shift <= K; shift++, i++) {
                psa_resample_t rs;
                resample_plan(&rs, t0 + shift, len, S);
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
                    resample(&rs, v, m);
                    for (unsigned o = 0; round > 0 && o < h->found; o++) {
                        if (o == k)
                            continue;
                        float row[PSA_MAX_SAMPLES];
                        psa_engine_aligned_row(e, h->seg[o], h->best[o], ch[q], row);
                        psa_subtract_row(m, row, S, t0 + shift - h->at[o], h->energy[o]);
                    }
                    for (unsigned t = 0; t < S; t++)
                        m[t] *= inv;
                }
            }
        }
        /* Round 0 of residual rounds: the other hits' channels too. */
        for (unsigned k = 0; round == 0 && h->rounds > 1 && k < h->n; k++) {
            uint8_t ch[PSA_CHANNELS];
            hit_mask(e, j, c, k, ch, NULL);
        }
    }
}

/* Append to the job's batch the problems of every record's hits of round
 * j->round: their count, or -1 (out of memory). */
static long build_round(const psa_engine_t *e, psa_job_t *j, struct tusk_pool *pool)
{
    psa_batch_t *b = j->batch;
    const size_t per_hit = 2 * (size_t)e->cfg.t0_search + 1;
    if (tusk_grow(&j->first, &j->first_cap, j->n + 1, sizeof *j->first) != 0)
        return -1;
    j->start = b->n;
    select_round(j);
    size_t total = 0;
    for (size_t c = 0; c < j->n; c++) {
        j->first[c] = total;
        total += (size_t)__builtin_popcountll(j->hits[c].redo) * per_hit;
    }
    j->first[j->n] = total;
    if (total == 0)
        return 0;
    if (total > LONG_MAX - b->n || psa_batch_reserve(b, b->n + total) != 0 ||
        (b->n + total > j->slot_cap && tusk_grow(&j->slots, &j->slot_cap, b->n + total, sizeof *j->slots) != 0))
        return -1;
    pass_t pass = {e, j};
    psa_parallel_blocks(pool, 0, j->n, total < SMALL_ROUND ? 1 : e->cfg.threads, pass_problems, &pass);
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
    j->round = 0;
    j->res_on = false;
    pass_t pass = {e, j};
    psa_parallel_blocks(pool, 0, n, e->cfg.threads, pass_records, &pass);
    j->part_n = 0;
    j->res_hits = j->res_floats = 0;
    if (!out)
        return TUSK_OK;
    /* The stats; the records of several rounds (residual) listed, with
     * room for each hit's mask channels (device_rounds). */
    psa_stats_t *st = j->stats;
    for (size_t c = 0; c < n; c++) {
        const hitlist_t *h = &j->hits[c];
        st->crystals++;
        st->hits += h->n;
        st->rejected_nonfinite += (h->rejected & PSA_REJECT_NONFINITE) != 0;
        st->rejected_range += (h->rejected & PSA_REJECT_RANGE) != 0;
        if (h->rounds <= 1)
            continue;
        if (j->part_n == j->part_cap && tusk_grow(&j->part, &j->part_cap, j->part_n + 1, sizeof *j->part) != 0)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu records of several hits)", j->part_n + 1);
        j->part[j->part_n++] = (res_part_t){c, j->res_hits, j->res_floats};
        j->res_hits += h->n;
        for (unsigned k = 0; k < h->n; k++)
            j->res_floats += RES_ROOM(e, h->seg[k], h->n_samples);
    }
    return TUSK_OK;
}

/* The records are not read after this. */
static void job_let_go(psa_job_t *j)
{
    j->crystals = NULL;
    j->views = NULL;
}

/* Hit k of record c's result: its point q of segment s, where its signal
 * lies (t0, samples), its FoM; the first search of a hit appends it
 * (hits are found in order), a later one rewrites it. 1 when a first
 * search's mask fell back to the hit's own trace (counted by the caller). */
static unsigned write_hit(const psa_engine_t *e, adf_psa_t *o, const hitlist_t *h, unsigned k, uint32_t q, bool own,
                          double t0, float fom)
{
    const unsigned s = h->seg[k];
    const bool first_search = k == o->n_hits;
    adf_psa_hit_t *hit = &o->hit[first_search ? o->n_hits++ : k];
    float pos[3];
    det_basis_position(e->basis, s, q, pos);
    hit->status = own ? PSA_HIT_OWN_TRACE : 0;
    hit->segment = (int16_t)s;
    hit->crystal = (int16_t)o->crystal_id;
    hit->x = pos[0];
    hit->y = pos[1];
    hit->z = pos[2];
    hit->energy = h->energy[k];
    hit->time = (float)(psa_hit_t0(e, t0, s, q) * e->sample_ns);
    hit->fom = fom;
    return first_search && own;
}

/* The searched round's results to records first, first + step, ... < end
 * (each record's own: its result, its hits' points and placements), in
 * the order the problems were made (for each hit the best of its T0
 * shifts); residual: each hit's point and placement, for the next round.
 * On the engine's threads: the hits flagged are counted into the stats
 * once a call. */
static void take_records(void *ctx, size_t first, size_t step, size_t end)
{
    const pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    const size_t per_hit = 2 * (size_t)e->cfg.t0_search + 1;
    const psa_batch_t *b = j->batch;
    uint64_t own_trace = 0;
    for (size_t c = first; c < end; c += step) {
        hitlist_t *h = &j->hits[c];
        if (!h->redo)
            continue;
        size_t i0 = j->start + j->first[c];
        for (unsigned k = 0; k < h->n; k++) {
            if (!((h->redo >> k) & 1u))
                continue;
            size_t bi = i0;
            for (size_t i = i0; i < i0 + per_hit; i++)
                if (b->fom[i] < b->fom[bi])
                    bi = i;
            int shift = (int)(bi - i0) - (int)e->cfg.t0_search;
            uint32_t q = b->best[bi];
            const double t0 = h->placed[k] + shift;
            own_trace += write_hit(e, &j->out[c], h, k, q, j->slots[bi].own_trace, t0, b->fom[bi]);
            h->best[k] = q;
            h->at[k] = t0;
            i0 += per_hit;
        }
        const unsigned top = 64u - (unsigned)__builtin_clzll(h->redo);
        if (top > h->found)
            h->found = top;
    }
    if (own_trace)
        __atomic_fetch_add(&j->stats->own_trace, own_trace, __ATOMIC_RELAXED);
}

static void take_results(const psa_engine_t *e, psa_job_t *j, struct tusk_pool *pool)
{
    const uint64_t t0 = tusk_clock_ns();
    pass_t pass = {e, j};
    const size_t problems = j->batch->n - j->start;
    psa_parallel_blocks(pool, 0, j->n, problems < SMALL_ROUND ? 1 : e->cfg.threads, take_records, &pass);
    j->stats->ns_take += tusk_clock_ns() - t0;
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

/* ---- positions between the grid points (subgrid = yes) ------------------------ */

typedef struct subgrid_pass {
    const psa_engine_t *e;
    psa_job_t *j;
    int failed;                /* out of memory for a share's working memory */
} subgrid_pass_t;

/* Records first, first + step, ... < end: each searched hit's position
 * fitted between the grid points (psa_subgrid), written into its result;
 * the search's point, counted (stats' subgrid_kept), where the crystal
 * has no interaction time or a mask channel was not calibrated (neither
 * happens to a record with hits). */
static void subgrid_records(void *ctx, size_t first, size_t step, size_t end)
{
    subgrid_pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    void *scratch = NULL;
    uint64_t kept = 0;
    for (size_t c = first; c < end; c += step) {
        const hitlist_t *h = &j->hits[c];
        adf_psa_t *o = &j->out[c];
        if (h->rejected || h->n == 0 || o->n_hits != h->n)
            continue;
        double inter = h->n > 1 && h->rounds > 1 ? interaction_time(e, h) : NAN;
        if (!isfinite(inter)) /* the strongest hit's interaction, in the record's samples */
            inter = psa_hit_t0(e, h->at[0], h->seg[0], h->best[0]) + e->cfg.pretrigger;
        bool calibrated = isfinite(inter);
        for (unsigned k = 0; calibrated && k < h->n; k++) {
            bool others[PSA_SEGMENTS];
            uint8_t ch[PSA_CHANNELS];
            memcpy(others, h->is_hit, sizeof others);
            others[h->seg[k]] = false;
            const unsigned nch = psa_engine_mask(e, h->seg[k], others, ch, NULL);
            for (unsigned q = 0; q < nch; q++)
                calibrated &= (h->have >> ch[q]) & 1u;
        }
        if (!calibrated) {
            kept += h->n;
            continue;
        }
        if (!scratch && !(scratch = calloc(1, psa_subgrid_scratch_bytes()))) {
            __atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
            return;
        }
        const psa_subgrid_crystal_t x = {h->n, h->seg, h->energy, h->best, h->is_hit, inter,
                                         j->traces + c * PSA_CHANNELS * j->per, h->n_samples, scratch};
        float pos[PSA_SEGMENTS][3];
        psa_subgrid(e, &x, pos);
        for (unsigned k = 0; k < h->n; k++) {
            o->hit[k].x = pos[k][0];
            o->hit[k].y = pos[k][1];
            o->hit[k].z = pos[k][2];
        }
    }
    free(scratch);
    if (kept)
        __atomic_fetch_add(&j->stats->subgrid_kept, kept, __ATOMIC_RELAXED);
}

/* The job's rounds are over: with subgrid, its hits' positions fitted
 * between the grid points. */
static int job_done(psa_engine_t *e, psa_job_t *j, tusk_error_t *err)
{
    if (!e->cfg.subgrid || !j->out || j->n == 0)
        return TUSK_OK;
    const uint64_t t0 = tusk_clock_ns();
    subgrid_pass_t pass = {e, j, 0};
    psa_parallel_blocks(psa_engine_pool(e), 0, j->n, e->cfg.threads, subgrid_records, &pass);
    j->stats->ns_take += tusk_clock_ns() - t0;
    if (pass.failed)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu bytes for the sub-grid fit)",
                              psa_subgrid_scratch_bytes());
    return TUSK_OK;
}

/* ---- residual's later rounds on the backend's device ---------------------------- */

/* Whether the later rounds go to the backend's device (psa_cl with double
 * precision; psa_private.h): the same problems as the host's rounds,
 * made there from the records' calibrated traces, all the rounds at once. */
static bool rounds_on_device(const psa_engine_t *e, const psa_backend_t *be)
{
    return e->cfg.residual && e->cfg.mode == PSA_MODE_FULL && be->ext && be->ext->res_begin;
}

/* The problems hit k of a record takes in its rounds after the first,
 * `per` T0 shifts each (set_rounds: rounds 1, 3, ... search hits 1 .. n -
 * 1, rounds 2, 4, ... hit 0). */
static uint64_t later_searches(const hitlist_t *h, unsigned k, size_t per)
{
    return (uint64_t)(k == 0 ? (h->rounds - 1) / 2 : h->rounds / 2) * per;
}

/* Records part[first], first + step, ... < end into the device's view:
 * each one's T0, its hits (segment, energy, point and placement so far,
 * mask) and each hit's mask channels' calibrated traces. */
static void res_fill(void *ctx, size_t first, size_t step, size_t end)
{
    const pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    const psa_res_view_t *v = &j->res_view;
    uint64_t terms = 0;
    for (size_t i = first; i < end; i += step) {
        const res_part_t *rp = &j->part[i];
        const hitlist_t *h = &j->hits[rp->c];
        const unsigned len = h->n_samples;
        const float *work = j->traces + rp->c * PSA_CHANNELS * j->per;
        v->records[i] = (psa_dev_res_record_t){h->t0, NAN, (tusk_u32)rp->hit, h->n, len, 0};
        size_t tr = rp->trace;
        for (unsigned k = 0; k < h->n; k++) {
            bool others[PSA_SEGMENTS];
            memcpy(others, h->is_hit, sizeof others);
            others[h->seg[k]] = false;
            uint8_t ch[PSA_CHANNELS];
            const unsigned nch = psa_engine_mask(e, h->seg[k], others, ch, NULL);
            uint64_t mask = 0;
            for (unsigned q = 0; q < nch; q++) {
                mask |= UINT64_C(1) << ch[q];
                memcpy(v->traces + tr + (size_t)q * len, work + (size_t)ch[q] * len, len * sizeof(float));
            }
            v->hits[rp->hit + k] = (psa_dev_res_hit_t){h->at[k], h->placed[k], (tusk_u32)i, h->seg[k], h->energy[k],
                                                       1.0f / h->energy[k], h->best[k], 0,
                                                       (tusk_u32)(mask & 0xFFFFFFFFu), (tusk_u32)(mask >> 32),
                                                       (tusk_u32)tr, 0};
            tr += RES_ROOM(e, h->seg[k], len);
            terms += later_searches(h, k, 2 * (size_t)e->cfg.t0_search + 1) * nch * e->samples * e->npoints[h->seg[k]];
        }
    }
    __atomic_fetch_add(&j->stats->fom_terms, terms, __ATOMIC_RELAXED);
}

/* Records part[first], first + step, ... < end: each hit's last search,
 * as take_records writes a round's. */
static void res_take(void *ctx, size_t first, size_t step, size_t end)
{
    const pass_t *p = ctx;
    const psa_engine_t *e = p->e;
    psa_job_t *j = p->j;
    uint64_t own_trace = 0;
    for (size_t i = first; i < end; i += step) {
        const res_part_t *rp = &j->part[i];
        hitlist_t *h = &j->hits[rp->c];
        adf_psa_t *o = &j->out[rp->c];
        for (unsigned k = 0; k < h->n; k++) {
            const psa_dev_res_hit_t *d = &j->res_view.hits[rp->hit + k];
            bool others[PSA_SEGMENTS], own;
            uint8_t ch[PSA_CHANNELS];
            memcpy(others, h->is_hit, sizeof others);
            others[h->seg[k]] = false;
            psa_engine_mask(e, h->seg[k], others, ch, &own);
            own_trace += write_hit(e, o, h, k, d->best, own, d->at, tusk_bits_f32(d->fom_bits));
            h->best[k] = d->best;
            h->at[k] = d->at;
        }
    }
    if (own_trace)
        __atomic_fetch_add(&j->stats->own_trace, own_trace, __ATOMIC_RELAXED);
}

/* The device's later rounds done: every hit's last search into the
 * results; the job's rounds over (job_done). */
static int res_finish(psa_engine_t *e, psa_job_t *j, tusk_error_t *err)
{
    const uint64_t t0 = tusk_clock_ns();
    pass_t pass = {e, j};
    psa_parallel_blocks(psa_engine_pool(e), 0, j->part_n, j->part_n * 4 < SMALL_ROUND ? 1 : e->cfg.threads,
                        res_take, &pass);
    j->stats->ns_take += tusk_clock_ns() - t0;
    j->round = j->res_rounds;
    return job_done(e, j, err);
}

/* After round 0: the later rounds of the records of several hits handed
 * to the device, submitted (may_submit: collected by psa_analyse_step or
 * _finish) or waited for and taken. *used false: no record takes part
 * (nothing done). */
static int device_rounds(psa_engine_t *e, const psa_backend_t *be, psa_job_t *j, bool may_submit, bool *used,
                         tusk_error_t *err)
{
    const uint64_t t0 = tusk_clock_ns();
    const size_t per = 2 * (size_t)e->cfg.t0_search + 1;
    uint64_t problems = 0;
    unsigned rounds = 0;
    for (size_t i = 0; i < j->part_n; i++) {
        const hitlist_t *h = &j->hits[j->part[i].c];
        rounds = h->rounds;
        for (unsigned k = 0; k < h->n; k++)
            problems += later_searches(h, k, per);
    }
    *used = j->part_n > 0;
    if (!*used)
        return TUSK_OK;
    int rc = be->ext->res_begin(be->ctx, j->batch, j->part_n, j->res_hits, j->res_floats, &j->res_view, err);
    if (rc != TUSK_OK)
        return rc;
    pass_t pass = {e, j};
    psa_parallel_blocks(psa_engine_pool(e), 0, j->part_n, j->part_n * 4 < SMALL_ROUND ? 1 : e->cfg.threads,
                        res_fill, &pass);
    if ((rc = be->ext->res_submit(be->ctx, j->batch, rounds, err)) != TUSK_OK)
        return rc;
    j->stats->problems += problems;
    j->res_rounds = rounds;
    j->stats->ns_rounds += tusk_clock_ns() - t0;
    if (may_submit) {
        j->res_on = true;
        j->submitted = true;
        return TUSK_OK;
    }
    if ((rc = be->ext->res_wait(be->ctx, j->batch, err)) != TUSK_OK)
        return rc;
    return res_finish(e, j, err);
}

/* The rounds from j->round on, each searching every hit of the records
 * that take part in it (round 0 all of them, the refinements those of
 * several hits), made, searched and taken; or (may_submit) round 0
 * submitted, psa_analyse_finish doing the rest. */
static int run_rounds(psa_engine_t *e, const psa_backend_t *be, psa_job_t *j, bool may_submit, tusk_error_t *err)
{
    struct tusk_pool *pool = psa_engine_pool(e);
    for (;; j->round++) {
        if (j->round == 1 && rounds_on_device(e, be)) {
            bool used;
            int rc = device_rounds(e, be, j, may_submit, &used, err);
            if (rc != TUSK_OK || used)
                return rc;
        }
        psa_batch_clear(j->batch);
        const uint64_t t0 = tusk_clock_ns();
        long nprob = build_round(e, j, pool);
        if (j->round > 0)
            j->stats->ns_rounds += tusk_clock_ns() - t0;
        if (nprob < 0)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (search problems)");
        if (nprob == 0)
            return job_done(e, j, err);
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
        take_results(e, j, pool);
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

int psa_analyse_start(psa_engine_t *e, const psa_backend_t *be, psa_job_t *job, const adf_crystal_view_t *in,
                      size_t n, adf_psa_t *out, psa_stats_t *stats, tusk_error_t *err)
{
    int rc = check_mode(e, be, err);
    if (rc == TUSK_OK)
        rc = job_begin(e, job, NULL, in, n, out, stats, psa_engine_pool(e), err);
    if (rc == TUSK_OK) {
        /* Round 0 is submitted; the refinement rounds, if any, are
         * searched by psa_analyse_finish. */
        const bool may_submit = be->submit && be->collect && e->cfg.mode == PSA_MODE_FULL;
        rc = run_rounds(e, be, job, may_submit, err);
    }
    job_let_go(job);
    return rc;
}

/* The round submitted waited for and taken; the next ones submitted
 * (submit) or searched at once. */
static int collect_round(psa_engine_t *e, const psa_backend_t *be, psa_job_t *job, bool submit, tusk_error_t *err)
{
    if (!job->submitted)
        return TUSK_OK;
    job->submitted = false;
    int rc = be->collect(be->ctx, job->batch, err);
    if (rc != TUSK_OK)
        return rc;
    if (job->res_on) { /* the device's later rounds: the job is done */
        job->res_on = false;
        return res_finish(e, job, err);
    }
    const psa_batch_t *b = job->batch;
    for (size_t i = 0; i < b->n; i++)
        job->stats->fom_terms += (uint64_t)b->n_channels[i] * b->samples * e->npoints[b->segment[i]];
    take_results(e, job, psa_engine_pool(e));
    /* The refinement rounds (residual): the next one submitted, or all
     * searched one after another. */
    job->round++;
    return run_rounds(e, be, job, submit, err);
}

int psa_analyse_step(psa_engine_t *e, const psa_backend_t *be, psa_job_t *job, tusk_error_t *err)
{
    return collect_round(e, be, job, true, err);
}

int psa_analyse_finish(psa_engine_t *e, const psa_backend_t *be, psa_job_t *job, tusk_error_t *err)
{
    return collect_round(e, be, job, false, err);
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
    free(j->part);
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
    return (psa_backend_t){reference_search, NULL, true, NULL, NULL, NULL};
}

psa_backend_t psa_backend_fast(unsigned threads)
{
    return (psa_backend_t){fast_search, (void *)(uintptr_t)threads, true, NULL, NULL, NULL};
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
    for (size_t c = 0; rc == TUSK_OK && c < n; c++) /* every hit once, as residual = no */
        j.hits[c].passes = j.hits[c].rounds = 1;
    if (rc == TUSK_OK && build_round(e, &j, e->pool) < 0)
        rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory (search problems)");
    free(j.mem);
    free(j.first);
    free(j.slots);
    return rc;
}
