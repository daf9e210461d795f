/* fuzz_tpc.c - fuzz target: the buffers the TPC slice tracker's stages
 * read, as they arrive from a peer or a file (ADF files are seeds as they
 * are). Invariants:
 *   - the filter: tpc_frames_read either refuses the buffer with a message
 *     (TUSK_EINVAL) or reads every data:tpc_clusters frame; the reference
 *     and the fast backend then either both refuse it with a message
 *     (TUSK_ELIMIT: a row too full) or give the same tracks, each of at
 *     least min_hits clusters of its slice, in rising rows; the output is
 *     written whole, in exactly the room tpc_frames_extra promised, and
 *     reads back with one data:tpc_tracks a slice;
 *   - the quality analysis and the track-by-track comparison either refuse
 *     with a message or finish with counts that add up.
 * No file is written. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"
#include "tusk/tpc.h"

/* Tracks of min_hits clusters or more, of their slice, rows rising. */
static void check_result(const tpc_batch_t *b, const tpc_result_t *res, unsigned min_hits)
{
    FUZZ_CHECK(tpc_result_slices(res) == tpc_batch_count(b));
    for (size_t i = 0; i < tpc_batch_count(b); i++) {
        tpc_slice_t s;
        tpc_batch_slice(b, i, &s);
        tpc_slice_result_t r;
        tpc_result_slice(res, i, &r);
        uint32_t h = 0;
        for (uint32_t t = 0; t < r.n_tracks; t++) {
            const adf_tpc_track_t *tr = &r.track[t];
            FUZZ_CHECK(tr->n_hits >= min_hits && tr->tracklet < r.n_start);
            for (uint32_t k = 0; k < tr->n_hits; k++) {
                const adf_tpc_hit_t *x = &r.hit[h + k];
                FUZZ_CHECK(x->cluster < s.hdr.n_clusters && s.cluster[x->cluster].row == x->row);
                FUZZ_CHECK(k == 0 || x->row > r.hit[h + k - 1].row);
            }
            h += tr->n_hits;
        }
        FUZZ_CHECK(h == r.n_hits);
    }
}

static void filter(const uint8_t *buf, size_t size)
{
    tpc_config_t cfg;
    tpc_config_default(&cfg);
    tpc_batch_t *b = tpc_batch_new();
    tpc_result_t *res = tpc_result_new(), *res2 = tpc_result_new();
    tpc_ref_t *ref = NULL;
    tpc_fast_t *fast = NULL;
    tusk_error_t err;
    FUZZ_CHECK(b && res && res2 && tpc_ref_new(&ref, &cfg, &err) == TUSK_OK &&
               tpc_fast_new(&fast, &cfg, 1, &err) == TUSK_OK);
    int rc = tpc_frames_read(b, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
        goto done;
    }
    int r1 = tpc_ref_run(ref, b, res, &err);
    if (r1 != TUSK_OK)
        FUZZ_CHECK(r1 == TUSK_ELIMIT && err.message[0] != '\0');
    int r2 = tpc_fast_run(fast, b, res2, &err);
    FUZZ_CHECK(r1 == r2);
    if (r1 != TUSK_OK)
        goto done;
    check_result(b, res, cfg.min_hits);
    char why[256];
    FUZZ_CHECK(tpc_result_equal(res, res2, why, sizeof why));
    size_t extra = tpc_frames_extra(res), cap = size + extra;
    uint8_t *out = malloc(cap ? cap : 1);
    adf_writer_t *w = adf_writer_new();
    FUZZ_CHECK(out && w);
    adf_writer_reset(w, out, cap);
    FUZZ_CHECK(tpc_frames_write(buf, size, b, res, &cfg, TPC_FAST, true, w, &err) == TUSK_OK);
    FUZZ_CHECK(adf_writer_used(w) == cap);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    FUZZ_CHECK(r);
    adf_reader_reset(r, out, cap, 0);
    adf_frame_t f;
    size_t tracks = 0;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK)
        tracks += f.key.type == ADF_TYPE_DATA_TPC_TRACKS;
    FUZZ_CHECK(rc == ADF_END);
    /* the input's own track frames pass on as well */
    FUZZ_CHECK(tracks >= tpc_batch_count(b));
    /* the output compared with itself: every track the same */
    tpc_compare_t cmp;
    if (tpc_compare_buffers(out, cap, out, cap, &cmp, &err) == TUSK_OK)
        FUZZ_CHECK(cmp.same == cmp.tracks_a && cmp.tracks_a == cmp.tracks_b && cmp.hits_differ == 0);
    else
        FUZZ_CHECK(err.code == TUSK_EINVAL && err.message[0] != '\0');
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(out);
done:
    tpc_ref_destroy(&ref);
    tpc_fast_destroy(&fast);
    tpc_result_destroy(&res);
    tpc_result_destroy(&res2);
    tpc_batch_destroy(&b);
}

static void analysis(const uint8_t *buf, size_t size)
{
    tpc_qa_config_t qc;
    tpc_qa_config_default(&qc);
    tpc_qa_t *qa = NULL;
    tusk_error_t err;
    FUZZ_CHECK(tpc_qa_new(&qa, &qc, &err) == TUSK_OK);
    int rc = tpc_qa_feed(qa, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
    } else {
        rc = tpc_qa_finish(qa, &err);
        FUZZ_CHECK(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0] != '\0'));
        if (rc == TUSK_OK) {
            tpc_qa_summary_t s;
            tpc_qa_summary(qa, &s);
            FUZZ_CHECK(s.all.found <= s.all.particles && s.ref.found <= s.ref.particles &&
                       s.extra.found <= s.extra.particles && s.all.particles == s.ref.particles + s.extra.particles);
            FUZZ_CHECK(s.fakes + s.matched_other + s.all.found + s.all.clones == s.tracks);
            FUZZ_CHECK(s.noise_clusters <= s.clusters);
        }
    }
    tpc_compare_t cmp;
    rc = tpc_compare_buffers(buf, size, buf, size, &cmp, &err);
    FUZZ_CHECK(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0] != '\0'));
    tpc_qa_destroy(&qa);
}

int fuzz_tpc_one(const uint8_t *data, size_t size)
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
    return fuzz_tpc_one(data, size);
}
#endif
