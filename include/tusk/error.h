/* error.h - status codes and error reports of libtusk (the host runtime:
 * parameters, topology, actor loading). Functions return TUSK_OK (0) or a
 * negative code and fill a tusk_error_t, whose message names the file,
 * line, actor or hook concerned. */
#ifndef TUSK_ERROR_H
#define TUSK_ERROR_H

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

const char *tusk_strerror(int code);
void tusk_error_clear(tusk_error_t *err);

/* Fill `err` (may be NULL) with `code` and a formatted message; returns code. */
int tusk_error_set(tusk_error_t *err, int code, const char *fmt, ...) TUSK_PRINTF(3, 4);

/* Turn err's message into "PREFIX: message" (the code is kept). */
void tusk_error_prefix(tusk_error_t *err, const char *fmt, ...) TUSK_PRINTF(2, 3);

#ifdef __cplusplus
}
#endif
#endif
