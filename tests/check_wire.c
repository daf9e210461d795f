/* check_wire.c - the formats of a distributed run: the 48-byte data header
 * (exact bytes, round trips, every rejection), control messages (text
 * form, escaping, round trips on random content, malformed text), the run
 * secrets an instance gets on its standard input and CURVE certificates
 * (exact text, round trips on random keys, every rejection, random text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "runtime/wire.h"

START_TEST(header_known_bytes)
{
    tusk_wire_header_t h = {.flags = TUSK_WIRE_COMPLETES,
                            .run = 0x01020304u,
                            .incarnation = 2,
                            .source_actor = 3,
                            .source_instance = 4,
                            .input_actor = 5,
                            .input_instance = 6,
                            .seq = UINT64_C(0x1112131415161718),
                            .input_seq = 9,
                            .payload_size = 0x00100000u};
    uint8_t b[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_encode(&h, b);
    static const uint8_t want[TUSK_WIRE_HEADER_SIZE] = {
        'T', 'S', 'K', 'D', 2, 0, 2, 0, 4, 3, 2, 1, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 0, 0,
        0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0};
    ck_assert_mem_eq(b, want, sizeof want);
    tusk_wire_header_t back;
    tusk_error_t err;
    ck_assert_int_eq(tusk_wire_decode(b, sizeof b, &back, &err), TUSK_OK);
    ck_assert_uint_eq(back.flags, h.flags);
    ck_assert_uint_eq(back.run, h.run);
    ck_assert_uint_eq(back.incarnation, h.incarnation);
    ck_assert_uint_eq(back.source_actor, h.source_actor);
    ck_assert_uint_eq(back.source_instance, h.source_instance);
    ck_assert_uint_eq(back.input_actor, h.input_actor);
    ck_assert_uint_eq(back.input_instance, h.input_instance);
    ck_assert_uint_eq(back.seq, h.seq);
    ck_assert_uint_eq(back.input_seq, h.input_seq);
    ck_assert_uint_eq(back.payload_size, h.payload_size);
}
END_TEST

START_TEST(header_round_trip_random)
{
    for (int i = 0; i < 20000; i++) {
        tusk_wire_header_t h;
        memset(&h, 0, sizeof h); /* padding too, for the memcmp below */
        /* Every valid combination: end of run alone; a buffer (completing
         * or not); an empty marker that completes or releases. */
        static const uint16_t valid[] = {TUSK_WIRE_END_OF_RUN, 0, TUSK_WIRE_COMPLETES,
                                         TUSK_WIRE_EMPTY | TUSK_WIRE_COMPLETES, TUSK_WIRE_EMPTY,
                                         TUSK_WIRE_EMPTY | TUSK_WIRE_RELEASE, TUSK_WIRE_SHM,
                                         TUSK_WIRE_SHM | TUSK_WIRE_COMPLETES};
        h.flags = valid[tu_below(sizeof valid / sizeof valid[0])];
        h.run = (uint32_t)tu_rand();
        h.incarnation = (uint16_t)tu_rand();
        h.source_actor = (uint16_t)tu_rand();
        h.source_instance = (uint16_t)tu_rand();
        h.input_actor = (uint16_t)tu_rand();
        h.input_instance = (uint16_t)tu_rand();
        h.seq = tu_rand();
        h.input_seq = tu_rand();
        h.payload_size = (h.flags & (TUSK_WIRE_END_OF_RUN | TUSK_WIRE_EMPTY)) ? 0 : (uint32_t)tu_rand();
        uint8_t b[TUSK_WIRE_HEADER_SIZE];
        tusk_wire_encode(&h, b);
        tusk_wire_header_t back;
        memset(&back, 0, sizeof back);
        tusk_error_t err;
        tu_check(tusk_wire_decode(b, sizeof b, &back, &err) == TUSK_OK);
        tu_check(memcmp(&back, &h, sizeof h) == 0);
    }
}
END_TEST

static void decode_fails(const uint8_t *b, size_t n, const char *needle)
{
    tusk_wire_header_t h;
    tusk_error_t err;
    ck_assert_int_eq(tusk_wire_decode(b, n, &h, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, needle);
}

START_TEST(header_rejections)
{
    tusk_wire_header_t h = {.flags = 0, .run = 1, .seq = 1, .payload_size = 100};
    uint8_t good[TUSK_WIRE_HEADER_SIZE], b[TUSK_WIRE_HEADER_SIZE + 1];
    tusk_wire_encode(&h, good);
    decode_fails(good, 47, "header of 47 bytes, expected 48");
    memcpy(b, good, 48);
    decode_fails(b, 49, "header of 49 bytes");
    memcpy(b, good, 48);
    b[0] = 'X';
    decode_fails(b, 48, "without the TSKD magic");
    memcpy(b, good, 48);
    b[4] = 1;
    decode_fails(b, 48, "version 1, this host speaks 2");
    memcpy(b, good, 48);
    b[6] = 0x20;
    decode_fails(b, 48, "unknown flags 0x0020");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_SHM | TUSK_WIRE_EMPTY | TUSK_WIRE_COMPLETES;
    b[40] = b[41] = b[42] = b[43] = 0;
    decode_fails(b, 48, "an empty marker in shared memory");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_END_OF_RUN; /* with a payload size of 100 */
    decode_fails(b, 48, "an end-of-run or empty message with 100 bytes");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_EMPTY;
    decode_fails(b, 48, "an end-of-run or empty message with 100 bytes");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_END_OF_RUN | TUSK_WIRE_COMPLETES;
    b[40] = b[41] = b[42] = b[43] = 0;
    decode_fails(b, 48, "end of run combined with other flags");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_END_OF_RUN | TUSK_WIRE_EMPTY;
    b[40] = b[41] = b[42] = b[43] = 0;
    decode_fails(b, 48, "end of run combined with other flags");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_END_OF_RUN | TUSK_WIRE_RELEASE;
    b[40] = b[41] = b[42] = b[43] = 0;
    decode_fails(b, 48, "end of run combined with other flags");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_RELEASE; /* a release must be an empty marker */
    b[40] = b[41] = b[42] = b[43] = 0;
    decode_fails(b, 48, "a release that is not an empty marker, or also completes");
    memcpy(b, good, 48);
    b[6] = TUSK_WIRE_EMPTY | TUSK_WIRE_RELEASE | TUSK_WIRE_COMPLETES;
    b[40] = b[41] = b[42] = b[43] = 0;
    decode_fails(b, 48, "a release that is not an empty marker, or also completes");
    memcpy(b, good, 48);
    b[22] = 1;
    decode_fails(b, 48, "reserved fields are not zero");
    memcpy(b, good, 48);
    b[47] = 1;
    decode_fails(b, 48, "reserved fields are not zero");
}
END_TEST

/* A slot descriptor: its bytes, asserted field by field, and back. */
START_TEST(shm_descriptor_known_bytes)
{
    tusk_wire_shm_t d = {.pid = 0x01020304, .fd = 7, .slot = 9, .link = 63, .nonce = 0x1122334455667788ull}, back;
    uint8_t b[TUSK_WIRE_SHM_SIZE];
    tusk_wire_shm_encode(&d, b);
    static const uint8_t expect[TUSK_WIRE_SHM_SIZE] = {'T', 'S', 'H', 'M', 4, 3, 2, 1, 7, 0, 0, 0, 9, 0, 0, 0,
                                                        63, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44,
                                                        0x33, 0x22, 0x11};
    ck_assert_mem_eq(b, expect, sizeof b);
    tusk_error_t err;
    ck_assert_int_eq(tusk_wire_shm_decode(b, sizeof b, &back, &err), TUSK_OK);
    ck_assert_uint_eq(back.pid, d.pid);
    ck_assert_uint_eq(back.fd, d.fd);
    ck_assert_uint_eq(back.slot, d.slot);
    ck_assert_uint_eq(back.link, d.link);
    ck_assert_uint_eq(back.nonce, d.nonce);
}
END_TEST

static void shm_decode_fails(const uint8_t *b, size_t n, const char *needle)
{
    tusk_wire_shm_t d;
    tusk_error_t err;
    ck_assert_int_eq(tusk_wire_shm_decode(b, n, &d, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, needle);
}

START_TEST(shm_descriptor_rejections)
{
    tusk_wire_shm_t d = {.pid = 100, .fd = 3, .slot = 0, .link = 0, .nonce = 1};
    uint8_t good[TUSK_WIRE_SHM_SIZE], b[TUSK_WIRE_SHM_SIZE + 1];
    tusk_wire_shm_encode(&d, good);
    shm_decode_fails(good, 31, "descriptor of 31 bytes, expected 32");
    memcpy(b, good, 32);
    shm_decode_fails(b, 33, "descriptor of 33 bytes");
    memcpy(b, good, 32);
    b[3] = 'X';
    shm_decode_fails(b, 32, "without the TSHM magic");
    memcpy(b, good, 32);
    b[21] = 1;
    shm_decode_fails(b, 32, "reserved field is not zero");
    memcpy(b, good, 32);
    memset(b + 4, 0, 4);
    shm_decode_fails(b, 32, "pid 0, fd 3");
    memcpy(b, good, 32);
    b[7] = 0x80;
    shm_decode_fails(b, 32, "pid 2147483748, fd 3");
    memcpy(b, good, 32);
    b[11] = 0x80;
    shm_decode_fails(b, 32, "pid 100, fd 2147483651");
    memcpy(b, good, 32);
    b[16] = 64;
    shm_decode_fails(b, 32, "link 64 (at most 63)");
}
END_TEST

START_TEST(ctl_format_and_parse)
{
    tusk_ctl_t *m = tusk_ctl_new("REPLY");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(tusk_ctl_set(m, "to", "START"), TUSK_OK);
    ck_assert_int_eq(tusk_ctl_set(m, "message", "actor x: 100% = bad\nline two"), TUSK_OK);
    ck_assert_int_eq(tusk_ctl_set_u64(m, "sent:3:1", UINT64_MAX), TUSK_OK);
    ck_assert_int_eq(tusk_ctl_setf(m, "empty", "%s", ""), TUSK_OK);
    ck_assert_int_eq(tusk_ctl_set(m, "bad key", "v"), TUSK_EINVAL);
    size_t len;
    char *text = tusk_ctl_format(m, &len);
    ck_assert_str_eq(text, "REPLY to=START message=actor%20x:%20100%25%20%3D%20bad%0Aline%20two "
                           "sent:3:1=18446744073709551615 empty=");
    ck_assert_uint_eq(len, strlen(text));
    tusk_ctl_t *back;
    tusk_error_t err;
    ck_assert_int_eq(tusk_ctl_parse(&back, text, len, &err), TUSK_OK);
    ck_assert_str_eq(tusk_ctl_verb(back), "REPLY");
    ck_assert_uint_eq(tusk_ctl_count(back), 4);
    ck_assert_str_eq(tusk_ctl_get(back, "message"), "actor x: 100% = bad\nline two");
    ck_assert_str_eq(tusk_ctl_get(back, "empty"), "");
    ck_assert_ptr_null(tusk_ctl_get(back, "absent"));
    uint64_t v;
    ck_assert_int_eq(tusk_ctl_get_u64(back, "sent:3:1", 0, &v), TUSK_OK);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(tusk_ctl_get_u64(back, "absent", 7, &v), TUSK_OK);
    ck_assert_uint_eq(v, 7);
    ck_assert_int_eq(tusk_ctl_get_u64(back, "to", 7, &v), TUSK_EINVAL);
    ck_assert_str_eq(tusk_ctl_key(back, 0), "to");
    ck_assert_str_eq(tusk_ctl_value(back, 0), "START");
    ck_assert_ptr_null(tusk_ctl_key(back, 4));
    free(text);
    tusk_ctl_destroy(&back);
    tusk_ctl_destroy(&m);
    ck_assert_ptr_null(m);
    ck_assert_ptr_null(tusk_ctl_new("lower"));
    ck_assert_ptr_null(tusk_ctl_new(""));
}
END_TEST

START_TEST(ctl_round_trip_random)
{
    for (int i = 0; i < 3000; i++) {
        tusk_ctl_t *m = tusk_ctl_new("HEARTBEAT");
        unsigned n = tu_below(10);
        char keys[10][16], values[10][64];
        for (unsigned j = 0; j < n; j++) {
            snprintf(keys[j], sizeof keys[j], "k%u:%u", j, tu_below(100));
            size_t len = tu_below(63);
            for (size_t c = 0; c < len; c++)
                values[j][c] = (char)(1 + tu_below(255)); /* any byte but NUL */
            values[j][len] = '\0';
            tu_check(tusk_ctl_set(m, keys[j], values[j]) == TUSK_OK);
        }
        size_t len;
        char *text = tusk_ctl_format(m, &len);
        tu_check(text != NULL && strlen(text) == len);
        tusk_ctl_t *back = NULL;
        tusk_error_t err;
        tu_check(tusk_ctl_parse(&back, text, len, &err) == TUSK_OK);
        tu_check(tusk_ctl_count(back) == n);
        for (unsigned j = 0; j < n; j++) {
            tu_check(strcmp(tusk_ctl_key(back, j), keys[j]) == 0);
            tu_check(strcmp(tusk_ctl_value(back, j), values[j]) == 0);
        }
        free(text);
        tusk_ctl_destroy(&back);
        tusk_ctl_destroy(&m);
    }
}
END_TEST

static void parse_fails(const char *text, const char *needle)
{
    tusk_ctl_t *m = (tusk_ctl_t *)1;
    tusk_error_t err;
    ck_assert_int_eq(tusk_ctl_parse(&m, text, strlen(text), &err), TUSK_EINVAL);
    ck_assert_ptr_null(m);
    tu_assert_error(&err, TUSK_EINVAL, needle);
}

START_TEST(ctl_malformed)
{
    parse_fails("", "bad verb ''");
    parse_fails("start run=1", "bad verb 'start'");
    parse_fails("START  run=1", "bad field ''");
    parse_fails("START run", "bad field 'run'");
    parse_fails("START =1", "bad field '=1'");
    parse_fails("START run=1 ", "bad field ''");
    parse_fails("START run=%4", "bad escape");
    parse_fails("START run=%zz", "bad escape");
    parse_fails("START run=%00", "bad escape");
    parse_fails("START run=a=b", "unescaped byte 0x3D");
    parse_fails("START run=a\tb", "unescaped byte 0x09");
    tusk_ctl_t *m;
    tusk_error_t err;
    ck_assert_int_eq(tusk_ctl_parse(&m, "PING", 4, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_ctl_count(m), 0);
    tusk_ctl_destroy(&m);
}
END_TEST

START_TEST(ctl_random_text_never_crashes)
{
    static const char alphabet[] = "ABZ_az09:.-= %2F\t\n";
    for (int i = 0; i < 30000; i++) {
        size_t n = tu_below(80);
        char *text = malloc(n ? n : 1);
        for (size_t j = 0; j < n; j++)
            text[j] = tu_below(5) ? alphabet[tu_below(sizeof alphabet - 1)] : (char)tu_rand();
        tusk_ctl_t *m = NULL;
        tusk_error_t err;
        int rc = tusk_ctl_parse(&m, text, n, &err);
        tu_check((rc == TUSK_OK && m) || (rc == TUSK_EINVAL && !m && err.message[0]));
        tusk_ctl_destroy(&m);
        free(text);
    }
}
END_TEST


/* ---- secrets and certificates ------------------------------------------------ */

static const char z85[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/* A random valid key: 8 groups, each a value below 2^32 in base 85. */
static void random_key(char out[TUSK_KEY_CHARS + 1])
{
    for (int g = 0; g < 8; g++) {
        uint32_t v = (uint32_t)tu_rand();
        for (int i = 4; i >= 0; i--) {
            out[g * 5 + i] = z85[v % 85];
            v /= 85;
        }
    }
    out[TUSK_KEY_CHARS] = '\0';
}

START_TEST(keys_checked)
{
    char key[TUSK_KEY_CHARS + 1];
    memset(key, '0', TUSK_KEY_CHARS);
    key[TUSK_KEY_CHARS] = '\0';
    ck_assert(tusk_key_valid(key, TUSK_KEY_CHARS));
    memcpy(key + 35, "%nSc0", 5); /* 2^32 - 1: the largest group */
    ck_assert(tusk_key_valid(key, TUSK_KEY_CHARS));
    memcpy(key + 35, "%nSc1", 5); /* 2^32: does not fit four bytes */
    ck_assert(!tusk_key_valid(key, TUSK_KEY_CHARS));
    memcpy(key + 35, "0000 ", 5);
    ck_assert(!tusk_key_valid(key, TUSK_KEY_CHARS));
    memcpy(key + 35, "0000\"", 5);
    ck_assert(!tusk_key_valid(key, TUSK_KEY_CHARS));
    ck_assert(!tusk_key_valid(key, 39));
    ck_assert(!tusk_key_valid("", 0));
    for (int i = 0; i < 1000; i++) {
        random_key(key);
        tu_check(tusk_key_valid(key, TUSK_KEY_CHARS));
    }
}
END_TEST

START_TEST(secrets_format_and_parse)
{
    tusk_secrets_t s = {.curve = 1};
    memset(s.public_key, 'a', TUSK_KEY_CHARS);
    memset(s.secret_key, 'b', TUSK_KEY_CHARS);
    memset(s.server_key, 'a', TUSK_KEY_CHARS);
    snprintf(s.token, sizeof s.token, "0123456789abcdef");
    size_t len;
    char *text = tusk_secrets_format(&s, &len);
    ck_assert_str_eq(text, "tusk-secrets 1\nsecurity curve\n"
                           "public-key aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
                           "secret-key bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n"
                           "server-key aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
                           "token 0123456789abcdef\n");
    ck_assert_uint_eq(len, strlen(text));
    tusk_secrets_t back;
    tusk_error_t err;
    ck_assert_int_eq(tusk_secrets_parse(text, len, &back, &err), TUSK_OK);
    ck_assert_int_eq(memcmp(&back, &s, sizeof s), 0);
    free(text);
    /* Configured keys: where the certificates are, no key. */
    static const char certs[] = "tusk-secrets 1\nsecurity curve\ncerts /etc/tusk certs\ncert 10.0.0.1\n"
                                "server-cert controller\n";
    ck_assert_int_eq(tusk_secrets_parse(certs, strlen(certs), &back, &err), TUSK_OK);
    ck_assert_str_eq(back.certs, "/etc/tusk certs");
    ck_assert_str_eq(back.cert, "10.0.0.1");
    ck_assert_str_eq(back.server_cert, "controller");
    ck_assert_str_eq(back.token, "");
    static const char none[] = "tusk-secrets 1\nsecurity none\ntoken ff\n";
    ck_assert_int_eq(tusk_secrets_parse(none, strlen(none), &back, &err), TUSK_OK);
    ck_assert_int_eq(back.curve, 0);
    ck_assert_str_eq(back.token, "ff");
}
END_TEST

START_TEST(secrets_round_trip_random)
{
    for (int i = 0; i < 2000; i++) {
        tusk_secrets_t s;
        memset(&s, 0, sizeof s);
        s.curve = (int)tu_below(2);
        if (s.curve && tu_below(2)) {
            random_key(s.public_key);
            random_key(s.secret_key);
            random_key(s.server_key);
        } else if (s.curve) {
            size_t n = 1 + tu_below(60);
            s.certs[0] = '/';
            for (size_t c = 1; c < n; c++)
                s.certs[c] = (char)(' ' + tu_below(95)); /* any printable, spaces too */
            snprintf(s.cert, sizeof s.cert, "host-%u.example", tu_below(1000));
            snprintf(s.server_cert, sizeof s.server_cert, "ctl_%u", tu_below(1000));
        }
        if (tu_below(2))
            for (unsigned c = 0, n = 1 + tu_below(64); c < n; c++)
                s.token[c] = "0123456789abcdef"[tu_below(16)];
        size_t len;
        char *text = tusk_secrets_format(&s, &len);
        tusk_secrets_t back;
        tusk_error_t err;
        tu_check(text && tusk_secrets_parse(text, len, &back, &err) == TUSK_OK);
        tu_check(memcmp(&back, &s, sizeof s) == 0);
        free(text);
    }
}
END_TEST

static void secrets_fail(const char *text, const char *needle)
{
    tusk_secrets_t s;
    tusk_error_t err;
    ck_assert_int_eq(tusk_secrets_parse(text, strlen(text), &s, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, needle);
}

START_TEST(secrets_malformed)
{
    const char *k = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    char text[512];
    secrets_fail("", "empty");
    secrets_fail("tusk-secrets 2\n", "line 1: expected 'tusk-secrets 1'");
    secrets_fail("tusk-secrets 1\n", "no 'security' line");
    secrets_fail("tusk-secrets 1\nsecurity maybe\n", "line 2: bad security");
    secrets_fail("tusk-secrets 1\nsecurity none\nsecurity none\n", "line 3: security given twice");
    secrets_fail("tusk-secrets 1\nsecurity none\npassword x\n", "line 3: unknown key 'password'");
    secrets_fail("tusk-secrets 1\nsecurity none\ntoken\n", "line 3: expected 'KEY VALUE'");
    secrets_fail("tusk-secrets 1\nsecurity none\ntoken 0A\n", "line 3: bad token");
    secrets_fail("tusk-secrets 1\nsecurity curve\n", "'security curve' needs");
    snprintf(text, sizeof text, "tusk-secrets 1\nsecurity none\npublic-key %s\n", k);
    secrets_fail(text, "keys with 'security none'");
    snprintf(text, sizeof text, "tusk-secrets 1\nsecurity curve\npublic-key %s\nsecret-key %.39s\n", k, k);
    secrets_fail(text, "line 4: bad secret-key");
    snprintf(text, sizeof text, "tusk-secrets 1\nsecurity curve\npublic-key %s\nsecret-key %s\nserver-key %s\n"
                                "certs /c\ncert a\nserver-cert b\n", k, k, k);
    secrets_fail(text, "both a key pair and a certificate folder");
    secrets_fail("tusk-secrets 1\nsecurity curve\ncerts relative\n", "line 3: bad certs");
    secrets_fail("tusk-secrets 1\nsecurity curve\ncerts /c\ncert ../x\n", "line 4: bad cert");
    secrets_fail("tusk-secrets 1\nsecurity curve\ncerts /c\ncert x\n", "certs needs cert and server-cert");
    char big[TUSK_SECRETS_MAX + 2];
    memset(big, '\n', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    secrets_fail(big, "more than the");
}
END_TEST

START_TEST(cert_format_and_parse)
{
    tusk_cert_t c = {.name = "controller"};
    memset(c.public_key, 'P', TUSK_KEY_CHARS);
    memset(c.secret_key, 'S', TUSK_KEY_CHARS);
    size_t len;
    char *text = tusk_cert_format(&c, 1, &len);
    ck_assert_msg(strstr(text, "metadata\n    name = \"controller\"\ncurve\n    public-key = \""
                               "PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP\"\n    secret-key = \""
                               "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSS\"\n"),
                  "%s", text);
    tusk_cert_t back;
    tusk_error_t err;
    ck_assert_int_eq(tusk_cert_parse(text, len, &back, &err), TUSK_OK);
    ck_assert_int_eq(memcmp(&back, &c, sizeof c), 0);
    free(text);
    text = tusk_cert_format(&c, 0, &len);
    ck_assert_ptr_null(strstr(text, "secret-key"));
    ck_assert_int_eq(tusk_cert_parse(text, len, &back, &err), TUSK_OK);
    ck_assert_str_eq(back.secret_key, "");
    ck_assert_str_eq(back.public_key, c.public_key);
    free(text);
    /* What czmq's zcert writes parses too: comments, other metadata, tabs,
     * carriage returns. */
    static const char zcert[] = "#   ****  Generated on 2026-01-01 by CZMQ  ****\r\n"
                                "#   ZeroMQ CURVE Public Certificate\n"
                                "\n"
                                "metadata\n"
                                "    email = \"someone@example.org\"\n"
                                "\tname = \"host-1\"\r\n"
                                "curve\n"
                                "    public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n";
    ck_assert_int_eq(tusk_cert_parse(zcert, strlen(zcert), &back, &err), TUSK_OK);
    ck_assert_str_eq(back.name, "host-1");
    ck_assert_str_eq(back.public_key, "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7");
}
END_TEST

static void cert_fails(const char *text, const char *needle)
{
    tusk_cert_t c;
    tusk_error_t err;
    ck_assert_int_eq(tusk_cert_parse(text, strlen(text), &c, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, needle);
}

START_TEST(cert_malformed)
{
    cert_fails("", "no curve public-key");
    cert_fails("metadata\n    name = \"x\"\n", "no curve public-key");
    cert_fails("curve\n    public-key = \"short\"\n", "line 2: bad public-key");
    cert_fails("curve\n    public-key\n", "line 2: expected 'name = \"value\"'");
    cert_fails("curve = 1\n", "line 1: expected a section name");
    cert_fails("curve\n    public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n"
               "    public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n",
               "line 3: public-key given twice");
    cert_fails("metadata\n    name = \"../etc\"\n", "line 2: bad name");
}
END_TEST

START_TEST(cert_round_trip_random)
{
    for (int i = 0; i < 2000; i++) {
        tusk_cert_t c;
        memset(&c, 0, sizeof c);
        if (tu_below(2))
            snprintf(c.name, sizeof c.name, "h%u.x-%u", tu_below(1000), tu_below(1000));
        random_key(c.public_key);
        int with_secret = (int)tu_below(2);
        if (with_secret)
            random_key(c.secret_key);
        size_t len;
        char *text = tusk_cert_format(&c, with_secret, &len);
        tusk_cert_t back;
        tusk_error_t err;
        tu_check(text && tusk_cert_parse(text, len, &back, &err) == TUSK_OK);
        tu_check(memcmp(&back, &c, sizeof c) == 0);
        free(text);
    }
}
END_TEST

START_TEST(secrets_and_certs_random_text_never_crash)
{
    static const char *const words[] = {"tusk-secrets 1\n", "security curve\n", "security none\n", "token ab\n",
                                        "public-key ", "curve\n", "    public-key = \"", "metadata\n",
                                        "    name = ", "\"\n", "#", " ", "\n", "=", "\t"};
    for (int i = 0; i < 20000; i++) {
        char text[512];
        size_t n = 0;
        while (n < 400 && tu_below(12)) {
            if (tu_below(3)) {
                const char *w = words[tu_below(sizeof words / sizeof words[0])];
                size_t l = strlen(w);
                memcpy(text + n, w, l);
                n += l;
            } else {
                text[n++] = tu_below(2) ? z85[tu_below(85)] : (char)tu_rand();
            }
        }
        tusk_secrets_t s;
        tusk_cert_t c;
        tusk_error_t err;
        int rc = tusk_secrets_parse(text, n, &s, &err);
        tu_check(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0]));
        rc = tusk_cert_parse(text, n, &c, &err);
        tu_check(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0]));
        if (rc == TUSK_OK)
            tu_check(tusk_key_valid(c.public_key, strlen(c.public_key)));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("header");
    tcase_add_test(tc, header_known_bytes);
    tcase_add_test(tc, header_round_trip_random);
    tcase_add_test(tc, header_rejections);
    tcase_add_test(tc, shm_descriptor_known_bytes);
    tcase_add_test(tc, shm_descriptor_rejections);
    suite_add_tcase(s, tc);
    tc = tcase_create("control");
    tcase_add_test(tc, ctl_format_and_parse);
    tcase_add_test(tc, ctl_round_trip_random);
    tcase_add_test(tc, ctl_malformed);
    tcase_add_test(tc, ctl_random_text_never_crashes);
    suite_add_tcase(s, tc);
    tc = tcase_create("secrets");
    tcase_add_test(tc, keys_checked);
    tcase_add_test(tc, secrets_format_and_parse);
    tcase_add_test(tc, secrets_round_trip_random);
    tcase_add_test(tc, secrets_malformed);
    tcase_add_test(tc, cert_format_and_parse);
    tcase_add_test(tc, cert_malformed);
    tcase_add_test(tc, cert_round_trip_random);
    tcase_add_test(tc, secrets_and_certs_random_text_never_crash);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
