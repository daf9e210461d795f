/* adf_codec.h - what the typed codecs share (adf_codec.c; not installed):
 * the codecs (adf_crystal.c, adf_psa.c, ...) sit on top of the key table,
 * the writer and the error reports, and nothing below calls back up. */
#ifndef ADF_CODEC_H
#define ADF_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/bytes.h"

#include "tusk/adf.h"

/* Check that `frame` has type `type` (ADF_EBADTYPE with a message if not). */
int adf_expect_type(const adf_frame_t *frame, uint32_t type, adf_error_t *err);

/* The start of a decoder: `frame` has type `type` and a payload of at
 * least its `header` bytes (ADF_EPAYLOAD "NAME at offset N: payload of 3
 * bytes is shorter than its 12-byte header" if not). */
int adf_expect_header(const adf_frame_t *frame, uint32_t type, const char *name, unsigned header, adf_error_t *err);

/* A header's or record's layout, written once for its encoder and its
 * decoder: a table of its fields, each where in the bytes, which member
 * of the C struct, and the width and type - the member's own, so that the
 * table cannot disagree with the struct (ADF_FIELD). adf_layout_get and
 * adf_layout_put go through it field by field, little-endian
 * (base/bytes.h); no struct is cast onto the bytes. */
enum { ADF_FIELD_U8, ADF_FIELD_I8, ADF_FIELD_U16, ADF_FIELD_U32, ADF_FIELD_F32 };
typedef struct adf_field {
    uint8_t at;      /* byte offset in the header or record */
    uint8_t kind;    /* ADF_FIELD_*, from the member's type */
    uint16_t member; /* offsetof the member */
} adf_field_t;
#define ADF_FIELD_KIND(x)                                                                                              \
    _Generic((x), uint8_t: ADF_FIELD_U8, int8_t: ADF_FIELD_I8, uint16_t: ADF_FIELD_U16, uint32_t: ADF_FIELD_U32,       \
             float: ADF_FIELD_F32)
/* Member m of struct type T at byte `at`. */
#define ADF_FIELD(T, m, at) {(at), ADF_FIELD_KIND(((T *)0)->m), (uint16_t)offsetof(T, m)}
/* A layout table's length, and its two arguments: the table and its length. */
#define ADF_COUNT(l) (sizeof(l) / sizeof((l)[0]))
#define ADF_LAYOUT(l) (l), ADF_COUNT(l)

/* The n fields of layout l from bytes into the struct at rec (inline: with
 * a constant table the compiler unrolls it into the loads themselves). */
static inline void adf_layout_get(const adf_field_t *l, size_t n, const uint8_t *bytes, void *rec)
{
#pragma GCC unroll 16
    for (size_t i = 0; i < n; i++) {
        const uint8_t *b = bytes + l[i].at;
        unsigned char *m = (unsigned char *)rec + l[i].member;
        switch (l[i].kind) {
        case ADF_FIELD_U8: *m = b[0]; break;
        case ADF_FIELD_I8: {
            int8_t v = (int8_t)(b[0] >= 128 ? (int)b[0] - 256 : (int)b[0]);
            memcpy(m, &v, sizeof v);
            break;
        }
        case ADF_FIELD_U16: {
            uint16_t v = tusk_get_u16(b);
            memcpy(m, &v, sizeof v);
            break;
        }
        case ADF_FIELD_U32: {
            uint32_t v = tusk_get_u32(b);
            memcpy(m, &v, sizeof v);
            break;
        }
        default: {
            float v = tusk_get_f32(b);
            memcpy(m, &v, sizeof v);
            break;
        }
        }
    }
}

/* The n fields of layout l from the struct at rec into bytes. */
static inline void adf_layout_put(const adf_field_t *l, size_t n, const void *rec, uint8_t *bytes)
{
#pragma GCC unroll 16
    for (size_t i = 0; i < n; i++) {
        uint8_t *b = bytes + l[i].at;
        const unsigned char *m = (const unsigned char *)rec + l[i].member;
        switch (l[i].kind) {
        case ADF_FIELD_U8:
        case ADF_FIELD_I8: b[0] = m[0]; break;
        case ADF_FIELD_U16: {
            uint16_t v;
            memcpy(&v, m, sizeof v);
            tusk_put_u16(b, v);
            break;
        }
        case ADF_FIELD_U32: {
            uint32_t v;
            memcpy(&v, m, sizeof v);
            tusk_put_u32(b, v);
            break;
        }
        default: {
            float v;
            memcpy(&v, m, sizeof v);
            tusk_put_f32(b, v);
            break;
        }
        }
    }
}

/* Reserve a frame of `type` for a codec; on failure copy the writer's
 * error into err. */
int adf_reserve_frame(adf_writer_t *writer, uint32_t type, uint32_t event, uint64_t timestamp,
                      size_t size, uint8_t **payload, adf_error_t *err);

#endif
