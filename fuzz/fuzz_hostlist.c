/* fuzz_hostlist.c - fuzz target: Slurm's compact host lists
 * (base/hostlist.h), as SLURM_JOB_NODELIST gives them to tusk-run
 * --engine slurm. The input (up to its first NUL) is a list:
 *   - it expands, or is refused with TUSK_EINVAL / TUSK_ELIMIT and a message;
 *   - every expanded name is 1..TUSK_HOSTLIST_NAME_MAX characters of
 *     letters, digits and - . _, and there are at most the limit of them;
 *   - a list without '[' expands to its comma-separated names as written;
 *   - the names joined with commas expand to the same names.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hostlist.h"
#include "fuzz_targets.h"

#define FUZZ_HOSTS_MAX 4096

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > TUSK_HOSTLIST_NAME_MAX)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
              *s == '.' || *s == '_'))
            return false;
    return true;
}

int fuzz_hostlist_one(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    tusk_error_t err;
    char **hosts = NULL;
    size_t n = 0;
    int rc = tusk_hostlist_expand(text, FUZZ_HOSTS_MAX, &hosts, &n, &err);
    FUZZ_CHECK(rc == TUSK_OK || ((rc == TUSK_EINVAL || rc == TUSK_ELIMIT) && err.message[0] && !hosts && n == 0));
    if (rc == TUSK_OK) {
        FUZZ_CHECK(n >= 1 && n <= FUZZ_HOSTS_MAX);
        size_t joined_len = 0;
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(name_ok(hosts[i]));
            joined_len += strlen(hosts[i]) + 1;
        }
        char *joined = malloc(joined_len);
        FUZZ_CHECK(joined != NULL);
        char *p = joined;
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(hosts[i]);
            memcpy(p, hosts[i], len);
            p += len;
            *p++ = i + 1 < n ? ',' : '\0';
        }
        if (!strchr(text, '['))
            FUZZ_CHECK(strcmp(joined, text) == 0);
        char **again = NULL;
        size_t n2 = 0;
        FUZZ_CHECK(tusk_hostlist_expand(joined, FUZZ_HOSTS_MAX, &again, &n2, &err) == TUSK_OK);
        FUZZ_CHECK(n2 == n);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(strcmp(again[i], hosts[i]) == 0);
        tusk_hostlist_free(again, n2);
        free(joined);
    }
    tusk_hostlist_free(hosts, n);
    free(text);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_hostlist_one(data, size);
}
#endif
