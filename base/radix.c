/* radix.c - sorting 64-bit keys (see radix.h). */
#include "base/radix.h"

#include <string.h>

static void insertion(uint64_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

void tusk_radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n)
{
    if (n < 64) {
        insertion(keys, n);
        return;
    }
    size_t count[8][256];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[i];
        for (int d = 0; d < 8; d++)
            count[d][(k >> (8 * d)) & 0xFF]++;
    }
    uint64_t *src = keys, *dst = tmp;
    for (int d = 0; d < 8; d++) {
        size_t *c = count[d];
        /* a digit every key shares leaves the order as it is */
        if (c[(src[0] >> (8 * d)) & 0xFF] == n)
            continue;
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            size_t v = c[b];
            c[b] = sum;
            sum += v;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = src[i];
            dst[c[(k >> (8 * d)) & 0xFF]++] = k;
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof *keys);
}
