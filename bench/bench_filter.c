/* bench_filter.c - filter for benchmarks: passes its input on with as
 * little work as asked (bench only; not installed).
 *
 * The reference filter, passthrough, reads and writes every frame
 * (adf_reader + adf_writer); a raw libzmq relay forwards a message without
 * touching its bytes. This filter sits between the two, to tell tusk's own
 * per-buffer cost from the cost of the actor's copy:
 *
 *   copy=full  one memcpy of the whole input (no frame checks)
 *   copy=keys  walk the input's frames and write only their 20-byte keys
 *              and the first 16 payload bytes of each (where bench_producer
 *              puts its time stamp) at the same offsets of the output; the
 *              other payload bytes are whatever the buffer held. It is still
 *              valid ADF with the same framing and sizes, so consumers can
 *              check it, but the payload is not the input's: for timing
 *              the transport only.
 *
 * An input larger than the output buffer is a TUSK_ACTOR_EDATA error
 * (give the filter the same <size> as its source).
 */
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "tusk/actorkit.h"

TUSK_ACTOR_DECLARE("bench_filter", "copies its input whole, or only the frame keys (timing the transport alone)",
                   "copy: full | keys: one memcpy of the input, or only the frame keys and stamps (full)\n");

typedef struct bench_filter {
    ak_base_t base;
    bool keys_only;
    adf_reader_t *reader;
} bench_filter_t;

typedef struct settings {
    int copy;
} settings_t;

static const char *const modes[] = {"full", "keys", NULL};
static const ak_param_t params[] = {
    AK_CHOICE("copy", settings_t, copy, modes, 0),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(bench_filter_t)

static void free_filter(bench_filter_t *f)
{
    if (!f)
        return;
    adf_reader_destroy(&f->reader);
    free(f);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    bench_filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "bench_filter", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !(f->reader = adf_reader_new(ADF_ON_ERROR_STOP))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    f->keys_only = set.copy == 1;
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

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    bench_filter_t *f = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (!input_buffer || size_of_input_buffer == 0)
        return;
    if (size_of_input_buffer > size_of_output_buffer) {
        ak_fail(&f->base, error_code, TUSK_ACTOR_EDATA, "a %u-byte input does not fit the %u-byte output buffer",
                size_of_input_buffer, size_of_output_buffer);
        return;
    }
    if (!f->keys_only) {
        memcpy(output_buffer, input_buffer, size_of_input_buffer);
    } else {
        const uint8_t *in = input_buffer;
        uint8_t *out = output_buffer;
        adf_frame_t fr;
        int rc;
        adf_reader_reset(f->reader, input_buffer, size_of_input_buffer, 0);
        while ((rc = adf_reader_next(f->reader, &fr)) == ADF_OK) {
            size_t off = (size_t)fr.offset;
            memcpy(out + off, in + off, ADF_KEY_SIZE + (fr.payload_size < 16 ? fr.payload_size : 16));
        }
        if (rc != ADF_END) {
            ak_fail(&f->base, error_code, TUSK_ACTOR_EDATA, "input: %s", adf_reader_error(f->reader)->message);
            return;
        }
    }
    *used_size_of_output_buffer = size_of_input_buffer;
}
