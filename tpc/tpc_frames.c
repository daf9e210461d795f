/* tpc_frames.c - the slice tracker's frames in a buffer (tusk/tpc.h):
 * data:tpc_clusters in; data:tpc_tracks after each of them out. */
#include <stdlib.h>
#include <string.h>

#include "tusk/adf.h"
#include "tpc_private.h"

int tpc_frames_read(tpc_batch_t *b, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    tpc_batch_clear(b);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, base);
    adf_frame_t f;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type != ADF_TYPE_DATA_TPC_CLUSTERS)
            continue;
        tpc_slice_t s;
        adf_error_t e;
        if (adf_tpc_clusters_decode(&f, &s.hdr, &e) != ADF_OK) {
            st = tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
            break;
        }
        s.event = f.key.event;
        s.timestamp = f.key.timestamp;
        s.cluster = NULL;
        adf_tpc_cluster_t *cl;
        if ((st = tpc_batch_add_room(b, &s, &cl, err)) != TUSK_OK)
            break;
        for (uint32_t i = 0; i < s.hdr.n_clusters; i++)
            adf_tpc_cluster(&s.hdr, i, &cl[i]);
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    adf_reader_destroy(&r);
    return st;
}

size_t tpc_frames_extra(const tpc_result_t *res)
{
    size_t n = 0;
    for (size_t i = 0; i < tpc_result_slices(res); i++) {
        tpc_slice_result_t s;
        tpc_result_slice(res, i, &s);
        n += ADF_KEY_SIZE + adf_tpc_tracks_payload_size(s.n_tracks, s.n_hits);
    }
    return n;
}

int tpc_frames_write_slice(const tpc_result_t *res, size_t i, const tpc_slice_t *slice, const tpc_config_t *cfg,
                           int backend, adf_writer_t *w, tusk_error_t *err)
{
    tpc_slice_result_t s;
    tpc_result_slice(res, i, &s);
    adf_tpc_tracks_t h = {s.n_tracks, s.n_hits, slice->hdr.n_clusters, tpc_config_digest(cfg), slice->hdr.slice,
                          (uint8_t)backend, 0, NULL, NULL};
    adf_error_t e;
    if (adf_tpc_tracks_encode(w, slice->event, slice->timestamp, &h, s.track, s.hit, &e) != ADF_OK)
        return tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL,
                              "event %u, slice %u: %s", (unsigned)slice->event, (unsigned)slice->hdr.slice, e.message);
    return TUSK_OK;
}

int tpc_frames_write(const void *buf, size_t size, const tpc_batch_t *b, const tpc_result_t *res,
                     const tpc_config_t *cfg, int backend, bool keep_clusters, adf_writer_t *w, tusk_error_t *err)
{
    size_t n = tpc_batch_count(b);
    if (tpc_result_slices(res) != n)
        return tusk_error_set(err, TUSK_EINVAL, "%zu slices but results of %zu", n, tpc_result_slices(res));
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f;
    size_t k = 0;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        bool clusters = f.key.type == ADF_TYPE_DATA_TPC_CLUSTERS;
        if ((!clusters || keep_clusters) && adf_writer_put_frame(w, &f) != ADF_OK) {
            st = tusk_error_set(err, TUSK_ELIMIT, "%s", adf_writer_error(w)->message);
            break;
        }
        if (!clusters)
            continue;
        if (k >= n) {
            st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds more slices than the %zu results", n);
            break;
        }
        tpc_slice_t s;
        tpc_batch_slice(b, k, &s);
        if ((st = tpc_frames_write_slice(res, k, &s, cfg, backend, w, err)) != TUSK_OK)
            break;
        k++;
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    if (st == TUSK_OK && k != n)
        st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds %zu slices, not the %zu of the results", k, n);
    adf_reader_destroy(&r);
    return st;
}
