/* adf_crystal.c - data:crystal codec (layout in adf/FORMAT.md). */
#include <string.h>

#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

/* Header offsets. */
enum {
    OFF_CRYSTAL_ID = 0,
    OFF_STATUS = 2,
    OFF_N_SAMPLES = 4,
    OFF_N_CHANNELS = 6,
    OFF_SEG_ENERGY = 8,
    OFF_CORE_ENERGY = OFF_SEG_ENERGY + 4 * ADF_CRYSTAL_SEGMENTS,
    OFF_TRACES = OFF_CORE_ENERGY + 4 * ADF_CRYSTAL_CORES
};

_Static_assert(OFF_TRACES == ADF_CRYSTAL_HEADER_SIZE, "data:crystal header size");

size_t adf_crystal_payload_size(unsigned n_samples)
{
    return ADF_CRYSTAL_HEADER_SIZE + (size_t)ADF_CRYSTAL_CHANNELS * n_samples * 2u;
}

int adf_crystal_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_crystal_t *c,
                       adf_error_t *err)
{
    if (c->n_samples > ADF_CRYSTAL_MAX_SAMPLES)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET,
                             "data:crystal: %u samples per channel, at most %d supported",
                             (unsigned)c->n_samples, ADF_CRYSTAL_MAX_SAMPLES);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_CRYSTAL, event, timestamp,
                               adf_crystal_payload_size(c->n_samples), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u16(p + OFF_CRYSTAL_ID, c->crystal_id);
    tusk_put_u16(p + OFF_STATUS, c->status);
    tusk_put_u16(p + OFF_N_SAMPLES, c->n_samples);
    tusk_put_u16(p + OFF_N_CHANNELS, ADF_CRYSTAL_CHANNELS);
    for (int i = 0; i < ADF_CRYSTAL_SEGMENTS; i++)
        tusk_put_f32(p + OFF_SEG_ENERGY + 4 * i, c->segment_energy[i]);
    for (int i = 0; i < ADF_CRYSTAL_CORES; i++)
        tusk_put_f32(p + OFF_CORE_ENERGY + 4 * i, c->core_energy[i]);
    uint8_t *t = p + OFF_TRACES;
    for (int ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++)
        for (unsigned s = 0; s < c->n_samples; s++, t += 2)
            tusk_put_i16(t, c->trace[ch][s]);
    return ADF_OK;
}

int adf_crystal_view(const adf_frame_t *f, adf_crystal_view_t *v, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_CRYSTAL, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_CRYSTAL_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:crystal at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_CRYSTAL_HEADER_SIZE);
    unsigned n_samples = tusk_get_u16(p + OFF_N_SAMPLES);
    unsigned n_channels = tusk_get_u16(p + OFF_N_CHANNELS);
    if (n_channels != ADF_CRYSTAL_CHANNELS)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:crystal at offset %llu: %u channels, expected %d", off, n_channels,
                             ADF_CRYSTAL_CHANNELS);
    if (n_samples > ADF_CRYSTAL_MAX_SAMPLES)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:crystal at offset %llu: %u samples per channel, at most %d supported",
                             off, n_samples, ADF_CRYSTAL_MAX_SAMPLES);
    if (f->payload_size != adf_crystal_payload_size(n_samples))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:crystal at offset %llu: payload is %u bytes, %zu expected for %u samples",
                             off, (unsigned)f->payload_size, adf_crystal_payload_size(n_samples),
                             n_samples);
    v->crystal_id = tusk_get_u16(p + OFF_CRYSTAL_ID);
    v->status = tusk_get_u16(p + OFF_STATUS);
    v->n_samples = (uint16_t)n_samples;
    for (int i = 0; i < ADF_CRYSTAL_SEGMENTS; i++)
        v->segment_energy[i] = tusk_get_f32(p + OFF_SEG_ENERGY + 4 * i);
    for (int i = 0; i < ADF_CRYSTAL_CORES; i++)
        v->core_energy[i] = tusk_get_f32(p + OFF_CORE_ENERGY + 4 * i);
    v->traces = p + OFF_TRACES;
    return ADF_OK;
}

int16_t adf_crystal_view_sample(const adf_crystal_view_t *v, unsigned ch, unsigned s)
{
    return tusk_get_i16(v->traces + 2 * ((size_t)ch * v->n_samples + s));
}

int adf_crystal_decode(const adf_frame_t *f, adf_crystal_t *c, adf_error_t *err)
{
    adf_crystal_view_t v;
    int rc = adf_crystal_view(f, &v, err);
    if (rc != ADF_OK)
        return rc;
    c->crystal_id = v.crystal_id;
    c->status = v.status;
    c->n_samples = v.n_samples;
    memcpy(c->segment_energy, v.segment_energy, sizeof c->segment_energy);
    memcpy(c->core_energy, v.core_energy, sizeof c->core_energy);
    const uint8_t *t = v.traces;
    for (int ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++)
        for (unsigned s = 0; s < v.n_samples; s++, t += 2)
            c->trace[ch][s] = tusk_get_i16(t);
    return ADF_OK;
}
