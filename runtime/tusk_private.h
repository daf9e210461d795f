/* tusk_private.h - helpers shared inside libtusk (not installed). */
#ifndef TUSK_PRIVATE_H
#define TUSK_PRIVATE_H

#include <stddef.h>

#include "tusk/error.h"
#include "base/str.h"

#endif
