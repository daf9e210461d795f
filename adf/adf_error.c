/* adf_error.c - status strings and error reports (the bottom of
 * libtusk-adf: it calls nothing else of it). */
#include <stdarg.h>
#include <stdio.h>

#include "adf_private.h"
#include "tusk/error.h"

/* The ranges of tusk/error.h: every adf_status error lies in its own
 * range, apart from tusk_status's (a code says which family it is of). */
_Static_assert(ADF_EFULL == ADF_STATUS_MAX && ADF_ENOMEM >= ADF_STATUS_MIN, "adf_status codes leave their range");
_Static_assert(ADF_STATUS_MAX < TUSK_STATUS_MIN && TUSK_ELIMIT >= TUSK_STATUS_MIN,
               "adf_status and tusk_status ranges overlap");

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
