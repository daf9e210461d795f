/* fault.c - filter: a passthrough that misbehaves on purpose, for testing
 * how hosts and the distributed runtime handle failing actors.
 *
 * Parameters:
 *   action         what to do (required):
 *                    error    fail with TUSK_ACTOR_ERROR, message
 *                             "fault injected: error at block N" (or
 *                             "... error in process_start", ...)
 *                    crash    raise(SIGSEGV), its default action restored first
 *                    segv     a write through a null pointer: a real
 *                             SIGSEGV, which any handler of the host sees
 *                             (tusk-emulate's crash report)
 *                    stall    sleep stall_seconds, then carry on (a hook call
 *                             that takes that long: the process stays alive)
 *                    freeze   raise(SIGSTOP): the whole process stops, as a
 *                             hung host would (it falls silent)
 *                    corrupt  pass the data on with the class byte (byte 7)
 *                             of the first frame's key set to 0x00
 *                    exit     _exit(3)
 *                    kill     raise(SIGKILL): what `kill -9` does, at a
 *                             known point of the run
 *                    interrupt raise(SIGINT), then carry on as a
 *                             passthrough: Ctrl-C at a known point of the
 *                             run
 *   hook           block | initialise | start | stop (block): where
 *   at_block       1-based process_block call at which to act (1); only
 *                  with hook=block. Calls are counted as the host counts
 *                  buffers: a repeated call after MORE_OUTPUT counts too.
 *   once           a file name: misbehave only if the file does not exist
 *                  yet, and create it (atomically) when doing so. Over
 *                  every instance and every restart of an instance, only
 *                  the first to get there misbehaves: a restarted instance
 *                  then runs normally (none).
 *   only_instance  only this instance (0-based) misbehaves (all). Not
 *                  "instance": the host sets that key to each instance's
 *                  own number in parameters.conf.
 *   stall_seconds  how long a stall lasts, fractions allowed (3600)
 *   hold           true: hold every block back (no output) and give it all
 *                  out at the flush, as an event builder with an endless
 *                  window does (false). The misbehaviour still happens
 *                  at its block.
 *
 * Every other block is copied as by passthrough. corrupt needs hook=block;
 * if block N yields no output, the first later output is corrupted.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "base/grow.h"

TUSK_ACTOR_DECLARE("fault",
                   "a passthrough that fails, crashes, stalls, freezes, corrupts, exits, is killed or interrupted on "
                   "purpose",
                   "action: error | crash | segv | stall | freeze | corrupt | exit | kill | interrupt: what to do "
                   "(required)\n"
                   "hook: block | initialise | start | stop: the hook in which to act (block)\n"
                   "at_block: 1-based process_block call at which to act, with hook=block (1)\n"
                   "only_instance: only this instance (0-based) misbehaves (all instances)\n"
                   "once: a marker file: only the first to create it misbehaves, across restarts (none)\n"
                   "stall_seconds: how long a stall lasts, in seconds (3600)\n"
                   "hold: true: no output until the flush, which gives out everything (false)\n");

enum action { ACT_ERROR, ACT_CRASH, ACT_STALL, ACT_CORRUPT, ACT_EXIT, ACT_KILL, ACT_FREEZE, ACT_SEGV, ACT_INTERRUPT };
enum hook { HOOK_BLOCK, HOOK_INITIALISE, HOOK_START, HOOK_STOP };

static const char *const action_names[] = {"error", "crash", "stall", "corrupt", "exit", "kill", "freeze", "segv",
                                           "interrupt", NULL};
static const char *const hook_names[] = {"block", "initialise", "start", "stop", NULL};
static const char *const hook_functions[] = {"process_block", "process_initialise", "process_start",
                                             "process_stop"};

typedef struct fault {
    ak_base_t base;
    ak_copier_t copier;
    enum action action;
    enum hook hook;
    uint64_t at_block;
    double stall_seconds;
    bool armed;            /* this instance misbehaves */
    char *once;            /* marker file (NULL: none) */
    uint64_t blocks;       /* process_block calls so far */
    bool corrupt_pending;  /* corrupt the next output that has a frame */
    bool hold;             /* hold everything until the flush */
    uint8_t *held;         /* what was held back */
    size_t n_held, cap_held;
} fault_t;

typedef struct settings {
    const char *action_text, *once;
    int action, hook;
    uint64_t at_block, only_instance;
    double stall_seconds;
    bool hold;
} settings_t;

static const ak_param_t params[] = {
    AK_REQUIRED("action", settings_t, action_text,
                "error, crash, segv, stall, freeze, corrupt, exit, kill or interrupt"),
    AK_CHOICE("action", settings_t, action, action_names, -1),
    AK_CHOICE("hook", settings_t, hook, hook_names, HOOK_BLOCK),
    AK_U64("at_block", settings_t, at_block, 1, 1, UINT64_MAX),
    AK_DOUBLE("stall_seconds", settings_t, stall_seconds, 3600, 0, 1e9),
    AK_U64("only_instance", settings_t, only_instance, 0, 0, UINT32_MAX),
    AK_BOOL("hold", settings_t, hold, false),
    AK_STRING("once", settings_t, once, NULL),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(fault_t)

static void free_fault(fault_t *f)
{
    if (!f)
        return;
    ak_copier_free(&f->copier);
    free(f->once);
    free(f->held);
    free(f);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    fault_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "fault", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !ak_copier_init(&f->copier)) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    uint64_t only = set.only_instance;
    f->at_block = set.at_block;
    f->stall_seconds = set.stall_seconds;
    f->hold = set.hold;
    f->action = (enum action)set.action;
    f->hook = (enum hook)set.hook;
    if (f->action == ACT_CORRUPT && f->hook != HOOK_BLOCK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "parameter 'hook': action 'corrupt' works on data, so it needs "
                       "hook 'block', not '%s'", hook_names[f->hook]);
        goto fail;
    }
    f->armed = true;
    if (set.once && !(f->once = strdup(set.once))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (tusk_params_get(cfg.params, "only_instance")) {
        if (only >= f->base.instances) {
            ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG,
                           "parameter 'only_instance': %llu, but the actor has %u instances (0 to %u)",
                           (unsigned long long)only, f->base.instances, f->base.instances - 1);
            goto fail;
        }
        f->armed = only == f->base.instance;
    }
    ak_config_close(&cfg);
    return f;
fail:
    free_fault(f);
    ak_config_close(&cfg);
    return NULL;
}

static void sleep_seconds(double seconds)
{
    struct timespec t;
    t.tv_sec = (time_t)seconds;
    t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
    if (t.tv_nsec < 0 || t.tv_nsec > 999999999L)
        t.tv_nsec = 0;
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        continue;
}

/* The address segv writes to: zero, read at run time so that the
 * compiler cannot see a null pointer (and make the write a trap). */
static volatile uintptr_t segv_address;

/* Misbehave in `hook` (corrupt is handled by process_block). */
static void act(fault_t *f, enum hook hook, unsigned *error_code)
{
    switch (f->action) {
    case ACT_ERROR:
        if (hook == HOOK_BLOCK)
            ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "fault injected: error at block %llu",
                    (unsigned long long)f->blocks);
        else
            ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "fault injected: error in %s", hook_functions[hook]);
        break;
    case ACT_CRASH:
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        /* Only if SIGSEGV is blocked. */
        ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "fault injected: raise(SIGSEGV) in %s returned",
                hook_functions[hook]);
        break;
    case ACT_STALL: sleep_seconds(f->stall_seconds); break;
    case ACT_EXIT: _exit(3);
    case ACT_KILL:
        raise(SIGKILL);
        break;
    case ACT_FREEZE:
        raise(SIGSTOP); /* until a SIGCONT or a SIGKILL */
        break;
    case ACT_SEGV:
        *(volatile char *)segv_address = 1;
        ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "fault injected: the write to address 0 in %s went through",
                hook_functions[hook]);
        break;
    case ACT_INTERRUPT: raise(SIGINT); break;
    case ACT_CORRUPT: break;
    }
}

/* With `once`: whether this is the first to get here (it creates the
 * marker; O_EXCL makes that atomic across processes). */
static bool first_time(const fault_t *f)
{
    if (!f->once)
        return true;
    int fd = open(f->once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

static void hook_point(void *algo_data, enum hook hook, unsigned *error_code)
{
    fault_t *f = algo_data;
    ak_ok(error_code);
    if (f->armed && f->hook == hook && first_time(f))
        act(f, hook, error_code);
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    fault_t *f = algo_data;
    ak_copier_reset(&f->copier);
    f->blocks = 0;
    f->corrupt_pending = false;
    f->n_held = 0;
    hook_point(algo_data, HOOK_INITIALISE, error_code);
}

void process_start(void *algo_data, unsigned int *error_code)
{
    hook_point(algo_data, HOOK_START, error_code);
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    hook_point(algo_data, HOOK_STOP, error_code);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    fault_t *f = algo_data;
    ak_ok(error_code);
    ak_copier_reset(&f->copier);
    f->n_held = 0;
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_fault(algo_data);
}

/* corrupt: the class byte of the first frame's key of the next output that
 * has one. */
static void corrupt_if_pending(fault_t *f, void *out, unsigned used, unsigned status)
{
    if ((status == TUSK_ACTOR_OK || status == TUSK_ACTOR_MORE_OUTPUT) && f->corrupt_pending && used >= ADF_KEY_SIZE) {
        ((uint8_t *)out)[7] = 0x00;
        f->corrupt_pending = false;
    }
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    fault_t *f = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    f->blocks++;
    if (f->armed && f->hook == HOOK_BLOCK && f->blocks == f->at_block && first_time(f)) {
        if (f->action == ACT_CORRUPT)
            f->corrupt_pending = true;
        else
            act(f, HOOK_BLOCK, error_code);
        if (*error_code != TUSK_ACTOR_OK)
            return;
    }
    if (f->hold) {
        /* Whole frames only, kept for the flush. */
        if ((*error_code = ak_check_frames(&f->copier, &f->base, input_buffer, size_of_input_buffer)) !=
            TUSK_ACTOR_OK)
            return;
        if (tusk_grow(&f->held, &f->cap_held, f->n_held + size_of_input_buffer, 1) != 0) {
            ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory holding %zu bytes",
                    f->n_held + size_of_input_buffer);
            return;
        }
        memcpy(f->held + f->n_held, input_buffer, size_of_input_buffer);
        f->n_held += size_of_input_buffer;
        return;
    }
    *error_code = ak_copy_frames(&f->copier, &f->base, input_buffer, size_of_input_buffer, output_buffer,
                                 size_of_output_buffer, used_size_of_output_buffer);
    corrupt_if_pending(f, output_buffer, *used_size_of_output_buffer, *error_code);
}

/* With hold: everything held goes out now, in as many buffers as it takes. */
void process_flush(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    fault_t *f = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (!f->hold || f->n_held == 0)
        return;
    if (f->n_held > UINT32_MAX) {
        ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "more than 4 GiB held back");
        return;
    }
    *error_code = ak_copy_frames(&f->copier, &f->base, f->held, (unsigned)f->n_held, output_buffer,
                                 size_of_output_buffer, used_size_of_output_buffer);
    corrupt_if_pending(f, output_buffer, *used_size_of_output_buffer, *error_code);
    if (*error_code == TUSK_ACTOR_OK)
        f->n_held = 0;
}
