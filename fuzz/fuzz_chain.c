/* fuzz_chain.c - fuzz target: the buffers the issue-9 stages read, as they
 * arrive from a peer or a file: the event builder (evbuild_push_buffer),
 * the tracker (track_frames_read, then tracking and track_frames_write)
 * and the spectra (spec_feed, then the summary). The input is the buffer,
 * so ADF files are seeds as they are; its size picks the builder's input
 * index and window.
 * Invariants:
 *   - a refused buffer gives TUSK_EINVAL with a message, and the builder
 *     holds nothing of it (frames in stays 0); an accepted one comes out
 *     whole after the flush: frames out == frames in;
 *   - the tracker either refuses with a message or tracks every event it
 *     read and writes the buffer back with its data:tracked frames within
 *     the room track_frames_extra promised;
 *   - the spectra either refuse with a message or count and summarise.
 * No file is written (the spectra's summary is computed, not saved). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/evbuild.h"
#include "tusk/array.h"
#include "tusk/spectrum.h"
#include "tusk/track.h"

static void builder(unsigned input, uint64_t window, const uint8_t *buf, size_t size)
{
    evbuild_config_t cfg;
    evbuild_config_default(&cfg);
    cfg.window = window;
    evbuild_t *eb = NULL;
    tusk_error_t err;
    FUZZ_CHECK(evbuild_new(&eb, &cfg, &err) == TUSK_OK);
    int rc = evbuild_push_buffer(eb, input, buf, size, &err);
    evbuild_stats_t st;
    evbuild_stats(eb, &st);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
        FUZZ_CHECK(st.frames_in == 0);
        evbuild_destroy(&eb);
        return;
    }
    FUZZ_CHECK(evbuild_flush(eb, &err) == TUSK_OK);
    size_t cap = 2 * size + 4096;
    uint8_t *out = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    FUZZ_CHECK(out && w);
    bool more = true;
    for (unsigned rounds = 0; more; rounds++) {
        FUZZ_CHECK(rounds < 1000000);
        adf_writer_reset(w, out, cap);
        FUZZ_CHECK(evbuild_take(eb, w, &more, &err) == TUSK_OK);
    }
    evbuild_stats(eb, &st);
    FUZZ_CHECK(st.frames_out == st.frames_in);
    adf_writer_destroy(&w);
    free(out);
    evbuild_destroy(&eb);
}

static void tracker(const uint8_t *buf, size_t size)
{
    /* Crystal ids 0-179, as tusk-adf gen writes them. The array and the
     * tracker are made once per process: the overlap check of 180
     * crystals would otherwise take most of each run. */
    static const char array_text[] = "distance = 450\nshell = 180\n";
    static array_t *array;
    static track_t *t;
    tusk_error_t err;
    if (!t) {
        FUZZ_CHECK(array_parse(&array, array_text, sizeof array_text - 1, "fuzz", NULL, &err) == TUSK_OK);
        track_config_t cfg;
        track_config_default(&cfg);
        FUZZ_CHECK(track_new(&t, &cfg, array, &err) == TUSK_OK);
    }
    track_batch_t *batch = track_batch_new();
    FUZZ_CHECK(batch != NULL);
    int rc = track_frames_read(t, batch, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(err.message[0] != '\0');
    } else if (track_run(t, batch, &err) == TUSK_OK) {
        size_t cap = size + track_frames_extra(batch);
        uint8_t *out = malloc(cap ? cap : 1);
        adf_writer_t *w = adf_writer_new();
        FUZZ_CHECK(out && w);
        adf_writer_reset(w, out, cap);
        FUZZ_CHECK(track_frames_write(t, batch, buf, size, w, &err) == TUSK_OK);
        adf_writer_destroy(&w);
        free(out);
    } else {
        FUZZ_CHECK(err.message[0] != '\0');
    }
    track_batch_destroy(&batch);
}

static void spectra(const uint8_t *buf, size_t size)
{
    spec_config_t cfg;
    spec_config_init(&cfg);
    tusk_error_t err;
    FUZZ_CHECK(spec_config_set(&cfg, "lines", "1173.2 1332.5", &err) == TUSK_OK);
    FUZZ_CHECK(spec_config_set(&cfg, "max_kev", "3000", &err) == TUSK_OK);
    spec_t *spec = spec_new(&cfg, &err);
    FUZZ_CHECK(spec != NULL);
    if (spec_feed(spec, buf, size, 0, &err) != TUSK_OK) {
        FUZZ_CHECK(err.message[0] != '\0');
    } else {
        spec_finish(spec);
        spec_row_t rows[3 * SPEC_MAX_LINES];
        size_t n = 0;
        FUZZ_CHECK(spec_summary(spec, rows, &n, &err) == TUSK_OK);
    }
    spec_destroy(&spec);
}

int fuzz_chain_one(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so reads past the end are seen. */
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf != NULL);
    if (size)
        memcpy(buf, data, size);
    builder((unsigned)(size & 3u), (uint64_t)((size >> 2) & 15u) * 4u, buf, size);
    tracker(buf, size);
    spectra(buf, size);
    free(buf);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_chain_one(data, size);
}
#endif
