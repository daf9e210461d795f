/* adf_error.c - status strings and error reports. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "adf_private.h"

const char *adf_strerror(int code)
{
    switch (code) {
    case ADF_OK: return "success";
    case ADF_END: return "end of data";
    case ADF_EFULL: return "output buffer full";
    case ADF_ETOOBIG: return "frame larger than the output buffer";
    case ADF_ETRUNC: return "truncated frame";
    case ADF_EBADKEY: return "malformed frame key";
    case ADF_EBADTYPE: return "unexpected frame type";
    case ADF_EPAYLOAD: return "malformed frame payload";
    case ADF_ERANGE: return "value out of range";
    case ADF_EINVAL: return "invalid argument";
    case ADF_EIO: return "input/output error";
    case ADF_ENOMEM: return "out of memory";
    default: return "unknown status";
    }
}

void adf_error_clear(adf_error_t *err)
{
    if (!err)
        return;
    err->code = ADF_OK;
    err->offset = ADF_NO_OFFSET;
    err->message[0] = '\0';
}

int adf_error_set(adf_error_t *err, int code, uint64_t offset, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

const char *adf_type_label(uint32_t type, char buf[16])
{
    const char *name = adf_type_name(type);
    if (name)
        return name;
    snprintf(buf, 16, "0x%08X", (unsigned)type);
    return buf;
}

int adf_expect_type(const adf_frame_t *frame, uint32_t type, adf_error_t *err)
{
    if (frame->key.type == type)
        return ADF_OK;
    char want[16], got[16];
    return adf_error_set(err, ADF_EBADTYPE, frame->offset, "frame at offset %llu is %s, expected %s",
                         (unsigned long long)frame->offset, adf_type_label(frame->key.type, got),
                         adf_type_label(type, want));
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
