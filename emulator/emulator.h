/* emulator.h - run a whole topology serially in one process.
 *
 * NARVAL's emulator (seed 002, sec. 2.3.2): every actor library is loaded
 * into this process and the chain runs one buffer at a time: a producer
 * fills a buffer, each filter transforms it in dependency order, consumers
 * drain it, then the next producer buffer. Single-threaded, so gdb can
 * follow a buffer through every actor and valgrind sees all of them.
 */
#ifndef TUSK_EMULATOR_H
#define TUSK_EMULATOR_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime/driver.h"
#include "tusk/actor_host.h"
#include "tusk/error.h"
#include "tusk/topology.h"

typedef struct tusk_emulator_options {
    const char *actor_path;   /* library search path (NULL: $TUSK_ACTOR_PATH, installed folder) */
    uint64_t max_buffers;     /* stop producers after this many buffers (0: no limit) */
    uint64_t max_frames;      /* ... or after the buffer reaching this many frames (0: no limit) */
    const char *const *dumps; /* "SRC:DST" links whose buffers go to DUMP_DIR/SRC-DST.adf */
    unsigned n_dumps;
    const char *dump_dir;     /* NULL: current folder */
    const char *work_dir;     /* keep instance configuration folders here (NULL: temporary); an
                                 actor with its own <config_dir> gets that one instead */
    bool verbose;             /* progress with rates on `log` */
    FILE *log;                /* progress and warnings (NULL: stderr) */
    /* When *stop becomes nonzero (a signal handler sets it), the producers
     * stop before their next buffer, as at a limit: what is in flight
     * still travels the chain, filters flush, actors stop, and the run
     * returns as at its end. The caller, who set it, knows why. */
    const volatile sig_atomic_t *stop;
    /* Filled in before every hook call of every instance, for the caller's
     * crash handler (tusk/actor_host.h; NULL: none). */
    tusk_actor_note_t *note;
} tusk_emulator_options_t;

typedef struct tusk_emulator tusk_emulator_t;

/* Load every library of the (resolved) topology and create every instance
 * (process_config, process_register). */
int tusk_emulator_new(tusk_emulator_t **emulator, const tusk_topology_t *topology,
                      const tusk_emulator_options_t *options, tusk_error_t *err);

/* Initialise, start, run until every producer reached its end (or a limit),
 * flush, stop. The first failure stops the chain (the others are still
 * stopped) and is returned. */
int tusk_emulator_run(tusk_emulator_t *emulator, tusk_error_t *err);

/* The folder of the instances' configuration folders (--work-dir, or the
 * temporary one). */
const char *tusk_emulator_work_dir(const tusk_emulator_t *emulator);

/* Per-actor table: instances, calls, buffers, frames, bytes, time. */
void tusk_emulator_print_summary(const tusk_emulator_t *emulator, FILE *out);

/* Totals for tests: what the consumers received. */
typedef struct tusk_emulator_totals {
    uint64_t producer_buffers, producer_frames, producer_bytes;
    uint64_t consumer_buffers, consumer_frames, consumer_bytes;
} tusk_emulator_totals_t;
tusk_emulator_totals_t tusk_emulator_totals(const tusk_emulator_t *emulator);

/* The counts of actor `name` (calls, buffers, frames, bytes in and out,
 * time in its hooks: its driver's); NULL when the topology has no such
 * actor. */
const tusk_driver_stats_t *tusk_emulator_actor_stats(const tusk_emulator_t *emulator, const char *name);

/* Unload every instance, close the libraries, remove the temporary work
 * folder (also after tusk_emulator_new or tusk_emulator_run failed). */
int tusk_emulator_destroy(tusk_emulator_t **emulator, tusk_error_t *err);

/* ---- one stage, offline ------------------------------------------------------
 * One actor between files: file_producer(`input`) -> STAGE ->
 * file_writer(`output`), or null_consumer when `output` is NULL (a
 * consumer stage has no output). What tusk-emulate --only replays, and
 * what the offline commands (tusk-psa run) run. */
typedef struct tusk_emulator_stage {
    const char *name;              /* its name in the topology, so in messages ("psa" -> "psa[0]") */
    const char *library;           /* <binary_code>: a library name or path */
    tusk_actor_class_t actor_class; /* TUSK_FILTER or TUSK_CONSUMER */
    unsigned instances;            /* 0: one */
    uint32_t in_size;              /* bytes of the input buffers (the file_producer's <size>) */
    uint32_t out_size;             /* a filter's output buffers (0: the topology's default) */
    unsigned n_params;             /* its <parameter>s */
    const char *const *keys;
    const char *const *values;
    const char *config_dir;        /* its own configuration folder (<config_dir>), or NULL */
} tusk_emulator_stage_t;

/* The stage's topology text. Caller frees. */
int tusk_emulator_stage_topology(const tusk_emulator_stage_t *stage, const char *input, const char *output,
                                 char **xml, tusk_error_t *err);

/* Build the topology text that replays `input` (an ADF file) through actor
 * `only` of `topology`, in input buffers of the size it gets there: the
 * stage above. Caller frees. */
int tusk_emulator_replay_topology(const tusk_topology_t *topology, const char *only, const char *input,
                                  const char *output, char **xml, tusk_error_t *err);

typedef struct tusk_emulator_stage_result {
    bool ran;                  /* the chain was made and run: the output file was opened */
    tusk_driver_stats_t stats; /* the stage actor's counts (zero when it did not run) */
    double seconds;            /* the whole run */
} tusk_emulator_stage_result_t;

/* Run a stage to its end (`options` as for tusk_emulator_new, NULL:
 * defaults; the actor library is looked up in options->actor_path,
 * $TUSK_ACTOR_PATH, then the installed folder). *result (when not NULL)
 * says how far it came, also after a failure, which is returned as
 * tusk_emulator_new's or tusk_emulator_run's (naming the actor, hook and
 * buffer). */
int tusk_emulator_run_stage(const tusk_emulator_stage_t *stage, const char *input, const char *output,
                            const tusk_emulator_options_t *options, tusk_emulator_stage_result_t *result,
                            tusk_error_t *err);

#endif
