/* check_emulator.c - whole chains run by the emulator on generated ADF
 * data, compared byte for byte: producer -> passthrough x2 -> writer (also
 * with small buffers that force "more output"), fan-in, a plain NARVAL
 * library, a filter that holds everything back until flush, buffer and
 * event limits, --dump-between, one-stage replay, one stage run between
 * files (tusk-psa run's) with its counts, kept instance folders,
 * and failures (an actor error mid-run, a failure at stop) that stop the
 * chain with the actor's message while every file is still closed, what
 * was passed on before a failure still reaching the consumers; the stop
 * flag (tusk-emulate's signals) ends a run cleanly; no temporary folder
 * is left after a configuration error, a failure or a stop. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../emulator/emulator.h"
#include "tusk/params.h"

typedef struct blob {
    uint8_t *data;
    size_t size;
} blob_t;

static blob_t read_file(const char *path)
{
    blob_t b = {0};
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    b.size = (size_t)n;
    b.data = malloc(b.size ? b.size : 1);
    ck_assert_uint_eq(fread(b.data, 1, b.size, fp), b.size);
    fclose(fp);
    return b;
}

/* A file of n random frames (at most max_payload bytes of payload each). */
static char *make_input(unsigned n, size_t max_payload, blob_t *content)
{
    size_t cap = n * (max_payload * 2 + 100);
    uint8_t *buf = malloc(cap);
    size_t size = tu_make_frames(buf, cap, n, max_payload, NULL, NULL);
    char *path = tu_temp_path();
    FILE *fp = fopen(path, "wb");
    ck_assert_uint_eq(fwrite(buf, 1, size, fp), size);
    fclose(fp);
    if (content) {
        content->data = buf;
        content->size = size;
    } else {
        free(buf);
    }
    return path;
}

static char *search_path(void)
{
    const char *a = getenv("TUSK_ACTOR_PATH"), *t = getenv("TUSK_TEST_ACTOR_PATH");
    ck_assert_msg(a && t, "run through make check (TUSK_ACTOR_PATH, TUSK_TEST_ACTOR_PATH)");
    size_t n = strlen(a) + strlen(t) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s:%s", a, t);
    return p;
}

/* Parse, resolve and run `xml`; returns the run's status. */
static int run_xml(const char *xml, const tusk_emulator_options_t *opt, tusk_emulator_totals_t *totals,
                   tusk_error_t *err)
{
    tusk_topology_t *t = NULL;
    char *sp = search_path();
    int rc = tusk_topology_parse(&t, xml, strlen(xml), "test.xml", err);
    ck_assert_msg(rc == TUSK_OK, "%s\n%s", err->message, xml);
    rc = tusk_topology_resolve(t, sp, err);
    ck_assert_msg(rc == TUSK_OK, "%s", err->message);
    tusk_emulator_options_t o = {0};
    if (opt)
        o = *opt;
    FILE *devnull = fopen("/dev/null", "w");
    o.log = devnull;
    tusk_emulator_t *em = NULL;
    rc = tusk_emulator_new(&em, t, &o, err);
    if (rc == TUSK_OK) {
        rc = tusk_emulator_run(em, err);
        if (totals)
            *totals = tusk_emulator_totals(em);
        tusk_error_t derr;
        int drc = tusk_emulator_destroy(&em, &derr);
        if (rc == TUSK_OK && drc != TUSK_OK) {
            rc = drc;
            *err = derr;
        }
    }
    fclose(devnull);
    tusk_topology_destroy(&t);
    free(sp);
    return rc;
}

static char *chain_xml(const char *in, const char *out, unsigned prod_size, const char *filter, unsigned instances,
                       unsigned filter_size, const char *extra_filter_params)
{
    char *xml = malloc(8192);
    snprintf(xml, 8192,
             "<configuration>\n"
             " <producer><name>reader</name><binary_code>file_producer</binary_code><size>%u</size>\n"
             "  <parameter name=\"file\">%s</parameter></producer>\n"
             " <intermediary instances=\"%u\"><name>copy</name><binary_code>%s</binary_code>\n"
             "  <data_source>reader</data_source><size>%u</size>%s</intermediary>\n"
             " <consumer><name>writer</name><binary_code>file_writer</binary_code>\n"
             "  <data_source>copy</data_source><parameter name=\"file\">%s</parameter></consumer>\n"
             "</configuration>\n",
             prod_size, in, instances, filter, filter_size, extra_filter_params ? extra_filter_params : "", out);
    return xml;
}

static void assert_same_file(const char *a, const char *b)
{
    blob_t x = read_file(a), y = read_file(b);
    ck_assert_uint_eq(x.size, y.size);
    ck_assert_msg(memcmp(x.data, y.data, x.size) == 0, "%s and %s differ", a, b);
    free(x.data);
    free(y.data);
}

static void cleanup(char *a, char *b)
{
    unlink(a);
    unlink(b);
    free(a);
    free(b);
}

START_TEST(passthrough_chain_is_byte_identical)
{
    static const unsigned sizes[][2] = {{65536, 65536}, {1024, 1024}, {4096, 300}, {300, 4096}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *in = make_input(500, 200, NULL), *out = tu_temp_path();
        char *xml = chain_xml(in, out, sizes[i][0], "passthrough", 2, sizes[i][1], NULL);
        tusk_error_t err;
        tusk_emulator_totals_t tot;
        int rc = run_xml(xml, NULL, &tot, &err);
        ck_assert_msg(rc == TUSK_OK, "sizes %u/%u: %s", sizes[i][0], sizes[i][1], err.message);
        assert_same_file(in, out);
        ck_assert_uint_eq(tot.producer_frames, 500);
        ck_assert_uint_eq(tot.consumer_frames, 500);
        ck_assert_uint_eq(tot.consumer_bytes, tot.producer_bytes);
        free(xml);
        cleanup(in, out);
    }
}
END_TEST

/* passthrough forward=true: the input buffer moves on uncopied, here to
 * two writers at once (fan-out copies it for the second). */
START_TEST(forwarding_filter_fans_out)
{
    char *in = make_input(400, 200, NULL), *out1 = tu_temp_path(), *out2 = tu_temp_path();
    char xml[4096];
    snprintf(xml, sizeof xml,
             "<configuration>\n"
             " <producer><name>reader</name><binary_code>file_producer</binary_code><size>3000</size>"
             "<parameter name=\"file\">%s</parameter></producer>\n"
             " <intermediary instances=\"2\"><name>fwd</name><binary_code>passthrough</binary_code>"
             "<data_source>reader</data_source><size>256</size><parameter name=\"forward\">true</parameter>"
             "</intermediary>\n"
             " <consumer><name>w1</name><binary_code>file_writer</binary_code><data_source>fwd</data_source>"
             "<parameter name=\"file\">%s</parameter></consumer>\n"
             " <consumer><name>w2</name><binary_code>file_writer</binary_code><data_source>fwd</data_source>"
             "<parameter name=\"file\">%s</parameter></consumer>\n"
             "</configuration>\n",
             in, out1, out2);
    tusk_error_t err;
    tusk_emulator_totals_t tot;
    ck_assert_msg(run_xml(xml, NULL, &tot, &err) == TUSK_OK, "%s", err.message);
    /* The filter's output buffers (256 bytes) are smaller than what it
     * forwards (3000): forwarded buffers keep their own size. */
    assert_same_file(in, out1);
    assert_same_file(in, out2);
    ck_assert_uint_eq(tot.consumer_frames, 2 * tot.producer_frames);
    unlink(out2);
    free(out2);
    cleanup(in, out1);
}
END_TEST

START_TEST(narval_library_in_chain)
{
    char *in = make_input(300, 200, NULL), *out = tu_temp_path();
    char *xml = chain_xml(in, out, 2048, "narval_plain", 3, 2048, NULL);
    tusk_error_t err;
    ck_assert_msg(run_xml(xml, NULL, NULL, &err) == TUSK_OK, "%s", err.message);
    assert_same_file(in, out);
    free(xml);
    cleanup(in, out);
}
END_TEST

START_TEST(flush_emits_held_back_output)
{
    char *in = make_input(300, 200, NULL), *out = tu_temp_path();
    /* holdback writes nothing until flush, then in 100-byte pieces. */
    char *xml = chain_xml(in, out, 4096, "holdback", 1, 100, NULL);
    tusk_error_t err;
    tusk_emulator_totals_t tot;
    ck_assert_msg(run_xml(xml, NULL, &tot, &err) == TUSK_OK, "%s", err.message);
    assert_same_file(in, out);
    blob_t b = read_file(in);
    ck_assert_uint_eq(tot.consumer_buffers, (b.size + 99) / 100);
    free(b.data);
    free(xml);
    cleanup(in, out);
}
END_TEST

/* Frames of both sources arrive, each source in its own order. */
START_TEST(fan_in_merges_both_sources)
{
    blob_t l, r;
    char *left = make_input(200, 150, &l), *right = make_input(250, 150, &r), *out = tu_temp_path();
    char xml[4096];
    snprintf(xml, sizeof xml,
             "<configuration>\n"
             " <producer><name>left</name><binary_code>file_producer</binary_code><size>700</size>"
             "<parameter name=\"file\">%s</parameter></producer>\n"
             " <producer><name>right</name><binary_code>file_producer</binary_code><size>900</size>"
             "<parameter name=\"file\">%s</parameter></producer>\n"
             " <intermediary><name>merge</name><binary_code>passthrough</binary_code>"
             "<data_source>left</data_source><data_source>right</data_source></intermediary>\n"
             " <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>merge</data_source>"
             "<parameter name=\"file\">%s</parameter></consumer>\n"
             "</configuration>\n",
             left, right, out);
    tusk_error_t err;
    tusk_emulator_totals_t tot;
    ck_assert_msg(run_xml(xml, NULL, &tot, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(tot.producer_frames, 450);
    ck_assert_uint_eq(tot.consumer_frames, 450);
    blob_t o = read_file(out);
    ck_assert_uint_eq(o.size, l.size + r.size);
    adf_reader_t *ro = adf_reader_new(ADF_ON_ERROR_STOP), *rl = adf_reader_new(ADF_ON_ERROR_STOP),
                 *rr = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_reader_reset(ro, o.data, o.size, 0);
    adf_reader_reset(rl, l.data, l.size, 0);
    adf_reader_reset(rr, r.data, r.size, 0);
    adf_frame_t fo, fl, fr;
    int hl = adf_reader_next(rl, &fl), hr = adf_reader_next(rr, &fr);
    unsigned n = 0;
    while (adf_reader_next(ro, &fo) == ADF_OK) {
        const uint8_t *po = fo.payload - ADF_KEY_SIZE;
        if (hl == ADF_OK && fo.key.length == fl.key.length && memcmp(po, fl.payload - ADF_KEY_SIZE, fo.key.length) == 0)
            hl = adf_reader_next(rl, &fl);
        else if (hr == ADF_OK && fo.key.length == fr.key.length &&
                 memcmp(po, fr.payload - ADF_KEY_SIZE, fo.key.length) == 0)
            hr = adf_reader_next(rr, &fr);
        else
            ck_abort_msg("output frame %u is neither the next left nor the next right frame", n);
        n++;
    }
    ck_assert_uint_eq(n, 450);
    ck_assert_int_eq(hl, ADF_END);
    ck_assert_int_eq(hr, ADF_END);
    adf_reader_destroy(&ro);
    adf_reader_destroy(&rl);
    adf_reader_destroy(&rr);
    free(o.data);
    free(l.data);
    free(r.data);
    unlink(left);
    free(left);
    cleanup(right, out);
}
END_TEST

/* The third buffer fails: the chain stops with the actor's words, what
 * came before reached the writer, and the writer's file is complete. */
START_TEST(actor_error_stops_chain)
{
    blob_t b;
    char *in = make_input(400, 200, &b), *out = tu_temp_path();
    char *xml = chain_xml(in, out, 1024, "fault", 1, 1024,
                          "<parameter name=\"action\">error</parameter><parameter name=\"at_block\">3</parameter>");
    tusk_error_t err;
    tusk_emulator_totals_t tot;
    ck_assert_int_eq(run_xml(xml, NULL, &tot, &err), TUSK_EACTOR);
    ck_assert_msg(strstr(err.message, "actor copy[0]: process_block failed on buffer 3 with status 1 (failure): ") ==
                      err.message,
                  "%s", err.message);
    ck_assert_msg(strstr(err.message, "fault injected") != NULL, "%s", err.message);
    ck_assert_uint_eq(tot.consumer_buffers, 2);
    blob_t o = read_file(out);
    ck_assert_uint_eq(o.size, tot.consumer_bytes);
    ck_assert_uint_lt(o.size, b.size);
    ck_assert_int_eq(memcmp(o.data, b.data, o.size), 0);
    free(o.data);
    free(b.data);
    free(xml);
    cleanup(in, out);
}
END_TEST

/* A filter fails while buffers it passed on before still wait at the
 * consumer (the filter above it made several outputs from one input):
 * they are still written, so the output is exactly the input up to them. */
START_TEST(failure_keeps_what_was_passed_on)
{
    blob_t b;
    char *in = make_input(400, 200, &b), *out = tu_temp_path();
    char xml[4096];
    snprintf(xml, sizeof xml,
             "<configuration>\n"
             " <producer><name>reader</name><binary_code>file_producer</binary_code><size>8192</size>\n"
             "  <parameter name=\"file\">%s</parameter></producer>\n"
             " <intermediary><name>split</name><binary_code>passthrough</binary_code>\n"
             "  <data_source>reader</data_source><size>512</size></intermediary>\n"
             " <intermediary><name>brk</name><binary_code>fault</binary_code><size>512</size>\n"
             "  <data_source>split</data_source><parameter name=\"action\">error</parameter>\n"
             "  <parameter name=\"at_block\">3</parameter></intermediary>\n"
             " <consumer><name>writer</name><binary_code>file_writer</binary_code>\n"
             "  <data_source>brk</data_source><parameter name=\"file\">%s</parameter></consumer>\n"
             "</configuration>\n",
             in, out);
    tusk_error_t err;
    tusk_emulator_totals_t tot;
    ck_assert_int_eq(run_xml(xml, NULL, &tot, &err), TUSK_EACTOR);
    ck_assert_msg(strstr(err.message, "actor brk[0]: process_block failed on buffer 3") == err.message, "%s",
                  err.message);
    /* One producer buffer: split made all its outputs, brk passed on two. */
    ck_assert_uint_eq(tot.producer_buffers, 1);
    ck_assert_uint_eq(tot.consumer_buffers, 2);
    blob_t o = read_file(out);
    ck_assert_uint_eq(o.size, tot.consumer_bytes);
    ck_assert_uint_gt(o.size, 0);
    ck_assert_int_eq(memcmp(o.data, b.data, o.size), 0);
    free(o.data);
    free(b.data);
    cleanup(in, out);
}
END_TEST

/* A private TMPDIR for the emulator's temporary folder; folder_empty
 * checks nothing is left in it and restores TMPDIR. */
static char *private_tmpdir(void)
{
    char *dir = tu_temp_path();
    unlink(dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    const char *old = getenv("TMPDIR");
    ck_assert_int_eq(setenv("TUSK_TEST_OLD_TMPDIR", old ? old : "", 1), 0);
    ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
    return dir;
}

static void assert_folder_empty_and_remove(char *dir, const char *after)
{
    const char *old = getenv("TUSK_TEST_OLD_TMPDIR");
    if (old && *old)
        setenv("TMPDIR", old, 1);
    else
        unsetenv("TMPDIR");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        ck_assert_msg(e->d_name[0] == '.', "%s: %s/%s was left behind", after, dir, e->d_name);
    closedir(d);
    ck_assert_int_eq(rmdir(dir), 0);
    free(dir);
}

/* A configuration error in the second instance of an actor, after other
 * instances were made; a failure in a run; a run ended by the stop flag:
 * the temporary folder goes every time. */
START_TEST(no_temporary_folder_left)
{
    char *in = make_input(100, 100, NULL), *out = tu_temp_path();
    tusk_error_t err;
    char *tmp = private_tmpdir();
    char *xml = chain_xml(in, out, 1024, "failing", 3, 1024, "<parameter name=\"fail\">register</parameter>");
    ck_assert_int_eq(run_xml(xml, NULL, NULL, &err), TUSK_EACTOR);
    ck_assert_msg(strstr(err.message, "failing: register refused as configured") != NULL, "%s", err.message);
    free(xml);
    assert_folder_empty_and_remove(tmp, "a configuration error");

    tmp = private_tmpdir();
    xml = chain_xml(in, out, 1024, "failing", 2, 1024, "<parameter name=\"fail\">block</parameter>");
    ck_assert_int_eq(run_xml(xml, NULL, NULL, &err), TUSK_EACTOR);
    free(xml);
    assert_folder_empty_and_remove(tmp, "a failed run");

    /* The flag up before the run: no buffer is made, every actor is
     * started and stopped (the writer's file is there, empty). */
    tmp = private_tmpdir();
    xml = chain_xml(in, out, 1024, "passthrough", 2, 1024, NULL);
    volatile sig_atomic_t stop = 1;
    tusk_emulator_options_t opt = {.stop = &stop};
    tusk_emulator_totals_t tot;
    unlink(out);
    ck_assert_msg(run_xml(xml, &opt, &tot, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(tot.producer_buffers, 0);
    ck_assert_uint_eq(tot.consumer_buffers, 0);
    blob_t o = read_file(out);
    ck_assert_uint_eq(o.size, 0);
    free(o.data);
    free(xml);
    assert_folder_empty_and_remove(tmp, "a stopped run");
    cleanup(in, out);
}
END_TEST

START_TEST(failure_at_stop_still_closes_files)
{
    char *in = make_input(200, 200, NULL), *out = tu_temp_path();
    char *xml = chain_xml(in, out, 1024, "failing", 1, 1024, "<parameter name=\"fail\">stop</parameter>");
    tusk_error_t err;
    ck_assert_int_eq(run_xml(xml, NULL, NULL, &err), TUSK_EACTOR);
    ck_assert_str_eq(err.message,
                     "actor copy[0]: process_stop failed with status 1 (failure): failing: stop refused as configured");
    assert_same_file(in, out);
    free(xml);
    cleanup(in, out);
}
END_TEST

START_TEST(buffer_and_event_limits)
{
    blob_t b;
    char *in = make_input(500, 200, &b), *out = tu_temp_path();
    char *xml = chain_xml(in, out, 1024, "passthrough", 1, 1024, NULL);
    tusk_error_t err;
    tusk_emulator_totals_t tot;
    tusk_emulator_options_t opt = {.max_buffers = 3};
    ck_assert_msg(run_xml(xml, &opt, &tot, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(tot.producer_buffers, 3);
    ck_assert_uint_eq(tot.consumer_buffers, 3);
    blob_t o = read_file(out);
    ck_assert_int_eq(memcmp(o.data, b.data, o.size), 0);
    free(o.data);

    opt = (tusk_emulator_options_t){.max_frames = 37};
    ck_assert_msg(run_xml(xml, &opt, &tot, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_ge(tot.producer_frames, 37);
    /* It stops after the buffer in which the limit is reached. */
    ck_assert_uint_lt(tot.producer_frames, 37 + 1024 / ADF_KEY_SIZE);
    ck_assert_uint_eq(tot.consumer_frames, tot.producer_frames);
    free(b.data);
    free(xml);
    cleanup(in, out);
}
END_TEST

START_TEST(dump_between_actors)
{
    char *in = make_input(300, 200, NULL), *out = tu_temp_path();
    char *dir = tu_temp_path();
    unlink(dir);
    mkdir(dir, 0700);
    char *xml = chain_xml(in, out, 1024, "passthrough", 2, 1024, NULL);
    const char *dumps[] = {"reader:copy", "copy:writer"};
    tusk_emulator_options_t opt = {.dumps = dumps, .n_dumps = 2, .dump_dir = dir};
    tusk_error_t err;
    ck_assert_msg(run_xml(xml, &opt, NULL, &err) == TUSK_OK, "%s", err.message);
    char p1[4200], p2[4200];
    snprintf(p1, sizeof p1, "%s/reader-copy.adf", dir);
    snprintf(p2, sizeof p2, "%s/copy-writer.adf", dir);
    assert_same_file(in, p1);
    assert_same_file(in, p2);
    unlink(p1);
    unlink(p2);

    const char *bad[] = {"writer:reader"};
    opt = (tusk_emulator_options_t){.dumps = bad, .n_dumps = 1, .dump_dir = dir};
    ck_assert_int_eq(run_xml(xml, &opt, NULL, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--dump-between writer:reader: test.xml has no link writer -> reader");
    rmdir(dir);
    free(dir);
    free(xml);
    cleanup(in, out);
}
END_TEST

START_TEST(replay_one_stage)
{
    char *in = make_input(300, 200, NULL), *out = tu_temp_path(), *replayed = tu_temp_path();
    char *xml = chain_xml("never-read.adf", out, 1024, "passthrough", 2, 512, NULL);
    tusk_topology_t *t;
    tusk_error_t err;
    char *sp = search_path();
    ck_assert_int_eq(tusk_topology_parse(&t, xml, strlen(xml), "chain.xml", &err), TUSK_OK);
    ck_assert_msg(tusk_topology_resolve(t, sp, &err) == TUSK_OK, "%s", err.message);
    char *rxml;
    ck_assert_int_eq(tusk_emulator_replay_topology(t, "copy", in, replayed, &rxml, &err), TUSK_OK);
    ck_assert_msg(run_xml(rxml, NULL, NULL, &err) == TUSK_OK, "%s\n%s", err.message, rxml);
    assert_same_file(in, replayed);
    free(rxml);
    ck_assert_int_eq(tusk_emulator_replay_topology(t, "nobody", in, NULL, &rxml, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--only nobody: chain.xml has no actor of that name");
    ck_assert_int_eq(tusk_emulator_replay_topology(t, "reader", in, NULL, &rxml, &err), TUSK_EINVAL);
    ck_assert_msg(strstr(err.message, "a producer takes no --input") != NULL, "%s", err.message);
    tusk_topology_destroy(&t);
    free(sp);
    free(xml);
    unlink(replayed);
    free(replayed);
    cleanup(in, out);
}
END_TEST

/* One stage between files (what tusk-psa run is): the output, the stage
 * actor's counts, and how far a failing one came. */
START_TEST(run_stage_between_files)
{
    char *in = make_input(300, 200, NULL), *out = tu_temp_path();
    char *sp = search_path();
    FILE *devnull = fopen("/dev/null", "w");
    const tusk_emulator_options_t opt = {.actor_path = sp, .log = devnull};
    const char *keys[] = {"forward"}, *values[] = {"false"};
    tusk_emulator_stage_t st = {.name = "copy",
                                .library = "passthrough",
                                .actor_class = TUSK_FILTER,
                                .in_size = 2000,
                                .out_size = 700,
                                .n_params = 1,
                                .keys = keys,
                                .values = values};
    tusk_emulator_stage_result_t res;
    tusk_error_t err;
    ck_assert_msg(tusk_emulator_run_stage(&st, in, out, &opt, &res, &err) == TUSK_OK, "%s", err.message);
    assert_same_file(in, out);
    blob_t b = read_file(in);
    ck_assert(res.ran);
    ck_assert_uint_eq(res.stats.frames_in, 300);
    ck_assert_uint_eq(res.stats.frames_out, 300);
    ck_assert_uint_eq(res.stats.bytes_in, b.size);
    ck_assert_uint_eq(res.stats.bytes_out, b.size);
    ck_assert_uint_ge(res.stats.buffers_out, (b.size + 699) / 700);
    ck_assert_uint_eq(res.stats.calls, res.stats.buffers_out);
    free(b.data);

    /* The stage's topology text names what it runs. */
    char *xml;
    ck_assert_int_eq(tusk_emulator_stage_topology(&st, in, NULL, &xml, &err), TUSK_OK);
    ck_assert_msg(strstr(xml, "<name>copy</name>") && strstr(xml, "<binary_code>passthrough</binary_code>") &&
                      strstr(xml, "<size>700</size>") && strstr(xml, "null_consumer") &&
                      strstr(xml, "<parameter name=\"forward\">false</parameter>"),
                  "%s", xml);
    free(xml);
    /* An actor with its own configuration folder keeps it in the replay. */
    tusk_emulator_stage_t own = st;
    own.n_params = 0;
    own.config_dir = "/data/copy & co.d";
    ck_assert_int_eq(tusk_emulator_stage_topology(&own, in, NULL, &xml, &err), TUSK_OK);
    ck_assert_msg(strstr(xml, "<config_dir>/data/copy &amp; co.d</config_dir>") != NULL, "%s", xml);
    free(xml);
    st.actor_class = TUSK_PRODUCER;
    ck_assert_int_eq(tusk_emulator_stage_topology(&st, in, NULL, &xml, &err), TUSK_EINVAL);
    st.actor_class = TUSK_FILTER;

    /* No input file: refused before anything ran. */
    ck_assert_int_eq(tusk_emulator_run_stage(&st, "/nonexistent/in.adf", out, &opt, &res, &err), TUSK_EACTOR);
    ck_assert(!res.ran);
    ck_assert_msg(strstr(err.message, "/nonexistent/in.adf") != NULL, "%s", err.message);

    /* The actor failing on its second buffer: it ran, the failure names it. */
    const char *fkeys[] = {"fail", "at"}, *fvalues[] = {"block", "2"};
    st.library = "failing";
    st.keys = fkeys;
    st.values = fvalues;
    st.n_params = 2;
    ck_assert_int_eq(tusk_emulator_run_stage(&st, in, out, &opt, &res, &err), TUSK_EACTOR);
    ck_assert(res.ran);
    ck_assert_msg(strstr(err.message, "actor copy[0]: process_block failed on buffer 2") == err.message, "%s",
                  err.message);
    ck_assert_uint_eq(res.stats.calls, 2);
    ck_assert_uint_eq(res.stats.buffers_out, 1);
    fclose(devnull);
    free(sp);
    cleanup(in, out);
}
END_TEST

START_TEST(instance_folders_kept)
{
    char *in = make_input(50, 100, NULL), *out = tu_temp_path();
    char *dir = tu_temp_path();
    unlink(dir);
    char *xml = chain_xml(in, out, 1024, "passthrough", 2, 1024, NULL);
    tusk_emulator_options_t opt = {.work_dir = dir};
    tusk_error_t err;
    ck_assert_msg(run_xml(xml, &opt, NULL, &err) == TUSK_OK, "%s", err.message);
    for (unsigned k = 0; k < 2; k++) {
        char idir[4200];
        snprintf(idir, sizeof idir, "%s/copy.%u", dir, k);
        tusk_params_t *p;
        ck_assert_int_eq(tusk_params_load(&p, idir, &err), TUSK_OK);
        char want[8];
        snprintf(want, sizeof want, "%u", k);
        ck_assert_str_eq(tusk_params_get(p, "instance"), want);
        ck_assert_str_eq(tusk_params_get(p, "instances"), "2");
        ck_assert_str_eq(tusk_params_get(p, "actor"), "copy");
        tusk_params_destroy(&p);
        char file[4300];
        snprintf(file, sizeof file, "%s/parameters.conf", idir);
        unlink(file);
        rmdir(idir);
    }
    static const char *const others[] = {"reader.0", "writer.0"};
    for (int i = 0; i < 2; i++) {
        char file[4300];
        snprintf(file, sizeof file, "%s/%s/parameters.conf", dir, others[i]);
        ck_assert_int_eq(access(file, R_OK), 0);
        unlink(file);
        snprintf(file, sizeof file, "%s/%s", dir, others[i]);
        rmdir(file);
    }
    ck_assert_int_eq(rmdir(dir), 0);
    free(dir);
    free(xml);
    cleanup(in, out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("emulator");
    TCase *tc = tcase_create("chains");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, passthrough_chain_is_byte_identical);
    tcase_add_test(tc, narval_library_in_chain);
    tcase_add_test(tc, forwarding_filter_fans_out);
    tcase_add_test(tc, flush_emits_held_back_output);
    tcase_add_test(tc, fan_in_merges_both_sources);
    suite_add_tcase(s, tc);
    tc = tcase_create("failures");
    tcase_add_test(tc, actor_error_stops_chain);
    tcase_add_test(tc, failure_at_stop_still_closes_files);
    tcase_add_test(tc, failure_keeps_what_was_passed_on);
    tcase_add_test(tc, no_temporary_folder_left);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_add_test(tc, buffer_and_event_limits);
    tcase_add_test(tc, dump_between_actors);
    tcase_add_test(tc, replay_one_stage);
    tcase_add_test(tc, run_stage_between_files);
    tcase_add_test(tc, instance_folders_kept);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
