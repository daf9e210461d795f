/* check_params.c - actor parameters: parameters.conf parsing (comments,
 * spaces, errors with file:line), typed access with errors naming the key,
 * unknown-key detection, save/load round trips, random text robustness. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tusk/params.h"

static tusk_params_t *parse_ok(const char *text)
{
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    int rc = tusk_params_parse(p, text, strlen(text), "test.conf", &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    return p;
}

static void parse_fails(const char *text, const char *needle)
{
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    ck_assert_int_eq(tusk_params_parse(p, text, strlen(text), "test.conf", &err), TUSK_EPARAM);
    ck_assert_msg(strstr(err.message, needle) != NULL, "'%s' lacks '%s'", err.message, needle);
    tusk_params_destroy(&p);
}

START_TEST(parse_format)
{
    tusk_params_t *p = parse_ok("# a comment\n"
                                "\n"
                                "file = /data/run 42.adf  \n"
                                "  repeat=3\n"
                                "\tempty =\n"
                                "mode = a = b\r\n"
                                "last.key-x_1 = tail");
    ck_assert_uint_eq(tusk_params_count(p), 5);
    ck_assert_str_eq(tusk_params_get(p, "file"), "/data/run 42.adf");
    ck_assert_str_eq(tusk_params_get(p, "repeat"), "3");
    ck_assert_str_eq(tusk_params_get(p, "empty"), "");
    ck_assert_str_eq(tusk_params_get(p, "mode"), "a = b");
    ck_assert_str_eq(tusk_params_get(p, "last.key-x_1"), "tail");
    ck_assert_ptr_null(tusk_params_get(p, "missing"));
    ck_assert_str_eq(tusk_params_string(p, "missing", "dflt"), "dflt");
    ck_assert_str_eq(tusk_params_key(p, 0), "file");
    ck_assert_str_eq(tusk_params_value(p, 1), "3");
    ck_assert_ptr_null(tusk_params_key(p, 5));
    tusk_params_destroy(&p);
    ck_assert_ptr_null(p);
}
END_TEST

START_TEST(parse_later_value_wins)
{
    tusk_params_t *p = parse_ok("a = 1\nb = 2\na = 3\n");
    ck_assert_uint_eq(tusk_params_count(p), 2);
    ck_assert_str_eq(tusk_params_get(p, "a"), "3");
    tusk_params_destroy(&p);
}
END_TEST

START_TEST(parse_errors_name_line)
{
    parse_fails("a = 1\nno equals sign\n", "test.conf:2: expected 'key = value'");
    parse_fails("a = 1\n\n\nbad key! = 2\n", "test.conf:4: bad parameter name 'bad key!'");
    parse_fails(" = value\n", "test.conf:1: bad parameter name ''");
    char nul[] = "a = 1\nb = x\0y\n";
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    ck_assert_int_eq(tusk_params_parse(p, nul, sizeof nul - 1, "test.conf", &err), TUSK_EPARAM);
    ck_assert_msg(strstr(err.message, "test.conf:2: NUL byte") != NULL, "%s", err.message);
    tusk_params_destroy(&p);
}
END_TEST

START_TEST(set_validates)
{
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    ck_assert_int_eq(tusk_params_set(p, "ok", "v", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "has space", "v", &err), TUSK_EPARAM);
    ck_assert_msg(strstr(err.message, "'has space'") != NULL, "%s", err.message);
    ck_assert_int_eq(tusk_params_set(p, "k", "two\nlines", &err), TUSK_EPARAM);
    ck_assert_msg(strstr(err.message, "single line") != NULL, "%s", err.message);
    ck_assert_int_eq(tusk_params_set(p, "", "v", &err), TUSK_EPARAM);
    ck_assert_uint_eq(tusk_params_count(p), 1);
    tusk_params_destroy(&p);
}
END_TEST

START_TEST(typed_access)
{
    tusk_params_t *p = parse_ok("n = 42\nhex = 0x10\nneg = -1\nbig = 99999999999999999999\nf = 2.5e-3\n"
                                "nan = nan\nyes = Yes\noff = off\nword = maybe\nspace = \n");
    tusk_error_t err;
    uint64_t u;
    ck_assert_int_eq(tusk_params_u64(p, "n", 7, &u, &err), TUSK_OK);
    ck_assert_uint_eq(u, 42);
    ck_assert_int_eq(tusk_params_u64(p, "hex", 7, &u, &err), TUSK_OK);
    ck_assert_uint_eq(u, 16);
    ck_assert_int_eq(tusk_params_u64(p, "absent", 7, &u, &err), TUSK_OK);
    ck_assert_uint_eq(u, 7);
    ck_assert_int_eq(tusk_params_u64(p, "neg", 7, &u, &err), TUSK_EPARAM);
    ck_assert_str_eq(err.message, "parameter 'neg': '-1' is not an unsigned integer");
    ck_assert_int_eq(tusk_params_u64(p, "big", 7, &u, &err), TUSK_EPARAM);
    ck_assert_int_eq(tusk_params_u64(p, "f", 7, &u, &err), TUSK_EPARAM);
    ck_assert_int_eq(tusk_params_u64(p, "space", 7, &u, &err), TUSK_EPARAM);
    double d;
    ck_assert_int_eq(tusk_params_double(p, "f", 1.0, &d, &err), TUSK_OK);
    ck_assert_double_eq(d, 2.5e-3);
    ck_assert_int_eq(tusk_params_double(p, "nan", 1.0, &d, &err), TUSK_EPARAM);
    ck_assert_msg(strstr(err.message, "'nan'") != NULL, "%s", err.message);
    ck_assert_int_eq(tusk_params_double(p, "word", 1.0, &d, &err), TUSK_EPARAM);
    bool b;
    ck_assert_int_eq(tusk_params_bool(p, "yes", false, &b, &err), TUSK_OK);
    ck_assert(b);
    ck_assert_int_eq(tusk_params_bool(p, "off", true, &b, &err), TUSK_OK);
    ck_assert(!b);
    ck_assert_int_eq(tusk_params_bool(p, "absent", true, &b, &err), TUSK_OK);
    ck_assert(b);
    ck_assert_int_eq(tusk_params_bool(p, "word", true, &b, &err), TUSK_EPARAM);
    ck_assert_msg(strstr(err.message, "parameter 'word': 'maybe' is not a boolean") != NULL, "%s", err.message);
    tusk_params_destroy(&p);
}
END_TEST

START_TEST(expect_catches_typos)
{
    static const char *const known[] = {"file", "repeat", NULL};
    tusk_params_t *p = parse_ok("file = x\nactor = reader\ninstance = 0\ninstances = 1\n");
    tusk_error_t err;
    ck_assert_int_eq(tusk_params_expect(p, known, &err), TUSK_OK);
    tusk_params_set(p, "repaet", "2", &err);
    ck_assert_int_eq(tusk_params_expect(p, known, &err), TUSK_EPARAM);
    ck_assert_str_eq(err.message, "unknown parameter 'repaet' (known: file, repeat)");
    tusk_params_destroy(&p);
}
END_TEST

START_TEST(expect_prefix_families)
{
    static const char *const known[] = {"file", "define.*", NULL};
    tusk_params_t *p = parse_ok("file = x\ndefine.NSEG = 36\ndefine.x = 1\n");
    tusk_error_t err;
    ck_assert_int_eq(tusk_params_expect(p, known, &err), TUSK_OK);
    tusk_params_set(p, "define.", "2", &err); /* the prefix alone is no member */
    ck_assert_int_eq(tusk_params_expect(p, known, &err), TUSK_EPARAM);
    ck_assert_str_eq(err.message, "unknown parameter 'define.' (known: file, define.*)");
    tusk_params_destroy(&p);
    p = parse_ok("defines.X = 1\n");
    ck_assert_int_eq(tusk_params_expect(p, known, &err), TUSK_EPARAM);
    tusk_params_destroy(&p);
}
END_TEST

START_TEST(save_load_round_trip)
{
    char *path = tu_temp_path();
    unlink(path);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    for (int i = 0; i < 50; i++) {
        char k[32], v[64];
        snprintf(k, sizeof k, "key_%d", i);
        snprintf(v, sizeof v, "  value %d = # not a comment  ", i);
        ck_assert_int_eq(tusk_params_set(p, k, v, &err), TUSK_OK);
    }
    ck_assert_int_eq(tusk_params_save(p, path, &err), TUSK_OK);
    tusk_params_t *q = NULL;
    ck_assert_int_eq(tusk_params_load(&q, path, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_params_count(q), 50);
    for (int i = 0; i < 50; i++) {
        char v[64];
        snprintf(v, sizeof v, "value %d = # not a comment", i);
        /* Spaces around a value are not kept (documented). */
        ck_assert_str_eq(tusk_params_value(q, (size_t)i), v);
    }
    tusk_params_destroy(&q);
    tusk_params_destroy(&p);

    /* No file: no parameters. A broken file: the error names file:line. */
    char file[4200];
    snprintf(file, sizeof file, "%s/%s", path, TUSK_PARAMS_FILE);
    unlink(file);
    ck_assert_int_eq(tusk_params_load(&q, path, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_params_count(q), 0);
    tusk_params_destroy(&q);
    FILE *fp = fopen(file, "w");
    fputs("good = 1\nbroken\n", fp);
    fclose(fp);
    ck_assert_int_eq(tusk_params_load(&q, path, &err), TUSK_EPARAM);
    ck_assert_ptr_null(q);
    char want[4300];
    snprintf(want, sizeof want, "%s:2: expected", file);
    ck_assert_msg(strstr(err.message, want) != NULL, "'%s' lacks '%s'", err.message, want);
    unlink(file);
    rmdir(path);
    free(path);
}
END_TEST

START_TEST(load_errors)
{
    tusk_params_t *q = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_params_save(q = tusk_params_new(), "/nonexistent/dir", &err), TUSK_EIO);
    ck_assert_msg(strstr(err.message, "/nonexistent/dir/parameters.conf: cannot create") != NULL, "%s",
                  err.message);
    tusk_params_destroy(&q);
    /* A folder where the file should be. */
    char *path = tu_temp_path();
    unlink(path);
    mkdir(path, 0700);
    char file[4200];
    snprintf(file, sizeof file, "%s/%s", path, TUSK_PARAMS_FILE);
    mkdir(file, 0700);
    ck_assert_int_ne(tusk_params_load(&q, path, &err), TUSK_OK);
    ck_assert_ptr_null(q);
    ck_assert_msg(strstr(err.message, file) != NULL, "%s", err.message);
    rmdir(file);
    rmdir(path);
    free(path);
}
END_TEST

START_TEST(random_text_never_crashes)
{
    static const char alphabet[] = "ab=# \t\n\r.-_\x01\xff" "0";
    for (int i = 0; i < 20000; i++) {
        size_t n = tu_below(200);
        char *text = malloc(n ? n : 1);
        for (size_t j = 0; j < n; j++)
            text[j] = tu_below(4) ? alphabet[tu_below(sizeof alphabet - 1)] : (char)tu_rand();
        tusk_params_t *p = tusk_params_new();
        tusk_error_t err;
        int rc = tusk_params_parse(p, text, n, "fuzz", &err);
        tu_check(rc == TUSK_OK || (rc == TUSK_EPARAM && strncmp(err.message, "fuzz:", 5) == 0));
        for (size_t k = 0; k < tusk_params_count(p); k++)
            tu_check(strchr(tusk_params_value(p, k), '\n') == NULL);
        tusk_params_destroy(&p);
        free(text);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, parse_format);
    tcase_add_test(tc, parse_later_value_wins);
    tcase_add_test(tc, parse_errors_name_line);
    tcase_add_test(tc, set_validates);
    tcase_add_test(tc, random_text_never_crashes);
    suite_add_tcase(s, tc);
    tc = tcase_create("access");
    tcase_add_test(tc, typed_access);
    tcase_add_test(tc, expect_catches_typos);
    tcase_add_test(tc, expect_prefix_families);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_test(tc, save_load_round_trip);
    tcase_add_test(tc, load_errors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
