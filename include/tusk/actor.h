/* actor.h - the tusk actor ABI, version 1.
 *
 * An actor is a shared library with C-linkage hooks. They are NARVAL's hooks
 * (seed 002, sec. 2.3.1), with the same signatures, so a library written
 * for NARVAL's C interface loads unchanged. tusk adds a versioned descriptor
 * and a few optional extensions, all described below.
 *
 * Classes. A producer makes data, an intermediary (filter) transforms it, a
 * consumer drains it. `process_block` has one signature per class (below);
 * the topology says which class a library is loaded as.
 *
 * Call sequence, per instance, always from one thread:
 *
 *   process_config(dir)                   once per instance: dir is the
 *                                         instance's configuration directory
 *   process_register_dir(dir) or
 *   process_register()                    right after its process_config
 *   process_initialise                    before the first run
 *   process_start                         consumers first, producers last
 *   process_block ...                     one call per buffer
 *   process_pause / process_resume        optional, between blocks
 *   process_flush ...                     end of data: drain held-back output
 *   process_stop                          producers first, consumers last
 *   process_update(dir)                   optional, between runs (after
 *                                         process_initialise or process_stop,
 *                                         before process_start): parameters
 *                                         changed (see "Changeable
 *                                         parameters" below)
 *   process_reset + process_initialise    before a new run
 *   process_unload                        last call; free the instance
 *
 * Buffers are opaque to the host: their content is the actor's business
 * (tusk actors use libtusk-adf). A producer or filter fills at most
 * `size_of_output_buffer` bytes and sets *used_size_of_output_buffer.
 *
 * Per-instance parameters. The host writes the topology's <parameter>
 * elements to `parameters.conf` in the instance's configuration directory
 * (with `actor`, `instance` and `instances` added); read them with
 * tusk/params.h.
 */
#ifndef TUSK_ACTOR_H
#define TUSK_ACTOR_H

#include "export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TUSK_ACTOR_ABI_VERSION 1u
/* Additions within version 1 that hosts and actors may lack (a host of an
 * older revision ignores them; an actor without them loads unchanged):
 *   1  process_changeable and process_update (changeable parameters) */
#define TUSK_ACTOR_ABI_REVISION 1u

/* ---- status codes (written to *error_code) ---------------------------------
 * 0 is success; the host treats any other value as a failure that stops the
 * chain, except the two flow statuses END_OF_DATA and MORE_OUTPUT. The host
 * reports failures with the actor, the hook, the buffer number, the code's
 * meaning below and the actor's own message (process_error_message). */
enum tusk_actor_status {
    TUSK_ACTOR_OK = 0,
    TUSK_ACTOR_ERROR = 1,      /* failure, see the actor's message */
    TUSK_ACTOR_ECONFIG = 2,    /* bad configuration or parameter */
    TUSK_ACTOR_EDATA = 3,      /* malformed input data */
    TUSK_ACTOR_ERESOURCE = 4,  /* out of memory, device unavailable */
    TUSK_ACTOR_EIO = 5,        /* file or device input/output failed */
    TUSK_ACTOR_ESTATE = 6,     /* hook called in the wrong state */

    /* Producer: no more data. The output of this call (used size may be
     * > 0) is still delivered; the producer is not called again. */
    TUSK_ACTOR_END_OF_DATA = 0x100,
    /* Filter (or process_flush): the output buffer is full and more output
     * follows. The host delivers this buffer and calls again with the SAME
     * input and a fresh output buffer. */
    TUSK_ACTOR_MORE_OUTPUT = 0x101,
    /* Filter's process_block only: the output is the input buffer,
     * unchanged. The host passes the input on without copying it; the
     * output buffer is not used. For filters that inspect, count or route
     * buffers without changing them. */
    TUSK_ACTOR_FORWARD = 0x102
};

/* ---- descriptor -------------------------------------------------------------
 * A tusk actor exports `tusk_actor_descriptor`. A host refuses a library
 * whose abi_version differs from its own. A library without it is taken as
 * a plain NARVAL library (tusk extensions still resolved if present). */
typedef struct tusk_actor_descriptor {
    uint32_t abi_version;   /* TUSK_ACTOR_ABI_VERSION when built */
    uint32_t reserved;
    const char *name;       /* e.g. "passthrough" */
    const char *summary;    /* one line */
    const char *parameters; /* "key: meaning (default)" lines, for --describe */
} tusk_actor_descriptor_t;

#define TUSK_ACTOR_DESCRIPTOR_SYMBOL "tusk_actor_descriptor"

/* Define the descriptor in an actor library (exported, whatever the
 * library's default visibility). */
#define TUSK_ACTOR_DECLARE(name_, summary_, parameters_)                         \
    extern TUSK_API const tusk_actor_descriptor_t tusk_actor_descriptor;         \
    TUSK_API const tusk_actor_descriptor_t tusk_actor_descriptor = {             \
        TUSK_ACTOR_ABI_VERSION, 0, (name_), (summary_), (parameters_)}

/* Exports. The host finds the hooks below by name (dlsym), so an actor
 * library must export them, and need export nothing else. An actor
 * compiled with -fvisibility=hidden marks each hook's definition:
 *   TUSK_ACTOR_EXPORT void process_config(const char *dir, unsigned int *error_code) { ... }
 * (tusk's own actors are compiled with default visibility and linked with
 * libtool's -export-symbols-regex '^(process_.*|tusk_actor_descriptor)$',
 * which exports exactly the hooks and the descriptor). */
#define TUSK_ACTOR_EXPORT TUSK_API

/* ---- NARVAL hooks (required: config, register, initialise, block) ---------- */
typedef void (*tusk_process_config_fn)(const char *directory_path, unsigned int *error_code);
typedef void *(*tusk_process_register_fn)(unsigned int *error_code);
typedef void (*tusk_process_hook_fn)(void *algo_data, unsigned int *error_code);

/* Filter (intermediary). */
typedef void (*tusk_process_block_filter_fn)(void *algo_data, void *input_buffer,
                                             unsigned int size_of_input_buffer, void *output_buffer,
                                             unsigned int size_of_output_buffer,
                                             unsigned int *used_size_of_output_buffer,
                                             unsigned int *error_code);
/* Producer: no input. */
typedef void (*tusk_process_block_producer_fn)(void *algo_data, void *output_buffer,
                                               unsigned int size_of_output_buffer,
                                               unsigned int *used_size_of_output_buffer,
                                               unsigned int *error_code);
/* Consumer: no output. */
typedef void (*tusk_process_block_consumer_fn)(void *algo_data, void *input_buffer,
                                               unsigned int size_of_input_buffer, unsigned int *error_code);

/* ---- tusk extensions (all optional) ------------------------------------------ */

/* Preferred to process_register when exported: gets the instance's
 * configuration directory (no state kept between process_config and
 * register) and a buffer for an error message. */
typedef void *(*tusk_process_register_dir_fn)(const char *directory_path, char *message,
                                              unsigned int message_size, unsigned int *error_code);

/* The actor's message for the last failure of this instance (algo_data
 * is NULL when process_config failed: give the library's message). Never
 * called after process_unload, which has freed the instance. */
typedef const char *(*tusk_process_error_message_fn)(void *algo_data);

/* Filters with several inputs (fan-in): `input` is the position of the
 * source in the topology's <data_source> list. Used instead of
 * process_block when exported. */
typedef void (*tusk_process_block_input_fn)(void *algo_data, unsigned int input, void *input_buffer,
                                            unsigned int size_of_input_buffer, void *output_buffer,
                                            unsigned int size_of_output_buffer,
                                            unsigned int *used_size_of_output_buffer,
                                            unsigned int *error_code);

/* End of data, for filters that hold output back (event builders, batching
 * GPU filters): write what remains; return TUSK_ACTOR_MORE_OUTPUT while more
 * follows. Called after every upstream actor has finished. */
typedef void (*tusk_process_flush_fn)(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                                      unsigned int *used_size_of_output_buffer, unsigned int *error_code);

/* ---- changeable parameters (ABI revision 1) ---------------------------------
 * A controller that stays up (tusk-run --serve) runs run after run in the
 * same process, the library loaded and process_config, process_register
 * and process_initialise called once. An actor whose parameters may
 * change between runs says which, and takes the new values, with two
 * hooks, both required for either to count:
 *
 *   const char *process_changeable(void)
 *       the keys of parameters.conf that may change between runs,
 *       separated by spaces ("threshold gain"); static text of the library.
 *       A key not listed is refused by the host, naming actor and key.
 *   void process_update(void *algo_data, const char *directory_path,
 *                       char *message, unsigned int message_size,
 *                       unsigned int *error_code)
 *       called between runs (never during one) after the host rewrote
 *       directory_path/parameters.conf with the new values (the other
 *       keys unchanged): read it again and apply what changed. A failure
 *       (TUSK_ACTOR_ECONFIG and a message, e.g. a value out of range)
 *       leaves the instance as it was: the host puts the old values back
 *       into parameters.conf and reports the message.
 *
 * An actor without them has no changeable parameters: changing one needs
 * a new configuration (tusk-run's one-shot mode, or --quit and --serve). */
typedef const char *(*tusk_process_changeable_fn)(void);
typedef void (*tusk_process_update_fn)(void *algo_data, const char *directory_path, char *message,
                                       unsigned int message_size, unsigned int *error_code);

/* Meaning of a status code ("end of data", "bad configuration", ...). */
TUSK_API const char *tusk_actor_status_string(unsigned int code);

#ifdef __cplusplus
}
#endif
#endif
