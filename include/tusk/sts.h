/* sts.h - libtusk-sts: the local reconstruction of the CBM Silicon
 * Tracking System (Hunold 2022, seed 004; tusk's specification:
 * ../shared/specs/trackers.md section 4; the design: sts/README.md).
 *
 * CBM reads out free-streaming. A timeslice holds the digis (channel,
 * time, charge) of every double-sided strip module of the eight stations;
 * per module the reconstruction
 *   1. sorts the digis,
 *   2. groups digis of neighbouring strips within the time window delta
 *      into clusters (centre of gravity, errors),
 *   3. sorts the clusters by time,
 *   4. pairs front and back clusters that coincide in time and whose strips
 *      cross on the sensor into hits.
 *
 * Backends:
 *   reference  the thesis's original sequential cluster finder (status
 *              array over time-sorted digis), one thread; it deviates from
 *              the cluster definition in rare cases (seed §3.2.2)
 *   fast       the parallel algorithm (64-bit key sort, channel offsets,
 *              neighbour linking, clusters from the chains) on CPU threads,
 *              one module a thread at a time
 *   opencl     the same algorithm on a device, each kernel spread over tiles
 *              of the modules (a large module on many work-groups),
 *              everything resident there from the unsorted digis to the hits
 * fast and opencl give the same clusters and hits, bit for bit and in the
 * same order; the reference's hit finder is theirs, its cluster finder the
 * original.
 *
 * Also here: the timeslice simulation (stations, modules, Poisson
 * collisions, charge sharing, time resolution, noise, truth), the frames
 * glue (data:sts_digis in; data:sts_clusters and data:sts_hits out), and
 * the quality analysis against the truth with its residual pictures.
 *
 * Functions return TUSK_OK or a negative tusk status and fill a
 * tusk_error_t; objects are opaque, made by x_new and freed by x_destroy,
 * and used from one thread at a time. */
#ifndef TUSK_STS_H
#define TUSK_STS_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tusk/adf_sts.h>
#include <tusk/adf_writer.h>
#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sts_backend { STS_REFERENCE = 1, STS_FAST = 2, STS_OPENCL = 3 }; /* = ADF_STS_* */

/* ---- the reconstruction's settings ------------------------------------------------ */

/* Keys and defaults (sts/README.md says why): */
typedef struct sts_config {
    double time_resolution_ns; /* time_resolution_ns: a digi's time resolution (5) */
    double delta_sigmas;       /* delta_sigmas: delta = floor(k sqrt 2 time_resolution_ns) whole ns (3: 21 ns) */
    double charge_noise;       /* charge_noise: a strip's charge noise, charge units (10) */
    double cog_sys_strips;     /* cog_sys_strips: the centre of gravity's systematic error, strips (0.15) */
    double hit_time_cut;       /* hit_time_cut: k of |tf - tb| <= k sqrt(sf^2 + sb^2) (4) */
    double hit_y_tol_mm;       /* hit_y_tol_mm: a crossing this far outside the strips still counts (0.5) */
} sts_config_t;

TUSK_API void sts_config_default(sts_config_t *cfg);
/* The keys above, NULL-terminated. */
TUSK_API const char *const *sts_config_keys(void);
TUSK_API int sts_config_set(sts_config_t *cfg, const char *key, const char *value, tusk_error_t *err);
/* Every key of sts_config_keys that params has; other keys are ignored. */
TUSK_API int sts_config_read(sts_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int sts_config_check(const sts_config_t *cfg, tusk_error_t *err);
/* delta in whole ns. */
TUSK_API uint32_t sts_config_delta(const sts_config_t *cfg);
/* A digest of every setting (data:sts_clusters and data:sts_hits carry it). */
TUSK_API uint32_t sts_config_digest(const sts_config_t *cfg);
/* "delta 21 ns (3 x sqrt 2 x 5 ns), charge noise 10, ..." */
TUSK_API void sts_config_format(const sts_config_t *cfg, char *buf, size_t cap);
TUSK_API const char *sts_backend_name(int backend); /* "reference", "fast", "opencl", "?" */

/* ---- modules ---------------------------------------------------------------------- */

/* One module's digis of one timeslice (a data:sts_digis frame). */
typedef struct sts_module {
    uint32_t timeslice;
    uint64_t timestamp;
    adf_sts_digis_t hdr;      /* module, station, modules, strips, length_ns, geometry (raw unused) */
    const uint64_t *digi;     /* hdr.n_digis keys (adf_sts_key), any order */
} sts_module_t;

/* Many modules with their digis (copies), in one array. */
typedef struct sts_batch sts_batch_t;
TUSK_API sts_batch_t *sts_batch_new(void);
TUSK_API void sts_batch_destroy(sts_batch_t **batch);
TUSK_API void sts_batch_clear(sts_batch_t *batch);
/* Copy a module in; TUSK_EINVAL for a header outside its ranges or a digi
 * outside its module or timeslice (the frame's rules), naming the module. */
TUSK_API int sts_batch_add(sts_batch_t *batch, const sts_module_t *module, tusk_error_t *err);
/* Room for a module of n digis whose keys the caller fills (*keys, valid
 * until the batch changes): the data:sts_digis reader's path, one copy. */
TUSK_API int sts_batch_add_room(sts_batch_t *batch, const sts_module_t *module, uint64_t **keys, tusk_error_t *err);
TUSK_API size_t sts_batch_count(const sts_batch_t *batch);
TUSK_API uint64_t sts_batch_digis(const sts_batch_t *batch);
/* Module i (< count); its digis stay valid until the batch changes. */
TUSK_API void sts_batch_module(const sts_batch_t *batch, size_t i, sts_module_t *module);

/* ---- results ------------------------------------------------------------------------ */

/* The clusters and hits of every module of a batch. */
typedef struct sts_result sts_result_t;
TUSK_API sts_result_t *sts_result_new(void);
TUSK_API void sts_result_destroy(sts_result_t **res);
TUSK_API size_t sts_result_modules(const sts_result_t *res);
/* Module i's counts. */
TUSK_API void sts_result_counts(const sts_result_t *res, size_t i, uint32_t *n_front, uint32_t *n_back,
                                uint32_t *n_hits);
/* Cluster k (front ones first) and hit k of module i, as the frames have
 * them (errors, not variances). */
TUSK_API void sts_result_cluster(const sts_result_t *res, size_t i, uint32_t k, adf_sts_cluster_t *cluster);
TUSK_API void sts_result_hit(const sts_result_t *res, size_t i, uint32_t k, adf_sts_hit_t *hit);
/* Totals over the modules. */
TUSK_API void sts_result_totals(const sts_result_t *res, uint64_t *clusters, uint64_t *hits);
/* Are two results the same, bit for bit and in the same order? If not,
 * why names the first module and record that differ. */
TUSK_API bool sts_result_equal(const sts_result_t *a, const sts_result_t *b, char *why, size_t cap);

/* ---- reference: the original cluster finder, one thread ----------------------------- */

typedef struct sts_ref sts_ref_t;
TUSK_API int sts_ref_new(sts_ref_t **out, const sts_config_t *cfg, tusk_error_t *err);
TUSK_API void sts_ref_destroy(sts_ref_t **ref);
TUSK_API int sts_ref_run(sts_ref_t *ref, const sts_batch_t *batch, sts_result_t *res, tusk_error_t *err);

/* ---- fast: the parallel algorithm on CPU threads -------------------------------------- */

typedef struct sts_fast sts_fast_t;
/* threads 0: one per online CPU. */
TUSK_API int sts_fast_new(sts_fast_t **out, const sts_config_t *cfg, unsigned threads, tusk_error_t *err);
TUSK_API void sts_fast_destroy(sts_fast_t **fast);
TUSK_API unsigned sts_fast_threads(const sts_fast_t *fast);
TUSK_API int sts_fast_run(sts_fast_t *fast, const sts_batch_t *batch, sts_result_t *res, tusk_error_t *err);

/* ---- opencl ---------------------------------------------------------------------------- */

typedef struct sts_cl sts_cl_t;

typedef struct sts_cl_config {
    const char *device;       /* selection (tusk/cl.h); NULL: $TUSK_CL_DEVICE, else any */
    unsigned instance;        /* for ":instance" */
    const char *options;      /* extra build options (fast-math options are refused) */
    bool no_cache;            /* no program-binary cache */
    unsigned group_size;      /* work-items of a module's work-group (256) */
    unsigned threads;         /* host threads packing and unpacking (0: one per online CPU) */
} sts_cl_config_t;

TUSK_API void sts_cl_config_default(sts_cl_config_t *clc);
/* Choose the device, check it can reproduce the fast backend (a correctly
 * rounded float division, or fp64), build the kernels. TUSK_ENODEV,
 * TUSK_EBUILD, TUSK_ECL, TUSK_EINVAL, TUSK_ELIMIT. */
TUSK_API int sts_cl_new(sts_cl_t **out, const sts_config_t *cfg, const sts_cl_config_t *clc, tusk_error_t *err);
TUSK_API void sts_cl_destroy(sts_cl_t **cl);
TUSK_API int sts_cl_run(sts_cl_t *cl, const sts_batch_t *batch, sts_result_t *res, tusk_error_t *err);
TUSK_API const char *sts_cl_describe(const sts_cl_t *cl);

/* Times of the last sts_cl_run (ms; kernels from profiling events). */
typedef struct sts_cl_times {
    double upload, sort_digis, find_clusters, compute_clusters, sort_clusters, find_hits, download;
    double pack, unpack;      /* host: digis into the pinned buffer, results out of it */
    double total;             /* wall time of the run */
    uint64_t bytes_up, bytes_down;
    uint64_t kernel_bytes;    /* bytes the kernels read and write at least (sts/README.md's model) */
    uint64_t bytes_sort_digis, bytes_find_clusters, bytes_compute_clusters, bytes_sort_clusters, bytes_hits;
                              /* kernel_bytes by step */
    uint64_t groups_digis, groups_clusters, groups_hits; /* work-groups (tiles) of a digi, cluster-sort, hit kernel */
} sts_cl_times_t;
TUSK_API void sts_cl_times(const sts_cl_t *cl, sts_cl_times_t *times);

/* The device's memory bandwidth: a kernel copying `bytes` (read and
 * written, so 2 x bytes move) `repeat` times; GB/s of the best run. */
TUSK_API int sts_cl_bandwidth(sts_cl_t *cl, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err);

/* ---- simulation ---------------------------------------------------------------------- */

#define STS_SIM_MAX_STATIONS 16
#define STS_SIM_MAX_LENGTHS 4

typedef struct sts_sim_config {
    uint64_t seed;            /* seed (1); timeslice k draws from its own streams */
    uint64_t timeslices;      /* timeslices: of the run, 0 for no end (1) */
    uint32_t collisions;      /* collisions: a timeslice (100) */
    double rate_mhz;          /* rate_mhz: collision rate, Poisson in time (10) */
    unsigned n_stations;      /* from stations_mm */
    double station_z[STS_SIM_MAX_STATIONS]; /* stations_mm: z of each station (300 400 ... 1000) */
    double theta_max_deg;     /* theta_max_deg: each station covers this polar angle (25) */
    uint32_t strips;          /* strips: a side (1024) */
    double pitch_um;          /* pitch_um (58) */
    double stereo_deg;        /* stereo_deg: back strips against front strips (7.5) */
    unsigned n_lengths;       /* from strip_lengths_mm */
    double strip_length[STS_SIM_MAX_LENGTHS]; /* strip_lengths_mm: module lengths along the strips (20 40 60) */
    double length_theta[STS_SIM_MAX_LENGTHS - 1]; /* length_theta_deg: below which polar angle each but the
                               * last is used (5 10) */
    double thickness_um;      /* thickness_um: the sensor (300) */
    double tracks;            /* tracks: mean charged tracks of a collision in the acceptance (Poisson) */
    double eta_mean, eta_sigma; /* eta_mean, eta_sigma: tracks' pseudorapidity, Gaussian (2.0, 0.7) */
    double theta_min_deg;     /* theta_min_deg: no track below this polar angle (the beam pipe) (2.5) */
    double charge_mpv;        /* charge_mpv: a perpendicular track's most probable charge, units (224) */
    double landau_width;      /* landau_width: its fluctuation's width, relative (0.08) */
    double diffusion_um;      /* diffusion_um: the charge cloud's spread across strips (8) */
    double charge_noise;      /* charge_noise: a strip's noise, charge units (10) */
    double threshold;         /* threshold: a strip's readout threshold, charge units (40) */
    double time_resolution_ns; /* time_resolution_ns: a digi's time resolution (5) */
    double noise_rate_khz;    /* noise_rate_khz: noise hits a channel (1) */
    double dead_time_ns;      /* dead_time_ns: a channel records no hit this long after its last (100) */
    double margin_ns;         /* margin_ns: empty time before the first and after the last collision (100) */
    bool truth;               /* truth: write data:sts_truth frames (yes) */
} sts_sim_config_t;

TUSK_API void sts_sim_config_default(sts_sim_config_t *cfg);
TUSK_API const char *const *sts_sim_keys(void);
TUSK_API int sts_sim_config_read(sts_sim_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int sts_sim_config_check(const sts_sim_config_t *cfg, tusk_error_t *err);

typedef struct sts_sim sts_sim_t;

/* What a simulated timeslice holds. */
typedef struct sts_sim_ts {
    uint32_t timeslice;
    uint64_t timestamp;       /* 10 ns ticks: the timeslice's start */
    uint32_t length_ns;
    uint32_t collisions;
    uint64_t tracks, points, digis;
    uint64_t noise_digis;     /* noise hits (some may be lost in dead time) */
    uint64_t lost;            /* hits lost in a channel's dead time */
} sts_sim_ts_t;

TUSK_API int sts_sim_new(sts_sim_t **out, const sts_sim_config_t *cfg, tusk_error_t *err);
TUSK_API void sts_sim_destroy(sts_sim_t **sim);
TUSK_API const sts_sim_config_t *sts_sim_config(const sts_sim_t *sim);
/* The detector's modules (the same for every timeslice). */
TUSK_API size_t sts_sim_modules(const sts_sim_t *sim);
/* Timeslice number `index` (the same for the same seed and index); its
 * modules are read with the calls below until the next sts_sim_make. */
TUSK_API int sts_sim_make(sts_sim_t *sim, uint64_t index, const sts_sim_ts_t **ts, tusk_error_t *err);
/* Module m of the last timeslice. */
TUSK_API void sts_sim_module(const sts_sim_t *sim, size_t m, sts_module_t *module);
/* Its frames: data:sts_digis, then data:sts_truth when truth is on. */
TUSK_API size_t sts_sim_module_bytes(const sts_sim_t *sim, size_t m);
TUSK_API int sts_sim_encode_module(const sts_sim_t *sim, size_t m, adf_writer_t *w, tusk_error_t *err);
/* Its truth: points and the point of every digi (ADF_STS_NOISE for noise). */
TUSK_API void sts_sim_truth(const sts_sim_t *sim, size_t m, const adf_sts_point_t **points, uint32_t *n_points,
                            const uint32_t **digi_point);

/* ---- frames ---------------------------------------------------------------------------- */

/* The data:sts_digis frames of a buffer into the batch (cleared first).
 * TUSK_EINVAL naming the offset (base_offset + offset in buf) for a
 * malformed frame. */
TUSK_API int sts_frames_read(sts_batch_t *batch, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err);
/* Bytes the data:sts_clusters (when clusters is true) and data:sts_hits
 * frames of a result add. */
TUSK_API size_t sts_frames_extra(const sts_result_t *res, bool clusters);
/* Copy buf's frames to w in order (the digis left out when keep_digis is
 * false), each data:sts_digis followed by its module's data:sts_clusters
 * (when clusters is true) and data:sts_hits; batch and res are what
 * sts_frames_read and a backend made of buf. */
TUSK_API int sts_frames_write(const void *buf, size_t size, const sts_batch_t *batch, const sts_result_t *res,
                              const sts_config_t *cfg, int backend, bool keep_digis, bool clusters, adf_writer_t *w,
                              tusk_error_t *err);
/* Module i's data:sts_clusters and data:sts_hits alone. */
TUSK_API int sts_frames_write_module(const sts_result_t *res, size_t i, const sts_module_t *module,
                                     const sts_config_t *cfg,
                                     int backend, bool clusters, adf_writer_t *w, tusk_error_t *err);

/* ---- quality analysis ---------------------------------------------------------------- */

typedef struct sts_qa_config {
    sts_config_t alg;         /* the settings the reconstruction ran with (its digest is checked) */
    bool compare;             /* recompute each module with the original and the parallel cluster finder
                               * and count the clusters that differ (yes) */
    char label[32];           /* the sample's name in the table (sample) */
} sts_qa_config_t;

TUSK_API void sts_qa_config_default(sts_qa_config_t *cfg);

typedef struct sts_qa sts_qa_t;
TUSK_API int sts_qa_new(sts_qa_t **out, const sts_qa_config_t *cfg, tusk_error_t *err);
TUSK_API void sts_qa_destroy(sts_qa_t **qa);
/* The frames of one buffer; a module's frames (digis, clusters, hits,
 * truth) may arrive in any order and over several buffers. */
TUSK_API int sts_qa_feed(sts_qa_t *qa, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err);
/* Complete the analysis. A module that never got all its frames, or a
 * timeslice whose modules did not all arrive, is an error (TUSK_EINVAL)
 * naming it: nothing is left out silently. */
TUSK_API int sts_qa_finish(sts_qa_t *qa, tusk_error_t *err);

/* One row of the per-station table (station -1: all). */
typedef struct sts_qa_row {
    int station;
    uint64_t points, points_front, points_back, points_both; /* Monte Carlo points; with digis on a side, both */
    uint64_t clusters[2], clusters_matched[2], points_found[2]; /* per side */
    uint64_t hits, hits_true, points_hit;
    double res_mean[2], res_rms[2], pull_mean[2], pull_rms[2]; /* cluster position, strips */
    double hx_rms, hy_rms, ht_rms, hx_pull, hy_pull, ht_pull;  /* hits: residual RMS (um, um, ns), pull RMS */
} sts_qa_row_t;

typedef struct sts_qa_summary {
    char label[32];
    int backend;
    uint64_t timeslices, modules, digis, noise_digis;
    uint64_t compared, differ_original, differ_parallel; /* clusters compared; those of each finder the other lacks */
    size_t rows;
    const sts_qa_row_t *row;  /* rows[0] is all stations, then station by station */
} sts_qa_summary_t;
TUSK_API void sts_qa_summary(const sts_qa_t *qa, sts_qa_summary_t *s);
/* The tables, as BENCHMARKS.md shows them. */
TUSK_API void sts_qa_print(const sts_qa_t *qa, FILE *out);
/* DIR/summary.csv, DIR/stations.csv, and with plot the residual picture
 * DIR/residuals.FORMAT (png or svg) with its data and gnuplot script. */
TUSK_API int sts_qa_write(const sts_qa_t *qa, const char *dir, bool plot, const char *format, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
