/* zf_ref_double.c - the reference z-finder in double (zf_ref_impl.h). */
#define ZF_DOUBLE 1
#include "zf_ref_impl.h"
