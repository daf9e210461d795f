/* tpc_frames.c - the slice tracker's frames in a buffer (tusk/tpc.h):
 * data:tpc_clusters in; data:tpc_tracks after each of them out. */
#include <stdlib.h>
#include <string.h>

#include "adf/adf_frames.h"
#include "tpc_private.h"

/* One data:tpc_clusters frame into the batch. */
static int read_slice(void *b, const adf_frame_t *f, tusk_error_t *err)
{
    tpc_slice_t s;
    adf_error_t e;
    if (adf_tpc_clusters_decode(f, &s.hdr, &e) != ADF_OK)
        return adf_frames_error(&e, err);
    s.event = f->key.event;
    s.timestamp = f->key.timestamp;
    s.cluster = NULL;
    adf_tpc_cluster_t *cl;
    int st = tpc_batch_add_room(b, &s, &cl, err);
    for (uint32_t i = 0; st == TUSK_OK && i < s.hdr.n_clusters; i++)
        adf_tpc_cluster(&s.hdr, i, &cl[i]);
    return st;
}

int tpc_frames_read(tpc_batch_t *b, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    tpc_batch_clear(b);
    return adf_frames_read(buf, size, base, ADF_TYPE_DATA_TPC_CLUSTERS, read_slice, b, err);
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
        return tusk_error_set(err, adf_frames_error(&e, err), "event %u, slice %u: %s", (unsigned)slice->event,
                              (unsigned)slice->hdr.slice, e.message);
    return TUSK_OK;
}

typedef struct write_job {
    const tpc_batch_t *b;
    const tpc_result_t *res;
    const tpc_config_t *cfg;
    int backend;
} write_job_t;

/* Slice k's data:tpc_tracks, after its clusters. */
static int write_slice(void *ctx, size_t k, const adf_frame_t *f, adf_writer_t *w, tusk_error_t *err)
{
    (void)f;
    const write_job_t *j = ctx;
    tpc_slice_t s;
    tpc_batch_slice(j->b, k, &s);
    return tpc_frames_write_slice(j->res, k, &s, j->cfg, j->backend, w, err);
}

int tpc_frames_write(const void *buf, size_t size, const tpc_batch_t *b, const tpc_result_t *res,
                     const tpc_config_t *cfg, int backend, bool keep_clusters, adf_writer_t *w, tusk_error_t *err)
{
    size_t n = tpc_batch_count(b);
    if (tpc_result_slices(res) != n)
        return tusk_error_set(err, TUSK_EINVAL, "%zu slices but results of %zu", n, tpc_result_slices(res));
    write_job_t j = {b, res, cfg, backend};
    return adf_frames_write(buf, size, ADF_TYPE_DATA_TPC_CLUSTERS, keep_clusters, n, "slices", write_slice, &j, w,
                            err);
}
