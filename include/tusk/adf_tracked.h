/* adf_tracked.h - data:tracked frames: the gamma rays a tracker found in
 * one event. tusk-defined layout (adf/FORMAT.md). */
#ifndef TUSK_ADF_TRACKED_H
#define TUSK_ADF_TRACKED_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_TRACKED_MAX_GAMMAS 128
#define ADF_TRACKED_HEADER_SIZE 4u
#define ADF_TRACKED_GAMMA_SIZE 40u

typedef struct adf_tracked_gamma {
    float energy;          /* keV */
    float first[3];        /* mm, array frame: first interaction */
    float second[3];       /* mm: second interaction (= first for one point) */
    float fom;             /* tracking figure of merit, lower is better */
    uint16_t n_points;     /* interaction points in the track */
    uint16_t status;
} adf_tracked_gamma_t;

typedef struct adf_tracked {
    uint16_t n_gammas;     /* <= ADF_TRACKED_MAX_GAMMAS */
    uint16_t status;
    adf_tracked_gamma_t gamma[ADF_TRACKED_MAX_GAMMAS];
} adf_tracked_t;

TUSK_API size_t adf_tracked_payload_size(unsigned n_gammas);

TUSK_API int adf_tracked_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                                const adf_tracked_t *tracked, adf_error_t *err);
TUSK_API int adf_tracked_decode(const adf_frame_t *frame, adf_tracked_t *tracked, adf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
