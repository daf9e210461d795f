/* adf_error.h - status codes and error reports of libtusk-adf.
 *
 * Every libtusk-adf function that can fail returns one of the codes below
 * and, where it takes an adf_error_t, fills it with a message that names
 * the byte offset of the problem. ADF_OK is 0, errors are negative, and
 * ADF_END (reader: nothing left) is the one positive, non-error status.
 */
#ifndef TUSK_ADF_ERROR_H
#define TUSK_ADF_ERROR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum adf_status {
    ADF_OK = 0,
    ADF_END = 1,        /* reader: no more frames */
    ADF_EFULL = -1,     /* writer: output buffer full, frame not written */
    ADF_ETOOBIG = -2,   /* writer: frame larger than an empty buffer */
    ADF_ETRUNC = -3,    /* frame or key extends past the end of the data */
    ADF_EBADKEY = -4,   /* key is malformed (length, class byte, timestamp) */
    ADF_EBADTYPE = -5,  /* frame is not of the type the caller asked for */
    ADF_EPAYLOAD = -6,  /* payload size or content inconsistent */
    ADF_ERANGE = -7,    /* value does not fit the format or the struct */
    ADF_EINVAL = -8,    /* invalid argument or call sequence */
    ADF_EIO = -9,       /* file could not be opened, read or written */
    ADF_ENOMEM = -10    /* allocation failed */
};

/* No meaningful offset for this error. */
#define ADF_NO_OFFSET UINT64_MAX
#define ADF_ERROR_MESSAGE_MAX 256

typedef struct adf_error {
    int code;          /* an adf_status */
    uint64_t offset;   /* byte offset in the buffer or file, or ADF_NO_OFFSET */
    char message[ADF_ERROR_MESSAGE_MAX];
} adf_error_t;

/* Short constant description of a status code ("buffer full", ...). */
const char *adf_strerror(int code);

/* Reset an error report to ADF_OK with an empty message. */
void adf_error_clear(adf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
