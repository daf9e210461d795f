/* adf_psa.c - data:psa and event:data:psa codecs (AGATA layout plus the
 * tusk figure-of-merit extension; adf/FORMAT.md). */
#include <math.h>

#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

/* Crystal header offsets (AGATA "global" part). */
enum {
    OFF_CRYSTAL_ID = 0,
    OFF_STATUS = 2,
    OFF_E0 = 4,
    OFF_E1 = 8,
    OFF_T0 = 12,
    OFF_T1 = 16,
    OFF_PSA_STATUS = 20,
    OFF_N_HITS = 22
};

/* Hit offsets: a 6-byte header, then 9 floats. */
enum {
    HIT_STATUS = 0,
    HIT_SEGMENT = 2,
    HIT_CRYSTAL = 4,
    HIT_X = 6,
    HIT_Y = 10,
    HIT_Z = 14,
    HIT_E = 18,
    HIT_T = 22,
    HIT_TCCE = 26,
    HIT_TCCH = 30,
    HIT_TSGE = 34,
    HIT_TSGH = 38
};

_Static_assert(HIT_TSGH + 4 == ADF_PSA_HIT_SIZE, "data:psa hit size");

size_t adf_psa_payload_size(unsigned n_hits, bool has_fom)
{
    size_t size = ADF_PSA_HEADER_SIZE + (size_t)n_hits * ADF_PSA_HIT_SIZE;
    if (has_fom)
        size += 4 + 4 * (size_t)n_hits;
    return size;
}

static int psa_check(const adf_psa_t *psa, adf_error_t *err)
{
    if (psa->n_hits > ADF_PSA_MAX_HITS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:psa: %u hits, at most %d supported",
                             (unsigned)psa->n_hits, ADF_PSA_MAX_HITS);
    return ADF_OK;
}

int adf_psa_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_psa_t *psa,
                   adf_error_t *err)
{
    int rc = psa_check(psa, err);
    if (rc != ADF_OK)
        return rc;
    uint8_t *p;
    rc = adf_reserve_frame(w, ADF_TYPE_DATA_PSA, event, timestamp,
                           adf_psa_payload_size(psa->n_hits, psa->has_fom), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u16(p + OFF_CRYSTAL_ID, psa->crystal_id);
    tusk_put_u16(p + OFF_STATUS, psa->status);
    tusk_put_f32(p + OFF_E0, psa->core_energy[0]);
    tusk_put_f32(p + OFF_E1, psa->core_energy[1]);
    tusk_put_f32(p + OFF_T0, psa->core_time[0]);
    tusk_put_f32(p + OFF_T1, psa->core_time[1]);
    tusk_put_u16(p + OFF_PSA_STATUS, psa->psa_status);
    tusk_put_u16(p + OFF_N_HITS, psa->n_hits);
    uint8_t *h = p + ADF_PSA_HEADER_SIZE;
    for (unsigned i = 0; i < psa->n_hits; i++, h += ADF_PSA_HIT_SIZE) {
        const adf_psa_hit_t *hit = &psa->hit[i];
        tusk_put_u16(h + HIT_STATUS, hit->status);
        tusk_put_i16(h + HIT_SEGMENT, hit->segment);
        tusk_put_i16(h + HIT_CRYSTAL, hit->crystal);
        tusk_put_f32(h + HIT_X, hit->x);
        tusk_put_f32(h + HIT_Y, hit->y);
        tusk_put_f32(h + HIT_Z, hit->z);
        tusk_put_f32(h + HIT_E, hit->energy);
        tusk_put_f32(h + HIT_T, hit->time);
        tusk_put_f32(h + HIT_TCCE, hit->t_cc_e);
        tusk_put_f32(h + HIT_TCCH, hit->t_cc_h);
        tusk_put_f32(h + HIT_TSGE, hit->t_sg_e);
        tusk_put_f32(h + HIT_TSGH, hit->t_sg_h);
    }
    if (psa->has_fom) {
        tusk_put_u32(h, ADF_PSA_EXT_MAGIC);
        h += 4;
        for (unsigned i = 0; i < psa->n_hits; i++, h += 4)
            tusk_put_f32(h, psa->hit[i].fom);
    }
    return ADF_OK;
}

int adf_psa_decode(const adf_frame_t *f, adf_psa_t *psa, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_PSA, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_PSA_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:psa at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_PSA_HEADER_SIZE);
    unsigned n = tusk_get_u16(p + OFF_N_HITS);
    if (n > ADF_PSA_MAX_HITS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:psa at offset %llu: %u hits, at most %d supported", off, n,
                             ADF_PSA_MAX_HITS);
    size_t plain = adf_psa_payload_size(n, false);
    bool has_fom;
    if (f->payload_size == plain) {
        has_fom = false;
    } else if (f->payload_size == adf_psa_payload_size(n, true) &&
               tusk_get_u32(p + plain) == ADF_PSA_EXT_MAGIC) {
        has_fom = true;
    } else {
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:psa at offset %llu: payload is %u bytes, %zu expected for %u hits "
                             "(%zu with the figure-of-merit extension)",
                             off, (unsigned)f->payload_size, plain, n, adf_psa_payload_size(n, true));
    }
    psa->crystal_id = tusk_get_u16(p + OFF_CRYSTAL_ID);
    psa->status = tusk_get_u16(p + OFF_STATUS);
    psa->core_energy[0] = tusk_get_f32(p + OFF_E0);
    psa->core_energy[1] = tusk_get_f32(p + OFF_E1);
    psa->core_time[0] = tusk_get_f32(p + OFF_T0);
    psa->core_time[1] = tusk_get_f32(p + OFF_T1);
    psa->psa_status = tusk_get_u16(p + OFF_PSA_STATUS);
    psa->n_hits = (uint16_t)n;
    psa->has_fom = has_fom;
    const uint8_t *h = p + ADF_PSA_HEADER_SIZE;
    const uint8_t *fom = p + plain + 4;
    for (unsigned i = 0; i < n; i++, h += ADF_PSA_HIT_SIZE) {
        adf_psa_hit_t *hit = &psa->hit[i];
        hit->status = tusk_get_u16(h + HIT_STATUS);
        hit->segment = tusk_get_i16(h + HIT_SEGMENT);
        hit->crystal = tusk_get_i16(h + HIT_CRYSTAL);
        hit->x = tusk_get_f32(h + HIT_X);
        hit->y = tusk_get_f32(h + HIT_Y);
        hit->z = tusk_get_f32(h + HIT_Z);
        hit->energy = tusk_get_f32(h + HIT_E);
        hit->time = tusk_get_f32(h + HIT_T);
        hit->t_cc_e = tusk_get_f32(h + HIT_TCCE);
        hit->t_cc_h = tusk_get_f32(h + HIT_TCCH);
        hit->t_sg_e = tusk_get_f32(h + HIT_TSGE);
        hit->t_sg_h = tusk_get_f32(h + HIT_TSGH);
        hit->fom = has_fom ? tusk_get_f32(fom + 4 * i) : NAN;
    }
    return ADF_OK;
}

int adf_event_psa_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_key_t *keys,
                         const adf_psa_t *psa, size_t n, adf_error_t *err)
{
    /* Check everything first so only "full" can stop us half-way. */
    for (size_t i = 0; i < n; i++) {
        int rc = psa_check(&psa[i], err);
        if (rc != ADF_OK)
            return rc;
        if (keys[i].timestamp > ADF_TIMESTAMP_MAX)
            return adf_error_set(err, ADF_EBADKEY, ADF_NO_OFFSET,
                                 "event:data:psa: crystal %zu has a timestamp over 48 bits", i);
    }
    adf_key_t key = {.length = 0, .type = ADF_TYPE_EVENT_DATA_PSA, .event = event, .timestamp = timestamp};
    int rc = adf_writer_begin(w, &key);
    if (rc != ADF_OK) {
        if (err)
            *err = *adf_writer_error(w);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        rc = adf_psa_encode(w, keys[i].event, keys[i].timestamp, &psa[i], err);
        if (rc != ADF_OK) {
            /* A refused frame (full, too big) has taken the composite back
             * already; anything else leaves ours open, so close it here. */
            if (rc != ADF_EFULL && rc != ADF_ETOOBIG)
                adf_writer_abort(w);
            return rc;
        }
    }
    rc = adf_writer_end(w);
    if (rc != ADF_OK && err)
        *err = *adf_writer_error(w);
    return rc;
}

int adf_event_psa_decode(const adf_frame_t *f, adf_key_t *keys, adf_psa_t *psa, size_t max, size_t *n,
                         adf_error_t *err)
{
    *n = 0;
    int rc = adf_expect_type(f, ADF_TYPE_EVENT_DATA_PSA, err);
    if (rc != ADF_OK)
        return rc;
    adf_scan_t scan;
    adf_scan_init(&scan, ADF_ON_ERROR_STOP, ADF_FRAME_MAX);
    adf_frame_t sub;
    size_t count = 0;
    while ((rc = adf_scan_next(&scan, f->payload, f->payload_size, true, f->offset + ADF_KEY_SIZE, &sub)) ==
           ADF_OK) {
        if (count == max)
            return adf_error_set(err, ADF_ERANGE, f->offset,
                                 "event:data:psa at offset %llu: more than %zu crystals",
                                 (unsigned long long)f->offset, max);
        rc = adf_psa_decode(&sub, &psa[count], err);
        if (rc != ADF_OK)
            return rc;
        keys[count] = sub.key;
        count++;
    }
    if (rc != ADF_END) {
        if (err)
            *err = scan.error;
        return rc;
    }
    *n = count;
    return ADF_OK;
}
