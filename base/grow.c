/* grow.c - growing an array (see grow.h). */
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
