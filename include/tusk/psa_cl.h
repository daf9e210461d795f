/* psa_cl.h - the OpenCL backend of the PSA grid search (libtusk-psa,
 * issue 8; the kernels are psa/kernels/psa.cl, the design psa/README.md
 * "OpenCL backend").
 *
 * psa_cl_new uploads the engine's basis to a device once (every segment's
 * block as the engine lays it out, [channel][sample][point]) and builds
 * the kernels for it; psa_cl_search then runs whole batches: the problems
 * are grouped by hit segment on the host (a permutation keeps the batch's
 * order for the results), uploaded in chunks that overlap the kernels of
 * the chunk before, searched over every basis point of their segment, and
 * the minimum is taken on the device, so that only each problem's best
 * index and FoM come back.
 *
 * Results follow tusk/psa.h: best[i] is the index of the best point within
 * the hit segment, fom[i] its FoM, the lowest index on ties; the FoM sums
 * are floats in the reference's order (the problem's channels, ascending,
 * then samples). |d|^p is exact for p = 1 and 2 (|d|, d * d); otherwise
 * native_powr on GPUs and a polynomial exp2(p log2 |d|) on other devices,
 * checked by psa_cl_new against pow on the device (each term within 2e-6
 * relative, else powr is used): FoMs agree with psa_search_reference's
 * within PSA_FOM_TOLERANCE (relative; up to 4e-7 measured) and points closer
 * than that may come out in the other order. A FoM that is NaN counts as
 * +inf, as in the reference (a problem whose every FoM is NaN or inf gets
 * point 0, inf).
 *
 * Only the full grid search: a batch with candidate lists (the adaptive
 * mode) is refused, so psa_backend_cl's .candidates is false and
 * psa_analyse refuses the adaptive mode with it.
 *
 * A psa_cl_t holds one device context and its buffers: use it from one
 * thread at a time (one per actor instance; instances spread over GPUs
 * with a setting such as "gpu:instance"). It keeps a pointer to the
 * engine, which must outlive it; the engine's basis is not read after
 * psa_cl_new. */
#ifndef TUSK_PSA_CL_H
#define TUSK_PSA_CL_H

#include <tusk/export.h>

#include <stdint.h>

#include <tusk/error.h>
#include <tusk/psa.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct psa_cl psa_cl_t;

/* Choose a device from `setting` (tusk/cl.h syntax: any, gpu, cpu,
 * accelerator, N, P.D, a name substring, each but N and P.D with :K or
 * :instance; NULL or "": $TUSK_CL_DEVICE, else any), `instance` standing
 * in for ":instance"; build the kernels for the engine's samples and
 * exponent; upload the basis. Errors: TUSK_ENODEV (no device matches; the
 * message lists those there are), TUSK_EBUILD (with the build log),
 * TUSK_ELIMIT (the basis does not fit the device), TUSK_ECL (an OpenCL
 * call failed: the message names it, its error code and the device),
 * TUSK_ENOMEM. Environment, for tuning and tests (TUSK_EPARAM when
 * malformed): TUSK_PSA_CL_POW = powr | native | poly, the power function
 * (still checked); TUSK_PSA_CL_WG, points a work-group (a power of two,
 * 128); TUSK_PSA_CL_PG, problems a work-group (1 to 32, 8);
 * TUSK_PSA_CL_CHUNK, problems a chunk (automatic: a quarter of the batch,
 * 2048 to 16384); TUSK_PSA_CL_PART_BYTES, bytes a basis buffer at most
 * (the device's largest allocation); TUSK_PSA_CL_RESIDUAL = device | host,
 * where residual subtraction's rounds after the first are made (device,
 * the default, where it has double precision and the basis is one
 * buffer: all of a batch's in one submission, the host's results bit for
 * bit; psa/README.md). */
TUSK_API int psa_cl_new(psa_cl_t **out, const psa_engine_t *engine, const char *setting, unsigned instance,
                        tusk_error_t *err);
TUSK_API void psa_cl_destroy(psa_cl_t **cl);

/* Fill best[] and fom[] of every problem of the batch (none for n = 0).
 * TUSK_EINVAL (nothing is changed) when the batch's samples differ from
 * the engine's, a problem's segment has no basis points, its channels are
 * not ascending basis channels, or a problem has a candidate list
 * (cand != NULL and a non-empty range: full search only); TUSK_ELIMIT or
 * TUSK_ECL from the device. Device buffers grow with the batches. */
TUSK_API int psa_cl_search(psa_cl_t *cl, psa_batch_t *batch, tusk_error_t *err);

/* psa_cl_search in two halves, so that the device searches one batch
 * while the host prepares the next: psa_cl_submit checks the batch as
 * psa_cl_search does (nothing is changed when it is refused) and hands it
 * to the psa_cl_t's own submitter thread, which plans, packs and enqueues
 * its search, batch after batch in the order submitted, while the caller
 * goes on; the batch must be left unchanged until psa_cl_collect, which
 * waits for the OLDEST batch submitted (TUSK_EINVAL for another one) and
 * fills its best[] and fom[]. PSA_JOBS_IN_FLIGHT batches may be submitted
 * at once (TUSK_EINVAL for one more): a later one's packing and uploads
 * overlap the earlier ones' kernels, and its kernels follow theirs on the
 * device without a gap. What fails on the device (TUSK_ELIMIT: no room
 * for the batch; TUSK_ECL) is reported by psa_cl_collect (or
 * psa_cl_search) and abandons every batch in flight. psa_cl_search runs
 * behind the batches in flight (which stay in flight; the device searches
 * them in order; it enqueues on the caller's thread, after the batches
 * handed over before) and refuses to run behind PSA_JOBS_IN_FLIGHT. Where
 * the submitter thread cannot start, psa_cl_submit enqueues itself and
 * reports those failures. */
TUSK_API int psa_cl_submit(psa_cl_t *cl, psa_batch_t *batch, tusk_error_t *err);
TUSK_API int psa_cl_collect(psa_cl_t *cl, psa_batch_t *batch, tusk_error_t *err);

/* The backend for psa_analyse (its engine must be cl's); .candidates is
 * false; .submit and .collect are psa_cl_submit and psa_cl_collect (so
 * psa_analyse_start leaves the search running). */
TUSK_API psa_backend_t psa_backend_cl(psa_cl_t *cl);

/* The device and the kernel's settings in words, for logs:
 * "NAME (PLATFORM, driver VERSION); 128 points x 8 problems a work-group,
 * native_powr (terms within 5.3e-07)". */
TUSK_API const char *psa_cl_describe(const psa_cl_t *cl);

/* Totals since psa_cl_new. launches: kernels enqueued (per chunk of a
 * batch a search - one per basis buffer where the basis had to be split
 * over several - and a reduction); problems: searched; times from the
 * device's profiling events: upload_ms the problem data (the basis upload
 * of psa_cl_new is not counted), kernel_ms both kernels, download_ms the
 * results. */
typedef struct psa_cl_stats {
    uint64_t launches, problems, batches;
    double upload_ms, kernel_ms, download_ms;  /* the device's (profiling events) */
    double submit_ms, wait_ms;   /* the host's: planning, packing and enqueueing batches; waiting for results */
} psa_cl_stats_t;

TUSK_API void psa_cl_stats(const psa_cl_t *cl, psa_cl_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif
