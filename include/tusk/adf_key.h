/* adf_key.h - AGATA Data Flow keys, version 4.0.
 *
 * Every frame starts with a 20-byte little-endian key:
 *   u32 length (bytes, key included) | u32 type | u32 event | u64 timestamp
 * The timestamp counts 10 ns ticks and uses 48 bits. The type word holds
 * class (bits 31-24: 0xFA simple, 0xCA composite), sub-detector (23-16),
 * frame kind (15-8) and producer (7-0). See adf/FORMAT.md.
 */
#ifndef TUSK_ADF_KEY_H
#define TUSK_ADF_KEY_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADF_KEY_SIZE 20u
#define ADF_TIMESTAMP_MAX ((UINT64_C(1) << 48) - 1)
#define ADF_FRAME_MAX UINT32_MAX

#define ADF_CLASS_SIMPLE 0xFAu
#define ADF_CLASS_COMPOSITE 0xCAu

/* The frame types tusk knows by name (AGATA codes, and tusk's own data
 * types, whose last byte is 0xF0-0xFF). */
enum adf_type {
    ADF_TYPE_DATA_CRYSTAL = 0xFA010101u,
    ADF_TYPE_DATA_PSA = 0xFA010102u,
    ADF_TYPE_DATA_EB = 0xFA010103u,
    ADF_TYPE_DATA_MERGER = 0xFA010104u,
    ADF_TYPE_DATA_TRACKED = 0xFA010105u,
    ADF_TYPE_DATA_TRUTH = 0xFA0101F0u, /* tusk-private: last byte 0xF0-0xFF */
    ADF_TYPE_DATA_ID_SPACEPOINTS = 0xFA200101u, /* sub-detector 0x20: the inner detector (z-finder) */
    ADF_TYPE_DATA_ZVERTEX = 0xFA200102u,
    ADF_TYPE_DATA_ID_TRUTH = 0xFA2001F0u,       /* tusk-private */
    ADF_TYPE_DATA_STS_DIGIS = 0xFA210101u,      /* sub-detector 0x21: the CBM STS (sts/) */
    ADF_TYPE_DATA_STS_CLUSTERS = 0xFA210102u,
    ADF_TYPE_DATA_STS_HITS = 0xFA210103u,
    ADF_TYPE_DATA_STS_TRUTH = 0xFA2101F0u,      /* tusk-private */
    ADF_TYPE_DATA_UT_RAW = 0xFA220101u,         /* sub-detector 0x22: the LHCb UT (ut/) */
    ADF_TYPE_DATA_VELO_TRACKS = 0xFA220102u,
    ADF_TYPE_DATA_UT_TRACKS = 0xFA220103u,
    ADF_TYPE_DATA_UT_HITS = 0xFA220104u,
    ADF_TYPE_DATA_UT_TRUTH = 0xFA2201F0u,       /* tusk-private */
    ADF_TYPE_DATA_TPC_CLUSTERS = 0xFA230101u,   /* sub-detector 0x23: the ALICE TPC (tpc/) */
    ADF_TYPE_DATA_TPC_TRACKS = 0xFA230102u,
    ADF_TYPE_DATA_TPC_TRUTH = 0xFA2301F0u,      /* tusk-private */
    ADF_TYPE_CONF_GLOBAL = 0xFA000200u,
    ADF_TYPE_CONF_PSA = 0xFA010202u,
    ADF_TYPE_META_EOF = 0xFA001100u,
    ADF_TYPE_META_SYNC = 0xFA011101u,
    ADF_TYPE_EVENT_DATA = 0xCA000100u,
    ADF_TYPE_EVENT_DATA_PSA = 0xCA010102u,
    ADF_TYPE_EVENT_DATA_TRACKED = 0xCA010103u,
    ADF_TYPE_EVENT_DATA_UT = 0xCA220100u        /* composite: one LHCb event's UT frames (ut/) */
};

typedef struct adf_key {
    uint32_t length;    /* whole frame in bytes, key included */
    uint32_t type;
    uint32_t event;     /* event number */
    uint64_t timestamp; /* 10 ns ticks, < 2^48 */
} adf_key_t;

static inline unsigned adf_type_class(uint32_t type) { return type >> 24; }
static inline unsigned adf_type_subdetector(uint32_t type) { return (type >> 16) & 0xFFu; }
static inline unsigned adf_type_kind(uint32_t type) { return (type >> 8) & 0xFFu; }
static inline unsigned adf_type_producer(uint32_t type) { return type & 0xFFu; }
static inline bool adf_type_is_composite(uint32_t type)
{
    return adf_type_class(type) == ADF_CLASS_COMPOSITE;
}

/* Check that a key could start a well-formed frame: class byte 0xFA or
 * 0xCA, length >= ADF_KEY_SIZE, timestamp < 2^48. Fills err on failure. */
TUSK_API int adf_key_validate(const adf_key_t *key, adf_error_t *err);

/* Write the 20 key bytes. Fails with ADF_EBADKEY on an invalid key. */
TUSK_API int adf_key_encode(const adf_key_t *key, uint8_t out[ADF_KEY_SIZE], adf_error_t *err);

/* Read and validate a key from `size` bytes (ADF_ETRUNC if size < 20). */
TUSK_API int adf_key_decode(const uint8_t *in, size_t size, adf_key_t *key, adf_error_t *err);

/* "data:crystal" for 0xFA010101, NULL for a type tusk has no name for. */
TUSK_API const char *adf_type_name(uint32_t type);

/* Parse a frame type given as a name ("data:psa") or a number, decimal or
 * hexadecimal after 0x ("0xFA010102").
 * ADF_EINVAL if neither. */
TUSK_API int adf_type_parse(const char *text, uint32_t *type);

#ifdef __cplusplus
}
#endif
#endif
