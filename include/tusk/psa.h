/* psa.h - pulse shape analysis by grid search (libtusk-psa; seed 002,
 * ch. 4): which basis point's signals best match a crystal's measured
 * traces, for every segment that collected net charge.
 *
 * Pipeline (psa_analyse), per data:crystal record:
 *   1. preprocessing: baseline (mean of the first baseline_samples) taken
 *      off every channel, ADC channels to keV (gain); T0 from the core's
 *      high-gain trace by a leading-edge fit (the line through the 10 %
 *      and 50 % crossings, extended to 0), minus the basis' own mean
 *      leading-edge offset; the traces resampled (linear interpolation)
 *      so sample 0 is T0. The basis is aligned the same way, point by
 *      point (psa_engine_new shifts each point's signals so that its core
 *      leading edge lies at the mean), so a trace is compared with every
 *      point at that point's own offset.
 *   2. hit segments: segment energy (the record's) >= threshold_kev, in
 *      decreasing energy. A record with a segment or core energy that is
 *      not finite, or beyond +-max_kev, is rejected instead (no hits; its
 *      psa_status says why, psa_stats_t counts it; psa_record_check).
 *   3. for each hit segment s a search problem: the mask channels (below)
 *      of the traces divided by s's energy, compared with every basis
 *      point of s by FoM = sum over mask channels and samples of
 *      |measured - basis|^p. full: every point (the global minimum);
 *      adaptive: every point of a coarse sub-grid (every second node
 *      along each axis), then every point within two grid steps of the
 *      coarse best. t0_search = k: the problem is also tried with the
 *      traces shifted by -k .. +k samples, the best of all kept.
 *      residual (yes by default; no: every hit searched once, on its
 *      traces as they are), in a crystal of several hits: the hits
 *      are searched in passes of two rounds, the strongest hit first,
 *      then the others together, each with the signal found so far of
 *      every other hit (energy x its best point's signal, where it was
 *      placed) taken off its traces; the first pass finds them (the
 *      strongest on its traces as they are), refine = r (1) passes
 *      search them again, aligned at the crystal's interaction time
 *      (where the sum of the hits' basis signals has the measured
 *      core's leading edge) plus the point's own offset. A round is one
 *      search of the round's hits of every record of a batch.
 *   4. output (adf_psa_t): per hit the segment, the best point's position,
 *      the segment energy, the time and the FoM. Times (the hit's, the
 *      core's) are ns after the key's timestamp, which marks the record's
 *      sample `pretrigger` (adf/FORMAT.md): the hit's is its interaction
 *      time, the trace's leading edge less the best point's own
 *      leading-edge offset; the core's the same with the basis' mean
 *      offset.
 *
 * Mask (which channels enter the FoM for hit segment s): `neighbours` -
 * the segments one sector to either side in s's ring and one ring
 * forward and back in s's sector; a front-ring hit (ring 0) also takes
 * the two diagonal segments of ring 1 (its neighbours are few). `square` -
 * the 3 x 3 block of sectors x rings around s. `all` - every segment.
 * Other hit segments are always left out; s itself and the core only
 * with include_hit / include_core. When that leaves no segment but s (every
 * mask segment is another hit), the hit's own trace is searched instead
 * (added where include_hit is off) and the hit is flagged
 * PSA_HIT_OWN_TRACE: its net-charge pulse shape still tells the radius and
 * depth, coarsely; a problem with no channel at all would match every
 * point with FoM 0 (a fake "perfect" point 0), and every backend refuses
 * one.
 *
 * Search backends share the psa_batch_t below: the reference
 * (psa_search_reference, plain loops, the oracle), the fast CPU path
 * (psa_search_fast: point-major vectorisable loops, early termination,
 * threads) and OpenCL (tusk/psa_cl.h). For each problem they return the
 * index of the best point within the hit segment and its FoM; ties go to
 * the lowest index. Their sums are floats in the same order (channel,
 * then sample), but powf and the device's power functions round
 * differently, so two points whose FoM differ by less than about 1e-5
 * relative may come out in either order (PSA_FOM_TOLERANCE).
 */
#ifndef TUSK_PSA_H
#define TUSK_PSA_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tusk/adf_crystal.h>
#include <tusk/adf_psa.h>
#include <tusk/basis.h>
#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PSA_SEGMENTS 36
#define PSA_CHANNELS 37            /* 36 segments + core (basis channels) */
#define PSA_CORE 36
#define PSA_MAX_SAMPLES 256        /* basis samples compared, at most */
#define PSA_FOM_TOLERANCE 1e-5     /* relative: FoMs closer than this may tie differently per backend */

/* adf_psa_hit_t.status: every segment of the hit's mask was another hit, so
 * the FoM compared the hit's own trace (and the core's with include_core)
 * only: a coarser position (psa/README.md, "Crowded hits"). */
#define PSA_HIT_OWN_TRACE 0x0001u
/* adf_psa_t.psa_status of a rejected record (psa_analyse leaves it without
 * hits; the psa actor and tusk-psa run count it and write no data:psa). */
#define PSA_REJECT_NONFINITE 0x0001u /* a segment or core energy is NaN or infinite */
#define PSA_REJECT_RANGE 0x0002u     /* one is beyond +-max_kev */
#define PSA_REJECTED (PSA_REJECT_NONFINITE | PSA_REJECT_RANGE)

enum psa_mode { PSA_MODE_FULL = 0, PSA_MODE_ADAPTIVE = 1 };
enum psa_mask { PSA_MASK_NEIGHBOURS = 0, PSA_MASK_SQUARE = 1, PSA_MASK_ALL = 2 };

typedef struct psa_config {
    double p;                  /* FoM exponent (0.3), in (0, 4] */
    enum psa_mode mode;        /* full */
    enum psa_mask mask;        /* neighbours */
    bool include_hit;          /* the hit segment's own trace in the FoM (no: the seed's best setting) */
    bool include_core;         /* the core's trace (no) */
    bool residual;             /* subtract each found signal before the next hit (yes) */
    unsigned refine;           /* residual, a crystal with several hits: passes searching each hit again
                                  with every other hit's signal subtracted (1) */
    bool subgrid;              /* each hit's position fitted between the grid points after the search, on the
                                  host (no; yes in preset precise) */
    unsigned t0_search;        /* also try shifts of +-1 .. +-t0_search samples (0) */
    double threshold_kev;      /* net-charge segment threshold (20) */
    double gain;               /* ADC channels per keV, segments and core high gain (2, as tusk-sim) */
    unsigned baseline_samples; /* samples averaged for the baseline (8) */
    unsigned pretrigger;       /* the record's sample taken at its key's timestamp (10, as tusk-sim): times
                                  in data:psa count from it */
    double max_kev;            /* a record with a segment or core energy beyond +-max_kev is rejected (1e5) */
    unsigned threads;          /* preprocessing threads of psa_analyse (0: one per CPU) */
} psa_config_t;

TUSK_API void psa_config_default(psa_config_t *cfg);
/* Keys: preset (default|precise: read first, the other keys override
 * it; precise = mask square, include_hit yes, refine 2, subgrid yes), p, mode
 * (full|adaptive), mask (neighbours|square|all), include_hit,
 * include_core, residual, refine, subgrid, t0_search, threshold_kev, gain,
 * baseline_samples, max_kev, threads, pretrigger. Absent keys keep cfg's
 * value; messages start with `origin` and name the key. */
TUSK_API int psa_config_read(psa_config_t *cfg, const tusk_params_t *params, const char *origin, tusk_error_t *err);
/* The keys psa_config_read reads (NULL-terminated), for an actor's list of
 * known parameters. */
TUSK_API const char *const *psa_config_keys(void);

/* ---- search problems ------------------------------------------------------- */

/* n problems; problem i: hit segment segment[i], n_channels[i] mask
 * channels channel[i * PSA_CHANNELS + j] (ascending), their normalised
 * traces at trace[(i * PSA_CHANNELS + j) * samples + t]. Results: best[i]
 * (point index within the segment) and fom[i]. With cand non-NULL,
 * problem i searches only points cand[cand_start[i] .. cand_start[i + 1])
 * of its segment, every point when that range is empty (the adaptive
 * mode's subsets; the CPU backends support them). */
typedef struct psa_batch {
    size_t n, cap;
    unsigned samples;
    uint16_t *segment;
    uint16_t *n_channels;
    uint8_t *channel;
    float *trace;
    uint32_t *best;
    float *fom;
    uint32_t *cand_start;      /* n + 1 entries, or NULL: every point */
    uint32_t *cand;
    size_t cand_cap;
} psa_batch_t;

TUSK_API int psa_batch_new(psa_batch_t **out, unsigned samples, size_t cap, tusk_error_t *err);
TUSK_API void psa_batch_destroy(psa_batch_t **batch);
/* Append an empty problem (grows the arrays): its index, or -1 (out of memory). */
TUSK_API long psa_batch_add(psa_batch_t *b, unsigned segment);
TUSK_API void psa_batch_clear(psa_batch_t *b);

/* ---- the engine -------------------------------------------------------------- */

typedef struct psa_engine psa_engine_t;

/* Uses (does not own) the basis: 36 segments, 37 channels, at most
 * PSA_MAX_SAMPLES samples. */
TUSK_API int psa_engine_new(psa_engine_t **out, const det_basis_t *basis, const psa_config_t *cfg, tusk_error_t *err);
TUSK_API void psa_engine_destroy(psa_engine_t **engine);
TUSK_API const psa_config_t *psa_engine_config(const psa_engine_t *e);
TUSK_API const det_basis_t *psa_engine_basis(const psa_engine_t *e);
TUSK_API unsigned psa_engine_samples(const psa_engine_t *e);
/* The signal every backend compares with (psa_engine_samples floats):
 * channel `channel` of point i of segment s, shifted so that its core
 * leading edge lies at psa_engine_mean_edge (step 1 above). */
TUSK_API void psa_engine_trace(const psa_engine_t *e, unsigned s, size_t i, unsigned channel, float *out);
/* The leading edge of point i of segment s's core signal in the basis
 * (samples after its interaction; psa_engine_mean_edge where it has
 * none), and the mean over the basis. */
TUSK_API double psa_engine_edge(const psa_engine_t *e, unsigned s, size_t i);
TUSK_API double psa_engine_mean_edge(const psa_engine_t *e);

/* The mask channels (ascending) for hit segment s, leaving out the
 * segments flagged in other_hits (may be NULL); their count, at least 1:
 * when no segment but s is left, s's own trace is among them and
 * *own_trace (may be NULL) is set (PSA_HIT_OWN_TRACE), else cleared. */
TUSK_API unsigned psa_engine_mask(const psa_engine_t *e, unsigned s, const bool other_hits[PSA_SEGMENTS],
                                  uint8_t channels[PSA_CHANNELS], bool *own_trace);

/* The input check of a record: 0 when every segment and core energy is
 * finite and within +-cfg->max_kev, else PSA_REJECT_NONFINITE or
 * PSA_REJECT_RANGE (the first bad value's), with `why` (may be NULL)
 * naming it: "segment 5 energy nan keV". */
TUSK_API unsigned psa_record_check(const psa_config_t *cfg, const adf_crystal_t *rec, char *why, size_t cap);

/* FoM of point `point` of problem i's segment (the reference's sum). */
TUSK_API float psa_fom(const psa_engine_t *e, const psa_batch_t *b, size_t i, uint32_t point);

/* The backends (fill best[] and fom[] of every problem). threads 0: one
 * per online CPU. Each refuses (TUSK_EINVAL, naming the problem, before
 * searching any) a batch of other samples than the basis', a problem of
 * a segment without basis points, or with no channel, more than
 * PSA_CHANNELS, or channels not ascending basis channels. */
TUSK_API int psa_search_reference(const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err);
TUSK_API int psa_search_fast(const psa_engine_t *e, psa_batch_t *b, unsigned threads, tusk_error_t *err);

/* A backend for psa_analyse. A backend may also search in two halves
 * (psa_cl: the device works while the host prepares the next batch):
 * submit starts a batch's search and returns, the batch left untouched
 * until collect, which waits for the oldest batch submitted and fills its
 * best[] and fom[]. NULL for the CPU backends. */
typedef struct psa_backend {
    int (*search)(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err);
    void *ctx;
    bool candidates;           /* supports candidate lists (adaptive mode) */
    int (*submit)(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err);
    int (*collect)(void *ctx, psa_batch_t *b, tusk_error_t *err);
    /* The library's own backends' further abilities (psa_cl: residual
     * subtraction's later rounds on the device); NULL for others. */
    const struct psa_backend_ext *ext;
} psa_backend_t;

/* The CPU backends as psa_backend_t (threads 0: one per online CPU). */
TUSK_API psa_backend_t psa_backend_reference(void);
TUSK_API psa_backend_t psa_backend_fast(unsigned threads);

typedef struct psa_stats {
    uint64_t crystals, hits, problems;   /* crystals: every record, rejected ones too */
    uint64_t fom_terms;        /* |a - b|^p terms evaluated (early termination not counted) */
    uint64_t own_trace;        /* hits flagged PSA_HIT_OWN_TRACE */
    uint64_t rejected_nonfinite, rejected_range; /* records rejected (PSA_REJECT_*) */
    uint64_t ns_rounds, ns_take; /* the calling thread's time making the search rounds' problems after the
                                    first (residual), and taking every round's results (ns) */
    uint64_t subgrid_kept;     /* subgrid: hits left at their search's point, not fitted (a record without
                                  an interaction time, or a mask channel not calibrated: neither expected) */
} psa_stats_t;

/* Analyse n crystals into out[0..n) (crystal ids, core energies and
 * times set; hits with has_fom; a rejected record's psa_status has
 * PSA_REJECT_* and no hits; hit[] beyond n_hits is not written).
 * TUSK_EINVAL for a record whose sample count does not fit (fewer than the basis' samples after T0), naming
 * crystal and index; adaptive mode needs backend->candidates. */
TUSK_API int psa_analyse(psa_engine_t *e, const psa_backend_t *backend, const adf_crystal_t *in, size_t n,
                         adf_psa_t *out, psa_stats_t *stats, tusk_error_t *err);

/* ---- straight from ADF frames, in a pipeline --------------------------------- */

/* psa_record_check of a record read in place (tusk/adf_crystal.h). */
TUSK_API unsigned psa_record_check_view(const psa_config_t *cfg, const adf_crystal_view_t *rec, char *why,
                                        size_t cap);

/* One batch of records under analysis: its working memory, problems and
 * where its results go, from psa_analyse_start to psa_analyse_finish.
 * Reused from batch to batch (the memory grows with them), with an
 * engine whose basis has as many samples as the one it was made with
 * (TUSK_EINVAL otherwise). */
typedef struct psa_job psa_job_t;

TUSK_API int psa_job_new(psa_job_t **out, const psa_engine_t *e, tusk_error_t *err);
TUSK_API void psa_job_destroy(psa_job_t **job);
/* Whether the job's search is pending: a round submitted, not waited
 * for yet (psa_analyse_step). */
TUSK_API bool psa_job_pending(const psa_job_t *job);

/* Jobs whose searches a backend with submit takes at once (psa_cl): a
 * caller keeps at most this many pending. */
#define PSA_JOBS_IN_FLIGHT 8

/* psa_analyse on n records read in place (adf_crystal_view), in steps.
 * psa_analyse_start runs steps 1 - 3 on the engine's threads, reading of
 * each record's traces only the samples it uses (the core's, and the mask
 * channels' of its hits), then the search: with a backend that has
 * submit, in full mode, the first round is submitted and the job is
 * pending (psa_job_pending); otherwise it is all done when
 * psa_analyse_start returns (out[] complete). A pending job goes on with
 * psa_analyse_step (same engine, backend and job), which waits for the
 * round submitted, takes its results and submits the residual mode's
 * next round if there is one (the job still pending), else completes
 * out[] and stats. psa_analyse_finish completes a job: waits for its
 * round submitted, then searches its further rounds at once, each behind
 * the searches of other jobs pending (which stay pending; at most
 * PSA_JOBS_IN_FLIGHT - 1 of them); a no-op for a job that is not
 * pending. The records' bytes are not read
 * after psa_analyse_start; out and stats must stay until the job is
 * done. The headers of out[] (crystal id, status, core energies and
 * times, psa_status of a rejected record) are set by psa_analyse_start.
 * Several jobs may be pending on one backend (at most
 * PSA_JOBS_IN_FLIGHT), so that the device searches one job's round while
 * the host prepares another's: their rounds must be waited for (step or
 * finish) in the order they were submitted (psa_cl refuses another
 * order, TUSK_EINVAL). A failed step or finish leaves the job finished,
 * its results incomplete; a device failure abandons every job pending
 * (their steps then fail). The results are those of psa_analyse on the
 * decoded records, bit for bit. */
TUSK_API int psa_analyse_start(psa_engine_t *e, const psa_backend_t *backend, psa_job_t *job,
                               const adf_crystal_view_t *in, size_t n, adf_psa_t *out, psa_stats_t *stats,
                               tusk_error_t *err);
TUSK_API int psa_analyse_step(psa_engine_t *e, const psa_backend_t *backend, psa_job_t *job, tusk_error_t *err);
TUSK_API int psa_analyse_finish(psa_engine_t *e, const psa_backend_t *backend, psa_job_t *job, tusk_error_t *err);

/* Steps 1 - 3 of psa_analyse without the search: append to `batch` the
 * problems of n crystals (every hit segment once, every T0 shift; no
 * residual subtraction or refinement, whatever the settings; no
 * candidate lists). For benchmarks and backend tests on
 * realistic problems. */
TUSK_API int psa_prepare(const psa_engine_t *e, const adf_crystal_t *in, size_t n, psa_batch_t *batch,
                         tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
