/* radix.h - sorting 64-bit keys (internal).
 *
 * tusk_radix_sort_u64 sorts n keys ascending: an LSD radix sort with 8-bit
 * digits, stable, O(n) per digit. One read pass counts all eight digits;
 * a digit that is the same in every key (the high bytes of small keys)
 * costs no pass. Short arrays (under 64 keys) are sorted by insertion.
 * `tmp` is scratch of n keys; the result is in `keys`. Records that must
 * travel with their key put an index in its low bits (key << 32 | i). */
#ifndef TUSK_BASE_RADIX_H
#define TUSK_BASE_RADIX_H

#include "tusk/export.h"

#include <stddef.h>
#include <stdint.h>

TUSK_INTERNAL void tusk_radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n);

#endif
