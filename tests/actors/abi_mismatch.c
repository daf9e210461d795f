/* abi_mismatch.c - test actor built for a future ABI: hosts must refuse it. */
#include "tusk/actor.h"

const tusk_actor_descriptor_t tusk_actor_descriptor = {99u, 0, "abi_mismatch", "built for ABI 99", ""};

void process_config(const char *directory_path, unsigned int *error_code);
void *process_register(unsigned int *error_code);
void process_initialise(void *algo_data, unsigned int *error_code);
void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code);

void process_config(const char *directory_path, unsigned int *error_code)
{
    (void)directory_path;
    *error_code = 0;
}

void *process_register(unsigned int *error_code)
{
    *error_code = 0;
    return 0;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    *error_code = 0;
}

void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code)
{
    (void)algo_data, (void)in, (void)in_size, (void)out, (void)out_size;
    *used = 0;
    *error_code = 0;
}
