/* tracking_private.h - what tracker.c, pipeline.c, frames.c and track_cl.c share:
 * the tracker's and the batch's insides and the pipeline that takes an
 * evaluator (CPU or OpenCL) of clusters. What the kernel shares too (the
 * attenuation tables, the figure of merit, permutation ranks) is in
 * track_shared.h. */
#ifndef TUSK_TRACKING_PRIVATE_H
#define TUSK_TRACKING_PRIVATE_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pool.h"
#include "track_shared.h"
#include "tusk/adf_reader.h"
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

/* Batch points a cluster holds at most: one of more than max_points
 * (and at most this many) has its nearest points merged until max_points
 * are left (pipeline.c, add_cluster); a bigger one is split. */
#define TRK_CLUSTER_MEMBERS 16

/* A cluster of one event's points, as the evaluators see it: m batch
 * points, evaluated as n points (n = m, or the m merged into n groups). */
typedef struct trk_cluster {
    uint32_t ev;           /* event index in the batch */
    uint8_t n;             /* points evaluated, 1..max_points (<= TRACK_MAX_CLUSTER) */
    uint8_t m;             /* batch points, n..TRK_CLUSTER_MEMBERS (m > n: merged) */
    uint8_t pass;          /* 0 first, 1 reclustering, 2 recombination */
    uint16_t flags;        /* TRACK_GAMMA_SPLIT, TRACK_GAMMA_MERGED */
    double angle;          /* the linking angle that made it, degrees */
    uint32_t pt[TRK_CLUSTER_MEMBERS]; /* batch point indices, ascending */
    uint8_t grp[TRK_CLUSTER_MEMBERS]; /* m > n: the evaluated point (0..n-1) each belongs to */
    uint32_t rank;         /* the best order (set by the evaluator) */
    double fom;            /* its FoM, in double on the host */
    uint8_t accepted;
    uint8_t alt;           /* merged (m > n): the clusters after it are its parts, the alternative */
    uint8_t dropped;       /* the alternative not taken (pipeline.c, choose), or joined into a
                              recombined cluster that was kept, or a recombination not kept */
    uint8_t split;         /* first pass, rejected: its points went on to the second pass */
    uint32_t part[2];      /* recombined (pass 2): the two clusters joined, indices in the
                              chunk's list (not in track_last_clusters' copy) */
} trk_cluster_t;

/* A gamma on its way into the batch, with what orders it in its event. */
typedef struct trk_gamma {
    adf_tracked_gamma_t g;
    uint32_t first_point;
} trk_gamma_t;

/* One worker thread's scratch (pipeline.c, frames.c), grown as needed. */
typedef struct trk_scratch {
    unsigned *label;
    uint32_t *idx;
    double *r;             /* the points' distances from the origin */
    size_t cap;
    trk_gamma_t *gam;      /* one event's accepted gammas */
    size_t gam_cap;
    size_t *live;          /* recombination: one event's clusters (pipeline.c) */
    size_t live_cap;
    struct trk_tail *tail; /*   and what bounds their unions' FoM (pipeline.c) */
    size_t tail_cap;
    double *merge;         /* truth_segments: 6 doubles a (crystal, segment) */
    size_t merge_cap;
    adf_key_t *keys;       /* one composite's records */
    adf_psa_t *psa;
    size_t psa_cap;
    adf_truth_t *truth;
    adf_reader_t *reader;
    adf_writer_t *writer;
} trk_scratch_t;

/* A run of consecutive events of one call, tracked (pipeline.c), read or
 * written (frames.c) by one worker thread at a time; its lists are kept
 * and reused from call to call. */
typedef struct trk_chunk {
    size_t first, n;       /* events of the batch */
    trk_cluster_t *cl;     /* the first pass's clusters in event order, then the second's */
    size_t cl_n, cl_cap;
    size_t n1;             /* clusters of the first pass */
    size_t n2;             /*   and of the first two (then the recombined ones) */
    size_t from;           /* the pass being evaluated: cl[from .. cl_n) */
    size_t multi;          /*   of which of 2+ points */
    uint64_t multi_orders; /*   and their orders (sum of n!) */
    size_t dev;            /* the evaluator's: where they start in its list */
    double *kev;           /* energies for the statistics, in the reference's order: */
    size_t kev_n, kev_cap; /*   accepted (pass 1), unaccepted (pass 1), accepted (pass 2), unaccepted (pass 2) */
    size_t kev_end[4];     /*   where each of the four runs ends */
    adf_tracked_gamma_t *g; /* the events' gammas, in event order */
    size_t g_n, g_cap;
    track_point_t *pt;     /* frames.c, reading: the events' points, */
    size_t n_pt, pt_cap;
    uint64_t ignored;      /*   those ignored, */
    size_t pt_at;          /*   where they go in the batch's; */
    size_t out_at, out_size; /*   writing: where its frames go, their bytes, */
    size_t found;          /*   and its events found among them */
    track_stats_t stats;   /* the whole-number counts of this call */
    int st;                /* a failure, and its message */
    tusk_error_t err;
} trk_chunk_t;

struct track {
    track_config_t cfg;
    const array_t *array;
    trk_setup_t setup;     /* the figure of merit's settings (inner: the inner radius, mm) */
    double mu[3 * TRK_TABLE_N]; /* the attenuation tables (track_shared.h) */
    double gap_min;        /* their least ln mu_tot - ln mu_x (the recombination's bound, pipeline.c) */
    track_stats_t stats;
    /* the host's threads (pipeline.c): pool, their scratch, the chunks of the last call */
    tusk_pool_t *pool;
    unsigned threads;
    trk_scratch_t *scratch; /* threads of them */
    trk_chunk_t *chunk;
    size_t n_chunks, chunk_cap;
    size_t chunk_events;   /* events a chunk; 0: chosen from the batch and the threads (tests set it) */
    bool recombine_all;    /* score every pair of the recombination, none left out by its bound (tests) */
    adf_frame_t *frames;   /* frames.c: the frames of a buffer that make events */
    size_t frames_cap;
};

/* How a backend finds the best order of clusters of 2+ points (the
 * rank, lowest on ties); single points are the pipeline's. Either
 * `local`: on the worker threads, a chunk's clusters c[0..n) at a time
 * (the CPU); or `global`, the clusters of a pass of every chunk
 * (t->chunk[k].cl[from .. cl_n), `multi` of 2+ points) at once (a device),
 * after which `fetch` sets the ranks of one chunk's, on a worker thread. */
typedef struct trk_eval {
    void *ctx;
    int (*local)(void *ctx, const track_t *t, const track_batch_t *b, trk_cluster_t *c, size_t n, tusk_error_t *err);
    int (*global)(void *ctx, track_t *t, const track_batch_t *b, tusk_error_t *err);
    int (*fetch)(void *ctx, const track_t *t, trk_chunk_t *ch, tusk_error_t *err);
} trk_eval_t;

/* Cluster events first .. first + n_ev - 1, evaluate (both passes and
 * the recombination),
 * accept, append the results to the batch's (first = 0 starts them
 * afresh) and add the statistics to t's, on t's threads. Results and
 * statistics do not depend on the threads or the chunks. */
int trk_pipeline(track_t *t, track_batch_t *b, size_t first, size_t n_ev, const trk_eval_t *eval,
                 tusk_error_t *err);
/* Cut events first .. first + n - 1 into t's chunks (their lists
 * emptied). */
int trk_chunks_make(track_t *t, size_t first, size_t n, tusk_error_t *err);
/* Run fn over the chunks of the last call on t's threads (an evaluator's
 * packing). */
void trk_chunks_run(track_t *t, void (*fn)(void *ctx, size_t chunk, unsigned thread), void *ctx);
/* The pipeline's threads and chunks freed (track_destroy). */
void trk_pipeline_free(track_t *t);

/* The clusters of the last tracking call (a track_frames_* call since
 * empties the chunks), both passes and the recombined ones, in the order
 * a single chunk would hold them (the first pass's of every event, then
 * the second's, then the recombined ones): copies
 * into a new array (free it), *n of them; NULL when out of memory. For
 * the tests. */
TUSK_INTERNAL trk_cluster_t *track_last_clusters(const track_t *t, size_t *n);

/* Where extracted points go: a list (a batch's, or a chunk's while
 * frames are read on the threads), the count of the event they belong to
 * (or NULL) and of those ignored; no_event: a batch without an event
 * begun, which takes no point. */
typedef struct trk_sink {
    track_point_t **pt;
    size_t *n, *cap;
    size_t *ev_n;
    uint64_t *ignored;
    bool no_event;
} trk_sink_t;

/* track_add_psa and track_add_truth into a sink (sc: the merging's
 * scratch). */
int trk_psa_points(const track_t *t, const trk_sink_t *s, const adf_psa_t *psa, size_t n, tusk_error_t *err);
int trk_truth_points(const track_t *t, trk_scratch_t *sc, const trk_sink_t *s, const adf_truth_t *truth,
                     bool segments, tusk_error_t *err);

/* The n points of a cluster that are evaluated, in its order: its batch
 * points, or when it has merged ones (m > n) each group's energy sum at
 * its energy-weighted centroid (crystal and segment of its first
 * point). */
TUSK_INTERNAL void track_cluster_points(const track_batch_t *b, const trk_cluster_t *c, track_point_t *out);

/* The recombination's lower bound of the FoM of the union of joinable
 * clusters p and q of one event, in the orders it scores (pipeline.c,
 * union_low, both parts first in turn): a pair whose bound is above
 * fom_max, or not below the FoM of an accepted part of 2+ points, is not
 * scored. For the tests. */
TUSK_INTERNAL double track_recombine_low(const track_t *t, const track_batch_t *b, const trk_cluster_t *p,
                                         const trk_cluster_t *q);

/* The figure of merit's view of n points (track_shared.h), in double. */
void trk_geo_points(const track_t *t, const track_point_t *pts, unsigned n, trk_geo_t *g);
/* The FoM of the order perm of n points (track_fom without its checks). */
double trk_fom_points(const track_t *t, const track_point_t *pts, const unsigned *perm, unsigned n);
/* The best order of n points by depth-first search (track_best_order). */
double trk_search(const track_t *t, const track_point_t *pts, unsigned n, unsigned *best_perm, uint64_t *orders);
/* Single-linkage clusters (track_cluster); r: the points' distances from
 * the origin, or NULL to compute them. */
size_t trk_cluster_r(const track_point_t *pts, const double *r, size_t n, double angle_deg, unsigned *label);

/* The kernels' source, compiled into the library (Makefile.am's TRACK_KERNEL_PARTS, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_track_kernel_source[];
TUSK_INTERNAL extern const unsigned long tusk_track_kernel_source_size;

#endif
