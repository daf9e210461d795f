/* tap_link.c - the link a sampling tap is put on (see tap_link.h). */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "base/parse.h"
#include "tap_link.h"

/* NAME or NAME[K] from p (up to `stop`, blanks around taken). */
static int one_end(const char *p, const char *stop, char *name, size_t size, unsigned *k, const char *what,
                   tusk_error_t *err)
{
    while (p < stop && isspace((unsigned char)*p))
        p++;
    while (stop > p && isspace((unsigned char)stop[-1]))
        stop--;
    const char *br = memchr(p, '[', (size_t)(stop - p));
    const char *end = br ? br : stop;
    size_t n = (size_t)(end - p);
    if (n == 0)
        return tusk_error_set(err, TUSK_EINVAL, "tap: no %s actor (UP[K]->DOWN[K])", what);
    if (n >= size)
        return tusk_error_set(err, TUSK_EINVAL, "tap: the %s actor's name is too long", what);
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == ']' || p[i] == '>')
            return tusk_error_set(err, TUSK_EINVAL, "tap: '%.*s' is no actor name", (int)n, p);
    memcpy(name, p, n);
    name[n] = '\0';
    *k = 0;
    if (br) {
        if (stop - br < 3 || stop[-1] != ']')
            return tusk_error_set(err, TUSK_EINVAL, "tap: the %s instance: NAME[K]", what);
        char num[16];
        size_t len = (size_t)(stop - br - 2);
        if (len >= sizeof num)
            return tusk_error_set(err, TUSK_EINVAL, "tap: the %s instance number is too long", what);
        memcpy(num, br + 1, len);
        num[len] = '\0';
        uint64_t v;
        if (tusk_parse_u64(num, 0, 65535, &v) != 0)
            return tusk_error_set(err, TUSK_EINVAL, "tap: the %s instance '%s' is no number", what, num);
        *k = (unsigned)v;
    }
    return TUSK_OK;
}

int tusk_tap_link_parse(const char *text, char *up, size_t up_size, unsigned *up_k, char *down, size_t down_size,
                        unsigned *down_k, unsigned *every, tusk_error_t *err)
{
    if (!text)
        return tusk_error_set(err, TUSK_EINVAL, "tap: which link? UP[K]->DOWN[K]");
    const char *arrow = strstr(text, "->");
    if (!arrow || strstr(arrow + 2, "->"))
        return tusk_error_set(err, TUSK_EINVAL, "tap: '%s': one link, UP[K]->DOWN[K]", text);
    const char *end = arrow + 2 + strlen(arrow + 2), *opt = strstr(arrow + 2, "every=");
    if (every)
        *every = 1;
    if (opt) {
        if (!every)
            return tusk_error_set(err, TUSK_EINVAL, "untap: no every= (it closes the tap)");
        uint64_t v;
        if (opt == arrow + 2 || !isspace((unsigned char)opt[-1]) || tusk_parse_u64(opt + 6, 1, UINT32_MAX, &v) != 0)
            return tusk_error_set(err, TUSK_EINVAL, "tap: '%s': every=N, N a whole number from 1, after the link",
                                  opt);
        *every = (unsigned)v;
        end = opt;
    }
    int rc = one_end(text, arrow, up, up_size, up_k, "upstream", err);
    if (rc == TUSK_OK)
        rc = one_end(arrow + 2, end, down, down_size, down_k, "downstream", err);
    return rc;
}
