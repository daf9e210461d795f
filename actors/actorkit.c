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

void ak_config_close(ak_config_t *cfg)
{
    tusk_params_destroy(&cfg->params);
}

static bool config_u64(ak_config_t *cfg, const char *key, uint64_t fallback, uint64_t min, uint64_t max,
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

bool ak_config_base(ak_config_t *cfg, ak_base_t *base)
{
    uint64_t instance, instances;
    if (!config_u64(cfg, "instance", 0, 0, UINT32_MAX, &instance) ||
        !config_u64(cfg, "instances", 1, 1, UINT32_MAX, &instances))
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

/* One entry of a table into its destination. */
static bool read_param(ak_config_t *cfg, const ak_param_t *p, char *settings)
{
    void *dest = settings + p->offset;
    tusk_error_t err;
    int rc = TUSK_OK;
    switch (p->kind) {
    case AK_PARAM_STRING: {
        const char *v = tusk_params_string(cfg->params, p->key, p->text);
        memcpy(dest, &v, sizeof v);
        return true;
    }
    case AK_PARAM_REQUIRED: {
        const char *v = tusk_params_get(cfg->params, p->key);
        if (!v || !*v)
            return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "missing required parameter '%s' (%s)", p->key, p->text);
        memcpy(dest, &v, sizeof v);
        return true;
    }
    case AK_PARAM_U64: {
        uint64_t v;
        if (!config_u64(cfg, p->key, p->u_default, p->u_min, p->u_max, &v))
            return false;
        memcpy(dest, &v, sizeof v);
        return true;
    }
    case AK_PARAM_DOUBLE: {
        double v;
        if ((rc = tusk_params_double(cfg->params, p->key, p->d_default, &v, &err)) != TUSK_OK)
            return ak_config_fail(cfg, status_of(rc), "%s", err.message);
        if (!(v >= p->d_min && v <= p->d_max))
            return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter '%s': %g is outside [%g, %g]", p->key, v,
                                  p->d_min, p->d_max);
        memcpy(dest, &v, sizeof v);
        return true;
    }
    case AK_PARAM_BOOL: {
        bool v;
        if ((rc = tusk_params_bool(cfg->params, p->key, p->b_default, &v, &err)) != TUSK_OK)
            return ak_config_fail(cfg, status_of(rc), "%s", err.message);
        memcpy(dest, &v, sizeof v);
        return true;
    }
    case AK_PARAM_CHOICE: {
        const char *v = tusk_params_get(cfg->params, p->key);
        int k = p->c_default;
        if (v) {
            char list[256] = "";
            size_t used = 0;
            for (k = 0; p->choices[k] && strcmp(v, p->choices[k]) != 0; k++)
                if (used < sizeof list) {
                    int n = snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "", p->choices[k]);
                    used += n > 0 ? (size_t)n : 0;
                }
            if (!p->choices[k])
                return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter '%s': '%s' is not one of: %s", p->key, v,
                                      list);
        }
        memcpy(dest, &k, sizeof k);
        return true;
    }
    default:
        return true; /* read by the actor or a library */
    }
}

/* Every key the table takes, with those of its libraries, once each and
 * NULL-terminated (malloc'd); NULL when out of memory. */
static const char **known_keys(const ak_param_t *params)
{
    size_t n = 0;
    for (const ak_param_t *p = params; p->kind != AK_PARAM_END; p++)
        if (p->kind == AK_PARAM_LIBRARY)
            for (const char *const *k = p->keys(); *k; k++)
                n++;
        else
            n++;
    const char **known = malloc((n + 1) * sizeof *known);
    if (!known)
        return NULL;
    size_t m = 0;
    for (const ak_param_t *p = params; p->kind != AK_PARAM_END; p++) {
        const char *const *list = p->kind == AK_PARAM_LIBRARY ? p->keys() : &p->key;
        size_t count = p->kind == AK_PARAM_LIBRARY ? SIZE_MAX : 1;
        for (size_t i = 0; i < count && list[i]; i++) {
            size_t j = 0;
            while (j < m && strcmp(known[j], list[i]) != 0)
                j++;
            if (j == m)
                known[m++] = list[i];
        }
    }
    known[m] = NULL;
    return known;
}

bool ak_config_open(ak_config_t *cfg, const char *dir, const char *actor, const ak_param_t *params, void *settings,
                    char *message, unsigned message_size, unsigned *error_code)
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
    if (rc != TUSK_OK)
        return ak_config_fail(cfg, status_of(rc), "%s", err.message);
    const char **known = known_keys(params);
    if (!known)
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    rc = tusk_params_expect(cfg->params, known, &err);
    free(known);
    if (rc != TUSK_OK)
        return ak_config_fail(cfg, status_of(rc), "%s: %s", actor, err.message);
    for (const ak_param_t *p = params; p->kind != AK_PARAM_END; p++)
        if (!read_param(cfg, p, settings))
            return false;
    return true;
}

/* ---- copying whole frames ------------------------------------------------------- */

bool ak_copier_init(ak_copier_t *c)
{
    c->reader = adf_reader_new(ADF_ON_ERROR_STOP);
    c->writer = adf_writer_new();
    ak_copier_reset(c);
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
    c->done_frames = 0;
    c->damaged_size = 0;
    c->damage_due = false;
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* Input malformed at `offset` (what: the reader's message, naming the
 * offset): fail with the accounting of the whole input: `frames` frames
 * (the first `passed` bytes) passed on, the rest not (`why`, when not "" :
 * why the frames before the damage could not go either). A filter that
 * analyses its input (`analysed`) also names the frame by its number in
 * the input, counting from 0 (= `frames`: all before it went out). Forgets
 * the pending input. */
static unsigned input_failure(ak_copier_t *c, ak_base_t *base, unsigned in_size, uint64_t offset, uint64_t frames,
                              uint64_t passed, const char *what, const char *why, bool analysed)
{
    unsigned code = TUSK_ACTOR_OK;
    ak_copier_reset(c);
    char frame[48] = "";
    if (analysed)
        snprintf(frame, sizeof frame, "frame %llu: ", (unsigned long long)frames);
    if (offset == ADF_NO_OFFSET || offset > in_size || passed > in_size)
        return ak_fail(base, &code, TUSK_ACTOR_EDATA, "input buffer of %u bytes: %s%s", in_size, frame, what);
    return ak_fail(base, &code, TUSK_ACTOR_EDATA,
                   "input buffer of %u bytes: %s%s; %s before it: %llu frame%s (%llu bytes), not passed on: the %llu "
                   "bytes from offset %llu to the end of the buffer%s",
                   in_size, frame, what, analysed ? "analysed and passed on" : "passed on", (unsigned long long)frames,
                   plural(frames), (unsigned long long)passed, (unsigned long long)(in_size - passed),
                   (unsigned long long)passed, why);
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
        c->resume = 0;
        c->resume_size = 0;
    } else {
        c->done_frames = 0;
    }
    adf_reader_reset(c->reader, in_size ? (const uint8_t *)in + start : NULL, in_size - start, start);
    adf_writer_reset(c->writer, out, out_size);
    adf_frame_t f;
    int rc;
    unsigned frames = 0; /* copied by this call */
    while ((rc = adf_reader_next(c->reader, &f)) == ADF_OK) {
        if (f.key.length > out_size) {
            if (frames > 0)
                break; /* the frames before it go out first */
            ak_copier_reset(c);
            return ak_fail(base, &code, TUSK_ACTOR_EDATA,
                           "input offset %llu: frame of %u bytes is larger than the whole output buffer of %u "
                           "bytes",
                           (unsigned long long)f.offset, (unsigned)f.key.length, out_size);
        }
        int w = adf_writer_put_frame(c->writer, &f);
        if (w == ADF_EFULL)
            break;
        if (w != ADF_OK) {
            ak_copier_reset(c);
            return ak_fail(base, &code, TUSK_ACTOR_EDATA, "input offset %llu: cannot copy the frame: %s",
                           (unsigned long long)f.offset, adf_writer_error(c->writer)->message);
        }
        frames++;
    }
    if (rc == ADF_END) {
        *used = (unsigned)adf_writer_used(c->writer);
        c->done_frames = 0;
        return TUSK_ACTOR_OK;
    }
    /* The output is full (or the next frame is too large for it), or the
     * input is malformed at the error's offset. What was copied goes out
     * first ("more output"); the next call, with the same input, goes on
     * from there (and fails there when nothing before the malformed frame
     * is left to copy). */
    uint64_t stop = rc == ADF_OK ? f.offset : adf_reader_error(c->reader)->offset;
    if (rc != ADF_OK && (frames == 0 || stop == ADF_NO_OFFSET || stop > in_size))
        return input_failure(c, base, in_size, stop, c->done_frames, start, adf_reader_error(c->reader)->message, "",
                             false);
    c->resume = (size_t)stop;
    c->resume_size = in_size;
    c->done_frames += frames;
    *used = (unsigned)adf_writer_used(c->writer);
    return TUSK_ACTOR_MORE_OUTPUT;
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

unsigned ak_forward_frames(ak_copier_t *c, ak_base_t *base, const void *in, unsigned in_size, void *out,
                           unsigned out_size, unsigned *used)
{
    *used = 0;
    if (!in)
        in_size = 0;
    if (c->resume_size == 0) {
        if (ak_check_frames(c, base, in, in_size) == TUSK_ACTOR_OK)
            return TUSK_ACTOR_FORWARD;
        /* Malformed: copy the frames before the damage, if each fits. */
        adf_error_t damage = *adf_reader_error(c->reader);
        uint64_t bad = damage.offset;
        if (bad == ADF_NO_OFFSET || bad > in_size)
            return input_failure(c, base, in_size, bad, 0, 0, damage.message, "", false);
        adf_reader_reset(c->reader, in, (size_t)bad, 0);
        adf_frame_t f;
        uint32_t largest = 0;
        while (adf_reader_next(c->reader, &f) == ADF_OK)
            largest = f.key.length > largest ? f.key.length : largest;
        if (largest > out_size) {
            char why[128];
            snprintf(why, sizeof why, " (a frame before it, of %u bytes, is larger than the whole output buffer of %u "
                     "bytes)", (unsigned)largest, out_size);
            return input_failure(c, base, in_size, bad, 0, 0, damage.message, why, false);
        }
    }
    return ak_copy_frames(c, base, in, in_size, out, out_size, used);
}

/* ---- damaged inputs ------------------------------------------------------------------ */

unsigned ak_input_check(ak_copier_t *c, ak_base_t *base, const void *in, unsigned in_size, unsigned *valid)
{
    c->damaged_size = 0;
    c->damage_due = false;
    *valid = 0;
    if (!in)
        in_size = 0;
    adf_reader_reset(c->reader, in_size ? in : NULL, in_size, 0);
    adf_frame_t f;
    uint64_t frames = 0;
    int rc;
    while ((rc = adf_reader_next(c->reader, &f)) == ADF_OK)
        frames++;
    if (rc == ADF_END) {
        *valid = in_size;
        return TUSK_ACTOR_OK;
    }
    const adf_error_t *e = adf_reader_error(c->reader);
    if (e->offset == ADF_NO_OFFSET || e->offset > in_size || e->offset == 0)
        return input_failure(c, base, in_size, e->offset, frames, 0, e->message, "", true);
    ak_input_damage(c, in_size, e->offset, frames, e->message);
    *valid = (unsigned)e->offset;
    return TUSK_ACTOR_OK;
}

void ak_input_damage(ak_copier_t *c, unsigned in_size, uint64_t offset, uint64_t frame, const char *what)
{
    c->damaged_size = in_size;
    c->damage_offset = offset;
    c->damage_frame = frame;
    c->damage_due = false;
    snprintf(c->damage, sizeof c->damage, "%s", what);
}

bool ak_input_bisect(ak_copier_t *c, const void *in, unsigned valid, bool (*read)(void *ctx, unsigned size),
                     void *ctx, uint64_t *offset, uint64_t *frame)
{
    adf_reader_reset(c->reader, valid ? in : NULL, valid, 0);
    adf_frame_t f;
    uint64_t n = 0;
    while (adf_reader_next(c->reader, &f) == ADF_OK)
        n++;
    if (n == 0 || read(ctx, valid))
        return false;
    /* The first `lo` frames read, the first `hi` do not: the frame at
     * fault is in [lo, hi); halve until it is frame lo. */
    uint64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2, end = 0;
        adf_reader_reset(c->reader, in, valid, 0);
        for (uint64_t k = 0; k < mid && adf_reader_next(c->reader, &f) == ADF_OK; k++)
            end = f.offset + f.key.length;
        if (read(ctx, (unsigned)end))
            lo = mid;
        else
            hi = mid;
    }
    /* Frame lo is the one: its offset. */
    adf_reader_reset(c->reader, in, valid, 0);
    for (uint64_t k = 0; k <= lo && adf_reader_next(c->reader, &f) == ADF_OK; k++)
        *offset = f.offset;
    *frame = lo;
    return true;
}

unsigned ak_input_done(ak_copier_t *c, ak_base_t *base, unsigned code, unsigned used)
{
    if (code != TUSK_ACTOR_OK || c->damaged_size == 0)
        return code;
    c->damage_due = true;
    if (used > 0)
        return TUSK_ACTOR_MORE_OUTPUT;
    unsigned failed = TUSK_ACTOR_EDATA;
    ak_input_failed(c, base, &failed);
    return failed;
}

bool ak_input_failed(ak_copier_t *c, ak_base_t *base, unsigned *error_code)
{
    if (c->damaged_size == 0 || !c->damage_due)
        return false;
    *error_code = input_failure(c, base, c->damaged_size, c->damage_offset, c->damage_frame, c->damage_offset,
                                c->damage, "", true);
    return true;
}

/* ---- what arrived ------------------------------------------------------------------ */

void ak_types_reset(ak_types_t *t)
{
    memset(t, 0, sizeof *t);
}

static void types_add(ak_types_t *t, uint32_t type)
{
    t->frames++;
    for (unsigned i = 0; i < t->n; i++)
        if (t->type[i] == type) {
            t->count[i]++;
            return;
        }
    if (t->n == AK_TYPES_MAX) {
        t->more++;
        return;
    }
    t->type[t->n] = type;
    t->count[t->n++] = 1;
}

void ak_types_tally(ak_types_t *t, ak_copier_t *c, const void *in, unsigned in_size)
{
    t->buffers++;
    adf_reader_reset(c->reader, in_size ? in : NULL, in ? in_size : 0, 0);
    adf_frame_t f;
    while (adf_reader_next(c->reader, &f) == ADF_OK)
        types_add(t, f.key.type);
}

uint64_t ak_types_count(const ak_types_t *t, uint32_t type)
{
    for (unsigned i = 0; i < t->n; i++)
        if (t->type[i] == type)
            return t->count[i];
    return 0;
}

void ak_types_format(const ak_types_t *t, char *buf, size_t cap)
{
    size_t used = 0;
    if (cap)
        buf[0] = '\0';
    for (unsigned i = 0; i < t->n && used < cap; i++) {
        const char *name = adf_type_name(t->type[i]);
        char hex[16];
        if (!name) {
            snprintf(hex, sizeof hex, "0x%08X", (unsigned)t->type[i]);
            name = hex;
        }
        int k = snprintf(buf + used, cap - used, "%s%s %llu", i ? ", " : "", name, (unsigned long long)t->count[i]);
        used += k > 0 ? (size_t)k : 0;
    }
    if (t->more && used < cap)
        snprintf(buf + used, cap - used, ", %llu of further types", (unsigned long long)t->more);
    else if (t->n == 0 && cap)
        snprintf(buf, cap, "none");
}

unsigned ak_types_expect(ak_base_t *base, const char *actor, const ak_types_t *t, uint32_t expected,
                         const char *does, const uint32_t *passed, size_t n_passed, unsigned *error_code)
{
    if (ak_types_count(t, expected) > 0)
        return TUSK_ACTOR_OK;
    const char *want = adf_type_name(expected) ? adf_type_name(expected) : "?";
    uint64_t wrong = t->more; /* unknown: counted as data */
    for (unsigned i = 0; i < t->n; i++) {
        bool by_design = adf_type_kind(t->type[i]) != 0x01u; /* meta and conf frames */
        for (size_t k = 0; k < n_passed && !by_design; k++)
            by_design = t->type[i] == passed[k];
        wrong += by_design ? 0 : t->count[i];
    }
    char seen[384];
    ak_types_format(t, seen, sizeof seen);
    if (wrong > 0)
        return ak_fail(base, error_code, TUSK_ACTOR_EDATA,
                       "no %s frame arrived, which %s %s: %llu frames in %llu buffers, of types %s (is it fed by "
                       "the right actor?)",
                       want, actor, does, (unsigned long long)t->frames, (unsigned long long)t->buffers, seen);
    fprintf(stderr, "%s %s: WARNING: no %s frame arrived (%llu buffers, %llu frames%s%s)\n", actor, base->label, want,
            (unsigned long long)t->buffers, (unsigned long long)t->frames, t->frames ? ": " : "",
            t->frames ? seen : "");
    return TUSK_ACTOR_OK;
}
