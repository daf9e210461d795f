/* adf_meta.c - meta:eof codec. */
#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

int adf_eof_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_eof_t *eof,
                   adf_error_t *err)
{
    uint8_t *p;
    size_t size = eof->has_counts ? ADF_EOF_PAYLOAD_SIZE : 0;
    int rc = adf_reserve_frame(w, ADF_TYPE_META_EOF, event, timestamp, size, &p, err);
    if (rc != ADF_OK || !eof->has_counts)
        return rc;
    tusk_put_u32(p, eof->run);
    tusk_put_u64(p + 4, eof->frames);
    return ADF_OK;
}

int adf_eof_decode(const adf_frame_t *f, adf_eof_t *eof, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_META_EOF, err);
    if (rc != ADF_OK)
        return rc;
    if (f->payload_size == 0) {
        eof->has_counts = false;
        eof->run = 0;
        eof->frames = 0;
        return ADF_OK;
    }
    if (f->payload_size != ADF_EOF_PAYLOAD_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "meta:eof at offset %llu: payload is %u bytes, expected 0 or %u",
                             (unsigned long long)f->offset, (unsigned)f->payload_size, ADF_EOF_PAYLOAD_SIZE);
    eof->has_counts = true;
    eof->run = tusk_get_u32(f->payload);
    eof->frames = tusk_get_u64(f->payload + 4);
    return ADF_OK;
}
