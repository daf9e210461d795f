/* adf_tpc.h - the frames of the ALICE TPC slice tracker (tpc/): one
 * slice's clusters of one event, the tracks the slice tracker found in
 * them, and the simulation's truth.
 *
 * The TPC takes a sub-detector byte of its own, 0x23, never a new class
 * (adf/FORMAT.md):
 *
 *   data:tpc_clusters  0xFA230101  one slice of one event: field, geometry, clusters (row, y, z)
 *   data:tpc_tracks    0xFA230102  the slice tracks: parameters, covariance, packed cluster references
 *   data:tpc_truth     0xFA2301F0  tusk-private: the particles that left clusters in the slice and
 *                                  the particle of every cluster
 *
 * An event is one data:tpc_clusters frame per slice (36; `slices` says how
 * many), each followed by its data:tpc_truth when there is truth and, after
 * the tracker, by its data:tpc_tracks; all carry the event number and the
 * event's timestamp. A central Pb-Pb event has about four million
 * clusters: 110,000 a slice, 1.1 MB a frame. Units: mm, tesla, GeV/c;
 * slice-local coordinates (x along the slice's centre line, the row's
 * radius; y across; z along the beam), tpc/README.md.
 *
 * Frames may hold up to ADF_TPC_MAX_CLUSTERS clusters, so the codecs do not
 * copy into fixed structs: the decoder checks the whole payload and hands
 * back a view, read record by record (each field decoded explicitly). A
 * view points into the frame's bytes and is valid as long as they are. */
#ifndef TUSK_ADF_TPC_H
#define TUSK_ADF_TPC_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_TPC_SLICES 36u                /* 2 x 18 sectors */
#define ADF_TPC_ROWS 159u                 /* pad rows a slice */
#define ADF_TPC_MAX_CLUSTERS (1u << 22)   /* per frame (40 MB of clusters) */
#define ADF_TPC_GEOMETRY_ALICE 1u         /* the one row layout so far (tpc/README.md) */
#define ADF_TPC_NOISE UINT32_MAX          /* truth: the particle of a noise cluster */
#define ADF_TPC_HIT_SHARED 1u             /* data:tpc_tracks hit flag: taken as a shared cluster */

enum adf_tpc_backend { ADF_TPC_REFERENCE = 1, ADF_TPC_FAST = 2, ADF_TPC_OPENCL = 3 };
/* "reference", "fast", "opencl", or "?" for another number. */
TUSK_API const char *adf_tpc_backend_name(unsigned backend);

/* ---- data:tpc_clusters ---------------------------------------------------------- */

#define ADF_TPC_CLUSTERS_HEADER_SIZE 16u
#define ADF_TPC_CLUSTER_SIZE 10u

typedef struct adf_tpc_cluster {
    uint8_t row;          /* < ADF_TPC_ROWS */
    uint8_t flags;        /* 0 so far; passed through */
    float y, z;           /* mm, slice-local, finite */
} adf_tpc_cluster_t;

typedef struct adf_tpc_clusters {
    uint32_t n_clusters;  /* <= ADF_TPC_MAX_CLUSTERS */
    uint8_t slice;        /* < ADF_TPC_SLICES */
    uint8_t slices;       /* data:tpc_clusters frames of this event, 1-36 */
    uint16_t flags;       /* 0 so far; passed through */
    float bz;             /* the solenoid field, tesla: finite, 0 < |bz| <= 20 */
    uint32_t geometry;    /* ADF_TPC_GEOMETRY_ALICE */
    const uint8_t *raw;   /* decoder: the clusters' bytes in the frame; encoder: unused */
} adf_tpc_clusters_t;

TUSK_API size_t adf_tpc_clusters_payload_size(uint32_t n_clusters);
/* The encoder's check: ADF_ERANGE for too many clusters, ADF_EINVAL for a
 * header field out of range or a cluster with a row >= ADF_TPC_ROWS or a
 * coordinate that is not finite, naming it. */
TUSK_API int adf_tpc_clusters_check(const adf_tpc_clusters_t *hdr, const adf_tpc_cluster_t *clusters,
                                    adf_error_t *err);
/* Write one frame (nothing is written when the check fails). */
TUSK_API int adf_tpc_clusters_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                                     const adf_tpc_clusters_t *hdr, const adf_tpc_cluster_t *clusters,
                                     adf_error_t *err);
/* Check a frame whole (type, size, header, every cluster) and fill c
 * (c->raw points into the frame). ADF_EBADTYPE, ADF_ERANGE, ADF_EPAYLOAD
 * naming the field or cluster; c is untouched on error. */
TUSK_API int adf_tpc_clusters_decode(const adf_frame_t *frame, adf_tpc_clusters_t *c, adf_error_t *err);
/* Cluster i (< n_clusters) of a decoded frame. */
TUSK_API void adf_tpc_cluster(const adf_tpc_clusters_t *c, uint32_t i, adf_tpc_cluster_t *cluster);

/* ---- data:tpc_tracks ------------------------------------------------------------ */

#define ADF_TPC_TRACKS_HEADER_SIZE 20u
#define ADF_TPC_TRACK_SIZE 100u
#define ADF_TPC_HIT_SIZE 18u

/* A slice track: the Kalman filter's state at slice-local x (the row of
 * its innermost cluster), r = (Y, Z, sin(phi), lambda = pz/pT, q/pT). */
typedef struct adf_tpc_track {
    float x;              /* mm: where the parameters are given */
    float param[5];       /* Y (mm), Z (mm), sin(phi), lambda, q/pT (c/GeV) */
    float cov[15];        /* lower triangle row by row: C00, C10, C11, C20, C21, C22, ..., C44 */
    float chi2;
    uint16_t ndf;
    uint8_t first_row, last_row; /* of its clusters */
    uint16_t n_hits;      /* its clusters, >= 1, one a row at most */
    uint16_t flags;       /* 0 so far; passed through */
    uint32_t tracklet;    /* the tracklet it came from (its start hit's place in the slice's sorted list) */
} adf_tpc_track_t;

/* A track's cluster. */
typedef struct adf_tpc_hit {
    uint32_t cluster;     /* its index in the slice's data:tpc_clusters */
    uint8_t row;
    uint8_t flags;        /* ADF_TPC_HIT_SHARED */
    float x, y, z;        /* mm, global coordinates */
} adf_tpc_hit_t;

typedef struct adf_tpc_tracks {
    uint32_t n_tracks;    /* <= ADF_TPC_MAX_CLUSTERS */
    uint32_t n_hits;      /* the packed hits: the sum of the tracks' n_hits, <= ADF_TPC_MAX_CLUSTERS */
    uint32_t n_clusters;  /* of the slice's data:tpc_clusters: every hit's cluster is below */
    uint32_t settings;    /* a digest of the tracker's settings (tpc_config_digest) */
    uint8_t slice;        /* < ADF_TPC_SLICES */
    uint8_t backend;      /* an adf_tpc_backend */
    uint16_t flags;       /* 0 so far; passed through */
    const uint8_t *raw_tracks, *raw_hits; /* decoder: views into the frame */
} adf_tpc_tracks_t;

TUSK_API size_t adf_tpc_tracks_payload_size(uint32_t n_tracks, uint32_t n_hits);
/* tracks[i]'s hits are hits[sum of the n_hits before it ...]. ADF_ERANGE
 * for too many tracks or hits; ADF_EINVAL for a bad header, hits that do
 * not add up, a track whose hits are not in strictly rising rows or do not
 * match its first/last row, a hit naming a cluster >= n_clusters or a row
 * >= ADF_TPC_ROWS. */
TUSK_API int adf_tpc_tracks_check(const adf_tpc_tracks_t *hdr, const adf_tpc_track_t *tracks,
                                  const adf_tpc_hit_t *hits, adf_error_t *err);
TUSK_API int adf_tpc_tracks_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                                   const adf_tpc_tracks_t *hdr, const adf_tpc_track_t *tracks,
                                   const adf_tpc_hit_t *hits, adf_error_t *err);
/* Checks the whole payload as the encoder does; t untouched on error. */
TUSK_API int adf_tpc_tracks_decode(const adf_frame_t *frame, adf_tpc_tracks_t *t, adf_error_t *err);
TUSK_API void adf_tpc_track(const adf_tpc_tracks_t *t, uint32_t i, adf_tpc_track_t *track);
/* Packed hit j (< n_hits). */
TUSK_API void adf_tpc_hit(const adf_tpc_tracks_t *t, uint32_t j, adf_tpc_hit_t *hit);

/* ---- data:tpc_truth ----------------------------------------------------------------- */

#define ADF_TPC_TRUTH_HEADER_SIZE 12u
#define ADF_TPC_PARTICLE_SIZE 32u

/* A Monte Carlo particle that left clusters in the slice. */
typedef struct adf_tpc_particle {
    uint32_t id;          /* its number in the event */
    float p[3];           /* GeV/c, global, at its vertex */
    float vertex[3];      /* mm, global */
    int16_t charge;       /* units of e, not 0 */
    uint16_t flags;       /* 0 so far; passed through */
} adf_tpc_particle_t;

typedef struct adf_tpc_truth {
    uint32_t n_particles; /* <= ADF_TPC_MAX_CLUSTERS */
    uint32_t n_clusters;  /* as the slice's data:tpc_clusters, the same order */
    uint16_t slice;       /* < ADF_TPC_SLICES */
    uint16_t flags;       /* 0 so far; passed through */
    const uint8_t *raw_particles, *raw_clusters;
} adf_tpc_truth_t;

TUSK_API size_t adf_tpc_truth_payload_size(uint32_t n_particles, uint32_t n_clusters);
/* cluster_particle[j]: the particle (index into `particles`, < n_particles)
 * of cluster j, or ADF_TPC_NOISE. ADF_ERANGE for too many; ADF_EINVAL for a
 * slice out of range, a charge of 0, a non-finite momentum or vertex, or a
 * cluster naming a particle that is not there. */
TUSK_API int adf_tpc_truth_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                                  const adf_tpc_truth_t *hdr, const adf_tpc_particle_t *particles,
                                  const uint32_t *cluster_particle, adf_error_t *err);
TUSK_API int adf_tpc_truth_decode(const adf_frame_t *frame, adf_tpc_truth_t *t, adf_error_t *err);
TUSK_API void adf_tpc_truth_particle(const adf_tpc_truth_t *t, uint32_t i, adf_tpc_particle_t *particle);
/* The particles of clusters [first, first + n). */
TUSK_API void adf_tpc_truth_clusters(const adf_tpc_truth_t *t, uint32_t first, uint32_t n, uint32_t *cluster_particle);

#ifdef __cplusplus
}
#endif
#endif
