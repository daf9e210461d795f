/* adf_codec.h - what the typed codecs share (adf_codec.c; not installed):
 * the codecs (adf_crystal.c, adf_psa.c, ...) sit on top of the key table,
 * the writer and the error reports, and nothing below calls back up. */
#ifndef ADF_CODEC_H
#define ADF_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "tusk/adf.h"

/* Check that `frame` has type `type` (ADF_EBADTYPE with a message if not). */
int adf_expect_type(const adf_frame_t *frame, uint32_t type, adf_error_t *err);

/* Reserve a frame of `type` for a codec; on failure copy the writer's
 * error into err. */
int adf_reserve_frame(adf_writer_t *writer, uint32_t type, uint32_t event, uint64_t timestamp,
                      size_t size, uint8_t **payload, adf_error_t *err);

#endif
