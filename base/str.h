/* str.h - small string helpers of libtusk-base (internal). */
#ifndef TUSK_BASE_STR_H
#define TUSK_BASE_STR_H

/* A malloc'd copy of s, or NULL when memory is short. */
char *tusk_strdup(const char *s);

#endif
