/* tusk_private.h - helpers shared inside libtusk (not installed). */
#ifndef TUSK_PRIVATE_H
#define TUSK_PRIVATE_H

#include "tusk/export.h"

#include <stddef.h>

#include "tusk/error.h"
#include "base/str.h"

/* The topology schema, compiled into the library (config/topology.rng, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_topology_schema[];
TUSK_INTERNAL extern const unsigned long tusk_topology_schema_size;

#endif
