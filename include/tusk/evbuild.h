/* evbuild.h - the event builder (libtusk-builder, issue 9): data:psa frames
 * of one or more streams, arriving out of time order, grouped into
 * event:data:psa composites by timestamp. builder/README.md has the design.
 *
 * Frames are held in timestamp order (a bounded reorder buffer). An event
 * starts at the earliest held data:psa frame's timestamp t0 and takes every
 * data:psa frame with t0 <= ts <= t0 + window. It is emitted as one
 * event:data:psa composite (key: the builder's own event counter, t0; the
 * sub-frames keep their keys) followed by the other frames (data:truth, ...)
 * with t0 <= ts <= t0 + window, in timestamp order. Other frames outside
 * every event's window are emitted alone, in timestamp order.
 *
 * When. An event (or a lone frame at ts) is emitted once the newest
 * timestamp pushed exceeds its window end (t0 + window, or ts) + reorder:
 * every frame still to come is assumed at most `reorder` ticks behind the
 * newest one. When more than max_held frames are held the earliest is
 * emitted at once (forced, counted). evbuild_flush emits everything.
 *
 * Late frames. A frame older than the end of something already emitted
 * (ts < that window end + 1) cannot join it: it is counted as late (per
 * input) and emitted at once, a data:psa as a one-frame composite, other
 * frames as they are. Nothing is ever dropped.
 *
 * Order of equal timestamps: data:psa before other frames, then input
 * index, then arrival order, so a deterministic input gives a
 * deterministic output whatever the interleaving of the inputs (as long
 * as nothing is late or forced).
 *
 * meta:eof frames are end-of-stream marks, not data: they are held until
 * evbuild_flush and written after everything else. One carrying counts
 * (adf/FORMAT.md) is rewritten with the builder's own count of frames
 * written before it, as every tusk stage does.
 *
 * An evbuild_t is used from one thread at a time.
 */
#ifndef TUSK_EVBUILD_H
#define TUSK_EVBUILD_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tusk/adf_reader.h>
#include <tusk/adf_writer.h>
#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EVBUILD_DEFAULT_WINDOW 10u          /* ticks: AGATA; GRETINA uses 40 */
#define EVBUILD_DEFAULT_REORDER 1000000u    /* ticks: 10 ms */
#define EVBUILD_DEFAULT_MAX_HELD 1000000u   /* frames */
#define EVBUILD_MAX_INPUTS 4096u

typedef struct evbuild_config {
    uint64_t window;   /* ticks an event spans after its t0 (10), <= 2^48 - 1 */
    uint64_t reorder;  /* ticks a frame may arrive behind the newest (1000000), <= 2^48 - 1 */
    uint64_t max_held; /* frames held at most (1000000), 1 .. 2^32 */
} evbuild_config_t;

/* The setting names evbuild_config_read knows (NULL-terminated). */
extern TUSK_API const char *const evbuild_config_keys[];

TUSK_API void evbuild_config_default(evbuild_config_t *cfg);

/* Keys window, reorder, max_held; absent keys keep cfg's value. Any other
 * key (but the host's actor, instance, instances) is refused. TUSK_EPARAM
 * with a message that starts with `origin` and names the key. */
TUSK_API int evbuild_config_read(evbuild_config_t *cfg, const tusk_params_t *params, const char *origin,
                                 tusk_error_t *err);

/* TUSK_EPARAM naming the setting that is out of range. */
TUSK_API int evbuild_config_check(const evbuild_config_t *cfg, tusk_error_t *err);

typedef struct evbuild_input_stats {
    uint64_t frames;    /* frames pushed on this input (meta:eof included) */
    uint64_t psa;       /* of which data:psa */
    uint64_t late;      /* of which late */
    uint64_t depth_max; /* largest reorder depth: ticks a frame came behind the newest pushed */
} evbuild_input_stats_t;

typedef struct evbuild_stats {
    uint64_t frames_in, psa_in;   /* pushed, all inputs */
    uint64_t frames_out, psa_out; /* written: data:psa inside composites, other frames alone */
    uint64_t events;              /* event:data:psa composites made (late one-frame ones included) */
    uint64_t alone;               /* other frames made to go out alone (outside every event) */
    uint64_t late;                /* frames that came after their place was emitted */
    uint64_t forced;              /* emissions forced by max_held */
    uint64_t eofs;                /* meta:eof frames */
    uint64_t depth_max;           /* largest reorder depth, ticks (all inputs) */
    uint64_t held, held_max;      /* frames in the reorder buffer now, and at most */
    uint64_t ready;               /* frames decided and waiting for evbuild_take */
    unsigned inputs;              /* highest input index pushed + 1 */
} evbuild_stats_t;

typedef struct evbuild evbuild_t;

/* TUSK_EPARAM for a bad configuration, TUSK_ENOMEM. */
TUSK_API int evbuild_new(evbuild_t **out, const evbuild_config_t *cfg, tusk_error_t *err);
TUSK_API void evbuild_destroy(evbuild_t **eb);

/* Forget every frame held or ready and zero the statistics (a new run). */
TUSK_API void evbuild_reset(evbuild_t *eb);

/* Push one frame read from `input` (< EVBUILD_MAX_INPUTS); the frame is
 * copied. A data:psa or meta:eof frame that does not decode is TUSK_EINVAL
 * naming the input and the frame's offset (nothing pushed). */
TUSK_API int evbuild_push(evbuild_t *eb, unsigned input, const adf_frame_t *frame, tusk_error_t *err);

/* Push every frame of a buffer. The whole buffer is checked first (framing,
 * data:psa and meta:eof payloads): on TUSK_EINVAL, naming the input and
 * the offset in the buffer, nothing of it was pushed. */
TUSK_API int evbuild_push_buffer(evbuild_t *eb, unsigned input, const void *data, size_t size, tusk_error_t *err);

/* End of data: everything held becomes ready, in order, then the meta:eof
 * frames. TUSK_ENOMEM leaves what was not moved held (call again). */
TUSK_API int evbuild_flush(evbuild_t *eb, tusk_error_t *err);

/* Write ready output into `writer` (appending to what it holds). *more is
 * set when the writer filled up before everything ready was written: take
 * again into an emptied writer, the output goes on where it stopped. An
 * event or frame that cannot fit even an empty writer is TUSK_ELIMIT
 * naming its size (it stays ready). */
TUSK_API int evbuild_take(evbuild_t *eb, adf_writer_t *writer, bool *more, tusk_error_t *err);

TUSK_API void evbuild_stats(const evbuild_t *eb, evbuild_stats_t *stats);

/* One input's figures (zeros for an input never pushed). */
TUSK_API void evbuild_input_stats(const evbuild_t *eb, unsigned input, evbuild_input_stats_t *stats);

TUSK_API const evbuild_config_t *evbuild_config(const evbuild_t *eb);

#ifdef __cplusplus
}
#endif
#endif
