/* version.c - the version of the libraries a program runs with (see
 * tusk/version.h). */
#include "tusk/version.h"

const char *tusk_version(void)
{
    return TUSK_VERSION;
}
