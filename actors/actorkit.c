/* actorkit.c - helpers shared by the built-in actors; see actorkit.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actorkit.h"

/* ---- instance base ---------------------------------------------------------- */

unsigned ak_fail(ak_base_t *base, unsigned *error_code, unsigned code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(base->message, sizeof base->message, fmt, ap);
    va_end(ap);
    *error_code = code;
    return code;
}

const char *ak_error_message(const ak_base_t *base)
{
    return base ? base->message : AK_REGISTER_UNSUPPORTED;
}

void *ak_register_unsupported(unsigned *error_code)
{
    *error_code = TUSK_ACTOR_ECONFIG;
    return NULL;
}

/* ---- parameters ----------------------------------------------------------------- */

bool ak_config_fail(ak_config_t *cfg, unsigned code, const char *fmt, ...)
{
    if (cfg->message && cfg->message_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cfg->message, cfg->message_size, fmt, ap);
        va_end(ap);
    }
    *cfg->error_code = code;
    return false;
}

/* A libtusk failure as an actor status. */
static unsigned status_of(int tusk_code)
{
    switch (tusk_code) {
    case TUSK_ENOMEM: return TUSK_ACTOR_ERESOURCE;
    case TUSK_EIO: return TUSK_ACTOR_EIO;
    default: return TUSK_ACTOR_ECONFIG;
    }
}

bool ak_config_open(ak_config_t *cfg, const char *dir, const char *const *known, char *message,
                    unsigned message_size, unsigned *error_code)
{
    cfg->params = NULL;
    cfg->message = message;
    cfg->message_size = message_size;
    cfg->error_code = error_code;
    *error_code = TUSK_ACTOR_OK;
    if (message && message_size)
        message[0] = '\0';
    tusk_error_t err;
    int rc = tusk_params_load(&cfg->params, dir, &err);
    if (rc == TUSK_OK)
        rc = tusk_params_expect(cfg->params, known, &err);
    if (rc != TUSK_OK)
        return ak_config_fail(cfg, status_of(rc), "%s", err.message);
    return true;
}

void ak_config_close(ak_config_t *cfg)
{
    tusk_params_destroy(&cfg->params);
}

bool ak_config_base(ak_config_t *cfg, ak_base_t *base)
{
    uint64_t instance, instances;
    if (!ak_config_u64(cfg, "instance", 0, 0, UINT32_MAX, &instance) ||
        !ak_config_u64(cfg, "instances", 1, 1, UINT32_MAX, &instances))
        return false;
    if (instance >= instances)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "instance %llu of %llu: the instance number must be below the count",
                              (unsigned long long)instance, (unsigned long long)instances);
    base->instance = (unsigned)instance;
    base->instances = (unsigned)instances;
    base->message[0] = '\0';
    const char *name = tusk_params_string(cfg->params, "actor", "actor");
    snprintf(base->label, sizeof base->label, "%.80s[%u]", name, base->instance);
    return true;
}

const char *ak_config_required(ak_config_t *cfg, const char *key, const char *what)
{
    const char *v = tusk_params_get(cfg->params, key);
    if (!v || !*v) {
        ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "missing required parameter '%s' (%s)", key, what);
        return NULL;
    }
    return v;
}

bool ak_config_u64(ak_config_t *cfg, const char *key, uint64_t fallback, uint64_t min, uint64_t max,
                   uint64_t *value)
{
    tusk_error_t err;
    int rc = tusk_params_u64(cfg->params, key, fallback, value, &err);
    if (rc != TUSK_OK)
        return ak_config_fail(cfg, status_of(rc), "%s", err.message);
    if (*value < min || *value > max)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter '%s': %llu is outside [%llu, %llu]", key,
                              (unsigned long long)*value, (unsigned long long)min, (unsigned long long)max);
    return true;
}

bool ak_config_double(ak_config_t *cfg, const char *key, double fallback, double min, double max, double *value)
{
    tusk_error_t err;
    int rc = tusk_params_double(cfg->params, key, fallback, value, &err);
    if (rc != TUSK_OK)
        return ak_config_fail(cfg, status_of(rc), "%s", err.message);
    if (!(*value >= min && *value <= max))
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter '%s': %g is outside [%g, %g]", key, *value, min,
                              max);
    return true;
}

bool ak_config_bool(ak_config_t *cfg, const char *key, bool fallback, bool *value)
{
    tusk_error_t err;
    int rc = tusk_params_bool(cfg->params, key, fallback, value, &err);
    if (rc != TUSK_OK)
        return ak_config_fail(cfg, status_of(rc), "%s", err.message);
    return true;
}

int ak_config_choice(ak_config_t *cfg, const char *key, const char *const *choices, int fallback)
{
    const char *v = tusk_params_get(cfg->params, key);
    if (!v)
        return fallback;
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; choices[i]; i++) {
        if (strcmp(v, choices[i]) == 0)
            return i;
        if (used < sizeof list) {
            int n = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter '%s': '%s' is not one of: %s", key, v, list);
    return -1;
}

/* ---- copying whole frames ------------------------------------------------------- */

bool ak_copier_init(ak_copier_t *c)
{
    c->reader = adf_reader_new(ADF_ON_ERROR_STOP);
    c->writer = adf_writer_new();
    c->resume = 0;
    c->resume_size = 0;
    if (!c->reader || !c->writer) {
        ak_copier_free(c);
        return false;
    }
    return true;
}

void ak_copier_free(ak_copier_t *c)
{
    adf_reader_destroy(&c->reader);
    adf_writer_destroy(&c->writer);
}

void ak_copier_reset(ak_copier_t *c)
{
    c->resume = 0;
    c->resume_size = 0;
}

unsigned ak_copy_frames(ak_copier_t *c, ak_base_t *base, const void *in, unsigned in_size, void *out,
                        unsigned out_size, unsigned *used)
{
    unsigned code = TUSK_ACTOR_OK;
    *used = 0;
    if (!in)
        in_size = 0;
    size_t start = 0;
    if (c->resume_size) {
        if (in_size != c->resume_size) {
            unsigned prev = c->resume_size;
            size_t left = prev - c->resume;
            ak_copier_reset(c);
            return ak_fail(base, &code, TUSK_ACTOR_ESTATE,
                           "called with a new input of %u bytes while %zu bytes of the previous one (%u bytes) "
                           "were still to be copied: after 'more output' the same input must come again",
                           in_size, left, prev);
        }
        start = c->resume;
        ak_copier_reset(c);
    }
    adf_reader_reset(c->reader, in_size ? (const uint8_t *)in + start : NULL, in_size - start, start);
    adf_writer_reset(c->writer, out, out_size);
    adf_frame_t f;
    int rc;
    while ((rc = adf_reader_next(c->reader, &f)) == ADF_OK) {
        if (f.key.length > out_size)
            return ak_fail(base, &code, TUSK_ACTOR_EDATA,
                           "input offset %llu: frame of %u bytes is larger than the whole output buffer of %u "
                           "bytes",
                           (unsigned long long)f.offset, (unsigned)f.key.length, out_size);
        int w = adf_writer_put_frame(c->writer, &f);
        if (w == ADF_EFULL) {
            c->resume = (size_t)f.offset;
            c->resume_size = in_size;
            *used = (unsigned)adf_writer_used(c->writer);
            return TUSK_ACTOR_MORE_OUTPUT;
        }
        if (w != ADF_OK)
            return ak_fail(base, &code, TUSK_ACTOR_EDATA, "input offset %llu: cannot copy the frame: %s",
                           (unsigned long long)f.offset, adf_writer_error(c->writer)->message);
    }
    if (rc != ADF_END)
        return ak_fail(base, &code, TUSK_ACTOR_EDATA, "input buffer of %u bytes: %s", in_size,
                       adf_reader_error(c->reader)->message);
    *used = (unsigned)adf_writer_used(c->writer);
    return TUSK_ACTOR_OK;
}

unsigned ak_check_frames(ak_copier_t *c, ak_base_t *base, const void *in, unsigned in_size)
{
    unsigned code = TUSK_ACTOR_OK;
    adf_reader_reset(c->reader, in_size ? in : NULL, in ? in_size : 0, 0);
    adf_frame_t f;
    int rc;
    while ((rc = adf_reader_next(c->reader, &f)) == ADF_OK)
        ;
    if (rc != ADF_END)
        return ak_fail(base, &code, TUSK_ACTOR_EDATA, "input buffer of %u bytes: %s", in_size,
                       adf_reader_error(c->reader)->message);
    return TUSK_ACTOR_OK;
}
