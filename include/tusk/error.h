/* error.h - status codes and error reports of libtusk-base and every
 * library above it but libtusk-adf (the runtime, the OpenCL layer, the
 * physics libraries). Functions return TUSK_OK (0) or a negative code and
 * fill a tusk_error_t, whose message names the file, line, actor or hook
 * concerned.
 *
 * Status code ranges: one per family of libraries, so that a code tells
 * which family it comes from (and which strerror describes it):
 *
 *       0          success, in every family (TUSK_OK, ADF_OK)
 *     -1 ..  -99   enum tusk_status, below (TUSK_STATUS_MIN)
 *   -101 .. -199   enum adf_status, tusk/adf_error.h: libtusk-adf
 *                  (ADF_STATUS_MIN, ADF_STATUS_MAX); its one positive
 *                  status, ADF_END (no more frames), is 1
 *
 * A code of one family is never returned as the other's: a caller
 * translates (an adf_error_t's message is kept, its code mapped to a
 * TUSK_E*). Separate from these, and unchanged by them: the actor status
 * codes (tusk/actor.h, 0 and positive, part of the actor ABI) and the
 * tools' exit statuses (base/exit.h). */
#ifndef TUSK_ERROR_H
#define TUSK_ERROR_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tusk_status {
    TUSK_OK = 0,
    TUSK_EINVAL = -1,    /* invalid argument */
    TUSK_ENOMEM = -2,    /* allocation failed */
    TUSK_EIO = -3,       /* a file could not be read or written */
    TUSK_EPARAM = -4,    /* a parameter is malformed, unknown or missing */
    TUSK_ETOPOLOGY = -5, /* the topology is malformed or inconsistent */
    TUSK_ELOAD = -6,     /* an actor library could not be found or loaded */
    TUSK_EABI = -7,      /* an actor library was built for another ABI */
    TUSK_EACTOR = -8,    /* an actor hook reported a failure */
    TUSK_ECL = -9,       /* an OpenCL call failed (libtusk-cl) */
    TUSK_ENODEV = -10,   /* no OpenCL device matches the selection */
    TUSK_EBUILD = -11,   /* an OpenCL program did not build (the log is in the message) */
    TUSK_ELIMIT = -12    /* a request exceeds a device limit */
};
/* The lowest code of the range of enum tusk_status (see above). */
#define TUSK_STATUS_MIN (-99)

#define TUSK_ERROR_MESSAGE_MAX 1024

typedef struct tusk_error {
    int code;
    char message[TUSK_ERROR_MESSAGE_MAX];
} tusk_error_t;

#if defined(__GNUC__)
#define TUSK_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TUSK_PRINTF(f, a)
#endif

TUSK_API const char *tusk_strerror(int code);
TUSK_API void tusk_error_clear(tusk_error_t *err);

/* Fill `err` (may be NULL) with `code` and a formatted message; returns code. */
TUSK_API int tusk_error_set(tusk_error_t *err, int code, const char *fmt, ...) TUSK_PRINTF(3, 4);

/* Turn err's message into "PREFIX: message" (the code is kept). */
TUSK_API void tusk_error_prefix(tusk_error_t *err, const char *fmt, ...) TUSK_PRINTF(2, 3);

#ifdef __cplusplus
}
#endif
#endif
