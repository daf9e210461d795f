/* adf_writer.h - append frames to a caller-provided output buffer.
 *
 * A frame is written whole or not at all. When a frame does not fit, the
 * writer returns ADF_EFULL and stays full until the next reset: later
 * frames are refused too, so frames never change order. The actor then
 * returns the buffer and writes the refused frame into the next one.
 * A frame that cannot fit even an empty buffer gives ADF_ETOOBIG.
 *
 * Composite frames are built with adf_writer_begin / adf_writer_end around
 * the frames they contain. If anything inside does not fit, the whole
 * outermost composite is taken back: the buffer never holds part of a frame.
 */
#ifndef TUSK_ADF_WRITER_H
#define TUSK_ADF_WRITER_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_key.h"
#include "adf_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How deep composite frames may nest. */
#define ADF_WRITER_MAX_DEPTH 8

typedef struct adf_writer adf_writer_t;

TUSK_API adf_writer_t *adf_writer_new(void);
TUSK_API void adf_writer_destroy(adf_writer_t **writer);

/* Start writing into `buffer` of `capacity` bytes; clears the full state. */
TUSK_API void adf_writer_reset(adf_writer_t *writer, void *buffer, size_t capacity);

/* Append a frame whose key is `key` (its length field is ignored and
 * computed) and whose payload is a copy of `payload`. */
TUSK_API int adf_writer_put(adf_writer_t *writer, const adf_key_t *key, const void *payload, size_t size);

/* Append a copy of a frame read elsewhere (key and payload). */
TUSK_API int adf_writer_put_frame(adf_writer_t *writer, const adf_frame_t *frame);

/* Append a frame and hand back its payload area of `size` bytes for the
 * caller to fill completely before the next writer call (codecs encode
 * in place this way). */
TUSK_API int adf_writer_reserve(adf_writer_t *writer, const adf_key_t *key, size_t size, uint8_t **payload);

/* Open a composite frame (key class 0xCA); frames put until the matching
 * adf_writer_end become its payload. */
TUSK_API int adf_writer_begin(adf_writer_t *writer, const adf_key_t *key);
TUSK_API int adf_writer_end(adf_writer_t *writer);

/* Take back the innermost open composite frame and everything put into
 * it, as if it was never begun (no-op when none is open). */
TUSK_API void adf_writer_abort(adf_writer_t *writer);

/* Bytes of complete frames in the buffer (open composites not counted):
 * what the actor reports as the used size of its output buffer. */
TUSK_API size_t adf_writer_used(const adf_writer_t *writer);

/* Number of composite frames currently open. */
TUSK_API unsigned adf_writer_depth(const adf_writer_t *writer);

/* True once a frame was refused with ADF_EFULL, until the next reset. */
TUSK_API bool adf_writer_full(const adf_writer_t *writer);

/* The last error (code ADF_OK if none since the last reset). */
TUSK_API const adf_error_t *adf_writer_error(const adf_writer_t *writer);

#ifdef __cplusplus
}
#endif
#endif
