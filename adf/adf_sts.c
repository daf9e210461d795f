/* adf_sts.c - data:sts_digis, data:sts_clusters, data:sts_hits and
 * data:sts_truth codecs (tusk layouts, adf/FORMAT.md). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

/* data:sts_digis: header and digi offsets. */
enum { DG_N = 0, DG_MODULE = 4, DG_STATION = 6, DG_FLAGS = 7, DG_MODULES = 8, DG_STRIPS = 10, DG_LENGTH_NS = 12,
       DG_PITCH = 16, DG_STEREO = 20, DG_LENGTH_MM = 24, DG_ORIGIN = 28 };
enum { DGD_CHARGE = 0, DGD_TIME = 2, DGD_CHANNEL = 6 };
_Static_assert(DG_ORIGIN + 12 == ADF_STS_DIGIS_HEADER_SIZE, "data:sts_digis header size");
_Static_assert(DGD_CHANNEL + 2 == ADF_STS_DIGI_SIZE, "data:sts_digis digi size");

/* data:sts_clusters */
enum { CL_N_FRONT = 0, CL_N_BACK = 4, CL_SETTINGS = 8, CL_MODULE = 12, CL_STRIPS = 14, CL_BACKEND = 16, CL_FLAGS = 17 };
enum { CLC_CHANNEL = 0, CLC_SIZE = 2, CLC_CHARGE = 4, CLC_TIME = 8, CLC_TIME_ERROR = 12, CLC_POSITION = 16,
       CLC_POSITION_ERROR = 20 };
_Static_assert(CL_FLAGS + 1 == ADF_STS_CLUSTERS_HEADER_SIZE, "data:sts_clusters header size");
_Static_assert(CLC_POSITION_ERROR + 4 == ADF_STS_CLUSTER_SIZE, "data:sts_clusters cluster size");

/* data:sts_hits */
enum { HT_N = 0, HT_SETTINGS = 4, HT_MODULE = 8, HT_BACKEND = 10, HT_FLAGS = 11 };
enum { HTH_X = 0, HTH_Y = 4, HTH_Z = 8, HTH_SX = 12, HTH_SY = 16, HTH_CXY = 20, HTH_T = 24, HTH_ST = 28,
       HTH_FRONT = 32, HTH_BACK = 36 };
_Static_assert(HT_FLAGS + 1 == ADF_STS_HITS_HEADER_SIZE, "data:sts_hits header size");
_Static_assert(HTH_BACK + 4 == ADF_STS_HIT_SIZE, "data:sts_hits hit size");

/* data:sts_truth */
enum { TR_N_POINTS = 0, TR_N_DIGIS = 4, TR_MODULE = 8, TR_FLAGS = 10 };
enum { TRP_TRACK = 0, TRP_COLLISION = 4, TRP_X = 8, TRP_Y = 12, TRP_Z = 16, TRP_T = 20, TRP_UF = 24, TRP_UB = 28,
       TRP_CHARGE = 32 };
_Static_assert(TR_FLAGS + 2 == ADF_STS_TRUTH_HEADER_SIZE, "data:sts_truth header size");
_Static_assert(TRP_CHARGE + 4 == ADF_STS_POINT_SIZE, "data:sts_truth point size");

const char *adf_sts_backend_name(unsigned b)
{
    return b == ADF_STS_REFERENCE ? "reference" : b == ADF_STS_FAST ? "fast" : b == ADF_STS_OPENCL ? "opencl" : "?";
}

/* ---- data:sts_digis ----------------------------------------------------------------- */

size_t adf_sts_digis_payload_size(uint32_t n)
{
    return ADF_STS_DIGIS_HEADER_SIZE + (size_t)n * ADF_STS_DIGI_SIZE;
}

/* The first thing wrong with a digis header, or NULL. */
static const char *digis_problem(const adf_sts_digis_t *h, char *buf, size_t cap)
{
    if (h->module > ADF_STS_MAX_MODULE)
        snprintf(buf, cap, "module %u, at most %u", (unsigned)h->module, ADF_STS_MAX_MODULE);
    else if (h->modules < 1)
        snprintf(buf, cap, "a timeslice of 0 modules");
    else if (h->strips < 1 || h->strips > ADF_STS_MAX_STRIPS)
        snprintf(buf, cap, "%u strips a side, expected 1-%u", (unsigned)h->strips, ADF_STS_MAX_STRIPS);
    else if (h->length_ns < 1)
        snprintf(buf, cap, "a timeslice of 0 ns");
    else if (!(isfinite(h->pitch_mm) && h->pitch_mm > 0.0f))
        snprintf(buf, cap, "strip pitch %g mm, expected a positive number", (double)h->pitch_mm);
    else if (!(isfinite(h->stereo_deg) && h->stereo_deg > 0.0f && h->stereo_deg < 90.0f))
        snprintf(buf, cap, "stereo angle %g degrees, expected more than 0 and less than 90", (double)h->stereo_deg);
    else if (!(isfinite(h->length_mm) && h->length_mm > 0.0f))
        snprintf(buf, cap, "strip length %g mm, expected a positive number", (double)h->length_mm);
    else if (!(isfinite(h->origin[0]) && isfinite(h->origin[1]) && isfinite(h->origin[2])))
        snprintf(buf, cap, "module origin (%g, %g, %g) mm is not finite", (double)h->origin[0], (double)h->origin[1],
                 (double)h->origin[2]);
    else
        return NULL;
    return buf;
}

/* Digi i's fields against the header: 0, or -1 with the reason. */
static int digi_problem(uint32_t i, uint64_t key, uint32_t strips, uint32_t length_ns, char *buf, size_t cap)
{
    uint32_t ch = adf_sts_key_channel(key), t = adf_sts_key_time(key);
    if (ch >= 2u * strips) {
        snprintf(buf, cap, "digi %u is in channel %u, the module has %u (2 x %u strips)", (unsigned)i, (unsigned)ch,
                 2u * strips, (unsigned)strips);
        return -1;
    }
    if (t >= length_ns) {
        snprintf(buf, cap, "digi %u has time %u ns, the timeslice is %u ns long", (unsigned)i, (unsigned)t,
                 (unsigned)length_ns);
        return -1;
    }
    return 0;
}

int adf_sts_digis_check(const adf_sts_digis_t *h, const uint64_t *keys, adf_error_t *err)
{
    char why[160];
    if (h->n_digis > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:sts_digis: %u digis, at most %u supported",
                             (unsigned)h->n_digis, ADF_STS_MAX_DIGIS);
    if (digis_problem(h, why, sizeof why))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:sts_digis (module %u): %s", (unsigned)h->module,
                             why);
    for (uint32_t i = 0; i < h->n_digis; i++)
        if (digi_problem(i, keys[i], h->strips, h->length_ns, why, sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:sts_digis (module %u): %s", (unsigned)h->module,
                                 why);
    return ADF_OK;
}

int adf_sts_digis_encode(adf_writer_t *w, uint32_t timeslice, uint64_t timestamp, const adf_sts_digis_t *h,
                         const uint64_t *keys, adf_error_t *err)
{
    int rc = adf_sts_digis_check(h, keys, err);
    if (rc != ADF_OK)
        return rc;
    uint8_t *p;
    rc = adf_reserve_frame(w, ADF_TYPE_DATA_STS_DIGIS, timeslice, timestamp, adf_sts_digis_payload_size(h->n_digis),
                               &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + DG_N, h->n_digis);
    tusk_put_u16(p + DG_MODULE, h->module);
    p[DG_STATION] = h->station;
    p[DG_FLAGS] = h->flags;
    tusk_put_u16(p + DG_MODULES, h->modules);
    tusk_put_u16(p + DG_STRIPS, h->strips);
    tusk_put_u32(p + DG_LENGTH_NS, h->length_ns);
    tusk_put_f32(p + DG_PITCH, h->pitch_mm);
    tusk_put_f32(p + DG_STEREO, h->stereo_deg);
    tusk_put_f32(p + DG_LENGTH_MM, h->length_mm);
    for (int k = 0; k < 3; k++)
        tusk_put_f32(p + DG_ORIGIN + 4 * k, h->origin[k]);
    uint8_t *q = p + ADF_STS_DIGIS_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_digis; i++, q += ADF_STS_DIGI_SIZE) {
        tusk_put_u16(q + DGD_CHARGE, (uint16_t)adf_sts_key_charge(keys[i]));
        tusk_put_u32(q + DGD_TIME, adf_sts_key_time(keys[i]));
        tusk_put_u16(q + DGD_CHANNEL, (uint16_t)adf_sts_key_channel(keys[i]));
    }
    return ADF_OK;
}

static uint64_t get_digi(const uint8_t *q)
{
    return adf_sts_key(tusk_get_u16(q + DGD_CHANNEL), tusk_get_u32(q + DGD_TIME), tusk_get_u16(q + DGD_CHARGE));
}

int adf_sts_digis_decode(const adf_frame_t *f, adf_sts_digis_t *d, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_STS_DIGIS, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_STS_DIGIS_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_digis at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_STS_DIGIS_HEADER_SIZE);
    uint32_t n = tusk_get_u32(p + DG_N);
    if (n > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, f->offset, "data:sts_digis at offset %llu: %u digis, at most %u supported",
                             off, (unsigned)n, ADF_STS_MAX_DIGIS);
    if (f->payload_size != adf_sts_digis_payload_size(n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_digis at offset %llu: payload is %u bytes, %zu expected for %u digis", off,
                             (unsigned)f->payload_size, adf_sts_digis_payload_size(n), (unsigned)n);
    adf_sts_digis_t h;
    h.n_digis = n;
    h.module = tusk_get_u16(p + DG_MODULE);
    h.station = p[DG_STATION];
    h.flags = p[DG_FLAGS];
    h.modules = tusk_get_u16(p + DG_MODULES);
    h.strips = tusk_get_u16(p + DG_STRIPS);
    h.length_ns = tusk_get_u32(p + DG_LENGTH_NS);
    h.pitch_mm = tusk_get_f32(p + DG_PITCH);
    h.stereo_deg = tusk_get_f32(p + DG_STEREO);
    h.length_mm = tusk_get_f32(p + DG_LENGTH_MM);
    for (int k = 0; k < 3; k++)
        h.origin[k] = tusk_get_f32(p + DG_ORIGIN + 4 * k);
    h.raw = p + ADF_STS_DIGIS_HEADER_SIZE;
    char why[160];
    if (digis_problem(&h, why, sizeof why))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:sts_digis at offset %llu: %s", off, why);
    const uint8_t *q = h.raw;
    for (uint32_t i = 0; i < n; i++, q += ADF_STS_DIGI_SIZE)
        if (digi_problem(i, get_digi(q), h.strips, h.length_ns, why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:sts_digis at offset %llu (module %u): %s", off,
                                 (unsigned)h.module, why);
    *d = h;
    return ADF_OK;
}

void adf_sts_digis_keys(const adf_sts_digis_t *d, uint32_t first, uint32_t n, uint64_t *keys)
{
    const uint8_t *q = d->raw + (size_t)first * ADF_STS_DIGI_SIZE;
    for (uint32_t i = 0; i < n; i++, q += ADF_STS_DIGI_SIZE)
        keys[i] = get_digi(q);
}

/* ---- data:sts_clusters ------------------------------------------------------------------ */

size_t adf_sts_clusters_payload_size(uint32_t n)
{
    return ADF_STS_CLUSTERS_HEADER_SIZE + (size_t)n * ADF_STS_CLUSTER_SIZE;
}

static const char *backend_problem(unsigned backend, char *buf, size_t cap)
{
    if (backend >= ADF_STS_REFERENCE && backend <= ADF_STS_OPENCL)
        return NULL;
    snprintf(buf, cap, "backend %u, expected 1 (reference), 2 (fast) or 3 (opencl)", backend);
    return buf;
}

/* Cluster i (front when i < n_front) against the strips: 0 or -1 with the reason. */
static int cluster_problem(uint32_t i, uint32_t n_front, unsigned channel, unsigned size, unsigned strips, char *buf,
                           size_t cap)
{
    bool front = i < n_front;
    unsigned lo = front ? 0 : strips, hi = front ? strips : 2 * strips;
    if (size < 1)
        snprintf(buf, cap, "cluster %u has no digi (size 0)", (unsigned)i);
    else if (channel < lo || channel + size > hi)
        snprintf(buf, cap, "cluster %u (%s side) spans channels %u-%u, the side's are %u-%u", (unsigned)i,
                 front ? "front" : "back", channel, channel + size - 1, lo, hi - 1);
    else
        return 0;
    return -1;
}

int adf_sts_clusters_encode(adf_writer_t *w, uint32_t timeslice, uint64_t timestamp, const adf_sts_clusters_t *h,
                            const adf_sts_cluster_t *c, adf_error_t *err)
{
    char why[160];
    uint64_t n = (uint64_t)h->n_front + h->n_back;
    if (n > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:sts_clusters: %llu clusters, at most %u supported",
                             (unsigned long long)n, ADF_STS_MAX_DIGIS);
    if (h->strips < 1 || h->strips > ADF_STS_MAX_STRIPS)
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:sts_clusters: %u strips a side, expected 1-%u",
                             (unsigned)h->strips, ADF_STS_MAX_STRIPS);
    if (backend_problem(h->backend, why, sizeof why))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:sts_clusters: %s", why);
    for (uint32_t i = 0; i < (uint32_t)n; i++)
        if (cluster_problem(i, h->n_front, c[i].channel, c[i].size, h->strips, why, sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:sts_clusters (module %u): %s",
                                 (unsigned)h->module, why);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_STS_CLUSTERS, timeslice, timestamp,
                               adf_sts_clusters_payload_size((uint32_t)n), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + CL_N_FRONT, h->n_front);
    tusk_put_u32(p + CL_N_BACK, h->n_back);
    tusk_put_u32(p + CL_SETTINGS, h->settings);
    tusk_put_u16(p + CL_MODULE, h->module);
    tusk_put_u16(p + CL_STRIPS, h->strips);
    p[CL_BACKEND] = h->backend;
    p[CL_FLAGS] = h->flags;
    uint8_t *q = p + ADF_STS_CLUSTERS_HEADER_SIZE;
    for (uint32_t i = 0; i < (uint32_t)n; i++, q += ADF_STS_CLUSTER_SIZE) {
        tusk_put_u16(q + CLC_CHANNEL, c[i].channel);
        tusk_put_u16(q + CLC_SIZE, c[i].size);
        tusk_put_u32(q + CLC_CHARGE, c[i].charge);
        tusk_put_f32(q + CLC_TIME, c[i].time);
        tusk_put_f32(q + CLC_TIME_ERROR, c[i].time_error);
        tusk_put_f32(q + CLC_POSITION, c[i].position);
        tusk_put_f32(q + CLC_POSITION_ERROR, c[i].position_error);
    }
    return ADF_OK;
}

int adf_sts_clusters_decode(const adf_frame_t *f, adf_sts_clusters_t *c, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_STS_CLUSTERS, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_STS_CLUSTERS_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_clusters at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_STS_CLUSTERS_HEADER_SIZE);
    uint32_t nf = tusk_get_u32(p + CL_N_FRONT), nb = tusk_get_u32(p + CL_N_BACK);
    uint64_t n = (uint64_t)nf + nb;
    if (n > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:sts_clusters at offset %llu: %llu clusters, at most %u supported", off,
                             (unsigned long long)n, ADF_STS_MAX_DIGIS);
    if (f->payload_size != adf_sts_clusters_payload_size((uint32_t)n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_clusters at offset %llu: payload is %u bytes, %zu expected for %llu clusters",
                             off, (unsigned)f->payload_size, adf_sts_clusters_payload_size((uint32_t)n),
                             (unsigned long long)n);
    unsigned strips = tusk_get_u16(p + CL_STRIPS), module = tusk_get_u16(p + CL_MODULE);
    char why[160];
    if (strips < 1 || strips > ADF_STS_MAX_STRIPS)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_clusters at offset %llu: %u strips a side, expected 1-%u", off, strips,
                             ADF_STS_MAX_STRIPS);
    if (backend_problem(p[CL_BACKEND], why, sizeof why))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:sts_clusters at offset %llu: %s", off, why);
    const uint8_t *q = p + ADF_STS_CLUSTERS_HEADER_SIZE;
    for (uint32_t i = 0; i < (uint32_t)n; i++, q += ADF_STS_CLUSTER_SIZE)
        if (cluster_problem(i, nf, tusk_get_u16(q + CLC_CHANNEL), tusk_get_u16(q + CLC_SIZE), strips, why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:sts_clusters at offset %llu (module %u): %s", off,
                                 module, why);
    c->n_front = nf;
    c->n_back = nb;
    c->settings = tusk_get_u32(p + CL_SETTINGS);
    c->module = (uint16_t)module;
    c->strips = (uint16_t)strips;
    c->backend = p[CL_BACKEND];
    c->flags = p[CL_FLAGS];
    c->raw = p + ADF_STS_CLUSTERS_HEADER_SIZE;
    return ADF_OK;
}

void adf_sts_cluster(const adf_sts_clusters_t *c, uint32_t i, adf_sts_cluster_t *cl)
{
    const uint8_t *q = c->raw + (size_t)i * ADF_STS_CLUSTER_SIZE;
    cl->channel = tusk_get_u16(q + CLC_CHANNEL);
    cl->size = tusk_get_u16(q + CLC_SIZE);
    cl->charge = tusk_get_u32(q + CLC_CHARGE);
    cl->time = tusk_get_f32(q + CLC_TIME);
    cl->time_error = tusk_get_f32(q + CLC_TIME_ERROR);
    cl->position = tusk_get_f32(q + CLC_POSITION);
    cl->position_error = tusk_get_f32(q + CLC_POSITION_ERROR);
}

/* ---- data:sts_hits -------------------------------------------------------------------------- */

size_t adf_sts_hits_payload_size(uint32_t n)
{
    return ADF_STS_HITS_HEADER_SIZE + (size_t)n * ADF_STS_HIT_SIZE;
}

int adf_sts_hits_encode(adf_writer_t *w, uint32_t timeslice, uint64_t timestamp, const adf_sts_hits_t *h,
                        const adf_sts_hit_t *hits, adf_error_t *err)
{
    char why[96];
    if (h->n_hits > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:sts_hits: %u hits, at most %u supported",
                             (unsigned)h->n_hits, ADF_STS_MAX_DIGIS);
    if (backend_problem(h->backend, why, sizeof why))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:sts_hits: %s", why);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_STS_HITS, timeslice, timestamp, adf_sts_hits_payload_size(h->n_hits), &p,
                               err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + HT_N, h->n_hits);
    tusk_put_u32(p + HT_SETTINGS, h->settings);
    tusk_put_u16(p + HT_MODULE, h->module);
    p[HT_BACKEND] = h->backend;
    p[HT_FLAGS] = h->flags;
    uint8_t *q = p + ADF_STS_HITS_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_hits; i++, q += ADF_STS_HIT_SIZE) {
        tusk_put_f32(q + HTH_X, hits[i].x);
        tusk_put_f32(q + HTH_Y, hits[i].y);
        tusk_put_f32(q + HTH_Z, hits[i].z);
        tusk_put_f32(q + HTH_SX, hits[i].sigma_x);
        tusk_put_f32(q + HTH_SY, hits[i].sigma_y);
        tusk_put_f32(q + HTH_CXY, hits[i].cov_xy);
        tusk_put_f32(q + HTH_T, hits[i].time);
        tusk_put_f32(q + HTH_ST, hits[i].time_error);
        tusk_put_u32(q + HTH_FRONT, hits[i].front);
        tusk_put_u32(q + HTH_BACK, hits[i].back);
    }
    return ADF_OK;
}

int adf_sts_hits_decode(const adf_frame_t *f, adf_sts_hits_t *h, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_STS_HITS, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_STS_HITS_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_hits at offset %llu: payload of %u bytes is shorter than its %u-byte header", off,
                             (unsigned)f->payload_size, ADF_STS_HITS_HEADER_SIZE);
    uint32_t n = tusk_get_u32(p + HT_N);
    if (n > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, f->offset, "data:sts_hits at offset %llu: %u hits, at most %u supported",
                             off, (unsigned)n, ADF_STS_MAX_DIGIS);
    if (f->payload_size != adf_sts_hits_payload_size(n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_hits at offset %llu: payload is %u bytes, %zu expected for %u hits", off,
                             (unsigned)f->payload_size, adf_sts_hits_payload_size(n), (unsigned)n);
    char why[96];
    if (backend_problem(p[HT_BACKEND], why, sizeof why))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:sts_hits at offset %llu: %s", off, why);
    h->n_hits = n;
    h->settings = tusk_get_u32(p + HT_SETTINGS);
    h->module = tusk_get_u16(p + HT_MODULE);
    h->backend = p[HT_BACKEND];
    h->flags = p[HT_FLAGS];
    h->raw = p + ADF_STS_HITS_HEADER_SIZE;
    return ADF_OK;
}

void adf_sts_hit(const adf_sts_hits_t *h, uint32_t i, adf_sts_hit_t *hit)
{
    const uint8_t *q = h->raw + (size_t)i * ADF_STS_HIT_SIZE;
    hit->x = tusk_get_f32(q + HTH_X);
    hit->y = tusk_get_f32(q + HTH_Y);
    hit->z = tusk_get_f32(q + HTH_Z);
    hit->sigma_x = tusk_get_f32(q + HTH_SX);
    hit->sigma_y = tusk_get_f32(q + HTH_SY);
    hit->cov_xy = tusk_get_f32(q + HTH_CXY);
    hit->time = tusk_get_f32(q + HTH_T);
    hit->time_error = tusk_get_f32(q + HTH_ST);
    hit->front = tusk_get_u32(q + HTH_FRONT);
    hit->back = tusk_get_u32(q + HTH_BACK);
}

/* ---- data:sts_truth --------------------------------------------------------------------------- */

size_t adf_sts_truth_payload_size(uint32_t n_points, uint32_t n_digis)
{
    return ADF_STS_TRUTH_HEADER_SIZE + (size_t)n_points * ADF_STS_POINT_SIZE + (size_t)n_digis * 4u;
}

int adf_sts_truth_encode(adf_writer_t *w, uint32_t timeslice, uint64_t timestamp, const adf_sts_truth_t *h,
                         const adf_sts_point_t *pts, const uint32_t *digi_point, adf_error_t *err)
{
    if (h->n_points > ADF_STS_MAX_DIGIS || h->n_digis > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET,
                             "data:sts_truth: %u points and %u digis, at most %u of each supported",
                             (unsigned)h->n_points, (unsigned)h->n_digis, ADF_STS_MAX_DIGIS);
    for (uint32_t j = 0; j < h->n_digis; j++)
        if (digi_point[j] != ADF_STS_NOISE && digi_point[j] >= h->n_points)
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                                 "data:sts_truth (module %u): digi %u comes from point %u, the module has %u",
                                 (unsigned)h->module, (unsigned)j, (unsigned)digi_point[j], (unsigned)h->n_points);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_STS_TRUTH, timeslice, timestamp,
                               adf_sts_truth_payload_size(h->n_points, h->n_digis), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + TR_N_POINTS, h->n_points);
    tusk_put_u32(p + TR_N_DIGIS, h->n_digis);
    tusk_put_u16(p + TR_MODULE, h->module);
    tusk_put_u16(p + TR_FLAGS, h->flags);
    uint8_t *q = p + ADF_STS_TRUTH_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_points; i++, q += ADF_STS_POINT_SIZE) {
        tusk_put_u32(q + TRP_TRACK, pts[i].track);
        tusk_put_u32(q + TRP_COLLISION, pts[i].collision);
        tusk_put_f32(q + TRP_X, pts[i].x);
        tusk_put_f32(q + TRP_Y, pts[i].y);
        tusk_put_f32(q + TRP_Z, pts[i].z);
        tusk_put_f32(q + TRP_T, pts[i].time);
        tusk_put_f32(q + TRP_UF, pts[i].u_front);
        tusk_put_f32(q + TRP_UB, pts[i].u_back);
        tusk_put_f32(q + TRP_CHARGE, pts[i].charge);
    }
    for (uint32_t j = 0; j < h->n_digis; j++, q += 4)
        tusk_put_u32(q, digi_point[j]);
    return ADF_OK;
}

int adf_sts_truth_decode(const adf_frame_t *f, adf_sts_truth_t *t, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_STS_TRUTH, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_STS_TRUTH_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_truth at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_STS_TRUTH_HEADER_SIZE);
    uint32_t np = tusk_get_u32(p + TR_N_POINTS), nd = tusk_get_u32(p + TR_N_DIGIS);
    if (np > ADF_STS_MAX_DIGIS || nd > ADF_STS_MAX_DIGIS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:sts_truth at offset %llu: %u points and %u digis, at most %u of each supported", off,
                             (unsigned)np, (unsigned)nd, ADF_STS_MAX_DIGIS);
    size_t want = adf_sts_truth_payload_size(np, nd);
    if (f->payload_size != want)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:sts_truth at offset %llu: payload is %u bytes, %zu expected for %u points and %u "
                             "digis",
                             off, (unsigned)f->payload_size, want, (unsigned)np, (unsigned)nd);
    const uint8_t *digis = p + ADF_STS_TRUTH_HEADER_SIZE + (size_t)np * ADF_STS_POINT_SIZE;
    for (uint32_t j = 0; j < nd; j++) {
        uint32_t k = tusk_get_u32(digis + 4 * (size_t)j);
        if (k != ADF_STS_NOISE && k >= np)
            return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                                 "data:sts_truth at offset %llu: digi %u comes from point %u, the module has %u", off,
                                 (unsigned)j, (unsigned)k, (unsigned)np);
    }
    t->n_points = np;
    t->n_digis = nd;
    t->module = tusk_get_u16(p + TR_MODULE);
    t->flags = tusk_get_u16(p + TR_FLAGS);
    t->raw_points = p + ADF_STS_TRUTH_HEADER_SIZE;
    t->raw_digis = digis;
    return ADF_OK;
}

void adf_sts_truth_point(const adf_sts_truth_t *t, uint32_t i, adf_sts_point_t *pt)
{
    const uint8_t *q = t->raw_points + (size_t)i * ADF_STS_POINT_SIZE;
    pt->track = tusk_get_u32(q + TRP_TRACK);
    pt->collision = tusk_get_u32(q + TRP_COLLISION);
    pt->x = tusk_get_f32(q + TRP_X);
    pt->y = tusk_get_f32(q + TRP_Y);
    pt->z = tusk_get_f32(q + TRP_Z);
    pt->time = tusk_get_f32(q + TRP_T);
    pt->u_front = tusk_get_f32(q + TRP_UF);
    pt->u_back = tusk_get_f32(q + TRP_UB);
    pt->charge = tusk_get_f32(q + TRP_CHARGE);
}

void adf_sts_truth_digis(const adf_sts_truth_t *t, uint32_t first, uint32_t n, uint32_t *digi_point)
{
    const uint8_t *q = t->raw_digis + (size_t)first * 4u;
    for (uint32_t j = 0; j < n; j++, q += 4)
        digi_point[j] = tusk_get_u32(q);
}
