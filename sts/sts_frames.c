/* sts_frames.c - the STS reconstruction's frames in a buffer
 * (tusk/sts.h): data:sts_digis in; data:sts_clusters and data:sts_hits
 * after each of them out. */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tusk/adf.h"
#include "sts_private.h"

int sts_frames_read(sts_batch_t *b, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    sts_batch_clear(b);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, base);
    adf_frame_t f;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type != ADF_TYPE_DATA_STS_DIGIS)
            continue;
        sts_module_t m;
        adf_error_t e;
        if (adf_sts_digis_decode(&f, &m.hdr, &e) != ADF_OK) {
            st = tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
            break;
        }
        m.timeslice = f.key.event;
        m.timestamp = f.key.timestamp;
        m.digi = NULL;
        uint64_t *keys;
        if ((st = sts_batch_add_room(b, &m, &keys, err)) != TUSK_OK)
            break;
        adf_sts_digis_keys(&m.hdr, 0, m.hdr.n_digis, keys);
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    adf_reader_destroy(&r);
    return st;
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
            st = tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s",
                                e.message);
    }
    if (st == TUSK_OK) {
        for (uint32_t k = 0; k < nh; k++)
            sts_result_hit(res, i, k, &h[k]);
        adf_sts_hits_t hh = {nh, digest, m->hdr.module, (uint8_t)backend, 0, NULL};
        if (adf_sts_hits_encode(w, m->timeslice, m->timestamp, &hh, h, &e) != ADF_OK)
            st = tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s",
                                e.message);
    }
    free(c);
    free(h);
    return st;
}

int sts_frames_write(const void *buf, size_t size, const sts_batch_t *b, const sts_result_t *res,
                     const sts_config_t *cfg, int backend, bool keep_digis, bool clusters, adf_writer_t *w,
                     tusk_error_t *err)
{
    size_t n = sts_batch_count(b);
    if (sts_result_modules(res) != n)
        return tusk_error_set(err, TUSK_EINVAL, "%zu modules but results of %zu", n, sts_result_modules(res));
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f;
    size_t k = 0;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        bool digis = f.key.type == ADF_TYPE_DATA_STS_DIGIS;
        if ((!digis || keep_digis) && adf_writer_put_frame(w, &f) != ADF_OK) {
            st = tusk_error_set(err, TUSK_ELIMIT, "%s", adf_writer_error(w)->message);
            break;
        }
        if (!digis)
            continue;
        if (k >= n) {
            st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds more modules than the %zu results", n);
            break;
        }
        sts_module_t m;
        sts_batch_module(b, k, &m);
        if ((st = sts_frames_write_module(res, k, &m, cfg, backend, clusters, w, err)) != TUSK_OK)
            break;
        k++;
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    if (st == TUSK_OK && k != n)
        st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds %zu modules, not the %zu of the results", k, n);
    adf_reader_destroy(&r);
    return st;
}
