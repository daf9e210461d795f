/* adf_error.h - status codes and error reports of libtusk-adf.
 *
 * Every libtusk-adf function that can fail returns one of the codes below
 * and, where it takes an adf_error_t, fills it with a message that names
 * the byte offset of the problem. ADF_OK is 0, errors are negative, from
 * -101 to -199 (ADF_STATUS_MAX to ADF_STATUS_MIN: a range of their own,
 * apart from tusk/error.h's TUSK_E*, which lists the ranges), and ADF_END
 * (reader: nothing left) is the one positive, non-error status.
 */
#ifndef TUSK_ADF_ERROR_H
#define TUSK_ADF_ERROR_H

#include "export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum adf_status {
    ADF_OK = 0,
    ADF_END = 1,         /* reader: no more frames */
    ADF_EFULL = -101,    /* writer: output buffer full, frame not written */
    ADF_ETOOBIG = -102,  /* writer: frame larger than an empty buffer */
    ADF_ETRUNC = -103,   /* frame or key extends past the end of the data */
    ADF_EBADKEY = -104,  /* key is malformed (length, class byte, timestamp) */
    ADF_EBADTYPE = -105, /* frame is not of the type the caller asked for */
    ADF_EPAYLOAD = -106, /* payload size or content inconsistent */
    ADF_ERANGE = -107,   /* value does not fit the format or the struct */
    ADF_EINVAL = -108,   /* invalid argument or call sequence */
    ADF_EIO = -109,      /* file could not be opened, read or written */
    ADF_ENOMEM = -110    /* allocation failed */
};
/* The range of libtusk-adf's error codes (tusk/error.h lists the ranges). */
#define ADF_STATUS_MAX (-101)
#define ADF_STATUS_MIN (-199)

/* No meaningful offset for this error. */
#define ADF_NO_OFFSET UINT64_MAX
#define ADF_ERROR_MESSAGE_MAX 256

typedef struct adf_error {
    int code;          /* an adf_status */
    uint64_t offset;   /* byte offset in the buffer or file, or ADF_NO_OFFSET */
    char message[ADF_ERROR_MESSAGE_MAX];
} adf_error_t;

/* Short constant description of a status code ("buffer full", ...). */
TUSK_API const char *adf_strerror(int code);

/* Reset an error report to ADF_OK with an empty message. */
TUSK_API void adf_error_clear(adf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
