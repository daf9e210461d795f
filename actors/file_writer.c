/* file_writer.c - consumer: writes every incoming buffer to a file.
 *
 * Parameters:
 *   file      the output file (required). "{instance}" in it becomes the
 *             instance number; with several instances it is required, as
 *             they would otherwise overwrite each other's file.
 *   validate  true | false (false): check that each buffer holds whole,
 *             well-formed ADF frames before writing it (TUSK_ACTOR_EDATA
 *             otherwise, and the buffer is not written)
 *
 * The file is created (or truncated) at process_start and closed at
 * process_stop; every failed write, flush or close is TUSK_ACTOR_EIO with
 * the path. The bytes written are exactly the bytes received.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_CONSUMER
#include "actorkit.h"

TUSK_ACTOR_DECLARE("file_writer", "writes every buffer it receives to a file",
                   "file: the output file; {instance} is replaced by the instance number, required with "
                   "several instances (required)\n"
                   "validate: check that each buffer holds whole ADF frames before writing it (false)\n");

typedef struct writer {
    ak_base_t base;
    char *path;
    bool validate;
    adf_reader_t *reader;   /* when validating */
    adf_file_writer_t *file; /* open between process_start and process_stop */
    uint64_t buffers;
} writer_t;

typedef struct settings {
    const char *file;
    bool validate;
} settings_t;

static const ak_param_t params[] = {
    AK_REQUIRED("file", settings_t, file, "the output file"),
    AK_BOOL("validate", settings_t, validate, false),
    AK_PARAMS_END,
};

#define INSTANCE_MARK "{instance}"

AK_STANDARD_HOOKS(writer_t)

static void free_writer(writer_t *w)
{
    if (!w)
        return;
    if (w->file) {
        adf_error_t ignored;
        adf_file_writer_close(&w->file, &ignored);
    }
    adf_reader_destroy(&w->reader);
    free(w->path);
    free(w);
}

/* `pattern` with every "{instance}" replaced by `instance`; NULL when out
 * of memory. */
static char *substitute(const char *pattern, unsigned instance)
{
    char num[16];
    int nlen = snprintf(num, sizeof num, "%u", instance);
    size_t mark = strlen(INSTANCE_MARK), count = 0;
    for (const char *s = strstr(pattern, INSTANCE_MARK); s; s = strstr(s + mark, INSTANCE_MARK))
        count++;
    char *out = malloc(strlen(pattern) + count * (size_t)nlen + 1);
    if (!out)
        return NULL;
    char *o = out;
    const char *s = pattern;
    for (const char *m = strstr(s, INSTANCE_MARK); m; m = strstr(s, INSTANCE_MARK)) {
        memcpy(o, s, (size_t)(m - s));
        o += m - s;
        memcpy(o, num, (size_t)nlen);
        o += nlen;
        s = m + mark;
    }
    strcpy(o, s);
    return out;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    writer_t *w = NULL;
    if (!ak_config_open(&cfg, directory_path, "file_writer", params, &set, message, message_size, error_code))
        goto fail;
    w = calloc(1, sizeof *w);
    if (!w) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    const char *file = set.file;
    w->validate = set.validate;
    if (!ak_config_base(&cfg, &w->base))
        goto fail;
    if (w->base.instances > 1 && !strstr(file, INSTANCE_MARK)) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG,
                       "parameter 'file': '%s' has no " INSTANCE_MARK " but the actor has %u instances, which "
                       "would overwrite each other's file (put " INSTANCE_MARK " in the name)",
                       file, w->base.instances);
        goto fail;
    }
    w->path = substitute(file, w->base.instance);
    if (!w->path || (w->validate && !(w->reader = adf_reader_new(ADF_ON_ERROR_STOP)))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    ak_config_close(&cfg);
    return w;
fail:
    free_writer(w);
    ak_config_close(&cfg);
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    ak_ok(error_code);
}

void process_start(void *algo_data, unsigned int *error_code)
{
    writer_t *w = algo_data;
    ak_ok(error_code);
    if (w->file) {
        ak_fail(&w->base, error_code, TUSK_ACTOR_ESTATE, "%s: process_start while the file is open (no process_stop)",
                w->path);
        return;
    }
    adf_error_t err;
    w->file = adf_file_writer_open(w->path, &err);
    if (!w->file)
        ak_fail(&w->base, error_code, err.code == ADF_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EIO, "%s",
                err.message);
    w->buffers = 0;
}

/* Close the file, reporting a failed flush or close. */
static void close_file(writer_t *w, unsigned *error_code)
{
    if (!w->file)
        return;
    adf_error_t err;
    if (adf_file_writer_close(&w->file, &err) != ADF_OK)
        ak_fail(&w->base, error_code, TUSK_ACTOR_EIO, "%s", err.message);
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    close_file(algo_data, error_code);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    close_file(algo_data, error_code);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_writer(algo_data);
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    writer_t *w = algo_data;
    ak_ok(error_code);
    w->buffers++;
    if (!w->file) {
        ak_fail(&w->base, error_code, TUSK_ACTOR_ESTATE, "%s: process_block before process_start: the file is "
                "not open", w->path);
        return;
    }
    if (!input_buffer)
        size_of_input_buffer = 0;
    if (w->validate) {
        adf_frame_t f;
        int rc;
        adf_reader_reset(w->reader, input_buffer, size_of_input_buffer, 0);
        while ((rc = adf_reader_next(w->reader, &f)) == ADF_OK)
            continue;
        if (rc != ADF_END) {
            ak_fail(&w->base, error_code, TUSK_ACTOR_EDATA,
                    "input buffer %llu (%u bytes) is not whole ADF frames, not written to %s: %s",
                    (unsigned long long)w->buffers, size_of_input_buffer, w->path,
                    adf_reader_error(w->reader)->message);
            return;
        }
    }
    adf_error_t err;
    if (adf_file_writer_write(w->file, input_buffer, size_of_input_buffer, &err) != ADF_OK)
        ak_fail(&w->base, error_code, TUSK_ACTOR_EIO, "%s", err.message);
}
