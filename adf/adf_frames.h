/* adf_frames.h - the two walks over a buffer that every reconstruction
 * filter (zfinder, sts, ut, tpc) makes, written once (adf_frames.c; not
 * installed): read the frames of one type into a batch; copy the buffer
 * to a writer with each such frame's results after it. Failures are
 * reported as tusk_error_t (tusk/error.h), like their callers'. */
#ifndef ADF_FRAMES_H
#define ADF_FRAMES_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tusk/adf.h"
#include "tusk/error.h"

/* Every frame, for adf_frames_read's `type`. */
#define ADF_FRAMES_ALL 0u

/* One frame of the type asked for; TUSK_OK to go on. */
typedef int (*adf_frames_read_fn)(void *ctx, const adf_frame_t *frame, tusk_error_t *err);

/* Hand each top-level frame of buf whose type is `type` (ADF_FRAMES_ALL:
 * every frame) to fn, in order; offsets count from `base`. Stops at the
 * first failure: fn's, or TUSK_EINVAL with the reader's message (which
 * names the offset) for a malformed frame. */
TUSK_INTERNAL int adf_frames_read(const void *buf, size_t size, uint64_t base, uint32_t type, adf_frames_read_fn fn,
                                  void *ctx, tusk_error_t *err);

/* What follows the k-th frame of the type (k = 0, 1, ...): fn writes it
 * into w. */
typedef int (*adf_frames_write_fn)(void *ctx, size_t k, const adf_frame_t *frame, adf_writer_t *w,
                                   tusk_error_t *err);

/* Copy the frames of buf to w (those of `type` only when `keep`), calling
 * fn after each frame of `type`. The buffer must hold exactly n of them,
 * `what` naming them in the message ("RoIs", "modules"): the results of
 * the batch read from it. A frame w refuses: adf_frames_error's status. */
TUSK_INTERNAL int adf_frames_write(const void *buf, size_t size, uint32_t type, bool keep, size_t n, const char *what,
                                   adf_frames_write_fn fn, void *ctx, adf_writer_t *w, tusk_error_t *err);

/* err with e's message and, returned, the matching tusk status: TUSK_ELIMIT
 * for a frame that did not fit (ADF_EFULL, ADF_ETOOBIG), TUSK_EINVAL for
 * anything else (a malformed frame, a value the format cannot hold). */
TUSK_INTERNAL int adf_frames_error(const adf_error_t *e, tusk_error_t *err);

#endif
