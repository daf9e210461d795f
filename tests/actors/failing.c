/* failing.c - a filter whose hooks fail on command, to test how hosts
 * report failures. DIR/parameters.conf holds `fail = HOOK` (config,
 * register, initialise, start, block, flush, stop, unload) and optionally
 * `at = N` (the block number for block) and `misbehave = overrun|empty_more
 * |end` (block: report more bytes than the buffer holds, ask for more
 * output having written nothing, or return END_OF_DATA as a filter).
 * `signal = yes` raises SIGUSR1 inside every hook (what the host's
 * crash note says there is seen by the test's handler).
 * Deliberately free of libtusk. Test use only. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/actor.h"

TUSK_ACTOR_DECLARE("failing", "fails on command (tests)", "fail: hook to fail in\nat: block number\n");

typedef struct inst {
    char fail[64];
    char misbehave[64];
    unsigned long at, blocks;
    char message[128];
    int signal;
} inst_t;

void process_config(const char *directory_path, unsigned int *error_code);
void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code);
void *process_register(unsigned int *error_code);
void process_initialise(void *algo_data, unsigned int *error_code);
void process_start(void *algo_data, unsigned int *error_code);
void process_stop(void *algo_data, unsigned int *error_code);
void process_unload(void *algo_data, unsigned int *error_code);
void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code);
void process_flush(void *algo_data, void *out, unsigned int out_size, unsigned int *used,
                   unsigned int *error_code);
const char *process_error_message(void *algo_data);

/* Tiny reader for the two keys we need (no libtusk on purpose). */
static void read_conf(const char *dir, inst_t *in)
{
    char path[1024], line[256];
    snprintf(path, sizeof path, "%s/parameters.conf", dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    while (fgets(line, sizeof line, fp)) {
        char key[64], val[64];
        if (sscanf(line, " %63[a-z_] = %63s", key, val) != 2)
            continue;
        if (strcmp(key, "fail") == 0)
            snprintf(in->fail, sizeof in->fail, "%s", val);
        else if (strcmp(key, "misbehave") == 0)
            snprintf(in->misbehave, sizeof in->misbehave, "%s", val);
        else if (strcmp(key, "at") == 0)
            in->at = strtoul(val, NULL, 10);
        else if (strcmp(key, "signal") == 0)
            in->signal = strcmp(val, "yes") == 0;
    }
    fclose(fp);
}

static void poke(const inst_t *in)
{
    if (in && in->signal)
        raise(SIGUSR1);
}

static int failing_in(inst_t *in, const char *hook, unsigned int *error_code)
{
    if (strcmp(in->fail, hook) != 0)
        return 0;
    snprintf(in->message, sizeof in->message, "failing: %s refused as configured", hook);
    *error_code = TUSK_ACTOR_ERROR;
    return 1;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    inst_t probe = {0};
    read_conf(directory_path, &probe);
    poke(&probe);
    /* NULL algo_data: process_error_message then gives this text. */
    *error_code = strcmp(probe.fail, "config") == 0 ? TUSK_ACTOR_ECONFIG : 0;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    inst_t *in = calloc(1, sizeof *in);
    if (!in) {
        *error_code = TUSK_ACTOR_ERESOURCE;
        return NULL;
    }
    read_conf(directory_path, in);
    poke(in);
    if (strcmp(in->fail, "register") == 0) {
        snprintf(message, message_size, "failing: register refused as configured");
        *error_code = TUSK_ACTOR_ECONFIG;
        free(in);
        return NULL;
    }
    *error_code = 0;
    return in;
}

void *process_register(unsigned int *error_code)
{
    *error_code = TUSK_ACTOR_ECONFIG; /* tusk hosts use process_register_dir */
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    *error_code = 0;
    poke(algo_data);
    failing_in(algo_data, "initialise", error_code);
}

void process_start(void *algo_data, unsigned int *error_code)
{
    *error_code = 0;
    poke(algo_data);
    failing_in(algo_data, "start", error_code);
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    *error_code = 0;
    poke(algo_data);
    failing_in(algo_data, "stop", error_code);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    *error_code = 0;
    poke(algo_data);
    failing_in(algo_data, "unload", error_code);
    free(algo_data);
}

void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code)
{
    inst_t *st = algo_data;
    st->blocks++;
    *used = 0;
    *error_code = 0;
    poke(st);
    if (st->blocks == (st->at ? st->at : 1)) {
        if (failing_in(st, "block", error_code))
            return;
        if (strcmp(st->misbehave, "overrun") == 0) {
            *used = out_size + 1;
            return;
        }
        if (strcmp(st->misbehave, "empty_more") == 0) {
            *error_code = TUSK_ACTOR_MORE_OUTPUT;
            return;
        }
        if (strcmp(st->misbehave, "end") == 0) {
            *error_code = TUSK_ACTOR_END_OF_DATA;
            return;
        }
    }
    unsigned int n = in_size < out_size ? in_size : out_size;
    memcpy(out, in, n);
    *used = n;
}

void process_flush(void *algo_data, void *out, unsigned int out_size, unsigned int *used,
                   unsigned int *error_code)
{
    (void)out, (void)out_size;
    *used = 0;
    *error_code = 0;
    poke(algo_data);
    failing_in(algo_data, "flush", error_code);
}

const char *process_error_message(void *algo_data)
{
    if (!algo_data)
        return "failing: config refused as configured";
    return ((inst_t *)algo_data)->message;
}
