/* zf_ref_float.c - the reference z-finder in float (zf_ref_impl.h). */
#define ZF_DOUBLE 0
#include "zf_ref_impl.h"
