/* adf_meta.h - meta:eof, the end-of-data marker.
 *
 * Its payload is empty (as AGATA writes it) or, from tusk producers, 12
 * bytes: the run number and how many frames were sent before it, so a
 * consumer can reconcile its count. adf/FORMAT.md. */
#ifndef TUSK_ADF_META_H
#define TUSK_ADF_META_H

#include "export.h"

#include <stdbool.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_reader.h"
#include "adf_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_EOF_PAYLOAD_SIZE 12u

typedef struct adf_eof {
    bool has_counts;  /* false for an empty (AGATA-style) meta:eof */
    uint32_t run;
    uint64_t frames;  /* frames the producer sent before this one */
} adf_eof_t;

TUSK_API int adf_eof_encode(adf_writer_t *writer, uint32_t event, uint64_t timestamp,
                            const adf_eof_t *eof, adf_error_t *err);
TUSK_API int adf_eof_decode(const adf_frame_t *frame, adf_eof_t *eof, adf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
