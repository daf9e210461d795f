/* null_consumer.c - consumer: drains its input and counts it.
 *
 * Counts buffers, top-level ADF frames and bytes (a malformed buffer is a
 * TUSK_ACTOR_EDATA error with the offset) and prints one line to stderr
 * at process_stop:
 *   null_consumer NAME[i]: B buffers, F frames, N bytes
 *
 * Parameters:
 *   expect_frames  if set, process_stop fails with TUSK_ACTOR_EDATA when
 *                  the number of frames received differs (not set)
 */
#include <stdio.h>
#include <stdlib.h>

#define AK_CONSUMER
#include "tusk/actorkit.h"

TUSK_ACTOR_DECLARE("null_consumer", "drains its input, counts buffers, frames and bytes",
                   "expect_frames: fail at stop unless exactly this many frames arrived (not checked)\n");

typedef struct null_consumer {
    ak_base_t base;
    adf_reader_t *reader;
    bool has_expect;
    uint64_t expect_frames;
    uint64_t buffers, frames, bytes;
} null_consumer_t;

typedef struct settings {
    uint64_t expect_frames;
} settings_t;

static const ak_param_t params[] = {
    AK_U64("expect_frames", settings_t, expect_frames, 0, 0, UINT64_MAX),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(null_consumer_t)

static void free_consumer(null_consumer_t *c)
{
    if (!c)
        return;
    adf_reader_destroy(&c->reader);
    free(c);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    null_consumer_t *c = NULL;
    if (!ak_config_open(&cfg, directory_path, "null_consumer", params, &set, message, message_size, error_code))
        goto fail;
    c = calloc(1, sizeof *c);
    if (!c || !(c->reader = adf_reader_new(ADF_ON_ERROR_STOP))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    c->has_expect = tusk_params_get(cfg.params, "expect_frames") != NULL;
    c->expect_frames = set.expect_frames;
    if (!ak_config_base(&cfg, &c->base))
        goto fail;
    ak_config_close(&cfg);
    return c;
fail:
    free_consumer(c);
    ak_config_close(&cfg);
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    null_consumer_t *c = algo_data;
    ak_ok(error_code);
    c->buffers = c->frames = c->bytes = 0;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    null_consumer_t *c = algo_data;
    ak_ok(error_code);
    fprintf(stderr, "null_consumer %s: %llu buffers, %llu frames, %llu bytes\n", c->base.label,
            (unsigned long long)c->buffers, (unsigned long long)c->frames, (unsigned long long)c->bytes);
    if (c->has_expect && c->frames != c->expect_frames)
        ak_fail(&c->base, error_code, TUSK_ACTOR_EDATA, "expected %llu frames (expect_frames), received %llu",
                (unsigned long long)c->expect_frames, (unsigned long long)c->frames);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_consumer(algo_data);
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    null_consumer_t *c = algo_data;
    ak_ok(error_code);
    if (!input_buffer)
        size_of_input_buffer = 0;
    c->buffers++;
    c->bytes += size_of_input_buffer;
    adf_frame_t f;
    int rc;
    adf_reader_reset(c->reader, input_buffer, size_of_input_buffer, 0);
    while ((rc = adf_reader_next(c->reader, &f)) == ADF_OK)
        c->frames++;
    if (rc != ADF_END)
        ak_fail(&c->base, error_code, TUSK_ACTOR_EDATA, "input buffer %llu (%u bytes): %s",
                (unsigned long long)c->buffers, size_of_input_buffer, adf_reader_error(c->reader)->message);
}
