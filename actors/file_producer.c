/* file_producer.c - producer: replays an ADF file.
 *
 * Parameters:
 *   file      the ADF file to replay (required; opened at registration, so
 *             a missing or unreadable file is a configuration error)
 *   on_error  stop | resync (stop): a malformed frame fails the block with
 *             TUSK_ACTOR_EDATA naming the file and offset, or is skipped
 *             and counted (one line on stderr at process_stop)
 *   repeat    passes over the file (1)
 *
 * Each call fills the output buffer with whole frames, never part of one:
 * the frame that does not fit is copied aside (the reader's view of it
 * dies at its next call) and opens the next buffer. A frame larger than
 * the whole output buffer is a TUSK_ACTOR_EDATA error. The last call
 * returns TUSK_ACTOR_END_OF_DATA together with the last frames. Frames go
 * out unchanged; no meta:eof is added. process_reset rewinds the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_PRODUCER
#include "actorkit.h"

TUSK_ACTOR_DECLARE("file_producer", "replays an ADF file in buffers of whole frames",
                   "file: the ADF file to replay (required)\n"
                   "on_error: stop | resync: fail on a malformed frame, or skip it and count it (stop)\n"
                   "repeat: how many passes over the file (1)\n");

typedef struct producer {
    ak_base_t base;
    char *path;
    adf_file_options_t options;
    uint64_t repeat;
    adf_file_reader_t *reader;  /* NULL after process_reset until process_initialise */
    adf_writer_t *writer;
    uint64_t pass;              /* 1-based pass over the file */
    uint64_t pass_frames;       /* frames read in this pass */
    bool ended;                 /* END_OF_DATA returned */
    /* The frame refused by the last full buffer, copied. */
    bool has_pending;
    adf_key_t pending_key;
    uint64_t pending_offset;
    uint8_t *pending;
    size_t pending_cap;
    uint32_t pending_size;
    /* on_error=resync: malformed frames skipped, bytes of closed passes. */
    uint64_t malformed;
    uint64_t skipped_closed;
} producer_t;

static const char *const known_keys[] = {"file", "on_error", "repeat", NULL};

AK_STANDARD_HOOKS(producer_t)

static void close_reader(producer_t *p)
{
    if (p->reader) {
        p->skipped_closed += adf_file_reader_stats(p->reader).bytes_skipped;
        adf_file_reader_destroy(&p->reader);
    }
}

/* Open the file for a new pass; the adf message names it. */
static bool open_reader(producer_t *p, adf_error_t *err)
{
    close_reader(p);
    p->reader = adf_file_reader_open(p->path, &p->options, err);
    p->pass_frames = 0;
    return p->reader != NULL;
}

static void free_producer(producer_t *p)
{
    if (!p)
        return;
    adf_file_reader_destroy(&p->reader);
    adf_writer_destroy(&p->writer);
    free(p->pending);
    free(p->path);
    free(p);
}

static void rewind_state(producer_t *p)
{
    p->pass = 1;
    p->pass_frames = 0;
    p->ended = false;
    p->has_pending = false;
    p->malformed = 0;
    p->skipped_closed = 0;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    producer_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, known_keys, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    static const char *const policies[] = {"stop", "resync", NULL};
    const char *file = ak_config_required(&cfg, "file", "the ADF file to replay");
    int policy = file ? ak_config_choice(&cfg, "on_error", policies, 0) : -1;
    if (!file || policy < 0 || !ak_config_u64(&cfg, "repeat", 1, 1, UINT64_MAX, &p->repeat) ||
        !ak_config_base(&cfg, &p->base))
        goto fail;
    p->options.on_error = policy == 1 ? ADF_ON_ERROR_RESYNC : ADF_ON_ERROR_STOP;
    size_t n = strlen(file) + 1;
    p->path = malloc(n);
    p->writer = adf_writer_new();
    if (!p->path || !p->writer) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    memcpy(p->path, file, n);
    adf_error_t err;
    if (!open_reader(p, &err)) {
        ak_config_fail(&cfg, err.code == ADF_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG,
                       "parameter 'file': %s", err.message);
        goto fail;
    }
    rewind_state(p);
    ak_config_close(&cfg);
    return p;
fail:
    free_producer(p);
    ak_config_close(&cfg);
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    if (p->reader)
        return;
    adf_error_t err;
    if (!open_reader(p, &err))
        ak_fail(&p->base, error_code, err.code == ADF_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EIO, "%s",
                err.message);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    close_reader(p);
    rewind_state(p);
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    if (p->malformed) {
        uint64_t skipped = p->skipped_closed + (p->reader ? adf_file_reader_stats(p->reader).bytes_skipped : 0);
        fprintf(stderr, "file_producer %s: %s: skipped %llu malformed frames (%llu bytes) in %llu passes\n",
                p->base.label, p->path, (unsigned long long)p->malformed, (unsigned long long)skipped,
                (unsigned long long)p->pass);
    }
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_producer(algo_data);
}

static unsigned too_big(producer_t *p, unsigned *error_code, uint64_t offset, uint32_t length, unsigned size)
{
    return ak_fail(&p->base, error_code, TUSK_ACTOR_EDATA,
                   "%s: the frame at offset %llu is %u bytes, larger than the whole output buffer of %u bytes "
                   "(give the producer a larger <size>)",
                   p->path, (unsigned long long)offset, (unsigned)length, size);
}

/* Keep the frame that did not fit for the next call. */
static bool keep_pending(producer_t *p, const adf_frame_t *f)
{
    if (f->payload_size > p->pending_cap) {
        uint8_t *b = realloc(p->pending, f->payload_size);
        if (!b)
            return false;
        p->pending = b;
        p->pending_cap = f->payload_size;
    }
    if (f->payload_size)
        memcpy(p->pending, f->payload, f->payload_size);
    p->pending_key = f->key;
    p->pending_size = f->payload_size;
    p->pending_offset = f->offset;
    p->has_pending = true;
    return true;
}

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (p->ended) {
        *error_code = TUSK_ACTOR_END_OF_DATA;
        return;
    }
    if (!p->reader) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ESTATE, "%s: process_block after process_reset without "
                "process_initialise", p->path);
        return;
    }
    adf_writer_t *w = p->writer;
    adf_writer_reset(w, output_buffer, size_of_output_buffer);
    if (p->has_pending) {
        if (p->pending_key.length > size_of_output_buffer) {
            too_big(p, error_code, p->pending_offset, p->pending_key.length, size_of_output_buffer);
            return;
        }
        if (adf_writer_put(w, &p->pending_key, p->pending, p->pending_size) != ADF_OK) {
            ak_fail(&p->base, error_code, TUSK_ACTOR_EDATA, "%s: offset %llu: %s", p->path,
                    (unsigned long long)p->pending_offset, adf_writer_error(w)->message);
            return;
        }
        p->has_pending = false;
    }
    while (true) {
        adf_frame_t f;
        int rc = adf_file_reader_next(p->reader, &f);
        if (rc == ADF_OK) {
            p->pass_frames++;
            if (f.key.length > size_of_output_buffer) {
                too_big(p, error_code, f.offset, f.key.length, size_of_output_buffer);
                return;
            }
            int put = adf_writer_put_frame(w, &f);
            if (put == ADF_EFULL) {
                if (!keep_pending(p, &f))
                    ak_fail(&p->base, error_code, TUSK_ACTOR_ERESOURCE,
                            "%s: out of memory keeping the %u-byte frame at offset %llu for the next buffer",
                            p->path, (unsigned)f.key.length, (unsigned long long)f.offset);
                break;
            }
            if (put != ADF_OK) {
                ak_fail(&p->base, error_code, TUSK_ACTOR_EDATA, "%s: offset %llu: %s", p->path,
                        (unsigned long long)f.offset, adf_writer_error(w)->message);
                return;
            }
        } else if (rc == ADF_END) {
            /* A pass without a single frame: the next ones would be empty too. */
            if (p->pass < p->repeat && p->pass_frames > 0) {
                adf_error_t err;
                if (!open_reader(p, &err)) {
                    ak_fail(&p->base, error_code, err.code == ADF_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EIO,
                            "pass %llu: %s", (unsigned long long)(p->pass + 1), err.message);
                    return;
                }
                p->pass++;
                continue;
            }
            p->ended = true;
            *error_code = TUSK_ACTOR_END_OF_DATA;
            break;
        } else if (rc == ADF_EIO || rc == ADF_ENOMEM) {
            ak_fail(&p->base, error_code, rc == ADF_EIO ? TUSK_ACTOR_EIO : TUSK_ACTOR_ERESOURCE, "%s",
                    adf_file_reader_error(p->reader)->message);
            return;
        } else if (p->options.on_error == ADF_ON_ERROR_RESYNC) {
            p->malformed++;
        } else {
            ak_fail(&p->base, error_code, TUSK_ACTOR_EDATA, "%s: %s", p->path,
                    adf_file_reader_error(p->reader)->message);
            return;
        }
    }
    *used_size_of_output_buffer = (unsigned)adf_writer_used(w);
}
