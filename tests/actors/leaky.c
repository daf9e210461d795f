/* leaky.c - a consumer that leaks on purpose: each buffer it is given is
 * copied by leaky_remember into memory it never frees. For
 * tusk-emulate --memcheck, whose report must name leaky_remember (the
 * library kept loaded at exit, so that valgrind can read its symbols).
 * Test use only (tests/emulate_debug.sh). */
#include <stdlib.h>
#include <string.h>

void process_config(const char *directory_path, unsigned int *error_code);
void *process_register(unsigned int *error_code);
void process_initialise(void *algo_data, unsigned int *error_code);
void process_unload(void *algo_data, unsigned int *error_code);
void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code);

/* Where the copies go: overwritten each time, so all but the last leak,
 * and that one is dropped by process_unload. */
static void *last;

__attribute__((noinline)) static void *leaky_remember(const void *data, size_t size)
{
    void *copy = malloc(size ? size : 1);
    if (copy)
        memcpy(copy, data, size);
    return copy;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    (void)directory_path;
    *error_code = 0;
}

void *process_register(unsigned int *error_code)
{
    static int handle;
    *error_code = 0;
    return &handle;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    *error_code = 0;
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    last = NULL;
    *error_code = 0;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code)
{
    (void)algo_data;
    last = leaky_remember(input_buffer, size_of_input_buffer);
    *error_code = last ? 0 : 1;
}
