/* adf_codec.c - the helpers of the typed codecs (adf_codec.h): the type
 * and header check of a frame to decode and the reservation of a frame
 * to encode. */
#include "adf_codec.h"

#include "adf_private.h"

int adf_expect_type(const adf_frame_t *frame, uint32_t type, adf_error_t *err)
{
    if (frame->key.type == type)
        return ADF_OK;
    char want[16], got[16];
    return adf_error_set(err, ADF_EBADTYPE, frame->offset, "frame at offset %llu is %s, expected %s",
                         (unsigned long long)frame->offset, adf_type_label(frame->key.type, got),
                         adf_type_label(type, want));
}

int adf_expect_header(const adf_frame_t *frame, uint32_t type, const char *name, unsigned header, adf_error_t *err)
{
    int rc = adf_expect_type(frame, type, err);
    if (rc != ADF_OK)
        return rc;
    if (frame->payload_size < header)
        return adf_error_set(err, ADF_EPAYLOAD, frame->offset,
                             "%s at offset %llu: payload of %u bytes is shorter than its %u-byte header", name,
                             (unsigned long long)frame->offset, (unsigned)frame->payload_size, header);
    return ADF_OK;
}

int adf_reserve_frame(adf_writer_t *writer, uint32_t type, uint32_t event, uint64_t timestamp,
                      size_t size, uint8_t **payload, adf_error_t *err)
{
    adf_key_t key = {.length = 0, .type = type, .event = event, .timestamp = timestamp};
    int rc = adf_writer_reserve(writer, &key, size, payload);
    if (rc != ADF_OK && err)
        *err = *adf_writer_error(writer);
    return rc;
}
