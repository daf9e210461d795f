/* fuzz_wire.c - fuzz target: what arrives from other processes in a
 * distributed run. data[0] picks the parser:
 *   even: a data message header (tusk_wire_decode): decoding succeeds only
 *         on 48 bytes, and a decoded header re-encodes to the same bytes;
 *   odd:  a control message (tusk_ctl_parse): what parses formats back to
 *         text that parses to the same verb and fields.
 * Whatever data[0], the rest is also read as run secrets (what an instance
 * reads on its standard input) and as a CURVE certificate: what parses
 * formats back to text that parses to the same; and as a shared-memory
 * slot descriptor (tusk_wire_shm_decode): it decodes only on 32 bytes and
 * re-encodes to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "runtime/wire.h"

static void secrets_and_cert(const char *in, size_t n)
{
    tusk_error_t err;
    tusk_secrets_t s, s2;
    int rc = tusk_secrets_parse(in, n, &s, &err);
    FUZZ_CHECK(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0]));
    if (rc == TUSK_OK) {
        size_t len;
        char *text = tusk_secrets_format(&s, &len);
        FUZZ_CHECK(text != NULL);
        FUZZ_CHECK(tusk_secrets_parse(text, len, &s2, &err) == TUSK_OK);
        FUZZ_CHECK(memcmp(&s, &s2, sizeof s) == 0);
        free(text);
    }
    tusk_cert_t c, c2;
    rc = tusk_cert_parse(in, n, &c, &err);
    FUZZ_CHECK(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0]));
    if (rc == TUSK_OK) {
        size_t len;
        char *text = tusk_cert_format(&c, 1, &len);
        FUZZ_CHECK(text != NULL);
        FUZZ_CHECK(tusk_cert_parse(text, len, &c2, &err) == TUSK_OK);
        FUZZ_CHECK(memcmp(&c, &c2, sizeof c) == 0);
        free(text);
    }
}

int fuzz_wire_one(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t *in = data + 1;
    size_t n = size - 1;
    secrets_and_cert((const char *)in, n);
    tusk_error_t err;
    tusk_wire_shm_t d;
    if (tusk_wire_shm_decode(in, n, &d, &err) == TUSK_OK) {
        FUZZ_CHECK(n == TUSK_WIRE_SHM_SIZE);
        uint8_t again[TUSK_WIRE_SHM_SIZE];
        tusk_wire_shm_encode(&d, again);
        FUZZ_CHECK(memcmp(again, in, TUSK_WIRE_SHM_SIZE) == 0);
    } else {
        FUZZ_CHECK(err.code == TUSK_EINVAL && err.message[0]);
    }
    if (data[0] % 2 == 0) {
        tusk_wire_header_t h;
        int rc = tusk_wire_decode(in, n, &h, &err);
        if (rc != TUSK_OK) {
            FUZZ_CHECK(rc == TUSK_EINVAL && err.message[0]);
            return 0;
        }
        FUZZ_CHECK(n == TUSK_WIRE_HEADER_SIZE);
        uint8_t again[TUSK_WIRE_HEADER_SIZE];
        tusk_wire_encode(&h, again);
        FUZZ_CHECK(memcmp(again, in, TUSK_WIRE_HEADER_SIZE) == 0);
        return 0;
    }
    tusk_ctl_t *m = NULL;
    int rc = tusk_ctl_parse(&m, (const char *)in, n, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(m == NULL && (rc == TUSK_EINVAL || rc == TUSK_ENOMEM));
        return 0;
    }
    size_t len;
    char *text = tusk_ctl_format(m, &len);
    FUZZ_CHECK(text != NULL);
    tusk_ctl_t *back = NULL;
    FUZZ_CHECK(tusk_ctl_parse(&back, text, len, &err) == TUSK_OK);
    FUZZ_CHECK(strcmp(tusk_ctl_verb(back), tusk_ctl_verb(m)) == 0);
    FUZZ_CHECK(tusk_ctl_count(back) == tusk_ctl_count(m));
    for (size_t i = 0; i < tusk_ctl_count(m); i++) {
        FUZZ_CHECK(strcmp(tusk_ctl_key(back, i), tusk_ctl_key(m, i)) == 0);
        FUZZ_CHECK(strcmp(tusk_ctl_value(back, i), tusk_ctl_value(m, i)) == 0);
    }
    free(text);
    tusk_ctl_destroy(&back);
    tusk_ctl_destroy(&m);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_wire_one(data, size);
}
#endif
