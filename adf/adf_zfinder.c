/* adf_zfinder.c - data:id_spacepoints, data:zvertex and data:id_truth
 * codecs (tusk layouts, adf/FORMAT.md). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

/* data:id_spacepoints: header and point offsets. */
enum { SP_N_POINTS = 0, SP_PHI_MIN = 4, SP_PHI_WIDTH = 8, SP_FLAGS = 12, SP_RESERVED = 14 };
enum { SPP_RHO = 0, SPP_PHI = 4, SPP_Z = 8, SPP_LAYER = 12 };
_Static_assert(SP_RESERVED + 2 == ADF_IDSP_HEADER_SIZE, "data:id_spacepoints header size");
_Static_assert(SPP_LAYER + 1 == ADF_IDSP_POINT_SIZE, "data:id_spacepoints point size");

/* data:zvertex */
enum { ZV_N = 0, ZV_MODE = 1, ZV_PRECISION = 2, ZV_BACKEND = 3, ZV_ENTRIES = 4, ZV_PAIRS = 8, ZV_SETTINGS = 16,
       ZV_RESERVED = 20 };
enum { ZVV_Z0 = 0, ZVV_COUNT = 8, ZVV_BIN = 12 };
_Static_assert(ZV_RESERVED + 4 == ADF_ZVERTEX_HEADER_SIZE, "data:zvertex header size");
_Static_assert(ZVV_BIN + 4 == ADF_ZVERTEX_VERTEX_SIZE, "data:zvertex vertex size");

/* data:id_truth */
enum { TR_Z_SIGNAL = 0, TR_N_PILEUP = 4, TR_FLAGS = 6, TR_N_POINTS = 8 };
enum { TRP_PARTICLE = 0, TRP_VERTEX = 4 };
_Static_assert(TR_N_POINTS + 4 == ADF_IDTRUTH_HEADER_SIZE, "data:id_truth header size");
_Static_assert(TRP_VERTEX + 2 == ADF_IDTRUTH_POINT_SIZE, "data:id_truth point size");

/* ---- data:id_spacepoints ---------------------------------------------------- */

size_t adf_idsp_payload_size(uint32_t n_points)
{
    return ADF_IDSP_HEADER_SIZE + (size_t)n_points * ADF_IDSP_POINT_SIZE;
}

static bool range_ok(float phi_min, float phi_width)
{
    return isfinite(phi_min) && isfinite(phi_width) && phi_width > 0.0f && phi_width <= (float)ADF_IDSP_TWO_PI;
}

int adf_idsp_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_idsp_t *h,
                    const adf_idsp_point_t *pts, adf_error_t *err)
{
    if (h->n_points > ADF_IDSP_MAX_POINTS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:id_spacepoints: %u spacepoints, at most %u supported",
                             (unsigned)h->n_points, ADF_IDSP_MAX_POINTS);
    if (!range_ok(h->phi_min, h->phi_width))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                             "data:id_spacepoints: phi range from %g over %g rad, expected finite numbers and a width "
                             "in (0, 2 pi]",
                             (double)h->phi_min, (double)h->phi_width);
    for (uint32_t i = 0; i < h->n_points; i++)
        if (pts[i].layer >= ADF_IDSP_MAX_LAYERS)
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                                 "data:id_spacepoints: spacepoint %u is in layer %u, the inner detector has %u (0-%u)",
                                 (unsigned)i, (unsigned)pts[i].layer, ADF_IDSP_MAX_LAYERS, ADF_IDSP_MAX_LAYERS - 1);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_ID_SPACEPOINTS, event, timestamp, adf_idsp_payload_size(h->n_points),
                               &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + SP_N_POINTS, h->n_points);
    tusk_put_f32(p + SP_PHI_MIN, h->phi_min);
    tusk_put_f32(p + SP_PHI_WIDTH, h->phi_width);
    tusk_put_u16(p + SP_FLAGS, h->flags);
    tusk_put_u16(p + SP_RESERVED, 0);
    uint8_t *q = p + ADF_IDSP_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_points; i++, q += ADF_IDSP_POINT_SIZE) {
        tusk_put_f32(q + SPP_RHO, pts[i].rho);
        tusk_put_f32(q + SPP_PHI, pts[i].phi);
        tusk_put_f32(q + SPP_Z, pts[i].z);
        q[SPP_LAYER] = pts[i].layer;
    }
    return ADF_OK;
}

int adf_idsp_decode(const adf_frame_t *f, adf_idsp_t *sp, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_ID_SPACEPOINTS, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_IDSP_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:id_spacepoints at offset %llu: payload of %u bytes is shorter than its %u-byte "
                             "header",
                             off, (unsigned)f->payload_size, ADF_IDSP_HEADER_SIZE);
    uint32_t n = tusk_get_u32(p + SP_N_POINTS);
    if (n > ADF_IDSP_MAX_POINTS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:id_spacepoints at offset %llu: %u spacepoints, at most %u supported", off,
                             (unsigned)n, ADF_IDSP_MAX_POINTS);
    if (f->payload_size != adf_idsp_payload_size(n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:id_spacepoints at offset %llu: payload is %u bytes, %zu expected for %u "
                             "spacepoints",
                             off, (unsigned)f->payload_size, adf_idsp_payload_size(n), (unsigned)n);
    float phi_min = tusk_get_f32(p + SP_PHI_MIN), phi_width = tusk_get_f32(p + SP_PHI_WIDTH);
    if (!range_ok(phi_min, phi_width))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:id_spacepoints at offset %llu: phi range from %g over %g rad, expected finite "
                             "numbers and a width in (0, 2 pi]",
                             off, (double)phi_min, (double)phi_width);
    const uint8_t *q = p + ADF_IDSP_HEADER_SIZE;
    for (uint32_t i = 0; i < n; i++, q += ADF_IDSP_POINT_SIZE)
        if (q[SPP_LAYER] >= ADF_IDSP_MAX_LAYERS)
            return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                                 "data:id_spacepoints at offset %llu: spacepoint %u is in layer %u, the inner detector "
                                 "has %u (0-%u)",
                                 off, (unsigned)i, (unsigned)q[SPP_LAYER], ADF_IDSP_MAX_LAYERS,
                                 ADF_IDSP_MAX_LAYERS - 1);
    sp->n_points = n;
    sp->phi_min = phi_min;
    sp->phi_width = phi_width;
    sp->flags = tusk_get_u16(p + SP_FLAGS);
    sp->raw = p + ADF_IDSP_HEADER_SIZE;
    return ADF_OK;
}

void adf_idsp_point(const adf_idsp_t *sp, uint32_t i, adf_idsp_point_t *pt)
{
    const uint8_t *q = sp->raw + (size_t)i * ADF_IDSP_POINT_SIZE;
    pt->rho = tusk_get_f32(q + SPP_RHO);
    pt->phi = tusk_get_f32(q + SPP_PHI);
    pt->z = tusk_get_f32(q + SPP_Z);
    pt->layer = q[SPP_LAYER];
}

/* ---- data:zvertex ------------------------------------------------------------ */

size_t adf_zvertex_payload_size(unsigned n_vertices)
{
    return ADF_ZVERTEX_HEADER_SIZE + (size_t)n_vertices * ADF_ZVERTEX_VERTEX_SIZE;
}

/* The first thing wrong with the header's enumerations, or NULL. */
static const char *zvertex_problem(unsigned mode, unsigned precision, unsigned backend, char *buf, size_t cap)
{
    if (mode != ADF_ZVERTEX_PAIRS && mode != ADF_ZVERTEX_TRIPLETS)
        snprintf(buf, cap, "mode %u, expected 1 (pairs) or 2 (triplets)", mode);
    else if (precision != 4 && precision != 8)
        snprintf(buf, cap, "precision %u, expected 4 (float) or 8 (double)", precision);
    else if (backend < ADF_ZVERTEX_REFERENCE || backend > ADF_ZVERTEX_OPENCL)
        snprintf(buf, cap, "backend %u, expected 1 (reference), 2 (fast) or 3 (opencl)", backend);
    else
        return NULL;
    return buf;
}

int adf_zvertex_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_zvertex_t *zv,
                       adf_error_t *err)
{
    char why[96];
    if (zv->n_vertices > ADF_ZVERTEX_MAX)
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:zvertex: %u vertices, at most %d",
                             (unsigned)zv->n_vertices, ADF_ZVERTEX_MAX);
    if (zvertex_problem(zv->mode, zv->precision, zv->backend, why, sizeof why))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:zvertex: %s", why);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_ZVERTEX, event, timestamp, adf_zvertex_payload_size(zv->n_vertices),
                               &p, err);
    if (rc != ADF_OK)
        return rc;
    p[ZV_N] = zv->n_vertices;
    p[ZV_MODE] = zv->mode;
    p[ZV_PRECISION] = zv->precision;
    p[ZV_BACKEND] = zv->backend;
    tusk_put_u32(p + ZV_ENTRIES, zv->entries);
    tusk_put_u64(p + ZV_PAIRS, zv->pairs);
    tusk_put_u32(p + ZV_SETTINGS, zv->settings);
    tusk_put_u32(p + ZV_RESERVED, 0);
    uint8_t *q = p + ADF_ZVERTEX_HEADER_SIZE;
    for (unsigned i = 0; i < zv->n_vertices; i++, q += ADF_ZVERTEX_VERTEX_SIZE) {
        tusk_put_f64(q + ZVV_Z0, zv->vertex[i].z0);
        tusk_put_u32(q + ZVV_COUNT, zv->vertex[i].count);
        tusk_put_u32(q + ZVV_BIN, zv->vertex[i].bin);
    }
    return ADF_OK;
}

int adf_zvertex_decode(const adf_frame_t *f, adf_zvertex_t *zv, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_ZVERTEX, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_ZVERTEX_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:zvertex at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_ZVERTEX_HEADER_SIZE);
    unsigned n = p[ZV_N];
    if (n > ADF_ZVERTEX_MAX)
        return adf_error_set(err, ADF_ERANGE, f->offset, "data:zvertex at offset %llu: %u vertices, at most %d", off,
                             n, ADF_ZVERTEX_MAX);
    if (f->payload_size != adf_zvertex_payload_size(n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:zvertex at offset %llu: payload is %u bytes, %zu expected for %u vertices", off,
                             (unsigned)f->payload_size, adf_zvertex_payload_size(n), n);
    char why[96];
    if (zvertex_problem(p[ZV_MODE], p[ZV_PRECISION], p[ZV_BACKEND], why, sizeof why))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:zvertex at offset %llu: %s", off, why);
    zv->n_vertices = (uint8_t)n;
    zv->mode = p[ZV_MODE];
    zv->precision = p[ZV_PRECISION];
    zv->backend = p[ZV_BACKEND];
    zv->entries = tusk_get_u32(p + ZV_ENTRIES);
    zv->pairs = tusk_get_u64(p + ZV_PAIRS);
    zv->settings = tusk_get_u32(p + ZV_SETTINGS);
    const uint8_t *q = p + ADF_ZVERTEX_HEADER_SIZE;
    for (unsigned i = 0; i < ADF_ZVERTEX_MAX; i++) {
        adf_zvertex_peak_t *v = &zv->vertex[i];
        if (i < n) {
            v->z0 = tusk_get_f64(q + ZVV_Z0);
            v->count = tusk_get_u32(q + ZVV_COUNT);
            v->bin = tusk_get_u32(q + ZVV_BIN);
            q += ADF_ZVERTEX_VERTEX_SIZE;
        } else {
            v->z0 = 0.0;
            v->count = v->bin = 0;
        }
    }
    return ADF_OK;
}

/* ---- data:id_truth ------------------------------------------------------------ */

size_t adf_idtruth_payload_size(unsigned n_pileup, uint32_t n_points)
{
    return ADF_IDTRUTH_HEADER_SIZE + (size_t)n_pileup * 4u + (size_t)n_points * ADF_IDTRUTH_POINT_SIZE;
}

/* Check one point; on failure fill err with `code`, `what` prefixing the
 * message. */
static int check_truth_point(uint32_t i, uint32_t particle, unsigned vertex, unsigned n_pileup, const char *what,
                             int code, uint64_t offset, adf_error_t *err)
{
    if (vertex == ADF_IDTRUTH_NOISE_VERTEX) {
        if (particle != ADF_IDTRUTH_NOISE_PARTICLE)
            return adf_error_set(err, code, offset,
                                 "%s: spacepoint %u is noise (vertex 0xFFFF) but names particle %u (expected 0xFFFFFFFF)",
                                 what, (unsigned)i, (unsigned)particle);
        return ADF_OK;
    }
    if (vertex > n_pileup)
        return adf_error_set(err, code, offset,
                             "%s: spacepoint %u comes from vertex %u, but there are %u pile-up vertices (1-%u, 0 the "
                             "signal)",
                             what, (unsigned)i, vertex, n_pileup, n_pileup);
    if (particle == ADF_IDTRUTH_NOISE_PARTICLE)
        return adf_error_set(err, code, offset,
                             "%s: spacepoint %u comes from vertex %u but has the noise particle number 0xFFFFFFFF",
                             what, (unsigned)i, vertex);
    return ADF_OK;
}

int adf_idtruth_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_idtruth_t *t,
                       const adf_idtruth_point_t *pts, adf_error_t *err)
{
    if (t->n_pileup > ADF_IDTRUTH_MAX_PILEUP)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:id_truth: %u pile-up vertices, at most %u supported",
                             (unsigned)t->n_pileup, ADF_IDTRUTH_MAX_PILEUP);
    if (t->n_points > ADF_IDSP_MAX_POINTS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:id_truth: %u spacepoints, at most %u supported",
                             (unsigned)t->n_points, ADF_IDSP_MAX_POINTS);
    for (uint32_t i = 0; i < t->n_points; i++) {
        int rc = check_truth_point(i, pts[i].particle, pts[i].vertex, t->n_pileup, "data:id_truth", ADF_EINVAL,
                                   ADF_NO_OFFSET, err);
        if (rc != ADF_OK)
            return rc;
    }
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_ID_TRUTH, event, timestamp,
                               adf_idtruth_payload_size(t->n_pileup, t->n_points), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_f32(p + TR_Z_SIGNAL, t->z_signal);
    tusk_put_u16(p + TR_N_PILEUP, t->n_pileup);
    tusk_put_u16(p + TR_FLAGS, t->flags);
    tusk_put_u32(p + TR_N_POINTS, t->n_points);
    uint8_t *q = p + ADF_IDTRUTH_HEADER_SIZE;
    for (unsigned k = 0; k < t->n_pileup; k++, q += 4)
        tusk_put_f32(q, t->z_pileup[k]);
    for (uint32_t i = 0; i < t->n_points; i++, q += ADF_IDTRUTH_POINT_SIZE) {
        tusk_put_u32(q + TRP_PARTICLE, pts[i].particle);
        tusk_put_u16(q + TRP_VERTEX, pts[i].vertex);
    }
    return ADF_OK;
}

int adf_idtruth_decode(const adf_frame_t *f, adf_idtruth_t *t, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_ID_TRUTH, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_IDTRUTH_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:id_truth at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_IDTRUTH_HEADER_SIZE);
    unsigned n_pu = tusk_get_u16(p + TR_N_PILEUP);
    uint32_t n = tusk_get_u32(p + TR_N_POINTS);
    if (n_pu > ADF_IDTRUTH_MAX_PILEUP)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:id_truth at offset %llu: %u pile-up vertices, at most %u supported", off, n_pu,
                             ADF_IDTRUTH_MAX_PILEUP);
    if (n > ADF_IDSP_MAX_POINTS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:id_truth at offset %llu: %u spacepoints, at most %u supported", off, (unsigned)n,
                             ADF_IDSP_MAX_POINTS);
    size_t want = adf_idtruth_payload_size(n_pu, n);
    if (f->payload_size != want)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:id_truth at offset %llu: payload is %u bytes, %zu expected for %u pile-up vertices "
                             "and %u spacepoints",
                             off, (unsigned)f->payload_size, want, n_pu, (unsigned)n);
    const uint8_t *points = p + ADF_IDTRUTH_HEADER_SIZE + 4u * n_pu;
    char what[64];
    snprintf(what, sizeof what, "data:id_truth at offset %llu", off);
    const uint8_t *q = points;
    for (uint32_t i = 0; i < n; i++, q += ADF_IDTRUTH_POINT_SIZE) {
        rc = check_truth_point(i, tusk_get_u32(q + TRP_PARTICLE), tusk_get_u16(q + TRP_VERTEX), n_pu, what,
                               ADF_EPAYLOAD, f->offset, err);
        if (rc != ADF_OK)
            return rc;
    }
    t->z_signal = tusk_get_f32(p + TR_Z_SIGNAL);
    t->n_pileup = (uint16_t)n_pu;
    t->flags = tusk_get_u16(p + TR_FLAGS);
    t->n_points = n;
    q = p + ADF_IDTRUTH_HEADER_SIZE;
    for (unsigned k = 0; k < n_pu; k++, q += 4)
        t->z_pileup[k] = tusk_get_f32(q);
    t->raw = points;
    return ADF_OK;
}

void adf_idtruth_point(const adf_idtruth_t *t, uint32_t i, adf_idtruth_point_t *pt)
{
    const uint8_t *q = t->raw + (size_t)i * ADF_IDTRUTH_POINT_SIZE;
    pt->particle = tusk_get_u32(q + TRP_PARTICLE);
    pt->vertex = tusk_get_u16(q + TRP_VERTEX);
}
