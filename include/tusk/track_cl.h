/* track_cl.h - the OpenCL backend of gamma-ray tracking (libtusk-tracking;
 * the kernel is tracking/kernels/track.cl, the design tracking/README.md).
 *
 * track_cl_run does what track_run does, with the search over orders on
 * a device: the events of the batch are clustered on the host (both
 * passes, as track_run, on the tracker's threads: track_set_threads),
 * then every cluster of 2+ points of a pass goes to one kernel launch
 * (queued in pieces of at most 65536 clusters, packed by the threads
 * into pinned host memory): one
 * work-group a cluster, its work-items over the permutation ranks
 * (decoded in the factorial number system: rank r is the r-th order in
 * lexicographic order), each keeping its lowest FoM, then a reduction in
 * local memory to the lowest FoM, the lowest rank on ties. Only the rank
 * comes back: the host computes that order's FoM in double precision with
 * track_fom and accepts or rejects it exactly as the CPU reference does.
 * The kernel computes in single precision, so where two orders' FoMs are
 * within about 1e-5 (relative) of each other the device may pick the
 * other one of the pair (a near-tie; tests/check_tracking_cl.c bounds
 * them).
 *
 * A track_cl_t holds one device context and its buffers and a pointer to
 * the tracker (which must outlive it): use it from one thread at a time. */
#ifndef TUSK_TRACK_CL_H
#define TUSK_TRACK_CL_H

#include <tusk/export.h>

#include <stdint.h>

#include <tusk/error.h>
#include <tusk/track.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct track_cl track_cl_t;

/* Choose a device from `setting` (tusk/cl.h syntax: any, gpu, cpu, N,
 * P.D, a name substring, :K or :instance; NULL or "": $TUSK_CL_DEVICE,
 * else any), `instance` standing in for ":instance"; build the kernel
 * (the build log in the message on failure) and upload the attenuation
 * table. Errors: TUSK_ENODEV (the message lists the devices there are),
 * TUSK_EBUILD, TUSK_ECL (the call, its error code and the device),
 * TUSK_ELIMIT, TUSK_ENOMEM. */
TUSK_API int track_cl_new(track_cl_t **out, track_t *tracker, const char *setting, unsigned instance,
                          tusk_error_t *err);
TUSK_API void track_cl_destroy(track_cl_t **cl);

/* Track every event of the batch (results and statistics as track_run),
 * or events first .. first + n - 1 (as track_run_range). */
TUSK_API int track_cl_run(track_cl_t *cl, track_batch_t *batch, tusk_error_t *err);
TUSK_API int track_cl_run_range(track_cl_t *cl, track_batch_t *batch, size_t first, size_t n, tusk_error_t *err);

/* "NAME (PLATFORM, driver VERSION); 64 work-items a cluster", for logs. */
TUSK_API const char *track_cl_describe(const track_cl_t *cl);

/* Since track_cl_new: kernel launches, clusters sent to the device,
 * orders they have (sum of n!), kernel time from profiling events. */
typedef struct track_cl_stats {
    uint64_t launches, clusters, orders;
    double kernel_ms;
} track_cl_stats_t;

TUSK_API void track_cl_stats(const track_cl_t *cl, track_cl_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif
