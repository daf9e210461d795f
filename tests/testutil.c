/* testutil.c - see testutil.h. */
#include "testutil.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/bytes.h"

static uint64_t tu_state;
static uint64_t tu_seed_value;
static int tu_seeded;

uint64_t tu_seed(void)
{
    if (!tu_seeded) {
        const char *env = getenv("TUSK_TEST_SEED");
        if (env && *env) {
            tu_seed_value = strtoull(env, NULL, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            tu_seed_value = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        }
        tu_state = tu_seed_value;
        tu_seeded = 1;
        fprintf(stderr, "random seed: TUSK_TEST_SEED=%" PRIu64 "\n", tu_seed_value);
    }
    return tu_seed_value;
}

uint64_t tu_rand(void)
{
    tu_seed();
    uint64_t z = (tu_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint32_t tu_below(uint32_t n)
{
    return (uint32_t)(tu_rand() % n);
}

double tu_uniform(void)
{
    return (double)(tu_rand() >> 11) * (1.0 / 9007199254740992.0);
}

void tu_fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)tu_rand();
}

float tu_any_float(void)
{
    uint32_t u = (uint32_t)tu_rand();
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

size_t tu_put_frame(uint8_t *buf, uint32_t type, uint32_t event, uint64_t ts, const void *payload,
                    size_t payload_size)
{
    size_t len = ADF_KEY_SIZE + payload_size;
    tusk_put_u32(buf, (uint32_t)len);
    tusk_put_u32(buf + 4, type);
    tusk_put_u32(buf + 8, event);
    tusk_put_u64(buf + 12, ts);
    if (payload_size)
        memcpy(buf + ADF_KEY_SIZE, payload, payload_size);
    return len;
}

static const uint32_t tu_simple_types[] = {ADF_TYPE_DATA_CRYSTAL, ADF_TYPE_DATA_PSA, ADF_TYPE_DATA_TRACKED,
                                           ADF_TYPE_META_EOF, 0xFA7F0301u};

size_t tu_make_frames(uint8_t *buf, size_t cap, unsigned n, size_t max_payload, size_t *offsets,
                      adf_key_t *keys)
{
    size_t pos = 0;
    for (unsigned i = 0; i < n; i++) {
        adf_key_t k = {.event = (uint32_t)tu_rand(), .timestamp = tu_rand() & ADF_TIMESTAMP_MAX};
        size_t start = pos;
        if (tu_below(4) == 0) {
            /* A composite holding 0-3 simple frames. */
            k.type = ADF_TYPE_EVENT_DATA_PSA;
            pos += ADF_KEY_SIZE;
            unsigned m = tu_below(4);
            for (unsigned j = 0; j < m; j++) {
                size_t sz = tu_below((uint32_t)(max_payload / 4 + 1));
                ck_assert_uint_le(pos + ADF_KEY_SIZE + sz, cap);
                uint8_t tmp[4096];
                ck_assert_uint_le(sz, sizeof tmp);
                tu_fill(tmp, sz);
                pos += tu_put_frame(buf + pos, ADF_TYPE_DATA_PSA, k.event, k.timestamp, tmp, sz);
            }
            tu_put_frame(buf + start, k.type, k.event, k.timestamp, NULL, 0);
            tusk_put_u32(buf + start, (uint32_t)(pos - start));
        } else {
            k.type = tu_simple_types[tu_below(sizeof tu_simple_types / sizeof tu_simple_types[0])];
            size_t sz = tu_below((uint32_t)max_payload + 1);
            ck_assert_uint_le(pos + ADF_KEY_SIZE + sz, cap);
            uint8_t tmp[4096];
            ck_assert_uint_le(sz, sizeof tmp);
            tu_fill(tmp, sz);
            pos += tu_put_frame(buf + pos, k.type, k.event, k.timestamp, tmp, sz);
        }
        k.length = (uint32_t)(pos - start);
        if (offsets)
            offsets[i] = start;
        if (keys)
            keys[i] = k;
    }
    return pos;
}

char *tu_temp_path(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    ck_assert_ptr_nonnull(path);
    snprintf(path, n, "%s/tusk-test-XXXXXX", dir);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return path;
}

void tu_make_dir(char *dir, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    ck_assert_int_lt(snprintf(dir, size, "%s/tusk-test-XXXXXX", tmp), (int)size);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

void tu_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        ck_assert_int_eq(unlink(p), 0);
    }
    closedir(d);
    ck_assert_int_eq(rmdir(dir), 0);
}

void tu_assert_error_at(int code, const char *message, int expect_code, const char *needle, const char *file,
                        int line)
{
    if (code != expect_code)
        ck_abort_msg("%s:%d: error code %d, expected %d (%s)", file, line, code, expect_code, message);
    if (message[0] == '\0' || strstr(message, needle) == NULL)
        ck_abort_msg("%s:%d: message '%s' lacks '%s'", file, line, message, needle);
}

int tu_run(Suite *s)
{
    tu_seed();
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

const char *tu_source_dir(const char *probe)
{
    static char srcdir[4096];
    const char *candidates[] = {getenv("abs_top_srcdir"), getenv("top_srcdir"), "..", "."};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (!candidates[i] || !*candidates[i])
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", candidates[i], probe);
        if (access(path, R_OK) == 0) {
            snprintf(srcdir, sizeof srcdir, "%s", candidates[i]);
            return srcdir;
        }
    }
    ck_abort_msg("%s not found: set abs_top_srcdir", probe);
    return NULL;
}
