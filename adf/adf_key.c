/* adf_key.c - ADF v4.0 keys and the table of frame type names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "adf_private.h"
#include "base/parse.h"

int adf_key_validate(const adf_key_t *key, adf_error_t *err)
{
    unsigned cls = adf_type_class(key->type);
    if (cls != ADF_CLASS_SIMPLE && cls != ADF_CLASS_COMPOSITE)
        return adf_error_set(err, ADF_EBADKEY, ADF_NO_OFFSET,
                             "type 0x%08X has class byte 0x%02X, neither 0xFA (simple) nor 0xCA (composite)",
                             (unsigned)key->type, cls);
    if (key->length < ADF_KEY_SIZE)
        return adf_error_set(err, ADF_EBADKEY, ADF_NO_OFFSET,
                             "frame length %u is shorter than the %u-byte key", (unsigned)key->length,
                             ADF_KEY_SIZE);
    if (key->timestamp > ADF_TIMESTAMP_MAX)
        return adf_error_set(err, ADF_EBADKEY, ADF_NO_OFFSET,
                             "timestamp 0x%016llX uses more than 48 bits",
                             (unsigned long long)key->timestamp);
    return ADF_OK;
}

int adf_key_encode(const adf_key_t *key, uint8_t out[ADF_KEY_SIZE], adf_error_t *err)
{
    int rc = adf_key_validate(key, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(out, key->length);
    tusk_put_u32(out + 4, key->type);
    tusk_put_u32(out + 8, key->event);
    tusk_put_u64(out + 12, key->timestamp);
    return ADF_OK;
}

int adf_key_decode(const uint8_t *in, size_t size, adf_key_t *key, adf_error_t *err)
{
    if (size < ADF_KEY_SIZE)
        return adf_error_set(err, ADF_ETRUNC, 0, "only %zu bytes where a %u-byte key was expected", size,
                             ADF_KEY_SIZE);
    key->length = tusk_get_u32(in);
    key->type = tusk_get_u32(in + 4);
    key->event = tusk_get_u32(in + 8);
    key->timestamp = tusk_get_u64(in + 12);
    int rc = adf_key_validate(key, err);
    if (rc != ADF_OK && err)
        err->offset = 0;
    return rc;
}

static const struct {
    uint32_t type;
    const char *name;
} adf_type_names[] = {
    {ADF_TYPE_DATA_CRYSTAL, "data:crystal"},
    {ADF_TYPE_DATA_PSA, "data:psa"},
    {ADF_TYPE_DATA_EB, "data:eb"},
    {ADF_TYPE_DATA_MERGER, "data:merger"},
    {ADF_TYPE_DATA_TRACKED, "data:tracked"},
    {ADF_TYPE_DATA_TRUTH, "data:truth"},
    {ADF_TYPE_DATA_ID_SPACEPOINTS, "data:id_spacepoints"},
    {ADF_TYPE_DATA_ZVERTEX, "data:zvertex"},
    {ADF_TYPE_DATA_ID_TRUTH, "data:id_truth"},
    {ADF_TYPE_DATA_STS_DIGIS, "data:sts_digis"},
    {ADF_TYPE_DATA_STS_CLUSTERS, "data:sts_clusters"},
    {ADF_TYPE_DATA_STS_HITS, "data:sts_hits"},
    {ADF_TYPE_DATA_STS_TRUTH, "data:sts_truth"},
    {ADF_TYPE_DATA_UT_RAW, "data:ut_raw"},
    {ADF_TYPE_DATA_VELO_TRACKS, "data:velo_tracks"},
    {ADF_TYPE_DATA_UT_TRACKS, "data:ut_tracks"},
    {ADF_TYPE_DATA_UT_HITS, "data:ut_hits"},
    {ADF_TYPE_DATA_UT_TRUTH, "data:ut_truth"},
    {ADF_TYPE_DATA_TPC_CLUSTERS, "data:tpc_clusters"},
    {ADF_TYPE_DATA_TPC_TRACKS, "data:tpc_tracks"},
    {ADF_TYPE_DATA_TPC_TRUTH, "data:tpc_truth"},
    {ADF_TYPE_CONF_GLOBAL, "conf:global"},
    {ADF_TYPE_CONF_PSA, "conf:psa"},
    {ADF_TYPE_META_EOF, "meta:eof"},
    {ADF_TYPE_META_SYNC, "meta:sync"},
    {ADF_TYPE_EVENT_DATA, "event:data"},
    {ADF_TYPE_EVENT_DATA_PSA, "event:data:psa"},
    {ADF_TYPE_EVENT_DATA_TRACKED, "event:data:tracked"},
    {ADF_TYPE_EVENT_DATA_UT, "event:data:ut"},
};

#define ADF_N_TYPE_NAMES (sizeof adf_type_names / sizeof adf_type_names[0])

const char *adf_type_name(uint32_t type)
{
    for (size_t i = 0; i < ADF_N_TYPE_NAMES; i++)
        if (adf_type_names[i].type == type)
            return adf_type_names[i].name;
    return NULL;
}

const char *adf_type_label(uint32_t type, char buf[16])
{
    const char *name = adf_type_name(type);
    if (name)
        return name;
    snprintf(buf, 16, "0x%08X", (unsigned)type);
    return buf;
}

int adf_type_parse(const char *text, uint32_t *type)
{
    if (!text || !*text)
        return ADF_EINVAL;
    for (size_t i = 0; i < ADF_N_TYPE_NAMES; i++)
        if (strcmp(adf_type_names[i].name, text) == 0) {
            *type = adf_type_names[i].type;
            return ADF_OK;
        }
    uint64_t v;
    if (tusk_parse_u64x(text, 0, UINT32_MAX, &v) != 0)
        return ADF_EINVAL;
    *type = (uint32_t)v;
    return ADF_OK;
}
