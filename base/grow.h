/* grow.h - growing an array (internal).
 *
 * tusk_grow(&items, &cap, need, sizeof *items) makes room for at least
 * `need` elements: it doubles the capacity (from at least 16) until it
 * suffices and reallocs once. It returns 0, or -1 when the size would
 * overflow or memory is short, leaving items and cap as they were. */
#ifndef TUSK_BASE_GROW_H
#define TUSK_BASE_GROW_H

#include "tusk/export.h"

#include <stddef.h>

TUSK_INTERNAL int tusk_grow(void *items_ptr, size_t *cap, size_t need, size_t elem_size);

#endif
