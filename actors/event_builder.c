/* event_builder.c - filter: builds events (tusk/evbuild.h) from the data:psa
 * frames of one or more inputs: event:data:psa composites out, each followed
 * by the other frames (data:truth, ...) of its time window.
 *
 * Parameters:
 *   window    ticks an event spans after its first data:psa frame (10;
 *             AGATA, GRETINA uses 40)
 *   reorder   ticks a frame may arrive behind the newest one seen
 *             (1000000 = 10 ms): an event goes out once a frame newer than
 *             its window end + reorder has come (builder/README.md says how
 *             to choose it)
 *   max_held  frames held at most; beyond, the earliest event goes out at
 *             once (a forced emission, counted) (1000000)
 *
 * Several <data_source>s (fan-in) are merged: process_block_input tells
 * the inputs apart for the statistics and for the order of equal
 * timestamps. Events go out as they become safe; process_flush writes the
 * rest at end of data, over as many output buffers as it takes. A
 * malformed frame, or a data:psa that does not decode, is
 * TUSK_ACTOR_EDATA naming the input and the offset. process_stop prints
 * a summary (events, late frames, forced emissions, frames per input, the
 * largest reorder depth) on stderr.
 *
 * One instance sees the whole stream: load-sharing instances would each
 * build events from a part of it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "tusk/evbuild.h"

TUSK_ACTOR_DECLARE("event_builder",
                   "builds events from data:psa frames by timestamp: event:data:psa composites out",
                   "window: ticks an event spans after its first data:psa frame (10)\n"
                   "reorder: ticks a frame may arrive behind the newest (1000000 = 10 ms)\n"
                   "max_held: frames held at most before a forced emission (1000000)\n");

void process_block_input(void *algo_data, unsigned int input, void *input_buffer, unsigned int size_of_input_buffer,
                         void *output_buffer, unsigned int size_of_output_buffer,
                         unsigned int *used_size_of_output_buffer, unsigned int *error_code);

typedef struct filter {
    ak_base_t base;
    evbuild_t *eb;
    adf_writer_t *writer;
    bool pending;             /* the last call returned MORE_OUTPUT for this input */
    unsigned pending_input, pending_size;
} filter_t;

AK_STANDARD_HOOKS(filter_t)

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    evbuild_destroy(&f->eb);
    adf_writer_destroy(&f->writer);
    free(f);
}

static unsigned status_of(int code)
{
    switch (code) {
    case TUSK_EINVAL: return TUSK_ACTOR_EDATA;
    case TUSK_ENOMEM: return TUSK_ACTOR_ERESOURCE;
    case TUSK_ELIMIT: return TUSK_ACTOR_ECONFIG;
    default: return TUSK_ACTOR_ERROR;
    }
}

/* The builder's keys (evbuild_config_read reads them). */
static const char *const *evbuild_keys(void)
{
    return evbuild_config_keys;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(evbuild_keys),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "event_builder", params, NULL, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !(f->writer = adf_writer_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    evbuild_config_t ec;
    evbuild_config_default(&ec);
    tusk_error_t err;
    int rc = evbuild_config_read(&ec, cfg.params, "event_builder parameters", &err);
    if (rc == TUSK_OK)
        rc = evbuild_new(&f->eb, &ec, &err);
    if (rc != TUSK_OK) {
        ak_config_fail(&cfg, rc == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    ak_config_close(&cfg);
    return f;
fail:
    free_filter(f);
    ak_config_close(&cfg);
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    ak_ok(error_code);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    evbuild_reset(f->eb);
    f->pending = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    evbuild_stats_t st;
    evbuild_stats(f->eb, &st);
    const evbuild_config_t *cfg = evbuild_config(f->eb);
    /* One line, as the other actors' summaries, with the inputs inside. */
    char inputs[512] = "";
    size_t used = 0;
    for (unsigned i = 0; i < st.inputs && used < sizeof inputs; i++) {
        evbuild_input_stats_t is;
        evbuild_input_stats(f->eb, i, &is);
        int n = snprintf(inputs + used, sizeof inputs - used, "%sinput %u: %" PRIu64 " frames, %" PRIu64 " late", i ? "; " : "",
                         i, is.frames, is.late);
        used += n > 0 ? (size_t)n : 0;
    }
    fprintf(stderr,
            "event_builder %s: %" PRIu64 " frames in (%s), %" PRIu64 " events, %" PRIu64 " frames outside events, %" PRIu64
            " late, %" PRIu64 " forced, reorder depth %" PRIu64 " ticks (reorder %" PRIu64 "), at most %" PRIu64
            " frames held, %" PRIu64 " frames out\n",
            f->base.label, st.frames_in, st.inputs ? inputs : "no input", st.events, st.alone, st.late, st.forced,
            st.depth_max, cfg->reorder, st.held_max, st.frames_out);
    if (st.held || st.ready)
        fprintf(stderr, "event_builder %s: %" PRIu64 " frames still held and %" PRIu64 " not written (no flush?)\n",
                f->base.label, st.held, st.ready);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

/* Write what is ready into `out`: TUSK_ACTOR_MORE_OUTPUT while more is. */
static void take(filter_t *f, void *out, unsigned out_size, unsigned *used, unsigned *error_code)
{
    tusk_error_t err;
    bool more;
    adf_writer_reset(f->writer, out, out_size);
    int rc = evbuild_take(f->eb, f->writer, &more, &err);
    *used = (unsigned)adf_writer_used(f->writer);
    if (rc != TUSK_OK) {
        ak_fail(&f->base, error_code, status_of(rc), "%s%s", err.message,
                rc == TUSK_ELIMIT ? " (raise the actor's <size>)" : "");
        return;
    }
    if (more)
        *error_code = TUSK_ACTOR_MORE_OUTPUT;
}

void process_block_input(void *algo_data, unsigned int input, void *input_buffer, unsigned int size_of_input_buffer,
                         void *output_buffer, unsigned int size_of_output_buffer,
                         unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (f->pending) {
        /* After MORE_OUTPUT the same input comes again: it was pushed. */
        if (input != f->pending_input || size_of_input_buffer != f->pending_size) {
            f->pending = false;
            ak_fail(&f->base, error_code, TUSK_ACTOR_ESTATE,
                    "called with a new input (input %u, %u bytes) while output of the previous one (input %u, %u "
                    "bytes) was still to be written: after 'more output' the same input must come again",
                    input, size_of_input_buffer, f->pending_input, f->pending_size);
            return;
        }
    } else {
        tusk_error_t err;
        int rc = evbuild_push_buffer(f->eb, input, input_buffer, size_of_input_buffer, &err);
        if (rc != TUSK_OK) {
            ak_fail(&f->base, error_code, status_of(rc), "%s", err.message);
            return;
        }
    }
    take(f, output_buffer, size_of_output_buffer, used_size_of_output_buffer, error_code);
    f->pending = *error_code == TUSK_ACTOR_MORE_OUTPUT;
    f->pending_input = input;
    f->pending_size = size_of_input_buffer;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    process_block_input(algo_data, 0, input_buffer, size_of_input_buffer, output_buffer, size_of_output_buffer,
                        used_size_of_output_buffer, error_code);
}

void process_flush(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    f->pending = false;
    tusk_error_t err;
    int rc = evbuild_flush(f->eb, &err);
    if (rc != TUSK_OK) {
        ak_fail(&f->base, error_code, status_of(rc), "%s", err.message);
        return;
    }
    take(f, output_buffer, size_of_output_buffer, used_size_of_output_buffer, error_code);
}
