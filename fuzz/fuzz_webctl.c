/* fuzz_webctl.c - fuzz target: tusk-run --web's argument
 * (distributed/webctl_parse.h). data[0] picks the address buffer's size
 * (odd: (data[0] >> 1) % 64 bytes, 0 included; even: 64, tusk-run's),
 * the rest (up to a NUL) is the argument. The buffer is allocated at
 * exactly its size (AddressSanitizer sees a byte written past it).
 *   - The argument is taken, or refused with TUSK_EINVAL and a message
 *     that starts with "--web".
 *   - Taken: the port is at most 65535; the address is "" (none given:
 *     then the argument is the port's digits alone) or a NUL-terminated
 *     numeric IPv4 or IPv6 address that fits the buffer.
 *   - Taken: PORT, ADDR:PORT or [ADDR]:PORT formatted from what was read
 *     is taken again, to the same address and port.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "distributed/webctl_parse.h"
#include "fuzz_targets.h"

#define ADDRESS_BIG 64
#define PATTERN 0x5A

int fuzz_webctl_one(const uint8_t *data, size_t size)
{
    uint8_t sel;
    char *text = fuzz_selector_text(data, size, &sel);
    size_t asize = sel & 1 ? (size_t)((sel >> 1) % 64) : ADDRESS_BIG;
    char *address = malloc(asize ? asize : 1);
    FUZZ_CHECK(address != NULL);
    memset(address, PATTERN, asize ? asize : 1);
    unsigned port = 1u << 20;
    tusk_error_t err;
    err.message[0] = '\0';
    int rc = tusk_webctl_parse(text, address, asize, &port, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL);
        FUZZ_CHECK(strncmp(err.message, "--web", 5) == 0);
        FUZZ_CHECK(strnlen(err.message, sizeof err.message) < sizeof err.message);
    } else {
        FUZZ_CHECK(port <= 65535);
        FUZZ_CHECK(asize > 0 && strnlen(address, asize) < asize);
        unsigned char bin[sizeof(struct in6_addr)];
        bool v4 = inet_pton(AF_INET, address, bin) == 1, v6 = inet_pton(AF_INET6, address, bin) == 1;
        if (!address[0])
            FUZZ_CHECK(strchr(text, ':') == NULL && strspn(text, "0123456789") == strlen(text));
        else
            FUZZ_CHECK(v4 != v6);
        char again[ADDRESS_BIG + 16], address2[ADDRESS_BIG];
        if (!address[0])
            snprintf(again, sizeof again, "%u", port);
        else
            snprintf(again, sizeof again, v6 ? "[%s]:%u" : "%s:%u", address, port);
        unsigned port2;
        FUZZ_CHECK(tusk_webctl_parse(again, address2, sizeof address2, &port2, &err) == TUSK_OK);
        FUZZ_CHECK(port2 == port && strcmp(address2, address) == 0);
    }
    if (asize == 0)
        FUZZ_CHECK((unsigned char)address[0] == PATTERN);
    free(address);
    free(text);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_webctl_one(data, size);
}
#endif
