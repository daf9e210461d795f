/* adf_psa.h - data:psa frames (one crystal's interaction points) and
 * event:data:psa composites (all crystals of one built event).
 *
 * The layout is AGATA's: a 24-byte crystal header, then per hit a 6-byte
 * header and 9 floats (so floats are unaligned; decoded field by field).
 * tusk appends an optional, tagged extension with each hit's figure of
 * merit; AGATA readers that go by the hit count ignore it. adf/FORMAT.md.
 */
#ifndef TUSK_ADF_PSA_H
#define TUSK_ADF_PSA_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_key.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_PSA_MAX_HITS 64
#define ADF_PSA_HEADER_SIZE 24u
#define ADF_PSA_HIT_SIZE 42u
#define ADF_PSA_EXT_MAGIC 0x314B5354u /* "TSK1" little-endian */

typedef struct adf_psa_hit {
    uint16_t status;
    int16_t segment;      /* 0-35 */
    int16_t crystal;
    float x, y, z;        /* mm, crystal frame */
    float energy;         /* keV */
    float time;           /* ns, relative to the key's timestamp */
    float t_cc_e, t_cc_h; /* charge-collection times (AGATA fields) */
    float t_sg_e, t_sg_h;
    float fom;            /* figure of merit (tusk extension) */
} adf_psa_hit_t;

typedef struct adf_psa {
    uint16_t crystal_id;
    uint16_t status;
    float core_energy[2]; /* keV, two gains */
    float core_time[2];   /* ns */
    uint16_t psa_status;
    uint16_t n_hits;      /* <= ADF_PSA_MAX_HITS */
    bool has_fom;         /* write / found the figure-of-merit extension */
    adf_psa_hit_t hit[ADF_PSA_MAX_HITS];
} adf_psa_t;

TUSK_API size_t adf_psa_payload_size(unsigned n_hits, bool has_fom);

TUSK_API int adf_psa_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                            const adf_psa_t *psa, adf_error_t *err);
TUSK_API int adf_psa_decode(const adf_frame_t *frame, adf_psa_t *psa, adf_error_t *err);

/* event:data:psa: a composite of n data:psa frames, each with its own key
 * (keys[i].event and keys[i].timestamp; type and length are set here). */
TUSK_API int adf_event_psa_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                                  const adf_key_t *keys, const adf_psa_t *psa, size_t n, adf_error_t *err);

/* Decode up to `max` crystals into keys[] and psa[]; *n receives the count.
 * ADF_ERANGE if the event holds more than `max`. Every sub-frame must be a
 * well-formed data:psa and they must fill the payload exactly. */
TUSK_API int adf_event_psa_decode(const adf_frame_t *frame, adf_key_t *keys, adf_psa_t *psa,
                                  size_t max, size_t *n, adf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
