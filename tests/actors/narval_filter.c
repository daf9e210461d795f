/* narval_filter.c - a filter written as NARVAL's "Writing a C actor" page
 * describes them (the NARVAL hooks only), which reads a file of its own
 * from the configuration folder NARVAL gives it: DIR/crate.map, lines
 * "CHANNEL DETECTOR". It rewrites each event's channel as its detector
 * (narval_produce.c's format); a channel the map lacks is an error. Test
 * use only (tests/narval_chain.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHANNELS 256

typedef struct my_struct {
    int started;
} my_struct_t;

/* The crate map, read by process_config (NARVAL style: library state). */
static long detector_of[MAX_CHANNELS];

void process_config(char *directory_path, unsigned int *error_code);
struct my_struct *process_register(unsigned int *error_code);
void process_initialise(struct my_struct *algo_data, unsigned int *error_code);
void process_start(struct my_struct *algo_data, unsigned int *error_code);
void process_stop(struct my_struct *algo_data, unsigned int *error_code);
void process_unload(struct my_struct *algo_data, unsigned int *error_code);
void process_block(struct my_struct *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   void *output_buffer, unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code);

static unsigned long get_u32(const unsigned char *p)
{
    return (unsigned long)p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 | (unsigned long)p[3] << 24;
}

static void put_u32(unsigned char *p, unsigned long v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)((v >> 8) & 0xff);
    p[2] = (unsigned char)((v >> 16) & 0xff);
    p[3] = (unsigned char)((v >> 24) & 0xff);
}

void process_config(char *directory_path, unsigned int *error_code)
{
    char path[4096];
    unsigned long channel;
    long detector;
    for (int i = 0; i < MAX_CHANNELS; i++)
        detector_of[i] = -1;
    snprintf(path, sizeof path, "%s/crate.map", directory_path);
    FILE *fp = fopen(path, "r");
    *error_code = 1;
    if (!fp)
        return;
    int n = 0;
    while (fscanf(fp, "%lu %ld", &channel, &detector) == 2) {
        if (channel >= MAX_CHANNELS || detector < 0) {
            fclose(fp);
            return;
        }
        detector_of[channel] = detector;
        n++;
    }
    fclose(fp);
    *error_code = n > 0 ? 0 : 1;
}

struct my_struct *process_register(unsigned int *error_code)
{
    my_struct_t *a = calloc(1, sizeof *a);
    *error_code = a ? 0 : 1;
    return a;
}

void process_initialise(struct my_struct *algo_data, unsigned int *error_code)
{
    (void)algo_data;
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

void process_unload(struct my_struct *algo_data, unsigned int *error_code)
{
    free(algo_data);
    *error_code = 0;
}

void process_block(struct my_struct *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   void *output_buffer, unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    const unsigned char *in = input_buffer;
    unsigned char *out = output_buffer;
    *used_size_of_output_buffer = 0;
    *error_code = 1;
    if (!algo_data->started || size_of_input_buffer < 4 || size_of_input_buffer > size_of_output_buffer)
        return;
    unsigned long n = get_u32(in);
    if ((size_of_input_buffer - 4) / 8 < n)
        return;
    put_u32(out, n);
    for (unsigned long i = 0; i < n; i++) {
        unsigned long channel = get_u32(in + 4 + 8 * i);
        if (channel >= MAX_CHANNELS || detector_of[channel] < 0)
            return;
        put_u32(out + 4 + 8 * i, (unsigned long)detector_of[channel]);
        put_u32(out + 8 + 8 * i, get_u32(in + 8 + 8 * i));
    }
    *used_size_of_output_buffer = (unsigned int)(4 + 8 * n);
    *error_code = 0;
}
