/* track.h - gamma-ray tracking (libtusk-tracking, issue 9): forward
 * tracking of the interaction points of built events into gamma rays, the
 * CPU reference. The OpenCL backend is tusk/track_cl.h; the algorithm and
 * its figure of merit are described in tracking/README.md.
 *
 * Per event: interaction points (array frame, mm, target at the origin;
 * keV) are clustered by their angular separation seen from the target
 * (single linkage, cone_deg); a cluster of more than max_points points is
 * evaluated whole with its nearest points merged (oversize = merge, up to
 * 16 points) against the parts that reclustering with smaller angles
 * splits it into, or only split (oversize = split). Every order of a cluster's
 * points (n! of them) is scored by a figure of merit (FoM, lower is
 * better: a normalised -ln likelihood of Compton scattering angles against
 * positions, attenuation and interaction probabilities); the best order
 * is accepted when its FoM is at most fom_max, a single point when the
 * probability that a photon of its energy reaches its depth and is
 * photo-absorbed there is at least single_min_prob. The points of rejected
 * clusters are reclustered once with a smaller angle and evaluated again;
 * whatever stays unaccepted is counted in the statistics.
 *
 * Settings (tusk/params.h `key = value`; unknown keys refused by
 * track_config_read, messages naming the key):
 *   points = psa | truth | truth_segments
 *                         where the points come from (psa): the hits of
 *                         event:data:psa composites (crystal frame ->
 *                         array frame through the array), every data:truth
 *                         point (the ideal tracker), or the truth points
 *                         merged per crystal segment at their
 *                         energy-weighted centroid (a perfect PSA)
 *   cone_deg = 20         clustering angle, (0, 180)
 *   recluster_deg = 10    the second pass's angle, (0, cone_deg)
 *   max_points = 7        points evaluated in a cluster at most, 1..8 (8! orders)
 *   oversize = merge | split
 *                         a cluster of more points (merge): its nearest
 *                         points merged (energy-weighted centroids) until
 *                         max_points are left and the whole cluster
 *                         evaluated, for clusters of up to 16 points (more
 *                         are split); or split by reclustering at smaller
 *                         angles (tusk before issue 22); with merge
 *                         the parts the split makes are the alternative:
 *                         the whole is kept when it is accepted and no
 *                         part of 2+ points fits better (lower FoM)
 *   merge_points = 6      points a merged cluster is evaluated as, 2..8
 *                         (at most max_points): 6! = 720 orders, 7! =
 *                         5040
 *   recombine_points = 0  0: no recombination; 2..max_points: after both
 *                         passes, every pair of clusters of an event that
 *                         stayed as they were (not split into the second
 *                         pass, not merged) with at most this many points
 *                         together is scored as one cluster, each part's
 *                         points in a row (the photon crossed once); the
 *                         union is kept when it is accepted and fits
 *                         better (lower FoM) than each accepted part of
 *                         2+ points, the best-fitting unions first.
 *                         Recovers gammas whose points the clustering
 *                         spread; at high multiplicity it also joins
 *                         pieces of different gammas (tracking/README.md)
 *                         Pairs that no order can make kept (a lower
 *                         bound of the FoM, or a partial sum of it, above
 *                         fom_max or not below an accepted part's FoM) are
 *                         not scored to the end and not listed: the gammas
 *                         are those of scoring every pair
 *   preset = psa | exact  sets w0_mm, w1_mm and recombine_points together
 *                         (before the other keys, which override it): psa
 *                         (the defaults: 3, 6, 0) for points with a PSA's
 *                         position errors; exact (0.2, 0.5, 7) for exact
 *                         points (points = truth, the ideal tracker):
 *                         their positions trusted and the clusters the
 *                         clustering spread recombined (tracking/README.md,
 *                         "Presets"; docs/validation.md, "Tracking
 *                         losses")
 *   fom_max = 3.5         acceptance of clusters of 2+ points
 *   single_min_prob = 0.05  acceptance of single points, (0, 1]
 *   w0_mm = 3, w1_mm = 6  position resolution sigma(e) = w0 + w1
 *                         sqrt(100 keV / e) at a point of energy e (mm);
 *                         w0 + w1 > 0
 *   inner_radius_mm = 0   where germanium starts, seen from the target
 *                         (0: the array's smallest crystal distance; 235
 *                         when there is no array)
 *   min_point_kev = 0     points at or below this energy are ignored
 *                         (counted as points_ignored)
 *
 * Objects: a track_t (configuration, tables, statistics, scratch, its
 * host threads) and a track_batch_t (the points of many events and, after
 * tracking, their gammas). Neither has global state; use each from one
 * thread at a time. Several trackers may live in one process.
 *
 * Host threads (track_set_threads): a tracker starts with one, the
 * caller's: track_run is then the reference, one thread. With more, the
 * events of a call are cut into chunks of consecutive events that the
 * threads take (clustering, acceptance, the gammas, the statistics, and
 * for track_run the search too: the "fast" backend of the tracking actor;
 * for track_cl_run the host's part around the kernel launches). Results
 * and statistics are the same, to the bit, for every number of threads.
 */
#ifndef TUSK_TRACK_H
#define TUSK_TRACK_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tusk/adf_key.h>
#include <tusk/adf_psa.h>
#include <tusk/adf_tracked.h>
#include <tusk/adf_truth.h>
#include <tusk/adf_writer.h>
#include <tusk/error.h>
#include <tusk/params.h>
#include <tusk/array.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRACK_MAX_CLUSTER 8 /* max_points at most: 8! = 40320 orders */

enum track_points { TRACK_POINTS_PSA = 0, TRACK_POINTS_TRUTH = 1, TRACK_POINTS_TRUTH_SEGMENTS = 2 };

/* Gamma status bits (adf_tracked_gamma_t.status). */
#define TRACK_GAMMA_SINGLE 0x0001u    /* a single-point cluster */
#define TRACK_GAMMA_RECLUSTER 0x0002u /* accepted in the second pass */
#define TRACK_GAMMA_SPLIT 0x0004u     /* its cluster was split to fit max_points */
#define TRACK_GAMMA_MERGED 0x0008u    /* more than max_points points, the nearest merged to fit */
#define TRACK_GAMMA_RECOMBINED 0x0010u /* two clusters of the event joined (recombine_points) */
/* Event status bit (adf_tracked_t.status): more accepted gammas than a
 * data:tracked frame holds; the lowest-energy ones were left out (counted
 * in gammas_truncated). */
#define TRACK_EVENT_TRUNCATED 0x0001u

/* What becomes of a cluster of more than max_points points (setting
 * oversize): its nearest points merged until max_points are left, the
 * whole cluster evaluated (up to 16 points; more are split), or split by
 * reclustering at smaller angles (tusk before issue 22). */
enum track_oversize { TRACK_OVERSIZE_MERGE = 0, TRACK_OVERSIZE_SPLIT = 1 };

/* Settings made for one kind of input together (setting preset): w0_mm,
 * w1_mm and recombine_points. */
enum track_preset { TRACK_PRESET_PSA = 0, TRACK_PRESET_EXACT = 1 };

typedef struct track_config {
    enum track_preset preset; /* the last preset applied (track_config_preset) */
    enum track_points points;
    double cone_deg, recluster_deg;
    unsigned max_points;
    enum track_oversize oversize;
    unsigned merge_points;
    unsigned recombine_points;
    double fom_max, single_min_prob;
    double w0_mm, w1_mm;
    double inner_radius_mm;
    double min_point_kev;
} track_config_t;

TUSK_API void track_config_default(track_config_t *cfg);
/* The keys above (NULL-terminated), for an actor's tusk_params_expect. */
TUSK_API const char *const *track_known_keys(void);
/* Read the keys above from params into cfg (absent keys keep cfg's
 * values). With `strict`, keys other than these are refused. TUSK_EPARAM
 * with "ORIGIN: KEY: ..." for a bad value. */
TUSK_API int track_config_read(track_config_t *cfg, const tusk_params_t *params, bool strict, const char *origin,
                               tusk_error_t *err);
/* Check the values' ranges (track_new does). */
TUSK_API int track_config_check(const track_config_t *cfg, const char *origin, tusk_error_t *err);
/* Apply preset p to cfg: its w0_mm, w1_mm and recombine_points, and
 * cfg->preset (the other settings kept). track_config_read does it first
 * when the key preset is given. */
TUSK_API void track_config_preset(track_config_t *cfg, enum track_preset p);
/* "psa", "exact"; and back (-1 for other text). */
TUSK_API const char *track_preset_name(enum track_preset p);
TUSK_API int track_preset_parse(const char *text);
/* "psa", "truth", "truth_segments"; and back (-1 for other text). */
TUSK_API const char *track_points_name(enum track_points p);
TUSK_API int track_points_parse(const char *text);

/* ---- points and batches ----------------------------------------------- */

typedef struct track_point {
    float pos[3];     /* mm, array frame */
    float energy;     /* keV */
    uint16_t crystal; /* crystal id */
    int16_t segment;  /* 0-35, -1 unknown */
} track_point_t;

typedef struct track_batch track_batch_t;

TUSK_API track_batch_t *track_batch_new(void);
TUSK_API void track_batch_destroy(track_batch_t **batch);
/* Forget every event. */
TUSK_API void track_batch_clear(track_batch_t *batch);
TUSK_API size_t track_batch_events(const track_batch_t *batch);
TUSK_API size_t track_batch_points(const track_batch_t *batch);

/* Start an event; the points added next belong to it. */
TUSK_API int track_batch_begin(track_batch_t *batch, uint32_t event, uint64_t timestamp, tusk_error_t *err);
/* Add a point to the last event (TUSK_EINVAL when none was begun). */
TUSK_API int track_batch_add(track_batch_t *batch, const track_point_t *point, tusk_error_t *err);
/* Event i's points. */
TUSK_API const track_point_t *track_batch_event_points(const track_batch_t *batch, size_t i, size_t *n, uint32_t *event,
                                                       uint64_t *timestamp);

typedef struct track track_t;

/* `array` (may be NULL for the truth modes) must outlive the tracker: it
 * turns psa hits into the array frame and gives the default inner radius.
 * cfg is checked (track_config_check) and copied. */
TUSK_API int track_new(track_t **out, const track_config_t *cfg, const array_t *array, tusk_error_t *err);
TUSK_API void track_destroy(track_t **t);
TUSK_API const track_config_t *track_config(const track_t *t);
/* The host threads of t's calls (the caller's included): 1 after
 * track_new; 0 means one per online CPU. TUSK_ENOMEM when a thread
 * cannot start (t keeps its threads). */
TUSK_API int track_set_threads(track_t *t, unsigned threads, tusk_error_t *err);
TUSK_API unsigned track_threads(const track_t *t);
/* The inner radius in effect, mm. */
TUSK_API double track_inner_radius(const track_t *t);

/* Point extraction into the last event begun in batch.
 * psa: every hit of the n data:psa records (crystal frame -> array frame
 * through the array; TUSK_EINVAL naming the crystal when it is not in the
 * array, TUSK_EINVAL without an array). truth: every point (points), or
 * merged per (crystal, segment) at the energy-weighted centroid of their
 * array-frame positions (truth_segments; points outside every segment
 * merged per crystal). Points at or below min_point_kev are counted as
 * points_ignored and not added. A point with a non-finite or absurd
 * energy (beyond +-1e5 keV) or position (beyond +-1e4 mm on an axis) is
 * TUSK_EINVAL naming it: damage, never tracked. */
TUSK_API int track_add_psa(track_t *t, track_batch_t *batch, const adf_psa_t *psa, size_t n, tusk_error_t *err);
TUSK_API int track_add_truth(track_t *t, track_batch_t *batch, const adf_truth_t *truth, bool segments,
                             tusk_error_t *err);

/* Track every event of the batch on the CPU (the reference on one
 * thread; t's threads: track_set_threads): results in the batch
 * (track_batch_result), statistics added to t's. */
TUSK_API int track_run(track_t *t, track_batch_t *batch, tusk_error_t *err);
/* The same for events first .. first + n - 1 only, their gammas appended
 * to the batch's results (first = 0 starts the results afresh): call it
 * for consecutive ranges, from 0, to track a batch in parts. */
TUSK_API int track_run_range(track_t *t, track_batch_t *batch, size_t first, size_t n, tusk_error_t *err);
/* Event i's gammas after track_run (or track_cl_run): energy descending,
 * ties by the first point's order in the event. */
TUSK_API void track_batch_result(const track_batch_t *batch, size_t i, adf_tracked_t *out);

/* One event's points tracked on the CPU into out (a convenience over a
 * batch of one; statistics added to t's). */
TUSK_API int track_event(track_t *t, const track_point_t *points, size_t n, adf_tracked_t *out, tusk_error_t *err);

/* ---- the figure of merit (tracking/README.md) ---------------------------- */

/* FoM of the points taken in the order perm (perm[k] indexes points;
 * n >= 1; n = 1 gives the single-point FoM, -ln of the probability to
 * reach the depth and be photo-absorbed there). */
TUSK_API double track_fom(const track_t *t, const track_point_t *points, const unsigned *perm, unsigned n);
/* The best order of n (1..TRACK_MAX_CLUSTER) points: its FoM, and its
 * permutation into best_perm; the lowest lexicographic order wins ties.
 * *orders (may be NULL) gets the number of orders evaluated (n!). */
TUSK_API double track_best_order(const track_t *t, const track_point_t *points, unsigned n, unsigned *best_perm,
                                 uint64_t *orders);
/* The permutation of rank r (lexicographic, 0 <= r < n!) and back. */
TUSK_API void track_perm_of_rank(unsigned n, uint32_t rank, unsigned *perm);
TUSK_API uint32_t track_rank_of_perm(unsigned n, const unsigned *perm);

/* ---- clustering ------------------------------------------------------------ */

/* Single-linkage clusters of n points at angle_deg (seen from the
 * origin): label[i] gets point i's cluster number, clusters numbered
 * from 0 in the order of their first point; returns the count. No
 * splitting for max_points. */
TUSK_API size_t track_cluster(const track_point_t *points, size_t n, double angle_deg, unsigned *label);

/* ---- statistics ---------------------------------------------------------------- */

typedef struct track_stats {
    uint64_t events;            /* tracked */
    uint64_t points;            /* added to batches */
    uint64_t points_ignored;    /* at or below min_point_kev, not added */
    uint64_t clusters;          /* evaluated, both passes */
    uint64_t splits;            /* clusters split to fit max_points */
    uint64_t merged;            /* clusters whose nearest points were merged to fit max_points */
    uint64_t permutations;      /* orders evaluated (n! a cluster) */
    uint64_t accepted;          /* gammas accepted (both passes) */
    uint64_t accepted_single;   /*   of which single points */
    uint64_t accepted_second;   /*   of which in the second pass */
    uint64_t accepted_recombined; /*   of which two clusters joined (recombine_points) */
    uint64_t rejected;          /* clusters rejected in the first pass */
    uint64_t unaccepted;        /* clusters still rejected after the second pass */
    uint64_t unaccepted_points; /* their points */
    uint64_t gammas_truncated;  /* accepted but beyond ADF_TRACKED_MAX_GAMMAS in an event */
    double accepted_kev, unaccepted_kev;
} track_stats_t;

TUSK_API void track_stats(const track_t *t, track_stats_t *stats);
TUSK_API void track_stats_reset(track_t *t);
/* A one-line summary of the statistics, like snprintf. */
TUSK_API size_t track_stats_format(const track_stats_t *s, char *buf, size_t cap);

/* ---- buffers of frames (the tracking actor and tusk-track) ---------------------- */

/* Decode the events of a buffer of whole frames into batch (cleared
 * first), on t's threads: event:data:psa composites in the psa mode,
 * data:truth frames in the truth modes; other frames are skipped.
 * base_offset is added to the offsets in messages. TUSK_EINVAL "offset
 * N: ..." for a malformed frame or one that does not decode (the first
 * in the buffer; the batch then holds at most the events before it). */
TUSK_API int track_frames_read(track_t *t, track_batch_t *batch, const void *in, size_t in_size, uint64_t base_offset,
                               tusk_error_t *err);
/* Bytes the output of track_frames_write can need beyond in_size. */
TUSK_API size_t track_frames_extra(const track_batch_t *batch);
/* Copy the buffer's frames to writer, each frame that made an event
 * followed by that event's data:tracked frame (same event number and
 * timestamp). The batch must be the one track_frames_read filled from
 * the same buffer, tracked. TUSK_ELIMIT when the writer is full. */
TUSK_API int track_frames_write(const track_t *t, const track_batch_t *batch, const void *in, size_t in_size,
                                adf_writer_t *writer, tusk_error_t *err);
/* The same into out (cap bytes, at least in_size + track_frames_extra),
 * on t's threads: *used gets the bytes written. TUSK_ELIMIT when cap is
 * short. */
TUSK_API int track_frames_write_buffer(track_t *t, const track_batch_t *batch, const void *in, size_t in_size,
                                       void *out, size_t cap, size_t *used, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
