/* passthrough.c - filter: copies its input to its output, frame by frame.
 *
 * Parameters:
 *   forward  true: check the framing, then hand the input on unchanged
 *            (TUSK_ACTOR_FORWARD: the host passes the buffer on without a
 *            copy) instead of copying the frames (false). A malformed
 *            input is copied instead, so its valid frames still go out.
 *
 * Every frame is read and written again (adf_reader +
 * adf_writer_put_frame), so the framing is checked on the way: a malformed
 * frame is a TUSK_ACTOR_EDATA error naming its offset in the input buffer,
 * after the frames before it went out (TUSK_ACTOR_MORE_OUTPUT).
 * When the output buffer is full the call returns TUSK_ACTOR_MORE_OUTPUT
 * and the next call, which gets the same input again, goes on from the
 * first frame not yet copied. A frame larger than the whole output buffer
 * is a TUSK_ACTOR_EDATA error.
 *
 * Fan-in: it exports only process_block, which the host calls for buffers
 * from any of its sources.
 */
#include <stdlib.h>

#define AK_FILTER
#include "tusk/actorkit.h"

TUSK_ACTOR_DECLARE("passthrough", "copies whole ADF frames from input to output, checking the framing",
                   "forward: true to check the framing and pass the input on uncopied (false)\n");

typedef struct passthrough {
    ak_base_t base;
    ak_copier_t copier;
    bool forward;
} passthrough_t;

typedef struct settings {
    bool forward;
} settings_t;

static const ak_param_t params[] = {
    AK_BOOL("forward", settings_t, forward, false),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(passthrough_t)

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    passthrough_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, "passthrough", params, &set, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p || !ak_copier_init(&p->copier)) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    p->forward = set.forward;
    if (!ak_config_base(&cfg, &p->base))
        goto fail;
    ak_config_close(&cfg);
    return p;
fail:
    if (p)
        ak_copier_free(&p->copier);
    free(p);
    ak_config_close(&cfg);
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    passthrough_t *p = algo_data;
    ak_ok(error_code);
    ak_copier_reset(&p->copier);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    passthrough_t *p = algo_data;
    ak_ok(error_code);
    ak_copier_reset(&p->copier);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    passthrough_t *p = algo_data;
    ak_ok(error_code);
    if (p) {
        ak_copier_free(&p->copier);
        free(p);
    }
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    passthrough_t *p = algo_data;
    if (p->forward)
        *error_code = ak_forward_frames(&p->copier, &p->base, input_buffer, size_of_input_buffer, output_buffer,
                                        size_of_output_buffer, used_size_of_output_buffer);
    else
        *error_code = ak_copy_frames(&p->copier, &p->base, input_buffer, size_of_input_buffer, output_buffer,
                                     size_of_output_buffer, used_size_of_output_buffer);
}
