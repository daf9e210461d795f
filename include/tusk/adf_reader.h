/* adf_reader.h - iterate over the frames of a buffer without copying.
 *
 * A reader walks a caller's buffer frame by frame and checks every length
 * against the bytes it has. Frames are handed out as views (adf_frame_t)
 * into that buffer. A malformed frame yields an error code and a message
 * with its byte offset; then, by the caller's choice at adf_reader_new(),
 * the reader either stops (every later call repeats the error) or
 * resynchronises on the next plausible key and goes on. Skipped bytes are
 * counted, so nothing is lost silently. The reader never reads outside the
 * buffer, whatever the buffer holds.
 *
 * One reader is meant to be reused for every buffer (adf_reader_reset) so
 * the processing path allocates nothing.
 */
#ifndef TUSK_ADF_READER_H
#define TUSK_ADF_READER_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_key.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A frame: its key and a view of its payload. */
typedef struct adf_frame {
    adf_key_t key;
    const uint8_t *payload; /* into the reader's data; valid while it is */
    uint32_t payload_size;  /* key.length - ADF_KEY_SIZE */
    uint64_t offset;        /* of the key, counted from the buffer's base */
} adf_frame_t;

typedef enum adf_on_error {
    ADF_ON_ERROR_STOP = 0,  /* an error ends the iteration */
    ADF_ON_ERROR_RESYNC = 1 /* report it, then go on at the next plausible key */
} adf_on_error_t;

typedef struct adf_reader_stats {
    uint64_t frames;        /* frames handed out */
    uint64_t errors;        /* errors reported */
    uint64_t bytes_skipped; /* bytes passed over while resynchronising */
} adf_reader_stats_t;

typedef struct adf_reader adf_reader_t;

TUSK_API adf_reader_t *adf_reader_new(adf_on_error_t policy);
TUSK_API void adf_reader_destroy(adf_reader_t **reader);

/* Start over on a new buffer. `base_offset` is added to every offset the
 * reader reports (the buffer's position in a file or an outer frame). */
TUSK_API void adf_reader_reset(adf_reader_t *reader, const void *data, size_t size, uint64_t base_offset);

/* Start over on the payload of a composite frame (ADF_EBADTYPE if `frame`
 * is not composite). Offsets stay those of the outer buffer. */
TUSK_API int adf_reader_open_composite(adf_reader_t *reader, const adf_frame_t *frame);

/* Next frame: ADF_OK and *frame filled, ADF_END when the data is used up,
 * or a negative error (see adf_reader_error for the message). */
TUSK_API int adf_reader_next(adf_reader_t *reader, adf_frame_t *frame);

/* The last error reported (code ADF_OK if none since the last reset). */
TUSK_API const adf_error_t *adf_reader_error(const adf_reader_t *reader);

TUSK_API adf_reader_stats_t adf_reader_stats(const adf_reader_t *reader);

/* Top-level frames of a buffer, up to the first malformed one (resets
 * `reader`): for statistics that hosts keep without caring about content. */
TUSK_API uint64_t adf_count_frames(adf_reader_t *reader, const void *data, size_t size);

#ifdef __cplusplus
}
#endif
#endif
