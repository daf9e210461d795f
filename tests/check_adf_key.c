/* check_adf_key.c - ADF v4.0 keys: the exact 20-byte layout, round trips on
 * random keys, validation of every malformed field, and the type names. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The layout written out by hand: LE length, type, event, 64-bit timestamp. */
START_TEST(key_known_vector)
{
    adf_key_t key = {.length = 0x00000114u, .type = 0xFA010102u, .event = 0x01020304u,
                     .timestamp = UINT64_C(0x0000AABBCCDDEEFF)};
    static const uint8_t want[ADF_KEY_SIZE] = {0x14, 0x01, 0x00, 0x00, 0x02, 0x01, 0x01, 0xFA, 0x04, 0x03,
                                               0x02, 0x01, 0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x00, 0x00};
    uint8_t out[ADF_KEY_SIZE];
    adf_error_t err;
    ck_assert_int_eq(adf_key_encode(&key, out, &err), ADF_OK);
    ck_assert_mem_eq(out, want, ADF_KEY_SIZE);

    adf_key_t back;
    ck_assert_int_eq(adf_key_decode(want, sizeof want, &back, &err), ADF_OK);
    ck_assert_uint_eq(back.length, key.length);
    ck_assert_uint_eq(back.type, key.type);
    ck_assert_uint_eq(back.event, key.event);
    ck_assert_uint_eq(back.timestamp, key.timestamp);
}
END_TEST

START_TEST(key_round_trip_random)
{
    for (int i = 0; i < 10000; i++) {
        adf_key_t key = {.length = ADF_KEY_SIZE + (uint32_t)(tu_rand() % (UINT32_MAX - ADF_KEY_SIZE)),
                         .type = (tu_below(2) ? 0xFAu : 0xCAu) << 24 | (uint32_t)(tu_rand() & 0xFFFFFF),
                         .event = (uint32_t)tu_rand(),
                         .timestamp = tu_rand() & ADF_TIMESTAMP_MAX};
        uint8_t out[ADF_KEY_SIZE + 1];
        out[ADF_KEY_SIZE] = 0x5A; /* must stay untouched */
        ck_assert_int_eq(adf_key_encode(&key, out, NULL), ADF_OK);
        ck_assert_uint_eq(out[ADF_KEY_SIZE], 0x5A);
        ck_assert_uint_eq(out[7], adf_type_class(key.type));
        adf_key_t back;
        ck_assert_int_eq(adf_key_decode(out, ADF_KEY_SIZE, &back, NULL), ADF_OK);
        ck_assert_uint_eq(back.length, key.length);
        ck_assert_uint_eq(back.type, key.type);
        ck_assert_uint_eq(back.event, key.event);
        ck_assert_uint_eq(back.timestamp, key.timestamp);
    }
}
END_TEST

START_TEST(key_type_fields)
{
    ck_assert_uint_eq(adf_type_class(ADF_TYPE_DATA_PSA), 0xFA);
    ck_assert_uint_eq(adf_type_subdetector(ADF_TYPE_DATA_PSA), 0x01);
    ck_assert_uint_eq(adf_type_kind(ADF_TYPE_DATA_PSA), 0x01);
    ck_assert_uint_eq(adf_type_producer(ADF_TYPE_DATA_PSA), 0x02);
    ck_assert(adf_type_is_composite(ADF_TYPE_EVENT_DATA_PSA));
    ck_assert(!adf_type_is_composite(ADF_TYPE_DATA_PSA));
    ck_assert(!adf_type_is_composite(ADF_TYPE_META_EOF));
}
END_TEST

START_TEST(key_rejects_bad_class)
{
    adf_key_t key = {.length = 40, .type = 0x3F010101u, .event = 1, .timestamp = 2};
    adf_error_t err;
    uint8_t out[ADF_KEY_SIZE];
    ck_assert_int_eq(adf_key_encode(&key, out, &err), ADF_EBADKEY);
    tu_assert_error(&err, ADF_EBADKEY, "class byte 0x3F");
}
END_TEST

START_TEST(key_rejects_short_length)
{
    adf_error_t err;
    for (uint32_t len = 0; len < ADF_KEY_SIZE; len++) {
        adf_key_t key = {.length = len, .type = ADF_TYPE_DATA_CRYSTAL};
        ck_assert_int_eq(adf_key_validate(&key, &err), ADF_EBADKEY);
        tu_assert_error(&err, ADF_EBADKEY, "shorter than");
    }
    adf_key_t ok = {.length = ADF_KEY_SIZE, .type = ADF_TYPE_META_EOF};
    ck_assert_int_eq(adf_key_validate(&ok, &err), ADF_OK);
}
END_TEST

START_TEST(key_rejects_wide_timestamp)
{
    adf_key_t key = {.length = 20, .type = ADF_TYPE_DATA_PSA, .timestamp = ADF_TIMESTAMP_MAX};
    adf_error_t err;
    ck_assert_int_eq(adf_key_validate(&key, &err), ADF_OK);
    for (int bit = 48; bit < 64; bit++) {
        key.timestamp = UINT64_C(1) << bit;
        ck_assert_int_eq(adf_key_validate(&key, &err), ADF_EBADKEY);
        tu_assert_error(&err, ADF_EBADKEY, "48 bits");
    }
}
END_TEST

START_TEST(key_decode_short_input)
{
    uint8_t in[ADF_KEY_SIZE] = {0};
    adf_key_t key;
    adf_error_t err;
    for (size_t n = 0; n < ADF_KEY_SIZE; n++) {
        ck_assert_int_eq(adf_key_decode(in, n, &key, &err), ADF_ETRUNC);
        tu_assert_error(&err, ADF_ETRUNC, "key was expected");
    }
}
END_TEST

START_TEST(type_names_round_trip)
{
    static const uint32_t types[] = {ADF_TYPE_DATA_CRYSTAL, ADF_TYPE_DATA_PSA, ADF_TYPE_DATA_EB,
                                     ADF_TYPE_DATA_MERGER, ADF_TYPE_DATA_TRACKED, ADF_TYPE_DATA_TRUTH,
                                     ADF_TYPE_CONF_GLOBAL, ADF_TYPE_CONF_PSA, ADF_TYPE_META_EOF,
                                     ADF_TYPE_META_SYNC, ADF_TYPE_EVENT_DATA, ADF_TYPE_EVENT_DATA_PSA,
                                     ADF_TYPE_EVENT_DATA_TRACKED};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const char *name = adf_type_name(types[i]);
        ck_assert_ptr_nonnull(name);
        uint32_t back = 0;
        ck_assert_int_eq(adf_type_parse(name, &back), ADF_OK);
        ck_assert_uint_eq(back, types[i]);
    }
    ck_assert_str_eq(adf_type_name(0xFA010101u), "data:crystal");
    ck_assert_str_eq(adf_type_name(0xCA010102u), "event:data:psa");
    ck_assert_str_eq(adf_type_name(0xFA001100u), "meta:eof");
    ck_assert_str_eq(adf_type_name(0xFA0101F0u), "data:truth");
    uint32_t truth = 0;
    ck_assert_int_eq(adf_type_parse("data:truth", &truth), ADF_OK);
    ck_assert_uint_eq(truth, 0xFA0101F0u);
    ck_assert_ptr_null(adf_type_name(0xFA7F0301u));
}
END_TEST

START_TEST(type_parse_numbers_and_garbage)
{
    uint32_t t = 0;
    ck_assert_int_eq(adf_type_parse("0xFA7F0301", &t), ADF_OK);
    ck_assert_uint_eq(t, 0xFA7F0301u);
    ck_assert_int_eq(adf_type_parse("4194369793", &t), ADF_OK);
    ck_assert_uint_eq(t, 4194369793u);
    ck_assert_int_eq(adf_type_parse("data:nothing", &t), ADF_EINVAL);
    ck_assert_int_eq(adf_type_parse("", &t), ADF_EINVAL);
    ck_assert_int_eq(adf_type_parse("0x1FFFFFFFF", &t), ADF_EINVAL);
    ck_assert_int_eq(adf_type_parse("-1", &t), ADF_EINVAL);
    ck_assert_int_eq(adf_type_parse("12abc", &t), ADF_EINVAL);
}
END_TEST

START_TEST(strerror_distinct)
{
    static const int codes[] = {ADF_OK, ADF_END, ADF_EFULL, ADF_ETOOBIG, ADF_ETRUNC, ADF_EBADKEY,
                                ADF_EBADTYPE, ADF_EPAYLOAD, ADF_ERANGE, ADF_EINVAL, ADF_EIO, ADF_ENOMEM};
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_ne(adf_strerror(codes[i]), "unknown status");
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(adf_strerror(codes[i]), adf_strerror(codes[j]));
    }
    ck_assert_str_eq(adf_strerror(-999), "unknown status");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adf_key");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, key_known_vector);
    tcase_add_test(tc, key_round_trip_random);
    tcase_add_test(tc, key_type_fields);
    suite_add_tcase(s, tc);
    tc = tcase_create("validation");
    tcase_add_test(tc, key_rejects_bad_class);
    tcase_add_test(tc, key_rejects_short_length);
    tcase_add_test(tc, key_rejects_wide_timestamp);
    tcase_add_test(tc, key_decode_short_input);
    suite_add_tcase(s, tc);
    tc = tcase_create("names");
    tcase_add_test(tc, type_names_round_trip);
    tcase_add_test(tc, type_parse_numbers_and_garbage);
    tcase_add_test(tc, strerror_distinct);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
