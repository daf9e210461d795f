/* gather.h - frames gathered into parts, parts counted into units
 * (internal): the bookkeeping of the quality analyses, whose input for
 * one part (a module of a timeslice, a slice of an event) is several
 * frames that may come in any order and over any buffers, and whose
 * units are complete when they have had as many parts as their frames
 * announce.
 *
 * A part's record is the caller's struct, of `size` bytes, beginning with
 * a tusk_part_t; frames are bits of its `have`. tusk_gather_part finds or
 * opens the record of a part, tusk_gather_close releases and drops it
 * (the last open record takes its place: records keep no order but that
 * of their opening, less the closed ones). The messages of the end
 * (tusk_gather_open, tusk_gather_short) are the caller's. */
#ifndef TUSK_BASE_GATHER_H
#define TUSK_BASE_GATHER_H

#include "tusk/export.h"

#include <stddef.h>
#include <stdint.h>

#include "tusk/error.h"

typedef struct tusk_part {
    uint64_t key;   /* unit << 32 | part */
    uint32_t unit;  /* timeslice, event */
    uint32_t part;  /* module, slice */
    unsigned have;  /* the frames that came, a bit each */
} tusk_part_t;

typedef struct tusk_unit {
    uint64_t unit;
    uint32_t expected; /* parts, as the first part announced */
    uint32_t seen;     /* parts that announced it */
} tusk_unit_t;

typedef struct tusk_gather {
    const char *unit_name;      /* "timeslice", "event" */
    const char *part_name;      /* "module", "slice" */
    size_t size;                /* a record's bytes (a tusk_part_t first) */
    void (*release)(void *rec); /* frees what a record holds (may be NULL) */
    unsigned char *parts;       /* the open records, n of them */
    size_t n, cap;
    tusk_unit_t *units; /* in the order they came */
    size_t n_units, cap_units;
} tusk_gather_t;

/* An empty gatherer of records of `size` bytes, of parts named part_name
 * of units named unit_name; tusk_gather_free releases the open records
 * and frees the rest. */
TUSK_INTERNAL void tusk_gather_init(tusk_gather_t *g, size_t size, void (*release)(void *rec), const char *unit_name,
                                    const char *part_name);
TUSK_INTERNAL void tusk_gather_free(tusk_gather_t *g);

/* The record of part `part` of unit `unit`: the open one, or a new one,
 * zeroed but for its head; NULL when memory is short (TUSK_ENOMEM). */
TUSK_INTERNAL void *tusk_gather_part(tusk_gather_t *g, uint32_t unit, uint32_t part, tusk_error_t *err);

/* Release record `rec` and drop it. */
TUSK_INTERNAL void tusk_gather_close(tusk_gather_t *g, void *rec);

/* A part of `unit` announced `parts` parts, and is counted: TUSK_OK, or
 * TUSK_EINVAL when an earlier one announced another number ("timeslice
 * 7: modules announce 12 and 13 modules"; not counted), TUSK_ENOMEM. */
TUSK_INTERNAL int tusk_gather_unit(tusk_gather_t *g, uint32_t unit, uint32_t parts, tusk_error_t *err);

/* At the end: the first record still open, NULL when none; the first unit
 * with fewer parts than announced, NULL when none. */
TUSK_INTERNAL const tusk_part_t *tusk_gather_open(const tusk_gather_t *g);
TUSK_INTERNAL const tusk_unit_t *tusk_gather_short(const tusk_gather_t *g);

/* The open record of the lowest (unit, part), NULL when none: a message
 * that does not depend on the order the frames came in. */
TUSK_INTERNAL const tusk_part_t *tusk_gather_lowest(const tusk_gather_t *g);

/* The names of the frames not in `have` (names[k] is bit k's, n of
 * them), ", " between them, into buf (cap bytes). */
TUSK_INTERNAL void tusk_gather_missing(unsigned have, const char *const *names, unsigned n, char *buf, size_t cap);

#endif
