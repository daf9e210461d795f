/* bytes.h - explicit little-endian loads and stores (internal), and
 * the checksum of tusk's own binary files.
 *
 * Every field on the wire goes through these: no struct is ever cast onto
 * a buffer, so alignment and host byte order never matter. ADF frames,
 * the wire protocol, basis files and the OpenCL binary cache all use
 * them. Header only: including it links nothing. */
#ifndef TUSK_BASE_BYTES_H
#define TUSK_BASE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t tusk_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t tusk_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t tusk_get_u64(const uint8_t *p)
{
    return (uint64_t)tusk_get_u32(p) | ((uint64_t)tusk_get_u32(p + 4) << 32);
}

static inline int16_t tusk_get_i16(const uint8_t *p)
{
    uint16_t u = tusk_get_u16(p);
    int16_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static inline float tusk_get_f32(const uint8_t *p)
{
    uint32_t u = tusk_get_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline double tusk_get_f64(const uint8_t *p)
{
    uint64_t u = tusk_get_u64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline void tusk_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void tusk_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void tusk_put_u64(uint8_t *p, uint64_t v)
{
    tusk_put_u32(p, (uint32_t)v);
    tusk_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline void tusk_put_i16(uint8_t *p, int16_t v)
{
    uint16_t u;
    memcpy(&u, &v, sizeof u);
    tusk_put_u16(p, u);
}

static inline void tusk_put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    tusk_put_u32(p, u);
}

static inline void tusk_put_f64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    tusk_put_u64(p, u);
}

/* FNV-1a, 64 bits: the checksum of the OpenCL binary cache's files and of
 * basis files. Start from TUSK_FNV1A_SEED; chain by passing the result. */
#define TUSK_FNV1A_SEED UINT64_C(0xcbf29ce484222325)

static inline uint64_t tusk_fnv1a(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

#endif
