/* adf_file.h - ADF files: a plain sequence of frames.
 *
 * The file reader streams through a file of any size with a bounded read
 * window: it holds at most one frame (plus one key, while resynchronising)
 * in memory, growing its window only up to `max_frame`. Errors carry the
 * file offset. The file writer appends buffers of whole frames and reports
 * every failed write, including the final close (a full disk shows up there).
 */
#ifndef TUSK_ADF_FILE_H
#define TUSK_ADF_FILE_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"
#include "adf_key.h"
#include "adf_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_FILE_DEFAULT_WINDOW (1u << 20)       /* first read window: 1 MiB */
#define ADF_FILE_DEFAULT_MAX_FRAME (64u << 20)   /* largest frame accepted: 64 MiB */

typedef struct adf_file_options {
    adf_on_error_t on_error; /* stop at the first malformed frame, or resync */
    size_t window;           /* initial read window in bytes (0: default) */
    size_t max_frame;        /* frames longer than this are malformed (0: default) */
} adf_file_options_t;

typedef struct adf_file_reader adf_file_reader_t;

/* Open `path` for reading ("-" is standard input). `options` may be NULL. */
TUSK_API adf_file_reader_t *adf_file_reader_open(const char *path, const adf_file_options_t *options, adf_error_t *err);
TUSK_API void adf_file_reader_destroy(adf_file_reader_t **reader);

/* Next frame, as adf_reader_next; frame.offset is the file offset and the
 * payload view stays valid until the next call. */
TUSK_API int adf_file_reader_next(adf_file_reader_t *reader, adf_frame_t *frame);

TUSK_API const adf_error_t *adf_file_reader_error(const adf_file_reader_t *reader);
TUSK_API adf_reader_stats_t adf_file_reader_stats(const adf_file_reader_t *reader);
TUSK_API const char *adf_file_reader_path(const adf_file_reader_t *reader);

/* Bytes the read window holds now: at most max(window, max_frame + 20),
 * whatever the size of the file. */
TUSK_API size_t adf_file_reader_window_size(const adf_file_reader_t *reader);

typedef struct adf_file_writer adf_file_writer_t;

/* Create or truncate `path` ("-" is standard output). */
TUSK_API adf_file_writer_t *adf_file_writer_open(const char *path, adf_error_t *err);

/* Append `size` bytes (whole frames, e.g. an actor's output buffer). */
TUSK_API int adf_file_writer_write(adf_file_writer_t *writer, const void *data, size_t size, adf_error_t *err);

/* Flush and close; reports a failure to write the last bytes. Always
 * frees the writer and sets *writer to NULL. */
TUSK_API int adf_file_writer_close(adf_file_writer_t **writer, adf_error_t *err);

TUSK_API uint64_t adf_file_writer_bytes(const adf_file_writer_t *writer);

#ifdef __cplusplus
}
#endif
#endif
