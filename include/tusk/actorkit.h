/* actorkit.h - libtusk-actorkit: helpers for writing tusk actors, version 1.0.
 *
 * What every actor writes the same way, once: its instance's label and
 * last message, its parameters read by a table (unknown keys refused),
 * whole ADF frames copied from input to output across calls that return
 * TUSK_ACTOR_MORE_OUTPUT, and the skeletons of the three actors of a
 * reconstruction system. tusk's built-in actors are written on it; link it
 * with `pkg-config --cflags --libs tusk-actorkit`.
 *
 *   ak_base_t      what every instance carries: its label ("name[i]"),
 *                  instance number and count, and its last error message
 *                  (what process_error_message returns).
 *   ak_param_t     the one way an actor takes its parameters: a table of
 *                  its keys (type, default, range, where the value goes),
 *                  handed to ak_config_open in process_register_dir, which
 *                  loads parameters.conf, refuses a key not in the table
 *                  naming the actor and the key, and fills the actor's
 *                  settings; failures write a message naming the parameter
 *                  into the host's buffer (TUSK_ACTOR_ECONFIG).
 *   ak_copier_t    the frame-by-frame copy of a filter that passes frames
 *                  on: whole frames, resumed where it stopped after
 *                  MORE_OUTPUT; and for the filters that make an output
 *                  from each input (ak_batch_t), a damaged input answered
 *                  with the output of its frames before the damage, then
 *                  the failure (ak_input_*).
 *   ak_source_t, ak_batch_t, ak_report_t
 *                  the three actors of a reconstruction system: producer,
 *                  filter and QA consumer, each a skeleton the system fills
 *                  with callbacks into its library (see "reconstruction
 *                  systems" below).
 *
 * Hook prototypes. Define the actor's class before including this header
 * (AK_PRODUCER, AK_FILTER or AK_CONSUMER) and it declares every hook with
 * the signature of actor.h, so the definitions satisfy
 * -Wmissing-prototypes and a wrong signature fails to compile. The hooks
 * an actor defines must still be exported: compile the actor with
 * -fvisibility=hidden and link it exporting process_* and
 * tusk_actor_descriptor only (docs/examples/actor's Makefile does).
 *
 * There is no global mutable state: everything lives in the instance. So
 * the NARVAL process_register (which gets no configuration directory) can
 * only refuse; see ak_register_unsupported.
 *
 * Versions. TUSK_ACTORKIT_VERSION is the version of this header,
 * ak_version() that of the library loaded; both are MAJOR * 1000 + MINOR.
 * MINOR grows when functions, macros or types are added (an actor built
 * against 1.0 runs with 1.x); MAJOR when one is removed or changed,
 * including the layout of a struct below (the structs are embedded in the
 * actor's instance, so their layout is part of the interface), and the
 * library's soname changes with it (-version-info, Makefile.am). Check at
 * run time, e.g. in process_register_dir:
 *
 *     if (ak_version() / 1000 != TUSK_ACTORKIT_VERSION_MAJOR) ... refuse
 *
 * Contracts. Every function below says what it does on success and on
 * failure; a function that takes an ak_base_t writes its failure's words
 * there (what process_error_message then returns) and returns the actor
 * status (tusk/actor.h) the hook is to report. Nothing here calls exit()
 * or prints, except where a contract says it prints.
 */
#ifndef TUSK_ACTORKIT_H
#define TUSK_ACTORKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export.h"

#include "actor.h"
#include "adf.h"
#include "error.h"
#include "params.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TUSK_ACTORKIT_VERSION_MAJOR 1
#define TUSK_ACTORKIT_VERSION_MINOR 0
#define TUSK_ACTORKIT_VERSION (TUSK_ACTORKIT_VERSION_MAJOR * 1000 + TUSK_ACTORKIT_VERSION_MINOR)

/* The version of the library that runs: TUSK_ACTORKIT_VERSION of the
 * header it was built from. */
TUSK_API unsigned ak_version(void);

#if defined(__GNUC__)
#define AK_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define AK_PRINTF(f, a)
#endif

/* ---- hook prototypes ------------------------------------------------------ *
 * Exported (TUSK_ACTOR_EXPORT) whatever -fvisibility says: the hooks an
 * actor defines, by hand or with the AK_*_HOOKS macros below, are what the
 * host looks up. */
TUSK_ACTOR_EXPORT void process_config(const char *directory_path, unsigned int *error_code);
TUSK_ACTOR_EXPORT void *process_register(unsigned int *error_code);
TUSK_ACTOR_EXPORT void *process_register_dir(const char *directory_path, char *message,
                                              unsigned int message_size, unsigned int *error_code);
TUSK_ACTOR_EXPORT void process_initialise(void *algo_data, unsigned int *error_code);
TUSK_ACTOR_EXPORT void process_start(void *algo_data, unsigned int *error_code);
TUSK_ACTOR_EXPORT void process_stop(void *algo_data, unsigned int *error_code);
TUSK_ACTOR_EXPORT void process_pause(void *algo_data, unsigned int *error_code);
TUSK_ACTOR_EXPORT void process_resume(void *algo_data, unsigned int *error_code);
TUSK_ACTOR_EXPORT void process_reset(void *algo_data, unsigned int *error_code);
TUSK_ACTOR_EXPORT void process_unload(void *algo_data, unsigned int *error_code);
TUSK_ACTOR_EXPORT const char *process_error_message(void *algo_data);
TUSK_ACTOR_EXPORT void process_flush(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                                     unsigned int *used_size_of_output_buffer, unsigned int *error_code);
#if defined(AK_PRODUCER)
TUSK_ACTOR_EXPORT void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                                     unsigned int *used_size_of_output_buffer, unsigned int *error_code);
#elif defined(AK_FILTER)
TUSK_ACTOR_EXPORT void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                                     void *output_buffer, unsigned int size_of_output_buffer,
                                     unsigned int *used_size_of_output_buffer, unsigned int *error_code);
#elif defined(AK_CONSUMER)
TUSK_ACTOR_EXPORT void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                                     unsigned int *error_code);
#endif

/* ---- instance base ---------------------------------------------------------- */
#define AK_MESSAGE_MAX 512

typedef struct ak_base {
    char label[96];              /* "name[instance]", for messages and summaries */
    unsigned instance, instances;
    char message[AK_MESSAGE_MAX]; /* last failure, "" if none */
} ak_base_t;

/* Record a failure: format the instance's message, set *error_code = code.
 * Returns code. */
TUSK_API unsigned ak_fail(ak_base_t *base, unsigned *error_code, unsigned code, const char *fmt, ...)
    AK_PRINTF(4, 5);

/* What process_error_message returns: the instance's message, or for NULL
 * (no instance: process_config or process_register failed) the library's
 * constant explanation, AK_REGISTER_UNSUPPORTED. */
TUSK_API const char *ak_error_message(const ak_base_t *base);

#define AK_REGISTER_UNSUPPORTED                                                                          \
    "this tusk actor reads its parameters in process_register_dir (tusk extension); the plain NARVAL "   \
    "process_register gets no configuration directory and is refused"

/* process_register for actors that need process_register_dir: returns NULL
 * with TUSK_ACTOR_ECONFIG (message: AK_REGISTER_UNSUPPORTED). A tusk host
 * never calls it when process_register_dir is exported. */
TUSK_API void *ak_register_unsupported(unsigned *error_code);

/* The three hooks every built-in actor writes the same way:
 * process_config (nothing to do: parameters are read in
 * process_register_dir), process_register (refused, see above) and
 * process_error_message (from the instance's ak_base_t, which must be a
 * member called `base` of `type`). */
#define AK_STANDARD_HOOKS(type)                                                             \
    void process_config(const char *directory_path, unsigned int *error_code)               \
    {                                                                                       \
        (void)directory_path;                                                               \
        ak_ok(error_code);                                                                  \
    }                                                                                       \
    void *process_register(unsigned int *error_code)                                        \
    {                                                                                       \
        return ak_register_unsupported(error_code);                                         \
    }                                                                                       \
    const char *process_error_message(void *algo_data)                                      \
    {                                                                                       \
        return ak_error_message(algo_data ? &((type *)algo_data)->base : NULL);             \
    }

/* *error_code = OK (the start of every hook). */
static inline void ak_ok(unsigned *error_code)
{
    *error_code = TUSK_ACTOR_OK;
}

/* ---- parameters (process_register_dir) ------------------------------------ */

/* How a parameter's text is read, and the type of its destination (a
 * field of the actor's settings struct, given to ak_config_open). */
typedef enum ak_param_kind {
    AK_PARAM_END,      /* ends a table */
    AK_PARAM_STRING,   /* const char *: the text (valid until ak_config_close), or the default */
    AK_PARAM_REQUIRED, /* const char *: must be given and not empty */
    AK_PARAM_U64,      /* uint64_t in [min, max] */
    AK_PARAM_DOUBLE,   /* double in [min, max] */
    AK_PARAM_BOOL,     /* bool: true/false, yes/no, on/off, 1/0 */
    AK_PARAM_CHOICE,   /* int: the index of the text among `choices` */
    AK_PARAM_OTHER,    /* no destination: the actor reads the key itself (cfg.params) */
    AK_PARAM_LIBRARY   /* no key: the keys `keys()` lists are taken, and a library reads them
                          (psa_config_read, zf_config_read, ...) from cfg.params */
} ak_param_kind_t;

typedef struct ak_param {
    const char *key;
    ak_param_kind_t kind;
    size_t offset;              /* of the destination in the settings struct */
    const char *text;           /* STRING: the default (may be NULL); REQUIRED: what it is for */
    uint64_t u_default, u_min, u_max;
    double d_default, d_min, d_max;
    bool b_default;
    const char *const *choices; /* CHOICE: NULL-terminated */
    int c_default;              /* CHOICE: the index when absent */
    const char *const *(*keys)(void); /* LIBRARY */
} ak_param_t;

/* Table entries. `type` is the settings struct, `field` the destination,
 * whose type the entry checks at compile time. A table is static, or
 * local where a default comes from a library at run time. */
#define AK_DEST(type, field, ctype) (offsetof(type, field) + 0 * sizeof((ctype *){&((type *)0)->field}))
#define AK_STRING(key_, type, field, dflt)                                                        \
    {.key = (key_), .kind = AK_PARAM_STRING, .offset = AK_DEST(type, field, const char *), .text = (dflt)}
#define AK_REQUIRED(key_, type, field, what)                                                      \
    {.key = (key_), .kind = AK_PARAM_REQUIRED, .offset = AK_DEST(type, field, const char *), .text = (what)}
#define AK_U64(key_, type, field, dflt, min, max)                                                 \
    {.key = (key_), .kind = AK_PARAM_U64, .offset = AK_DEST(type, field, uint64_t), .u_default = (dflt), \
     .u_min = (min), .u_max = (max)}
#define AK_DOUBLE(key_, type, field, dflt, min, max)                                              \
    {.key = (key_), .kind = AK_PARAM_DOUBLE, .offset = AK_DEST(type, field, double), .d_default = (dflt), \
     .d_min = (min), .d_max = (max)}
#define AK_BOOL(key_, type, field, dflt)                                                          \
    {.key = (key_), .kind = AK_PARAM_BOOL, .offset = AK_DEST(type, field, bool), .b_default = (dflt)}
#define AK_CHOICE(key_, type, field, list, dflt)                                                  \
    {.key = (key_), .kind = AK_PARAM_CHOICE, .offset = AK_DEST(type, field, int), .choices = (list), \
     .c_default = (dflt)}
#define AK_OTHER(key_) {.key = (key_), .kind = AK_PARAM_OTHER}
#define AK_LIBRARY(keys_fn) {.kind = AK_PARAM_LIBRARY, .keys = (keys_fn)}
#define AK_PARAMS_END {.kind = AK_PARAM_END}

typedef struct ak_config {
    tusk_params_t *params;
    char *message;          /* the host's buffer */
    unsigned message_size;
    unsigned *error_code;
} ak_config_t;

/* Load DIR/parameters.conf; refuse a key that is not in `params` (nor a
 * library's list in it, nor one the host adds) with "ACTOR: unknown
 * parameter 'KEY' (known: ...)"; then read every entry of `params` in
 * table order into `settings` (the default when absent), refusing a value
 * that is malformed, out of range, not one of the choices, or a missing
 * required one, the message naming the parameter. On failure: the message
 * in the host's buffer, *error_code = TUSK_ACTOR_ECONFIG (ERESOURCE, EIO
 * for what they mean), false. Always call ak_config_close afterwards. */
TUSK_API bool ak_config_open(ak_config_t *cfg, const char *dir, const char *actor, const ak_param_t *params,
                              void *settings, char *message, unsigned message_size, unsigned *error_code);
TUSK_API void ak_config_close(ak_config_t *cfg);

/* Write a message into the host's buffer and set *error_code = code.
 * Returns false (for `return ak_config_fail(...)` in bool helpers). */
TUSK_API bool ak_config_fail(ak_config_t *cfg, unsigned code, const char *fmt, ...) AK_PRINTF(3, 4);

/* Fill base->label, instance and instances from the host-added keys. */
TUSK_API bool ak_config_base(ak_config_t *cfg, ak_base_t *base);

/* ---- copying whole frames (passthrough, fault) ------------------------------ */
typedef struct ak_copier {
    adf_reader_t *reader;
    adf_writer_t *writer;
    size_t resume;          /* offset in the pending input where the next call goes on */
    unsigned resume_size;   /* size of that input; 0 when no input is pending */
    uint64_t done_frames;   /* frames of the pending input already copied */
    /* A damaged input (ak_input_*): its size (0: none), where the damage
     * starts, the frames before it, what is wrong there, and whether the
     * output of those frames has gone out (the failure comes next). */
    unsigned damaged_size;
    uint64_t damage_offset, damage_frame;
    bool damage_due;
    char damage[AK_MESSAGE_MAX / 2];
} ak_copier_t;

/* Make the copier's reader and writer, nothing pending: true; false when
 * out of memory (then ak_copier_free it all the same). */
TUSK_API bool ak_copier_init(ak_copier_t *copier);
/* Free what ak_copier_init made; the copier may be initialised again. A
 * zeroed copier, or one freed already, is left as it is. */
TUSK_API void ak_copier_free(ak_copier_t *copier);
/* Forget a pending input (after MORE_OUTPUT) and a damaged one: the next
 * call starts on a new input. */
TUSK_API void ak_copier_reset(ak_copier_t *copier);

/* Copy whole frames of `in` into `out`, from where the previous call
 * stopped if it returned TUSK_ACTOR_MORE_OUTPUT. Returns TUSK_ACTOR_OK
 * (input used up), TUSK_ACTOR_MORE_OUTPUT (output full, call again with
 * the same input), TUSK_ACTOR_EDATA (malformed frame, or one larger than
 * the whole output buffer) or TUSK_ACTOR_ESTATE (a different input while
 * one is pending), with the message (naming the input offset) in base.
 * *used is set in every case.
 *
 * A malformed frame after valid ones loses nothing valid: the frames
 * before it go out with TUSK_ACTOR_MORE_OUTPUT, and the next call (same
 * input) fails at it, its message accounting for the whole input: the
 * frames and bytes passed on before the offset, the bytes from it on that
 * were not. */
TUSK_API unsigned ak_copy_frames(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size,
                                  void *out, unsigned out_size, unsigned *used);

/* Check that `in` holds whole, well-formed frames (the check copying
 * does, without the copy): TUSK_ACTOR_OK or TUSK_ACTOR_EDATA with the
 * message in base. */
TUSK_API unsigned ak_check_frames(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size);

/* Hand `in` on unchanged when it is whole, well-formed frames
 * (TUSK_ACTOR_FORWARD, *used = 0). Otherwise copy it as ak_copy_frames
 * does, so the frames before a malformed one still go out before the
 * failure (and a call after MORE_OUTPUT goes on copying). */
TUSK_API unsigned ak_forward_frames(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size,
                                     void *out, unsigned out_size, unsigned *used);

/* ---- damaged inputs of filters that make an output from each input -------- */
/* psa, tracking, zfinder and sts_hitfinder analyse a whole input and copy
 * the result out (ak_copy_frames on their staging buffer). A malformed
 * frame must not take the valid frames before it down with it: the filter
 * analyses the input up to the damage, its output goes out, and the next
 * call fails naming the frame (its index in the input, counting from 0),
 * its offset and what is wrong, and accounting for the input's bytes:
 *
 *   process_block:
 *       if (ak_input_failed(&copier, &base, error_code)) return;
 *       if (copier.resume_size == 0 && analyse(...) != TUSK_ACTOR_OK) return;
 *       code = ak_copy_frames(&copier, &base, staged, staged_size, out, size, used);
 *       *error_code = ak_input_done(&copier, &base, code, *used);
 *   analyse:
 *       ak_input_check(&copier, &base, in, in_size, &valid)   (then use in[0, valid))
 *       ak_input_damage(&copier, in_size, offset, frame, what) (a frame it cannot take)
 */

/* A new input: *valid = the bytes of its whole, well-formed frames before
 * the first malformed one (in_size when there is none), the damage
 * remembered. TUSK_ACTOR_OK; TUSK_ACTOR_EDATA (message in base) when the
 * damage is at offset 0 or cannot be placed: nothing to pass on. */
TUSK_API unsigned ak_input_check(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size,
                                  unsigned *valid);

/* Frame number `frame` at `offset` (in the valid part) of the input of
 * in_size bytes cannot be taken: `what` (naming the offset). The input is
 * damaged from there; the filter goes on with the frames before it. */
TUSK_API void ak_input_damage(ak_copier_t *copier, unsigned in_size, uint64_t offset, uint64_t frame,
                               const char *what);

/* The frame of in[0, valid) at which `read` (called on prefixes of whole
 * frames, failing from the frame it cannot take on) fails: its offset and
 * number, for ak_input_damage. A search over prefixes (log2 of the frames
 * reads): for the error path of a filter whose library reads a whole
 * buffer at once. false when even the whole prefix reads. */
TUSK_API bool ak_input_bisect(ak_copier_t *copier, const void *in, unsigned valid,
                               bool (*read)(void *ctx, unsigned size), void *ctx, uint64_t *offset,
                               uint64_t *frame);

/* After the output of an input went to ak_copy_frames (status `code`,
 * `used` bytes out): for a damaged input whose output is now all out,
 * TUSK_ACTOR_MORE_OUTPUT when those bytes still have to go (the failure
 * comes with the next call), else the failure (TUSK_ACTOR_EDATA); code
 * otherwise. */
TUSK_API unsigned ak_input_done(ak_copier_t *copier, ak_base_t *base, unsigned code, unsigned used);

/* The failure of a damaged input is due: true, *error_code and the
 * message set (the input is forgotten); false otherwise. */
TUSK_API bool ak_input_failed(ak_copier_t *copier, ak_base_t *base, unsigned *error_code);

/* ---- what arrived: frame types tallied, for the end-of-run check ---------- */
#define AK_TYPES_MAX 16

typedef struct ak_types {
    uint64_t buffers, frames;
    uint32_t type[AK_TYPES_MAX];  /* the first AK_TYPES_MAX distinct types, in order of arrival */
    uint64_t count[AK_TYPES_MAX];
    unsigned n;
    uint64_t more;                /* frames of further types */
} ak_types_t;

/* Nothing counted. */
TUSK_API void ak_types_reset(ak_types_t *types);
/* Tally one input buffer's top-level frames by type (after
 * ak_check_frames passed it: a malformed buffer is tallied up to the
 * damage), and the buffer. */
TUSK_API void ak_types_tally(ak_types_t *types, ak_copier_t *copier, const void *in, unsigned in_size);
/* Tally one frame of `type` (for an actor that has walked the buffer's
 * frames already: ak_types_tally's count without a second walk; the
 * buffer itself counted by the caller, types->buffers++). */
TUSK_API void ak_types_add(ak_types_t *types, uint32_t type);
/* Frames of `type` tallied (0 for a type beyond the first AK_TYPES_MAX). */
TUSK_API uint64_t ak_types_count(const ak_types_t *types, uint32_t type);
/* "data:psa 340, meta:eof 1" (types without a name as 0x%08X), "none". */
TUSK_API void ak_types_format(const ak_types_t *types, char *buf, size_t cap);

/* The end-of-run check of a filter that works on frames of type
 * `expected` (`does`: what it does with them, e.g. "analyses") and passes
 * others on. When none of that type arrived:
 *   - if data frames of other types did (any but meta and conf frames and
 *     the `passed` types, which it passes on by design), it was fed the
 *     wrong data: TUSK_ACTOR_EDATA, the message (in base) naming the
 *     types that arrived and the one it takes;
 *   - otherwise (no input at all, or only frames it passes on) a warning
 *     line on stderr: "ACTOR LABEL: WARNING: no ... frame arrived".
 * Returns the status written to *error_code (TUSK_ACTOR_OK or EDATA). */
TUSK_API unsigned ak_types_expect(ak_base_t *base, const char *actor, const ak_types_t *types, uint32_t expected,
                                   const char *does, const uint32_t *passed, size_t n_passed, unsigned *error_code);

/* ---- reconstruction systems: producer, filter, QA consumer ------------------
 * A reconstruction system (zfinder, sts, ut, tpc) is a library with three
 * actors around it: its simulator, its reconstruction and its quality
 * against the truth. Each is written on one skeleton below, which owns
 * what they all do the same way (the hooks, buffers, counting, failures
 * and their messages); the actor's file keeps what is its system's: its
 * parameter table, a `kind` (a constant table of callbacks into its
 * library) and the summary it prints at process_stop.
 *
 * Invariants, for all three:
 *   - The instance is one zeroed allocation of kind->size bytes whose
 *     first member, `ak`, is the skeleton's state (ak_source_t, ak_batch_t,
 *     ak_report_t), itself beginning with the ak_base_t: a pointer to the
 *     instance is a pointer to both. Every callback gets it as `self`.
 *   - process_register_dir is the actor's: it builds its parameter table
 *     (local when a default is its library's) and returns
 *     ak_{source,batch,report}_register, which reads the parameters into
 *     the actor's settings struct, makes the instance and calls
 *     kind->open. AK_{SOURCE,BATCH,REPORT}_HOOKS defines every other hook.
 *   - kind->open fails with ak_config_fail (the message goes to the host).
 *     What it made is freed by kind->close (NULL: nothing; a report's
 *     analysis by calls->destroy), after a failed open too.
 *   - The other callbacks fail with a libtusk status (tusk/error.h), the
 *     message in err; the skeleton turns it into the actor status its
 *     contract names, the message into the instance's. */

/* kind->size of the instance struct `type`, refusing at compile time one
 * whose first member is not the skeleton's state `ak`. */
#define AK_INSTANCE_SIZE(type) (sizeof(type) + 0 * sizeof(char[offsetof(type, ak) == 0 ? 1 : -1]))

extern TUSK_API const char *const ak_backends[];        /* reference, fast, opencl */
extern TUSK_API const char *const ak_picture_formats[]; /* png, svg */

/* ---- producer: numbered units, shared among instances ------------------------
 * Invariant: unit i (a RoI, an event, a timeslice) is made by instance
 * i mod instances, in order, while i < ak.units (0: no end), so
 * load-sharing instances together make what one would. A unit goes out in
 * whole pieces (a module, a slice; or the whole unit), never split across
 * buffers; each call fills its buffer with as many as fit, and after the
 * last unit returns TUSK_ACTOR_END_OF_DATA with what it filled. A piece
 * larger than the whole output buffer is TUSK_ACTOR_EDATA naming the
 * unit, the piece and both sizes. process_reset starts the same units
 * again. */
typedef struct ak_source_kind {
    const char *actor; /* its name: parameter messages */
    size_t size;       /* of the instance */
    const char *unit;  /* "RoI", "event", "timeslice": messages */
    /* "module", "slice": a unit goes out in pieces, each encoded straight
     * into the output, `bytes` giving its exact size. NULL: a unit is one
     * piece, encoded into a staging area (`bytes` its size at most) and
     * copied; one that does not fit waits there for the next buffer. */
    const char *piece;
    bool (*open)(ak_config_t *cfg, void *self, const void *settings); /* the simulator; sets ak.units */
    void (*close)(void *self);
    void (*reset)(void *self);         /* zero the actor's counters; NULL: none */
    void (*summary)(const void *self); /* process_stop: its line on stderr */
    /* Make unit `index`: the number its frames carry, its pieces.
     * Fails: ERESOURCE for TUSK_ENOMEM, else ERROR. */
    int (*make)(void *self, uint64_t index, uint32_t *number, size_t *pieces, tusk_error_t *err);
    size_t (*bytes)(const void *self, size_t piece);
    /* Piece `piece` of the unit made last into w. Fails: ERROR. */
    int (*encode)(void *self, size_t piece, adf_writer_t *w, tusk_error_t *err);
} ak_source_kind_t;

typedef struct ak_source {
    ak_base_t base;
    const ak_source_kind_t *kind;
    uint64_t units;       /* of the run, all instances together (0: no end); kind->open sets it */
    uint64_t next, step;  /* this instance's next unit; instances */
    uint64_t made;        /* units this instance made */
    uint32_t number;      /* the unit being written: its number, */
    size_t piece, pieces; /* its next piece and its pieces */
    bool in_unit, ended;
    adf_writer_t *writer;
    uint8_t *staged;      /* piece == NULL: the unit waiting to go out */
    size_t staged_cap, staged_size;
} ak_source_t;

/* process_register_dir of a producer: read `params` from dir into
 * `settings` (ak_config_open), make the instance (kind->size bytes,
 * zeroed) and call kind->open. Returns it; NULL with the message in the
 * host's buffer and *error_code set (ECONFIG, ERESOURCE) on failure, all
 * it made freed. */
TUSK_API void *ak_source_register(const ak_source_kind_t *kind, const ak_param_t *params, void *settings,
                                   const char *dir, char *message, unsigned message_size, unsigned *error_code);
/* process_block of a producer: fill out[0, out_size) with whole pieces of
 * this instance's next units (the invariant above); *used the bytes
 * written, *error_code OK, END_OF_DATA after the last unit, EDATA for a
 * piece larger than the whole buffer, ERESOURCE or ERROR when the
 * library fails (the message in source->base). */
TUSK_API void ak_source_block(ak_source_t *source, void *out, unsigned out_size, unsigned *used,
                               unsigned *error_code);
/* process_reset: the same units again, from the first (kind->reset
 * zeroes the actor's counters). */
TUSK_API void ak_source_reset(ak_source_t *source);
/* process_unload: kind->close, then the instance freed. NULL: nothing. */
TUSK_API void ak_source_free(void *instance);

#define AK_SOURCE_HOOKS                                                                                 \
    AK_RUN_HOOKS(source)                                                                                \
    void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,        \
                       unsigned int *used_size_of_output_buffer, unsigned int *error_code)              \
    {                                                                                                   \
        ak_source_block(algo_data, output_buffer, size_of_output_buffer, used_size_of_output_buffer,    \
                        error_code);                                                                    \
    }

/* ---- filter: each input buffer one batch through a backend --------------------
 * Invariant: the output of an input buffer is its frames, in order, with
 * what the system adds (kind->write), made in the call that brings the
 * input: written straight into the output buffer when it fits, otherwise
 * staged and handed out over calls that return TUSK_ACTOR_MORE_OUTPUT
 * (same input again). Nothing is held back between inputs, so the
 * runtime's accounting of finished inputs is exact. A malformed frame, or
 * one the system cannot decode, loses nothing before it (ak_input_*): the
 * frames before it are analysed and go out, then the call fails
 * (TUSK_ACTOR_EDATA) naming the frame's number in the input and its
 * offset. Offsets in the system's messages count the bytes the instance
 * received. */
typedef struct ak_batch_kind {
    const char *actor;  /* its name: parameter messages */
    size_t size;        /* of the instance */
    bool limit_is_data; /* run's TUSK_ELIMIT is the input's fault (EDATA), not ERROR */
    bool (*open)(ak_config_t *cfg, void *self, const void *settings); /* configuration, batch, backend */
    void (*close)(void *self);
    void (*reset)(void *self);         /* zero the actor's counters; NULL: none */
    void (*summary)(const void *self); /* process_stop: its lines on stderr */
    /* Decode in[0, size) into the batch, its messages naming offsets from
     * `offset`. Also called on prefixes of whole frames, from offset 0, to
     * find the frame at fault. Fails: ERESOURCE for TUSK_ENOMEM, else the
     * input is damaged at the frame that fails (EDATA). */
    int (*read)(void *self, const void *in, size_t size, uint64_t offset, tusk_error_t *err);
    /* The backend on the batch read last, counted. Fails: ERESOURCE for
     * TUSK_ENOMEM, EDATA for TUSK_EINVAL (and ELIMIT, see limit_is_data),
     * else ERROR, the message naming the input buffer. */
    int (*run)(void *self, tusk_error_t *err);
    size_t (*extra)(const void *self); /* at most the bytes the output adds to the input's */
    /* in[0, size) with the results into w. Fails: ERROR. */
    int (*write)(const void *self, const void *in, size_t size, adf_writer_t *w, tusk_error_t *err);
} ak_batch_kind_t;

typedef struct ak_batch {
    ak_base_t base;
    const ak_batch_kind_t *kind;
    ak_copier_t copier;
    adf_writer_t *writer;
    uint8_t *staged;                  /* an output larger than the output buffer */
    size_t staged_cap, staged_size;
    uint64_t buffers, staged_buffers; /* inputs analysed; of them, staged */
    uint64_t offset;                  /* bytes received */
    double seconds;                   /* in run */
} ak_batch_t;

/* process_register_dir of a filter: as ak_source_register, with its
 * copier and writer made too. */
TUSK_API void *ak_batch_register(const ak_batch_kind_t *kind, const ak_param_t *params, void *settings,
                                  const char *dir, char *message, unsigned message_size, unsigned *error_code);
/* process_block of a filter: the output of `in` (the invariant above)
 * into out[0, out_size), *used its bytes; *error_code OK, MORE_OUTPUT
 * (call again with the same input), EDATA (a damaged input, after the
 * output of its frames before the damage), ERESOURCE or ERROR (the
 * message in batch->base). */
TUSK_API void ak_batch_block(ak_batch_t *batch, const void *in, unsigned in_size, void *out, unsigned out_size,
                              unsigned *used, unsigned *error_code);
/* process_reset: a pending or damaged input forgotten, the counters
 * zeroed (kind->reset the actor's). */
TUSK_API void ak_batch_reset(ak_batch_t *batch);
/* process_unload: kind->close, the staging area, copier and writer, then
 * the instance freed. NULL: nothing. */
TUSK_API void ak_batch_free(void *instance);

#define AK_BATCH_HOOKS                                                                                  \
    AK_RUN_HOOKS(batch)                                                                                 \
    void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,          \
                       void *output_buffer, unsigned int size_of_output_buffer,                         \
                       unsigned int *used_size_of_output_buffer, unsigned int *error_code)              \
    {                                                                                                   \
        ak_batch_block(algo_data, input_buffer, size_of_input_buffer, output_buffer,                    \
                       size_of_output_buffer, used_size_of_output_buffer, error_code);                  \
    }

/* The settings of a backend (reference | fast | opencl) and their table
 * entries: backend, threads, device, cl.options, cl.cache, into the
 * ak_backend_t `member` of the settings struct `type` (`dflt`: the index
 * of the default backend in ak_backends). */
typedef struct ak_backend {
    int backend; /* index in ak_backends */
    uint64_t threads;
    const char *device, *options;
    bool cache;
} ak_backend_t;

#define AK_BACKEND_PARAMS(type, member, dflt)                                                           \
    AK_CHOICE("backend", type, member.backend, ak_backends, dflt),                                      \
        AK_U64("threads", type, member.threads, 0, 0, 1024), AK_STRING("device", type, member.device, NULL), \
        AK_STRING("cl.options", type, member.options, NULL), AK_BOOL("cl.cache", type, member.cache, true)

/* The three backends of a system library with the usual functions
 * PREFIX_ref_new(&ref, &cfg, err), PREFIX_fast_new(&fast, &cfg, threads,
 * err), PREFIX_cl_new(&cl, &cfg, &clc, err), their PREFIX_*_run(x, batch,
 * res, err) and PREFIX_*_destroy(&x), on the members ref, fast, cl, cfg,
 * batch and res of the filter's instance `type`. Defines:
 *   ak_backend_open(f, be, clc, err)   the backend `be` chooses; the OpenCL
 *                                      one configured by clc, whose device,
 *                                      instance, options, no_cache and
 *                                      threads come from be
 *   ak_backend_run(f, err)             the backend on f->batch into f->res
 *   ak_backend_close(f)                destroys it */
#define AK_BACKEND_LIBRARY(type, prefix)                                                                \
    static int ak_backend_open(type *f, const ak_backend_t *be, prefix##_cl_config_t *clc,              \
                               tusk_error_t *err)                                                       \
    {                                                                                                   \
        if (be->backend == 0)                                                                           \
            return prefix##_ref_new(&f->ref, &f->cfg, err);                                             \
        if (be->backend == 1)                                                                           \
            return prefix##_fast_new(&f->fast, &f->cfg, (unsigned)be->threads, err);                    \
        clc->device = be->device;                                                                       \
        clc->instance = f->ak.base.instance;                                                            \
        clc->options = be->options;                                                                     \
        clc->no_cache = !be->cache;                                                                     \
        clc->threads = (unsigned)be->threads;                                                           \
        return prefix##_cl_new(&f->cl, &f->cfg, clc, err);                                              \
    }                                                                                                   \
    static int ak_backend_run(type *f, tusk_error_t *err)                                               \
    {                                                                                                   \
        return f->ref    ? prefix##_ref_run(f->ref, f->batch, f->res, err)                              \
               : f->fast ? prefix##_fast_run(f->fast, f->batch, f->res, err)                            \
                         : prefix##_cl_run(f->cl, f->batch, f->res, err);                               \
    }                                                                                                   \
    static void ak_backend_close(type *f)                                                               \
    {                                                                                                   \
        prefix##_ref_destroy(&f->ref);                                                                  \
        prefix##_fast_destroy(&f->fast);                                                                \
        prefix##_cl_destroy(&f->cl);                                                                    \
    }

/* ---- QA consumer: an analysis fed every buffer, reported at the end ----------
 * Invariant: process_initialise starts a fresh analysis (kind->calls);
 * every buffer is fed to it whole, with the count of bytes received
 * before it, so its messages name offsets in the input stream (a
 * malformed frame is TUSK_ACTOR_EDATA); process_stop finishes it
 * (TUSK_ACTOR_EDATA for what was left incomplete), prints "ACTOR LABEL: N
 * buffers, M bytes" and its tables on stdout, writes its files into the
 * folder `out` (out/instance-N with several instances; TUSK_ACTOR_EIO when
 * that fails) and names them. */
typedef struct ak_report_calls {
    int (*create)(void *self, tusk_error_t *err); /* fails: ERESOURCE for ENOMEM, else ECONFIG */
    void (*destroy)(void *self);                  /* the analysis, if there is one */
    int (*feed)(void *self, const void *in, size_t size, uint64_t offset, tusk_error_t *err);
    int (*finish)(void *self, tusk_error_t *err);
    void (*print)(const void *self, FILE *out);
    int (*write)(const void *self, const char *dir, bool plot, const char *format, tusk_error_t *err);
} ak_report_calls_t;

typedef struct ak_report_kind {
    const char *actor;   /* its name: parameter messages, report lines */
    size_t size;         /* of the instance */
    const char *files;   /* what the folder gets: "summary.csv, stations.csv" */
    const char *picture; /* added when a picture is drawn: ", residuals picture" */
    bool (*open)(ak_config_t *cfg, void *self, const void *settings); /* the analysis's configuration */
    const ak_report_calls_t *calls;
} ak_report_kind_t;

typedef struct ak_report {
    ak_base_t base;
    const ak_report_kind_t *kind;
    bool live;                /* an analysis is running */
    bool plot, pictured;      /* draw; a picture is drawn (plot, unless kind->open says otherwise) */
    char format[8];
    char dir[1024];
    uint64_t buffers, offset; /* received */
} ak_report_t;

/* The settings every report takes, first in the actor's settings struct
 * as its member `report` (AK_REPORT_LABEL_OUT refuses it elsewhere at
 * compile time), and their table entries (label and out; format and
 * plot). */
typedef struct ak_report_settings {
    const char *label, *out;
    int format; /* index in ak_picture_formats */
    bool plot;
} ak_report_settings_t;

#define AK_REPORT_LABEL_OUT(type, out_dflt)                                                             \
    {.key = "label", .kind = AK_PARAM_STRING, .text = "sample",                                         \
     .offset = AK_DEST(type, report.label, const char *) + 0 * sizeof(char[offsetof(type, report) == 0 ? 1 : -1])}, \
        AK_STRING("out", type, report.out, out_dflt)
#define AK_REPORT_FORMAT_PLOT(type)                                                                     \
    AK_CHOICE("format", type, report.format, ak_picture_formats, 0), AK_BOOL("plot", type, report.plot, true)

/* Check the sample's label (shorter than cap; no comma, quote or line
 * break: it goes into CSV files) and copy it into dest. */
TUSK_API bool ak_report_label(ak_config_t *cfg, const char *label, char *dest, size_t cap);

/* process_register_dir of a QA consumer: as ak_source_register, the
 * label, output folder, format and plot settings checked too. */
TUSK_API void *ak_report_register(const ak_report_kind_t *kind, const ak_param_t *params, void *settings,
                                   const char *dir, char *message, unsigned message_size, unsigned *error_code);
/* process_initialise: a fresh analysis (calls->create); *error_code OK,
 * ERESOURCE or ECONFIG (the message in report->base). */
TUSK_API void ak_report_initialise(ak_report_t *report, unsigned *error_code);
/* process_block: `in` fed whole to the analysis; *error_code OK, EDATA
 * (a malformed frame, its offset in the input stream in the message),
 * ERESOURCE, or ESTATE before process_initialise. */
TUSK_API void ak_report_block(ak_report_t *report, const void *in, unsigned in_size, unsigned *error_code);
/* process_stop: the analysis finished, printed on stdout and written
 * into its folder (the invariant above); *error_code OK, EDATA or EIO. */
TUSK_API void ak_report_stop(ak_report_t *report, unsigned *error_code);
/* process_reset: the analysis dropped (process_initialise makes the
 * next one, its counts from zero). */
TUSK_API void ak_report_reset(ak_report_t *report);
/* process_unload: the analysis (calls->destroy), then the instance
 * freed. NULL: nothing. */
TUSK_API void ak_report_free(void *instance);

#define AK_REPORT_HOOKS                                                                                 \
    AK_STANDARD_HOOKS(ak_report_t)                                                                      \
    AK_PLAIN_HOOK(process_reset, ak_report_reset)                                                       \
    AK_PLAIN_HOOK(process_unload, ak_report_free)                                                       \
    void process_initialise(void *algo_data, unsigned int *error_code)                                  \
    {                                                                                                   \
        ak_report_initialise(algo_data, error_code);                                                    \
    }                                                                                                   \
    void process_stop(void *algo_data, unsigned int *error_code)                                        \
    {                                                                                                   \
        ak_report_stop(algo_data, error_code);                                                          \
    }                                                                                                   \
    void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,          \
                       unsigned int *error_code)                                                        \
    {                                                                                                   \
        ak_report_block(algo_data, input_buffer, size_of_input_buffer, error_code);                     \
    }

/* ak_report_calls_t for a QA library with the usual six functions
 * PREFIX_new(&qa, &cfg, err), PREFIX_destroy(&qa), PREFIX_feed,
 * PREFIX_finish, PREFIX_print and PREFIX_write, its handle and
 * configuration the members `qa` and `cfg` of the instance `type`:
 * defines them, and `ak_qa_calls` holding them. */
#define AK_QA_LIBRARY(type, prefix)                                                                     \
    static int ak_qa_create(void *self, tusk_error_t *err)                                              \
    {                                                                                                   \
        return prefix##_new(&((type *)self)->qa, &((type *)self)->cfg, err);                            \
    }                                                                                                   \
    static void ak_qa_destroy(void *self)                                                               \
    {                                                                                                   \
        prefix##_destroy(&((type *)self)->qa);                                                          \
    }                                                                                                   \
    static int ak_qa_feed(void *self, const void *in, size_t size, uint64_t offset, tusk_error_t *err)  \
    {                                                                                                   \
        return prefix##_feed(((type *)self)->qa, in, size, offset, err);                                \
    }                                                                                                   \
    static int ak_qa_finish(void *self, tusk_error_t *err)                                              \
    {                                                                                                   \
        return prefix##_finish(((type *)self)->qa, err);                                                \
    }                                                                                                   \
    static void ak_qa_print(const void *self, FILE *out)                                                \
    {                                                                                                   \
        prefix##_print(((const type *)self)->qa, out);                                                  \
    }                                                                                                   \
    static int ak_qa_write(const void *self, const char *dir, bool plot, const char *format,            \
                           tusk_error_t *err)                                                           \
    {                                                                                                   \
        return prefix##_write(((const type *)self)->qa, dir, plot, format, err);                        \
    }                                                                                                   \
    static const ak_report_calls_t ak_qa_calls = {ak_qa_create, ak_qa_destroy, ak_qa_feed,              \
                                                  ak_qa_finish, ak_qa_print,   ak_qa_write};

/* The hooks of a producer or filter skeleton but process_block. */
#define AK_RUN_HOOKS(skeleton)                                                                          \
    AK_STANDARD_HOOKS(ak_##skeleton##_t)                                                                \
    AK_PLAIN_HOOK(process_initialise, ak_nothing)                                                       \
    AK_PLAIN_HOOK(process_reset, ak_##skeleton##_reset)                                                 \
    void process_stop(void *algo_data, unsigned int *error_code)                                        \
    {                                                                                                   \
        ak_ok(error_code);                                                                              \
        ((ak_##skeleton##_t *)algo_data)->kind->summary(algo_data);                                     \
    }                                                                                                   \
    AK_PLAIN_HOOK(process_unload, ak_##skeleton##_free)

/* A hook of the form hook(algo_data, error_code) that cannot fail:
 * *error_code = OK, then fn(algo_data). */
#define AK_PLAIN_HOOK(hook, fn)                                                                         \
    void hook(void *algo_data, unsigned int *error_code)                                                \
    {                                                                                                   \
        ak_ok(error_code);                                                                              \
        fn(algo_data);                                                                                  \
    }

static inline void ak_nothing(void *self)
{
    (void)self;
}

#ifdef __cplusplus
}
#endif
#endif
