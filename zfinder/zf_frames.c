/* zf_frames.c - the z-finder's frames in a buffer (tusk/zfinder.h):
 * data:id_spacepoints in, data:zvertex after each of them out. */
#include <stdlib.h>
#include <string.h>

#include "adf/adf_frames.h"
#include "base/grow.h"
#include "zf_private.h"

typedef struct read_job {
    zf_batch_t *b;
    adf_idsp_point_t *pts;
    size_t cap;
} read_job_t;

/* One data:id_spacepoints frame into the batch. */
static int read_roi(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    read_job_t *j = ctx;
    adf_idsp_t sp;
    adf_error_t e;
    if (adf_idsp_decode(f, &sp, &e) != ADF_OK)
        return adf_frames_error(&e, err);
    if (tusk_grow(&j->pts, &j->cap, sp.n_points, sizeof *j->pts) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%u spacepoints)", (unsigned)sp.n_points);
    for (uint32_t i = 0; i < sp.n_points; i++)
        adf_idsp_point(&sp, i, &j->pts[i]);
    zf_roi_t roi = {f->key.event, f->key.timestamp, sp.phi_min, sp.phi_width, sp.n_points, j->pts};
    return zf_batch_add(j->b, &roi, err);
}

int zf_frames_read(zf_batch_t *b, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err)
{
    zf_batch_clear(b);
    read_job_t j = {b, NULL, 0};
    int st = adf_frames_read(buf, size, base_offset, ADF_TYPE_DATA_ID_SPACEPOINTS, read_roi, &j, err);
    free(j.pts);
    return st;
}

size_t zf_frames_extra(size_t n)
{
    return n * (ADF_KEY_SIZE + adf_zvertex_payload_size(ADF_ZVERTEX_MAX));
}

void zf_result_frame(const zf_result_t *res, const zf_config_t *cfg, int backend, adf_zvertex_t *zv)
{
    memset(zv, 0, sizeof *zv);
    zv->n_vertices = (uint8_t)res->n_vertices;
    zv->mode = (uint8_t)cfg->mode;
    zv->precision = (uint8_t)cfg->precision;
    zv->backend = (uint8_t)backend;
    zv->entries = res->entries > UINT32_MAX ? UINT32_MAX : (uint32_t)res->entries;
    zv->pairs = res->pairs;
    zv->settings = zf_config_digest(cfg);
    for (unsigned v = 0; v < res->n_vertices && v < ADF_ZVERTEX_MAX; v++) {
        zv->vertex[v].z0 = res->vertex[v].z0;
        zv->vertex[v].count = res->vertex[v].count;
        zv->vertex[v].bin = res->vertex[v].bin;
    }
}

typedef struct write_job {
    const zf_result_t *res;
    const zf_config_t *cfg;
    int backend;
} write_job_t;

/* RoI k's data:zvertex, after its spacepoints. */
static int write_roi(void *ctx, size_t k, const adf_frame_t *f, adf_writer_t *w, tusk_error_t *err)
{
    const write_job_t *j = ctx;
    adf_zvertex_t zv;
    adf_error_t e;
    zf_result_frame(&j->res[k], j->cfg, j->backend, &zv);
    if (adf_zvertex_encode(w, f->key.event, f->key.timestamp, &zv, &e) != ADF_OK)
        return adf_frames_error(&e, err);
    return TUSK_OK;
}

int zf_frames_write(const void *buf, size_t size, const zf_result_t *res, size_t n, const zf_config_t *cfg,
                    int backend, bool keep_points, adf_writer_t *w, tusk_error_t *err)
{
    write_job_t j = {res, cfg, backend};
    return adf_frames_write(buf, size, ADF_TYPE_DATA_ID_SPACEPOINTS, keep_points, n, "RoIs", write_roi, &j, w, err);
}
