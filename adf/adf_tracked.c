/* adf_tracked.c - data:tracked codec (tusk layout, adf/FORMAT.md). */
#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

enum { OFF_N_GAMMAS = 0, OFF_STATUS = 2 };
enum {
    G_ENERGY = 0,
    G_FIRST = 4,
    G_SECOND = 16,
    G_FOM = 28,
    G_N_POINTS = 32,
    G_STATUS = 34,
    G_RESERVED = 36
};

_Static_assert(G_RESERVED + 4 == ADF_TRACKED_GAMMA_SIZE, "data:tracked gamma size");

size_t adf_tracked_payload_size(unsigned n_gammas)
{
    return ADF_TRACKED_HEADER_SIZE + (size_t)n_gammas * ADF_TRACKED_GAMMA_SIZE;
}

int adf_tracked_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_tracked_t *t,
                       adf_error_t *err)
{
    if (t->n_gammas > ADF_TRACKED_MAX_GAMMAS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:tracked: %u gammas, at most %d supported",
                             (unsigned)t->n_gammas, ADF_TRACKED_MAX_GAMMAS);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_TRACKED, event, timestamp,
                               adf_tracked_payload_size(t->n_gammas), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u16(p + OFF_N_GAMMAS, t->n_gammas);
    tusk_put_u16(p + OFF_STATUS, t->status);
    uint8_t *g = p + ADF_TRACKED_HEADER_SIZE;
    for (unsigned i = 0; i < t->n_gammas; i++, g += ADF_TRACKED_GAMMA_SIZE) {
        const adf_tracked_gamma_t *gm = &t->gamma[i];
        tusk_put_f32(g + G_ENERGY, gm->energy);
        for (int k = 0; k < 3; k++) {
            tusk_put_f32(g + G_FIRST + 4 * k, gm->first[k]);
            tusk_put_f32(g + G_SECOND + 4 * k, gm->second[k]);
        }
        tusk_put_f32(g + G_FOM, gm->fom);
        tusk_put_u16(g + G_N_POINTS, gm->n_points);
        tusk_put_u16(g + G_STATUS, gm->status);
        tusk_put_u32(g + G_RESERVED, 0);
    }
    return ADF_OK;
}

int adf_tracked_decode(const adf_frame_t *f, adf_tracked_t *t, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_TRACKED, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_TRACKED_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tracked at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_TRACKED_HEADER_SIZE);
    unsigned n = tusk_get_u16(p + OFF_N_GAMMAS);
    if (n > ADF_TRACKED_MAX_GAMMAS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:tracked at offset %llu: %u gammas, at most %d supported", off, n,
                             ADF_TRACKED_MAX_GAMMAS);
    if (f->payload_size != adf_tracked_payload_size(n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tracked at offset %llu: payload is %u bytes, %zu expected for %u gammas",
                             off, (unsigned)f->payload_size, adf_tracked_payload_size(n), n);
    t->n_gammas = (uint16_t)n;
    t->status = tusk_get_u16(p + OFF_STATUS);
    const uint8_t *g = p + ADF_TRACKED_HEADER_SIZE;
    for (unsigned i = 0; i < n; i++, g += ADF_TRACKED_GAMMA_SIZE) {
        adf_tracked_gamma_t *gm = &t->gamma[i];
        gm->energy = tusk_get_f32(g + G_ENERGY);
        for (int k = 0; k < 3; k++) {
            gm->first[k] = tusk_get_f32(g + G_FIRST + 4 * k);
            gm->second[k] = tusk_get_f32(g + G_SECOND + 4 * k);
        }
        gm->fom = tusk_get_f32(g + G_FOM);
        gm->n_points = tusk_get_u16(g + G_N_POINTS);
        gm->status = tusk_get_u16(g + G_STATUS);
    }
    return ADF_OK;
}
