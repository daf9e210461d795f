/* narval_produce.c - a producer written as NARVAL's "Writing a C actor"
 * page describes them: the NARVAL hooks only (no tusk header, descriptor
 * or extension), its configuration read in process_config from the folder
 * NARVAL gives it, into library state. It runs until it is stopped, as
 * NARVAL producers do.
 *
 * DIR/producer.conf: "events_per_buffer N" and "channels C" lines, and
 * optionally "buffers B": after B buffers the next call says its data
 * ended (tusk's status END_OF_DATA, 0x100), for a run that ends by itself
 * (tests/narval_chain.sh under tusk-run). Each
 * buffer: a little-endian u32 event count, then per event the u32 channel
 * (event number mod C) and the u32 amplitude ((event number * 37) mod
 * 1000), event numbers counting on from 0 across buffers. Test use only
 * (tests/narval_chain.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct my_struct {
    unsigned long next_event, buffers;
    int started;
} my_struct_t;

/* NARVAL style: process_config reads into library state. */
static unsigned long events_per_buffer, channels, max_buffers;

void process_config(char *directory_path, unsigned int *error_code);
struct my_struct *process_register(unsigned int *error_code);
void process_initialise(struct my_struct *algo_data, unsigned int *error_code);
void process_start(struct my_struct *algo_data, unsigned int *error_code);
void process_stop(struct my_struct *algo_data, unsigned int *error_code);
void process_reset(struct my_struct *algo_data, unsigned int *error_code);
void process_unload(struct my_struct *algo_data, unsigned int *error_code);
void process_block(struct my_struct *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code);

static void put_u32(unsigned char *p, unsigned long v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)((v >> 8) & 0xff);
    p[2] = (unsigned char)((v >> 16) & 0xff);
    p[3] = (unsigned char)((v >> 24) & 0xff);
}

void process_config(char *directory_path, unsigned int *error_code)
{
    char path[4096], key[64];
    unsigned long value;
    snprintf(path, sizeof path, "%s/producer.conf", directory_path);
    FILE *fp = fopen(path, "r");
    *error_code = 1;
    if (!fp)
        return;
    events_per_buffer = channels = max_buffers = 0;
    while (fscanf(fp, "%63s %lu", key, &value) == 2) {
        if (strcmp(key, "events_per_buffer") == 0)
            events_per_buffer = value;
        else if (strcmp(key, "channels") == 0)
            channels = value;
        else if (strcmp(key, "buffers") == 0)
            max_buffers = value;
    }
    fclose(fp);
    if (events_per_buffer > 0 && channels > 0)
        *error_code = 0;
}

struct my_struct *process_register(unsigned int *error_code)
{
    my_struct_t *a = calloc(1, sizeof *a);
    *error_code = a ? 0 : 1;
    return a;
}

void process_initialise(struct my_struct *algo_data, unsigned int *error_code)
{
    algo_data->next_event = algo_data->buffers = 0;
    *error_code = 0;
}

void process_start(struct my_struct *algo_data, unsigned int *error_code)
{
    algo_data->started = 1;
    *error_code = 0;
}

void process_stop(struct my_struct *algo_data, unsigned int *error_code)
{
    algo_data->started = 0;
    *error_code = 0;
}

void process_reset(struct my_struct *algo_data, unsigned int *error_code)
{
    algo_data->next_event = algo_data->buffers = 0;
    *error_code = 0;
}

void process_unload(struct my_struct *algo_data, unsigned int *error_code)
{
    free(algo_data);
    *error_code = 0;
}

void process_block(struct my_struct *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    unsigned char *out = output_buffer;
    *used_size_of_output_buffer = 0;
    if (!algo_data->started || size_of_output_buffer < 4 + 8 * events_per_buffer) {
        *error_code = 1;
        return;
    }
    if (max_buffers && algo_data->buffers == max_buffers) {
        *error_code = 0x100; /* the end of its data */
        return;
    }
    algo_data->buffers++;
    put_u32(out, events_per_buffer);
    for (unsigned long i = 0; i < events_per_buffer; i++) {
        unsigned long e = algo_data->next_event++;
        put_u32(out + 4 + 8 * i, e % channels);
        put_u32(out + 8 + 8 * i, (e * 37) % 1000);
    }
    *used_size_of_output_buffer = (unsigned int)(4 + 8 * events_per_buffer);
    *error_code = 0;
}
