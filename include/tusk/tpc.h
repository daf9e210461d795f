/* tpc.h - libtusk-tpc: the ALICE High Level Trigger's TPC slice tracker
 * (Rohr 2010, seed 000; tusk's specification: ../shared/specs/trackers.md
 * section 1; the design: tpc/README.md).
 *
 * Each of the 36 TPC slices is tracked on its own, in the thesis's steps:
 *   0   initialisation: per row a grid of about as many bins as clusters,
 *       the clusters sorted by bin, y and z compressed to 16 bits;
 *   I   Neighbours Finder: for every cluster the pair of clusters in rows
 *       r - 2 and r + 2 that makes the straightest line;
 *   II  Neighbours Cleaner: only mutual links stay;
 *   III Start Hits Finder: clusters with an up link and no down link that
 *       start a chain of at least 4, in (row, cluster) order;
 *   IV  Tracklet Constructor: a Kalman filter fits each seed and extends it
 *       row by row, forward then backward; tracklets of 10 or more clusters
 *       mark their clusters with (length << 16 | id) by a maximum;
 *   V   Tracklet Selector: each tracklet keeps its own clusters and a few
 *       shared ones; segments of 10 or more become tracks;
 *   VI  output: tracks packed, clusters in global coordinates.
 *
 * Backends:
 *   reference  the steps on one thread, slice after slice
 *   fast       the same on CPU threads, a slice a thread at a time (the
 *              thesis's OpenMP over slices)
 *   opencl     steps I-V as kernels over all slices of a batch in one launch
 *              each: a work-item per cluster for I-III, per tracklet for IV
 *              and V; cluster ownership by atomic maximum; the start hits
 *              ordered by a prefix sum; the data stay on the device from
 *              the upload to the tracks
 * All three give the same tracks, bit for bit (tpc/tpc_shared.h: one
 * source for every step; the device's tracks are sorted as the CPU makes
 * them).
 *
 * Also here: the event simulation (36 x 159 rows, a uniform field,
 * helices from the vertex, smearing, noise, truth), the frames glue
 * (data:tpc_clusters in, data:tpc_tracks out), and the quality analysis
 * of the thesis's Table 9.1 (efficiency, clone and fake rates, resolution
 * and pulls) with its picture, and the track-by-track comparison of two
 * reconstructions.
 *
 * Functions return TUSK_OK or a negative tusk status and fill a
 * tusk_error_t; objects are opaque, made by x_new and freed by x_destroy,
 * and used from one thread at a time. */
#ifndef TUSK_TPC_H
#define TUSK_TPC_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tusk/adf_tpc.h>
#include <tusk/adf_writer.h>
#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tpc_backend { TPC_REFERENCE = 1, TPC_FAST = 2, TPC_OPENCL = 3 }; /* = ADF_TPC_* */

/* ---- the tracker's settings -------------------------------------------------------------- */

/* Keys and defaults (tpc/README.md says why; the thesis leaves each silent
 * unless marked): */
typedef struct tpc_config {
    double sigma_y_mm;        /* sigma_y_mm: a cluster's error in y (0.8; the simulation's smearing) */
    double sigma_z_mm;        /* sigma_z_mm: in z (1.0) */
    double area_tan_y;        /* area_tan_y: the hit areas' half-width in y per mm of row distance (1.0) */
    double area_tan_z;        /* area_tan_z: in z (0.2) */
    unsigned nf_candidates;   /* nf_candidates: clusters of rows r-2 and r+2 the Neighbours Finder takes, 1-32 (20) */
    double min_bin_mm;        /* min_bin_mm: a grid bin's size in y and z, at least (20) */
    double seed_chi2;         /* seed_chi2: the seed fit's chi2 per degree of freedom, at most (10) */
    double cluster_chi2;      /* cluster_chi2: an added cluster's chi2 (2 degrees of freedom), at most (16) */
    double max_sin_phi;       /* max_sin_phi: |sin(phi)| above this ends an extrapolation (0.99) */
    double stop_sigma_y_mm;   /* stop_sigma_y_mm: the extrapolation's error in y above this ends it (10) */
    double noise;             /* noise: process noise, added to the variances of sin(phi) and lambda a mm (0) */
    unsigned min_seed;        /* min_seed: a seed's clusters, at least (4, thesis) */
    unsigned min_hits;        /* min_hits: a tracklet's and a track's clusters, at least, 6-159 (10, thesis) */
    unsigned max_gap;         /* max_gap: the extrapolation stops after more rows than this without a cluster (4,
                               * thesis) */
    unsigned sel_gap;         /* sel_gap: a track segment ends after this many rows without a cluster (5, thesis) */
} tpc_config_t;

TUSK_API void tpc_config_default(tpc_config_t *cfg);
/* The keys above, NULL-terminated. */
TUSK_API const char *const *tpc_config_keys(void);
TUSK_API int tpc_config_set(tpc_config_t *cfg, const char *key, const char *value, tusk_error_t *err);
/* Every key of tpc_config_keys that params has; other keys are ignored. */
TUSK_API int tpc_config_read(tpc_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int tpc_config_check(const tpc_config_t *cfg, tusk_error_t *err);
/* A digest of every setting (data:tpc_tracks carries it). */
TUSK_API uint32_t tpc_config_digest(const tpc_config_t *cfg);
/* "cluster errors 0.8 x 1.0 mm, hit areas 0.6 x 0.2, ..." */
TUSK_API void tpc_config_format(const tpc_config_t *cfg, char *buf, size_t cap);
TUSK_API const char *tpc_backend_name(int backend); /* "reference", "fast", "opencl", "?" */

/* ---- slices -------------------------------------------------------------------------------- */

/* One slice of one event (a data:tpc_clusters frame). */
typedef struct tpc_slice {
    uint32_t event;
    uint64_t timestamp;
    adf_tpc_clusters_t hdr;   /* slice, slices, bz, geometry (raw unused) */
    const adf_tpc_cluster_t *cluster; /* hdr.n_clusters, any order */
} tpc_slice_t;

/* Many slices with their clusters (copies), in one array. */
typedef struct tpc_batch tpc_batch_t;
TUSK_API tpc_batch_t *tpc_batch_new(void);
TUSK_API void tpc_batch_destroy(tpc_batch_t **batch);
TUSK_API void tpc_batch_clear(tpc_batch_t *batch);
/* Copy a slice in; TUSK_EINVAL for a header or cluster outside its ranges
 * (the frame's rules), naming the event and slice. */
TUSK_API int tpc_batch_add(tpc_batch_t *batch, const tpc_slice_t *slice, tusk_error_t *err);
/* Room for a slice of n clusters the caller fills (*clusters, valid until
 * the batch changes): the frame reader's path, one copy. */
TUSK_API int tpc_batch_add_room(tpc_batch_t *batch, const tpc_slice_t *slice, adf_tpc_cluster_t **clusters,
                                tusk_error_t *err);
TUSK_API size_t tpc_batch_count(const tpc_batch_t *batch);
TUSK_API uint64_t tpc_batch_clusters(const tpc_batch_t *batch);
/* Slice i (< count); its clusters stay valid until the batch changes. */
TUSK_API void tpc_batch_slice(const tpc_batch_t *batch, size_t i, tpc_slice_t *slice);

/* ---- results ---------------------------------------------------------------------------------- */

/* The tracks of every slice of a batch, as data:tpc_tracks has them. */
typedef struct tpc_result tpc_result_t;
TUSK_API tpc_result_t *tpc_result_new(void);
TUSK_API void tpc_result_destroy(tpc_result_t **res);
TUSK_API size_t tpc_result_slices(const tpc_result_t *res);

/* Slice i's tracks: n_tracks records, their n_hits clusters packed in the
 * tracks' order; the counts of the steps. Valid until the result changes. */
typedef struct tpc_slice_result {
    uint32_t n_tracks, n_hits;
    const adf_tpc_track_t *track;
    const adf_tpc_hit_t *hit;
    uint32_t n_start;         /* start hits (seeds) */
    uint32_t n_tracklets;     /* tracklets kept (>= min_hits clusters) */
} tpc_slice_result_t;
TUSK_API void tpc_result_slice(const tpc_result_t *res, size_t i, tpc_slice_result_t *out);
/* Totals over the slices. */
TUSK_API void tpc_result_totals(const tpc_result_t *res, uint64_t *tracks, uint64_t *hits, uint64_t *tracklets);
/* Are two results the same, bit for bit and in the same order? If not,
 * why names the first slice and track that differ. */
TUSK_API bool tpc_result_equal(const tpc_result_t *a, const tpc_result_t *b, char *why, size_t cap);

/* Times of a backend's last run, ms. The CPU backends' steps are the sums
 * over their threads (CPU time); opencl's kernels come from profiling
 * events. */
typedef struct tpc_times {
    double init;              /* step 0 on the host: grid, sort, compression */
    double neighbours, clean, start; /* I, II, III (opencl: with the start hits' prefix sum) */
    double construct, select; /* IV, V */
    double output;            /* VI on the host: packing, global coordinates */
    double upload, download;  /* opencl: transfers (profiling events) */
    double total;             /* wall time of the run */
    uint64_t bytes_up, bytes_down;
    uint64_t kernel_bytes;    /* opencl: bytes the kernels read and write at least (tpc/README.md's model) */
} tpc_times_t;

/* ---- reference: the steps on one thread ------------------------------------------------------ */

typedef struct tpc_ref tpc_ref_t;
TUSK_API int tpc_ref_new(tpc_ref_t **out, const tpc_config_t *cfg, tusk_error_t *err);
TUSK_API void tpc_ref_destroy(tpc_ref_t **ref);
TUSK_API int tpc_ref_run(tpc_ref_t *ref, const tpc_batch_t *batch, tpc_result_t *res, tusk_error_t *err);
TUSK_API void tpc_ref_times(const tpc_ref_t *ref, tpc_times_t *times);

/* ---- fast: slices on CPU threads ----------------------------------------------------------------- */

typedef struct tpc_fast tpc_fast_t;
/* threads 0: one per online CPU. */
TUSK_API int tpc_fast_new(tpc_fast_t **out, const tpc_config_t *cfg, unsigned threads, tusk_error_t *err);
TUSK_API void tpc_fast_destroy(tpc_fast_t **fast);
TUSK_API unsigned tpc_fast_threads(const tpc_fast_t *fast);
TUSK_API int tpc_fast_run(tpc_fast_t *fast, const tpc_batch_t *batch, tpc_result_t *res, tusk_error_t *err);
TUSK_API void tpc_fast_times(const tpc_fast_t *fast, tpc_times_t *times);

/* ---- opencl ---------------------------------------------------------------------------------------- */

typedef struct tpc_cl tpc_cl_t;

typedef struct tpc_cl_config {
    const char *device;       /* selection (tusk/cl.h); NULL: $TUSK_CL_DEVICE, else any */
    unsigned instance;        /* for ":instance" */
    const char *options;      /* extra build options (fast-math options are refused) */
    bool no_cache;            /* no program-binary cache */
    unsigned group_size;      /* work-items a group (128) */
    unsigned threads;         /* host threads for steps 0 and VI (0: one per online CPU) */
} tpc_cl_config_t;

TUSK_API void tpc_cl_config_default(tpc_cl_config_t *clc);
/* Choose the device, check it can reproduce the CPU backends (a correctly
 * rounded float division and square root, or fp64), build the kernels.
 * TUSK_ENODEV, TUSK_EBUILD, TUSK_ECL, TUSK_EINVAL, TUSK_ELIMIT. */
TUSK_API int tpc_cl_new(tpc_cl_t **out, const tpc_config_t *cfg, const tpc_cl_config_t *clc, tusk_error_t *err);
TUSK_API void tpc_cl_destroy(tpc_cl_t **cl);
TUSK_API int tpc_cl_run(tpc_cl_t *cl, const tpc_batch_t *batch, tpc_result_t *res, tusk_error_t *err);
TUSK_API const char *tpc_cl_describe(const tpc_cl_t *cl);
TUSK_API void tpc_cl_times(const tpc_cl_t *cl, tpc_times_t *times);
/* The device's memory bandwidth: a kernel copying `bytes` (read and
 * written, so 2 x bytes move) `repeat` times; GB/s of the best run. */
TUSK_API int tpc_cl_bandwidth(tpc_cl_t *cl, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err);

/* ---- simulation ------------------------------------------------------------------------------------ */

enum tpc_preset { TPC_PRESET_PP = 0, TPC_PRESET_NONCENTRAL = 1, TPC_PRESET_CENTRAL = 2 };

typedef struct tpc_sim_config {
    uint64_t seed;            /* seed (1); event k draws from its own stream */
    uint64_t events;          /* events: of the run, 0 for no end (1) */
    int preset;               /* preset: pp | noncentral | central, the multiplicity (central) */
    uint32_t tracks;          /* tracks: primary charged particles an event (the preset's; 0 takes it) */
    double bz_tesla;          /* bz_tesla: the uniform solenoid field (0.5) */
    double eta_max;           /* eta_max: pseudorapidity uniform in [-eta_max, eta_max] (0.9) */
    double pt_slope_gev;      /* pt_slope_gev: pT drawn from pT exp(-pT / T) (0.3) */
    double pt_min_gev;        /* pt_min_gev (0.05) */
    double pt_max_gev;        /* pt_max_gev (20) */
    double vertex_sigma_z_mm; /* vertex_sigma_z_mm: the vertex's z spread, Gaussian (50) */
    double vertex_sigma_xy_mm; /* vertex_sigma_xy_mm: its transverse spread (0.1) */
    double sigma_y_mm;        /* sigma_y_mm: cluster smearing in y, Gaussian (0.8) */
    double sigma_z_mm;        /* sigma_z_mm: in z (1.0) */
    double noise_per_row;     /* noise_per_row: noise clusters a row and slice, Poisson mean (1) */
    double efficiency;        /* efficiency: a crossing gives a cluster with this probability (1) */
    double max_turns;         /* max_turns: loopers are followed this many turns (1) */
    double drift_mm;          /* drift_mm: the drift length, each side (2500) */
    bool truth;               /* truth: write data:tpc_truth frames (yes) */
} tpc_sim_config_t;

TUSK_API void tpc_sim_config_default(tpc_sim_config_t *cfg);
TUSK_API const char *const *tpc_sim_keys(void);
TUSK_API int tpc_sim_config_read(tpc_sim_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int tpc_sim_config_check(const tpc_sim_config_t *cfg, tusk_error_t *err);
/* The particles of a preset ("pp", "noncentral", "central"). */
TUSK_API uint32_t tpc_preset_tracks(int preset);
TUSK_API const char *tpc_preset_name(int preset);

typedef struct tpc_sim tpc_sim_t;

/* What a simulated event holds. */
typedef struct tpc_sim_event {
    uint32_t event;
    uint64_t timestamp;       /* 10 ns ticks */
    uint32_t particles;       /* generated */
    uint64_t clusters;        /* all slices */
    uint64_t noise;           /* noise clusters among them */
    uint64_t crossings;       /* row crossings inside a slice (before efficiency) */
} tpc_sim_event_t;

/* threads: for the helices (0: one per online CPU); the events do not
 * depend on it. */
TUSK_API int tpc_sim_new(tpc_sim_t **out, const tpc_sim_config_t *cfg, unsigned threads, tusk_error_t *err);
TUSK_API void tpc_sim_destroy(tpc_sim_t **sim);
TUSK_API const tpc_sim_config_t *tpc_sim_config(const tpc_sim_t *sim);
/* Event number `index` (the same for the same seed and index); its slices
 * are read with the calls below until the next tpc_sim_make. */
TUSK_API int tpc_sim_make(tpc_sim_t *sim, uint64_t index, const tpc_sim_event_t **ev, tusk_error_t *err);
/* Slice s (< 36) of the last event, its clusters ordered by row then y. */
TUSK_API void tpc_sim_slice(const tpc_sim_t *sim, unsigned s, tpc_slice_t *slice);
/* Its frames: data:tpc_clusters, then data:tpc_truth when truth is on. */
TUSK_API size_t tpc_sim_slice_bytes(const tpc_sim_t *sim, unsigned s);
TUSK_API int tpc_sim_encode_slice(const tpc_sim_t *sim, unsigned s, adf_writer_t *w, tusk_error_t *err);
/* Its truth: the particles with clusters in the slice and the particle
 * (index into them) of every cluster, ADF_TPC_NOISE for noise. */
TUSK_API void tpc_sim_truth(const tpc_sim_t *sim, unsigned s, const adf_tpc_particle_t **particles,
                            uint32_t *n_particles, const uint32_t **cluster_particle);

/* ---- frames -------------------------------------------------------------------------------------------- */

/* The data:tpc_clusters frames of a buffer into the batch (cleared first).
 * TUSK_EINVAL naming the offset (base_offset + offset in buf) for a
 * malformed frame. */
TUSK_API int tpc_frames_read(tpc_batch_t *batch, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err);
/* Bytes the data:tpc_tracks frames of a result add. */
TUSK_API size_t tpc_frames_extra(const tpc_result_t *res);
/* Copy buf's frames to w in order (the clusters left out when
 * keep_clusters is false), each data:tpc_clusters followed by its slice's
 * data:tpc_tracks; batch and res are what tpc_frames_read and a backend
 * made of buf. */
TUSK_API int tpc_frames_write(const void *buf, size_t size, const tpc_batch_t *batch, const tpc_result_t *res,
                              const tpc_config_t *cfg, int backend, bool keep_clusters, adf_writer_t *w,
                              tusk_error_t *err);
/* Slice i's data:tpc_tracks alone. */
TUSK_API int tpc_frames_write_slice(const tpc_result_t *res, size_t i, const tpc_slice_t *slice,
                                    const tpc_config_t *cfg, int backend, adf_writer_t *w, tusk_error_t *err);

/* ---- quality analysis (Table 9.1) ----------------------------------------------------------------------- */

typedef struct tpc_qa_config {
    tpc_config_t alg;         /* the settings the tracker ran with (its digest is checked) */
    unsigned min_clusters;    /* a particle is reconstructible in a slice with this many clusters there (30) */
    double match;             /* a track matches the particle owning this fraction of its clusters (0.9) */
    double ref_p_gev;         /* reference particles: momentum at least (1.0) */
    char label[32];           /* the sample's name in the table (sample) */
} tpc_qa_config_t;

TUSK_API void tpc_qa_config_default(tpc_qa_config_t *cfg);

typedef struct tpc_qa tpc_qa_t;
TUSK_API int tpc_qa_new(tpc_qa_t **out, const tpc_qa_config_t *cfg, tusk_error_t *err);
TUSK_API void tpc_qa_destroy(tpc_qa_t **qa);
/* The frames of one buffer; a slice's frames (clusters, truth, tracks)
 * may arrive in any order and over several buffers. */
TUSK_API int tpc_qa_feed(tpc_qa_t *qa, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err);
/* Complete the analysis. A slice that never got all its frames, or an
 * event whose slices did not all arrive, is an error (TUSK_EINVAL) naming
 * it: nothing is left out silently. */
TUSK_API int tpc_qa_finish(tpc_qa_t *qa, tusk_error_t *err);

/* Efficiency of one category of particles. */
typedef struct tpc_qa_eff {
    uint64_t particles;       /* reconstructible (particle, slice) pairs */
    uint64_t found;           /* with at least one matched track */
    uint64_t clones;          /* matched tracks beyond the first */
} tpc_qa_eff_t;

/* Resolution and pull of one parameter. */
typedef struct tpc_qa_res {
    uint64_t n;
    double mean, rms;         /* residual (fit - true) */
    double pull_mean, pull_rms;
    double pull_core;         /* half the 15.87-84.13 % quantile range of the pulls (0 before tpc_qa_finish) */
} tpc_qa_res_t;

#define TPC_QA_PBINS 12
typedef struct tpc_qa_summary {
    char label[32];
    int backend;
    uint64_t events, slices, clusters, noise_clusters;
    uint64_t tracks, hits, fakes;  /* fakes: tracks matching no particle */
    uint64_t matched_other;   /* tracks matching a particle that is not reconstructible */
    tpc_qa_eff_t all, ref, extra; /* all reconstructible; p >= ref_p_gev; below */
    double efficiency, clone_rate, fake_rate; /* %: found / particles, clones / (found + clones), fakes / tracks */
    double ref_efficiency;
    tpc_qa_res_t res[5];      /* Y, Z (mm), sin(phi), lambda, q/pT (c/GeV): first matched track of each particle */
    double pt_res;            /* the RMS of (pT fit - pT true) / pT true */
    double p_edge[TPC_QA_PBINS + 1]; /* momentum bins (GeV/c) */
    tpc_qa_eff_t pbin[TPC_QA_PBINS];
    double hits_per_track, purity; /* mean clusters a track; matched tracks' own-particle fraction */
} tpc_qa_summary_t;
TUSK_API void tpc_qa_summary(const tpc_qa_t *qa, tpc_qa_summary_t *s);
/* The tables, as BENCHMARKS.md shows them. */
TUSK_API void tpc_qa_print(const tpc_qa_t *qa, FILE *out);
/* DIR/summary.csv, DIR/momentum.csv, and with plot the picture
 * DIR/efficiency.FORMAT (png or svg: efficiency, clone and fake rate
 * against momentum) with its data and gnuplot script. */
TUSK_API int tpc_qa_write(const tpc_qa_t *qa, const char *dir, bool plot, const char *format, tusk_error_t *err);

/* ---- comparing two reconstructions track by track -------------------------------------------------------- */

typedef struct tpc_compare {
    uint64_t slices;          /* slices in both */
    uint64_t tracks_a, tracks_b;
    uint64_t same;            /* tracks equal bit for bit (parameters, covariance, clusters) */
    uint64_t same_clusters;   /* tracks with the same clusters (parameters may differ in the last bits) */
    uint64_t only_a, only_b;  /* tracks of a tracklet and first row the other has not */
    uint64_t hits_compared, hits_differ; /* clusters of tracks present in both, and those that differ */
    double max_param_diff;    /* largest relative difference of a parameter of tracks with the same clusters */
} tpc_compare_t;

/* The data:tpc_tracks frames of two buffers (files), matched by event and
 * slice and, within a slice, by tracklet and first row. TUSK_EINVAL for
 * malformed frames or a slice in one and not the other, naming it. */
TUSK_API int tpc_compare_buffers(const void *a, size_t size_a, const void *b, size_t size_b, tpc_compare_t *cmp,
                                 tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
