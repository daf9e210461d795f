/* file_producer.c - producer: replays an ADF file.
 *
 * Parameters:
 *   file      the ADF file to replay (required; opened at registration, so
 *             a missing or unreadable file is a configuration error)
 *   on_error  stop | resync (stop): a malformed frame fails the block with
 *             TUSK_ACTOR_EDATA, or is skipped and counted (one line on
 *             stderr at process_stop)
 *   repeat    passes over the file (1)
 *   timestamps  asis | continue (asis): with continue, pass k (k >= 2)
 *             adds (k - 1) x P to every frame's timestamp and (k - 1) x E
 *             to its event number (modulo 2^32), where P and E are the
 *             spans of the first pass (newest - oldest + 1), so that a
 *             file replayed N times is one stream going forward in time
 *             (an event builder downstream sees no frame come back);
 *             only the frames' own keys change, not keys inside
 *             composite frames; a timestamp carried past 2^48 - 1 is a
 *             TUSK_ACTOR_EDATA error naming the pass and offset
 *
 * Each call fills the output buffer with whole frames, never part of one:
 * the frame that does not fit is copied aside (the reader's view of it
 * dies at its next call) and opens the next buffer. A frame larger than
 * the whole output buffer is a TUSK_ACTOR_EDATA error. The last call
 * returns TUSK_ACTOR_END_OF_DATA together with the last frames. Frames go
 * out unchanged; no meta:eof is added. process_reset rewinds the file.
 *
 * Nothing valid is dropped with a failure: when a call meets a malformed
 * frame (on_error=stop), a frame too large for the buffer or a read error
 * after it has put frames into the buffer, it returns those frames as a
 * normal buffer and the next call fails. The message names the file, the
 * byte offset and what is wrong there, and accounts for the whole file:
 * the frames and bytes delivered before that offset and the bytes from it
 * to the end of the file that were not.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AK_PRODUCER
#include "tusk/actorkit.h"

TUSK_ACTOR_DECLARE("file_producer", "replays an ADF file in buffers of whole frames",
                   "file: the ADF file to replay (required)\n"
                   "on_error: stop | resync: fail on a malformed frame, or skip it and count it (stop)\n"
                   "repeat: how many passes over the file (1)\n"
                   "timestamps: asis | continue: every pass as in the file, or each pass after the first "
                   "moved forward by the first's span of timestamps and event numbers (asis)\n");

typedef struct producer {
    ak_base_t base;
    char *path;
    adf_file_options_t options;
    uint64_t repeat;
    bool shift;                 /* timestamps=continue */
    adf_file_reader_t *reader;  /* NULL after process_reset until process_initialise */
    adf_writer_t *writer;
    uint64_t pass;              /* 1-based pass over the file */
    uint64_t pass_frames;       /* frames read in this pass */
    /* timestamps=continue: the first pass's span, and this pass's shift. */
    uint64_t ts_min, ts_max;
    uint32_t ev_min, ev_max;
    uint64_t ts_shift;
    uint32_t ev_shift;
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
    /* Delivered in this run (every pass), for the accounting in messages. */
    uint64_t frames_out, bytes_out;
    /* A failure met after frames were put into the buffer: those went out,
     * this status (message in base) is what every later call returns. */
    unsigned failed;
} producer_t;

/* The parameters (ak_config_open reads them into a settings_t). */
typedef struct settings {
    const char *file;
    int on_error;
    uint64_t repeat;
    int timestamps;
} settings_t;

static const char *const policies[] = {"stop", "resync", NULL};
static const char *const stamp_modes[] = {"asis", "continue", NULL};
static const ak_param_t params[] = {
    AK_REQUIRED("file", settings_t, file, "the ADF file to replay"),
    AK_CHOICE("on_error", settings_t, on_error, policies, 0),
    AK_U64("repeat", settings_t, repeat, 1, 1, UINT64_MAX),
    AK_CHOICE("timestamps", settings_t, timestamps, stamp_modes, 0),
    AK_PARAMS_END,
};

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
    p->frames_out = 0;
    p->bytes_out = 0;
    p->failed = TUSK_ACTOR_OK;
    p->ts_min = UINT64_MAX;
    p->ts_max = 0;
    p->ev_min = UINT32_MAX;
    p->ev_max = 0;
    p->ts_shift = 0;
    p->ev_shift = 0;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    producer_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, "file_producer", params, &set, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &p->base))
        goto fail;
    const char *file = set.file;
    p->repeat = set.repeat;
    p->shift = set.timestamps == 1;
    p->options.on_error = set.on_error == 1 ? ADF_ON_ERROR_RESYNC : ADF_ON_ERROR_STOP;
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

/* The size of the file, or false when it has none (a pipe, standard
 * input) or cannot be asked. */
static bool file_size(const producer_t *p, uint64_t *size)
{
    struct stat st;
    int rc = strcmp(p->path, "-") == 0 ? fstat(STDIN_FILENO, &st) : stat(p->path, &st);
    if (rc != 0 || !S_ISREG(st.st_mode))
        return false;
    *size = (uint64_t)st.st_size;
    return true;
}

/* A failure at file offset `offset` (ADF_NO_OFFSET: unknown; what: the
 * problem there). The
 * message adds the accounting: what was delivered before it (counting the
 * `frames`, `bytes` of this call's buffer, which go out when the call
 * returns them) and what from `offset` on was not. With frames in this
 * call's buffer the call succeeds and the failure waits for the next;
 * without, it fails now. */
static void fail_at(producer_t *p, unsigned *error_code, unsigned code, uint64_t offset, uint64_t frames,
                    uint64_t bytes, const char *fmt, ...) AK_PRINTF(7, 8);
static void fail_at(producer_t *p, unsigned *error_code, unsigned code, uint64_t offset, uint64_t frames,
                    uint64_t bytes, const char *fmt, ...)
{
    char what[AK_MESSAGE_MAX], pass[64] = "", rest[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->repeat > 1)
        snprintf(pass, sizeof pass, " (pass %llu of %llu)", (unsigned long long)p->pass,
                 (unsigned long long)p->repeat);
    uint64_t size;
    if (offset == ADF_NO_OFFSET)
        snprintf(rest, sizeof rest, "the rest of the input was not");
    else if (file_size(p, &size) && size >= offset)
        snprintf(rest, sizeof rest, "the %llu bytes from offset %llu to the end of the file were not",
                 (unsigned long long)(size - offset), (unsigned long long)offset);
    else
        snprintf(rest, sizeof rest, "the rest of the input from offset %llu was not", (unsigned long long)offset);
    unsigned dummy;
    uint64_t n = p->frames_out + frames;
    ak_fail(&p->base, &dummy, code, "%s%s: %s; delivered before it: %llu frame%s (%llu bytes), %s", p->path, pass,
            what, (unsigned long long)n, n == 1 ? "" : "s", (unsigned long long)(p->bytes_out + bytes), rest);
    if (frames > 0)
        p->failed = code;
    else
        *error_code = code;
}

/* timestamps=continue: the first pass notes the span of timestamps and
 * event numbers; later passes move the frame's key (in f) by this pass's
 * shift. False when its timestamp would pass ADF_TIMESTAMP_MAX. */
static bool continue_key(producer_t *p, adf_frame_t *f)
{
    if (p->pass == 1) {
        if (f->key.timestamp < p->ts_min)
            p->ts_min = f->key.timestamp;
        if (f->key.timestamp > p->ts_max)
            p->ts_max = f->key.timestamp;
        if (f->key.event < p->ev_min)
            p->ev_min = f->key.event;
        if (f->key.event > p->ev_max)
            p->ev_max = f->key.event;
        return true;
    }
    if (p->ts_shift > ADF_TIMESTAMP_MAX - f->key.timestamp)
        return false;
    f->key.timestamp += p->ts_shift;
    f->key.event += p->ev_shift;
    return true;
}

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (p->failed) {
        *error_code = p->failed; /* the message is still in base */
        return;
    }
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
    uint64_t frames = 0; /* put into this buffer */
    if (p->has_pending) {
        if (p->pending_key.length > size_of_output_buffer) {
            fail_at(p, error_code, TUSK_ACTOR_EDATA, p->pending_offset, 0, 0,
                    "the frame at offset %llu is %u bytes, larger than the whole output buffer of %u bytes "
                    "(give the producer a larger <size>)",
                    (unsigned long long)p->pending_offset, (unsigned)p->pending_key.length, size_of_output_buffer);
            return;
        }
        if (adf_writer_put(w, &p->pending_key, p->pending, p->pending_size) != ADF_OK) {
            fail_at(p, error_code, TUSK_ACTOR_EDATA, p->pending_offset, 0, 0, "offset %llu: %s",
                    (unsigned long long)p->pending_offset, adf_writer_error(w)->message);
            return;
        }
        p->has_pending = false;
        frames++;
    }
    while (p->failed == TUSK_ACTOR_OK && *error_code == TUSK_ACTOR_OK) {
        adf_frame_t f;
        int rc = adf_file_reader_next(p->reader, &f);
        uint64_t used = adf_writer_used(w);
        if (rc == ADF_OK) {
            p->pass_frames++;
            if (p->shift && !continue_key(p, &f)) {
                fail_at(p, error_code, TUSK_ACTOR_EDATA, f.offset, frames, used,
                        "timestamps=continue: the frame at offset %llu, timestamp %llu, moved by %llu ticks "
                        "would pass the largest timestamp %llu",
                        (unsigned long long)f.offset, (unsigned long long)f.key.timestamp,
                        (unsigned long long)p->ts_shift, (unsigned long long)ADF_TIMESTAMP_MAX);
                break;
            }
            if (f.key.length > size_of_output_buffer) {
                fail_at(p, error_code, TUSK_ACTOR_EDATA, f.offset, frames, used,
                        "the frame at offset %llu is %u bytes, larger than the whole output buffer of %u bytes "
                        "(give the producer a larger <size>)",
                        (unsigned long long)f.offset, (unsigned)f.key.length, size_of_output_buffer);
                break;
            }
            int put = p->shift ? adf_writer_put(w, &f.key, f.payload, f.payload_size) : adf_writer_put_frame(w, &f);
            if (put == ADF_EFULL) {
                if (!keep_pending(p, &f))
                    fail_at(p, error_code, TUSK_ACTOR_ERESOURCE, f.offset, frames, used,
                            "out of memory keeping the %u-byte frame at offset %llu for the next buffer",
                            (unsigned)f.key.length, (unsigned long long)f.offset);
                break;
            }
            if (put != ADF_OK) {
                fail_at(p, error_code, TUSK_ACTOR_EDATA, f.offset, frames, used, "offset %llu: %s",
                        (unsigned long long)f.offset, adf_writer_error(w)->message);
                break;
            }
            frames++;
        } else if (rc == ADF_END) {
            /* A pass without a single frame: the next ones would be empty too. */
            if (p->pass < p->repeat && p->pass_frames > 0) {
                adf_error_t err;
                if (!open_reader(p, &err)) {
                    /* Nothing of the new pass was read: its whole file is missing. */
                    fail_at(p, error_code, err.code == ADF_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EIO, 0,
                            frames, used, "pass %llu: %s", (unsigned long long)(p->pass + 1), err.message);
                    break;
                }
                p->pass++;
                if (p->shift) {
                    p->ts_shift = (p->pass - 1) * (p->ts_max - p->ts_min + 1);
                    p->ev_shift = (uint32_t)((p->pass - 1) * ((uint64_t)p->ev_max - p->ev_min + 1));
                    if (p->ts_shift / (p->pass - 1) != p->ts_max - p->ts_min + 1)
                        p->ts_shift = UINT64_MAX; /* overflowed: every frame fails in continue_key */
                }
                continue;
            }
            p->ended = true;
            *error_code = TUSK_ACTOR_END_OF_DATA;
            break;
        } else {
            const adf_error_t *e = adf_file_reader_error(p->reader);
            if (rc != ADF_EIO && rc != ADF_ENOMEM && p->options.on_error == ADF_ON_ERROR_RESYNC) {
                p->malformed++;
                continue;
            }
            unsigned code = rc == ADF_EIO ? TUSK_ACTOR_EIO : rc == ADF_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA;
            /* The reader's message names the offset; a read error's names
             * the file too, which fail_at puts first already. */
            const char *what = e->message;
            size_t n = strlen(p->path);
            if (strncmp(what, p->path, n) == 0 && what[n] == ':' && what[n + 1] == ' ')
                what += n + 2;
            fail_at(p, error_code, code, e->offset, frames, used, "%s", what);
            break;
        }
    }
    if (*error_code != TUSK_ACTOR_OK && *error_code != TUSK_ACTOR_END_OF_DATA)
        return;
    *used_size_of_output_buffer = (unsigned)adf_writer_used(w);
    p->frames_out += frames;
    p->bytes_out += *used_size_of_output_buffer;
}
