/* fuzz_sts.c - fuzz target: the buffers the STS reconstruction's stages
 * read, as they arrive from a peer or a file (ADF files are seeds as they
 * are). Invariants:
 *   - the filter: sts_frames_read either refuses the buffer with a message
 *     (TUSK_EINVAL) or reads every data:sts_digis frame; the reference and
 *     the fast backend then give clusters that hold every digi once, each
 *     within its side, and hits that name existing clusters; the output is
 *     written whole, in exactly the room sts_frames_extra promised, and
 *     reads back with one data:sts_clusters and one data:sts_hits a module;
 *   - the quality analysis either refuses with a message or finishes with
 *     counts that add up.
 * No file is written. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"
#include "tusk/sts.h"

/* Every digi in one cluster, clusters on their side, hits naming clusters. */
static void check_result(const sts_batch_t *b, const sts_result_t *res)
{
    FUZZ_CHECK(sts_result_modules(res) == sts_batch_count(b));
    for (size_t i = 0; i < sts_batch_count(b); i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        uint32_t nf, nb, nh;
        sts_result_counts(res, i, &nf, &nb, &nh);
        uint64_t size = 0;
        for (uint32_t k = 0; k < nf + nb; k++) {
            adf_sts_cluster_t c;
            sts_result_cluster(res, i, k, &c);
            FUZZ_CHECK(c.size >= 1);
            FUZZ_CHECK(k < nf ? c.channel + c.size <= m.hdr.strips
                              : c.channel >= m.hdr.strips && c.channel + c.size <= 2u * m.hdr.strips);
            size += c.size;
        }
        FUZZ_CHECK(size == m.hdr.n_digis);
        for (uint32_t k = 0; k < nh; k++) {
            adf_sts_hit_t h;
            sts_result_hit(res, i, k, &h);
            FUZZ_CHECK(h.front < nf && h.back < nb);
        }
    }
}

static void filter(const uint8_t *buf, size_t size)
{
    sts_config_t cfg;
    sts_config_default(&cfg);
    sts_batch_t *b = sts_batch_new();
    sts_result_t *res = sts_result_new();
    sts_ref_t *ref = NULL;
    sts_fast_t *fast = NULL;
    tusk_error_t err;
    FUZZ_CHECK(b && res && sts_ref_new(&ref, &cfg, &err) == TUSK_OK && sts_fast_new(&fast, &cfg, 1, &err) == TUSK_OK);
    int rc = sts_frames_read(b, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
        goto done;
    }
    FUZZ_CHECK(sts_ref_run(ref, b, res, &err) == TUSK_OK);
    check_result(b, res);
    FUZZ_CHECK(sts_fast_run(fast, b, res, &err) == TUSK_OK);
    check_result(b, res);
    size_t extra = sts_frames_extra(res, true), cap = size + extra;
    uint8_t *out = malloc(cap ? cap : 1);
    adf_writer_t *w = adf_writer_new();
    FUZZ_CHECK(out && w);
    adf_writer_reset(w, out, cap);
    FUZZ_CHECK(sts_frames_write(buf, size, b, res, &cfg, STS_FAST, true, true, w, &err) == TUSK_OK);
    FUZZ_CHECK(adf_writer_used(w) == cap);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    FUZZ_CHECK(r);
    adf_reader_reset(r, out, cap, 0);
    adf_frame_t f;
    size_t clusters = 0, hits = 0;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        clusters += f.key.type == ADF_TYPE_DATA_STS_CLUSTERS;
        hits += f.key.type == ADF_TYPE_DATA_STS_HITS;
    }
    FUZZ_CHECK(rc == ADF_END);
    /* the input's own cluster and hit frames pass on as well */
    FUZZ_CHECK(clusters >= sts_batch_count(b) && hits >= sts_batch_count(b));
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(out);
done:
    sts_ref_destroy(&ref);
    sts_fast_destroy(&fast);
    sts_result_destroy(&res);
    sts_batch_destroy(&b);
}

static void analysis(const uint8_t *buf, size_t size)
{
    sts_qa_config_t qc;
    sts_qa_config_default(&qc);
    sts_qa_t *qa = NULL;
    tusk_error_t err;
    FUZZ_CHECK(sts_qa_new(&qa, &qc, &err) == TUSK_OK);
    int rc = sts_qa_feed(qa, buf, size, 0, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0] != '\0');
    } else {
        rc = sts_qa_finish(qa, &err);
        FUZZ_CHECK(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0] != '\0'));
        if (rc == TUSK_OK) {
            sts_qa_summary_t s;
            sts_qa_summary(qa, &s);
            for (size_t i = 0; i < s.rows; i++) {
                const sts_qa_row_t *r = &s.row[i];
                FUZZ_CHECK(r->points_found[0] <= r->points_front && r->points_found[1] <= r->points_back &&
                           r->points_both <= r->points && r->points_hit <= r->points_both &&
                           r->hits_true <= r->hits && r->clusters_matched[0] <= r->clusters[0] &&
                           r->clusters_matched[1] <= r->clusters[1]);
            }
        }
    }
    sts_qa_destroy(&qa);
}

int fuzz_sts_one(const uint8_t *data, size_t size)
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
    return fuzz_sts_one(data, size);
}
#endif
