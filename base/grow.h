/* grow.h - growing an array, and records found by key in one (internal).
 *
 * tusk_grow(&items, &cap, need, sizeof *items) makes room for at least
 * `need` elements: it doubles the capacity (from at least 16) until it
 * suffices and reallocs once. It returns 0, or -1 when the size would
 * overflow or memory is short, leaving items and cap as they were. */
#ifndef TUSK_BASE_GROW_H
#define TUSK_BASE_GROW_H

#include "tusk/export.h"

#include <stddef.h>
#include <stdint.h>

TUSK_INTERNAL int tusk_grow(void *items_ptr, size_t *cap, size_t need, size_t elem_size);

/* Records found by a key: each record of the array (elem_size bytes)
 * begins with its uint64_t key. tusk_grow_find returns the record of `key`
 * among the *n, or adds one at the end (zeroed but for its key; the array
 * grown by tusk_grow, *n counted), or NULL when memory is short.
 * tusk_grow_drop removes record i, the last taking its place. */
TUSK_INTERNAL void *tusk_grow_find(void *items_ptr, size_t *n, size_t *cap, size_t elem_size, uint64_t key);
TUSK_INTERNAL void tusk_grow_drop(void *items, size_t *n, size_t elem_size, size_t i);

#endif
