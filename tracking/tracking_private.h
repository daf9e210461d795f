/* tracking_private.h - what tracker.c, frames.c and track_cl.c share:
 * the tracker's and the batch's insides and the pipeline that takes an
 * evaluator (CPU or OpenCL) of clusters. What the kernel shares too (the
 * attenuation tables, the figure of merit, permutation ranks) is in
 * track_shared.h. */
#ifndef TUSK_TRACKING_PRIVATE_H
#define TUSK_TRACKING_PRIVATE_H

#include "tusk/export.h"

#include <stddef.h>
#include <stdint.h>

#include "track_shared.h"
#include "tusk/track.h"

_Static_assert(TRACK_MAX_CLUSTER == TRK_MAX_POINTS, "the kernel takes clusters of up to TRACK_MAX_CLUSTER points");

typedef struct trk_event {
    uint32_t event;
    uint64_t timestamp;
    size_t first, n;       /* points */
    size_t g_first, g_n;   /* gammas, after tracking */
    uint16_t status;
    uint64_t src;          /* offset in the buffer of the frame it came from (frames.c) */
} trk_event_t;

struct track_batch {
    trk_event_t *ev;
    size_t n_ev, ev_cap;
    track_point_t *pt;
    size_t n_pt, pt_cap;
    adf_tracked_gamma_t *g;
    size_t n_g, g_cap;
};

/* A cluster of one event's points, as the evaluators see it. */
typedef struct trk_cluster {
    uint32_t ev;           /* event index in the batch */
    uint8_t n;             /* points, 1..TRACK_MAX_CLUSTER */
    uint8_t pass;          /* 0 first, 1 reclustering */
    uint16_t flags;        /* TRACK_GAMMA_SPLIT */
    double angle;          /* the linking angle that made it, degrees */
    uint32_t pt[TRACK_MAX_CLUSTER]; /* batch point indices, ascending */
    uint32_t rank;         /* the best order (set by the evaluator) */
    double fom;            /* its FoM, in double on the host */
    uint8_t accepted;
} trk_cluster_t;

struct track {
    track_config_t cfg;
    const array_t *array;
    trk_setup_t setup;     /* the figure of merit's settings (inner: the inner radius, mm) */
    double mu[3 * TRK_TABLE_N]; /* the attenuation tables (track_shared.h) */
    track_stats_t stats;
    /* scratch, grown as needed */
    trk_cluster_t *cl;
    size_t cl_n, cl_cap;
    unsigned *label;
    size_t label_cap;
    uint32_t *idx;
    size_t idx_cap;
    double *merge;         /* truth_segments: 6 doubles a (crystal, segment) */
    size_t merge_cap;
    adf_key_t *keys;       /* frames.c: one composite's records */
    adf_psa_t *psa;
    size_t psa_cap;
    adf_truth_t *truth;
};

/* Evaluate the clusters of 2+ points among c[0..n): set each one's rank
 * (lowest on ties). Single points are the pipeline's. */
typedef int (*trk_eval_fn)(void *ctx, track_t *t, const track_batch_t *b, trk_cluster_t *c, size_t n,
                           tusk_error_t *err);

/* Cluster events first .. first + n_ev - 1, evaluate (both passes),
 * accept, append the results to the batch's (first = 0 starts them
 * afresh) and add the statistics to t's. */
int trk_pipeline(track_t *t, track_batch_t *b, size_t first, size_t n_ev, trk_eval_fn eval, void *ctx,
                 tusk_error_t *err);

/* The points of a cluster, copied out in its order. */
void trk_cluster_points(const track_batch_t *b, const trk_cluster_t *c, track_point_t *out);

/* The kernels' source, compiled into the library (Makefile.am's TRACK_KERNEL_PARTS, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_track_kernel_source[];
TUSK_INTERNAL extern const unsigned long tusk_track_kernel_source_size;

#endif
