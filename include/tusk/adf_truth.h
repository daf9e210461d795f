/* adf_truth.h - data:truth frames: the Monte Carlo truth of one simulated
 * event.
 *
 * A tusk-private frame type (0xFA0101F0: last byte 0xF0-0xFF). The
 * simulation producer writes one after the event's data:crystal frames,
 * with the same event number and timestamp. It holds the source decay the
 * event came from, the gamma rays that decay emitted (energy, direction)
 * and every interaction point those gammas made in the germanium (crystal,
 * segment, process, deposited energy, position in the crystal and in the
 * array). Actors that do not ask for it pass it through unchanged; the
 * analysis uses it to measure PSA and tracking against what happened.
 * Byte layout in adf/FORMAT.md.
 *
 * adf_truth_t is about 75 kB: callers allocate it on the heap.
 */
#ifndef TUSK_ADF_TRUTH_H
#define TUSK_ADF_TRUTH_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_TRUTH_MAX_GAMMAS 64
#define ADF_TRUTH_MAX_POINTS 2048
#define ADF_TRUTH_HEADER_SIZE 24u
#define ADF_TRUTH_GAMMA_SIZE 16u
#define ADF_TRUTH_POINT_SIZE 36u
#define ADF_TRUTH_SEGMENTS 36     /* segment 0-35 (6 x sector + ring) */
#define ADF_TRUTH_NO_SEGMENT (-1) /* a point outside every segment */

/* What happened at an interaction point. */
enum adf_truth_process {
    ADF_TRUTH_PHOTO = 1,
    ADF_TRUTH_COMPTON = 2,
    ADF_TRUTH_RAYLEIGH = 3,
    ADF_TRUTH_PAIR = 4
};

typedef struct adf_truth_gamma {
    float energy;          /* keV, as emitted */
    float dir[3];          /* unit vector, array frame */
} adf_truth_gamma_t;

typedef struct adf_truth_point {
    uint16_t crystal;      /* crystal id */
    int16_t segment;       /* 0-35, or ADF_TRUTH_NO_SEGMENT */
    uint16_t gamma;        /* index of the emitted gamma it descends from, < n_gammas */
    uint16_t process;      /* an adf_truth_process */
    float energy;          /* keV deposited */
    float local[3];        /* mm, crystal frame */
    float world[3];        /* mm, array frame, target at the origin */
} adf_truth_point_t;

typedef struct adf_truth {
    uint64_t decay;        /* 0-based index of the source decay */
    uint64_t gammas_total; /* gammas the source emitted since the run began,
                            * this decay's included (efficiency denominator) */
    uint16_t flags;        /* 0 so far; passed through */
    uint16_t n_gammas;     /* <= ADF_TRUTH_MAX_GAMMAS */
    uint16_t n_points;     /* <= ADF_TRUTH_MAX_POINTS */
    adf_truth_gamma_t gamma[ADF_TRUTH_MAX_GAMMAS];
    adf_truth_point_t point[ADF_TRUTH_MAX_POINTS];
} adf_truth_t;

/* Payload bytes of a data:truth frame: 24 + 16 n_gammas + 36 n_points. */
TUSK_API size_t adf_truth_payload_size(unsigned n_gammas, unsigned n_points);

/* Write one data:truth frame. ADF_ERANGE when a count exceeds its maximum,
 * ADF_EINVAL when a point names a gamma >= n_gammas, an unknown process or
 * a segment outside 0-35 and -1; nothing is written then. Writer errors
 * (ADF_EFULL, ADF_ETOOBIG, ADF_EBADKEY) as for every codec. */
TUSK_API int adf_truth_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                              const adf_truth_t *truth, adf_error_t *err);

/* Decode a data:truth frame. ADF_EBADTYPE for another type, ADF_ERANGE for
 * counts over the maxima, ADF_EPAYLOAD for a payload whose size does not
 * match its counts or a point that fails the checks above; `truth` is left
 * untouched on error. The reserved header word is ignored. */
TUSK_API int adf_truth_decode(const adf_frame_t *frame, adf_truth_t *truth, adf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
