/* zf_frames.c - the z-finder's frames in a buffer (tusk/zfinder.h):
 * data:id_spacepoints in, data:zvertex after each of them out. */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tusk/adf.h"
#include "zf_private.h"

/* Read every frame of buf; call fn for each data:id_spacepoints. */
static int read_points(zf_batch_t *b, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, base);
    adf_frame_t f;
    adf_idsp_point_t *pts = NULL;
    size_t cap = 0;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type != ADF_TYPE_DATA_ID_SPACEPOINTS)
            continue;
        adf_idsp_t sp;
        adf_error_t e;
        if (adf_idsp_decode(&f, &sp, &e) != ADF_OK) {
            st = tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
            break;
        }
        if (tusk_grow(&pts, &cap, sp.n_points, sizeof *pts) != 0) {
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory (%u spacepoints)", (unsigned)sp.n_points);
            break;
        }
        for (uint32_t i = 0; i < sp.n_points; i++)
            adf_idsp_point(&sp, i, &pts[i]);
        zf_roi_t roi = {f.key.event, f.key.timestamp, sp.phi_min, sp.phi_width, sp.n_points, pts};
        if ((st = zf_batch_add(b, &roi, err)) != TUSK_OK)
            break;
    }
    if (st == TUSK_OK && rc != ADF_END) {
        const adf_error_t *e = adf_reader_error(r);
        st = tusk_error_set(err, TUSK_EINVAL, "%s", e->message);
    }
    free(pts);
    adf_reader_destroy(&r);
    return st;
}

int zf_frames_read(zf_batch_t *b, const void *buf, size_t size, uint64_t base_offset, tusk_error_t *err)
{
    zf_batch_clear(b);
    return read_points(b, buf, size, base_offset, err);
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

int zf_frames_write(const void *buf, size_t size, const zf_result_t *res, size_t n, const zf_config_t *cfg,
                    int backend, bool keep_points, adf_writer_t *w, tusk_error_t *err)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f;
    size_t k = 0;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        bool sp = f.key.type == ADF_TYPE_DATA_ID_SPACEPOINTS;
        if ((!sp || keep_points) && adf_writer_put_frame(w, &f) != ADF_OK) {
            st = tusk_error_set(err, TUSK_ELIMIT, "%s", adf_writer_error(w)->message);
            break;
        }
        if (!sp)
            continue;
        if (k >= n) {
            st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds more RoIs than the %zu results", n);
            break;
        }
        adf_zvertex_t zv;
        adf_error_t e;
        zf_result_frame(&res[k++], cfg, backend, &zv);
        if (adf_zvertex_encode(w, f.key.event, f.key.timestamp, &zv, &e) != ADF_OK) {
            st = tusk_error_set(err, TUSK_ELIMIT, "%s", e.message);
            break;
        }
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    if (st == TUSK_OK && k != n)
        st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds %zu RoIs, not the %zu of the results", k, n);
    adf_reader_destroy(&r);
    return st;
}
