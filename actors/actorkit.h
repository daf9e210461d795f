/* actorkit.h - helpers shared by the built-in actors (a convenience library
 * linked into each of them; not installed, not part of the actor ABI).
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
 *   ak_copier_t    the frame-by-frame copy of passthrough and fault: whole
 *                  frames, resumed where it stopped after MORE_OUTPUT; and
 *                  for the filters that make an output from each input
 *                  (psa, tracking, zfinder, sts_hitfinder), a damaged input
 *                  answered with the output of its frames before the
 *                  damage, then the failure (ak_input_*).
 *
 * Hook prototypes. Define the actor's class before including this header
 * (AK_PRODUCER, AK_FILTER or AK_CONSUMER) and it declares every hook with
 * the signature of actor.h, so the definitions satisfy
 * -Wmissing-prototypes and a wrong signature fails to compile.
 *
 * There is no global mutable state: everything lives in the instance. So
 * the NARVAL process_register (which gets no configuration directory) can
 * only refuse; see ak_register_unsupported.
 */
#ifndef TUSK_ACTORKIT_H
#define TUSK_ACTORKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tusk/actor.h"
#include "tusk/adf.h"
#include "tusk/params.h"

#if defined(__GNUC__)
#define AK_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define AK_HIDDEN __attribute__((visibility("hidden")))
#else
#define AK_PRINTF(f, a)
#define AK_HIDDEN
#endif

/* ---- hook prototypes ------------------------------------------------------ */
void process_config(const char *directory_path, unsigned int *error_code);
void *process_register(unsigned int *error_code);
void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code);
void process_initialise(void *algo_data, unsigned int *error_code);
void process_start(void *algo_data, unsigned int *error_code);
void process_stop(void *algo_data, unsigned int *error_code);
void process_pause(void *algo_data, unsigned int *error_code);
void process_resume(void *algo_data, unsigned int *error_code);
void process_reset(void *algo_data, unsigned int *error_code);
void process_unload(void *algo_data, unsigned int *error_code);
const char *process_error_message(void *algo_data);
void process_flush(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code);
#if defined(AK_PRODUCER)
void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code);
#elif defined(AK_FILTER)
void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code);
#elif defined(AK_CONSUMER)
void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
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
AK_HIDDEN unsigned ak_fail(ak_base_t *base, unsigned *error_code, unsigned code, const char *fmt, ...)
    AK_PRINTF(4, 5);

/* What process_error_message returns: the instance's message, or for NULL
 * (no instance: process_config or process_register failed) the library's
 * constant explanation, AK_REGISTER_UNSUPPORTED. */
AK_HIDDEN const char *ak_error_message(const ak_base_t *base);

#define AK_REGISTER_UNSUPPORTED                                                                          \
    "this tusk actor reads its parameters in process_register_dir (tusk extension); the plain NARVAL "   \
    "process_register gets no configuration directory and is refused"

/* process_register for actors that need process_register_dir: returns NULL
 * with TUSK_ACTOR_ECONFIG (message: AK_REGISTER_UNSUPPORTED). A tusk host
 * never calls it when process_register_dir is exported. */
AK_HIDDEN void *ak_register_unsupported(unsigned *error_code);

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
AK_HIDDEN bool ak_config_open(ak_config_t *cfg, const char *dir, const char *actor, const ak_param_t *params,
                              void *settings, char *message, unsigned message_size, unsigned *error_code);
AK_HIDDEN void ak_config_close(ak_config_t *cfg);

/* Write a message into the host's buffer and set *error_code = code.
 * Returns false (for `return ak_config_fail(...)` in bool helpers). */
AK_HIDDEN bool ak_config_fail(ak_config_t *cfg, unsigned code, const char *fmt, ...) AK_PRINTF(3, 4);

/* Fill base->label, instance and instances from the host-added keys. */
AK_HIDDEN bool ak_config_base(ak_config_t *cfg, ak_base_t *base);

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

/* false when out of memory. */
AK_HIDDEN bool ak_copier_init(ak_copier_t *copier);
AK_HIDDEN void ak_copier_free(ak_copier_t *copier);
/* Forget a pending input. */
AK_HIDDEN void ak_copier_reset(ak_copier_t *copier);

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
AK_HIDDEN unsigned ak_copy_frames(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size,
                                  void *out, unsigned out_size, unsigned *used);

/* Check that `in` holds whole, well-formed frames (the check copying
 * does, without the copy): TUSK_ACTOR_OK or TUSK_ACTOR_EDATA with the
 * message in base. */
AK_HIDDEN unsigned ak_check_frames(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size);

/* Hand `in` on unchanged when it is whole, well-formed frames
 * (TUSK_ACTOR_FORWARD, *used = 0). Otherwise copy it as ak_copy_frames
 * does, so the frames before a malformed one still go out before the
 * failure (and a call after MORE_OUTPUT goes on copying). */
AK_HIDDEN unsigned ak_forward_frames(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size,
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
AK_HIDDEN unsigned ak_input_check(ak_copier_t *copier, ak_base_t *base, const void *in, unsigned in_size,
                                  unsigned *valid);

/* Frame number `frame` at `offset` (in the valid part) of the input of
 * in_size bytes cannot be taken: `what` (naming the offset). The input is
 * damaged from there; the filter goes on with the frames before it. */
AK_HIDDEN void ak_input_damage(ak_copier_t *copier, unsigned in_size, uint64_t offset, uint64_t frame,
                               const char *what);

/* The frame of in[0, valid) at which `read` (called on prefixes of whole
 * frames, failing from the frame it cannot take on) fails: its offset and
 * number, for ak_input_damage. A search over prefixes (log2 of the frames
 * reads): for the error path of a filter whose library reads a whole
 * buffer at once. false when even the whole prefix reads. */
AK_HIDDEN bool ak_input_bisect(ak_copier_t *copier, const void *in, unsigned valid,
                               bool (*read)(void *ctx, unsigned size), void *ctx, uint64_t *offset,
                               uint64_t *frame);

/* After the output of an input went to ak_copy_frames (status `code`,
 * `used` bytes out): for a damaged input whose output is now all out,
 * TUSK_ACTOR_MORE_OUTPUT when those bytes still have to go (the failure
 * comes with the next call), else the failure (TUSK_ACTOR_EDATA); code
 * otherwise. */
AK_HIDDEN unsigned ak_input_done(ak_copier_t *copier, ak_base_t *base, unsigned code, unsigned used);

/* The failure of a damaged input is due: true, *error_code and the
 * message set (the input is forgotten); false otherwise. */
AK_HIDDEN bool ak_input_failed(ak_copier_t *copier, ak_base_t *base, unsigned *error_code);

/* ---- what arrived: frame types tallied, for the end-of-run check ---------- */
#define AK_TYPES_MAX 16

typedef struct ak_types {
    uint64_t buffers, frames;
    uint32_t type[AK_TYPES_MAX];  /* the first AK_TYPES_MAX distinct types, in order of arrival */
    uint64_t count[AK_TYPES_MAX];
    unsigned n;
    uint64_t more;                /* frames of further types */
} ak_types_t;

AK_HIDDEN void ak_types_reset(ak_types_t *types);
/* Tally one input buffer's frames (after ak_check_frames passed it). */
AK_HIDDEN void ak_types_tally(ak_types_t *types, ak_copier_t *copier, const void *in, unsigned in_size);
AK_HIDDEN uint64_t ak_types_count(const ak_types_t *types, uint32_t type);
/* "data:psa 340, meta:eof 1" (types without a name as 0x%08X), "none". */
AK_HIDDEN void ak_types_format(const ak_types_t *types, char *buf, size_t cap);

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
AK_HIDDEN unsigned ak_types_expect(ak_base_t *base, const char *actor, const ak_types_t *types, uint32_t expected,
                                   const char *does, const uint32_t *passed, size_t n_passed, unsigned *error_code);

#endif
