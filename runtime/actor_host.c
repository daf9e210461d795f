/* actor_host.c - load actor libraries, create instances, call their hooks. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tusk/actor_host.h"
#include "tusk/params.h"
#include "tusk_private.h"

struct tusk_actor_lib {
    void *dl;
    char *path;
    tusk_actor_class_t actor_class;
    const tusk_actor_descriptor_t *descriptor;
    tusk_process_config_fn config;
    tusk_process_register_fn reg;
    tusk_process_register_dir_fn reg_dir;
    tusk_process_hook_fn initialise, start, stop, pause, resume, reset, unload;
    tusk_process_block_producer_fn produce;
    tusk_process_block_filter_fn filter;
    tusk_process_block_consumer_fn consume;
    tusk_process_block_input_fn filter_input;
    tusk_process_flush_fn flush;
    tusk_process_error_message_fn error_message;
    tusk_process_changeable_fn changeable;
    tusk_process_update_fn update;
    tusk_actor_note_t *note; /* the host's, or NULL */
};

struct tusk_actor {
    tusk_actor_lib_t *lib;
    void *handle;
    char label[128];
    uint64_t blocks;
};

/* ---- the note of the hook running ---------------------------------------------- */

/* Before a hook call of instance `a` (`label` is its label; `block` the
 * buffer number, 0 for other hooks). The fields first, then active: a
 * signal arriving in between sees an idle note rather than a torn one. */
static void note_enter(tusk_actor_lib_t *lib, const char *label, const char *hook, uint64_t block)
{
    tusk_actor_note_t *n = lib->note;
    if (!n)
        return;
    n->active = 0;
    n->label = label;
    n->library = lib->path;
    n->hook = hook;
    n->buffer = block;
    n->active = 1;
}

static void note_leave(tusk_actor_lib_t *lib)
{
    if (lib->note)
        lib->note->active = 0;
}

void tusk_actor_lib_set_note(tusk_actor_lib_t *lib, tusk_actor_note_t *note)
{
    if (lib)
        lib->note = note;
}

/* Append s (async-signal-safe: no stdio). */
static size_t put_text(char *buf, size_t size, size_t n, const char *s)
{
    for (; s && *s && n + 1 < size; s++)
        buf[n++] = *s;
    return n;
}

size_t tusk_actor_note_format(const tusk_actor_note_t *note, char *buf, size_t size)
{
    if (!buf || size == 0)
        return 0;
    size_t n = 0;
    if (!note || !note->active) {
        n = put_text(buf, size, n, "no actor hook was running");
    } else {
        n = put_text(buf, size, n, "actor ");
        n = put_text(buf, size, n, note->label ? note->label : "?");
        n = put_text(buf, size, n, " (library ");
        n = put_text(buf, size, n, note->library ? note->library : "?");
        n = put_text(buf, size, n, "), hook ");
        n = put_text(buf, size, n, note->hook ? note->hook : "?");
        if (note->buffer) {
            char digits[24];
            size_t k = sizeof digits;
            digits[--k] = '\0';
            uint64_t v = note->buffer;
            do {
                digits[--k] = (char)('0' + v % 10);
                v /= 10;
            } while (v && k > 0);
            n = put_text(buf, size, n, ", buffer ");
            n = put_text(buf, size, n, digits + k);
        }
    }
    buf[n] = '\0';
    return n;
}

const char *tusk_actor_status_string(unsigned int code)
{
    switch (code) {
    case TUSK_ACTOR_OK: return "success";
    case TUSK_ACTOR_ERROR: return "failure";
    case TUSK_ACTOR_ECONFIG: return "bad configuration";
    case TUSK_ACTOR_EDATA: return "malformed input data";
    case TUSK_ACTOR_ERESOURCE: return "resource unavailable";
    case TUSK_ACTOR_EIO: return "input/output error";
    case TUSK_ACTOR_ESTATE: return "called in the wrong state";
    case TUSK_ACTOR_END_OF_DATA: return "end of data";
    case TUSK_ACTOR_MORE_OUTPUT: return "more output follows";
    case TUSK_ACTOR_FORWARD: return "forward the input unchanged";
    default: return "unknown status";
    }
}

/* dlsym into a function pointer without casting an object pointer. */
#define RESOLVE(lib, field, name)                                                \
    do {                                                                         \
        void *sym_ = dlsym((lib)->dl, (name));                                   \
        memcpy(&(lib)->field, &sym_, sizeof(lib)->field);                        \
    } while (0)

int tusk_actor_lib_open(tusk_actor_lib_t **out, const char *path, tusk_actor_class_t actor_class,
                        tusk_error_t *err)
{
    *out = NULL;
    tusk_actor_lib_t *lib = calloc(1, sizeof *lib);
    if (!lib || !(lib->path = tusk_strdup(path))) {
        free(lib);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    lib->actor_class = actor_class;
    dlerror();
    lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->dl) {
        const char *why = dlerror();
        tusk_error_set(err, TUSK_ELOAD, "cannot load actor library %s: %s", path, why ? why : "unknown error");
        tusk_actor_lib_close(&lib);
        return TUSK_ELOAD;
    }
    lib->descriptor = dlsym(lib->dl, TUSK_ACTOR_DESCRIPTOR_SYMBOL);
    if (lib->descriptor && lib->descriptor->abi_version != TUSK_ACTOR_ABI_VERSION) {
        tusk_error_set(err, TUSK_EABI,
                       "actor library %s was built for tusk actor ABI version %u, this host speaks version %u: "
                       "rebuild it against this tusk's actor.h",
                       path, (unsigned)lib->descriptor->abi_version, TUSK_ACTOR_ABI_VERSION);
        tusk_actor_lib_close(&lib);
        return TUSK_EABI;
    }
    RESOLVE(lib, config, "process_config");
    RESOLVE(lib, reg, "process_register");
    RESOLVE(lib, reg_dir, "process_register_dir");
    RESOLVE(lib, initialise, "process_initialise");
    RESOLVE(lib, start, "process_start");
    RESOLVE(lib, stop, "process_stop");
    RESOLVE(lib, pause, "process_pause");
    RESOLVE(lib, resume, "process_resume");
    RESOLVE(lib, reset, "process_reset");
    RESOLVE(lib, unload, "process_unload");
    RESOLVE(lib, flush, "process_flush");
    RESOLVE(lib, error_message, "process_error_message");
    RESOLVE(lib, changeable, "process_changeable");
    RESOLVE(lib, update, "process_update");
    switch (actor_class) {
    case TUSK_PRODUCER: RESOLVE(lib, produce, "process_block"); break;
    case TUSK_FILTER:
        RESOLVE(lib, filter, "process_block");
        RESOLVE(lib, filter_input, "process_block_input");
        break;
    case TUSK_CONSUMER: RESOLVE(lib, consume, "process_block"); break;
    }
    const char *missing = NULL;
    if (!lib->config)
        missing = "process_config";
    else if (!lib->reg && !lib->reg_dir)
        missing = "process_register";
    else if (!lib->initialise)
        missing = "process_initialise";
    else if (!lib->produce && !lib->filter && !lib->filter_input && !lib->consume)
        missing = actor_class == TUSK_FILTER ? "process_block (or process_block_input)" : "process_block";
    if (missing) {
        tusk_error_set(err, TUSK_ELOAD, "actor library %s lacks the required hook %s", path, missing);
        tusk_actor_lib_close(&lib);
        return TUSK_ELOAD;
    }
    *out = lib;
    return TUSK_OK;
}

void tusk_actor_lib_close(tusk_actor_lib_t **lib)
{
    if (!lib || !*lib)
        return;
    const char *keep = getenv("TUSK_NO_DLCLOSE");
    if ((*lib)->dl && !(keep && *keep && strcmp(keep, "0") != 0))
        dlclose((*lib)->dl);
    free((*lib)->path);
    free(*lib);
    *lib = NULL;
}

int tusk_actor_config_folder(const tusk_actor_spec_t *spec, unsigned index, const char *host_dir, const char **dir,
                             bool *made, tusk_error_t *err)
{
    *dir = NULL;
    *made = false;
    if (spec->config_dir) {
        *dir = spec->config_dir;
        return TUSK_OK;
    }
    int rc = tusk_actor_write_config(host_dir, spec, index, err);
    if (rc == TUSK_OK) {
        *dir = host_dir;
        *made = true;
    }
    return rc;
}

const tusk_actor_descriptor_t *tusk_actor_lib_descriptor(const tusk_actor_lib_t *lib)
{
    return lib->descriptor;
}

const char *tusk_actor_lib_path(const tusk_actor_lib_t *lib)
{
    return lib->path;
}

int tusk_actor_write_config(const char *dir, const tusk_actor_spec_t *spec, unsigned index, tusk_error_t *err)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot create the configuration folder of %s[%u]: %s", dir,
                              spec->name, index, strerror(errno));
    tusk_params_t *p = tusk_params_new();
    if (!p)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    char num[32];
    int rc = TUSK_OK;
    for (unsigned i = 0; i < spec->n_params && rc == TUSK_OK; i++)
        rc = tusk_params_set(p, spec->param_keys[i], spec->param_values[i], err);
    if (rc == TUSK_OK)
        rc = tusk_params_set(p, "actor", spec->name, err);
    snprintf(num, sizeof num, "%u", index);
    if (rc == TUSK_OK)
        rc = tusk_params_set(p, "instance", num, err);
    snprintf(num, sizeof num, "%u", spec->instances);
    if (rc == TUSK_OK)
        rc = tusk_params_set(p, "instances", num, err);
    if (rc == TUSK_OK)
        rc = tusk_params_save(p, dir, err);
    tusk_params_destroy(&p);
    return rc;
}

/* Turn a hook's status into TUSK_OK or a full report. `block` is the
 * 1-based buffer number for block hooks, 0 for the others. `ask` says
 * whether the instance may still be asked for its message (not after
 * process_unload, which frees it). */
static int report_from(tusk_actor_t *a, const char *hook, unsigned code, uint64_t block, bool ask, tusk_error_t *err)
{
    const char *own = ask && a->lib->error_message ? a->lib->error_message(a->handle) : NULL;
    char where[64] = "";
    if (block)
        snprintf(where, sizeof where, " on buffer %llu", (unsigned long long)block);
    return tusk_error_set(err, TUSK_EACTOR, "actor %s: %s failed%s with status %u (%s)%s%s", a->label, hook, where,
                          code, tusk_actor_status_string(code), own && *own ? ": " : "", own ? own : "");
}

static int report(tusk_actor_t *a, const char *hook, unsigned code, uint64_t block, tusk_error_t *err)
{
    return report_from(a, hook, code, block, true, err);
}

int tusk_actor_new(tusk_actor_t **out, tusk_actor_lib_t *lib, const char *name, unsigned index,
                   const char *config_dir, tusk_error_t *err)
{
    *out = NULL;
    tusk_actor_t *a = calloc(1, sizeof *a);
    if (!a)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    a->lib = lib;
    snprintf(a->label, sizeof a->label, "%s[%u]", name, index);
    unsigned code = 0;
    note_enter(lib, a->label, "process_config", 0);
    lib->config(config_dir, &code);
    note_leave(lib);
    if (code != TUSK_ACTOR_OK) {
        report(a, "process_config", code, 0, err);
        free(a);
        return TUSK_EACTOR;
    }
    if (lib->reg_dir) {
        char msg[512] = "";
        note_enter(lib, a->label, "process_register_dir", 0);
        a->handle = lib->reg_dir(config_dir, msg, sizeof msg, &code);
        note_leave(lib);
        msg[sizeof msg - 1] = '\0';
        if (code != TUSK_ACTOR_OK) {
            tusk_error_set(err, TUSK_EACTOR, "actor %s: process_register_dir failed with status %u (%s)%s%s",
                           a->label, code, tusk_actor_status_string(code), msg[0] ? ": " : "", msg);
            free(a);
            return TUSK_EACTOR;
        }
    } else {
        note_enter(lib, a->label, "process_register", 0);
        a->handle = lib->reg(&code);
        note_leave(lib);
        if (code != TUSK_ACTOR_OK) {
            report(a, "process_register", code, 0, err);
            free(a);
            return TUSK_EACTOR;
        }
    }
    *out = a;
    return TUSK_OK;
}

int tusk_actor_destroy(tusk_actor_t **actor, tusk_error_t *err)
{
    if (!actor || !*actor)
        return TUSK_OK;
    tusk_actor_t *a = *actor;
    int rc = TUSK_OK;
    if (a->lib->unload) {
        unsigned code = 0;
        note_enter(a->lib, a->label, "process_unload", 0);
        a->lib->unload(a->handle, &code);
        note_leave(a->lib);
        if (code != TUSK_ACTOR_OK)
            rc = report_from(a, "process_unload", code, 0, false, err);
    }
    free(a);
    *actor = NULL;
    return rc;
}

const char *tusk_actor_label(const tusk_actor_t *a)
{
    return a->label;
}

uint64_t tusk_actor_blocks(const tusk_actor_t *a)
{
    return a->blocks;
}

static int call_hook(tusk_actor_t *a, tusk_process_hook_fn fn, const char *hook, tusk_error_t *err)
{
    if (!fn)
        return TUSK_OK;
    unsigned code = 0;
    note_enter(a->lib, a->label, hook, 0);
    fn(a->handle, &code);
    note_leave(a->lib);
    return code == TUSK_ACTOR_OK ? TUSK_OK : report(a, hook, code, 0, err);
}

int tusk_actor_initialise(tusk_actor_t *a, tusk_error_t *err)
{
    return call_hook(a, a->lib->initialise, "process_initialise", err);
}

int tusk_actor_start(tusk_actor_t *a, tusk_error_t *err)
{
    return call_hook(a, a->lib->start, "process_start", err);
}

int tusk_actor_stop(tusk_actor_t *a, tusk_error_t *err)
{
    return call_hook(a, a->lib->stop, "process_stop", err);
}

int tusk_actor_pause(tusk_actor_t *a, tusk_error_t *err)
{
    return call_hook(a, a->lib->pause, "process_pause", err);
}

int tusk_actor_resume(tusk_actor_t *a, tusk_error_t *err)
{
    return call_hook(a, a->lib->resume, "process_resume", err);
}

int tusk_actor_reset(tusk_actor_t *a, tusk_error_t *err)
{
    return call_hook(a, a->lib->reset, "process_reset", err);
}

const char *tusk_actor_lib_changeable(const tusk_actor_lib_t *lib)
{
    const char *keys = lib->changeable && lib->update ? lib->changeable() : NULL;
    return keys ? keys : "";
}

bool tusk_actor_lib_is_changeable(const tusk_actor_lib_t *lib, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = tusk_actor_lib_changeable(lib); n && *p;) {
        p += strspn(p, " \t");
        size_t w = strcspn(p, " \t");
        if (w == n && strncmp(p, key, n) == 0)
            return true;
        p += w;
    }
    return false;
}

int tusk_actor_update(tusk_actor_t *a, const char *config_dir, tusk_error_t *err)
{
    if (!a->lib->update)
        return tusk_error_set(err, TUSK_EINVAL, "actor %s: no process_update: its parameters cannot change "
                              "between runs", a->label);
    char msg[512] = "";
    unsigned code = 0;
    note_enter(a->lib, a->label, "process_update", 0);
    a->lib->update(a->handle, config_dir, msg, sizeof msg, &code);
    note_leave(a->lib);
    msg[sizeof msg - 1] = '\0';
    if (code != TUSK_ACTOR_OK)
        return tusk_error_set(err, TUSK_EACTOR, "actor %s: process_update failed with status %u (%s)%s%s", a->label,
                              code, tusk_actor_status_string(code), msg[0] ? ": " : "", msg);
    return TUSK_OK;
}

/* Check what an output hook returned: the flow status and the used size.
 * `block` is the buffer number, 0 for process_flush (no input buffer). */
static int output_outcome(tusk_actor_t *a, const char *hook, unsigned code, uint32_t used, uint32_t out_size,
                          bool producer, uint64_t block, tusk_flow_t *flow, tusk_error_t *err)
{
    *flow = TUSK_FLOW_DONE;
    if (code == TUSK_ACTOR_MORE_OUTPUT)
        *flow = TUSK_FLOW_MORE;
    else if (code == TUSK_ACTOR_END_OF_DATA && producer)
        *flow = TUSK_FLOW_END;
    else if (code != TUSK_ACTOR_OK)
        return report(a, hook, code, block, err);
    char where[64] = "";
    if (block)
        snprintf(where, sizeof where, " on buffer %llu", (unsigned long long)block);
    if (used > out_size)
        return tusk_error_set(err, TUSK_EACTOR, "actor %s: %s%s reported %u bytes used in an output buffer of %u bytes",
                              a->label, hook, where, (unsigned)used, (unsigned)out_size);
    if (*flow == TUSK_FLOW_MORE && used == 0)
        return tusk_error_set(err, TUSK_EACTOR,
                              "actor %s: %s%s asked to be called again (more output) but wrote nothing: an "
                              "output buffer of %u bytes is too small for its next frame",
                              a->label, hook, where, (unsigned)out_size);
    return TUSK_OK;
}

int tusk_actor_produce(tusk_actor_t *a, void *out, uint32_t out_size, uint32_t *used, tusk_flow_t *flow,
                       tusk_error_t *err)
{
    unsigned code = 0, u = 0;
    a->blocks++;
    note_enter(a->lib, a->label, "process_block", a->blocks);
    a->lib->produce(a->handle, out, out_size, &u, &code);
    note_leave(a->lib);
    *used = u;
    int rc = output_outcome(a, "process_block", code, u, out_size, true, a->blocks, flow, err);
    /* A producer that wants another call just gets one. */
    if (rc == TUSK_OK && *flow == TUSK_FLOW_MORE)
        *flow = TUSK_FLOW_DONE;
    return rc;
}

int tusk_actor_filter(tusk_actor_t *a, unsigned input, void *in, uint32_t in_size, void *out, uint32_t out_size,
                      uint32_t *used, tusk_flow_t *flow, tusk_error_t *err)
{
    unsigned code = 0, u = 0;
    a->blocks++;
    note_enter(a->lib, a->label, a->lib->filter_input ? "process_block_input" : "process_block", a->blocks);
    if (a->lib->filter_input)
        a->lib->filter_input(a->handle, input, in, in_size, out, out_size, &u, &code);
    else
        a->lib->filter(a->handle, in, in_size, out, out_size, &u, &code);
    note_leave(a->lib);
    *used = u;
    if (code == TUSK_ACTOR_FORWARD) {
        *used = 0;
        *flow = TUSK_FLOW_FORWARD;
        return TUSK_OK;
    }
    return output_outcome(a, "process_block", code, u, out_size, false, a->blocks, flow, err);
}

int tusk_actor_consume(tusk_actor_t *a, void *in, uint32_t in_size, tusk_error_t *err)
{
    unsigned code = 0;
    a->blocks++;
    note_enter(a->lib, a->label, "process_block", a->blocks);
    a->lib->consume(a->handle, in, in_size, &code);
    note_leave(a->lib);
    return code == TUSK_ACTOR_OK ? TUSK_OK : report(a, "process_block", code, a->blocks, err);
}

int tusk_actor_flush(tusk_actor_t *a, void *out, uint32_t out_size, uint32_t *used, tusk_flow_t *flow,
                     tusk_error_t *err)
{
    *used = 0;
    *flow = TUSK_FLOW_DONE;
    if (!a->lib->flush)
        return TUSK_OK;
    unsigned code = 0, u = 0;
    note_enter(a->lib, a->label, "process_flush", 0);
    a->lib->flush(a->handle, out, out_size, &u, &code);
    note_leave(a->lib);
    *used = u;
    return output_outcome(a, "process_flush", code, u, out_size, false, 0, flow, err);
}
