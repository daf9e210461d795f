/* adf_ut.h - the frames of the LHCb Upstream Tracker's decoding and
 * Compass tracking (ut/): one event's UT raw banks, its VELO tracks, the
 * decoded UT hits, the VELO+UT tracks found, and the simulation's truth.
 *
 * The UT takes a sub-detector byte of its own, 0x22, never a new class
 * (adf/FORMAT.md):
 *
 *   data:ut_raw       0xFA220101  one event: the UT raw banks (a bank a sector, 16-bit hit words)
 *   data:velo_tracks  0xFA220102  the event's VELO tracks: straight-line states at the end of the VELO
 *   data:ut_tracks    0xFA220103  the VELO+UT tracks (VELO track, 3 or 4 UT hits, q/p, chi2)
 *   data:ut_hits      0xFA220104  the decoded hits, grouped by sector group and sorted by y (optional)
 *   data:ut_truth     0xFA2201F0  tusk-private: the particles, the particle of every hit and VELO track
 *   event:data:ut     0xCA220100  composite: one event, its frames above together
 *
 * An event travels as one event:data:ut frame holding its data:ut_raw,
 * data:velo_tracks and (from the simulation) data:ut_truth; the tracker
 * adds its data:ut_tracks (and data:ut_hits) inside, after the VELO
 * tracks. So an event is never split over buffers, whoever cuts a stream
 * into them (a file replayed). All of them carry the event number and
 * the event's timestamp. Units:
 * mm, GeV/c; q/p in c/GeV. The raw bank is a compact layout of tusk's
 * (modelled on LHCb's: a bank per readout sector, a 16-bit word per
 * cluster with its strip, a fraction of a strip and the cluster size);
 * which sector is where is the geometry's business (ut/README.md), named
 * by its digest in the frame.
 *
 * The hit, track and truth codecs do not copy into fixed structs: the
 * decoder checks the whole payload and hands back the header and a view
 * of the records, read with the accessors below (each field decoded
 * explicitly). A view points into the frame's bytes and is valid as long
 * as they are. */
#ifndef TUSK_ADF_UT_H
#define TUSK_ADF_UT_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_UT_MAX_HITS (1u << 20)      /* hit words (clusters) of one event */
#define ADF_UT_MAX_TRACKS (1u << 20)    /* VELO tracks, UT tracks of one event */
#define ADF_UT_MAX_PARTICLES (1u << 20) /* particles of one event's truth */
#define ADF_UT_PLANES 4                 /* UTaX, UTaU, UTbV, UTbX */
#define ADF_UT_NONE UINT32_MAX          /* truth: the particle of a noise hit or a fake VELO track */

enum adf_ut_backend { ADF_UT_REFERENCE = 1, ADF_UT_FAST = 2, ADF_UT_OPENCL = 3 };
/* "reference", "fast", "opencl", or "?" for another number. */
TUSK_API const char *adf_ut_backend_name(unsigned backend);

/* ---- data:ut_raw -------------------------------------------------------------- */

#define ADF_UT_RAW_HEADER_SIZE 12u
#define ADF_UT_BANK_HEADER_SIZE 4u
#define ADF_UT_WORD_SIZE 2u

/* A hit word: bits 0-9 the strip, 10-11 the cluster centre's fraction of
 * a strip in quarters, 12-14 the cluster size less one, 15 the high
 * threshold flag (passed through). Every 16-bit value is a word; whether
 * its strip exists is the geometry's question (the decoder's). */
static inline uint16_t adf_ut_word(unsigned strip, unsigned quarter, unsigned size, unsigned high)
{
    return (uint16_t)((strip & 0x3FFu) | ((quarter & 3u) << 10) | (((size - 1u) & 7u) << 12) | ((high & 1u) << 15));
}
static inline unsigned adf_ut_word_strip(uint16_t w)
{
    return w & 0x3FFu;
}
static inline unsigned adf_ut_word_quarter(uint16_t w)
{
    return (w >> 10) & 3u;
}
static inline unsigned adf_ut_word_size(uint16_t w)
{
    return ((w >> 12) & 7u) + 1u;
}
static inline unsigned adf_ut_word_high(uint16_t w)
{
    return (w >> 15) & 1u;
}

/* One bank: a readout sector's clusters. */
typedef struct adf_ut_bank {
    uint16_t sector;      /* the sector (the bank's source): the geometry's numbering */
    uint16_t n_hits;      /* its hit words (0 allowed) */
} adf_ut_bank_t;

typedef struct adf_ut_raw {
    uint32_t geometry;    /* the digest of the geometry the banks are written for (ut_geometry_digest) */
    uint16_t n_banks;     /* in strictly increasing sector order */
    uint16_t flags;       /* 0 so far; passed through */
    uint32_t n_hits;      /* the banks' words together, <= ADF_UT_MAX_HITS */
    const uint8_t *raw;   /* decoder: the first bank in the frame; encoder: unused */
} adf_ut_raw_t;

TUSK_API size_t adf_ut_raw_payload_size(uint32_t n_banks, uint32_t n_hits);

/* Write one data:ut_raw frame: hdr's geometry and flags, hdr->n_banks
 * banks and their hdr->n_hits words (bank after bank). ADF_ERANGE for too
 * many hits; ADF_EINVAL for banks not in strictly increasing sector order,
 * a bank's words not in strictly increasing strip order (one cluster a
 * strip, so a strip's LHCbID names one hit), or words that do not add up
 * to n_hits (nothing is written then). */
TUSK_API int adf_ut_raw_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_ut_raw_t *hdr,
                      const adf_ut_bank_t *banks, const uint16_t *words, adf_error_t *err);
/* Check a data:ut_raw frame whole (type, size, the banks' and strips'
 * order, the counts) and fill r (r->raw points into the frame). ADF_EBADTYPE,
 * ADF_ERANGE, ADF_EPAYLOAD naming the field or the bank; r untouched on
 * error. */
TUSK_API int adf_ut_raw_decode(const adf_frame_t *frame, adf_ut_raw_t *r, adf_error_t *err);
/* The banks (r->n_banks of them) and words (r->n_hits) of a decoded frame;
 * either may be NULL. */
TUSK_API void adf_ut_raw_read(const adf_ut_raw_t *r, adf_ut_bank_t *banks, uint16_t *words);

/* ---- data:velo_tracks ----------------------------------------------------------- */

#define ADF_VELO_HEADER_SIZE 8u
#define ADF_VELO_TRACK_SIZE 24u
#define ADF_VELO_BACKWARD 1u /* track flag: it goes backwards (towards -z), away from the UT */

typedef struct adf_velo_track {
    float x, y, z;        /* mm: the state, at the end of the VELO */
    float tx, ty;         /* dx/dz, dy/dz */
    uint32_t flags;       /* ADF_VELO_BACKWARD; other bits 0 */
} adf_velo_track_t;

typedef struct adf_velo_tracks {
    uint32_t n_tracks;    /* <= ADF_UT_MAX_TRACKS */
    uint32_t flags;       /* 0 so far; passed through */
    const uint8_t *raw;   /* decoder: the tracks in the frame */
} adf_velo_tracks_t;

TUSK_API size_t adf_velo_tracks_payload_size(uint32_t n_tracks);
/* ADF_ERANGE for too many tracks; ADF_EINVAL for a state that is not
 * finite or an unknown track flag. */
TUSK_API int adf_velo_tracks_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_velo_tracks_t *hdr,
                           const adf_velo_track_t *tracks, adf_error_t *err);
TUSK_API int adf_velo_tracks_decode(const adf_frame_t *frame, adf_velo_tracks_t *v, adf_error_t *err);
TUSK_API void adf_velo_track(const adf_velo_tracks_t *v, uint32_t i, adf_velo_track_t *track);

/* ---- data:ut_tracks --------------------------------------------------------------- */

#define ADF_UT_TRACKS_HEADER_SIZE 16u
#define ADF_UT_TRACK_SIZE 29u

typedef struct adf_ut_track {
    uint32_t velo;        /* its VELO track: the index in the event's data:velo_tracks */
    uint32_t id[ADF_UT_PLANES]; /* the LHCbID of its hit in each plane, 0 for none */
    float qop;            /* q/p, c/GeV, from the kick between the VELO and the UT slope */
    float chi2;           /* of the fit of the hits with the VELO track */
    uint8_t n_hits;       /* 3 or 4: the non-zero ids */
} adf_ut_track_t;

typedef struct adf_ut_tracks {
    uint32_t n_tracks;    /* <= ADF_UT_MAX_TRACKS, in strictly increasing VELO track order */
    uint32_t settings;    /* the digest of the tracker's settings (ut_config_digest) */
    uint32_t geometry;    /* the geometry's digest */
    uint8_t backend;      /* an adf_ut_backend */
    uint8_t flags;        /* 0 so far; passed through */
    uint8_t sectors;      /* the sectors searched a plane: 1, 3 or 5 */
    uint8_t candidates;   /* the tracklets tried a track: 1-16 */
    const uint8_t *raw;   /* decoder: the tracks in the frame */
} adf_ut_tracks_t;

TUSK_API size_t adf_ut_tracks_payload_size(uint32_t n_tracks);
/* ADF_ERANGE for too many tracks; ADF_EINVAL for a bad backend, sectors or
 * candidates, VELO indices not strictly increasing, n_hits other than the
 * count of non-zero ids or not 3-4, or q/p or chi2 not finite (chi2 < 0). */
TUSK_API int adf_ut_tracks_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_ut_tracks_t *hdr,
                         const adf_ut_track_t *tracks, adf_error_t *err);
TUSK_API int adf_ut_tracks_decode(const adf_frame_t *frame, adf_ut_tracks_t *t, adf_error_t *err);
TUSK_API void adf_ut_track(const adf_ut_tracks_t *t, uint32_t i, adf_ut_track_t *track);

/* ---- data:ut_hits ------------------------------------------------------------------- */

#define ADF_UT_HITS_HEADER_SIZE 10u
#define ADF_UT_HIT_SIZE 26u

typedef struct adf_ut_hit {
    uint32_t id;          /* LHCbID (ut/README.md) */
    float x0;             /* mm: x where the strip crosses y = 0 (xAtYEq0) */
    float z0;             /* mm: z at y = 0 (zAtYEq0) */
    float y_begin, y_end; /* mm: the strip's y range */
    float weight;         /* 1 / sigma^2 of x, 1/mm^2 */
    uint16_t group;       /* its sector group (non-decreasing over the frame) */
} adf_ut_hit_t;

typedef struct adf_ut_hits {
    uint32_t n_hits;      /* <= ADF_UT_MAX_HITS */
    uint32_t geometry;    /* the geometry's digest */
    uint8_t backend;      /* an adf_ut_backend */
    uint8_t flags;        /* 0 so far; passed through */
    const uint8_t *raw;
} adf_ut_hits_t;

TUSK_API size_t adf_ut_hits_payload_size(uint32_t n_hits);
/* ADF_ERANGE for too many hits; ADF_EINVAL for a bad backend or groups
 * that decrease. */
TUSK_API int adf_ut_hits_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_ut_hits_t *hdr,
                       const adf_ut_hit_t *hits, adf_error_t *err);
TUSK_API int adf_ut_hits_decode(const adf_frame_t *frame, adf_ut_hits_t *h, adf_error_t *err);
TUSK_API void adf_ut_hit(const adf_ut_hits_t *h, uint32_t i, adf_ut_hit_t *hit);

/* ---- data:ut_truth -------------------------------------------------------------------- */

#define ADF_UT_TRUTH_HEADER_SIZE 16u
#define ADF_UT_PARTICLE_SIZE 16u
#define ADF_UT_VELO 1u      /* particle flag: reconstructible in the VELO (it crosses its acceptance) */
#define ADF_UT_LONG 2u      /* particle flag: it reaches the SciFi tracker (a long track) */
#define ADF_UT_BACKWARD 4u  /* particle flag: it goes backwards */

typedef struct adf_ut_particle {
    float p;              /* GeV/c, > 0 */
    float tx, ty;         /* its slopes at the vertex */
    int8_t charge;        /* -1 or +1 */
    uint8_t flags;        /* ADF_UT_VELO, ADF_UT_LONG, ADF_UT_BACKWARD; other bits 0 */
    uint8_t planes;       /* bit k: a hit of it was recorded in UT plane k (0-15) */
    uint8_t vertex;       /* its primary vertex (the collision) in the event */
} adf_ut_particle_t;

typedef struct adf_ut_truth {
    uint32_t n_particles; /* <= ADF_UT_MAX_PARTICLES */
    uint32_t n_hits;      /* as the event's data:ut_raw, its words in the same order */
    uint32_t n_velo;      /* as the event's data:velo_tracks, in the same order */
    uint32_t flags;       /* 0 so far; passed through */
    const uint8_t *raw_particles, *raw_hits, *raw_velo;
} adf_ut_truth_t;

TUSK_API size_t adf_ut_truth_payload_size(uint32_t n_particles, uint32_t n_hits, uint32_t n_velo);
/* hit_particle[j] and velo_particle[k]: a particle (< n_particles) or
 * ADF_UT_NONE. ADF_ERANGE for too many records; ADF_EINVAL for a particle
 * that is not there, a charge other than +-1, an unknown flag, planes
 * above 15, or p, tx, ty not finite (p <= 0). */
TUSK_API int adf_ut_truth_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_ut_truth_t *hdr,
                        const adf_ut_particle_t *particles, const uint32_t *hit_particle,
                        const uint32_t *velo_particle, adf_error_t *err);
TUSK_API int adf_ut_truth_decode(const adf_frame_t *frame, adf_ut_truth_t *t, adf_error_t *err);
TUSK_API void adf_ut_truth_particle(const adf_ut_truth_t *t, uint32_t i, adf_ut_particle_t *particle);
/* The particles of hits [first, first + n) and of VELO tracks [first, first + n). */
TUSK_API void adf_ut_truth_hits(const adf_ut_truth_t *t, uint32_t first, uint32_t n, uint32_t *particle);
TUSK_API void adf_ut_truth_velo(const adf_ut_truth_t *t, uint32_t first, uint32_t n, uint32_t *particle);

#ifdef __cplusplus
}
#endif
#endif
