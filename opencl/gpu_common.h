/* gpu_common.h - one source for host C and OpenCL C (internal).
 *
 * A header shared by a kernel and its host code (records, constants,
 * formulas) is written once, in the subset of C that both compilers read,
 * with these names for what differs (the idea of ALICE O2's
 * GPUCommonDefAPI.h):
 *
 *   tusk_u8/u16/u32/i32/u64/f32   fixed-width types
 *   TUSK_FN                       a function both sides compile (static
 *                                 inline on the host, inline in OpenCL C)
 *   TUSK_GLOBAL, TUSK_LOCAL, TUSK_CONSTANT   address spaces (empty on the host)
 *   TUSK_STATIC_ASSERT(c, msg)    checked on the host, ignored on the device
 *   TUSK_ON_DEVICE                1 inside a kernel, else 0
 *   tusk_f32_bits, tusk_bits_f32  a float's bits and back (as_uint and
 *                                 as_float in OpenCL C)
 *
 * Such a header includes this one only on the host:
 *
 *     #ifndef __OPENCL_VERSION__
 *     #include "opencl/gpu_common.h"
 *     #endif
 *
 * and the kernel's embedded source is this file, then the shared headers,
 * then the .cl file, concatenated by tools/embed-text.sh (which marks each
 * part with #line, so build logs name the right file and line). A kernel
 * never has its own copy of a constant, record or formula. Records that
 * cross the host/device boundary use only 4- and 8-byte members in
 * naturally aligned order; their layout is compared between host and
 * device by a test (see opencl/README.md). */
#ifndef TUSK_GPU_COMMON_H
#define TUSK_GPU_COMMON_H

#ifdef __OPENCL_VERSION__
typedef uchar tusk_u8;
typedef ushort tusk_u16;
typedef uint tusk_u32;
typedef int tusk_i32;
typedef ulong tusk_u64;
typedef float tusk_f32;
#define TUSK_FN inline
#define TUSK_GLOBAL __global
#define TUSK_LOCAL __local
#define TUSK_CONSTANT __constant
#define TUSK_STATIC_ASSERT(c, msg)
#define TUSK_ON_DEVICE 1
#else
#include <stdint.h>
typedef uint8_t tusk_u8;
typedef uint16_t tusk_u16;
typedef uint32_t tusk_u32;
typedef int32_t tusk_i32;
typedef uint64_t tusk_u64;
typedef float tusk_f32;
#define TUSK_FN static inline
#define TUSK_GLOBAL
#define TUSK_LOCAL
#define TUSK_CONSTANT
#define TUSK_STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#define TUSK_ON_DEVICE 0
#endif

#ifdef __OPENCL_VERSION__
#define tusk_f32_bits(f) as_uint(f)
#define tusk_bits_f32(u) as_float(u)
#else
static inline tusk_u32 tusk_f32_bits(tusk_f32 f)
{
    tusk_u32 u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}

static inline tusk_f32 tusk_bits_f32(tusk_u32 u)
{
    tusk_f32 f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}
#endif

#endif
