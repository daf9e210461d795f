/* actor_host.h - loading actor libraries and calling their hooks (the host
 * side of actor.h), shared by tusk-emulate and tusk-actor.
 *
 * tusk_actor_lib_t is one loaded library. tusk_actor_t is one instance:
 * creating it calls process_config and process_register(_dir); the other
 * hooks are calls on it. Every failure comes back as TUSK_EACTOR with a
 * message naming the actor, the instance, the hook, the buffer number,
 * the status's meaning and the actor's own message.
 */
#ifndef TUSK_ACTOR_HOST_H
#define TUSK_ACTOR_HOST_H

#include "export.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actor.h"
#include "error.h"
#include "topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tusk_actor_lib tusk_actor_lib_t;

/* dlopen `path` as an actor of `actor_class`: checks the descriptor's ABI
 * version and that the required hooks exist. TUSK_ELOAD (with dlerror()),
 * TUSK_EABI. */
TUSK_API int tusk_actor_lib_open(tusk_actor_lib_t **lib, const char *path, tusk_actor_class_t actor_class,
                                 tusk_error_t *err);

/* Close the library (kept loaded when TUSK_NO_DLCLOSE is set in the
 * environment, so valgrind can still name its functions). */
TUSK_API void tusk_actor_lib_close(tusk_actor_lib_t **lib);

/* NULL for a plain NARVAL library. */
TUSK_API const tusk_actor_descriptor_t *tusk_actor_lib_descriptor(const tusk_actor_lib_t *lib);
TUSK_API const char *tusk_actor_lib_path(const tusk_actor_lib_t *lib);

/* Write DIR/parameters.conf for instance `index` of `spec` (creating DIR). */
TUSK_API int tusk_actor_write_config(const char *dir, const tusk_actor_spec_t *spec, unsigned index, tusk_error_t *err);

/* The configuration folder instance `index` of `spec` is given (what
 * process_config and process_register_dir get), into *dir: the actor's
 * own folder when the topology names one (spec->config_dir, as NARVAL
 * gives each actor its own: nothing is written there, *made is false),
 * else `host_dir`, made by the host with parameters.conf
 * (tusk_actor_write_config; *made is true: the host removes it after). */
TUSK_API int tusk_actor_config_folder(const tusk_actor_spec_t *spec, unsigned index, const char *host_dir,
                                      const char **dir, bool *made, tusk_error_t *err);

/* ---- what the instances are doing, for a host's crash report -----------------
 * When an actor crashes the process (SIGSEGV, SIGBUS, SIGFPE, SIGABRT),
 * the host's signal handler can say which actor, instance, hook and
 * buffer it was in: the host gives each library a note (its own memory,
 * alive while the library is open; one note may serve every library of a
 * process whose hooks run on one thread). Before every hook call of the
 * library's instances the note is filled in, after it marked idle. The
 * handler writes it out with tusk_actor_note_format, which is
 * async-signal-safe. */
typedef struct tusk_actor_note {
    volatile sig_atomic_t active; /* 1 while a hook runs */
    const char *label;            /* the instance: "psa[2]" */
    const char *library;          /* the library's path */
    const char *hook;             /* "process_block", "process_start", ... */
    uint64_t buffer;              /* process_block: the 1-based buffer number of the instance; else 0 */
} tusk_actor_note_t;

/* Fill `note` from now on (NULL: no note). */
TUSK_API void tusk_actor_lib_set_note(tusk_actor_lib_t *lib, tusk_actor_note_t *note);

/* "actor psa[2] (library /x/psa.so), hook process_block, buffer 17"
 * (without the buffer for other hooks), or "no actor hook was running"
 * when the note is idle, into buf (at most size - 1 bytes and a NUL);
 * returns the length. Async-signal-safe: for signal handlers. */
TUSK_API size_t tusk_actor_note_format(const tusk_actor_note_t *note, char *buf, size_t size);

typedef struct tusk_actor tusk_actor_t;

/* Create instance `index` of actor `name`: process_config(config_dir) then
 * process_register_dir(config_dir) or process_register(). */
TUSK_API int tusk_actor_new(tusk_actor_t **actor, tusk_actor_lib_t *lib, const char *name, unsigned index,
                            const char *config_dir, tusk_error_t *err);

/* process_unload (if exported) and free. Reports an unload failure. */
TUSK_API int tusk_actor_destroy(tusk_actor_t **actor, tusk_error_t *err);

/* "psa[2]" */
TUSK_API const char *tusk_actor_label(const tusk_actor_t *actor);

/* Lifecycle hooks; the optional ones are no-ops when not exported. */
TUSK_API int tusk_actor_initialise(tusk_actor_t *actor, tusk_error_t *err);
TUSK_API int tusk_actor_start(tusk_actor_t *actor, tusk_error_t *err);
TUSK_API int tusk_actor_stop(tusk_actor_t *actor, tusk_error_t *err);
TUSK_API int tusk_actor_pause(tusk_actor_t *actor, tusk_error_t *err);
TUSK_API int tusk_actor_resume(tusk_actor_t *actor, tusk_error_t *err);
TUSK_API int tusk_actor_reset(tusk_actor_t *actor, tusk_error_t *err);

/* Changeable parameters (actor.h, ABI revision 1): the keys the library's
 * process_changeable lists ("" when it lacks process_changeable or
 * process_update: none), and whether `key` is one of them. */
TUSK_API const char *tusk_actor_lib_changeable(const tusk_actor_lib_t *lib);
TUSK_API bool tusk_actor_lib_is_changeable(const tusk_actor_lib_t *lib, const char *key);

/* process_update(config_dir): the instance's parameters.conf was rewritten
 * between runs. TUSK_EACTOR with the actor's message on a failure;
 * TUSK_EINVAL when the library has no process_update. */
TUSK_API int tusk_actor_update(tusk_actor_t *actor, const char *config_dir, tusk_error_t *err);

/* Flow outcome of one process_block / process_flush call. */
typedef enum tusk_flow {
    TUSK_FLOW_DONE = 0,   /* the input is consumed */
    TUSK_FLOW_MORE = 1,   /* output full: call again with the same input */
    TUSK_FLOW_END = 2,    /* producer: no more data */
    TUSK_FLOW_FORWARD = 3 /* filter: pass the input on unchanged (nothing written) */
} tusk_flow_t;

/* One producer call. */
TUSK_API int tusk_actor_produce(tusk_actor_t *actor, void *out, uint32_t out_size, uint32_t *used, tusk_flow_t *flow,
                                tusk_error_t *err);
/* One filter call on a buffer from source number `input`. */
TUSK_API int tusk_actor_filter(tusk_actor_t *actor, unsigned input, void *in, uint32_t in_size, void *out,
                               uint32_t out_size, uint32_t *used, tusk_flow_t *flow, tusk_error_t *err);
/* One consumer call. */
TUSK_API int tusk_actor_consume(tusk_actor_t *actor, void *in, uint32_t in_size, tusk_error_t *err);
/* One process_flush call (nothing and TUSK_FLOW_DONE if not exported). */
TUSK_API int tusk_actor_flush(tusk_actor_t *actor, void *out, uint32_t out_size, uint32_t *used, tusk_flow_t *flow,
                              tusk_error_t *err);

/* Buffers given to / produced by process_block so far. */
TUSK_API uint64_t tusk_actor_blocks(const tusk_actor_t *actor);

#ifdef __cplusplus
}
#endif
#endif
