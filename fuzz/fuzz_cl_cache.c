/* fuzz_cl_cache.c - fuzz target: program-binary cache files (libtusk-cl),
 * which a crash, a full disk or another version may have left damaged.
 * data[0] picks the check:
 *   even: data[1..] as a cache file for a fixed key and source: it is
 *         either refused (-1) or accepted with a binary inside the input
 *         that encodes back to exactly the same bytes;
 *   odd:  data[1..] as a program binary: its encoding parses back to it,
 *         and every truncation of the encoding is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "cl_private.h"
#include "fuzz_targets.h"

int fuzz_cl_cache_one(const uint8_t *data, size_t size)
{
    static const char key[] = "tusk-cl-cache 1\ndevice=fuzz\n", source[] = "__kernel void k(){}";
    if (size == 0)
        return 0;
    const uint8_t *in = data + 1;
    size_t n = size - 1;
    const unsigned char *bin = NULL;
    size_t bin_size = 0;
    if (data[0] % 2 == 0) {
        int rc = tusk_cl_cache_parse(in, n, key, source, sizeof source - 1, &bin, &bin_size);
        FUZZ_CHECK(rc == 1 || rc == -1);
        if (rc == 1) {
            FUZZ_CHECK(bin_size > 0 && bin >= in && bin + bin_size <= in + n);
            size_t total = 0;
            unsigned char *again = tusk_cl_cache_encode(key, source, sizeof source - 1, bin, bin_size, &total);
            FUZZ_CHECK(again && total == n && memcmp(again, in, n) == 0);
            free(again);
        }
        return 0;
    }
    if (n == 0)
        return 0;
    size_t total = 0;
    unsigned char *file = tusk_cl_cache_encode(key, source, sizeof source - 1, in, n, &total);
    FUZZ_CHECK(file != NULL);
    FUZZ_CHECK(tusk_cl_cache_parse(file, total, key, source, sizeof source - 1, &bin, &bin_size) == 1);
    FUZZ_CHECK(bin_size == n && memcmp(bin, in, n) == 0);
    for (size_t cut = 0; cut < total; cut += 1 + cut / 8)
        FUZZ_CHECK(tusk_cl_cache_parse(file, cut, key, source, sizeof source - 1, &bin, &bin_size) == -1);
    /* The same bytes under another key or source are refused. */
    FUZZ_CHECK(tusk_cl_cache_parse(file, total, "other", source, sizeof source - 1, &bin, &bin_size) == -1);
    free(file);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_cl_cache_one(data, size);
}
#endif
