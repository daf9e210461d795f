/* adf_zfinder.h - the frames of the ATLAS Level-2 z-finder (zfinder/):
 * one Region of Interest's inner-detector spacepoints, the vertex the
 * z-finder found in it, and the simulation's truth for it.
 *
 * Charged-particle tracking frames take a sub-detector byte of their own,
 * 0x20 (the inner detector), never a new class (adf/FORMAT.md):
 *
 *   data:id_spacepoints  0xFA200101  one RoI: phi range, spacepoints (rho, phi, z, layer)
 *   data:zvertex         0xFA200102  the z-finder's result for one RoI
 *   data:id_truth        0xFA2001F0  tusk-private: signal and pile-up vertex z,
 *                                    particle and vertex of every spacepoint
 *
 * All three carry the RoI number as their event number. Units: mm and
 * radians. Byte layouts in adf/FORMAT.md.
 *
 * A RoI can hold up to ADF_IDSP_MAX_POINTS spacepoints (13 MB as a frame),
 * so the spacepoint and truth codecs do not copy into fixed structs: the
 * decoder checks the whole payload and hands back the header and a view
 * of the points, read one at a time with adf_idsp_point / adf_idtruth_point
 * (each field decoded explicitly). The view points into the frame's bytes
 * and is valid as long as they are.
 */
#ifndef TUSK_ADF_ZFINDER_H
#define TUSK_ADF_ZFINDER_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- data:id_spacepoints ------------------------------------------------ */

#define ADF_IDSP_HEADER_SIZE 16u
#define ADF_IDSP_POINT_SIZE 13u
#define ADF_IDSP_MAX_POINTS (1u << 20)
#define ADF_IDSP_MAX_LAYERS 19u /* layers 0-18: the inner detector's 19 cylinders */
#define ADF_IDSP_TWO_PI 6.28318530717958647692

typedef struct adf_idsp_point {
    float rho;      /* mm, distance from the beam line */
    float phi;      /* rad, azimuth, -pi to pi */
    float z;        /* mm, along the beam */
    uint8_t layer;  /* 0 (innermost) to ADF_IDSP_MAX_LAYERS - 1 */
} adf_idsp_point_t;

typedef struct adf_idsp {
    uint32_t n_points;  /* <= ADF_IDSP_MAX_POINTS */
    float phi_min;      /* rad: the RoI covers phi_min .. phi_min + phi_width (mod 2 pi) */
    float phi_width;    /* rad, in (0, 2 pi] */
    uint16_t flags;     /* 0 so far; passed through */
    const uint8_t *raw; /* decoder: the points' bytes in the frame; encoder: unused */
} adf_idsp_t;

TUSK_API size_t adf_idsp_payload_size(uint32_t n_points);

/* Write one data:id_spacepoints frame with hdr's range and flags and
 * hdr->n_points points. ADF_ERANGE for too many points; ADF_EINVAL for a
 * phi range that is not finite or a width outside (0, 2 pi], or a point
 * whose layer is >= ADF_IDSP_MAX_LAYERS (nothing is written then). Writer
 * errors as for every codec. */
TUSK_API int adf_idsp_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_idsp_t *hdr,
                             const adf_idsp_point_t *points, adf_error_t *err);

/* Check a data:id_spacepoints frame whole (type, size, range, every
 * layer) and fill sp (sp->raw points into the frame). ADF_EBADTYPE,
 * ADF_ERANGE (too many points), ADF_EPAYLOAD (size, range or a layer);
 * sp is untouched on error. */
TUSK_API int adf_idsp_decode(const adf_frame_t *frame, adf_idsp_t *sp, adf_error_t *err);

/* Point i (< sp->n_points) of a decoded frame. */
TUSK_API void adf_idsp_point(const adf_idsp_t *sp, uint32_t i, adf_idsp_point_t *point);

/* ---- data:zvertex -------------------------------------------------------- */

#define ADF_ZVERTEX_HEADER_SIZE 24u
#define ADF_ZVERTEX_VERTEX_SIZE 16u
#define ADF_ZVERTEX_MAX 2

enum adf_zvertex_mode { ADF_ZVERTEX_PAIRS = 1, ADF_ZVERTEX_TRIPLETS = 2 };
enum adf_zvertex_backend { ADF_ZVERTEX_REFERENCE = 1, ADF_ZVERTEX_FAST = 2, ADF_ZVERTEX_OPENCL = 3 };

typedef struct adf_zvertex_peak {
    double z0;          /* mm: zHisto / nHisto summed over the three bins */
    uint32_t count;     /* nHisto summed over the three bins */
    uint32_t bin;       /* the first of the three bins */
} adf_zvertex_peak_t;

typedef struct adf_zvertex {
    uint8_t n_vertices; /* 0 (empty histogram), 1, or 2 (second vertex asked for and found) */
    uint8_t mode;       /* an adf_zvertex_mode */
    uint8_t precision;  /* bytes of the arithmetic: 4 (float) or 8 (double) */
    uint8_t backend;    /* an adf_zvertex_backend */
    uint32_t entries;   /* intercepts that went into the histogram */
    uint64_t pairs;     /* spacepoint pairs formed */
    uint32_t settings;  /* digest of the algorithm's settings (zf_config_digest), so that an
                         * analysis can tell whether it compares like with like */
    adf_zvertex_peak_t vertex[ADF_ZVERTEX_MAX];
} adf_zvertex_t;

TUSK_API size_t adf_zvertex_payload_size(unsigned n_vertices);

/* ADF_EINVAL for more than 2 vertices, an unknown mode, precision or
 * backend (nothing is written then). */
TUSK_API int adf_zvertex_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_zvertex_t *zv,
                                adf_error_t *err);
/* ADF_EBADTYPE, ADF_ERANGE (more than 2 vertices), ADF_EPAYLOAD (size,
 * mode, precision or backend); zv untouched on error. */
TUSK_API int adf_zvertex_decode(const adf_frame_t *frame, adf_zvertex_t *zv, adf_error_t *err);

/* ---- data:id_truth -------------------------------------------------------- */

#define ADF_IDTRUTH_HEADER_SIZE 12u
#define ADF_IDTRUTH_POINT_SIZE 6u
#define ADF_IDTRUTH_MAX_PILEUP 4096u
#define ADF_IDTRUTH_NOISE_PARTICLE UINT32_MAX /* particle of a noise hit */
#define ADF_IDTRUTH_NOISE_VERTEX UINT16_MAX   /* vertex of a noise hit */

typedef struct adf_idtruth_point {
    uint32_t particle;  /* track number within the RoI, or ADF_IDTRUTH_NOISE_PARTICLE */
    uint16_t vertex;    /* 0 signal, 1..n_pileup pile-up vertex, or ADF_IDTRUTH_NOISE_VERTEX */
} adf_idtruth_point_t;

typedef struct adf_idtruth {
    float z_signal;     /* mm: the signal vertex, what the z-finder should find */
    uint16_t n_pileup;  /* <= ADF_IDTRUTH_MAX_PILEUP */
    uint16_t flags;     /* 0 so far; passed through */
    uint32_t n_points;  /* <= ADF_IDSP_MAX_POINTS: one per spacepoint of the RoI, same order */
    float z_pileup[ADF_IDTRUTH_MAX_PILEUP]; /* mm: vertex k is z_pileup[k - 1] */
    const uint8_t *raw; /* decoder: the points' bytes in the frame; encoder: unused */
} adf_idtruth_t;

TUSK_API size_t adf_idtruth_payload_size(unsigned n_pileup, uint32_t n_points);

/* ADF_ERANGE for too many pile-up vertices or points; ADF_EINVAL for a
 * point whose vertex is above n_pileup (and not noise), or a noise vertex
 * with a particle number or the other way round. */
TUSK_API int adf_idtruth_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp, const adf_idtruth_t *truth,
                                const adf_idtruth_point_t *points, adf_error_t *err);
/* Checks the whole payload as the encoder does; truth untouched on error. */
TUSK_API int adf_idtruth_decode(const adf_frame_t *frame, adf_idtruth_t *truth, adf_error_t *err);
TUSK_API void adf_idtruth_point(const adf_idtruth_t *truth, uint32_t i, adf_idtruth_point_t *point);

#ifdef __cplusplus
}
#endif
#endif
