/* narval_plain.c - a filter written the way NARVAL C libraries are: only
 * the NARVAL hooks, no tusk descriptor or extension, configuration read in
 * process_config into library state. It copies its input, and checks that
 * the host called the hooks in NARVAL's order. Test use only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int UInt_t;

typedef struct algo {
    int initialised, started;
    unsigned long blocks;
} algo_t;

/* NARVAL style: process_config reads into library state. */
static int configured;

void process_config(const char *directory_path, UInt_t *error_code);
void *process_register(UInt_t *error_code);
void process_initialise(void *algo_data, UInt_t *error_code);
void process_start(void *algo_data, UInt_t *error_code);
void process_stop(void *algo_data, UInt_t *error_code);
void process_unload(void *algo_data, UInt_t *error_code);
void process_block(void *algo_data, void *input_buffer, UInt_t size_of_input_buffer, void *output_buffer,
                   UInt_t size_of_output_buffer, UInt_t *used_size_of_output_buffer, UInt_t *error_code);

void process_config(const char *directory_path, UInt_t *error_code)
{
    configured = directory_path != NULL;
    *error_code = configured ? 0 : 1;
}

void *process_register(UInt_t *error_code)
{
    algo_t *a = calloc(1, sizeof *a);
    *error_code = configured && a ? 0 : 1;
    return a;
}

void process_initialise(void *algo_data, UInt_t *error_code)
{
    ((algo_t *)algo_data)->initialised = 1;
    *error_code = 0;
}

void process_start(void *algo_data, UInt_t *error_code)
{
    algo_t *a = algo_data;
    *error_code = a->initialised ? 0 : 1;
    a->started = 1;
}

void process_stop(void *algo_data, UInt_t *error_code)
{
    ((algo_t *)algo_data)->started = 0;
    *error_code = 0;
}

void process_unload(void *algo_data, UInt_t *error_code)
{
    free(algo_data);
    *error_code = 0;
}

void process_block(void *algo_data, void *input_buffer, UInt_t size_of_input_buffer, void *output_buffer,
                   UInt_t size_of_output_buffer, UInt_t *used_size_of_output_buffer, UInt_t *error_code)
{
    algo_t *a = algo_data;
    *used_size_of_output_buffer = 0;
    if (!a->started || size_of_input_buffer > size_of_output_buffer) {
        *error_code = 1;
        return;
    }
    memcpy(output_buffer, input_buffer, size_of_input_buffer);
    *used_size_of_output_buffer = size_of_input_buffer;
    a->blocks++;
    *error_code = 0;
}
