/* zfinder.h - libtusk-zfinder: the primary-vertex z-finder of the ATLAS
 * Level-2 trigger (IDScan; Jones 2010, seed 001; tusk's specification:
 * ../shared/specs/trackers.md section 2; the design: zfinder/README.md).
 *
 * For one Region of Interest (RoI), the spacepoints of the inner
 * detector's 19 cylindrical layers are sorted into thin phi slices; every
 * pair of points in different layers of one slice and its neighbours is
 * extrapolated to the beam line, the intercepts z_V fill a histogram
 * (nHisto counts, zHisto sums), and the vertex z0 is the centre of
 * gravity of the densest window of three bins. In triplet mode a pair
 * counts only when a point of a higher layer lies on its line.
 *
 * Backends, all giving the same nHisto bin for bin and the same peak
 * bins (zHisto differs only by the order of its float sums):
 *   reference  plain C, one thread, float or double (the spec's serial code)
 *   fast       the reference's code on threads, one RoI each at a time
 *   opencl     one work-group per (RoI, phi slice) over many RoIs a launch
 *
 * Also here: the RoI simulation (19 cylinders in a solenoid field, a
 * signal vertex with stiff tracks, pile-up with soft ones, noise), the
 * frames glue (data:id_spacepoints in, data:zvertex out), and the quality
 * analysis of Table 5.1 with its histogram pictures.
 *
 * Functions return TUSK_OK or a negative tusk status and fill a
 * tusk_error_t; objects are opaque, made by x_new and freed by x_destroy,
 * and used from one thread at a time. */
#ifndef TUSK_ZFINDER_H
#define TUSK_ZFINDER_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tusk/adf_writer.h>
#include <tusk/adf_zfinder.h>
#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the algorithm's settings ------------------------------------------------ */

enum zf_mode { ZF_PAIRS = 1, ZF_TRIPLETS = 2 };         /* = ADF_ZVERTEX_PAIRS / _TRIPLETS */
enum zf_precision { ZF_PREC_FLOAT = 4, ZF_PREC_DOUBLE = 8 };
enum zf_backend { ZF_REFERENCE = 1, ZF_FAST = 2, ZF_OPENCL = 3 }; /* = ADF_ZVERTEX_* */

#define ZF_MAX_BINS 4096

/* Keys and defaults (zfinder/README.md says why): */
typedef struct zf_config {
    enum zf_mode mode;        /* mode: pairs | triplets (pairs) */
    int precision;            /* precision: float | double (float) */
    double slice_deg;         /* slice_deg: phi slice width, degrees (0.2) */
    double z_min_mm;          /* z_min_mm: histogram from (-200) */
    double z_max_mm;          /* z_max_mm: to (200) */
    double bin_mm;            /* bin_mm: bin width (1) */
    double triplet_dz_mm;     /* triplet_dz_mm: third point within this of the pair's line in rho-z (1) */
    double triplet_dphi;      /* triplet_dphi: and within this in rho-phi, rad (0.001) */
    bool second_vertex;       /* second_vertex: look for a second peak (no) */
} zf_config_t;

TUSK_API void zf_config_default(zf_config_t *cfg);
/* The keys above, NULL-terminated (for tusk_params_expect lists). */
TUSK_API const char *const *zf_config_keys(void);
/* Set one key from text (TUSK_EPARAM naming the key and the text). */
TUSK_API int zf_config_set(zf_config_t *cfg, const char *key, const char *value, tusk_error_t *err);
/* Every key of zf_config_keys that params has; other keys are ignored. */
TUSK_API int zf_config_read(zf_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
/* TUSK_EPARAM when the settings do not make a histogram of 3 to
 * ZF_MAX_BINS whole bins, a slice width outside 0.01-30 degrees, ... */
TUSK_API int zf_config_check(const zf_config_t *cfg, tusk_error_t *err);
TUSK_API unsigned zf_config_bins(const zf_config_t *cfg);
/* zHisto[bin] in mm from the fixed-point histogram: n entries whose
 * places in the bin add up to zsum quanta of bin_mm / 2^24
 * (zfinder/README.md): n (z_min + bin bin_mm) + zsum bin_mm 2^-24. */
TUSK_API double zf_zhisto(const zf_config_t *cfg, unsigned bin, uint32_t n, uint64_t zsum);
/* A digest of every setting but the precision (data:zvertex carries it). */
TUSK_API uint32_t zf_config_digest(const zf_config_t *cfg);
/* "triplets, float, 0.2 deg slices, 400 bins of 1 mm from -200 mm, ..." */
TUSK_API void zf_config_format(const zf_config_t *cfg, char *buf, size_t cap);
TUSK_API const char *zf_mode_name(int mode);           /* "pairs", "triplets", "?" */
TUSK_API const char *zf_precision_name(int precision); /* "float", "double", "?" */
TUSK_API const char *zf_backend_name(int backend);     /* "reference", "fast", "opencl", "?" */

/* The phi slices of a RoI of width phi_width (rad): ceil(width / slice);
 * *wrap set for a 360 degree RoI (width == (float)2 pi), whose first and
 * last slices are neighbours. */
TUSK_API uint32_t zf_roi_slices(const zf_config_t *cfg, float phi_width, int *wrap);

/* ---- RoIs ------------------------------------------------------------------------ */

typedef struct zf_roi {
    uint32_t event;           /* the RoI number (the frames' event number) */
    uint64_t timestamp;
    float phi_min, phi_width; /* rad */
    uint32_t n;               /* spacepoints */
    const adf_idsp_point_t *pt;
} zf_roi_t;

/* Many RoIs with their points (copies). */
typedef struct zf_batch zf_batch_t;
TUSK_API zf_batch_t *zf_batch_new(void);
TUSK_API void zf_batch_destroy(zf_batch_t **batch);
TUSK_API void zf_batch_clear(zf_batch_t *batch);
TUSK_API int zf_batch_add(zf_batch_t *batch, const zf_roi_t *roi, tusk_error_t *err);
TUSK_API size_t zf_batch_count(const zf_batch_t *batch);
TUSK_API size_t zf_batch_points(const zf_batch_t *batch);
/* RoI i (< count); its points stay valid until the batch changes. */
TUSK_API void zf_batch_roi(const zf_batch_t *batch, size_t i, zf_roi_t *roi);

/* ---- results ------------------------------------------------------------------------ */

typedef struct zf_vertex {
    double z0;                /* mm */
    uint32_t count;           /* nHisto in the window */
    uint32_t bin;             /* the window's first bin */
} zf_vertex_t;

typedef struct zf_result {
    unsigned n_vertices;      /* 0 when no intercept landed in the histogram */
    zf_vertex_t vertex[2];
    uint64_t pairs;           /* pairs formed */
    uint64_t entries;         /* intercepts in the histogram */
} zf_result_t;

/* ---- reference: one thread ------------------------------------------------------ */

typedef struct zf_ref zf_ref_t;

TUSK_API int zf_ref_new(zf_ref_t **out, const zf_config_t *cfg, tusk_error_t *err);
TUSK_API void zf_ref_destroy(zf_ref_t **ref);
/* One RoI. TUSK_EINVAL, naming the RoI and the spacepoint, for a point
 * outside the RoI's phi range or in a layer >= 19. */
TUSK_API int zf_ref_roi(zf_ref_t *ref, const zf_roi_t *roi, zf_result_t *res, tusk_error_t *err);
/* Every RoI of the batch in turn, res[i] for RoI i. */
TUSK_API int zf_ref_run(zf_ref_t *ref, const zf_batch_t *batch, zf_result_t *res, tusk_error_t *err);
/* The histograms of the last zf_ref_roi (zf_config_bins entries each):
 * nHisto, zHisto's fixed-point sums (zf_zhisto) and zHisto in mm. */
TUSK_API const uint32_t *zf_ref_nhisto(const zf_ref_t *ref);
TUSK_API const uint64_t *zf_ref_zsum(const zf_ref_t *ref);
TUSK_API void zf_ref_zhisto(const zf_ref_t *ref, double *zh);

/* ---- fast: the reference on threads -------------------------------------------- */

typedef struct zf_fast zf_fast_t;

/* threads 0: one per online CPU. */
TUSK_API int zf_fast_new(zf_fast_t **out, const zf_config_t *cfg, unsigned threads, tusk_error_t *err);
TUSK_API void zf_fast_destroy(zf_fast_t **fast);
TUSK_API unsigned zf_fast_threads(const zf_fast_t *fast);
/* As zf_ref_run; on bad input the error of the lowest such RoI. */
TUSK_API int zf_fast_run(zf_fast_t *fast, const zf_batch_t *batch, zf_result_t *res, tusk_error_t *err);

/* ---- opencl --------------------------------------------------------------------- */

typedef struct zf_cl zf_cl_t;

typedef struct zf_cl_config {
    const char *device;       /* selection (tusk/cl.h); NULL: $TUSK_CL_DEVICE, else any */
    unsigned instance;        /* for ":instance" */
    const char *options;      /* extra build options (fast-math options are refused) */
    bool no_cache;            /* no program-binary cache */
    unsigned chunk;           /* RoIs per launch (64) */
    unsigned slots;           /* 1: one launch at a time; 2: double-buffered, the next chunk's
                               * packing and upload overlap the current one's kernels (2) */
    unsigned group_size;      /* work-items of a (RoI, slice) work-group (64) */
    unsigned group_points;    /* points a work-group keeps in local memory: a slice and its
                               * neighbours holding more are refused (1024) */
    unsigned threads;         /* host threads packing RoIs (0: one per online CPU) */
    bool keep_histograms;     /* download every RoI's histograms (tests, pictures) */
    bool bare;                /* the roofline kernel: the pair loop without histograms
                               * (tusk-bench only; its results are not vertices) */
    bool no_int64_atomics;    /* add zHisto's 64-bit sums with 32-bit atomics even where the
                               * device has cl_khr_int64_base_atomics (tests: the fallback) */
} zf_cl_config_t;

/* The most group_points: a work-group's pairs, C(65536, 2) < 2^31, keep a
 * bin's count in local memory and the group's entries within 32 bits. */
#define ZF_MAX_GROUP_POINTS 65536u

TUSK_API void zf_cl_config_default(zf_cl_config_t *clc);
/* Choose the device, check it can reproduce the reference (a correctly
 * rounded float division, or fp64; fp64 for double),
 * build the kernels. TUSK_ENODEV, TUSK_EBUILD, TUSK_ECL, TUSK_EINVAL. */
TUSK_API int zf_cl_new(zf_cl_t **out, const zf_config_t *cfg, const zf_cl_config_t *clc, tusk_error_t *err);
TUSK_API void zf_cl_destroy(zf_cl_t **cl);
TUSK_API int zf_cl_run(zf_cl_t *cl, const zf_batch_t *batch, zf_result_t *res, tusk_error_t *err);
/* After a run with keep_histograms: RoI i's histograms, nHisto and
 * zHisto's fixed-point sums (zf_zhisto). */
TUSK_API int zf_cl_histograms(const zf_cl_t *cl, size_t i, uint32_t *nh, uint64_t *zsum, tusk_error_t *err);
TUSK_API const char *zf_cl_describe(const zf_cl_t *cl);

typedef struct zf_cl_stats {
    uint64_t launches, rois, groups;
    double find_ms, peak_ms;  /* kernel times from profiling events */
    double pack_s;            /* host time sorting RoIs into launches */
} zf_cl_stats_t;
TUSK_API void zf_cl_stats(const zf_cl_t *cl, zf_cl_stats_t *stats);

/* ---- simulation ---------------------------------------------------------------------- */

typedef struct zf_sim_config {
    uint64_t seed;            /* seed (1); RoI k draws from its own stream */
    uint64_t rois;            /* rois: RoIs to make, 0 for no end (100) */
    double roi_deg;           /* roi_deg: phi width of a RoI, degrees (100) */
    unsigned n_layers;        /* from layers_mm */
    double radius[ADF_IDSP_MAX_LAYERS];      /* layers_mm */
    double half_length[ADF_IDSP_MAX_LAYERS]; /* half_lengths_mm */
    double field_t;           /* field_t: solenoid (2) */
    double eta_max;           /* eta_max: tracks made within |eta| < this (2.5) */
    double sigma_rphi_mm;     /* sigma_rphi_mm: resolution across (0.015) */
    double sigma_z_mm;        /* sigma_z_mm: and along the beam (0.1) */
    double efficiency;        /* efficiency: a layer records a crossing (0.98) */
    double vertex_sigma_mm;   /* vertex_sigma_mm: vertex z spread (50) */
    double vertex_max_mm;     /* vertex_max_mm: cut at (150) */
    double signal_tracks;     /* signal_tracks: mean tracks of the signal vertex in the RoI */
    double signal_pt_min, signal_pt_max; /* signal_pt_min_gev, signal_pt_max_gev: 1/pT^2 between */
    double pileup;            /* pileup: mean pile-up vertices (Poisson) */
    double pileup_dndeta;     /* pileup_dndeta: charged tracks per unit eta over 2 pi, per vertex */
    double pileup_pt_mean;    /* pileup_pt_mean_gev: exponential slope above the minimum */
    double pileup_pt_min;     /* pileup_pt_min_gev */
    double noise;             /* noise: mean noise hits per RoI, per 100 degrees */
    char preset[16];          /* preset: lowlum | highlum | none */
} zf_sim_config_t;

TUSK_API void zf_sim_config_default(zf_sim_config_t *cfg);
TUSK_API const char *const *zf_sim_keys(void);
/* preset first (when given), then every other key over it. */
TUSK_API int zf_sim_config_read(zf_sim_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int zf_sim_config_check(const zf_sim_config_t *cfg, tusk_error_t *err);

typedef struct zf_sim zf_sim_t;

/* One simulated RoI: the spacepoints and their truth (valid until the
 * next zf_sim_make). */
typedef struct zf_sim_roi {
    zf_roi_t roi;
    const adf_idtruth_t *truth;              /* header and pile-up vertices */
    const adf_idtruth_point_t *truth_points; /* one per spacepoint */
    unsigned signal_tracks, pileup_tracks;
} zf_sim_roi_t;

TUSK_API int zf_sim_new(zf_sim_t **out, const zf_sim_config_t *cfg, tusk_error_t *err);
TUSK_API void zf_sim_destroy(zf_sim_t **sim);
TUSK_API const zf_sim_config_t *zf_sim_config(const zf_sim_t *sim);
/* RoI number `index` (the same for the same seed and index). */
TUSK_API int zf_sim_make(zf_sim_t *sim, uint64_t index, const zf_sim_roi_t **roi, tusk_error_t *err);
/* Its frames: data:id_spacepoints, then data:id_truth. */
TUSK_API int zf_sim_encode(const zf_sim_roi_t *roi, adf_writer_t *w, tusk_error_t *err);
TUSK_API size_t zf_sim_bytes(const zf_sim_roi_t *roi);

/* ---- frames ---------------------------------------------------------------------------- */

/* The data:id_spacepoints frames of a buffer into the batch (cleared
 * first). TUSK_EINVAL naming the offset (base_offset + offset in buf) for
 * a malformed frame. */
TUSK_API int zf_frames_read(zf_batch_t *batch, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err);
/* Bytes the data:zvertex frames of n RoIs add at most. */
TUSK_API size_t zf_frames_extra(size_t n);
TUSK_API void zf_result_frame(const zf_result_t *res, const zf_config_t *cfg, int backend, adf_zvertex_t *zv);
/* Copy buf's frames to w in order, each data:id_spacepoints followed by
 * the data:zvertex of res[k] (the k-th of the buffer), the spacepoints
 * themselves left out when keep_points is false. */
TUSK_API int zf_frames_write(const void *buf, size_t size, const zf_result_t *res, size_t n, const zf_config_t *cfg,
                             int backend, bool keep_points, adf_writer_t *w, tusk_error_t *err);

/* ---- quality analysis (Table 5.1) ------------------------------------------------------ */

typedef struct zf_qa_config {
    zf_config_t alg;          /* the settings the z-finder ran with (its digest is checked) */
    bool reference;           /* compute the double-precision reference of every RoI (yes) */
    char label[32];           /* the sample's name in the table (sample) */
    int64_t plot_roi;         /* RoI whose histograms zf_qa_write draws, -1 none (-1) */
} zf_qa_config_t;

TUSK_API void zf_qa_config_default(zf_qa_config_t *cfg);

typedef struct zf_qa zf_qa_t;

TUSK_API int zf_qa_new(zf_qa_t **out, const zf_qa_config_t *cfg, tusk_error_t *err);
TUSK_API void zf_qa_destroy(zf_qa_t **qa);
/* The frames of one buffer (a RoI's frames may span buffers). */
TUSK_API int zf_qa_feed(zf_qa_t *qa, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err);

/* One row of the table: RoIs of one (label, mode, precision, backend). */
typedef struct zf_qa_row {
    char label[32];
    int mode, precision, backend;
    uint64_t rois, found;     /* RoIs; with a vertex */
    double true_mean, true_std; /* |z0 - z_true| over RoIs with a vertex, mm */
    double ref_mean, ref_std;   /* |z0 - z0 of the double reference|, RoIs where both found one */
    uint64_t ref_rois;
    uint64_t within_1mm;      /* |z0 - z_true| < 1 mm (of all RoIs) */
    double core_mean, core_std; /* |z0 - z_true| over the RoIs within 1 mm */
} zf_qa_row_t;

/* Complete the analysis: rows sorted by mode, precision, backend. A RoI
 * whose truth came without a vertex before it (the z-finder writes the
 * vertex right after the spacepoints, the truth follows), or that never
 * got both, is counted by zf_qa_unmatched and left out. */
TUSK_API int zf_qa_finish(zf_qa_t *qa, tusk_error_t *err);
TUSK_API size_t zf_qa_rows(const zf_qa_t *qa, const zf_qa_row_t **rows);
TUSK_API uint64_t zf_qa_unmatched(const zf_qa_t *qa);
/* The table, as BENCHMARKS.md shows it. */
TUSK_API void zf_qa_print(const zf_qa_t *qa, FILE *out);
/* DIR/summary.csv (the rows), DIR/rois.csv (one line per RoI and
 * result, sorted), and when plot_roi is set and plot is true the
 * histogram picture DIR/histograms-roiN.FORMAT (png or svg). */
TUSK_API int zf_qa_write(const zf_qa_t *qa, const char *dir, bool plot, const char *format, tusk_error_t *err);

/* ---- pictures ------------------------------------------------------------------------- */

/* The pair-mode and triplet-mode histograms (nHisto, double reference) of
 * one RoI, with the true vertex marked (NaN: none), in one picture
 * DIR/STEM.FORMAT with its data and gnuplot script beside it (the seed's
 * Figs 3.2-3.4). cfg's mode is ignored. */
TUSK_API int zf_plot_roi(const zf_config_t *cfg, const zf_roi_t *roi, double z_true, const char *title, const char *dir,
                         const char *stem, const char *format, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
