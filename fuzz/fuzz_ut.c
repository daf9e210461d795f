/* fuzz_ut.c - fuzz target: the buffers the UT tracking's stages read, as
 * they arrive from a peer or a file (ADF files are seeds as they are).
 * Invariants:
 *   - the filter: ut_frames_read (the default geometry) either refuses the
 *     buffer with a message (TUSK_EINVAL or TUSK_ELIMIT) or reads every
 *     event:data:ut; the reference and the fast backend then give the same
 *     tracks and hits, tracks in VELO track order with 3 or 4 hits that the
 *     event's raw banks hold, each VELO track at most once; the output is
 *     written whole, in exactly the room ut_frames_extra promised, and
 *     reads back with one data:ut_tracks an event;
 *   - the quality analysis either refuses with a message or finishes with
 *     counts that add up.
 * No file is written. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"
#include "tusk/ut.h"

static void filter(const uint8_t *buf, size_t size)
{
    ut_config_t cfg;
    ut_config_default(&cfg);
    ut_geometry_t *geo = NULL;
    ut_batch_t *b = ut_batch_new();
    ut_result_t *ra = ut_result_new(), *rb = ut_result_new();
    ut_ref_t *ref = NULL;
    ut_fast_t *fast = NULL;
    tusk_error_t err;
    FUZZ_CHECK(b && ra && rb && ut_geometry_new(&geo, &cfg.geo, &err) == TUSK_OK &&
               ut_ref_new(&ref, &cfg, &err) == TUSK_OK && ut_fast_new(&fast, &cfg, 2, &err) == TUSK_OK);
    int rc = ut_frames_read(b, geo, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK((rc == TUSK_EINVAL || rc == TUSK_ELIMIT) && err.message[0] != '\0');
        goto done;
    }
    ut_result_keep_hits(ra, true);
    ut_result_keep_hits(rb, true);
    FUZZ_CHECK(ut_ref_run(ref, b, ra, &err) == TUSK_OK);
    FUZZ_CHECK(ut_fast_run(fast, b, rb, &err) == TUSK_OK);
    char why[512];
    FUZZ_CHECK(ut_result_equal(ra, rb, why, sizeof why));
    for (size_t i = 0; i < ut_result_events(ra); i++) {
        uint32_t nh, nv;
        ut_batch_event(b, i, NULL, NULL, &nh, &nv);
        FUZZ_CHECK(ut_result_hits(ra, i) == nh && ut_result_tracks(ra, i) <= nv);
        for (uint32_t k = 0; k < ut_result_tracks(ra, i); k++) {
            adf_ut_track_t t;
            ut_result_track(ra, i, k, &t);
            FUZZ_CHECK(t.velo < nv && (t.n_hits == 3 || t.n_hits == 4));
            if (k > 0) {
                adf_ut_track_t p;
                ut_result_track(ra, i, k - 1, &p);
                FUZZ_CHECK(p.velo < t.velo);
            }
            for (int q = 0; q < 4; q++) {
                if (!t.id[q])
                    continue;
                bool found = false;
                for (uint32_t h = 0; h < nh && !found; h++) {
                    adf_ut_hit_t x;
                    ut_result_hit(ra, i, h, &x);
                    found = x.id == t.id[q];
                }
                FUZZ_CHECK(found);
            }
        }
    }
    size_t extra = ut_frames_extra(ra, true), cap = size + extra;
    uint8_t *out = malloc(cap ? cap : 1);
    adf_writer_t *w = adf_writer_new();
    FUZZ_CHECK(out && w);
    adf_writer_reset(w, out, cap);
    FUZZ_CHECK(ut_frames_write(buf, size, b, ra, &cfg, UT_REFERENCE, true, true, w, &err) == TUSK_OK);
    FUZZ_CHECK(adf_writer_used(w) == cap);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP), *sub = adf_reader_new(ADF_ON_ERROR_STOP);
    FUZZ_CHECK(r && sub);
    adf_reader_reset(r, out, cap, 0);
    adf_frame_t f, g;
    size_t events = 0, tracks = 0;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type != ADF_TYPE_EVENT_DATA_UT)
            continue;
        events++;
        adf_reader_open_composite(sub, &f);
        while (adf_reader_next(sub, &g) == ADF_OK)
            tracks += g.key.type == ADF_TYPE_DATA_UT_TRACKS;
    }
    FUZZ_CHECK(rc == ADF_END);
    /* the input's own data:ut_tracks pass on as well */
    FUZZ_CHECK(events == ut_batch_count(b) && tracks >= events);
    adf_reader_destroy(&r);
    adf_reader_destroy(&sub);
    adf_writer_destroy(&w);
    free(out);
done:
    ut_ref_destroy(&ref);
    ut_fast_destroy(&fast);
    ut_result_destroy(&ra);
    ut_result_destroy(&rb);
    ut_batch_destroy(&b);
    ut_geometry_destroy(&geo);
}

static void analysis(const uint8_t *buf, size_t size)
{
    ut_qa_config_t qc;
    ut_qa_config_default(&qc);
    ut_qa_t *qa = NULL;
    tusk_error_t err;
    FUZZ_CHECK(ut_qa_new(&qa, &qc, &err) == TUSK_OK);
    int rc = ut_qa_feed(qa, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK((rc == TUSK_EINVAL || rc == TUSK_ENOMEM) && err.message[0] != '\0');
    } else {
        rc = ut_qa_finish(qa, &err);
        FUZZ_CHECK(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0] != '\0'));
        if (rc == TUSK_OK) {
            ut_qa_summary_t s;
            ut_qa_summary(qa, &s);
            FUZZ_CHECK(s.fakes <= s.tracks && s.charge_right <= s.charge_tried);
            for (int c = 0; c < UT_QA_CATEGORIES; c++)
                FUZZ_CHECK(s.found[c] <= s.reconstructible[c] && s.clones[c] <= s.matched[c] &&
                           s.matched[c] <= s.tracks);
        }
    }
    ut_qa_destroy(&qa);
}

int fuzz_ut_one(const uint8_t *data, size_t size)
{
    /* a copy of exactly the input's size, so a read past it is caught */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    filter(buf, size);
    analysis(buf, size);
    free(buf);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_ut_one(data, size);
}
#endif
