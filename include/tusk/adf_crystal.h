/* adf_crystal.h - data:crystal frames: one crystal's digitised traces.
 *
 * 36 segments (6 sectors x 6 rings, index = 6 * sector + ring) and the core
 * at two gains, each with n_samples int16 samples, plus the energies the
 * front-end computed. Byte layout in adf/FORMAT.md.
 */
#ifndef TUSK_ADF_CRYSTAL_H
#define TUSK_ADF_CRYSTAL_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_CRYSTAL_SEGMENTS 36
#define ADF_CRYSTAL_CORES 2
#define ADF_CRYSTAL_CHANNELS (ADF_CRYSTAL_SEGMENTS + ADF_CRYSTAL_CORES)
#define ADF_CRYSTAL_MAX_SAMPLES 1024
#define ADF_CRYSTAL_HEADER_SIZE 160u

typedef struct adf_crystal {
    uint16_t crystal_id;
    uint16_t status;       /* front-end status bits, passed through */
    uint16_t n_samples;    /* samples per channel, <= ADF_CRYSTAL_MAX_SAMPLES */
    float segment_energy[ADF_CRYSTAL_SEGMENTS]; /* keV */
    float core_energy[ADF_CRYSTAL_CORES];       /* keV, low and high gain */
    /* trace[channel][sample]: channels 0-35 segments, 36-37 core gains */
    int16_t trace[ADF_CRYSTAL_CHANNELS][ADF_CRYSTAL_MAX_SAMPLES];
} adf_crystal_t;

/* Payload bytes of a data:crystal frame with n_samples per channel. */
TUSK_API size_t adf_crystal_payload_size(unsigned n_samples);

TUSK_API int adf_crystal_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                                const adf_crystal_t *crystal, adf_error_t *err);
TUSK_API int adf_crystal_decode(const adf_frame_t *frame, adf_crystal_t *crystal, adf_error_t *err);

/* A data:crystal frame read in place: the header decoded (the same checks
 * as adf_crystal_decode), the traces left in the frame's payload, where
 * `traces` points (valid while the frame's buffer is): int16 little-endian,
 * channel-major, ADF_CRYSTAL_CHANNELS x n_samples; sample s of channel ch
 * is adf_crystal_view_sample(view, ch, s). For readers that take a few
 * samples of a record (psa: no 78 kB adf_crystal_t per record). */
typedef struct adf_crystal_view {
    uint16_t crystal_id;
    uint16_t status;
    uint16_t n_samples;
    float segment_energy[ADF_CRYSTAL_SEGMENTS];
    float core_energy[ADF_CRYSTAL_CORES];
    const uint8_t *traces;
} adf_crystal_view_t;

TUSK_API int adf_crystal_view(const adf_frame_t *frame, adf_crystal_view_t *view, adf_error_t *err);
/* Sample s of channel ch (both within range: not checked). */
TUSK_API int16_t adf_crystal_view_sample(const adf_crystal_view_t *view, unsigned ch, unsigned s);

#ifdef __cplusplus
}
#endif
#endif
