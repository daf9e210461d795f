/* grow.c - growing an array, and records found by key in one (see grow.h). */
#include "base/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int tusk_grow(void *items_ptr, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return 0;
    if (elem_size == 0)
        return -1;
    size_t n = *cap < 16 ? 16 : *cap;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (n > SIZE_MAX / elem_size)
        return -1;
    void *old;
    memcpy(&old, items_ptr, sizeof old);
    void *p = realloc(old, n * elem_size);
    if (!p)
        return -1;
    memcpy(items_ptr, &p, sizeof p);
    *cap = n;
    return 0;
}

void *tusk_grow_find(void *items_ptr, size_t *n, size_t *cap, size_t elem_size, uint64_t key)
{
    unsigned char *items;
    memcpy(&items, items_ptr, sizeof items);
    for (size_t i = 0; i < *n; i++) {
        uint64_t k;
        memcpy(&k, items + i * elem_size, sizeof k);
        if (k == key)
            return items + i * elem_size;
    }
    if (tusk_grow(items_ptr, cap, *n + 1, elem_size) != 0)
        return NULL;
    memcpy(&items, items_ptr, sizeof items);
    unsigned char *r = items + (*n)++ * elem_size;
    memset(r, 0, elem_size);
    memcpy(r, &key, sizeof key);
    return r;
}

void tusk_grow_drop(void *items, size_t *n, size_t elem_size, size_t i)
{
    unsigned char *a = items;
    if (i + 1 < *n)
        memcpy(a + i * elem_size, a + (*n - 1) * elem_size, elem_size);
    (*n)--;
}
