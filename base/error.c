/* error.c - libtusk status strings and error reports. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/error.h"
#include "base/str.h"

const char *tusk_strerror(int code)
{
    switch (code) {
    case TUSK_OK: return "success";
    case TUSK_EINVAL: return "invalid argument";
    case TUSK_ENOMEM: return "out of memory";
    case TUSK_EIO: return "input/output error";
    case TUSK_EPARAM: return "bad parameter";
    case TUSK_ETOPOLOGY: return "bad topology";
    case TUSK_ELOAD: return "actor library not loadable";
    case TUSK_EABI: return "actor ABI mismatch";
    case TUSK_EACTOR: return "actor failure";
    case TUSK_ECL: return "OpenCL call failed";
    case TUSK_ENODEV: return "no matching OpenCL device";
    case TUSK_EBUILD: return "OpenCL program build failed";
    case TUSK_ELIMIT: return "exceeds a device limit";
    default: return "unknown status";
    }
}

void tusk_error_clear(tusk_error_t *err)
{
    if (err) {
        err->code = TUSK_OK;
        err->message[0] = '\0';
    }
}

int tusk_error_set(tusk_error_t *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

void tusk_error_prefix(tusk_error_t *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[TUSK_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* "prefix: old message", cut to the buffer. */
    char joined[TUSK_ERROR_MESSAGE_MAX];
    size_t cap = sizeof joined - 1, n = 0;
    const char *parts[3] = {prefix, ": ", err->message};
    for (int i = 0; i < 3 && n < cap; i++) {
        size_t len = strlen(parts[i]);
        if (len > cap - n)
            len = cap - n;
        memcpy(joined + n, parts[i], len);
        n += len;
    }
    joined[n] = '\0';
    memcpy(err->message, joined, n + 1);
}

char *tusk_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
