/* str.h - small string helpers of libtusk-base (internal). */
#ifndef TUSK_BASE_STR_H
#define TUSK_BASE_STR_H

#include "tusk/export.h"

/* A malloc'd copy of s, or NULL when memory is short. */
TUSK_INTERNAL char *tusk_strdup(const char *s);

#endif
