/* ut.h - libtusk-ut: the LHCb Upstream Tracker's raw-bank decoding and
 * the Compass tracking of Allen (Fernandez Declara et al. 2019, seed 003;
 * tusk's specification: ../shared/specs/trackers.md section 3; the
 * design: ut/README.md).
 *
 * Per event:
 *   1. decoding: the UT raw banks (a bank a readout sector, a 16-bit word
 *      a cluster) become hits, grouped by plane and sector group (known x
 *      ranges, in x order) and sorted by y within a group: count, prefix
 *      sum, place, sort, write;
 *   2. Compass: each VELO track is extended through the four UT planes:
 *      windows (a binary search for the sector group, two for y, a
 *      refinement in x) in 1, 3 or 5 sectors a plane, then tracklets of 3
 *      or 4 hits forwards and backwards, up to `candidates` of them, the
 *      best kept (4 hits over 3, then the lowest chi2 of a p-kick fit with
 *      the VELO track), with its q/p from the kick.
 *
 * Backends:
 *   reference  plain C, one thread, events in sequence (windows in place
 *              per VELO track, as the paper's CPU code, §V-C)
 *   fast       the same code on a pool of threads, events spread over them
 *   opencl     many events a launch: a decoding kernel (one work-group an
 *              event), a window kernel (plane x active track, compacted)
 *              and a tracklet kernel (a work-item an active track, the
 *              windows cached in local memory), Allen's throughput model
 * All three give the same hits and tracks, bit for bit (ut/README.md,
 * "Backends").
 *
 * Also here: the geometry (planes, staves, sectors, sector groups, as
 * settings with a digest), the event simulation (pp collisions, a magnet
 * kick, VELO tracks, UT clusters, noise, truth), the frames glue, and the
 * quality analysis (the paper's Table 3: efficiencies, clones, fakes;
 * momentum resolution).
 *
 * Functions return TUSK_OK or a negative tusk status and fill a
 * tusk_error_t; objects are opaque, made by x_new and freed by x_destroy,
 * and used from one thread at a time. */
#ifndef TUSK_UT_H
#define TUSK_UT_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tusk/adf_ut.h>
#include <tusk/adf_writer.h>
#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ut_backend { UT_REFERENCE = 1, UT_FAST = 2, UT_OPENCL = 3 }; /* = ADF_UT_* */
TUSK_API const char *ut_backend_name(int backend); /* "reference", "fast", "opencl", "?" */

/* ---- the geometry ------------------------------------------------------------------- */

/* Keys and defaults (ut/README.md says why); the producer and the
 * tracker read the same keys, and the frames carry the digest. */
typedef struct ut_geometry_config {
    double plane_z[4];        /* planes_z_mm: UTaX, UTaU, UTbV, UTbX (2327.5 2372.5 2597.5 2642.5) */
    double stereo_deg;        /* stereo_deg: U at +this, V at -this (5) */
    unsigned staves_x;        /* staves_x: staves of an X plane (16) */
    unsigned staves_uv;       /* staves_uv: of a U or V plane (18) */
    double stave_width_mm;    /* stave_width_mm: a stave's (and a sensor's) width and height (97.28) */
    unsigned rows;            /* rows: sensors a stave, top to bottom (14) */
    double pitch_um;          /* pitch_um: the outer sensors' strip pitch (190) */
    double fine_pitch_um;     /* fine_pitch_um: the central staves' (95) */
    unsigned fine_staves;     /* fine_staves: central staves of fine pitch, two sector groups each (4) */
    unsigned inner_staves;    /* inner_staves: central staves whose central rows have half-height sectors (2) */
    unsigned inner_rows;      /* inner_rows: those rows (4) */
    unsigned inner_groups;    /* inner_groups: sector groups an inner stave is split into (2, as the other fine staves) */
    double hole_mm;           /* hole_mm: the beam hole, a square of this half side (33) */
} ut_geometry_config_t;

TUSK_API void ut_geometry_config_default(ut_geometry_config_t *cfg);
TUSK_API const char *const *ut_geometry_keys(void);
/* Every key of ut_geometry_keys that params has; other keys are ignored.
 * TUSK_EPARAM naming the key. */
TUSK_API int ut_geometry_config_read(ut_geometry_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int ut_geometry_config_set(ut_geometry_config_t *cfg, const char *key, const char *value, tusk_error_t *err);

typedef struct ut_geometry ut_geometry_t;

/* TUSK_EPARAM for a layout that does not fit the formats (more than 1024
 * sectors or 256 sector groups, 1024 strips a sector, planes not in z
 * order, ...). */
TUSK_API int ut_geometry_new(ut_geometry_t **out, const ut_geometry_config_t *cfg, tusk_error_t *err);
TUSK_API void ut_geometry_destroy(ut_geometry_t **geo);
TUSK_API const ut_geometry_config_t *ut_geometry_config(const ut_geometry_t *geo);
TUSK_API uint32_t ut_geometry_digest(const ut_geometry_t *geo);
TUSK_API unsigned ut_geometry_sectors(const ut_geometry_t *geo);
TUSK_API unsigned ut_geometry_groups(const ut_geometry_t *geo);
/* "4 planes at z 2327.5-2642.5 mm, 984 sectors, 84 sector groups, ..." */
TUSK_API void ut_geometry_format(const ut_geometry_t *geo, char *buf, size_t cap);

/* One sector, as the frames' readers need it. */
typedef struct ut_sector_info {
    unsigned plane, stave, row;
    unsigned strips;
    double pitch_mm;
    double u_lo_mm;           /* x at y = 0 of strip 0's lower edge */
    double y_begin_mm, y_end_mm, z_mm;
    unsigned region;          /* 0 outer, 1 fine pitch, 2 fine pitch and half height */
} ut_sector_info_t;
TUSK_API void ut_geometry_sector(const ut_geometry_t *geo, unsigned sector, ut_sector_info_t *info);

/* ---- the tracker's settings ---------------------------------------------------------------- */

typedef struct ut_config {
    unsigned sectors;         /* sectors: searched a plane, 1 | 3 | 5 (5) */
    unsigned candidates;      /* candidates: tracklets tried a track, 1-16 (8) */
    double p_min_gev;         /* p_min_gev: the windows reach the kick of this momentum (1) */
    double pt_min_gev;        /* pt_min_gev: a track's pT at least (0: no cut) */
    double kick_gev;          /* kick_gev: the magnet's kick, tx_UT - tx_VELO = kick q/p (0.035) */
    double z_kick_mm;         /* z_kick_mm: where the kick happens (1780) */
    double x_tol_mm;          /* x_tol_mm: the windows' width beyond the kick's reach (3) */
    double y_tol_mm;          /* y_tol_mm: a strip's y range against the track's y (3) */
    double dtx_tol;           /* dtx_tol: a tracklet's slope change beyond the kick's reach (0.005) */
    double kink_tol_mm;       /* kink_tol_mm: the tracklet's line at z_kick against the VELO track (2) */
    double hit_tol_mm;        /* hit_tol_mm: a hit of a searched plane against the tracklet's line (0.5) */
    double max_chi2;          /* max_chi2: a track's chi2 below this (100) */
    double hit_sigma_strips;  /* hit_sigma_strips: a cluster's x error, strips (0.25) */
    double kink_sigma_mm;     /* kink_sigma_mm: the VELO track's x error at z_kick (1) */
    ut_geometry_config_t geo; /* the geometry's keys */
} ut_config_t;

TUSK_API void ut_config_default(ut_config_t *cfg);
/* The tracker's keys and the geometry's, NULL-terminated. */
TUSK_API const char *const *ut_config_keys(void);
TUSK_API int ut_config_set(ut_config_t *cfg, const char *key, const char *value, tusk_error_t *err);
/* Every key of ut_config_keys that params has; other keys are ignored. */
TUSK_API int ut_config_read(ut_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int ut_config_check(const ut_config_t *cfg, tusk_error_t *err);
/* A digest of every tracker setting and the geometry (data:ut_tracks carries it). */
TUSK_API uint32_t ut_config_digest(const ut_config_t *cfg);
/* "5 sectors, 8 candidates, p > 1.5 GeV, ..." */
TUSK_API void ut_config_format(const ut_config_t *cfg, char *buf, size_t cap);

/* ---- events ---------------------------------------------------------------------------------- */

/* One event: its raw banks and VELO tracks (a data:ut_raw and a
 * data:velo_tracks frame). */
typedef struct ut_event {
    uint32_t event;
    uint64_t timestamp;
    uint32_t geometry;        /* the raw banks' geometry digest */
    uint32_t n_banks, n_hits, n_tracks;
    const adf_ut_bank_t *banks;
    const uint16_t *words;    /* n_hits, bank after bank */
    const adf_velo_track_t *velo;
} ut_event_t;

/* Many events (copies), in the arrays a launch uploads. */
typedef struct ut_batch ut_batch_t;
TUSK_API ut_batch_t *ut_batch_new(void);
TUSK_API void ut_batch_destroy(ut_batch_t **batch);
TUSK_API void ut_batch_clear(ut_batch_t *batch);
/* Copy an event in, checked against the geometry: TUSK_EINVAL naming the
 * event for another geometry's digest, a sector the geometry does not
 * have, a strip beyond its sector; TUSK_ELIMIT for more than 32,767 hits
 * (the 16-bit windows). */
TUSK_API int ut_batch_add(ut_batch_t *batch, const ut_geometry_t *geo, const ut_event_t *ev, tusk_error_t *err);
TUSK_API size_t ut_batch_count(const ut_batch_t *batch);
TUSK_API uint64_t ut_batch_hits(const ut_batch_t *batch);
TUSK_API uint64_t ut_batch_tracks(const ut_batch_t *batch);
/* Event i's number, timestamp and counts (its arrays are not handed out). */
TUSK_API void ut_batch_event(const ut_batch_t *batch, size_t i, uint32_t *event, uint64_t *timestamp,
                             uint32_t *n_hits, uint32_t *n_tracks);

/* ---- results ------------------------------------------------------------------------------------- */

typedef struct ut_result ut_result_t;
TUSK_API ut_result_t *ut_result_new(void);
TUSK_API void ut_result_destroy(ut_result_t **res);
/* Ask the backends for the decoded hits too (default: tracks only). */
TUSK_API void ut_result_keep_hits(ut_result_t *res, bool keep);
TUSK_API size_t ut_result_events(const ut_result_t *res);
/* Event i's tracks, in VELO track order. */
TUSK_API uint32_t ut_result_tracks(const ut_result_t *res, size_t i);
TUSK_API void ut_result_track(const ut_result_t *res, size_t i, uint32_t k, adf_ut_track_t *track);
TUSK_API uint64_t ut_result_total(const ut_result_t *res);
/* Event i's decoded hits (0 unless kept), in decoded order. */
TUSK_API uint32_t ut_result_hits(const ut_result_t *res, size_t i);
TUSK_API void ut_result_hit(const ut_result_t *res, size_t i, uint32_t k, adf_ut_hit_t *hit);
/* The same tracks (and hits, when both kept them), bit for bit and in the
 * same order? If not, why names the first event and record that differ. */
TUSK_API bool ut_result_equal(const ut_result_t *a, const ut_result_t *b, char *why, size_t cap);

/* What a run does: the decoding, Compass on the hits the last decoding of
 * the same batch left (the benchmark's "Compass alone"), or both. */
enum ut_stages { UT_DECODE = 1, UT_COMPASS = 2, UT_ALL = 3 };

/* ---- reference: one thread ------------------------------------------------------------------------ */

typedef struct ut_ref ut_ref_t;
TUSK_API int ut_ref_new(ut_ref_t **out, const ut_config_t *cfg, tusk_error_t *err);
TUSK_API void ut_ref_destroy(ut_ref_t **ref);
TUSK_API int ut_ref_run(ut_ref_t *ref, const ut_batch_t *batch, ut_result_t *res, tusk_error_t *err);
TUSK_API int ut_ref_run_stages(ut_ref_t *ref, const ut_batch_t *batch, int stages, ut_result_t *res,
                               tusk_error_t *err);

/* ---- fast: events on CPU threads -------------------------------------------------------------------- */

typedef struct ut_fast ut_fast_t;
/* threads 0: one per online CPU. */
TUSK_API int ut_fast_new(ut_fast_t **out, const ut_config_t *cfg, unsigned threads, tusk_error_t *err);
TUSK_API void ut_fast_destroy(ut_fast_t **fast);
TUSK_API unsigned ut_fast_threads(const ut_fast_t *fast);
TUSK_API int ut_fast_run(ut_fast_t *fast, const ut_batch_t *batch, ut_result_t *res, tusk_error_t *err);
TUSK_API int ut_fast_run_stages(ut_fast_t *fast, const ut_batch_t *batch, int stages, ut_result_t *res,
                                tusk_error_t *err);

/* ---- opencl ------------------------------------------------------------------------------------------ */

typedef struct ut_cl ut_cl_t;

typedef struct ut_cl_config {
    const char *device;       /* selection (tusk/cl.h); NULL: $TUSK_CL_DEVICE, else any */
    unsigned instance;        /* for ":instance" */
    const char *options;      /* extra build options (fast-math options are refused) */
    bool no_cache;            /* no program-binary cache */
    unsigned group_size;      /* work-items of an event's work-group (128) */
    unsigned threads;         /* host threads packing and unpacking (0: one per online CPU) */
} ut_cl_config_t;

TUSK_API void ut_cl_config_default(ut_cl_config_t *clc);
/* Choose the device, check it can reproduce the CPU backends (a correctly
 * rounded float division, or fp64; little-endian), build the kernels.
 * TUSK_ENODEV, TUSK_EBUILD, TUSK_ECL, TUSK_EINVAL, TUSK_ELIMIT. */
TUSK_API int ut_cl_new(ut_cl_t **out, const ut_config_t *cfg, const ut_cl_config_t *clc, tusk_error_t *err);
TUSK_API void ut_cl_destroy(ut_cl_t **cl);
TUSK_API int ut_cl_run(ut_cl_t *cl, const ut_batch_t *batch, ut_result_t *res, tusk_error_t *err);
TUSK_API int ut_cl_run_stages(ut_cl_t *cl, const ut_batch_t *batch, int stages, ut_result_t *res, tusk_error_t *err);
TUSK_API const char *ut_cl_describe(const ut_cl_t *cl);

/* Times of the last ut_cl_run (ms; kernels from profiling events). */
typedef struct ut_cl_times {
    double upload, decode, windows, tracklets, download;
    double pack, unpack;      /* host: the batch into pinned buffers, results out of them */
    double total;             /* wall time of the run */
    uint64_t bytes_up, bytes_down;
    uint64_t kernel_bytes;    /* bytes the kernels read and write at least (ut/README.md's model) */
    uint64_t active_tracks;   /* tracks the window kernel took (after compaction) */
} ut_cl_times_t;
TUSK_API void ut_cl_times(const ut_cl_t *cl, ut_cl_times_t *times);

/* The device's memory bandwidth: a kernel copying `bytes` (read and
 * written) `repeat` times; GB/s of the best run. */
TUSK_API int ut_cl_bandwidth(ut_cl_t *cl, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err);

/* ---- simulation ------------------------------------------------------------------------------------------ */

typedef struct ut_sim_config {
    uint64_t seed;            /* seed (1); event k draws from its own stream */
    uint64_t events;          /* events: of the run, 0 for no end (100) */
    double interactions;      /* interactions: mean pp collisions an event, Poisson (7.6) */
    double dndeta;            /* dndeta: charged particles per unit of pseudorapidity a collision (6) */
    double eta_min, eta_max;  /* eta_min, eta_max: the forward particles made (1.8, 5.2) */
    double backward;          /* backward: mean backward VELO tracks a collision (5) */
    double pt_mean_gev;       /* pt_mean_gev: mean pT, a Gamma(2) spectrum (0.55) */
    double vertex_sigma_z_mm; /* vertex_sigma_z_mm: the collisions' spread along the beam (45) */
    double velo_eta_min, velo_eta_max; /* velo_eta_min, velo_eta_max: the VELO's acceptance (2, 5) */
    double velo_efficiency;   /* velo_efficiency: a particle in it has a VELO track (0.99) */
    double velo_z_mm;         /* velo_z_mm: the VELO tracks' state z (770) */
    double velo_pos_um;       /* velo_pos_um: their position resolution there (15) */
    double velo_slope_mrad;   /* velo_slope_mrad: their slope resolution, constant term (0.05) */
    double velo_slope_ms_mrad; /* velo_slope_ms_mrad: and the multiple scattering term, over p in GeV (0.5) */
    double velo_fakes;        /* velo_fakes: fake VELO tracks, a fraction of the real ones (0.02) */
    double velo_clones;       /* velo_clones: duplicated VELO tracks, a fraction (0) */
    double kick_gev;          /* kick_gev: the magnet between the VELO and the UT, tx += kick q/p (0.035) */
    double kick_z_mm;         /* kick_z_mm: as one kick at this z (1780) */
    double scatter_mrad;      /* scatter_mrad: multiple scattering before the UT, at z_kick, mrad GeV / p (3) */
    double hit_efficiency;    /* hit_efficiency: a plane records a crossing (0.99) */
    double resolution_strips; /* resolution_strips: a cluster's position error, strips (0.25) */
    double noise;             /* noise: mean noise clusters an event, over the whole UT (20) */
    double main_kick_gev;     /* main_kick_gev: the main magnet, after the UT (1.2) */
    double main_z_mm;         /* main_z_mm: its kick plane (5300) */
    double scifi_z_mm[2];     /* scifi_z_mm: the SciFi's first and last station (7830 9410) */
    double scifi_x_mm, scifi_y_mm; /* scifi_x_mm, scifi_y_mm: its half width and height (3000 2400) */
    double scifi_hole_mm;     /* scifi_hole_mm: its beam hole's half side (100) */
    ut_geometry_config_t geo; /* the geometry's keys */
    bool truth;               /* truth: write data:ut_truth (yes) */
} ut_sim_config_t;

TUSK_API void ut_sim_config_default(ut_sim_config_t *cfg);
TUSK_API const char *const *ut_sim_keys(void);
TUSK_API int ut_sim_config_read(ut_sim_config_t *cfg, const tusk_params_t *params, tusk_error_t *err);
TUSK_API int ut_sim_config_check(const ut_sim_config_t *cfg, tusk_error_t *err);

typedef struct ut_sim ut_sim_t;

/* A simulated event: its frames' content (valid until the next ut_sim_make). */
typedef struct ut_sim_event {
    ut_event_t ev;
    uint32_t n_particles;
    const adf_ut_particle_t *particles;
    const uint32_t *hit_particle;  /* n_hits */
    const uint32_t *velo_particle; /* n_tracks */
    unsigned collisions, noise_hits;
} ut_sim_event_t;

TUSK_API int ut_sim_new(ut_sim_t **out, const ut_sim_config_t *cfg, tusk_error_t *err);
TUSK_API void ut_sim_destroy(ut_sim_t **sim);
TUSK_API const ut_sim_config_t *ut_sim_config(const ut_sim_t *sim);
TUSK_API const ut_geometry_t *ut_sim_geometry(const ut_sim_t *sim);
/* Event number `index` (the same for the same seed and index). */
TUSK_API int ut_sim_make(ut_sim_t *sim, uint64_t index, const ut_sim_event_t **ev, tusk_error_t *err);
/* Its frame: one event:data:ut holding data:ut_raw, data:velo_tracks, then
 * data:ut_truth when truth is on. */
TUSK_API size_t ut_sim_bytes(const ut_sim_t *sim, const ut_sim_event_t *ev);
TUSK_API int ut_sim_encode(const ut_sim_t *sim, const ut_sim_event_t *ev, adf_writer_t *w, tusk_error_t *err);

/* ---- frames ---------------------------------------------------------------------------------------------- */

/* The events of a buffer into the batch (cleared first): each
 * event:data:ut with its data:ut_raw and data:velo_tracks. TUSK_EINVAL
 * naming the offset (base_offset + offset in buf) for a malformed frame,
 * an event without one of the two, a data:ut_raw or data:velo_tracks
 * outside an event:data:ut, or an event the geometry refuses
 * (ut_batch_add). */
TUSK_API int ut_frames_read(ut_batch_t *batch, const ut_geometry_t *geo, const void *buf, size_t size,
                            uint64_t base_offset, tusk_error_t *err);
/* Bytes the data:ut_tracks (and, with hits, data:ut_hits) frames of a
 * result add. */
TUSK_API size_t ut_frames_extra(const ut_result_t *res, bool hits);
/* Copy buf's frames to w in order (the raw banks left out when keep_raw
 * is false), each event's data:velo_tracks followed, inside its
 * event:data:ut, by its data:ut_tracks (and data:ut_hits with hits);
 * batch and res are what ut_frames_read and a backend made of buf. */
TUSK_API int ut_frames_write(const void *buf, size_t size, const ut_batch_t *batch, const ut_result_t *res,
                             const ut_config_t *cfg, int backend, bool keep_raw, bool hits, adf_writer_t *w,
                             tusk_error_t *err);

/* ---- quality analysis (Table 3) ------------------------------------------------------------------------ */

typedef struct ut_qa_config {
    ut_config_t alg;          /* the settings the tracker ran with (its digest is checked) */
    char label[32];           /* the sample's name in the table (sample) */
    double p_cut_gev;         /* the momentum cut of the "p > 5 GeV" categories (5) */
} ut_qa_config_t;

TUSK_API void ut_qa_config_default(ut_qa_config_t *cfg);

typedef struct ut_qa ut_qa_t;
TUSK_API int ut_qa_new(ut_qa_t **out, const ut_qa_config_t *cfg, tusk_error_t *err);
TUSK_API void ut_qa_destroy(ut_qa_t **qa);
/* The frames of one buffer; an event's frames (raw, VELO tracks, UT
 * tracks, truth) may come over several buffers and in any order. */
TUSK_API int ut_qa_feed(ut_qa_t *qa, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err);
/* Complete the analysis. An event that never got all four frames is an
 * error (TUSK_EINVAL) naming it: nothing is left out silently. */
TUSK_API int ut_qa_finish(ut_qa_t *qa, tusk_error_t *err);

enum { UT_QA_LONG, UT_QA_LONG_P5, UT_QA_UP, UT_QA_UP_P5, UT_QA_CATEGORIES };

typedef struct ut_qa_summary {
    char label[32];
    int backend;
    unsigned sectors, candidates;
    uint64_t events, velo_tracks, hits, tracks;
    uint64_t reconstructible[UT_QA_CATEGORIES], found[UT_QA_CATEGORIES];
    uint64_t matched[UT_QA_CATEGORIES], clones[UT_QA_CATEGORIES]; /* tracks matched to a particle of the category */
    uint64_t fakes;           /* tracks matched to no particle */
    uint64_t charge_right, charge_tried; /* matched tracks with the particle's charge */
    double dp_mean, dp_rms;   /* (p - p_true) / p_true of matched tracks */
    double dp_core;           /* half the width holding 68 % of them, around the median */
} ut_qa_summary_t;

TUSK_API void ut_qa_summary(const ut_qa_t *qa, ut_qa_summary_t *s);
TUSK_API const char *ut_qa_category_name(int category); /* "long", "long, p > 5 GeV", "VELO+UT", ... */
/* The table, as BENCHMARKS.md shows it. */
TUSK_API void ut_qa_print(const ut_qa_t *qa, FILE *out);
/* DIR/summary.csv, DIR/momentum.csv, and with plot the picture
 * DIR/ut-qa.FORMAT (efficiency against p; the momentum resolution) with
 * its data and gnuplot script. */
TUSK_API int ut_qa_write(const ut_qa_t *qa, const char *dir, bool plot, const char *format, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
