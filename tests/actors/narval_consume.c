/* narval_consume.c - a consumer written as NARVAL's "Writing a C actor"
 * page describes them (the NARVAL hooks only). Its configuration folder
 * holds consumer.conf, a line "output FILE"; it counts the events and
 * sums the amplitudes of each detector (narval_filter.c's output) and
 * writes "detector D: events N, amplitude sum S" lines, by detector, to
 * FILE at process_stop. Test use only (tests/narval_chain.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DETECTORS 64

typedef struct my_struct {
    unsigned long events[MAX_DETECTORS];
    unsigned long long sum[MAX_DETECTORS];
    unsigned long buffers;
} my_struct_t;

static char output[4096];

void process_config(char *directory_path, unsigned int *error_code);
struct my_struct *process_register(unsigned int *error_code);
void process_initialise(struct my_struct *algo_data, unsigned int *error_code);
void process_stop(struct my_struct *algo_data, unsigned int *error_code);
void process_unload(struct my_struct *algo_data, unsigned int *error_code);
void process_block(struct my_struct *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code);

static unsigned long get_u32(const unsigned char *p)
{
    return (unsigned long)p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 | (unsigned long)p[3] << 24;
}

void process_config(char *directory_path, unsigned int *error_code)
{
    char path[4096], key[64];
    snprintf(path, sizeof path, "%s/consumer.conf", directory_path);
    FILE *fp = fopen(path, "r");
    *error_code = 1;
    output[0] = '\0';
    if (!fp)
        return;
    if (fscanf(fp, "%63s %4095s", key, output) == 2 && strcmp(key, "output") == 0)
        *error_code = 0;
    fclose(fp);
}

struct my_struct *process_register(unsigned int *error_code)
{
    my_struct_t *a = calloc(1, sizeof *a);
    *error_code = a ? 0 : 1;
    return a;
}

void process_initialise(struct my_struct *algo_data, unsigned int *error_code)
{
    memset(algo_data, 0, sizeof *algo_data);
    *error_code = 0;
}

void process_stop(struct my_struct *algo_data, unsigned int *error_code)
{
    FILE *fp = fopen(output, "w");
    *error_code = 1;
    if (!fp)
        return;
    fprintf(fp, "buffers %lu\n", algo_data->buffers);
    for (int d = 0; d < MAX_DETECTORS; d++)
        if (algo_data->events[d])
            fprintf(fp, "detector %d: events %lu, amplitude sum %llu\n", d, algo_data->events[d],
                    algo_data->sum[d]);
    *error_code = fclose(fp) == 0 ? 0 : 1;
}

void process_unload(struct my_struct *algo_data, unsigned int *error_code)
{
    free(algo_data);
    *error_code = 0;
}

void process_block(struct my_struct *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    const unsigned char *in = input_buffer;
    *error_code = 1;
    if (size_of_input_buffer < 4)
        return;
    unsigned long n = get_u32(in);
    if ((size_of_input_buffer - 4) / 8 < n)
        return;
    for (unsigned long i = 0; i < n; i++) {
        unsigned long d = get_u32(in + 4 + 8 * i);
        if (d >= MAX_DETECTORS)
            return;
        algo_data->events[d]++;
        algo_data->sum[d] += get_u32(in + 8 + 8 * i);
    }
    algo_data->buffers++;
    *error_code = 0;
}
