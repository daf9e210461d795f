/* actorkit.c - libtusk-actorkit, helpers for writing actors (the built-in
 * ones and yours); see tusk/actorkit.h and README.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/actorkit.h"
#include "base/clock.h"
#include "base/grow.h"

unsigned ak_version(void)
{
    return TUSK_ACTORKIT_VERSION;
}

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
    size_t n = strnlen(what, sizeof c->damage - 1); /* cut short as snprintf would */
    memcpy(c->damage, what, n);
    c->damage[n] = '\0';
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

void ak_types_add(ak_types_t *t, uint32_t type)
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
        ak_types_add(t, f.key.type);
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

/* ---- reconstruction systems ------------------------------------------------------ */

const char *const ak_backends[] = {"reference", "fast", "opencl", NULL};
const char *const ak_picture_formats[] = {"png", "svg", NULL};

/* What the three skeletons' register share: read the parameters, allocate
 * the instance (its ak_base_t first), fill the base, then `init` the
 * skeleton's state (its kind first: `destroy` needs it) and `open` the
 * actor's. On failure the instance goes to `destroy` (NULL is returned,
 * the message in the host's buffer). */
typedef struct system_setup {
    const char *actor;
    size_t size;
    const ak_param_t *params;
    void *settings;
    bool (*init)(ak_config_t *cfg, void *self, const void *kind, const void *settings);
    bool (*open)(ak_config_t *cfg, void *self, const void *settings);
    void (*destroy)(void *self);
} system_setup_t;

static void *system_register(const system_setup_t *s, const void *kind, const char *dir, char *message,
                             unsigned message_size, unsigned *error_code)
{
    ak_config_t cfg;
    void *self = NULL;
    if (ak_config_open(&cfg, dir, s->actor, s->params, s->settings, message, message_size, error_code)) {
        self = calloc(1, s->size);
        if (!self)
            ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        else if (!ak_config_base(&cfg, self) || !s->init(&cfg, self, kind, s->settings) ||
                 !s->open(&cfg, self, s->settings)) {
            s->destroy(self);
            self = NULL;
        }
    }
    ak_config_close(&cfg);
    return self;
}

/* The libtusk status of a simulator or an analysis as an actor status. */
static unsigned resource_or(int status, unsigned otherwise)
{
    return status == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : otherwise;
}

/* ---- producer ---- */

static bool source_init(ak_config_t *cfg, void *self, const void *kind, const void *settings)
{
    ak_source_t *s = self;
    (void)settings;
    s->kind = kind;
    s->next = s->base.instance;
    s->step = s->base.instances ? s->base.instances : 1;
    if (!(s->writer = adf_writer_new()))
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    return true;
}

void ak_source_free(void *instance)
{
    ak_source_t *s = instance;
    if (!s)
        return;
    if (s->kind && s->kind->close)
        s->kind->close(s);
    adf_writer_destroy(&s->writer);
    free(s->staged);
    free(s);
}

void *ak_source_register(const ak_source_kind_t *kind, const ak_param_t *params, void *settings, const char *dir,
                         char *message, unsigned message_size, unsigned *error_code)
{
    const system_setup_t setup = {kind->actor, kind->size, params, settings, source_init, kind->open,
                                  ak_source_free};
    return system_register(&setup, kind, dir, message, message_size, error_code);
}

void ak_source_reset(ak_source_t *s)
{
    s->next = s->base.instance;
    s->made = 0;
    s->in_unit = s->ended = false;
    s->staged_size = 0;
    if (s->kind->reset)
        s->kind->reset(s);
}

/* Start the next unit (a whole-unit producer stages it); false at the end
 * or on failure (*error_code set). */
static bool source_next(ak_source_t *s, unsigned *error_code)
{
    const ak_source_kind_t *k = s->kind;
    if (s->units && s->next >= s->units)
        return false;
    tusk_error_t err;
    int st = k->make(s, s->next, &s->number, &s->pieces, &err);
    if (st != TUSK_OK) {
        ak_fail(&s->base, error_code, resource_or(st, TUSK_ACTOR_ERROR), "%s", err.message);
        return false;
    }
    if (!k->piece) {
        size_t need = k->bytes(s, 0);
        if (tusk_grow(&s->staged, &s->staged_cap, need, 1) != 0) {
            ak_fail(&s->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes for one %s)", need, k->unit);
            return false;
        }
        adf_writer_reset(s->writer, s->staged, s->staged_cap);
        if (k->encode(s, 0, s->writer, &err) != TUSK_OK) {
            ak_fail(&s->base, error_code, TUSK_ACTOR_ERROR, "%s", err.message);
            return false;
        }
        s->staged_size = adf_writer_used(s->writer);
    }
    s->next += s->step;
    s->made++;
    s->piece = 0;
    s->in_unit = true;
    return true;
}

void ak_source_block(ak_source_t *s, void *out, unsigned out_size, unsigned *used_out, unsigned *error_code)
{
    const ak_source_kind_t *k = s->kind;
    ak_ok(error_code);
    *used_out = 0;
    if (s->ended) {
        *error_code = TUSK_ACTOR_END_OF_DATA;
        return;
    }
    size_t used = 0;
    for (;;) {
        if (!s->in_unit && !source_next(s, error_code)) {
            if (*error_code != TUSK_ACTOR_OK)
                return;
            s->ended = true;
            *error_code = TUSK_ACTOR_END_OF_DATA;
            break;
        }
        size_t need = k->piece ? k->bytes(s, s->piece) : s->staged_size;
        if (need > out_size) {
            if (k->piece)
                ak_fail(&s->base, error_code, TUSK_ACTOR_EDATA,
                        "%s %u, %s %zu: its frames are %zu bytes, more than the whole output buffer of %u bytes "
                        "(give the producer a larger <size>)",
                        k->unit, (unsigned)s->number, k->piece, s->piece, need, out_size);
            else
                ak_fail(&s->base, error_code, TUSK_ACTOR_EDATA,
                        "%s %u is %zu bytes, larger than the whole output buffer of %u bytes (give the producer a "
                        "larger <size>)",
                        k->unit, (unsigned)s->number, need, out_size);
            return;
        }
        if (need > out_size - used)
            break;
        if (k->piece) {
            tusk_error_t err;
            adf_writer_reset(s->writer, (uint8_t *)out + used, out_size - used);
            if (k->encode(s, s->piece, s->writer, &err) != TUSK_OK) {
                ak_fail(&s->base, error_code, TUSK_ACTOR_ERROR, "%s", err.message);
                return;
            }
            used += adf_writer_used(s->writer);
        } else {
            memcpy((uint8_t *)out + used, s->staged, s->staged_size);
            used += s->staged_size;
            s->staged_size = 0;
        }
        if (++s->piece == s->pieces)
            s->in_unit = false;
    }
    *used_out = (unsigned)used;
}

/* ---- filter ---- */

static bool batch_init(ak_config_t *cfg, void *self, const void *kind, const void *settings)
{
    ak_batch_t *b = self;
    (void)settings;
    b->kind = kind;
    if (!ak_copier_init(&b->copier) || !(b->writer = adf_writer_new()))
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    return true;
}

void ak_batch_free(void *instance)
{
    ak_batch_t *b = instance;
    if (!b)
        return;
    if (b->kind && b->kind->close)
        b->kind->close(b);
    adf_writer_destroy(&b->writer);
    ak_copier_free(&b->copier);
    free(b->staged);
    free(b);
}

void *ak_batch_register(const ak_batch_kind_t *kind, const ak_param_t *params, void *settings, const char *dir,
                        char *message, unsigned message_size, unsigned *error_code)
{
    const system_setup_t setup = {kind->actor, kind->size, params, settings, batch_init, kind->open, ak_batch_free};
    return system_register(&setup, kind, dir, message, message_size, error_code);
}

void ak_batch_reset(ak_batch_t *b)
{
    ak_copier_reset(&b->copier);
    b->staged_size = 0;
    b->buffers = b->staged_buffers = b->offset = 0;
    b->seconds = 0;
    if (b->kind->reset)
        b->kind->reset(b);
}

/* kind->read on the first `size` bytes of an input, for ak_input_bisect. */
typedef struct batch_probe {
    ak_batch_t *batch;
    const void *in;
} batch_probe_t;

static bool batch_read_prefix(void *ctx, unsigned size)
{
    batch_probe_t *p = ctx;
    tusk_error_t err;
    return p->batch->kind->read(p->batch, p->in, size, 0, &err) == TUSK_OK;
}

/* The analysis of one input buffer (its frames up to the first one that
 * is malformed or does not decode: the failure follows their output, see
 * ak_input_check); its output straight into out when it fits (*direct
 * set), else into b->staged. */
static unsigned batch_analyse(ak_batch_t *b, const void *in, unsigned in_size, void *out, unsigned out_size,
                              bool *direct, unsigned *error_code)
{
    const ak_batch_kind_t *k = b->kind;
    unsigned valid;
    unsigned code = ak_input_check(&b->copier, &b->base, in, in_size, &valid);
    if (code != TUSK_ACTOR_OK) {
        *error_code = code;
        return code;
    }
    tusk_error_t err;
    b->buffers++;
    uint64_t base = b->offset;
    b->offset += in_size;
    if (k->read(b, in, valid, base, &err) != TUSK_OK) {
        /* Which frame, in the buffer's own offsets: the input is taken up
         * to it. */
        batch_probe_t probe = {b, in};
        uint64_t offset, frame;
        bool found = err.code != TUSK_ENOMEM && k->read(b, in, valid, 0, &err) != TUSK_OK &&
                     err.code != TUSK_ENOMEM &&
                     ak_input_bisect(&b->copier, in, valid, batch_read_prefix, &probe, &offset, &frame);
        if (found) {
            ak_input_damage(&b->copier, in_size, offset, frame, err.message);
            valid = (unsigned)offset;
        }
        if (!found || k->read(b, in, valid, base, &err) != TUSK_OK)
            return ak_fail(&b->base, error_code, resource_or(err.code, TUSK_ACTOR_EDATA),
                           "input buffer %llu (input offsets count the bytes this instance received): %s",
                           (unsigned long long)b->buffers, err.message);
    }
    double t0 = tusk_clock_s();
    int st = k->run(b, &err);
    b->seconds += tusk_clock_s() - t0;
    if (st != TUSK_OK)
        return ak_fail(&b->base, error_code,
                       resource_or(st, st == TUSK_EINVAL || (st == TUSK_ELIMIT && k->limit_is_data)
                                           ? TUSK_ACTOR_EDATA
                                           : TUSK_ACTOR_ERROR),
                       "input buffer %llu: %s", (unsigned long long)b->buffers, err.message);
    size_t need = (size_t)valid + k->extra(b);
    *direct = need <= out_size;
    if (!*direct) {
        if (tusk_grow(&b->staged, &b->staged_cap, need, 1) != 0)
            return ak_fail(&b->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)", need);
        b->staged_buffers++;
    }
    adf_writer_reset(b->writer, *direct ? out : b->staged, *direct ? out_size : b->staged_cap);
    if (k->write(b, in, valid, b->writer, &err) != TUSK_OK)
        return ak_fail(&b->base, error_code, TUSK_ACTOR_ERROR, "writing the output: %s", err.message);
    b->staged_size = adf_writer_used(b->writer);
    return TUSK_ACTOR_OK;
}

void ak_batch_block(ak_batch_t *b, const void *in, unsigned in_size, void *out, unsigned out_size, unsigned *used,
                    unsigned *error_code)
{
    ak_ok(error_code);
    *used = 0;
    if (!in)
        in_size = 0;
    /* A damaged input whose valid part went out: now its failure. */
    if (ak_input_failed(&b->copier, &b->base, error_code))
        return;
    /* A call after MORE_OUTPUT goes on copying what this input gave. */
    if (b->copier.resume_size == 0) {
        bool direct = false;
        if (batch_analyse(b, in, in_size, out, out_size, &direct, error_code) != TUSK_ACTOR_OK)
            return;
        if (direct) {
            *used = (unsigned)b->staged_size;
            *error_code = ak_input_done(&b->copier, &b->base, TUSK_ACTOR_OK, *used);
            return;
        }
    }
    unsigned code = ak_copy_frames(&b->copier, &b->base, b->staged, (unsigned)b->staged_size, out, out_size, used);
    *error_code = ak_input_done(&b->copier, &b->base, code, *used);
}

/* ---- QA consumer ---- */

bool ak_report_label(ak_config_t *cfg, const char *label, char *dest, size_t cap)
{
    if (strlen(label) >= cap || strpbrk(label, ",\"\n"))
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG,
                              "parameter 'label': '%s' is longer than %zu characters or has a comma or quote", label,
                              cap - 1);
    snprintf(dest, cap, "%s", label);
    return true;
}

static bool report_init(ak_config_t *cfg, void *self, const void *kind, const void *settings)
{
    ak_report_t *r = self;
    const ak_report_settings_t *set = settings;
    (void)cfg;
    r->kind = kind;
    r->plot = r->pictured = set->plot;
    snprintf(r->format, sizeof r->format, "%s", ak_picture_formats[set->format]);
    return true;
}

/* The actor's open, then the folder. */
static bool report_open(ak_config_t *cfg, void *self, const void *settings)
{
    ak_report_t *r = self;
    const ak_report_settings_t *set = settings;
    if (!r->kind->open(cfg, self, settings))
        return false;
    int w = r->base.instances > 1 ? snprintf(r->dir, sizeof r->dir, "%s/instance-%u", set->out, r->base.instance)
                                  : snprintf(r->dir, sizeof r->dir, "%s", set->out);
    if (w < 0 || (size_t)w >= sizeof r->dir)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter 'out': the folder name is too long");
    return true;
}

void ak_report_free(void *instance)
{
    ak_report_t *r = instance;
    if (!r)
        return;
    if (r->kind)
        r->kind->calls->destroy(r);
    free(r);
}

void *ak_report_register(const ak_report_kind_t *kind, const ak_param_t *params, void *settings, const char *dir,
                         char *message, unsigned message_size, unsigned *error_code)
{
    const system_setup_t setup = {kind->actor, kind->size, params, settings, report_init, report_open,
                                  ak_report_free};
    return system_register(&setup, kind, dir, message, message_size, error_code);
}

/* A fresh analysis for every run. */
void ak_report_initialise(ak_report_t *r, unsigned *error_code)
{
    const ak_report_calls_t *c = r->kind->calls;
    ak_ok(error_code);
    c->destroy(r);
    tusk_error_t err;
    int st = c->create(r, &err);
    r->live = st == TUSK_OK;
    if (!r->live)
        ak_fail(&r->base, error_code, resource_or(st, TUSK_ACTOR_ECONFIG), "%s", err.message);
    r->buffers = r->offset = 0;
}

void ak_report_block(ak_report_t *r, const void *in, unsigned in_size, unsigned *error_code)
{
    ak_ok(error_code);
    if (!r->live) {
        ak_fail(&r->base, error_code, TUSK_ACTOR_ESTATE, "process_block before process_initialise");
        return;
    }
    if (!in)
        in_size = 0;
    r->buffers++;
    tusk_error_t err;
    int st = r->kind->calls->feed(r, in, in_size, r->offset, &err);
    if (st != TUSK_OK)
        ak_fail(&r->base, error_code, resource_or(st, TUSK_ACTOR_EDATA),
                "input buffer %llu (%u bytes; input offsets count the bytes this instance received): %s",
                (unsigned long long)r->buffers, in_size, err.message);
    r->offset += in_size;
}

void ak_report_stop(ak_report_t *r, unsigned *error_code)
{
    const ak_report_kind_t *k = r->kind;
    ak_ok(error_code);
    if (!r->live)
        return;
    tusk_error_t err;
    if (k->calls->finish(r, &err) != TUSK_OK) {
        ak_fail(&r->base, error_code, TUSK_ACTOR_EDATA, "%s", err.message);
        return;
    }
    printf("%s %s: %llu buffers, %llu bytes\n", k->actor, r->base.label, (unsigned long long)r->buffers,
           (unsigned long long)r->offset);
    k->calls->print(r, stdout);
    int st = k->calls->write(r, r->dir, r->plot, r->format, &err);
    if (st != TUSK_OK)
        ak_fail(&r->base, error_code, resource_or(st, TUSK_ACTOR_EIO), "%s", err.message);
    else
        printf("%s %s: files in %s/ (%s%s)\n", k->actor, r->base.label, r->dir, k->files,
               r->pictured ? k->picture : "");
    fflush(stdout);
}

void ak_report_reset(ak_report_t *r)
{
    r->kind->calls->destroy(r);
    r->live = false;
}
