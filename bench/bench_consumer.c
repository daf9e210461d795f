/* bench_consumer.c - consumer for benchmarks: counts, times and, with
 * stamp=true, measures per-buffer latency (bench only; not installed).
 *
 * Counts buffers, bytes and (check=true, as null_consumer does) the ADF
 * frames of each buffer. Notes the CLOCK_MONOTONIC time of the first and
 * the last buffer, so the summary has the steady throughput between them.
 *
 * stamp=true: each buffer's first frame carries, from bench_producer
 * stamp=true, the producer's clock at the end of its call and the buffer
 * number. The latency of a buffer is the time from that stamp to the
 * start of this process_block call: transport, every filter on the way
 * and the queues. The first `skip` buffers (warm-up) are left out of the
 * statistics. Buffers arriving out of order are counted. The first
 * buffer's stamp also starts the "span": from the producer's first buffer
 * to the arrival of the last one, the chain's throughput free of start-up
 * and shut-down (what zmq_pushpull measures for raw libzmq).
 *
 * At process_stop one line goes to stderr and, with latency_file, the
 * same figures go to that file as `key=value` text:
 *   buffers bytes frames seconds (first to last buffer) mb_per_s
 *   span_seconds span_mb_per_s (stamp=true: first stamp to last buffer)
 *   samples min_ns median_ns p90_ns p99_ns max_ns mean_ns out_of_order
 * (percentiles by nearest rank).
 *
 * Parameters:
 *   stamp         read the time stamps and measure latency (false)
 *   skip          buffers left out of the latency statistics (0)
 *   check         walk each buffer's frames, failing on a malformed one (true)
 *   latency_file  write the summary here too (none)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_CONSUMER
#include "tusk/actorkit.h"
#include "base/clock.h"
#include "base/grow.h"

#define BENCH_FRAME_TYPE 0xFA00FE01u
#define STAMP_BYTES 16u

TUSK_ACTOR_DECLARE("bench_consumer", "counts and times buffers; per-buffer latency from bench_producer stamps",
                   "stamp: measure latency from bench_producer's stamps (false)\n"
                   "skip: warm-up buffers left out of the latency statistics (0)\n"
                   "check: walk the frames of each buffer like null_consumer (true)\n"
                   "latency_file: also write the summary to this file as key=value text (none)\n");

typedef struct bench_consumer {
    ak_base_t base;
    bool stamp, check;
    uint64_t skip;
    char *latency_file;
    adf_reader_t *reader;
    uint64_t buffers, bytes, frames, first_ns, last_ns, first_stamp, last_seq, out_of_order;
    uint64_t *lat;         /* latencies, ns */
    size_t n_lat, cap_lat;
} bench_consumer_t;

typedef struct settings {
    bool stamp, check;
    uint64_t skip;
    const char *latency_file;
} settings_t;

static const ak_param_t params[] = {
    AK_BOOL("stamp", settings_t, stamp, false),
    AK_BOOL("check", settings_t, check, true),
    AK_U64("skip", settings_t, skip, 0, 0, UINT64_MAX),
    AK_STRING("latency_file", settings_t, latency_file, NULL),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(bench_consumer_t)

static void free_consumer(bench_consumer_t *c)
{
    if (!c)
        return;
    adf_reader_destroy(&c->reader);
    free(c->latency_file);
    free(c->lat);
    free(c);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    bench_consumer_t *c = NULL;
    if (!ak_config_open(&cfg, directory_path, "bench_consumer", params, &set, message, message_size, error_code))
        goto fail;
    c = calloc(1, sizeof *c);
    if (!c || !(c->reader = adf_reader_new(ADF_ON_ERROR_STOP))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &c->base))
        goto fail;
    c->stamp = set.stamp;
    c->check = set.check;
    c->skip = set.skip;
    const char *file = set.latency_file;
    if (file && *file && !(c->latency_file = strdup(file))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    ak_config_close(&cfg);
    return c;
fail:
    free_consumer(c);
    ak_config_close(&cfg);
    return NULL;
}

static void clear_run(bench_consumer_t *c)
{
    c->buffers = c->bytes = c->frames = c->first_ns = c->last_ns = c->first_stamp = c->last_seq = c->out_of_order = 0;
    c->n_lat = 0;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    clear_run(algo_data);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    clear_run(algo_data);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_consumer(algo_data);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static uint64_t percentile(const uint64_t *v, size_t n, double p)
{
    size_t rank = (size_t)(p * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    return v[(rank > n ? n : rank) - 1];
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    bench_consumer_t *c = algo_data;
    ak_ok(error_code);
    double seconds = c->buffers > 1 ? (double)(c->last_ns - c->first_ns) / 1e9 : 0.0;
    /* Bytes after the first buffer, over the time from the first to the last. */
    double mbps = seconds > 0 ? (double)(c->bytes - c->bytes / c->buffers) / 1e6 / seconds : 0.0;
    char line[1024];
    int len = snprintf(line, sizeof line, "buffers=%llu bytes=%llu frames=%llu seconds=%.6f mb_per_s=%.1f",
                       (unsigned long long)c->buffers, (unsigned long long)c->bytes, (unsigned long long)c->frames,
                       seconds, mbps);
    if (c->stamp && c->buffers > 0 && len > 0 && (size_t)len < sizeof line) {
        double span = c->last_ns > c->first_stamp ? (double)(c->last_ns - c->first_stamp) / 1e9 : 0.0;
        int more = snprintf(line + len, sizeof line - (size_t)len, " span_seconds=%.6f span_mb_per_s=%.1f", span,
                            span > 0 ? (double)c->bytes / 1e6 / span : 0.0);
        if (more > 0)
            len += more;
    }
    if (c->stamp && c->n_lat > 0 && len > 0 && (size_t)len < sizeof line) {
        qsort(c->lat, c->n_lat, sizeof *c->lat, cmp_u64);
        long double sum = 0;
        for (size_t i = 0; i < c->n_lat; i++)
            sum += c->lat[i];
        snprintf(line + len, sizeof line - (size_t)len,
                 " samples=%zu min_ns=%llu median_ns=%llu p90_ns=%llu p99_ns=%llu max_ns=%llu mean_ns=%.0f"
                 " out_of_order=%llu",
                 c->n_lat, (unsigned long long)c->lat[0], (unsigned long long)percentile(c->lat, c->n_lat, 0.5),
                 (unsigned long long)percentile(c->lat, c->n_lat, 0.9),
                 (unsigned long long)percentile(c->lat, c->n_lat, 0.99), (unsigned long long)c->lat[c->n_lat - 1],
                 (double)(sum / (long double)c->n_lat), (unsigned long long)c->out_of_order);
    }
    fprintf(stderr, "bench_consumer %s: %s\n", c->base.label, line);
    if (c->latency_file) {
        FILE *fp = fopen(c->latency_file, "w");
        if (!fp || fprintf(fp, "%s\n", line) < 0 || fclose(fp) != 0) {
            ak_fail(&c->base, error_code, TUSK_ACTOR_EIO, "latency_file %s: cannot write", c->latency_file);
            return;
        }
    }
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    bench_consumer_t *c = algo_data;
    ak_ok(error_code);
    uint64_t now = tusk_clock_ns();
    if (!input_buffer)
        size_of_input_buffer = 0;
    if (c->buffers == 0)
        c->first_ns = now;
    c->last_ns = now;
    c->buffers++;
    c->bytes += size_of_input_buffer;
    if (c->stamp) {
        const uint8_t *in = input_buffer;
        adf_key_t key;
        adf_error_t aerr;
        if (size_of_input_buffer < ADF_KEY_SIZE + STAMP_BYTES ||
            adf_key_decode(in, size_of_input_buffer, &key, &aerr) != ADF_OK || key.type != BENCH_FRAME_TYPE ||
            key.length < ADF_KEY_SIZE + STAMP_BYTES) {
            ak_fail(&c->base, error_code, TUSK_ACTOR_EDATA,
                    "input buffer %llu (%u bytes): no bench_producer stamp in its first frame",
                    (unsigned long long)c->buffers, size_of_input_buffer);
            return;
        }
        uint64_t stamp[2];
        memcpy(stamp, in + ADF_KEY_SIZE, sizeof stamp);
        if (c->buffers == 1)
            c->first_stamp = stamp[0];
        if (stamp[1] != c->last_seq + 1)
            c->out_of_order++;
        c->last_seq = stamp[1];
        if (c->buffers > c->skip) {
            if (tusk_grow(&c->lat, &c->cap_lat, c->n_lat + 1, sizeof *c->lat) != 0) {
                ak_fail(&c->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory for latencies");
                return;
            }
            c->lat[c->n_lat++] = now >= stamp[0] ? now - stamp[0] : 0;
        }
    }
    if (c->check) {
        adf_frame_t f;
        int rc;
        adf_reader_reset(c->reader, input_buffer, size_of_input_buffer, 0);
        while ((rc = adf_reader_next(c->reader, &f)) == ADF_OK)
            c->frames++;
        if (rc != ADF_END)
            ak_fail(&c->base, error_code, TUSK_ACTOR_EDATA, "input buffer %llu (%u bytes): %s",
                    (unsigned long long)c->buffers, size_of_input_buffer, adf_reader_error(c->reader)->message);
    }
}
