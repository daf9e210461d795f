/* adf_sts.h - the frames of the CBM Silicon Tracking System's local
 * reconstruction (sts/): one module's digis of one timeslice, the
 * clusters and hits found in them, and the simulation's truth.
 *
 * The STS takes a sub-detector byte of its own, 0x21, never a new class
 * (adf/FORMAT.md):
 *
 *   data:sts_digis     0xFA210101  one module, one timeslice: its geometry and digis
 *   data:sts_clusters  0xFA210102  the clusters of those digis, front side first
 *   data:sts_hits      0xFA210103  the hits: pairs of a front and a back cluster
 *   data:sts_truth     0xFA2101F0  tusk-private: the module's Monte Carlo points
 *                                  and the point of every digi
 *
 * CBM reads out free-streaming: there are no events, only timeslices. All
 * four carry the timeslice number as their event number and the
 * timeslice's start as their timestamp. A timeslice is many frames, one
 * per module (data:sts_digis says how many: `modules`), so it spans as
 * many buffers as it needs; each module is reconstructed on its own.
 * Units: mm, ns; charges in the producer's charge units (sts/README.md).
 *
 * A module's digi is 8 bytes: charge (u16), time (u32), channel (u16),
 * little-endian, in that order, so that the 8 bytes read as one
 * little-endian u64 are the sort key of the parallel cluster finder,
 * channel * 2^48 + time * 2^16 + charge (spec §4.3: channel first, time
 * within a channel). Frames of up to ADF_STS_MAX_DIGIS digis (1 GiB)
 * are allowed, so the digi and truth codecs do not copy into fixed
 * structs: the decoder checks the whole payload and hands back a view,
 * read in bulk with adf_sts_digis_keys / adf_sts_truth_digis (each field
 * decoded explicitly). A view points into the frame's bytes and is valid
 * as long as they are. */
#ifndef TUSK_ADF_STS_H
#define TUSK_ADF_STS_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_STS_MAX_DIGIS (1u << 27) /* per frame: 1 GiB of digis; connector indices have 31 bits */
#define ADF_STS_MAX_STRIPS 4096u     /* strips per side */
#define ADF_STS_MAX_MODULE 65534u    /* module numbers 0-65534 */
#define ADF_STS_NOISE UINT32_MAX     /* the Monte Carlo point of a noise digi */

/* The digi's 64-bit key: its 8 bytes read as a little-endian u64. */
static inline uint64_t adf_sts_key(uint32_t channel, uint32_t time, uint32_t charge)
{
    return ((uint64_t)(channel & 0xFFFFu) << 48) | ((uint64_t)time << 16) | (uint64_t)(charge & 0xFFFFu);
}
static inline uint32_t adf_sts_key_channel(uint64_t key)
{
    return (uint32_t)(key >> 48);
}
static inline uint32_t adf_sts_key_time(uint64_t key)
{
    return (uint32_t)(key >> 16);
}
static inline uint32_t adf_sts_key_charge(uint64_t key)
{
    return (uint32_t)(key & 0xFFFFu);
}

/* ---- data:sts_digis ---------------------------------------------------------- */

#define ADF_STS_DIGIS_HEADER_SIZE 40u
#define ADF_STS_DIGI_SIZE 8u

/* A module's place and shape: its strips run along y (front side) and at
 * stereo_deg to them (back side); local (0, 0, 0) is the lab point origin
 * (sensor mid-plane), local axes along the lab's. */
typedef struct adf_sts_digis {
    uint32_t n_digis;     /* <= ADF_STS_MAX_DIGIS */
    uint16_t module;      /* <= ADF_STS_MAX_MODULE */
    uint8_t station;
    uint8_t flags;        /* 0 so far; passed through */
    uint16_t modules;     /* data:sts_digis frames of this timeslice, >= 1 */
    uint16_t strips;      /* strips a side, 1-ADF_STS_MAX_STRIPS: channels 0..strips-1 front,
                           * strips..2 strips-1 back */
    uint32_t length_ns;   /* the timeslice's length: every digi time is below it (>= 1) */
    float pitch_mm;       /* > 0 */
    float stereo_deg;     /* the back strips' angle to the front strips, in (0, 90) */
    float length_mm;      /* the strips' length (the module's y extent), > 0 */
    float origin[3];      /* mm, lab frame, finite */
    const uint8_t *raw;   /* decoder: the digis' bytes in the frame; encoder: unused */
} adf_sts_digis_t;

TUSK_API size_t adf_sts_digis_payload_size(uint32_t n_digis);

/* Write one data:sts_digis frame: hdr's fields and hdr->n_digis digis
 * given as keys. ADF_ERANGE for too many digis; ADF_EINVAL for a header
 * field outside its range or a digi whose channel is >= 2 strips or whose
 * time is >= length_ns (nothing is written then). */
/* The encoder's check alone (for digis that are not written yet). */
TUSK_API int adf_sts_digis_check(const adf_sts_digis_t *hdr, const uint64_t *keys, adf_error_t *err);
TUSK_API int adf_sts_digis_encode(adf_writer_t *writer, uint32_t timeslice, uint64_t timestamp,
                                  const adf_sts_digis_t *hdr, const uint64_t *keys, adf_error_t *err);

/* Check a data:sts_digis frame whole (type, size, header, every digi)
 * and fill d (d->raw points into the frame). ADF_EBADTYPE, ADF_ERANGE,
 * ADF_EPAYLOAD naming the field or the digi; d is untouched on error. */
TUSK_API int adf_sts_digis_decode(const adf_frame_t *frame, adf_sts_digis_t *d, adf_error_t *err);

/* Digis [first, first + n) of a decoded frame, as keys. */
TUSK_API void adf_sts_digis_keys(const adf_sts_digis_t *d, uint32_t first, uint32_t n, uint64_t *keys);

/* ---- data:sts_clusters -------------------------------------------------------- */

#define ADF_STS_CLUSTERS_HEADER_SIZE 18u
#define ADF_STS_CLUSTER_SIZE 24u

enum adf_sts_backend { ADF_STS_REFERENCE = 1, ADF_STS_FAST = 2, ADF_STS_OPENCL = 3 };
/* "reference", "fast", "opencl", or "?" for another number. */
TUSK_API const char *adf_sts_backend_name(unsigned backend);

typedef struct adf_sts_cluster {
    uint16_t channel;     /* the cluster's first (lowest) channel, module numbering */
    uint16_t size;        /* digis (= strips), >= 1 */
    uint32_t charge;      /* sum of the digis' charges */
    float time;           /* ns from the timeslice start: the mean of the digis' times */
    float time_error;     /* ns */
    float position;       /* strips from the side's edge: strip k spans [k, k + 1) */
    float position_error; /* strips */
} adf_sts_cluster_t;

typedef struct adf_sts_clusters {
    uint32_t n_front;     /* the first n_front clusters are on the front side */
    uint32_t n_back;      /* then n_back on the back side; n_front + n_back <= ADF_STS_MAX_DIGIS */
    uint32_t settings;    /* a digest of the reconstruction's settings (sts_config_digest) */
    uint16_t module;      /* as its data:sts_digis */
    uint16_t strips;      /* as its data:sts_digis: which channels are front and back */
    uint8_t backend;      /* an adf_sts_backend */
    uint8_t flags;        /* 0 so far; passed through */
    const uint8_t *raw;   /* decoder: the clusters' bytes in the frame; encoder: unused */
} adf_sts_clusters_t;

TUSK_API size_t adf_sts_clusters_payload_size(uint32_t n_clusters);
/* ADF_ERANGE for too many clusters; ADF_EINVAL for strips or backend out
 * of range, a size of 0, or a cluster not on its side (front: channel +
 * size <= strips; back: strips <= channel, channel + size <= 2 strips). */
TUSK_API int adf_sts_clusters_encode(adf_writer_t *writer, uint32_t timeslice, uint64_t timestamp,
                                     const adf_sts_clusters_t *hdr, const adf_sts_cluster_t *clusters,
                                     adf_error_t *err);
/* Checks the whole payload as the encoder does; c untouched on error. */
TUSK_API int adf_sts_clusters_decode(const adf_frame_t *frame, adf_sts_clusters_t *c, adf_error_t *err);
/* Cluster i (< n_front + n_back) of a decoded frame. */
TUSK_API void adf_sts_cluster(const adf_sts_clusters_t *c, uint32_t i, adf_sts_cluster_t *cluster);

/* ---- data:sts_hits ------------------------------------------------------------- */

#define ADF_STS_HITS_HEADER_SIZE 12u
#define ADF_STS_HIT_SIZE 40u

typedef struct adf_sts_hit {
    float x, y, z;        /* mm, lab frame */
    float sigma_x, sigma_y; /* mm */
    float cov_xy;         /* mm^2: front and back measure x and y together */
    float time;           /* ns from the timeslice start */
    float time_error;     /* ns */
    uint32_t front;       /* its front cluster: index in the module's data:sts_clusters */
    uint32_t back;        /* its back cluster: index among the back clusters (0 the first) */
} adf_sts_hit_t;

typedef struct adf_sts_hits {
    uint32_t n_hits;      /* <= ADF_STS_MAX_DIGIS */
    uint32_t settings;    /* as data:sts_clusters */
    uint16_t module;
    uint8_t backend;
    uint8_t flags;        /* 0 so far; passed through */
    const uint8_t *raw;
} adf_sts_hits_t;

TUSK_API size_t adf_sts_hits_payload_size(uint32_t n_hits);
/* ADF_ERANGE for too many hits, ADF_EINVAL for a bad backend. */
TUSK_API int adf_sts_hits_encode(adf_writer_t *writer, uint32_t timeslice, uint64_t timestamp,
                                 const adf_sts_hits_t *hdr, const adf_sts_hit_t *hits, adf_error_t *err);
TUSK_API int adf_sts_hits_decode(const adf_frame_t *frame, adf_sts_hits_t *h, adf_error_t *err);
TUSK_API void adf_sts_hit(const adf_sts_hits_t *h, uint32_t i, adf_sts_hit_t *hit);

/* ---- data:sts_truth --------------------------------------------------------------- */

#define ADF_STS_TRUTH_HEADER_SIZE 12u
#define ADF_STS_POINT_SIZE 36u

/* A Monte Carlo point: a track crossing the module (at its mid-plane). */
typedef struct adf_sts_point {
    uint32_t track;       /* the track's number in the timeslice */
    uint32_t collision;   /* its collision's number in the timeslice */
    float x, y, z;        /* mm, lab frame */
    float time;           /* ns from the timeslice start */
    float u_front, u_back; /* the point in strips on each side (the clusters' position scale) */
    float charge;         /* deposited, charge units, before sharing, noise and threshold */
} adf_sts_point_t;

typedef struct adf_sts_truth {
    uint32_t n_points;    /* <= ADF_STS_MAX_DIGIS */
    uint32_t n_digis;     /* as the module's data:sts_digis, the same order */
    uint16_t module;
    uint16_t flags;       /* 0 so far; passed through */
    const uint8_t *raw_points, *raw_digis;
} adf_sts_truth_t;

TUSK_API size_t adf_sts_truth_payload_size(uint32_t n_points, uint32_t n_digis);
/* digi_point[j]: the point of digi j (< n_points) or ADF_STS_NOISE.
 * ADF_ERANGE for too many points or digis, ADF_EINVAL for a digi naming a
 * point that is not there. */
TUSK_API int adf_sts_truth_encode(adf_writer_t *writer, uint32_t timeslice, uint64_t timestamp,
                                  const adf_sts_truth_t *hdr,
                                  const adf_sts_point_t *points, const uint32_t *digi_point, adf_error_t *err);
TUSK_API int adf_sts_truth_decode(const adf_frame_t *frame, adf_sts_truth_t *t, adf_error_t *err);
TUSK_API void adf_sts_truth_point(const adf_sts_truth_t *t, uint32_t i, adf_sts_point_t *point);
/* The points of digis [first, first + n). */
TUSK_API void adf_sts_truth_digis(const adf_sts_truth_t *t, uint32_t first, uint32_t n, uint32_t *digi_point);

#ifdef __cplusplus
}
#endif
#endif
