/* check_actor_host.c - loading actor libraries and calling their hooks:
 * every load failure (missing file, not a library, ABI mismatch, missing
 * hook) and every hook failure is reported with the exact message a user
 * sees; plain NARVAL libraries load and run; instance configuration
 * folders hold the topology's parameters, or are the actor's own
 * (<config_dir>) and get nothing written; the note a host's crash
 * handler reads names the instance, hook and buffer inside every hook, as
 * a signal handler sees it; changeable parameters (the keys an actor
 * declares, process_update applied and refused). Uses the test actors in
 * tests/actors/ (TUSK_TEST_ACTOR_PATH). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tusk/actor_host.h"
#include "tusk/params.h"

static char *test_actor(const char *name)
{
    const char *dir = getenv("TUSK_TEST_ACTOR_PATH");
    if (!dir)
        dir = "tests/actors/.libs";
    size_t n = strlen(dir) + strlen(name) + 8;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s.so", dir, name);
    return path;
}

/* A fresh configuration folder with the given parameters.conf text. */
static char *config_dir(const char *conf)
{
    char *dir = tu_temp_path();
    unlink(dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    char file[4200];
    snprintf(file, sizeof file, "%s/parameters.conf", dir);
    FILE *fp = fopen(file, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(conf, fp);
    fclose(fp);
    return dir;
}

static void remove_config_dir(char *dir)
{
    char file[4200];
    snprintf(file, sizeof file, "%s/parameters.conf", dir);
    unlink(file);
    rmdir(dir);
    free(dir);
}

static void assert_message(const tusk_error_t *err, int code, const char *want)
{
    ck_assert_msg(err->code == code, "code %d, expected %d: %s", err->code, code, err->message);
    ck_assert_msg(strcmp(err->message, want) == 0, "message\n  '%s'\nexpected\n  '%s'", err->message, want);
}

START_TEST(missing_library)
{
    tusk_actor_lib_t *lib = (tusk_actor_lib_t *)1;
    tusk_error_t err;
    ck_assert_int_eq(tusk_actor_lib_open(&lib, "/nonexistent/libnothing.so", TUSK_FILTER, &err), TUSK_ELOAD);
    ck_assert_ptr_null(lib);
    ck_assert_msg(strstr(err.message, "cannot load actor library /nonexistent/libnothing.so: ") == err.message,
                  "%s", err.message);
    /* dlerror()'s own words follow. */
    ck_assert_msg(strstr(err.message, "No such file") != NULL, "%s", err.message);
}
END_TEST

START_TEST(not_a_library)
{
    char *path = tu_temp_path();
    FILE *fp = fopen(path, "w");
    fputs("this is not an ELF file\n", fp);
    fclose(fp);
    tusk_actor_lib_t *lib;
    tusk_error_t err;
    ck_assert_int_eq(tusk_actor_lib_open(&lib, path, TUSK_FILTER, &err), TUSK_ELOAD);
    ck_assert_msg(strstr(err.message, path) != NULL, "%s", err.message);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(abi_mismatch_refused)
{
    char *path = test_actor("abi_mismatch");
    tusk_actor_lib_t *lib;
    tusk_error_t err;
    ck_assert_int_eq(tusk_actor_lib_open(&lib, path, TUSK_FILTER, &err), TUSK_EABI);
    char want[1024];
    snprintf(want, sizeof want,
             "actor library %s was built for tusk actor ABI version 99, this host speaks version 1: rebuild it "
             "against this tusk's actor.h",
             path);
    assert_message(&err, TUSK_EABI, want);
    free(path);
}
END_TEST

START_TEST(missing_hook_refused)
{
    char *path = test_actor("no_block");
    tusk_actor_lib_t *lib;
    tusk_error_t err;
    ck_assert_int_eq(tusk_actor_lib_open(&lib, path, TUSK_PRODUCER, &err), TUSK_ELOAD);
    char want[1024];
    snprintf(want, sizeof want, "actor library %s lacks the required hook process_block", path);
    assert_message(&err, TUSK_ELOAD, want);
    ck_assert_int_eq(tusk_actor_lib_open(&lib, path, TUSK_FILTER, &err), TUSK_ELOAD);
    ck_assert_msg(strstr(err.message, "process_block (or process_block_input)") != NULL, "%s", err.message);
    free(path);
}
END_TEST

/* A library written for NARVAL's C interface runs unchanged. */
START_TEST(narval_library_runs)
{
    char *path = test_actor("narval_plain");
    tusk_actor_lib_t *lib;
    tusk_error_t err;
    ck_assert_msg(tusk_actor_lib_open(&lib, path, TUSK_FILTER, &err) == TUSK_OK, "%s", err.message);
    ck_assert_ptr_null(tusk_actor_lib_descriptor(lib));
    ck_assert_str_eq(tusk_actor_lib_path(lib), path);
    char *dir = config_dir("");
    tusk_actor_t *a;
    ck_assert_msg(tusk_actor_new(&a, lib, "narval", 0, dir, &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(tusk_actor_label(a), "narval[0]");
    ck_assert_int_eq(tusk_actor_initialise(a, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_start(a, &err), TUSK_OK);
    uint8_t in[100], out[128];
    tu_fill(in, sizeof in);
    uint32_t used = 0;
    tusk_flow_t flow;
    ck_assert_int_eq(tusk_actor_filter(a, 0, in, sizeof in, out, sizeof out, &used, &flow, &err), TUSK_OK);
    ck_assert_uint_eq(used, sizeof in);
    ck_assert_int_eq(flow, TUSK_FLOW_DONE);
    ck_assert_mem_eq(in, out, sizeof in);
    ck_assert_uint_eq(tusk_actor_blocks(a), 1);
    /* Optional hooks it does not export are no-ops. */
    ck_assert_int_eq(tusk_actor_pause(a, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_flush(a, out, sizeof out, &used, &flow, &err), TUSK_OK);
    ck_assert_uint_eq(used, 0);
    ck_assert_int_eq(tusk_actor_stop(a, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_destroy(&a, &err), TUSK_OK);
    ck_assert_ptr_null(a);
    tusk_actor_lib_close(&lib);
    ck_assert_ptr_null(lib);
    remove_config_dir(dir);
    free(path);
}
END_TEST

/* Run the failing actor configured by `conf` up to its failure. */
static int run_failing(const char *conf, tusk_error_t *err)
{
    char *path = test_actor("failing");
    tusk_actor_lib_t *lib;
    ck_assert_msg(tusk_actor_lib_open(&lib, path, TUSK_FILTER, err) == TUSK_OK, "%s", err->message);
    ck_assert_ptr_nonnull(tusk_actor_lib_descriptor(lib));
    ck_assert_str_eq(tusk_actor_lib_descriptor(lib)->name, "failing");
    char *dir = config_dir(conf);
    tusk_actor_t *a = NULL;
    int rc = tusk_actor_new(&a, lib, "flt", 2, dir, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_initialise(a, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_start(a, err);
    uint8_t in[64] = {1, 2, 3}, out[64];
    for (int i = 0; i < 5 && rc == TUSK_OK; i++) {
        uint32_t used;
        tusk_flow_t flow;
        rc = tusk_actor_filter(a, 0, in, sizeof in, out, sizeof out, &used, &flow, err);
    }
    if (rc == TUSK_OK) {
        uint32_t used;
        tusk_flow_t flow;
        rc = tusk_actor_flush(a, out, sizeof out, &used, &flow, err);
    }
    if (rc == TUSK_OK)
        rc = tusk_actor_stop(a, err);
    tusk_error_t unload_err;
    int urc = tusk_actor_destroy(&a, &unload_err);
    if (rc == TUSK_OK && urc != TUSK_OK) {
        rc = urc;
        *err = unload_err;
    }
    tusk_actor_lib_close(&lib);
    remove_config_dir(dir);
    free(path);
    return rc;
}

START_TEST(hook_failures_are_reported)
{
    static const struct {
        const char *conf, *want;
    } cases[] = {
        {"fail = config\n",
         "actor flt[2]: process_config failed with status 2 (bad configuration): failing: config refused as "
         "configured"},
        {"fail = register\n",
         "actor flt[2]: process_register_dir failed with status 2 (bad configuration): failing: register refused "
         "as configured"},
        {"fail = initialise\n",
         "actor flt[2]: process_initialise failed with status 1 (failure): failing: initialise refused as "
         "configured"},
        {"fail = start\n", "actor flt[2]: process_start failed with status 1 (failure): failing: start refused as "
                           "configured"},
        {"fail = block\nat = 3\n",
         "actor flt[2]: process_block failed on buffer 3 with status 1 (failure): failing: block refused as "
         "configured"},
        {"fail = flush\n",
         "actor flt[2]: process_flush failed with status 1 (failure): failing: flush refused as configured"},
        {"fail = stop\n", "actor flt[2]: process_stop failed with status 1 (failure): failing: stop refused as "
                          "configured"},
        /* The instance is gone after unload: no message is asked of it. */
        {"fail = unload\n", "actor flt[2]: process_unload failed with status 1 (failure)"},
        {"misbehave = overrun\nat = 2\n",
         "actor flt[2]: process_block on buffer 2 reported 65 bytes used in an output buffer of 64 bytes"},
        {"misbehave = empty_more\n",
         "actor flt[2]: process_block on buffer 1 asked to be called again (more output) but wrote nothing: an "
         "output buffer of 64 bytes is too small for its next frame"},
        {"misbehave = end\n", "actor flt[2]: process_block failed on buffer 1 with status 256 (end of data)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tusk_error_t err;
        int rc = run_failing(cases[i].conf, &err);
        ck_assert_msg(rc == TUSK_EACTOR, "case %zu: rc %d", i, rc);
        assert_message(&err, TUSK_EACTOR, cases[i].want);
    }
    tusk_error_t err;
    ck_assert_int_eq(run_failing("fail = nothing\n", &err), TUSK_OK);
}
END_TEST

START_TEST(instance_config_folder)
{
    static const char *const keys[] = {"file", "mode"};
    static const char *const values[] = {"/data/run 1.adf", "fast"};
    static const unsigned none[1] = {0};
    tusk_actor_spec_t spec = {.name = "reader", .actor_class = TUSK_PRODUCER, .instances = 3, .n_params = 2,
                              .param_keys = keys, .param_values = values, .sources = none, .sinks = none};
    char *dir = tu_temp_path();
    unlink(dir);
    tusk_error_t err;
    ck_assert_msg(tusk_actor_write_config(dir, &spec, 1, &err) == TUSK_OK, "%s", err.message);
    /* Twice is fine (the folder exists already). */
    ck_assert_int_eq(tusk_actor_write_config(dir, &spec, 1, &err), TUSK_OK);
    tusk_params_t *p;
    ck_assert_int_eq(tusk_params_load(&p, dir, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_params_count(p), 5);
    ck_assert_str_eq(tusk_params_get(p, "file"), "/data/run 1.adf");
    ck_assert_str_eq(tusk_params_get(p, "mode"), "fast");
    ck_assert_str_eq(tusk_params_get(p, "actor"), "reader");
    ck_assert_str_eq(tusk_params_get(p, "instance"), "1");
    ck_assert_str_eq(tusk_params_get(p, "instances"), "3");
    tusk_params_destroy(&p);
    remove_config_dir(dir);

    ck_assert_int_eq(tusk_actor_write_config("/nonexistent/x/y", &spec, 0, &err), TUSK_EIO);
    ck_assert_msg(strstr(err.message, "/nonexistent/x/y: cannot create the configuration folder of reader[0]") != NULL,
                  "%s", err.message);
}
END_TEST

/* The actor's own folder is passed as it is, and nothing is written in it. */
START_TEST(own_config_folder)
{
    static const char *const keys[] = {"file"};
    static const char *const values[] = {"x.adf"};
    static const unsigned none[1] = {0};
    tusk_actor_spec_t spec = {.name = "reader", .actor_class = TUSK_PRODUCER, .instances = 2, .n_params = 1,
                              .param_keys = keys, .param_values = values, .sources = none, .sinks = none};
    char *host = tu_temp_path();
    unlink(host);
    const char *dir = NULL;
    bool made = false;
    tusk_error_t err;
    /* No <config_dir>: the host's folder, made, with parameters.conf. */
    ck_assert_msg(tusk_actor_config_folder(&spec, 1, host, &dir, &made, &err) == TUSK_OK, "%s", err.message);
    ck_assert_ptr_eq(dir, host);
    ck_assert(made);
    tusk_params_t *p;
    ck_assert_int_eq(tusk_params_load(&p, host, &err), TUSK_OK);
    ck_assert_str_eq(tusk_params_get(p, "instance"), "1");
    tusk_params_destroy(&p);
    remove_config_dir(host);
    /* With one: that folder, untouched (and the host's not made). */
    char *own = config_dir("# the actor's own\n");
    spec.config_dir = own;
    host = tu_temp_path();
    unlink(host);
    ck_assert_msg(tusk_actor_config_folder(&spec, 0, host, &dir, &made, &err) == TUSK_OK, "%s", err.message);
    ck_assert_ptr_eq(dir, own);
    ck_assert(!made);
    struct stat st;
    ck_assert_int_ne(stat(host, &st), 0);
    ck_assert_int_eq(tusk_params_load(&p, own, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_params_count(p), 0);
    tusk_params_destroy(&p);
    free(host);
    remove_config_dir(own);
    /* A folder the host cannot make. */
    spec.config_dir = NULL;
    ck_assert_int_eq(tusk_actor_config_folder(&spec, 0, "/nonexistent/x/y", &dir, &made, &err), TUSK_EIO);
    ck_assert_ptr_null(dir);
    ck_assert(!made);
}
END_TEST

/* What a crash handler reads: the test's SIGUSR1 handler formats the note
 * while the failing actor, configured with signal = yes, raises SIGUSR1
 * inside each of its hooks. */
static tusk_actor_note_t note;
static char seen[16][200];
static volatile sig_atomic_t n_seen;

static void on_usr1(int sig)
{
    (void)sig;
    if (n_seen < 16) {
        tusk_actor_note_format(&note, seen[n_seen], sizeof seen[n_seen]);
        n_seen++;
    }
}

START_TEST(crash_note)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);
    char *path = test_actor("failing");
    tusk_actor_lib_t *lib;
    tusk_error_t err;
    ck_assert_msg(tusk_actor_lib_open(&lib, path, TUSK_FILTER, &err) == TUSK_OK, "%s", err.message);
    tusk_actor_lib_set_note(lib, &note);
    char *dir = config_dir("signal = yes\n");
    tusk_actor_t *a;
    ck_assert_msg(tusk_actor_new(&a, lib, "crashy", 4, dir, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(tusk_actor_initialise(a, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_start(a, &err), TUSK_OK);
    uint8_t in[16] = {0}, out[16];
    uint32_t used;
    tusk_flow_t flow;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(tusk_actor_filter(a, 0, in, sizeof in, out, sizeof out, &used, &flow, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_flush(a, out, sizeof out, &used, &flow, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_stop(a, &err), TUSK_OK);
    /* Between hooks the note is idle. */
    char between[200];
    tusk_actor_note_format(&note, between, sizeof between);
    ck_assert_str_eq(between, "no actor hook was running");
    ck_assert_int_eq(tusk_actor_destroy(&a, &err), TUSK_OK);
    const char *hooks[] = {"process_config", "process_register_dir", "process_initialise", "process_start",
                           "process_block", "process_block", "process_block", "process_flush", "process_stop",
                           "process_unload"};
    ck_assert_int_eq(n_seen, 10);
    for (int i = 0; i < 10; i++) {
        char want[300];
        if (i >= 4 && i <= 6)
            snprintf(want, sizeof want, "actor crashy[4] (library %s), hook %s, buffer %d", path, hooks[i], i - 3);
        else
            snprintf(want, sizeof want, "actor crashy[4] (library %s), hook %s", path, hooks[i]);
        ck_assert_str_eq(seen[i], want);
    }
    /* Short buffers are cut, never overrun; a NULL note is idle. (The
     * instance is gone: the note's strings are the test's now.) */
    char small[12];
    note = (tusk_actor_note_t){.label = "crashy[4]", .library = "x.so", .hook = "process_block", .buffer = 7};
    note.active = 1;
    ck_assert_uint_eq(tusk_actor_note_format(&note, between, sizeof between), 60);
    ck_assert_str_eq(between, "actor crashy[4] (library x.so), hook process_block, buffer 7");
    ck_assert_uint_eq(tusk_actor_note_format(&note, small, sizeof small), 11);
    ck_assert_str_eq(small, "actor crash");
    ck_assert_uint_eq(tusk_actor_note_format(&note, small, 1), 0);
    ck_assert_str_eq(small, "");
    ck_assert_uint_eq(tusk_actor_note_format(NULL, between, sizeof between), 25);
    note.active = 0;
    tusk_actor_lib_set_note(lib, NULL);
    tusk_actor_lib_close(&lib);
    remove_config_dir(dir);
    free(path);
    sigaction(SIGUSR1, &old, NULL);
}
END_TEST

START_TEST(status_strings)
{
    ck_assert_str_eq(tusk_actor_status_string(TUSK_ACTOR_OK), "success");
    ck_assert_str_eq(tusk_actor_status_string(TUSK_ACTOR_EDATA), "malformed input data");
    ck_assert_str_eq(tusk_actor_status_string(TUSK_ACTOR_END_OF_DATA), "end of data");
    ck_assert_str_eq(tusk_actor_status_string(TUSK_ACTOR_MORE_OUTPUT), "more output follows");
    ck_assert_str_eq(tusk_actor_status_string(12345), "unknown status");
    ck_assert_str_eq(tusk_strerror(TUSK_EABI), "actor ABI mismatch");
}
END_TEST

/* The stop line of the runcount test actor (its log file's last line). */
static void last_line(const char *log, char *line, size_t size)
{
    FILE *fp = fopen(log, "r");
    ck_assert_ptr_nonnull(fp);
    line[0] = '\0';
    char buf[2048];
    while (fgets(buf, sizeof buf, fp))
        snprintf(line, size, "%s", buf);
    fclose(fp);
}

static void write_conf(const char *dir, const char *text)
{
    char file[4200];
    snprintf(file, sizeof file, "%s/parameters.conf", dir);
    FILE *fp = fopen(file, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Changeable parameters (actor.h, ABI revision 1): the keys an actor
 * lists, exactly (no prefix, no other key), none for one without the
 * hooks; process_update applies a new value; its refusal comes back with
 * the actor's words and the instance keeps the old value. */
START_TEST(changeable_parameters)
{
    tusk_error_t err;
    tusk_actor_lib_t *lib = NULL, *plain = NULL;
    char *path = test_actor("runcount"), *plain_path = test_actor("holdback");
    ck_assert_msg(tusk_actor_lib_open(&lib, path, TUSK_FILTER, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tusk_actor_lib_open(&plain, plain_path, TUSK_FILTER, &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(tusk_actor_lib_changeable(lib), "tag");
    ck_assert(tusk_actor_lib_is_changeable(lib, "tag"));
    ck_assert(!tusk_actor_lib_is_changeable(lib, "ta"));
    ck_assert(!tusk_actor_lib_is_changeable(lib, "tags"));
    ck_assert(!tusk_actor_lib_is_changeable(lib, "log"));
    ck_assert(!tusk_actor_lib_is_changeable(lib, ""));
    ck_assert_str_eq(tusk_actor_lib_changeable(plain), "");
    ck_assert(!tusk_actor_lib_is_changeable(plain, "tag"));

    char *log = tu_temp_path(), conf[4400], line[2048];
    const char *want = "stop instance=0 tag=B configs=1 inits=1 updates=1 pid=";
    snprintf(conf, sizeof conf, "tag = A\nlog = %s\n", log);
    char *dir = config_dir(conf);
    tusk_actor_t *a = NULL, *h = NULL;
    ck_assert_msg(tusk_actor_new(&a, lib, "count", 0, dir, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(tusk_actor_initialise(a, &err), TUSK_OK);
    snprintf(conf, sizeof conf, "tag = B\nlog = %s\n", log);
    write_conf(dir, conf);
    ck_assert_msg(tusk_actor_update(a, dir, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(tusk_actor_stop(a, &err), TUSK_OK);
    last_line(log, line, sizeof line);
    ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%s", line);
    snprintf(conf, sizeof conf, "tag = bad\nlog = %s\n", log);
    write_conf(dir, conf);
    ck_assert_int_eq(tusk_actor_update(a, dir, &err), TUSK_EACTOR);
    assert_message(&err, TUSK_EACTOR,
                   "actor count[0]: process_update failed with status 2 (bad configuration): tag 'bad' refused");
    ck_assert_int_eq(tusk_actor_stop(a, &err), TUSK_OK);
    last_line(log, line, sizeof line);
    ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%s", line);

    ck_assert_int_eq(tusk_actor_new(&h, plain, "hold", 0, dir, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_update(h, dir, &err), TUSK_EINVAL);
    assert_message(&err, TUSK_EINVAL, "actor hold[0]: no process_update: its parameters cannot change between runs");
    ck_assert_int_eq(tusk_actor_destroy(&a, &err), TUSK_OK);
    ck_assert_int_eq(tusk_actor_destroy(&h, &err), TUSK_OK);
    tusk_actor_lib_close(&lib);
    tusk_actor_lib_close(&plain);
    unlink(log);
    free(log);
    remove_config_dir(dir);
    free(path);
    free(plain_path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("actor_host");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, missing_library);
    tcase_add_test(tc, not_a_library);
    tcase_add_test(tc, abi_mismatch_refused);
    tcase_add_test(tc, missing_hook_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("run");
    tcase_add_test(tc, narval_library_runs);
    tcase_add_test(tc, hook_failures_are_reported);
    tcase_add_test(tc, instance_config_folder);
    tcase_add_test(tc, own_config_folder);
    tcase_add_test(tc, crash_note);
    tcase_add_test(tc, status_strings);
    tcase_add_test(tc, changeable_parameters);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
