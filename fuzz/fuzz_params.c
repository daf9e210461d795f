/* fuzz_params.c - fuzz target: parameters.conf text (tusk_params_parse).
 *
 * Any bytes either parse or give TUSK_EPARAM with a "origin:LINE:" message.
 * What parses is canonical: every key is a valid name, no value holds a
 * line break or edge spaces, and writing the parameters out as
 * "key = value" lines and parsing that again gives the same parameters.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/params.h"

int fuzz_params_one(const uint8_t *data, size_t size)
{
    tusk_params_t *p = tusk_params_new();
    FUZZ_CHECK(p != NULL);
    tusk_error_t err;
    int rc = tusk_params_parse(p, (const char *)data, size, "fuzz.conf", &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EPARAM || rc == TUSK_ENOMEM);
        FUZZ_CHECK(strncmp(err.message, "fuzz.conf:", 10) == 0 || rc == TUSK_ENOMEM);
        tusk_params_destroy(&p);
        return 0;
    }
    /* Write out and parse again. */
    size_t cap = 16, n = 0;
    for (size_t i = 0; i < tusk_params_count(p); i++)
        cap += strlen(tusk_params_key(p, i)) + strlen(tusk_params_value(p, i)) + 4;
    char *text = malloc(cap);
    FUZZ_CHECK(text != NULL);
    for (size_t i = 0; i < tusk_params_count(p); i++) {
        const char *k = tusk_params_key(p, i), *v = tusk_params_value(p, i);
        size_t vl = strlen(v);
        FUZZ_CHECK(strpbrk(v, "\r\n") == NULL);
        FUZZ_CHECK(vl == 0 || (v[0] != ' ' && v[0] != '\t' && v[vl - 1] != ' ' && v[vl - 1] != '\t'));
        n += (size_t)snprintf(text + n, cap - n, "%s = %s\n", k, v);
    }
    tusk_params_t *q = tusk_params_new();
    FUZZ_CHECK(q != NULL);
    FUZZ_CHECK(tusk_params_parse(q, text, n, "again", &err) == TUSK_OK);
    FUZZ_CHECK(tusk_params_count(q) == tusk_params_count(p));
    for (size_t i = 0; i < tusk_params_count(p); i++) {
        FUZZ_CHECK(strcmp(tusk_params_key(q, i), tusk_params_key(p, i)) == 0);
        FUZZ_CHECK(strcmp(tusk_params_value(q, i), tusk_params_value(p, i)) == 0);
    }
    tusk_params_destroy(&q);
    tusk_params_destroy(&p);
    free(text);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_params_one(data, size);
}
#endif
