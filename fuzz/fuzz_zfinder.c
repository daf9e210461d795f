/* fuzz_zfinder.c - fuzz target: the buffers the z-finder's stages read,
 * as they arrive from a peer or a file (ADF files are seeds as they are).
 * Invariants:
 *   - the filter: zf_frames_read either refuses the buffer with a message
 *     (TUSK_EINVAL) or reads every data:id_spacepoints frame; the
 *     reference (pairs, then triplets with a second vertex) either refuses
 *     a RoI with a message (TUSK_EINVAL: a point outside its RoI) or gives
 *     a result within its histogram (count <= entries <= pairs, the window
 *     inside the bins); the output is written whole within the room
 *     zf_frames_extra promised, and reads back with one data:zvertex per
 *     RoI;
 *   - the quality analysis either refuses with a message or finishes with
 *     rows that account for every RoI it matched.
 * No file is written. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"
#include "tusk/zfinder.h"

static void filter(const uint8_t *buf, size_t size, int mode)
{
    zf_config_t cfg;
    zf_config_default(&cfg);
    cfg.mode = (enum zf_mode)mode;
    cfg.second_vertex = mode == ZF_TRIPLETS;
    cfg.slice_deg = 2.0; /* few slices: fuzzed RoIs are small */
    zf_batch_t *b = zf_batch_new();
    zf_ref_t *ref = NULL;
    tusk_error_t err;
    FUZZ_CHECK(b && zf_ref_new(&ref, &cfg, &err) == TUSK_OK);
    int rc = zf_frames_read(b, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
        goto done;
    }
    size_t n = zf_batch_count(b);
    zf_result_t *res = calloc(n ? n : 1, sizeof *res);
    FUZZ_CHECK(res);
    unsigned bins = zf_config_bins(&cfg);
    for (size_t i = 0; i < n; i++) {
        zf_roi_t roi;
        zf_batch_roi(b, i, &roi);
        rc = zf_ref_roi(ref, &roi, &res[i], &err);
        if (rc != TUSK_OK) {
            FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
            free(res);
            goto done;
        }
        FUZZ_CHECK(res[i].entries <= res[i].pairs && res[i].n_vertices <= 2);
        for (unsigned v = 0; v < res[i].n_vertices; v++)
            FUZZ_CHECK(res[i].vertex[v].count > 0 && res[i].vertex[v].count <= res[i].entries &&
                       res[i].vertex[v].bin + 2 < bins);
    }
    size_t cap = size + zf_frames_extra(n) + 1;
    uint8_t *out = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    FUZZ_CHECK(out && w);
    adf_writer_reset(w, out, cap);
    FUZZ_CHECK(zf_frames_write(buf, size, res, n, &cfg, ZF_REFERENCE, true, w, &err) == TUSK_OK);
    size_t used = adf_writer_used(w);
    FUZZ_CHECK(used <= size + zf_frames_extra(n));
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    FUZZ_CHECK(r);
    adf_reader_reset(r, out, used, 0);
    adf_frame_t f;
    size_t zv = 0;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK)
        zv += f.key.type == ADF_TYPE_DATA_ZVERTEX;
    FUZZ_CHECK(rc == ADF_END);
    /* the input's own data:zvertex frames pass on as well */
    FUZZ_CHECK(zv >= n);
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(out);
    free(res);
done:
    zf_ref_destroy(&ref);
    zf_batch_destroy(&b);
}

static void analysis(const uint8_t *buf, size_t size)
{
    zf_qa_config_t qc;
    zf_qa_config_default(&qc);
    qc.alg.slice_deg = 2.0;
    zf_qa_t *qa = NULL;
    tusk_error_t err;
    FUZZ_CHECK(zf_qa_new(&qa, &qc, &err) == TUSK_OK);
    int rc = zf_qa_feed(qa, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
    } else {
        rc = zf_qa_finish(qa, &err);
        FUZZ_CHECK(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0] != '\0'));
        const zf_qa_row_t *rows;
        size_t n = zf_qa_rows(qa, &rows);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(rows[i].found <= rows[i].rois && rows[i].within_1mm <= rows[i].found &&
                       rows[i].ref_rois <= rows[i].found);
    }
    zf_qa_destroy(&qa);
}

int fuzz_zfinder_one(const uint8_t *data, size_t size)
{
    /* a copy of exactly the input's size, so a read past it is caught */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    filter(buf, size, size % 2 ? ZF_TRIPLETS : ZF_PAIRS);
    analysis(buf, size);
    free(buf);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_zfinder_one(data, size);
}
#endif
