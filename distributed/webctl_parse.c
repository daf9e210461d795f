/* webctl_parse.c - tusk-run --web's argument (see webctl_parse.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/parse.h"
#include "webctl_parse.h"

#define USAGE "PORT, IPV4:PORT or [IPV6]:PORT (port 0: any)"

int tusk_webctl_parse(const char *spec, char *address, size_t address_size, unsigned *port, tusk_error_t *err)
{
    if (!spec || !address || address_size == 0)
        return tusk_error_set(err, TUSK_EINVAL, "--web: " USAGE);
    const char *colon = strrchr(spec, ':');
    const char *p = colon ? colon + 1 : spec;
    uint64_t v;
    if (tusk_parse_u64(p, 0, 65535, &v) != 0)
        return tusk_error_set(err, TUSK_EINVAL, "--web '%s': " USAGE, spec);
    *port = (unsigned)v;
    address[0] = '\0';
    if (!colon)
        return TUSK_OK;
    const char *a = spec;
    size_t n = (size_t)(colon - spec);
    bool v6 = n >= 2 && a[0] == '[' && a[n - 1] == ']';
    if (v6) {
        a++;
        n -= 2;
    }
    if (n == 0)
        return tusk_error_set(err, TUSK_EINVAL, "--web '%s': no address before the port", spec);
    /* The longest numeric address (INET6_ADDRSTRLEN counts the NUL). */
    char text[INET6_ADDRSTRLEN];
    if (n >= sizeof text || n >= address_size)
        return tusk_error_set(err, TUSK_EINVAL, "--web '%s': the address is too long", spec);
    memcpy(text, a, n);
    text[n] = '\0';
    unsigned char bin[sizeof(struct in6_addr)];
    if (!v6 && strchr(text, ':'))
        return tusk_error_set(err, TUSK_EINVAL, "--web '%s': an IPv6 address goes in brackets, [ADDR]:PORT", spec);
    if (inet_pton(v6 ? AF_INET6 : AF_INET, text, bin) != 1)
        return tusk_error_set(err, TUSK_EINVAL, "--web '%s': '%s' is no numeric %s address", spec, text,
                              v6 ? "IPv6" : "IPv4");
    memcpy(address, text, n + 1);
    return TUSK_OK;
}
