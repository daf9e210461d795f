/* parse.c - numbers from text, strictly (see parse.h). */
#include "base/parse.h"

#include "tusk/params.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tusk_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!text || text[0] < '0' || text[0] > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int tusk_parse_u64x(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!text || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
        return tusk_parse_u64(text, min, max, out);
    const char *digits = text + 2;
    if (!*digits || digits[strspn(digits, "0123456789abcdefABCDEF")] != '\0')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, 16);
    if (errno || v < min || v > max)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int tusk_parse_unsigned(const char *text, unsigned min, unsigned max, unsigned *out)
{
    uint64_t v;
    if (tusk_parse_u64(text, min, max, &v) != 0)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int tusk_parse_double(const char *text, double min, double max, double *out)
{
    if (!text || !*text || isspace((unsigned char)text[0]))
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

bool tusk_cli_u64(const char *prog, const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    if (tusk_parse_u64(text, min, max, out) == 0)
        return true;
    if (min == 0 && max == UINT64_MAX)
        fprintf(stderr, "%s: %s wants a whole number, not '%s'\n", prog, opt, text ? text : "");
    else if (max == UINT64_MAX)
        fprintf(stderr, "%s: %s wants a whole number of at least %" PRIu64 ", not '%s'\n", prog, opt, min,
                text ? text : "");
    else
        fprintf(stderr, "%s: %s wants a whole number from %" PRIu64 " to %" PRIu64 ", not '%s'\n", prog, opt, min,
                max, text ? text : "");
    return false;
}

bool tusk_cli_unsigned(const char *prog, const char *opt, const char *text, unsigned min, unsigned max,
                       unsigned *out)
{
    uint64_t v;
    if (!tusk_cli_u64(prog, opt, text, min, max, &v))
        return false;
    *out = (unsigned)v;
    return true;
}

bool tusk_cli_double(const char *prog, const char *opt, const char *text, double min, double max, double *out)
{
    if (tusk_parse_double(text, min, max, out) == 0)
        return true;
    if (min == -DBL_MAX && max == DBL_MAX)
        fprintf(stderr, "%s: %s wants a finite number, not '%s'\n", prog, opt, text ? text : "");
    else if (max == DBL_MAX)
        fprintf(stderr, "%s: %s wants a finite number of at least %g, not '%s'\n", prog, opt, min, text ? text : "");
    else
        fprintf(stderr, "%s: %s wants a finite number from %g to %g, not '%s'\n", prog, opt, min, max,
                text ? text : "");
    return false;
}

bool tusk_cli_set(const char *prog, tusk_params_t *params, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char key[128];
    size_t n = eq ? (size_t)(eq - arg) : 0;
    if (!eq || n == 0 || n >= sizeof key) {
        fprintf(stderr, "%s: --set wants KEY=VALUE, not '%s'\n", prog, arg);
        return false;
    }
    memcpy(key, arg, n);
    key[n] = '\0';
    tusk_error_t err;
    if (tusk_params_set(params, key, eq + 1, &err) != TUSK_OK) {
        fprintf(stderr, "%s: --set %s: %s\n", prog, arg, err.message);
        return false;
    }
    return true;
}
