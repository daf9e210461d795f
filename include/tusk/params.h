/* params.h - per-instance actor parameters.
 *
 * The host writes each instance's <parameter> elements to
 * DIR/parameters.conf, DIR being the configuration directory that
 * process_config (and process_register_dir) receive. The format is one
 * `key = value` per line; `#` starts a comment line; blank lines are
 * ignored; spaces around key and value are dropped. Keys are made of
 * letters, digits, '_', '-' and '.'; values are single lines.
 *
 * The host adds: actor (its name), instance (0-based) and instances (count).
 */
#ifndef TUSK_PARAMS_H
#define TUSK_PARAMS_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TUSK_PARAMS_FILE "parameters.conf"

typedef struct tusk_params tusk_params_t;

TUSK_API tusk_params_t *tusk_params_new(void);
TUSK_API void tusk_params_destroy(tusk_params_t **params);

/* Add or replace a parameter (TUSK_EPARAM for a bad key or a value with a
 * line break). */
TUSK_API int tusk_params_set(tusk_params_t *params, const char *key, const char *value, tusk_error_t *err);

/* Parse `size` bytes of parameters.conf text; `origin` names it in errors
 * ("DIR/parameters.conf:LINE: ..."). Adds to what params holds. */
TUSK_API int tusk_params_parse(tusk_params_t *params, const char *text, size_t size, const char *origin,
                               tusk_error_t *err);

/* Load DIR/parameters.conf (a missing file gives no parameters). */
TUSK_API int tusk_params_load(tusk_params_t **params, const char *dir, tusk_error_t *err);

/* Write DIR/parameters.conf (DIR must exist). */
TUSK_API int tusk_params_save(const tusk_params_t *params, const char *dir, tusk_error_t *err);

TUSK_API size_t tusk_params_count(const tusk_params_t *params);
TUSK_API const char *tusk_params_key(const tusk_params_t *params, size_t i);
TUSK_API const char *tusk_params_value(const tusk_params_t *params, size_t i);

/* The value of `key`, or NULL / `fallback` when absent. */
TUSK_API const char *tusk_params_get(const tusk_params_t *params, const char *key);
TUSK_API const char *tusk_params_string(const tusk_params_t *params, const char *key, const char *fallback);

/* Typed access: `fallback` when absent, TUSK_EPARAM naming the key and the
 * text when present but malformed or out of range. */
TUSK_API int tusk_params_u64(const tusk_params_t *params, const char *key, uint64_t fallback, uint64_t *value,
                             tusk_error_t *err);
TUSK_API int tusk_params_double(const tusk_params_t *params, const char *key, double fallback, double *value,
                                tusk_error_t *err);
/* true/false, yes/no, on/off, 1/0 */
TUSK_API int tusk_params_bool(const tusk_params_t *params, const char *key, bool fallback, bool *value,
                              tusk_error_t *err);

/* The keys the host adds to every instance's parameters (actor,
 * instance, instances: see the top): the one list of them, defined with
 * tusk_params_expect, which always accepts them. An actor that hands
 * every other key of its parameters on (to a library's own reader)
 * skips these. */
TUSK_API bool tusk_params_is_host_key(const char *key);

/* TUSK_EPARAM if a key is not in the NULL-terminated list `known` (the
 * host-added actor, instance and instances are always accepted): catches
 * misspelt parameters instead of silently using defaults. An entry ending
 * in '*' accepts every key that starts with what precedes it. */
TUSK_API int tusk_params_expect(const tusk_params_t *params, const char *const *known, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
