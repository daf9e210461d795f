/* bench_producer.c - producer for benchmarks: synthetic ADF buffers that
 * cost little to make (bench only; not installed).
 *
 * Every buffer holds whole, valid ADF frames of type BENCH_FRAME_TYPE
 * (0xFA00FE01, a type no tusk codec decodes, so every tool passes it
 * through): `size` bytes in frames of `frame` bytes (the last frame takes
 * the remainder). The buffer's image is built once, at the first call;
 * each call then copies it into the output buffer (fill=full) or writes
 * only the 20-byte keys (fill=keys: the payload bytes are whatever the
 * buffer held, for measuring the transport alone).
 *
 * stamp=true writes, into the first 16 payload bytes of the first frame,
 * the CLOCK_MONOTONIC time in ns at the end of the call and the buffer's
 * 1-based number (both uint64, host byte order): bench_consumer computes
 * per-buffer latency from it. Frames must then be at least 36 bytes.
 *
 * rate=R paces the calls to R buffers/s (absolute deadlines; after a
 * stall the schedule restarts from now rather than sending a burst).
 *
 * Parameters:
 *   count   buffers to produce; the last call returns END_OF_DATA (1000)
 *   size    bytes per buffer (0: the whole output buffer) (0)
 *   frame   bytes per frame (0: one frame per buffer) (65536)
 *   rate    buffers per second, 0 = as fast as possible (0)
 *   stamp   true: time stamp and number in the first frame (false)
 *   fill    full | keys (full)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AK_PRODUCER
#include "tusk/actorkit.h"
#include "base/clock.h"

#define BENCH_FRAME_TYPE 0xFA00FE01u
#define STAMP_BYTES 16u

TUSK_ACTOR_DECLARE("bench_producer", "synthetic ADF buffers for benchmarks, optionally time-stamped and paced",
                   "count: buffers to produce (1000)\n"
                   "size: bytes per buffer, 0 = the whole output buffer (0)\n"
                   "frame: bytes per frame, 0 = one frame per buffer (65536)\n"
                   "rate: buffers per second, 0 = as fast as possible (0)\n"
                   "stamp: CLOCK_MONOTONIC ns and buffer number in the first frame (false)\n"
                   "fill: full | keys: copy the whole image, or write only the frame keys (full)\n");

typedef struct bench_producer {
    ak_base_t base;
    uint64_t count, size, frame, rate;
    bool stamp, keys_only;
    /* The buffer image, built at the first call. */
    uint8_t *image;
    uint32_t image_size;
    uint32_t *key_offsets; /* fill=keys: where each frame starts */
    uint32_t n_frames;
    uint64_t made;         /* buffers produced this run */
    uint64_t next_ns;      /* rate: deadline of the next buffer (base/clock.h) */
} bench_producer_t;

typedef struct settings {
    uint64_t count, size, frame, rate;
    bool stamp;
    int fill;
} settings_t;

static const char *const fills[] = {"full", "keys", NULL};
static const ak_param_t params[] = {
    AK_U64("count", settings_t, count, 1000, 1, UINT64_MAX),
    AK_U64("size", settings_t, size, 0, 0, UINT32_MAX),
    AK_U64("frame", settings_t, frame, 65536, 0, UINT32_MAX),
    AK_U64("rate", settings_t, rate, 0, 0, 100000000),
    AK_BOOL("stamp", settings_t, stamp, false),
    AK_CHOICE("fill", settings_t, fill, fills, 0),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(bench_producer_t)

static void free_producer(bench_producer_t *p)
{
    if (!p)
        return;
    free(p->image);
    free(p->key_offsets);
    free(p);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    bench_producer_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, "bench_producer", params, &set, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &p->base))
        goto fail;
    p->count = set.count;
    p->size = set.size;
    p->frame = set.frame;
    p->rate = set.rate;
    p->stamp = set.stamp;
    p->keys_only = set.fill == 1;
    if (p->frame && p->frame < ADF_KEY_SIZE + (p->stamp ? STAMP_BYTES : 0)) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "parameter 'frame': %llu bytes is less than a key%s",
                       (unsigned long long)p->frame, p->stamp ? " and the 16-byte stamp" : "");
        goto fail;
    }
    ak_config_close(&cfg);
    return p;
fail:
    free_producer(p);
    ak_config_close(&cfg);
    return NULL;
}

/* Build the buffer image: `total` bytes of frames, each `frame` bytes but
 * the last, which takes the remainder (merged into the one before when it
 * would be too short to hold a key and the stamp). */
static unsigned build_image(bench_producer_t *p, uint32_t total, unsigned *error_code)
{
    uint32_t min_frame = ADF_KEY_SIZE + (p->stamp ? STAMP_BYTES : 0);
    if (total < min_frame)
        return ak_fail(&p->base, error_code, TUSK_ACTOR_ECONFIG, "a %u-byte buffer cannot hold a %u-byte frame",
                       (unsigned)total, (unsigned)min_frame);
    uint32_t frame = p->frame && p->frame < total ? (uint32_t)p->frame : total;
    uint32_t n = total / frame, last = total - n * frame;
    if (last >= min_frame)
        n++;
    p->image = malloc(total);
    p->key_offsets = malloc(n * sizeof *p->key_offsets);
    if (!p->image || !p->key_offsets)
        return ak_fail(&p->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory for a %u-byte image",
                       (unsigned)total);
    /* Payload: a cheap pseudo-random pattern (not all zeros, so nothing
     * along the way can take a shortcut). */
    uint32_t x = 2463534242u;
    for (uint32_t i = 0; i < total; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p->image[i] = (uint8_t)x;
    }
    uint32_t off = 0;
    for (uint32_t f = 0; f < n; f++) {
        uint32_t len = f + 1 < n ? frame : total - off;
        adf_key_t key = {.length = len, .type = BENCH_FRAME_TYPE, .event = f, .timestamp = f};
        adf_error_t err;
        if (adf_key_encode(&key, p->image + off, &err) != ADF_OK)
            return ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "%s", err.message);
        p->key_offsets[f] = off;
        off += len;
    }
    p->n_frames = n;
    p->image_size = total;
    return TUSK_ACTOR_OK;
}

static struct timespec ns_ts(uint64_t ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
}

/* rate: sleep until the next deadline. */
static void pace(bench_producer_t *p)
{
    uint64_t period = 1000000000u / p->rate, t = tusk_clock_ns(), next = p->next_ns;
    if (p->made == 0 || t > next + period) {
        next = t; /* first buffer, or behind: start the schedule again */
    } else if (t < next) {
        struct timespec until = ns_ts(next);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
            ;
    }
    p->next_ns = next + period;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    bench_producer_t *p = algo_data;
    ak_ok(error_code);
    p->made = 0;
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    bench_producer_t *p = algo_data;
    ak_ok(error_code);
    p->made = 0;
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_producer(algo_data);
}

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    bench_producer_t *p = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (!p->image) {
        uint64_t want = p->size ? p->size : size_of_output_buffer;
        if (want > size_of_output_buffer) {
            ak_fail(&p->base, error_code, TUSK_ACTOR_ECONFIG,
                    "parameter 'size': %llu bytes do not fit the %u-byte output buffer", (unsigned long long)want,
                    size_of_output_buffer);
            return;
        }
        if (build_image(p, (uint32_t)want, error_code) != TUSK_ACTOR_OK)
            return;
    }
    if (p->made >= p->count) {
        *error_code = TUSK_ACTOR_END_OF_DATA;
        return;
    }
    if (p->rate)
        pace(p);
    uint8_t *out = output_buffer;
    if (p->keys_only)
        for (uint32_t f = 0; f < p->n_frames; f++)
            memcpy(out + p->key_offsets[f], p->image + p->key_offsets[f], ADF_KEY_SIZE);
    else
        memcpy(out, p->image, p->image_size);
    p->made++;
    if (p->stamp) {
        uint64_t stamp[2] = {tusk_clock_ns(), p->made};
        memcpy(out + ADF_KEY_SIZE, stamp, sizeof stamp);
    }
    *used_size_of_output_buffer = p->image_size;
    if (p->made == p->count)
        *error_code = TUSK_ACTOR_END_OF_DATA;
}
