/* holdback.c - a filter that writes nothing in process_block and
 * everything at process_flush (like an event builder's reorder window),
 * in as many output buffers as it takes. Test use only. */
#include <stdlib.h>
#include <string.h>

#include "tusk/actor.h"

TUSK_ACTOR_DECLARE("holdback", "emits all input at end of data (tests)", "");

typedef struct hold {
    unsigned char *data;
    size_t size, cap, sent;
} hold_t;

void process_config(const char *directory_path, unsigned int *error_code);
void *process_register(unsigned int *error_code);
void process_initialise(void *algo_data, unsigned int *error_code);
void process_unload(void *algo_data, unsigned int *error_code);
void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code);
void process_flush(void *algo_data, void *out, unsigned int out_size, unsigned int *used,
                   unsigned int *error_code);

void process_config(const char *directory_path, unsigned int *error_code)
{
    (void)directory_path;
    *error_code = 0;
}

void *process_register(unsigned int *error_code)
{
    hold_t *h = calloc(1, sizeof *h);
    *error_code = h ? 0 : TUSK_ACTOR_ERESOURCE;
    return h;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    *error_code = 0;
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    hold_t *h = algo_data;
    free(h->data);
    free(h);
    *error_code = 0;
}

void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code)
{
    (void)out, (void)out_size;
    hold_t *h = algo_data;
    *used = 0;
    if (h->size + in_size > h->cap) {
        size_t cap = (h->size + in_size) * 2;
        unsigned char *d = realloc(h->data, cap);
        if (!d) {
            *error_code = TUSK_ACTOR_ERESOURCE;
            return;
        }
        h->data = d;
        h->cap = cap;
    }
    memcpy(h->data + h->size, in, in_size);
    h->size += in_size;
    *error_code = 0;
}

/* Whole input buffers are not frames; the test feeds frames no larger
 * than the output buffer, and this splits only between whole bytes, so it
 * is for byte-exact tests of the flush protocol, not for ADF. */
void process_flush(void *algo_data, void *out, unsigned int out_size, unsigned int *used,
                   unsigned int *error_code)
{
    hold_t *h = algo_data;
    size_t n = h->size - h->sent;
    if (n > out_size)
        n = out_size;
    memcpy(out, h->data + h->sent, n);
    h->sent += n;
    *used = (unsigned int)n;
    *error_code = h->sent < h->size ? TUSK_ACTOR_MORE_OUTPUT : 0;
}
