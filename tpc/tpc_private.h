/* tpc_private.h - what the files of libtusk-tpc share (not installed). */
#ifndef TUSK_TPC_PRIVATE_H
#define TUSK_TPC_PRIVATE_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pool.h"
#include "base/rng.h"
#include "tpc_shared.h"
#include "tusk/tpc.h"

_Static_assert(TPC_ROWS == ADF_TPC_ROWS && TPC_SLICES == ADF_TPC_SLICES, "the frames and the algorithm agree");
_Static_assert((int)TPC_REFERENCE == (int)ADF_TPC_REFERENCE && (int)TPC_FAST == (int)ADF_TPC_FAST &&
                   (int)TPC_OPENCL == (int)ADF_TPC_OPENCL,
               "backend codes");

/* ---- results ---- */

/* Tracks and hits written by one thread. */
typedef struct tpc_chunk {
    adf_tpc_track_t *t;
    size_t nt, cap_t;
    adf_tpc_hit_t *h;
    size_t nh, cap_h;
} tpc_chunk_t;

/* Where slice i's tracks are. */
typedef struct tpc_slice_res {
    uint32_t chunk;
    uint32_t n_tracks, n_hits;
    size_t t_off, h_off;
    uint32_t n_start, n_tracklets;
} tpc_slice_res_t;

struct tpc_result {
    tpc_slice_res_t *sl;
    size_t n_sl, cap_sl;
    tpc_chunk_t *chunk;
    unsigned n_chunks, cap_chunks;
};

/* Slice entries for n slices and n_chunks empty chunks (capacity kept). */
int tpc_result_reset(tpc_result_t *res, size_t n_slices, unsigned n_chunks, tusk_error_t *err);
/* Room for `more` tracks / hits at the end of a chunk. */
int tpc_chunk_room(tpc_chunk_t *ch, size_t more_tracks, size_t more_hits);

/* ---- settings as the arithmetic uses them ---- */

TUSK_INTERNAL void tpc_params_of(const tpc_config_t *cfg, tpc_params_t *p);
/* The slice's rotation: alpha = 20 (s mod 18) + 10 degrees. */
TUSK_INTERNAL void tpc_slice_angle(unsigned slice, double *cos_a, double *sin_a);

/* ---- step 0: the launch data of a batch (tpc_data.c) ---- */

/* Every backend tracks from this: the slices' rows, grids and compressed
 * clusters in launch order (slice after slice, row after row, bin after
 * bin; within a bin, frame order). */
typedef struct tpc_data {
    size_t n_slices;
    uint64_t n_clusters, n_bins;
    tpc_dev_slice_t *slice;    /* n_slices */
    tpc_row_t *row;            /* n_slices x TPC_ROWS */
    uint32_t *id;              /* clusters: their index in their slice's frame */
    uint32_t *yz;              /* clusters: y | z << 16, 16 bits each (own, or the caller's) */
    uint32_t *row_of;          /* clusters: their launch row (slice index x 159 + row) (own, or the caller's) */
    uint16_t *fbin;            /* FirstClusterInBin, in-row indices (own, or the caller's) */
    /* own storage */
    size_t cap_slices;
    uint64_t cap_clusters, cap_bins;
    uint32_t *own_yz, *own_row_of, *tmp, *tmpv, *cursor; /* tmp, tmpv: each cluster's bin, its yz (frame order) */
    uint16_t *own_fbin;
    int *status;               /* per slice, while planning and filling */
    char (*why)[160];
    const tpc_batch_t *batch;  /* the run in progress */
    double min_bin;
} tpc_data_t;

TUSK_INTERNAL void tpc_data_free(tpc_data_t *d);
/* Step 0, first half: each slice's rows (cluster counts, compression,
 * grid) and the launch's sizes (n_clusters, n_bins), on `pool` (NULL: this
 * thread). TUSK_ELIMIT for a row of more than TPC_MAX_ROW_CLUSTERS
 * clusters, naming it; TUSK_ENOMEM. */
TUSK_INTERNAL int tpc_data_plan(tpc_data_t *d, const tpc_batch_t *b, double min_bin_mm, tusk_pool_t *pool,
                                tusk_error_t *err);
/* Second half: the clusters sorted by row and bin, compressed, and the
 * FirstClusterInBin entries, into the caller's arrays (n_clusters,
 * n_clusters and n_bins entries; pinned buffers of the OpenCL backend) or,
 * for NULL, d's own. */
TUSK_INTERNAL int tpc_data_fill(tpc_data_t *d, uint32_t *yz, uint32_t *row_of, uint16_t *fbin, tusk_pool_t *pool,
                                tusk_error_t *err);

/* ---- steps I-VI on the CPU, one slice (tpc_slice.c) ---- */

typedef struct tpc_work {
    uint32_t *start;           /* the start hits' launch cluster indices */
    size_t cap_start;
    tpc_tracklet_t *tracklet;
    uint16_t *hits;            /* [tracklet][row] */
    size_t cap_tracklets;
    uint32_t *sel;             /* a tracklet's selected clusters */
    size_t cap_sel;
    double t_nf, t_nc, t_sh, t_tc, t_ts, t_out; /* seconds, summed */
} tpc_work_t;

TUSK_INTERNAL void tpc_work_free(tpc_work_t *w);

/* The launch-wide link and weight arrays the CPU steps write (one entry a
 * cluster of the data). */
typedef struct tpc_cpu_arrays {
    uint16_t *up, *dn;
    uint32_t *link, *weight;
    size_t cap;
} tpc_cpu_arrays_t;
TUSK_INTERNAL void tpc_cpu_arrays_free(tpc_cpu_arrays_t *a);
TUSK_INTERNAL int tpc_cpu_arrays_room(tpc_cpu_arrays_t *a, uint64_t n_clusters);

/* Steps I-V and VI of slice s of the data: its tracks appended to ch, r
 * filled (but r->chunk). TUSK_ELIMIT for more than TPC_MAX_TRACKLETS start
 * hits, TUSK_ENOMEM. */
int tpc_cpu_slice(tpc_work_t *w, const tpc_data_t *d, tpc_cpu_arrays_t *a, size_t s, const tpc_params_t *p,
                  const tpc_batch_t *b, tpc_chunk_t *ch, tpc_slice_res_t *r, tusk_error_t *err);

/* Step VI for one track: the record and its hits from a tracklet and the
 * selected rows (launch cluster indices << 1 | shared, rising rows). */
void tpc_output_track(const tpc_data_t *d, size_t s, const tpc_slice_t *slice, const tpc_tracklet_t *tl,
                      uint32_t tracklet_id, const uint32_t *hits, uint32_t n_hits, adf_tpc_track_t *out_track,
                      adf_tpc_hit_t *out_hits, const double *cos_sin);

/* The kernels' source, compiled into the library (Makefile.am's TPC_KERNEL_PARTS, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_tpc_kernel_source[];
TUSK_INTERNAL extern const unsigned long tusk_tpc_kernel_source_size;

#endif
