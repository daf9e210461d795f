/* sts_frames.c - the STS reconstruction's frames in a buffer
 * (tusk/sts.h): data:sts_digis in; data:sts_clusters and data:sts_hits
 * after each of them out. */
#include <stdlib.h>
#include <string.h>

#include "adf/adf_frames.h"
#include "sts_private.h"

/* One data:sts_digis frame into the batch. */
static int read_module(void *b, const adf_frame_t *f, tusk_error_t *err)
{
    sts_module_t m;
    adf_error_t e;
    if (adf_sts_digis_decode(f, &m.hdr, &e) != ADF_OK)
        return adf_frames_error(&e, err);
    m.timeslice = f->key.event;
    m.timestamp = f->key.timestamp;
    m.digi = NULL;
    uint64_t *keys;
    int st = sts_batch_add_room(b, &m, &keys, err);
    if (st == TUSK_OK)
        adf_sts_digis_keys(&m.hdr, 0, m.hdr.n_digis, keys);
    return st;
}

int sts_frames_read(sts_batch_t *b, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    sts_batch_clear(b);
    return adf_frames_read(buf, size, base, ADF_TYPE_DATA_STS_DIGIS, read_module, b, err);
}

size_t sts_frames_extra(const sts_result_t *res, bool clusters)
{
    size_t n = 0;
    for (size_t i = 0; i < sts_result_modules(res); i++) {
        uint32_t nf, nb, nh;
        sts_result_counts(res, i, &nf, &nb, &nh);
        if (clusters)
            n += ADF_KEY_SIZE + adf_sts_clusters_payload_size(nf + nb);
        n += ADF_KEY_SIZE + adf_sts_hits_payload_size(nh);
    }
    return n;
}

int sts_frames_write_module(const sts_result_t *res, size_t i, const sts_module_t *m, const sts_config_t *cfg,
                            int backend, bool clusters, adf_writer_t *w, tusk_error_t *err)
{
    uint32_t nf, nb, nh;
    sts_result_counts(res, i, &nf, &nb, &nh);
    size_t nc = (size_t)nf + nb, most = nc > nh ? nc : nh;
    adf_sts_cluster_t *c = clusters ? malloc((nc ? nc : 1) * sizeof *c) : NULL;
    adf_sts_hit_t *h = malloc((nh ? nh : 1) * sizeof *h);
    if ((clusters && !c) || !h) {
        free(c);
        free(h);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu clusters or hits)", most);
    }
    uint32_t digest = sts_config_digest(cfg);
    adf_error_t e;
    int st = TUSK_OK;
    if (clusters) {
        for (uint32_t k = 0; k < nc; k++)
            sts_result_cluster(res, i, k, &c[k]);
        adf_sts_clusters_t hc = {nf, nb, digest, m->hdr.module, m->hdr.strips, (uint8_t)backend, 0, NULL};
        if (adf_sts_clusters_encode(w, m->timeslice, m->timestamp, &hc, c, &e) != ADF_OK)
            st = adf_frames_error(&e, err);
    }
    if (st == TUSK_OK) {
        for (uint32_t k = 0; k < nh; k++)
            sts_result_hit(res, i, k, &h[k]);
        adf_sts_hits_t hh = {nh, digest, m->hdr.module, (uint8_t)backend, 0, NULL};
        if (adf_sts_hits_encode(w, m->timeslice, m->timestamp, &hh, h, &e) != ADF_OK)
            st = adf_frames_error(&e, err);
    }
    free(c);
    free(h);
    return st;
}

typedef struct write_job {
    const sts_batch_t *b;
    const sts_result_t *res;
    const sts_config_t *cfg;
    int backend;
    bool clusters;
} write_job_t;

/* Module k's data:sts_clusters and data:sts_hits, after its digis. */
static int write_module(void *ctx, size_t k, const adf_frame_t *f, adf_writer_t *w, tusk_error_t *err)
{
    (void)f;
    const write_job_t *j = ctx;
    sts_module_t m;
    sts_batch_module(j->b, k, &m);
    return sts_frames_write_module(j->res, k, &m, j->cfg, j->backend, j->clusters, w, err);
}

int sts_frames_write(const void *buf, size_t size, const sts_batch_t *b, const sts_result_t *res,
                     const sts_config_t *cfg, int backend, bool keep_digis, bool clusters, adf_writer_t *w,
                     tusk_error_t *err)
{
    size_t n = sts_batch_count(b);
    if (sts_result_modules(res) != n)
        return tusk_error_set(err, TUSK_EINVAL, "%zu modules but results of %zu", n, sts_result_modules(res));
    write_job_t j = {b, res, cfg, backend, clusters};
    return adf_frames_write(buf, size, ADF_TYPE_DATA_STS_DIGIS, keep_digis, n, "modules", write_module, &j, w, err);
}
