/* no_block.c - test actor without process_block: hosts must refuse it. */
#include "tusk/actor.h"

TUSK_ACTOR_DECLARE("no_block", "lacks process_block", "");

void process_config(const char *directory_path, unsigned int *error_code);
void *process_register(unsigned int *error_code);
void process_initialise(void *algo_data, unsigned int *error_code);

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
