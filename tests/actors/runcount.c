/* runcount.c - a filter that passes its input on unchanged and says, at
 * each process_stop, how often its hooks were called in this process, for
 * the tests of a controller that stays up (tests/distributed_serve.sh):
 * the library is loaded once, process_config and process_initialise run
 * once, and a changeable parameter takes effect in the next run. Test use
 * only.
 *
 * Parameters:
 *   log        file to append one line to at every process_stop:
 *              "stop instance=K tag=T configs=C inits=I updates=U pid=P blocks=B"
 *   tag        any text; changeable between runs (process_changeable,
 *              process_update); the value "bad" is refused by process_update
 *   hold_file  with hold_at: at the hold_at-th process_block of a run, wait
 *   hold_at    until hold_file exists (a run kept going until the test lets
 *              it go: waits for a state, never for a time)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tusk/actor.h"
#include "tusk/params.h"

TUSK_ACTOR_DECLARE("runcount", "passes input on; counts its hook calls per process (tests)",
                   "log: file for a line per process_stop\ntag: text, changeable between runs\n"
                   "hold_file, hold_at: wait at that block until the file exists");

typedef struct rc {
    char log[1024], tag[256], hold_file[1024];
    unsigned long long hold_at, blocks;
    unsigned inits, updates, instance;
} rc_t;

static unsigned configs; /* process_config calls in this process */

void process_config(const char *directory_path, unsigned int *error_code);
void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code);
void process_initialise(void *algo_data, unsigned int *error_code);
void process_start(void *algo_data, unsigned int *error_code);
void process_stop(void *algo_data, unsigned int *error_code);
void process_unload(void *algo_data, unsigned int *error_code);
void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code);
const char *process_changeable(void);
void process_update(void *algo_data, const char *directory_path, char *message, unsigned int message_size,
                    unsigned int *error_code);

void process_config(const char *directory_path, unsigned int *error_code)
{
    (void)directory_path;
    configs++;
    *error_code = 0;
}

/* Read parameters.conf of `dir` into r (tag, log, hold_*). */
static int load(rc_t *r, const char *dir, char *message, unsigned int message_size)
{
    tusk_params_t *p = NULL;
    tusk_error_t err;
    if (tusk_params_load(&p, dir, &err) != TUSK_OK) {
        snprintf(message, message_size, "%s", err.message);
        return TUSK_ACTOR_ECONFIG;
    }
    const char *tag = tusk_params_string(p, "tag", "");
    if (strcmp(tag, "bad") == 0) {
        snprintf(message, message_size, "tag 'bad' refused");
        tusk_params_destroy(&p);
        return TUSK_ACTOR_ECONFIG;
    }
    snprintf(r->tag, sizeof r->tag, "%s", tag);
    snprintf(r->log, sizeof r->log, "%s", tusk_params_string(p, "log", ""));
    snprintf(r->hold_file, sizeof r->hold_file, "%s", tusk_params_string(p, "hold_file", ""));
    r->hold_at = strtoull(tusk_params_string(p, "hold_at", "0"), NULL, 10);
    r->instance = (unsigned)strtoul(tusk_params_string(p, "instance", "0"), NULL, 10);
    tusk_params_destroy(&p);
    return 0;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    rc_t *r = calloc(1, sizeof *r);
    if (!r) {
        *error_code = TUSK_ACTOR_ERESOURCE;
        return NULL;
    }
    *error_code = (unsigned)load(r, directory_path, message, message_size);
    if (*error_code) {
        free(r);
        return NULL;
    }
    return r;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    ((rc_t *)algo_data)->inits++;
    *error_code = 0;
}

void process_start(void *algo_data, unsigned int *error_code)
{
    ((rc_t *)algo_data)->blocks = 0;
    *error_code = 0;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    rc_t *r = algo_data;
    *error_code = 0;
    if (!r->log[0])
        return;
    char line[1600];
    int n = snprintf(line, sizeof line, "stop instance=%u tag=%s configs=%u inits=%u updates=%u pid=%ld blocks=%llu\n",
                     r->instance, r->tag, configs, r->inits, r->updates, (long)getpid(), r->blocks);
    int fd = open(r->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0 || n < 0 || write(fd, line, (size_t)n) != n)
        *error_code = TUSK_ACTOR_EIO;
    if (fd >= 0)
        close(fd);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    free(algo_data);
    *error_code = 0;
}

void process_block(void *algo_data, void *in, unsigned int in_size, void *out, unsigned int out_size,
                   unsigned int *used, unsigned int *error_code)
{
    (void)in, (void)in_size, (void)out, (void)out_size;
    rc_t *r = algo_data;
    *used = 0;
    if (++r->blocks == r->hold_at && r->hold_file[0])
        while (access(r->hold_file, F_OK) != 0) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    *error_code = TUSK_ACTOR_FORWARD;
}

const char *process_changeable(void)
{
    return "tag";
}

void process_update(void *algo_data, const char *directory_path, char *message, unsigned int message_size,
                    unsigned int *error_code)
{
    rc_t *r = algo_data, next = *r;
    *error_code = (unsigned)load(&next, directory_path, message, message_size);
    if (*error_code)
        return; /* as it was */
    next.updates = r->updates + 1;
    *r = next;
}
