/* check_topology.c - topology files: the examples load with the right
 * actors, order, links, defaults and lines; every file of config/bad is
 * refused with FILE:LINE and a message saying what is wrong; hostile input
 * (XXE, random mutations) never crashes, leaks or expands files; actor
 * libraries are found on search paths and next to the topology, and never
 * in an installed tusk unless the test says where that is
 * ($TUSK_ACTOR_DIR). NARVAL's own topologies load: its documented
 * examples, sizes written 1_000_000 (the loader and the schema agree on
 * every grouping), <log_level>, <port> as a port type; generic actors get
 * their libraries from NARVAL's "set library" lines, and an actor its own
 * configuration folder (<config_dir>). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>

#include "runtime/topology_spec.h"
#include "testutil.h"
#include "tusk/topology.h"

/* ---- helpers ---------------------------------------------------------------- */



static char *config_path(const char *rel)
{
    const char *dir = tu_source_dir("config/passthrough.xml");
    size_t n = strlen(dir) + strlen(rel) + 16;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/config/%s", dir, rel);
    return p;
}

static char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    ck_assert_ptr_nonnull(buf);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    buf[n] = '\0';
    *size = n;
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
}

/* Line (1-based) of the n-th (0-based) line of `path` containing `needle`. */
static int line_containing(const char *path, const char *needle, int nth)
{
    size_t size;
    char *text = read_all(path, &size);
    int line = 1, found = -1;
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = '\0';
        if (strstr(p, needle) && nth-- == 0) {
            found = line;
            break;
        }
        if (!eol)
            break;
        p = eol + 1;
        line++;
    }
    free(text);
    ck_assert_msg(found > 0, "%s: no line with '%s'", path, needle);
    return found;
}

static tusk_topology_t *parse_ok(const char *xml)
{
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    int rc = tusk_topology_parse(&t, xml, strlen(xml), "inline.xml", &err);
    ck_assert_msg(rc == TUSK_OK, "unexpected error: %s", err.message);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void parse_fails(const char *xml, int code, const char *needle)
{
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    int rc = tusk_topology_parse(&t, xml, strlen(xml), "inline.xml", &err);
    ck_assert_int_eq(rc, code);
    ck_assert_ptr_null(t);
    tu_assert_error(&err, code, needle);
}

static const tusk_actor_spec_t *actor_named(const tusk_topology_t *t, const char *name)
{
    int i = tusk_topology_find(t, name);
    ck_assert_msg(i >= 0, "no actor '%s'", name);
    const tusk_actor_spec_t *s = tusk_topology_actor(t, (unsigned)i);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s->name, name);
    return s;
}

static const char *param(const tusk_actor_spec_t *s, const char *key)
{
    for (unsigned i = 0; i < s->n_params; i++)
        if (strcmp(s->param_keys[i], key) == 0)
            return s->param_values[i];
    return NULL;
}

/* What every loaded topology must satisfy: dependency order, sources and
 * sinks mirror each other, sinks ascending. Failure-only (hot loops). */
static void check_invariants(const tusk_topology_t *t)
{
    unsigned n = tusk_topology_count(t);
    tu_check(n > 0);
    tu_check(tusk_topology_actor(t, n) == NULL);
    for (unsigned i = 0; i < n; i++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, i);
        tu_check(s != NULL && s->name != NULL && s->name[0] != '\0');
        tu_check(s->library != NULL && s->library[0] != '\0');
        tu_check(s->hostname != NULL && s->hostname[0] != '\0');
        tu_check(tusk_topology_find(t, s->name) == (int)i);
        tu_check(s->instances >= 1 && s->instances <= TUSK_MAX_INSTANCES);
        tu_check(s->line > 0);
        tu_check(s->sources != NULL && s->sinks != NULL);
        tu_check(s->param_keys != NULL && s->param_values != NULL);
        if (s->actor_class == TUSK_CONSUMER) {
            tu_check(s->buffer_size == 0);
            tu_check(s->n_sinks == 0);
        } else {
            tu_check(s->buffer_size >= TUSK_MIN_BUFFER_SIZE && s->buffer_size <= TUSK_MAX_BUFFER_SIZE);
            tu_check(s->n_sinks > 0);
        }
        tu_check((s->actor_class == TUSK_PRODUCER) == (s->n_sources == 0));
        for (unsigned j = 0; j < s->n_sources; j++) {
            unsigned src = s->sources[j];
            tu_check(src < i); /* every actor after its sources */
            const tusk_actor_spec_t *a = tusk_topology_actor(t, src);
            tu_check(a->actor_class != TUSK_CONSUMER);
            unsigned found = 0;
            for (unsigned k = 0; k < a->n_sinks; k++)
                found += a->sinks[k] == i;
            tu_check(found == 1);
        }
        for (unsigned k = 0; k < s->n_sinks; k++) {
            tu_check(s->sinks[k] > i);
            tu_check(k == 0 || s->sinks[k] > s->sinks[k - 1]);
        }
        for (unsigned p = 0; p < s->n_params; p++) {
            tu_check(s->param_keys[p] != NULL && s->param_values[p] != NULL);
            tu_check(strpbrk(s->param_values[p], "\r\n") == NULL);
        }
    }
}

/* ---- the examples --------------------------------------------------------- */

START_TEST(test_passthrough_example)
{
    char *path = config_path("passthrough.xml");
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    int rc = tusk_topology_load(&t, path, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(tusk_topology_name(t), path);
    ck_assert_uint_eq(tusk_topology_count(t), 3);
    check_invariants(t);

    const tusk_actor_spec_t *r = tusk_topology_actor(t, 0);
    ck_assert_str_eq(r->name, "reader");
    ck_assert_int_eq(r->actor_class, TUSK_PRODUCER);
    ck_assert_str_eq(r->hostname, "localhost");
    ck_assert_str_eq(r->library, "file_producer");
    ck_assert_ptr_null(r->library_path);
    ck_assert_ptr_null(r->debug);
    ck_assert_uint_eq(r->buffer_size, 65536);
    ck_assert_uint_eq(r->instances, 1);
    ck_assert_uint_eq(r->n_sources, 0);
    ck_assert_uint_eq(r->n_sinks, 1);
    ck_assert_uint_eq(r->sinks[0], 1);
    ck_assert_uint_eq(r->n_params, 1);
    ck_assert_str_eq(r->param_keys[0], "file");
    ck_assert_str_eq(r->param_values[0], "input.adf");
    ck_assert_int_eq(r->line, line_containing(path, "<producer>", 0));

    const tusk_actor_spec_t *c = tusk_topology_actor(t, 1);
    ck_assert_str_eq(c->name, "copy");
    ck_assert_int_eq(c->actor_class, TUSK_FILTER);
    ck_assert_str_eq(c->library, "passthrough");
    ck_assert_uint_eq(c->instances, 2);
    ck_assert_uint_eq(c->buffer_size, 65536);
    ck_assert_uint_eq(c->n_sources, 1);
    ck_assert_uint_eq(c->sources[0], 0);
    ck_assert_uint_eq(c->n_sinks, 1);
    ck_assert_uint_eq(c->sinks[0], 2);
    ck_assert_uint_eq(c->n_params, 0);
    ck_assert_int_eq(c->line, line_containing(path, "<intermediary", 0));

    const tusk_actor_spec_t *w = tusk_topology_actor(t, 2);
    ck_assert_str_eq(w->name, "writer");
    ck_assert_int_eq(w->actor_class, TUSK_CONSUMER);
    ck_assert_str_eq(w->library, "file_writer");
    ck_assert_str_eq(w->hostname, "localhost");
    ck_assert_uint_eq(w->buffer_size, 0);
    ck_assert_uint_eq(w->n_sources, 1);
    ck_assert_uint_eq(w->sources[0], 1);
    ck_assert_uint_eq(w->n_sinks, 0);
    ck_assert_str_eq(param(w, "file"), "output.adf");
    ck_assert_int_eq(w->line, line_containing(path, "<consumer>", 0));

    ck_assert_int_eq(tusk_topology_find(t, "copy"), 1);
    ck_assert_int_eq(tusk_topology_find(t, "nobody"), -1);
    ck_assert_int_eq(tusk_topology_find(t, NULL), -1);
    tusk_topology_destroy(&t);
    ck_assert_ptr_null(t);
    tusk_topology_destroy(&t); /* harmless twice */
    free(path);
}
END_TEST

START_TEST(test_fanin_example)
{
    char *path = config_path("fanin.xml");
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    int rc = tusk_topology_load(&t, path, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(tusk_topology_count(t), 4);
    check_invariants(t);
    const char *names[] = {"left", "right", "merge", "writer"};
    const tusk_actor_class_t classes[] = {TUSK_PRODUCER, TUSK_PRODUCER, TUSK_FILTER, TUSK_CONSUMER};
    for (unsigned i = 0; i < 4; i++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, i);
        ck_assert_str_eq(s->name, names[i]);
        ck_assert_int_eq(s->actor_class, classes[i]);
        ck_assert_uint_eq(s->instances, 1);
        ck_assert_str_eq(s->hostname, "localhost");
        ck_assert_uint_eq(s->buffer_size, classes[i] == TUSK_CONSUMER ? 0 : TUSK_DEFAULT_BUFFER_SIZE);
    }
    const tusk_actor_spec_t *m = actor_named(t, "merge");
    ck_assert_uint_eq(m->n_sources, 2);
    ck_assert_uint_eq(m->sources[0], 0); /* left first, as in the file */
    ck_assert_uint_eq(m->sources[1], 1);
    ck_assert_uint_eq(m->n_sinks, 1);
    ck_assert_uint_eq(m->sinks[0], 3);
    ck_assert_int_eq(m->line, line_containing(path, "<intermediary>", 0));
    ck_assert_str_eq(param(actor_named(t, "left"), "file"), "left.adf");
    ck_assert_str_eq(param(actor_named(t, "right"), "file"), "right.adf");
    ck_assert_str_eq(param(actor_named(t, "writer"), "file"), "merged.adf");
    ck_assert_uint_eq(actor_named(t, "left")->sinks[0], 2);
    ck_assert_uint_eq(actor_named(t, "right")->sinks[0], 2);
    ck_assert_int_eq(actor_named(t, "right")->line, line_containing(path, "<producer>", 1));
    tusk_topology_destroy(&t);
    free(path);
}
END_TEST

/* ---- the corpus of bad files ------------------------------------------------ */

typedef struct bad_case {
    const char *file;
    int code;
    int line; /* 0: no line in the message */
    const char *expect;
} bad_case_t;

static const bad_case_t bad_cases[] = {
    {"not-xml.xml", TUSK_ETOPOLOGY, 1, "not well-formed XML"},
    {"truncated.xml", TUSK_ETOPOLOGY, 11, "not well-formed XML"},
    {"empty-file.xml", TUSK_ETOPOLOGY, 0, "empty file"},
    {"wrong-root.xml", TUSK_ETOPOLOGY, 3, "<topology>: the root element must be <configuration>"},
    {"empty-configuration.xml", TUSK_ETOPOLOGY, 3, "<configuration>: no actors"},
    {"unknown-actor-class.xml", TUSK_ETOPOLOGY, 8, "unknown element <filter>"},
    {"unknown-element.xml", TUSK_ETOPOLOGY, 7, "<producer> 'reader': unknown element <colour>"},
    {"missing-name.xml", TUSK_ETOPOLOGY, 4, "<producer>: missing <name>"},
    {"missing-binary-code.xml", TUSK_ETOPOLOGY, 8, "<consumer> 'writer': missing <binary_code>"},
    {"consumer-size.xml", TUSK_ETOPOLOGY, 12, "<size> is not allowed in a <consumer>"},
    {"producer-data-source.xml", TUSK_ETOPOLOGY, 7, "<data_source> is not allowed in a <producer>"},
    {"intermediary-no-source.xml", TUSK_ETOPOLOGY, 8, "<intermediary> 'copy': missing <data_source>"},
    {"size-zero.xml", TUSK_ETOPOLOGY, 7, "bad size '0'"},
    {"size-not-number.xml", TUSK_ETOPOLOGY, 7, "bad size 'abc'"},
    {"size-too-big.xml", TUSK_ETOPOLOGY, 7, "bad size '2147483648'"},
    {"size-too-small.xml", TUSK_ETOPOLOGY, 7, "bad size '16'"},
    {"instances-zero.xml", TUSK_ETOPOLOGY, 4, "bad instances '0'"},
    {"instances-too-many.xml", TUSK_ETOPOLOGY, 4, "bad instances '1000'"},
    {"input-buffers-not-number.xml", TUSK_ETOPOLOGY, 8,
     "<intermediary> 'copy': bad input_buffers 'two': expected a count of buffers, 0 or more"},
    {"duplicate-names.xml", TUSK_ETOPOLOGY, 8, "'reader': duplicate actor name: also used by the <producer> at line 4"},
    {"unknown-source.xml", TUSK_ETOPOLOGY, 11, "data source 'raeder': unknown actor"},
    {"source-is-consumer.xml", TUSK_ETOPOLOGY, 16, "data source 'writer' is a consumer"},
    {"source-twice.xml", TUSK_ETOPOLOGY, 12, "data source 'reader' is listed twice (lines 11 and 12)"},
    {"self-loop.xml", TUSK_ETOPOLOGY, 8, "<intermediary> 'loop': cycle: loop -> loop"},
    {"cycle.xml", TUSK_ETOPOLOGY, 8, "<intermediary> 'a': cycle: a -> b -> c -> a"},
    {"unread-output.xml", TUSK_ETOPOLOGY, 8, "output of producer 'spare' is not read by any actor"},
    {"duplicate-parameter.xml", TUSK_ETOPOLOGY, 8, "duplicate parameter 'file' (first at line 7)"},
    {"reserved-parameter.xml", TUSK_ETOPOLOGY, 8, "parameter name 'instance' is reserved"},
    {"bad-parameter-name.xml", TUSK_ETOPOLOGY, 7, "bad parameter name 'input file'"},
    {"parameter-multiline.xml", TUSK_ETOPOLOGY, 7, "parameter 'file': the value must be a single line"},
    {"empty-name.xml", TUSK_ETOPOLOGY, 5, "empty <name>"},
    {"bad-actor-name.xml", TUSK_ETOPOLOGY, 5, "'the reader': bad actor name: ' ' is not allowed"},
    {"actor-name-instance-suffix.xml", TUSK_ETOPOLOGY, 6,
     "<producer> 'a1.0': bad actor name: '0' after a dot: instance K of NAME is NAME.K in run folders"},
    {"actor-name-slash.xml", TUSK_ETOPOLOGY, 5, "<producer> 'run/reader': bad actor name: '/' is not allowed"},
    {"actor-name-control.xml", TUSK_ETOPOLOGY, 5, "bad actor name: character 0x09 is not allowed"},
    {"actor-name-too-long.xml", TUSK_ETOPOLOGY, 9, "bad actor name: 65 characters, at most 64"},
    {"data-source-bad-name.xml", TUSK_ETOPOLOGY, 11,
     "<consumer> 'writer': bad data source 'reader.2': '2' after a dot"},
    {"empty-binary-code.xml", TUSK_ETOPOLOGY, 6, "'reader': empty <binary_code>"},
    {"two-names.xml", TUSK_ETOPOLOGY, 6, "more than one <name>"},
    {"no-producer.xml", TUSK_ETOPOLOGY, 3, "no <producer>"},
    {"bad-attribute.xml", TUSK_ETOPOLOGY, 4, "<producer> 'reader': unknown attribute 'colour' on <producer>"},
    {"stray-text.xml", TUSK_ETOPOLOGY, 6, "<producer> 'reader': unexpected text 'file_producer'"},
    {"nested-element.xml", TUSK_ETOPOLOGY, 6, "element <path> inside <binary_code>"},
    /* Only the schema looks at namespaces: its message, located. */
    {"namespace.xml", TUSK_ETOPOLOGY, 3, "<configuration>: schema violation: Expecting no namespace"},
    {"xxe.xml", TUSK_ETOPOLOGY, 3, "<!DOCTYPE> is not allowed"},
    {"external-dtd.xml", TUSK_ETOPOLOGY, 3, "<!DOCTYPE> is not allowed"},
    {"undefined-entity.xml", TUSK_ETOPOLOGY, 7, "not well-formed XML: Entity 'secret' not defined"},
    /* NARVAL's meanings. */
    {"port-address.xml", TUSK_ETOPOLOGY, 7,
     "<producer> 'reader': bad port '10.0.0.2': expected 'fifo', 'eth0', 'eth1', 'eth2', 'eth3', 'ib0' or 'ib1' "
     "(NARVAL's port type; the address a tusk actor's inputs bind to is <address>)"},
    {"size-bad-grouping.xml", TUSK_ETOPOLOGY, 7, "<producer> 'reader': bad size '1__000_000': expected a byte count"},
    {"generic-wrong-class.xml", TUSK_ETOPOLOGY, 6,
     "<producer> 'reader': <binary_code> generic_filter is NARVAL's host for a C intermediary, not for a <producer>"},
    {"config-dir-parameter.xml", TUSK_ETOPOLOGY, 7,
     "<producer> 'reader': <parameter> with <config_dir> (line 8): an actor given its own configuration folder"},
};
#define N_BAD (sizeof bad_cases / sizeof bad_cases[0])

START_TEST(test_bad_corpus)
{
    ck_assert_uint_ge(N_BAD, 20);
    for (size_t i = 0; i < N_BAD; i++) {
        const bad_case_t *c = &bad_cases[i];
        char rel[256];
        snprintf(rel, sizeof rel, "bad/%s", c->file);
        char *path = config_path(rel);
        tusk_topology_t *t = NULL;
        tusk_error_t err;
        int rc = tusk_topology_load(&t, path, &err);
        ck_assert_msg(rc == c->code, "%s: code %d, expected %d (%s)", c->file, rc, c->code,
                      rc ? err.message : "loaded");
        ck_assert_ptr_null(t);
        ck_assert_int_eq(err.code, c->code);
        /* FILE:LINE: first, then what is wrong. */
        char where[4300];
        if (c->line > 0)
            snprintf(where, sizeof where, "%s:%d: ", path, c->line);
        else
            snprintf(where, sizeof where, "%s: ", path);
        ck_assert_msg(strncmp(err.message, where, strlen(where)) == 0, "%s: message '%s' does not start with '%s'",
                      c->file, err.message, where);
        ck_assert_msg(strstr(err.message, c->expect) != NULL, "%s: message '%s' lacks '%s'", c->file, err.message,
                      c->expect);
        ck_assert_msg(strchr(err.message, '\n') == NULL, "%s: message on several lines", c->file);
        free(path);
    }
}
END_TEST

/* Every file of config/bad has an entry above (so none is left unchecked). */
START_TEST(test_bad_corpus_complete)
{
    char *dir = config_path("bad");
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
    unsigned files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        files++;
        bool listed = false;
        for (size_t i = 0; i < N_BAD && !listed; i++)
            listed = strcmp(bad_cases[i].file, e->d_name) == 0;
        ck_assert_msg(listed, "config/bad/%s has no entry in bad_cases", e->d_name);
    }
    closedir(d);
    ck_assert_uint_eq(files, N_BAD);
    free(dir);
}
END_TEST

/* ---- hostile input ------------------------------------------------------------ */

/* Copy tmpl to out with every "@F@" replaced by value. */
static void subst(char *out, size_t cap, const char *tmpl, const char *value)
{
    size_t n = 0, vlen = strlen(value);
    for (const char *p = tmpl; *p; p++) {
        if (strncmp(p, "@F@", 3) == 0) {
            ck_assert_uint_lt(n + vlen, cap);
            memcpy(out + n, value, vlen);
            n += vlen;
            p += 2;
        } else {
            ck_assert_uint_lt(n + 1, cap);
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

START_TEST(test_xxe_never_expands)
{
    /* A file only this test knows: its content must never show up. */
    char *secret = tu_temp_path();
    write_text(secret, "TOPSECRET-6c1f\n");
    const char *forms[] = {
        /* external general entity */
        "<?xml version=\"1.0\"?>\n<!DOCTYPE configuration [\n<!ENTITY e SYSTEM \"file://@F@\">\n]>\n"
        "<configuration><producer><name>&e;</name><binary_code>x</binary_code></producer>"
        "<consumer><name>c</name><binary_code>y</binary_code><data_source>&e;</data_source></consumer>"
        "</configuration>\n",
        /* external parameter entity */
        "<!DOCTYPE configuration [<!ENTITY % p SYSTEM \"file://@F@\"> %p;]>\n<configuration/>\n",
        /* external DTD */
        "<!DOCTYPE configuration SYSTEM \"file://@F@\">\n<configuration/>\n",
        /* the path itself, with no DOCTYPE: an undeclared entity */
        "<configuration><producer><name>&e;</name><binary_code>@F@</binary_code></producer></configuration>\n",
        /* exponential internal entities ("billion laughs") */
        "<!DOCTYPE c [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
        "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\"><!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">]>"
        "<configuration><producer><name>&d;</name><binary_code>@F@</binary_code></producer></configuration>\n",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char xml[2048];
        subst(xml, sizeof xml, forms[i], secret);
        tusk_topology_t *t = NULL;
        tusk_error_t err;
        int rc = tusk_topology_parse(&t, xml, strlen(xml), "xxe.xml", &err);
        ck_assert_msg(rc == TUSK_ETOPOLOGY, "form %zu: code %d", i, rc);
        ck_assert_ptr_null(t);
        ck_assert_msg(strstr(err.message, "TOPSECRET") == NULL, "form %zu leaked: %s", i, err.message);
        ck_assert_msg(strstr(err.message, "aaaaaaaaaaaaaaaaaaaa") == NULL, "form %zu expanded: %s", i, err.message);
        ck_assert_msg(strncmp(err.message, "xxe.xml:", 8) == 0, "form %zu: %s", i, err.message);
    }
    /* The corpus file naming /etc/passwd: refused, nothing of it shown. */
    char *path = config_path("bad/xxe.xml");
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_topology_load(&t, path, &err), TUSK_ETOPOLOGY);
    ck_assert_ptr_null(t);
    ck_assert_ptr_null(strstr(err.message, "root:"));
    ck_assert_ptr_null(strstr(err.message, "/bin/"));
    free(path);
    unlink(secret);
    free(secret);
}
END_TEST

START_TEST(test_missing_file)
{
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    const char *path = "/nonexistent/tusk/topology.xml";
    ck_assert_int_eq(tusk_topology_load(&t, path, &err), TUSK_EIO);
    ck_assert_ptr_null(t);
    tu_assert_error(&err, TUSK_EIO, path);
    tu_assert_error(&err, TUSK_EIO, strerror(ENOENT));
    /* A folder is no topology either. */
    char *dir = config_path("bad");
    ck_assert_int_ne(tusk_topology_load(&t, dir, &err), TUSK_OK);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(err.message, dir));
    free(dir);
}
END_TEST

START_TEST(test_size_limit)
{
    /* 16 MiB + 1 of blanks after a valid topology: refused unread. */
    size_t size = (16u << 20) + 1;
    char *big = malloc(size);
    ck_assert_ptr_nonnull(big);
    memset(big, ' ', size);
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_topology_parse(&t, big, size, "big.xml", &err), TUSK_ETOPOLOGY);
    tu_assert_error(&err, TUSK_ETOPOLOGY, "big.xml: too large");
    char *path = tu_temp_path();
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(big, 1, size, f), size);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(tusk_topology_load(&t, path, &err), TUSK_ETOPOLOGY);
    ck_assert_ptr_null(t);
    tu_assert_error(&err, TUSK_ETOPOLOGY, "too large");
    tu_assert_error(&err, TUSK_ETOPOLOGY, path);
    unlink(path);
    free(path);
    free(big);
}
END_TEST

START_TEST(test_bad_arguments)
{
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_topology_parse(NULL, "<a/>", 4, "x", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_topology_parse(&t, NULL, 4, "x", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_topology_load(NULL, "x", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_topology_load(&t, NULL, &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_topology_resolve(NULL, "/", &err), TUSK_EINVAL);
    /* A NULL error report is allowed everywhere. */
    ck_assert_int_eq(tusk_topology_parse(&t, "x", 1, "x", NULL), TUSK_ETOPOLOGY);
    ck_assert_ptr_null(t);
    ck_assert_uint_eq(tusk_topology_count(NULL), 0);
    ck_assert_ptr_null(tusk_topology_actor(NULL, 0));
    ck_assert_ptr_null(tusk_topology_name(NULL));
    ck_assert_int_eq(tusk_topology_find(NULL, "x"), -1);
    tusk_topology_destroy(NULL);
    ck_assert_str_eq(tusk_actor_class_name(TUSK_PRODUCER), "producer");
    ck_assert_str_eq(tusk_actor_class_name(TUSK_FILTER), "intermediary");
    ck_assert_str_eq(tusk_actor_class_name(TUSK_CONSUMER), "consumer");
    ck_assert_str_eq(tusk_actor_class_name((tusk_actor_class_t)7), "unknown");
}
END_TEST

/* ---- fine-grained cases from memory ------------------------------------------- */

START_TEST(test_whitespace_trimmed)
{
    tusk_topology_t *t = parse_ok("<configuration>\n"
                                  "  <producer>\n"
                                  "    <name>\n      reader\n    </name>\n"
                                  "    <binary_code>  file_producer\t</binary_code>\n"
                                  "    <hostname> daq01 </hostname>\n"
                                  "    <size> 4096 </size>\n"
                                  "    <parameter name=\"file\">  run 1.adf  </parameter>\n"
                                  "    <debug>\n      info\n    </debug>\n"
                                  "  </producer>\n"
                                  "  <consumer instances=\" 3 \">\n"
                                  "    <name>writer</name>\n"
                                  "    <binary_code>file_writer</binary_code>\n"
                                  "    <data_source>\n      reader</data_source>\n"
                                  "  </consumer>\n"
                                  "</configuration>\n");
    ck_assert_str_eq(tusk_topology_name(t), "inline.xml");
    const tusk_actor_spec_t *r = actor_named(t, "reader");
    ck_assert_str_eq(r->library, "file_producer");
    ck_assert_str_eq(r->hostname, "daq01");
    ck_assert_uint_eq(r->buffer_size, 4096);
    ck_assert_str_eq(param(r, "file"), "run 1.adf");
    ck_assert_str_eq(r->debug, "info");
    ck_assert_int_eq(r->line, 2);
    const tusk_actor_spec_t *w = actor_named(t, "writer");
    ck_assert_uint_eq(w->n_sources, 1);
    ck_assert_uint_eq(w->sources[0], 0);
    ck_assert_uint_eq(w->instances, 3);
    ck_assert_int_eq(w->line, 14);
    check_invariants(t);
    tusk_topology_destroy(&t);
}
END_TEST

/* NARVAL's own listing (seed 002, listing 1), with the data sources named
 * after the actors: every NARVAL element and attribute is accepted. */
START_TEST(test_narval_listing)
{
    tusk_topology_t *t = parse_ok("<configuration>\n"
                                  "  <producer>\n"
                                  "    <name>file_reader</name>\n"
                                  "    <hostname>narval01</hostname>\n"
                                  "    <binary_code>generic_producer</binary_code>\n"
                                  "    <output_buffer_name>data1</output_buffer_name>\n"
                                  "    <size output_buffer=\"data1\">1000000</size>\n"
                                  "    <port output_buffer=\"data1\">eth1</port>\n"
                                  "    <debug>info</debug>\n"
                                  "  </producer>\n"
                                  "\n"
                                  "  <intermediary input_buffers=\"1\" output_buffers=\"1\">\n"
                                  "    <name>filter</name>\n"
                                  "    <hostname>narval02</hostname>\n"
                                  "    <binary_code>generic_filter</binary_code>\n"
                                  "    <data_source source_port=\"eth1\" source_buffer=\"data1\">\n"
                                  "      file_reader</data_source>\n"
                                  "    <output_buffer_name>data2</output_buffer_name>\n"
                                  "    <size output_buffer=\"data2\">1000000</size>\n"
                                  "    <port output_buffer=\"data2\">eth1</port>\n"
                                  "    <debug>info</debug>\n"
                                  "  </intermediary>\n"
                                  "\n"
                                  "  <consumer>\n"
                                  "    <name>consumer</name>\n"
                                  "    <hostname>narval03</hostname>\n"
                                  "    <binary_code>generic_consumer</binary_code>\n"
                                  "    <data_source source_port=\"eth1\" source_buffer=\"data2\">\n"
                                  "      filter</data_source>\n"
                                  "    </consumer>\n"
                                  "  </configuration>\n");
    ck_assert_uint_eq(tusk_topology_count(t), 3);
    check_invariants(t);
    const tusk_actor_spec_t *f = tusk_topology_actor(t, 1);
    ck_assert_str_eq(f->name, "filter");
    ck_assert_str_eq(f->hostname, "narval02");
    ck_assert_str_eq(f->debug, "info");
    ck_assert_uint_eq(f->buffer_size, 1000000);
    ck_assert_uint_eq(f->sources[0], 0);
    ck_assert_int_eq(f->line, 12);
    ck_assert_str_eq(tusk_topology_actor(t, 2)->hostname, "narval03");
    ck_assert_ptr_null(tusk_topology_actor(t, 2)->debug);
    /* <port> is NARVAL's port type, kept; it is no address. */
    ck_assert_str_eq(f->port, "eth1");
    ck_assert_ptr_null(f->interface);
    ck_assert_ptr_null(tusk_topology_actor(t, 2)->port);
    /* The generic actors have no library until a script sets one. */
    for (unsigned i = 0; i < 3; i++)
        ck_assert_ptr_null(tusk_topology_actor(t, i)->narval_library);
    tusk_topology_destroy(&t);
}
END_TEST

/* The example topology of NARVAL's "Writing a C actor" page, as a NARVAL
 * user writes it (sizes 1_000_000, fifo ports, <log_level>, NARVAL's
 * generic actors): it loads, and keeps what NARVAL said. */
static const char narval_c_example[] =
    "<configuration>\n"
    "  <producer>\n"
    "    <name>data_transmitter</name>\n"
    "    <hostname>localhost</hostname>\n"
    "    <binary_code>generic_producer</binary_code>\n"
    "    <output_buffer_name>data</output_buffer_name>\n"
    "    <size output_buffer=\"data\">1_000_000</size>\n"
    "    <port output_buffer=\"data\">fifo</port>\n"
    "    <log_level>info</log_level>\n"
    "  </producer>\n"
    "  <intermediary input_buffers=\"1\" output_buffers=\"1\">\n"
    "    <name>data_filter</name>\n"
    "    <hostname>localhost</hostname>\n"
    "    <binary_code>generic_filter</binary_code>\n"
    "    <data_source source_port=\"fifo\" source_buffer=\"data\">data_transmitter</data_source>\n"
    "    <output_buffer_name>data_filtered</output_buffer_name>\n"
    "    <size output_buffer=\"data_filtered\">1_000_000</size>\n"
    "    <port output_buffer=\"data_filtered\">fifo</port>\n"
    "  </intermediary>\n"
    "  <consumer>\n"
    "    <name>data_receiver</name>\n"
    "    <hostname>localhost</hostname>\n"
    "    <binary_code>generic_consumer</binary_code>\n"
    "    <data_source source_port=\"fifo\" source_buffer=\"data_filtered\">data_filter</data_source>\n"
    "    <debug>info</debug>\n"
    "  </consumer>\n"
    "</configuration>\n";

START_TEST(test_narval_c_example)
{
    tusk_topology_t *t = parse_ok(narval_c_example);
    ck_assert_uint_eq(tusk_topology_count(t), 3);
    check_invariants(t);
    const tusk_actor_spec_t *p = actor_named(t, "data_transmitter"), *f = actor_named(t, "data_filter"),
                            *c = actor_named(t, "data_receiver");
    ck_assert_uint_eq(p->buffer_size, 1000000);
    ck_assert_uint_eq(f->buffer_size, 1000000);
    ck_assert_str_eq(p->port, "fifo");
    ck_assert_str_eq(p->log_level, "info");
    ck_assert_ptr_null(p->debug);
    ck_assert_ptr_null(f->log_level);
    ck_assert_str_eq(c->debug, "info");
    ck_assert_ptr_null(c->port);
    ck_assert_ptr_null(p->interface);
    ck_assert_ptr_null(p->config_dir);
    ck_assert_str_eq(p->library, "generic_producer");
    tusk_actor_class_t cls = TUSK_CONSUMER;
    ck_assert(tusk_topology_is_generic(f->library, &cls));
    ck_assert_int_eq(cls, TUSK_FILTER);
    ck_assert(tusk_topology_is_generic("generic_consumer", NULL));
    ck_assert(!tusk_topology_is_generic("generic_producers", NULL));
    ck_assert(!tusk_topology_is_generic("file_writer", &cls));
    ck_assert(!tusk_topology_is_generic(NULL, &cls));
    tusk_topology_destroy(&t);
    /* A producer carries output_buffers, a consumer input_buffers (NARVAL's
     * "Configuration Files" page), digits grouped too. */
    t = parse_ok("<configuration><producer output_buffers=\"1\"><name>p</name><binary_code>r</binary_code>"
                 "</producer><consumer input_buffers=\"1_0\"><name>c</name><binary_code>w</binary_code>"
                 "<data_source>p</data_source></consumer></configuration>");
    tusk_topology_destroy(&t);
    parse_fails("<configuration><producer><name>p</name><binary_code>r</binary_code></producer>"
                "<consumer output_buffers=\"1\"><name>c</name><binary_code>w</binary_code>"
                "<data_source>p</data_source></consumer></configuration>",
                TUSK_ETOPOLOGY, "<consumer> 'c': unknown attribute 'output_buffers' on <consumer>");
}
END_TEST

/* a -> b, a -> c, b -> d, c -> d, written backwards: a comes first, then c
 * and b in file order (c is written before b), then d. */
START_TEST(test_diamond_order)
{
    tusk_topology_t *t = parse_ok("<configuration>\n"
                                  "<consumer><name>d</name><binary_code>w</binary_code>"
                                  "<data_source>b</data_source><data_source>c</data_source></consumer>\n"
                                  "<intermediary><name>c</name><binary_code>p</binary_code>"
                                  "<data_source>a</data_source></intermediary>\n"
                                  "<intermediary><name>b</name><binary_code>p</binary_code>"
                                  "<data_source>a</data_source></intermediary>\n"
                                  "<producer><name>a</name><binary_code>r</binary_code></producer>\n"
                                  "</configuration>\n");
    check_invariants(t);
    const char *order[] = {"a", "c", "b", "d"};
    for (unsigned i = 0; i < 4; i++)
        ck_assert_str_eq(tusk_topology_actor(t, i)->name, order[i]);
    const tusk_actor_spec_t *a = tusk_topology_actor(t, 0), *d = tusk_topology_actor(t, 3);
    ck_assert_uint_eq(a->n_sinks, 2);
    ck_assert_uint_eq(a->sinks[0], 1); /* c */
    ck_assert_uint_eq(a->sinks[1], 2); /* b */
    ck_assert_uint_eq(d->n_sources, 2);
    ck_assert_uint_eq(d->sources[0], 2); /* b, as written */
    ck_assert_uint_eq(d->sources[1], 1); /* c */
    ck_assert_int_eq(d->line, 2);
    ck_assert_int_eq(a->line, 5);
    tusk_topology_destroy(&t);
}
END_TEST

/* Independent actors keep file order; an actor's sources keep the order
 * of its <data_source> elements whatever the order of the actors. */
START_TEST(test_fanin_source_order)
{
    tusk_topology_t *t = parse_ok("<configuration>\n"
                                  "<producer><name>p1</name><binary_code>r</binary_code></producer>\n"
                                  "<producer><name>p2</name><binary_code>r</binary_code></producer>\n"
                                  "<consumer><name>x</name><binary_code>w</binary_code>"
                                  "<data_source>p3</data_source><data_source>p1</data_source>"
                                  "<data_source>p2</data_source></consumer>\n"
                                  "<producer><name>p3</name><binary_code>r</binary_code></producer>\n"
                                  "<consumer><name>y</name><binary_code>w</binary_code>"
                                  "<data_source>p2</data_source></consumer>\n"
                                  "</configuration>\n");
    check_invariants(t);
    const char *order[] = {"p1", "p2", "p3", "x", "y"};
    for (unsigned i = 0; i < 5; i++)
        ck_assert_str_eq(tusk_topology_actor(t, i)->name, order[i]);
    const tusk_actor_spec_t *x = actor_named(t, "x");
    ck_assert_uint_eq(x->n_sources, 3);
    ck_assert_uint_eq(x->sources[0], 2);
    ck_assert_uint_eq(x->sources[1], 0);
    ck_assert_uint_eq(x->sources[2], 1);
    const tusk_actor_spec_t *p2 = actor_named(t, "p2");
    ck_assert_uint_eq(p2->n_sinks, 2);
    ck_assert_uint_eq(p2->sinks[0], 3);
    ck_assert_uint_eq(p2->sinks[1], 4);
    tusk_topology_destroy(&t);
}
END_TEST

START_TEST(test_defaults_and_limits)
{
    tusk_topology_t *t = parse_ok("<configuration>"
                                  "<producer instances=\"256\"><name>p</name><binary_code>r</binary_code>"
                                  "<size>64</size></producer>"
                                  "<intermediary><name>f</name><binary_code>q</binary_code>"
                                  "<data_source>p</data_source><size>1073741824</size></intermediary>"
                                  "<consumer><name>c</name><binary_code>w</binary_code>"
                                  "<data_source>f</data_source>"
                                  "<port>eth0</port><output_buffer_name>none</output_buffer_name></consumer>"
                                  "</configuration>");
    const tusk_actor_spec_t *p = actor_named(t, "p"), *f = actor_named(t, "f"), *c = actor_named(t, "c");
    ck_assert_uint_eq(p->instances, TUSK_MAX_INSTANCES);
    ck_assert_uint_eq(p->buffer_size, TUSK_MIN_BUFFER_SIZE);
    ck_assert_uint_eq(f->buffer_size, TUSK_MAX_BUFFER_SIZE);
    ck_assert_uint_eq(f->instances, 1);
    ck_assert_str_eq(c->hostname, "localhost");
    ck_assert_uint_eq(c->buffer_size, 0);
    ck_assert_uint_eq(c->n_params, 0);
    ck_assert_ptr_nonnull(c->param_keys);
    ck_assert_ptr_null(c->library_path);
    ck_assert_int_eq(c->line, 1);
    check_invariants(t);
    tusk_topology_destroy(&t);
}
END_TEST

/* The distributed-run settings: defaults, values, and bad values. */
START_TEST(test_run_policies)
{
    tusk_topology_t *t = parse_ok("<configuration>"
                                  "<producer><name>p</name><binary_code>r</binary_code></producer>"
                                  "<intermediary instances=\"3\" hwm=\"2\" restart=\"on-failure\" "
                                  "on_failure=\"continue\"><name>f</name><binary_code>q</binary_code>"
                                  "<data_source>p</data_source><address>10.0.0.2</address><port>eth1</port></intermediary>"
                                  "<consumer hwm=\"100\" restart=\"no\" on_failure=\"stop\"><name>c</name>"
                                  "<binary_code>w</binary_code><data_source>f</data_source></consumer>"
                                  "</configuration>");
    const tusk_actor_spec_t *p = actor_named(t, "p"), *f = actor_named(t, "f"), *c = actor_named(t, "c");
    ck_assert_uint_eq(p->hwm, TUSK_DEFAULT_HWM);
    ck_assert(!p->restart);
    ck_assert(!p->continue_on_failure);
    ck_assert_ptr_null(p->interface);
    ck_assert_uint_eq(f->hwm, 2);
    ck_assert(f->restart);
    ck_assert(f->continue_on_failure);
    ck_assert_str_eq(f->interface, "10.0.0.2");
    ck_assert_str_eq(f->port, "eth1");
    ck_assert_uint_eq(c->hwm, 100);
    ck_assert(!c->restart);
    ck_assert(!c->continue_on_failure);
    tusk_topology_destroy(&t);

    static const struct {
        const char *attr, *needle;
    } bad[] = {
        {"hwm=\"0\"", "bad hwm '0'"},
        {"hwm=\"70000\"", "bad hwm '70000'"},
        {"restart=\"always\"", "<producer> 'p': bad restart 'always': expected 'no' or 'on-failure'"},
        {"on_failure=\"ignore\"", "<producer> 'p': bad on_failure 'ignore': expected 'stop' or 'continue'"},
        {"hook_timeout=\"604801\"", "bad hook_timeout '604801': expected whole seconds in [1, 604800]"},
        {"instances=\"+0\"", "bad instances '+0': expected a count in [1, 256]"},
        /* NARVAL's buffer counts belong to filters only. */
        {"input_buffers=\"1\"", "<producer> 'p': unknown attribute 'input_buffers' on <producer>"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char xml[1024];
        snprintf(xml, sizeof xml,
                 "<configuration><producer %s><name>p</name><binary_code>r</binary_code></producer>"
                 "<consumer><name>c</name><binary_code>w</binary_code><data_source>p</data_source></consumer>"
                 "</configuration>",
                 bad[i].attr);
        parse_fails(xml, TUSK_ETOPOLOGY, bad[i].needle);
    }
    /* A filter's NARVAL buffer counts are checked (the loader's table has
     * them, not only the schema), whatever their size. */
    static const struct {
        const char *attr, *needle;
    } filter_bad[] = {
        {"input_buffers=\"x\"", "<intermediary> 'f': bad input_buffers 'x': expected a count of buffers, 0 or more"},
        {"output_buffers=\"-1\"", "<intermediary> 'f': bad output_buffers '-1'"},
        {"output_buffers=\"99999999999999999999999\"", NULL},
    };
    for (size_t i = 0; i < sizeof filter_bad / sizeof filter_bad[0]; i++) {
        char xml[1024];
        snprintf(xml, sizeof xml,
                 "<configuration><producer><name>p</name><binary_code>r</binary_code></producer>"
                 "<intermediary %s><name>f</name><binary_code>q</binary_code><data_source>p</data_source>"
                 "</intermediary><consumer><name>c</name><binary_code>w</binary_code><data_source>f</data_source>"
                 "</consumer></configuration>",
                 filter_bad[i].attr);
        if (filter_bad[i].needle) {
            parse_fails(xml, TUSK_ETOPOLOGY, filter_bad[i].needle);
        } else {
            t = parse_ok(xml);
            tusk_topology_destroy(&t);
        }
    }
}
END_TEST

START_TEST(test_inline_errors)
{
    const char *head = "<configuration>\n<producer><name>p</name><binary_code>r</binary_code></producer>\n";
    char xml[1024];
    /* Empty data source, bad data source name, stray text in an actor. */
    snprintf(xml, sizeof xml, "%s<consumer><name>c</name><binary_code>w</binary_code>"
             "<data_source> </data_source></consumer>\n</configuration>", head);
    parse_fails(xml, TUSK_ETOPOLOGY, "inline.xml:3: <consumer> 'c': empty <data_source>");
    snprintf(xml, sizeof xml, "%s<consumer><name>c</name><binary_code>w</binary_code>"
             "<data_source>a b</data_source></consumer>\n</configuration>", head);
    parse_fails(xml, TUSK_ETOPOLOGY, "inline.xml:3: <consumer> 'c': bad data source 'a b'");
    snprintf(xml, sizeof xml, "%s<consumer>hello<name>c</name><binary_code>w</binary_code>"
             "<data_source>p</data_source></consumer>\n</configuration>", head);
    parse_fails(xml, TUSK_ETOPOLOGY, "inline.xml:3: <consumer> 'c': unexpected text 'hello'");
    /* What only the schema checks (namespaces) is reported with the actor. */
    snprintf(xml, sizeof xml, "%s<x:consumer xmlns:x=\"urn:x\"><name>c</name><binary_code>w</binary_code>"
             "<data_source>p</data_source></x:consumer>\n</configuration>", head);
    parse_fails(xml, TUSK_ETOPOLOGY, "inline.xml:3: <consumer> 'c': schema violation: ");
    /* A parameter without a name; an empty hostname; two sizes. */
    parse_fails("<configuration><producer><name>p</name><binary_code>r</binary_code>"
                "<parameter>x</parameter></producer></configuration>",
                TUSK_ETOPOLOGY, "<producer> 'p': <parameter> without a name attribute");
    parse_fails("<configuration><producer><name>p</name><binary_code>r</binary_code>"
                "<hostname/></producer></configuration>",
                TUSK_ETOPOLOGY, "<producer> 'p': empty <hostname>");
    parse_fails("<configuration><producer><name>p</name><binary_code>r</binary_code>"
                "<size>100</size><size>200</size></producer></configuration>",
                TUSK_ETOPOLOGY, "more than one <size>");
    /* An unread intermediary output (not only a producer's). */
    snprintf(xml, sizeof xml, "%s<intermediary><name>f</name><binary_code>q</binary_code>"
             "<data_source>p</data_source></intermediary>\n"
             "<consumer><name>c</name><binary_code>w</binary_code><data_source>p</data_source></consumer>\n"
             "</configuration>", head);
    parse_fails(xml, TUSK_ETOPOLOGY, "inline.xml:3: <intermediary> 'f': output of intermediary 'f' is not read");
    /* Messages are one line even when the file's text is not. */
    parse_fails("<configuration><producer><name>a\nb</name><binary_code>r</binary_code></producer></configuration>",
                TUSK_ETOPOLOGY, "'a b': bad actor name");
    parse_fails("<configuration/>", TUSK_ETOPOLOGY, "inline.xml:1: <configuration>: no actors");
    parse_fails("<configuration><producer><name>p</name><binary_code>r</binary_code>"
                "<size colour=\"red\">100</size></producer></configuration>",
                TUSK_ETOPOLOGY, "inline.xml:1: <producer> 'p': unknown attribute 'colour' on <size>");
    parse_fails("<configuration version=\"2\"><producer><name>p</name><binary_code>r</binary_code>"
                "</producer></configuration>",
                TUSK_ETOPOLOGY, "inline.xml:1: <configuration>: unknown attribute 'version'");
    parse_fails("<configuration>x<producer><name>p</name><binary_code>r</binary_code>"
                "</producer></configuration>",
                TUSK_ETOPOLOGY, "inline.xml:1: <configuration>: unexpected text 'x'");
    /* Deep nesting stops at libxml2's depth limit, without recursion here. */
    {
        size_t depth = 5000, n = 0;
        char *deep = malloc(depth * 7 + 256);
        ck_assert_ptr_nonnull(deep);
        n += (size_t)sprintf(deep, "<configuration><producer><name>");
        for (size_t i = 0; i < depth; i++)
            n += (size_t)sprintf(deep + n, "<a>");
        for (size_t i = 0; i < depth; i++)
            n += (size_t)sprintf(deep + n, "</a>");
        n += (size_t)sprintf(deep + n, "</name></producer></configuration>");
        tusk_topology_t *td = NULL;
        tusk_error_t e2;
        ck_assert_int_eq(tusk_topology_parse(&td, deep, n, "deep.xml", &e2), TUSK_ETOPOLOGY);
        ck_assert_ptr_null(td);
        ck_assert_ptr_nonnull(strstr(e2.message, "deep.xml:1: not well-formed XML"));
        free(deep);
    }
    /* A NUL byte inside the text; no name given. */
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    const char nul[] = "<configuration>\0</configuration>";
    ck_assert_int_eq(tusk_topology_parse(&t, nul, sizeof nul - 1, NULL, &err), TUSK_ETOPOLOGY);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(err.message, "not well-formed XML"));
}
END_TEST

/* ---- actor names: one rule, in the loader and in the schema ----------------- */

/* Does config/topology.rng alone accept `xml`? */
static bool schema_accepts(xmlRelaxNGPtr schema, const char *xml)
{
    xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "name.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
                                                                        XML_PARSE_NOWARNING);
    ck_assert_ptr_nonnull(doc);
    xmlRelaxNGValidCtxtPtr v = xmlRelaxNGNewValidCtxt(schema);
    ck_assert_ptr_nonnull(v);
    xmlRelaxNGSetValidStructuredErrors(v, NULL, NULL);
    bool ok = xmlRelaxNGValidateDoc(v, doc) == 0;
    xmlRelaxNGFreeValidCtxt(v);
    xmlFreeDoc(doc);
    return ok;
}

/* Silence libxml2's generic error output while the schema is parsed. */
static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

/* A name is an actor name for the loader exactly when it is for the
 * schema (both the <name> and a <data_source>), on fixed cases and on
 * random strings; the loader's refusals say "bad actor name". */
START_TEST(test_actor_name_rule)
{
    char *rng = config_path("topology.rng");
    xmlSetGenericErrorFunc(NULL, quiet);
    xmlRelaxNGParserCtxtPtr pc = xmlRelaxNGNewParserCtxt(rng);
    ck_assert_ptr_nonnull(pc);
    xmlRelaxNGPtr schema = xmlRelaxNGParse(pc);
    xmlRelaxNGFreeParserCtxt(pc);
    ck_assert_msg(schema != NULL, "%s does not parse", rng);
    static const struct {
        const char *name;
        bool ok;
    } fixed[] = {
        {"reader", true},      {"_x", true},         {"psa-fast", true},   {"a1", true},
        {"crystal_00A", true}, {"eb.main", true},    {"a.b_c.d-e", true},  {"a1.x0", true},
        {"a1.0", false},       {"x.12", false},      {"9lives", false},    {"-x", false},
        {".x", false},         {"x.", false},        {"a..b", false},      {"a.-b", false},
        {"run/reader", false}, {"a b", false},       {"a:b", false},       {"a\tb", false},
        {"\xc3\xa9t\xc3\xa9", false},
    };
    static const char *const pieces[] = {"a", "Z", "_", "0", "9", "-", ".", ":", "/", " ", "\t", "\x7f", "\xc3\xa9"};
    for (unsigned i = 0; i < 600; i++) {
        char name[80];
        bool ok_expected = false;
        if (i < sizeof fixed / sizeof fixed[0]) {
            snprintf(name, sizeof name, "%s", fixed[i].name);
            ok_expected = fixed[i].ok;
        } else if (i < 300) {
            /* Mostly valid shapes, some too long. */
            unsigned len = 1 + tu_below(70);
            for (unsigned k = 0; k < len; k++)
                name[k] = "abXY_09-."[tu_below(9)];
            name[len] = '\0';
        } else {
            unsigned len = 1 + tu_below(12);
            name[0] = '\0';
            for (unsigned k = 0; k < len; k++)
                strcat(name, pieces[tu_below(sizeof pieces / sizeof pieces[0])]);
        }
        /* Names with blanks at either end are trimmed by both; skip. */
        size_t len = strlen(name);
        if (name[0] == ' ' || name[0] == '\t' || name[len - 1] == ' ' || name[len - 1] == '\t')
            continue;
        char esc[400] = "";
        for (size_t k = 0; k < len; k++) {
            char piece[16];
            unsigned char c = (unsigned char)name[k];
            if (c == '\t' || c == 0x7f)
                snprintf(piece, sizeof piece, "&#%u;", c);
            else
                snprintf(piece, sizeof piece, "%c", c);
            strcat(esc, piece);
        }
        for (int where = 0; where < 2; where++) {
            char xml[1024];
            if (where == 0)
                snprintf(xml, sizeof xml,
                         "<configuration><producer><name>%s</name><binary_code>r</binary_code></producer>"
                         "<consumer><name>c</name><binary_code>w</binary_code><data_source>%s</data_source>"
                         "</consumer></configuration>",
                         esc, esc);
            else
                snprintf(xml, sizeof xml,
                         "<configuration><producer><name>p</name><binary_code>r</binary_code></producer>"
                         "<consumer><name>c</name><binary_code>w</binary_code><data_source>%s</data_source>"
                         "</consumer></configuration>",
                         esc);
            tusk_topology_t *t = NULL;
            tusk_error_t err;
            int rc = tusk_topology_parse(&t, xml, strlen(xml), "name.xml", &err);
            bool schema_ok = schema_accepts(schema, xml);
            bool loader_ok = rc == TUSK_OK || (where == 1 && strstr(err.message, "unknown actor") != NULL);
            ck_assert_msg(loader_ok == schema_ok, "'%s' (%s): loader %s (%s), schema %s", name,
                          where ? "data source" : "name", loader_ok ? "accepts" : "refuses",
                          rc ? err.message : "loaded", schema_ok ? "accepts" : "refuses");
            if (i < sizeof fixed / sizeof fixed[0])
                ck_assert_msg(loader_ok == ok_expected, "'%s': %s", name, rc ? err.message : "loaded");
            if (!loader_ok)
                ck_assert_msg(strstr(err.message, where ? "bad data source" : "bad actor name") != NULL, "'%s': %s",
                              name, err.message);
            tusk_topology_destroy(&t);
        }
    }
    xmlRelaxNGFree(schema);
    xmlSetGenericErrorFunc(NULL, NULL);
    free(rng);
}
END_TEST

/* A size is a size for the loader exactly when it is for the schema, on
 * fixed cases and random strings of digits, underscores and signs: plain
 * digits, or digits grouped by single underscores (NARVAL's 1_000_000),
 * within the range (the schema's grouped form leaves the range to the
 * loader: those values are left out of the comparison). */
START_TEST(test_grouped_count_rule)
{
    char *rng = config_path("topology.rng");
    xmlSetGenericErrorFunc(NULL, quiet);
    xmlRelaxNGParserCtxtPtr pc = xmlRelaxNGNewParserCtxt(rng);
    ck_assert_ptr_nonnull(pc);
    xmlRelaxNGPtr schema = xmlRelaxNGParse(pc);
    xmlRelaxNGFreeParserCtxt(pc);
    ck_assert_msg(schema != NULL, "%s does not parse", rng);
    static const struct {
        const char *text;
        unsigned long long value; /* 0: refused */
    } fixed[] = {
        {"1_000_000", 1000000}, {"1000000", 1000000}, {"4_096", 4096},     {"+65_536", 65536},
        {"1_0_0_0", 1000},      {"64", 64},           {"1_073_741_824", 1073741824},
        {"1__000", 0},          {"_1000", 0},         {"1000_", 0},        {"1_000_", 0},
        {"1,000", 0},           {"1 000", 0},         {"0x1000", 0},       {"+_1000", 0},
        {"-1_000", 0},          {"1_073_741_825", 0}, {"6_3", 0},          {"", 0},
    };
    static const char pieces[] = "0123456789___+-";
    for (unsigned i = 0; i < 800; i++) {
        char text[32];
        unsigned long long want = 0;
        bool fixed_case = i < sizeof fixed / sizeof fixed[0];
        if (fixed_case) {
            snprintf(text, sizeof text, "%s", fixed[i].text);
            want = fixed[i].value;
        } else {
            unsigned len = 1 + tu_below(14);
            for (unsigned k = 0; k < len; k++)
                text[k] = pieces[tu_below(sizeof pieces - 1)];
            text[len] = '\0';
        }
        char xml[512];
        snprintf(xml, sizeof xml,
                 "<configuration><producer><name>p</name><binary_code>r</binary_code><size>%s</size></producer>"
                 "<consumer><name>c</name><binary_code>w</binary_code><data_source>p</data_source></consumer>"
                 "</configuration>",
                 text);
        tusk_topology_t *t = NULL;
        tusk_error_t err;
        bool loader_ok = tusk_topology_parse(&t, xml, strlen(xml), "size.xml", &err) == TUSK_OK;
        bool schema_ok = schema_accepts(schema, xml);
        if (loader_ok) {
            /* The value is the digits without the underscores. */
            char digits[32];
            size_t n = 0;
            for (const char *c = text; *c; c++)
                if (*c >= '0' && *c <= '9')
                    digits[n++] = *c;
            digits[n] = '\0';
            ck_assert_uint_eq(actor_named(t, "p")->buffer_size, strtoull(digits, NULL, 10));
            ck_assert_msg(schema_ok, "'%s': the loader takes it, the schema refuses it", text);
        } else {
            ck_assert_msg(strstr(err.message, "bad size") != NULL || strstr(err.message, "empty <size>") != NULL,
                          "'%s': %s", text, err.message);
            /* The schema may take a grouped number out of range. */
            bool grouped = strchr(text, '_') != NULL;
            ck_assert_msg(!schema_ok || grouped, "'%s': the schema takes it, the loader refuses it (%s)", text,
                          err.message);
        }
        if (fixed_case) {
            ck_assert_msg(loader_ok == (want != 0), "'%s': %s", text, loader_ok ? "loaded" : err.message);
            if (want)
                ck_assert_uint_eq(actor_named(t, "p")->buffer_size, want);
        }
        tusk_topology_destroy(&t);
    }
    xmlRelaxNGFree(schema);
    xmlSetGenericErrorFunc(NULL, NULL);
    free(rng);
}
END_TEST

/* ---- the schema against the specification table ------------------------------ */

/* Generated from config/topology.rng (runtime/topology_schema.c, compiled
 * into this test too): the very text libtusk validates with. */
extern const char tusk_topology_schema[];
extern const unsigned long tusk_topology_schema_size;

#define RNG_NS "http://relaxng.org/ns/structure/1.0"
#define RNG_ANNOTATIONS_NS "http://relaxng.org/ns/compatibility/annotations/1.0"
#define TUSK_RNG_NS "urn:x-tusk:topology"
#define SCHEMA_ITEMS 32

/* What the schema says of one attribute or child element. */
typedef struct schema_item {
    char name[48];
    bool element;
    unsigned min, max;          /* occurrences; max TOPO_MANY: any */
    char type[160];             /* as type_of writes it */
    char dflt[48];              /* a:defaultValue / t:default, "" for none */
    bool extension;             /* t:extension="true": tusk's, not NARVAL's */
    xmlNodePtr node;
} schema_item_t;

typedef struct schema_walk {
    xmlNodePtr grammar;
    schema_item_t item[SCHEMA_ITEMS];
    unsigned n;
} schema_walk_t;

static bool rng_is(xmlNodePtr n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && strcmp((const char *)n->ns->href, RNG_NS) == 0 &&
           (!name || strcmp((const char *)n->name, name) == 0);
}

/* An attribute's value (the caller frees it), "" when absent. */
static char *prop(xmlNodePtr n, const char *name, const char *ns)
{
    xmlChar *v = ns ? xmlGetNsProp(n, BAD_CAST name, BAD_CAST ns) : xmlGetNoNsProp(n, BAD_CAST name);
    char *s = strdup(v ? (const char *)v : "");
    xmlFree(v);
    ck_assert_ptr_nonnull(s);
    return s;
}

static xmlNodePtr rng_define(xmlNodePtr grammar, const char *name)
{
    for (xmlNodePtr d = grammar->children; d; d = d->next) {
        if (!rng_is(d, "define"))
            continue;
        char *dn = prop(d, "name", NULL);
        bool hit = strcmp(dn, name) == 0;
        free(dn);
        if (hit)
            return d;
    }
    ck_abort_msg("schema: no <define name=\"%s\">", name);
    return NULL;
}

static void type_of(xmlNodePtr grammar, xmlNodePtr n, char *out, size_t cap);

/* Words for a <data> pattern. */
static void data_words(xmlNodePtr c, char *out, size_t cap)
{
    char *t = prop(c, "type", NULL);
    unsigned long long lo = strcmp(t, "positiveInteger") == 0 ? 1 : 0, hi = TOPO_NO_MAX;
    bool integer = strcmp(t, "positiveInteger") == 0 || strcmp(t, "nonNegativeInteger") == 0;
    for (xmlNodePtr p = c->children; p; p = p->next)
        if (rng_is(p, "param")) {
            char *pn = prop(p, "name", NULL);
            xmlChar *pv = xmlNodeGetContent(p);
            unsigned long long v = strtoull((const char *)pv, NULL, 10);
            if (strcmp(pn, "minInclusive") == 0 && v > lo)
                lo = v;
            else if (strcmp(pn, "maxInclusive") == 0)
                hi = v;
            else
                integer = false;
            free(pn);
            xmlFree(pv);
        }
    if (integer && hi == TOPO_NO_MAX)
        snprintf(out, cap, "count in [%llu, -]", lo);
    else if (integer)
        snprintf(out, cap, "count in [%llu, %llu]", lo, hi);
    else
        snprintf(out, cap, "data %s", t);
    free(t);
}

/* The type of the content of n (an <attribute>, <element> or <define>;
 * attributes and what holds them are skipped), in the words of spec_type
 * below. A <choice> of values is "one of ..."; a <choice> of an integer
 * type and the grouped_count.type is the integer's words and " or
 * grouped"; a reference to another define is that define's type. */
static void type_of(xmlNodePtr grammar, xmlNodePtr n, char *out, size_t cap)
{
    snprintf(out, cap, "empty");
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!rng_is(c, NULL) || rng_is(c, "attribute") || rng_is(c, "optional"))
            continue;
        const char *what = (const char *)c->name;
        if (strcmp(what, "text") == 0) {
            snprintf(out, cap, "text");
        } else if (strcmp(what, "ref") == 0) {
            char *r = prop(c, "name", NULL);
            if (strcmp(r, "actor_name.type") == 0)
                snprintf(out, cap, "actor name");
            else if (strcmp(r, "name.type") == 0)
                snprintf(out, cap, "parameter name");
            else if (strcmp(r, "nonempty.type") == 0)
                snprintf(out, cap, "non-empty text");
            else if (strcmp(r, "grouped_count.type") == 0)
                snprintf(out, cap, "grouped");
            else
                type_of(grammar, rng_define(grammar, r), out, cap);
            free(r);
        } else if (strcmp(what, "choice") == 0) {
            bool values = false, data = false, grouped = false;
            size_t used = (size_t)snprintf(out, cap, "one of");
            for (xmlNodePtr v = c->children; v; v = v->next) {
                if (rng_is(v, "value")) {
                    xmlChar *t = xmlNodeGetContent(v);
                    used += (size_t)snprintf(out + used, cap - used, " %s", (const char *)t);
                    xmlFree(t);
                    values = true;
                } else if (rng_is(v, "data") && !data) {
                    data_words(v, out, cap);
                    data = true;
                } else if (rng_is(v, "ref")) {
                    char *r = prop(v, "name", NULL);
                    grouped |= strcmp(r, "grouped_count.type") == 0;
                    free(r);
                }
            }
            if (data && values)
                snprintf(out, cap, "a choice tusk's table cannot say");
            else if (data && grouped)
                snprintf(out + strlen(out), cap - strlen(out), " or grouped");
        } else if (strcmp(what, "data") == 0) {
            data_words(c, out, cap);
        }
    }
}

/* Collect the attributes and elements a pattern allows, with their
 * occurrences (min, max) as the enclosing patterns make them. */
static void walk_pattern(schema_walk_t *w, xmlNodePtr pattern, unsigned min, unsigned max)
{
    for (xmlNodePtr c = pattern->children; c; c = c->next) {
        if (!rng_is(c, NULL))
            continue;
        const char *what = (const char *)c->name;
        if (strcmp(what, "ref") == 0) {
            char *r = prop(c, "name", NULL);
            walk_pattern(w, rng_define(w->grammar, r), min, max);
            free(r);
        } else if (strcmp(what, "optional") == 0) {
            walk_pattern(w, c, 0, max);
        } else if (strcmp(what, "zeroOrMore") == 0) {
            walk_pattern(w, c, 0, TOPO_MANY);
        } else if (strcmp(what, "oneOrMore") == 0) {
            walk_pattern(w, c, min, TOPO_MANY);
        } else if (strcmp(what, "interleave") == 0 || strcmp(what, "group") == 0) {
            walk_pattern(w, c, min, max);
        } else if (strcmp(what, "choice") == 0) {
            walk_pattern(w, c, 0, max); /* each alternative may be absent */
        } else if (strcmp(what, "attribute") == 0 || strcmp(what, "element") == 0) {
            ck_assert_uint_lt(w->n, SCHEMA_ITEMS);
            schema_item_t *it = &w->item[w->n++];
            memset(it, 0, sizeof *it);
            char *name = prop(c, "name", NULL);
            char *d = prop(c, what[0] == 'a' ? "defaultValue" : "default",
                           what[0] == 'a' ? RNG_ANNOTATIONS_NS : TUSK_RNG_NS);
            snprintf(it->name, sizeof it->name, "%s", name);
            snprintf(it->dflt, sizeof it->dflt, "%s", d);
            free(name);
            free(d);
            char *ext = prop(c, "extension", TUSK_RNG_NS);
            it->extension = strcmp(ext, "true") == 0;
            free(ext);
            it->element = what[0] == 'e';
            it->min = min;
            it->max = max;
            it->node = c;
            type_of(w->grammar, c, it->type, sizeof it->type);
        }
    }
}

/* The same words for a value of the table. */
static void spec_type(const tusk_topo_value_t *v, bool may_be_empty, char *out, size_t cap)
{
    switch (v->type) {
    case TOPO_TEXT:
        snprintf(out, cap, may_be_empty ? "text" : "non-empty text");
        break;
    case TOPO_ACTOR_NAME:
        snprintf(out, cap, "actor name");
        break;
    case TOPO_PARAM_NAME:
        snprintf(out, cap, "parameter name");
        break;
    case TOPO_COUNT:
        if (v->max == TOPO_NO_MAX)
            snprintf(out, cap, "count in [%llu, -]%s", v->min, v->grouped ? " or grouped" : "");
        else
            snprintf(out, cap, "count in [%llu, %llu]%s", v->min, v->max, v->grouped ? " or grouped" : "");
        break;
    case TOPO_CHOICE: {
        size_t used = (size_t)snprintf(out, cap, "one of");
        for (unsigned i = 0; v->choices[i]; i++)
            used += (size_t)snprintf(out + used, cap - used, " %s", v->choices[i]);
        break;
    }
    }
}

static void spec_default(const tusk_topo_value_t *v, char *out, size_t cap)
{
    out[0] = '\0';
    if (v->type == TOPO_TEXT && v->dflt_text)
        snprintf(out, cap, "%s", v->dflt_text);
    else if (v->has_default && v->type == TOPO_CHOICE)
        snprintf(out, cap, "%s", v->choices[v->dflt]);
    else if (v->has_default)
        snprintf(out, cap, "%llu", v->dflt);
}

/* Append a difference to `diff`. */
static void differ(char *diff, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void differ(char *diff, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(diff);
    if (used + 2 >= cap)
        return;
    if (used)
        diff[used++] = '\n', diff[used] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diff + used, cap - used, fmt, ap);
    va_end(ap);
}

static const schema_item_t *find_item(const schema_walk_t *w, const char *name, bool element)
{
    for (unsigned i = 0; i < w->n; i++)
        if (w->item[i].element == element && strcmp(w->item[i].name, name) == 0)
            return &w->item[i];
    return NULL;
}

/* The attributes an element pattern allows against the table's. */
static void compare_attrs(const schema_walk_t *w, const char *where, const tusk_topo_attr_t *attrs, unsigned n,
                          int cls, char *diff, size_t cap)
{
    for (unsigned i = 0; i < n; i++) {
        const tusk_topo_attr_t *a = &attrs[i];
        if (!(a->classes & TOPO_CLASS(cls)))
            continue;
        const schema_item_t *it = find_item(w, a->name, false);
        if (!it) {
            differ(diff, cap, "%s: attribute %s is in the table, not in the schema", where, a->name);
            continue;
        }
        char type[160], dflt[48];
        spec_type(&a->value, true, type, sizeof type);
        spec_default(&a->value, dflt, sizeof dflt);
        if ((it->min > 0) != a->required)
            differ(diff, cap, "%s: attribute %s is %s in the table, %s in the schema", where, a->name,
                   a->required ? "required" : "optional", it->min ? "required" : "optional");
        if (strcmp(type, it->type) != 0)
            differ(diff, cap, "%s: attribute %s: %s in the table, %s in the schema", where, a->name, type, it->type);
        if (strcmp(dflt, it->dflt) != 0)
            differ(diff, cap, "%s: attribute %s: default '%s' in the table, '%s' in the schema", where, a->name, dflt,
                   it->dflt);
        if (a->extension != it->extension)
            differ(diff, cap, "%s: attribute %s is %s in the table, %s in the schema", where, a->name,
                   a->extension ? "tusk's" : "NARVAL's", it->extension ? "tusk's" : "NARVAL's");
    }
    for (unsigned k = 0; k < w->n; k++)
        if (!w->item[k].element) {
            bool known = false;
            for (unsigned i = 0; i < n && !known; i++)
                known = (attrs[i].classes & TOPO_CLASS(cls)) && strcmp(attrs[i].name, w->item[k].name) == 0;
            if (!known)
                differ(diff, cap, "%s: attribute %s is in the schema, not in the table", where, w->item[k].name);
        }
}

/* Every difference between the schema text and the table, one a line
 * ("" when they agree). */
static void compare_schema(const char *rng, size_t size, char *diff, size_t cap)
{
    diff[0] = '\0';
    xmlDocPtr doc = xmlReadMemory(rng, (int)size, "topology.rng", NULL, XML_PARSE_NONET | XML_PARSE_NOBLANKS);
    ck_assert_msg(doc != NULL, "the schema is not well-formed XML");
    schema_walk_t *w = calloc(1, sizeof *w);
    ck_assert_ptr_nonnull(w);
    w->grammar = xmlDocGetRootElement(doc);
    ck_assert(rng_is(w->grammar, "grammar"));
    /* <start>: the root element, with no attributes. */
    xmlNodePtr start = NULL;
    for (xmlNodePtr c = w->grammar->children; c && !start; c = c->next)
        if (rng_is(c, "start"))
            start = c;
    ck_assert_ptr_nonnull(start);
    walk_pattern(w, start, 1, 1);
    if (w->n != 1 || !w->item[0].element || strcmp(w->item[0].name, TOPO_ROOT) != 0) {
        differ(diff, cap, "the schema's root is not <%s> alone", TOPO_ROOT);
    } else {
        xmlNodePtr root = w->item[0].node;
        w->n = 0;
        walk_pattern(w, root, 1, 1);
        schema_walk_t *classes = w;
        /* The actor classes, each its own element. */
        unsigned found = 0;
        for (unsigned k = 0; k < classes->n; k++)
            for (int cls = 0; cls < 3; cls++)
                found += classes->item[k].element &&
                         strcmp(classes->item[k].name, tusk_actor_class_name((tusk_actor_class_t)cls)) == 0;
        if (found != 3 || classes->n != 3)
            differ(diff, cap, "<%s> does not hold exactly the three actor classes", TOPO_ROOT);
        for (unsigned k = 0; k < classes->n && found == 3; k++) {
            int cls = 0;
            while (strcmp(classes->item[k].name, tusk_actor_class_name((tusk_actor_class_t)cls)) != 0)
                cls++;
            const char *cname = classes->item[k].name;
            schema_walk_t *aw = calloc(1, sizeof *aw);
            ck_assert_ptr_nonnull(aw);
            aw->grammar = w->grammar;
            walk_pattern(aw, classes->item[k].node, 1, 1);
            char where[96];
            snprintf(where, sizeof where, "<%s>", cname);
            compare_attrs(aw, where, tusk_topo_actor_attrs, TUSK_TOPO_N_ACTOR_ATTRS, cls, diff, cap);
            for (unsigned i = 0; i < TUSK_TOPO_N_ACTOR_ELEMS; i++) {
                const tusk_topo_elem_t *e = &tusk_topo_actor_elems[i];
                const schema_item_t *it = find_item(aw, e->name, true);
                bool here = (e->classes & TOPO_CLASS(cls)) != 0;
                if (!here) {
                    if (it)
                        differ(diff, cap, "<%s> in <%s>: allowed by the schema, not by the table", e->name, cname);
                    continue;
                }
                if (!it) {
                    differ(diff, cap, "<%s> in <%s>: allowed by the table, not by the schema", e->name, cname);
                    continue;
                }
                if (it->min != e->min || it->max != e->max)
                    differ(diff, cap, "<%s> in <%s>: %u to %u times (0: any) in the table, %u to %u in the schema",
                           e->name, cname, e->min, e->max, it->min, it->max);
                char type[160], dflt[48];
                spec_type(&e->content, e->may_be_empty, type, sizeof type);
                spec_default(&e->content, dflt, sizeof dflt);
                if (strcmp(type, it->type) != 0)
                    differ(diff, cap, "<%s> in <%s>: %s in the table, %s in the schema", e->name, cname, type,
                           it->type);
                if (strcmp(dflt, it->dflt) != 0)
                    differ(diff, cap, "<%s> in <%s>: default '%s' in the table, '%s' in the schema", e->name, cname,
                           dflt, it->dflt);
                if (e->extension != it->extension)
                    differ(diff, cap, "<%s> in <%s>: %s in the table, %s in the schema", e->name, cname,
                           e->extension ? "tusk's" : "NARVAL's", it->extension ? "tusk's" : "NARVAL's");
                schema_walk_t *ew = calloc(1, sizeof *ew);
                ck_assert_ptr_nonnull(ew);
                ew->grammar = w->grammar;
                walk_pattern(ew, it->node, 1, 1);
                char ewhere[128];
                snprintf(ewhere, sizeof ewhere, "<%s> in <%s>", e->name, cname);
                compare_attrs(ew, ewhere, e->attrs, e->n_attrs, cls, diff, cap);
                for (unsigned j = 0; j < ew->n; j++)
                    if (ew->item[j].element)
                        differ(diff, cap, "%s: the schema allows element <%s> in it", ewhere, ew->item[j].name);
                free(ew);
            }
            for (unsigned j = 0; j < aw->n; j++) {
                bool known = !aw->item[j].element;
                for (unsigned i = 0; i < TUSK_TOPO_N_ACTOR_ELEMS && !known; i++)
                    known = strcmp(tusk_topo_actor_elems[i].name, aw->item[j].name) == 0;
                if (!known)
                    differ(diff, cap, "<%s> in <%s>: in the schema, not in the table", aw->item[j].name, cname);
            }
            free(aw);
        }
    }
    free(w);
    xmlFreeDoc(doc);
}

/* Copy of the schema with `from` replaced by `to` (once; it must occur). */
static char *schema_edit(const char *from, const char *to, size_t *size)
{
    const char *at = strstr(tusk_topology_schema, from);
    ck_assert_msg(at != NULL, "'%s' is not in the schema", from);
    size_t head = (size_t)(at - tusk_topology_schema), n = tusk_topology_schema_size - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, tusk_topology_schema, head);
    memcpy(s + head, to, strlen(to));
    memcpy(s + head + strlen(to), at + strlen(from), tusk_topology_schema_size - head - strlen(from));
    s[n] = '\0';
    *size = n;
    return s;
}

/* The embedded schema says what the loader's table says: the same
 * attributes and elements in each actor class, with the same types,
 * ranges, defaults and required-ness. And the comparison sees a change. */
START_TEST(test_schema_matches_spec)
{
    char diff[4096];
    compare_schema(tusk_topology_schema, tusk_topology_schema_size, diff, sizeof diff);
    ck_assert_msg(diff[0] == '\0', "config/topology.rng and runtime/topology_spec.c differ:\n%s", diff);

    static const struct {
        const char *from, *to, *expect;
    } edits[] = {
        {"<param name=\"maxInclusive\">256</param>", "<param name=\"maxInclusive\">255</param>",
         "attribute instances: count in [1, 256] in the table, count in [1, 255] in the schema"},
        {"<attribute name=\"hwm\" a:defaultValue=\"8\"", "<attribute name=\"hwm\" a:defaultValue=\"9\"",
         "attribute hwm: default '8' in the table, '9' in the schema"},
        {"<attribute name=\"restart\" a:defaultValue=\"no\" t:extension=\"true\">",
         "<attribute name=\"restart\" a:defaultValue=\"no\">",
         "<producer>: attribute restart is tusk's in the table, NARVAL's in the schema"},
        {"<element name=\"config_dir\" t:extension=\"true\">", "<element name=\"config_dir\">",
         "<config_dir> in <consumer>: tusk's in the table, NARVAL's in the schema"},
        {"<element name=\"log_level\">", "<element name=\"log_level\" t:extension=\"true\">",
         "<log_level> in <intermediary>: NARVAL's in the table, tusk's in the schema"},
        {"<value>ib1</value>", "<value>ib2</value>", "<port> in <producer>: one of fifo eth0 eth1 eth2 eth3 ib0 ib1 "
                                                     "in the table, one of fifo eth0 eth1 eth2 eth3 ib0 ib2 in the schema"},
        {"          <ref name=\"grouped_count.type\"/>\n        </choice>\n      </element>",
         "        </choice>\n      </element>",
         "<size> in <producer>: count in [64, 1073741824] or grouped in the table, count in [64, 1073741824] in the "
         "schema"},
        {"<value>on-failure</value>", "<value>always</value>", "attribute restart: one of no on-failure in the table"},
        {"<optional><attribute name=\"source_port\"><text/></attribute></optional>",
         "<attribute name=\"source_port\"><text/></attribute>",
         "<data_source> in <consumer>: attribute source_port is optional in the table, required in the schema"},
        {"<element name=\"binary_code\"><ref name=\"nonempty.type\"/></element>",
         "<element name=\"binary_code\"><text/></element>",
         "<binary_code> in <producer>: non-empty text in the table, text in the schema"},
        {"<element name=\"size\" t:default=\"1048576\">", "<element name=\"size\">",
         "<size> in <producer>: default '1048576' in the table, '' in the schema"},
        {"<zeroOrMore><ref name=\"parameter\"/></zeroOrMore>", "<optional><ref name=\"parameter\"/></optional>",
         "<parameter> in <producer>: 0 to 0 times (0: any) in the table, 0 to 1 in the schema"},
        {"<attribute name=\"output_buffers\">", "<attribute name=\"outputbuffers\">",
         "<intermediary>: attribute outputbuffers is in the schema, not in the table"},
        {"<ref name=\"input_buffers.attr\"/>\n      <interleave>\n        <ref name=\"actor.common\"/>\n        <oneOrMore>",
         "<interleave>\n        <ref name=\"actor.common\"/>\n        <oneOrMore>",
         "<consumer>: attribute input_buffers is in the table, not in the schema"},
        {"<element name=\"debug\"><text/></element>", "<element name=\"debug\"><text/></element></optional>"
                                                      "<optional><element name=\"colour\"><text/></element>",
         "<colour> in <consumer>: in the schema, not in the table"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        size_t n;
        char *edited = schema_edit(edits[i].from, edits[i].to, &n);
        compare_schema(edited, n, diff, sizeof diff);
        ck_assert_msg(strstr(diff, edits[i].expect) != NULL, "edit %zu: '%s' not among the differences:\n%s", i,
                      edits[i].expect, diff);
        free(edited);
    }
}
END_TEST

/* Topologies are UTF-8 whatever they declare: no converter ever runs. */
START_TEST(test_encoding)
{
    tusk_topology_t *t = parse_ok("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                  "<configuration><producer><name>p</name><binary_code>r</binary_code>"
                                  "<parameter name=\"file\">caf\xc3\xa9.adf</parameter></producer>"
                                  "<consumer><name>c</name><binary_code>w</binary_code>"
                                  "<data_source>p</data_source></consumer></configuration>");
    ck_assert_str_eq(param(actor_named(t, "p"), "file"), "caf\xc3\xa9.adf");
    tusk_topology_destroy(&t);
    parse_fails("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n"
                "<configuration><producer><name>p</name><binary_code>r</binary_code>"
                "<parameter name=\"file\">caf\xe9.adf</parameter></producer></configuration>",
                TUSK_ETOPOLOGY, "inline.xml:2: not well-formed XML: ");
    parse_fails("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<configuration>\xe9</configuration>",
                TUSK_ETOPOLOGY, "(a topology must be UTF-8)");
    /* UTF-16 by its byte order mark: refused, not decoded. */
    const char utf16[] = "\xff\xfe<\0c\0/\0>\0";
    tusk_error_t err;
    ck_assert_int_eq(tusk_topology_parse(&t, utf16, sizeof utf16 - 1, "u16.xml", &err), TUSK_ETOPOLOGY);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(err.message, "u16.xml:1: not well-formed XML"));
}
END_TEST

/* A long chain written backwards: the order is still computed quickly and
 * the cycle finder copes with long loops. */
START_TEST(test_long_chain)
{
    enum { N = 400 };
    size_t cap = (size_t)N * 160 + 256, len = 0;
    char *xml = malloc(cap);
    ck_assert_ptr_nonnull(xml);
    len += (size_t)snprintf(xml + len, cap - len, "<configuration>\n");
    len += (size_t)snprintf(xml + len, cap - len,
                            "<consumer><name>end</name><binary_code>w</binary_code>"
                            "<data_source>a%d</data_source></consumer>\n", N - 1);
    for (int i = N - 1; i >= 1; i--)
        len += (size_t)snprintf(xml + len, cap - len,
                                "<intermediary><name>a%d</name><binary_code>q</binary_code>"
                                "<data_source>a%d</data_source></intermediary>\n", i, i - 1);
    size_t tail = len;
    len += (size_t)snprintf(xml + len, cap - len,
                            "<producer><name>a0</name><binary_code>r</binary_code></producer>\n</configuration>\n");
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    ck_assert_msg(tusk_topology_parse(&t, xml, len, "chain.xml", &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(tusk_topology_count(t), N + 1);
    check_invariants(t);
    for (unsigned i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "a%u", i);
        ck_assert_str_eq(tusk_topology_actor(t, i)->name, name);
    }
    ck_assert_str_eq(tusk_topology_actor(t, N)->name, "end");
    tusk_topology_destroy(&t);

    /* Close the loop: a0 becomes an intermediary reading a399. */
    len = tail;
    len += (size_t)snprintf(xml + len, cap - len,
                            "<producer><name>src</name><binary_code>r</binary_code></producer>\n"
                            "<intermediary><name>a0</name><binary_code>q</binary_code>"
                            "<data_source>src</data_source><data_source>a%d</data_source></intermediary>\n"
                            "</configuration>\n", N - 1);
    ck_assert_int_eq(tusk_topology_parse(&t, xml, len, "chain.xml", &err), TUSK_ETOPOLOGY);
    tu_assert_error(&err, TUSK_ETOPOLOGY, "cycle: a");
    ck_assert_ptr_nonnull(strstr(err.message, " -> "));
    free(xml);
}
END_TEST

/* ---- resolving libraries ----------------------------------------------------------- */

static char *make_temp_dir(void)
{
    char *path = tu_temp_path(); /* a unique name: make it a folder */
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    return path;
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static void touch(const char *dir, const char *name)
{
    char *p = join(dir, name);
    write_text(p, "");
    free(p);
}

static void remove_file(const char *dir, const char *name)
{
    char *p = join(dir, name);
    unlink(p);
    free(p);
}

START_TEST(test_resolve_search_path)
{
    char *path = config_path("passthrough.xml");
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_topology_load(&t, path, &err), TUSK_OK);
    char *d1 = make_temp_dir(), *d2 = make_temp_dir();
    touch(d1, "file_producer.so");
    touch(d2, "passthrough.so");
    touch(d2, "file_writer.so");
    touch(d2, "file_producer.so"); /* shadowed by d1 */
    char search[8200];
    snprintf(search, sizeof search, "/nonexistent/tusk::%s:%s", d1, d2);
    int rc = tusk_topology_resolve(t, search, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    char *want = join(d1, "file_producer.so");
    ck_assert_str_eq(actor_named(t, "reader")->library_path, want);
    free(want);
    want = join(d2, "passthrough.so");
    ck_assert_str_eq(actor_named(t, "copy")->library_path, want);
    free(want);
    want = join(d2, "file_writer.so");
    ck_assert_str_eq(actor_named(t, "writer")->library_path, want);
    free(want);

    /* Missing: ELOAD with file, line, actor, library and the folders searched. */
    remove_file(d2, "file_writer.so");
    snprintf(search, sizeof search, "%s:%s", d1, d2);
    ck_assert_int_eq(tusk_topology_resolve(t, search, &err), TUSK_ELOAD);
    char expect[8400];
    snprintf(expect, sizeof expect,
             "%s:%d: <consumer> 'writer': actor library 'file_writer' not found (searched: %s, %s)", path,
             line_containing(path, "<consumer>", 0), d1, d2);
    ck_assert_str_eq(err.message, expect);
    ck_assert_int_eq(tusk_topology_resolve(t, "", &err), TUSK_ELOAD);
    tu_assert_error(&err, TUSK_ELOAD, "(searched: no folders)");

    /* NULL: $TUSK_ACTOR_PATH first, then the installed folder, which
     * $TUSK_ACTOR_DIR replaces: the test says where it is, so that an
     * installed tusk is never searched (make check sets it empty too). */
    const char *old = getenv("TUSK_ACTOR_PATH"), *old_dir = getenv("TUSK_ACTOR_DIR");
    char *saved = old ? strdup(old) : NULL, *saved_dir = old_dir ? strdup(old_dir) : NULL;
    char *d3 = make_temp_dir();
    ck_assert_int_eq(setenv("TUSK_ACTOR_DIR", d3, 1), 0);
    ck_assert_str_eq(tusk_topology_installed_actor_dir(), d3);
    touch(d2, "file_writer.so");
    ck_assert_int_eq(setenv("TUSK_ACTOR_PATH", search, 1), 0);
    rc = tusk_topology_resolve(t, NULL, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    remove_file(d2, "file_writer.so");
    ck_assert_int_eq(tusk_topology_resolve(t, NULL, &err), TUSK_ELOAD);
    snprintf(expect, sizeof expect, "(searched: %s, %s, %s)", d1, d2, d3);
    tu_assert_error(&err, TUSK_ELOAD, expect); /* then the installed folder */
    /* The installed folder is searched: an actor there is found. */
    touch(d3, "file_writer.so");
    ck_assert_int_eq(tusk_topology_resolve(t, NULL, &err), TUSK_OK);
    want = join(d3, "file_writer.so");
    ck_assert_str_eq(actor_named(t, "writer")->library_path, want);
    free(want);
    /* Set empty: no installed folder at all, whatever is installed. */
    ck_assert_int_eq(setenv("TUSK_ACTOR_DIR", "", 1), 0);
    ck_assert_str_eq(tusk_topology_installed_actor_dir(), "");
    ck_assert_int_eq(tusk_topology_resolve(t, NULL, &err), TUSK_ELOAD);
    snprintf(expect, sizeof expect, "(searched: %s, %s)", d1, d2);
    tu_assert_error(&err, TUSK_ELOAD, expect);
    /* Unset: the compiled-in folder. */
    unsetenv("TUSK_ACTOR_DIR");
    ck_assert_str_ne(tusk_topology_installed_actor_dir(), "");
    remove_file(d3, "file_writer.so");
    rmdir(d3);
    free(d3);
    if (saved)
        setenv("TUSK_ACTOR_PATH", saved, 1);
    else
        unsetenv("TUSK_ACTOR_PATH");
    if (saved_dir)
        setenv("TUSK_ACTOR_DIR", saved_dir, 1);
    else
        unsetenv("TUSK_ACTOR_DIR");
    free(saved);
    free(saved_dir);

    remove_file(d1, "file_producer.so");
    remove_file(d2, "passthrough.so");
    remove_file(d2, "file_producer.so");
    rmdir(d1);
    rmdir(d2);
    free(d1);
    free(d2);
    tusk_topology_destroy(&t);
    free(path);
}
END_TEST

/* binary_code with a '/': relative to the topology's folder, or absolute. */
START_TEST(test_resolve_relative_path)
{
    char *dir = make_temp_dir();
    char *libs = join(dir, "libs");
    ck_assert_int_eq(mkdir(libs, 0700), 0);
    touch(libs, "reader.so");
    char *abs_lib = join(libs, "writer.so");
    write_text(abs_lib, "");
    char *topo = join(dir, "topo.xml");
    char xml[8192];
    snprintf(xml, sizeof xml,
             "<configuration>\n"
             "<producer><name>r</name><binary_code>libs/reader.so</binary_code></producer>\n"
             "<consumer><name>w</name><binary_code>%s</binary_code><data_source>r</data_source></consumer>\n"
             "<consumer><name>x</name><binary_code>./libs/missing.so</binary_code>"
             "<data_source>r</data_source></consumer>\n"
             "</configuration>\n", abs_lib);
    write_text(topo, xml);
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_topology_load(&t, topo, &err), TUSK_OK);
    ck_assert_int_eq(tusk_topology_resolve(t, "/nonexistent", &err), TUSK_ELOAD);
    char expect[8400];
    snprintf(expect, sizeof expect, "%s:4: <consumer> 'x': actor library './libs/missing.so' not found", topo);
    tu_assert_error(&err, TUSK_ELOAD, expect);
    char *want = join(libs, "reader.so");
    ck_assert_str_eq(actor_named(t, "r")->library_path, want);
    ck_assert_str_eq(actor_named(t, "w")->library_path, abs_lib);
    free(want);
    touch(libs, "missing.so");
    ck_assert_int_eq(tusk_topology_resolve(t, "/nonexistent", &err), TUSK_OK);
    want = join(dir, "./libs/missing.so");
    ck_assert_str_eq(actor_named(t, "x")->library_path, want);
    free(want);
    tusk_topology_destroy(&t);

    /* From memory with a bare name: relative to the current folder. */
    char *cwd = getcwd(NULL, 0);
    ck_assert_ptr_nonnull(cwd);
    ck_assert_int_eq(chdir(dir), 0);
    t = parse_ok("<configuration><producer><name>r</name><binary_code>libs/reader.so</binary_code></producer>"
                 "<consumer><name>w</name><binary_code>libs/missing.so</binary_code>"
                 "<data_source>r</data_source></consumer></configuration>");
    ck_assert_int_eq(tusk_topology_resolve(t, "/nonexistent", &err), TUSK_OK);
    ck_assert_str_eq(actor_named(t, "r")->library_path, "libs/reader.so");
    tusk_topology_destroy(&t);
    ck_assert_int_eq(chdir(cwd), 0);
    free(cwd);

    remove_file(libs, "reader.so");
    remove_file(libs, "missing.so");
    unlink(abs_lib);
    unlink(topo);
    rmdir(libs);
    rmdir(dir);
    free(abs_lib);
    free(topo);
    free(libs);
    free(dir);
}
END_TEST

/* <config_dir>: relative to the topology's folder (or absolute), kept in
 * the spec, checked at resolve time; with <parameter>s it is refused. */
START_TEST(test_config_dir)
{
    char *dir = make_temp_dir();
    char *own = join(dir, "reader.d");
    ck_assert_int_eq(mkdir(own, 0700), 0);
    char *libs = join(dir, "libs");
    ck_assert_int_eq(mkdir(libs, 0700), 0);
    touch(libs, "r.so");
    touch(libs, "w.so");
    char *topo = join(dir, "topo.xml");
    char xml[8192];
    snprintf(xml, sizeof xml,
             "<configuration>\n"
             "<producer><name>reader</name><binary_code>r</binary_code><config_dir>reader.d</config_dir>"
             "</producer>\n"
             "<consumer><name>writer</name><binary_code>w</binary_code><data_source>reader</data_source>\n"
             "<config_dir>%s</config_dir></consumer>\n"
             "</configuration>\n", own);
    write_text(topo, xml);
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    ck_assert_msg(tusk_topology_load(&t, topo, &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(actor_named(t, "reader")->config_dir, own); /* dir + "/reader.d" */
    ck_assert_str_eq(actor_named(t, "writer")->config_dir, own); /* absolute as it is */
    ck_assert_int_eq(tusk_topology_resolve(t, libs, &err), TUSK_OK);
    tusk_topology_destroy(&t);
    /* A folder that is not there, or not a folder: named with its line. */
    snprintf(xml, sizeof xml,
             "<configuration>\n"
             "<producer><name>reader</name><binary_code>r</binary_code></producer>\n"
             "<consumer><name>writer</name><binary_code>w</binary_code><data_source>reader</data_source>\n"
             "<config_dir>libs/w.so</config_dir></consumer>\n"
             "</configuration>\n");
    write_text(topo, xml);
    ck_assert_msg(tusk_topology_load(&t, topo, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(tusk_topology_resolve(t, libs, &err), TUSK_ETOPOLOGY);
    char expect[8400];
    snprintf(expect, sizeof expect,
             "%s:4: <consumer> 'writer': <config_dir> 'libs/w.so': the actor's configuration folder %s/libs/w.so: not "
             "a folder", topo, dir);
    ck_assert_str_eq(err.message, expect);
    ck_assert_ptr_null(actor_named(t, "writer")->library_path);
    tusk_topology_destroy(&t);
    unlink(topo);
    /* From memory with a bare name: from the current folder, as it is. */
    t = parse_ok("<configuration><producer><name>p</name><binary_code>r</binary_code>"
                 "<config_dir> p.d </config_dir></producer>"
                 "<consumer><name>c</name><binary_code>w</binary_code><data_source>p</data_source></consumer>"
                 "</configuration>");
    ck_assert_str_eq(actor_named(t, "p")->config_dir, "p.d");
    ck_assert_ptr_null(actor_named(t, "c")->config_dir);
    ck_assert_int_eq(tusk_topology_resolve(t, libs, &err), TUSK_ETOPOLOGY);
    tu_assert_error(&err, TUSK_ETOPOLOGY, "inline.xml:1: <producer> 'p': <config_dir> 'p.d': the actor's "
                                          "configuration folder p.d: ");
    tusk_topology_destroy(&t);
    parse_fails("<configuration><producer><name>p</name><binary_code>r</binary_code><config_dir/></producer>"
                "<consumer><name>c</name><binary_code>w</binary_code><data_source>p</data_source></consumer>"
                "</configuration>",
                TUSK_ETOPOLOGY, "<producer> 'p': empty <config_dir>");
    remove_file(libs, "r.so");
    remove_file(libs, "w.so");
    rmdir(libs);
    rmdir(own);
    rmdir(dir);
    free(libs);
    free(own);
    free(topo);
    free(dir);
}
END_TEST

/* NARVAL's "set library LIB SUBSYSTEM ACTOR" lines bind generic actors'
 * libraries: a bare name on the search path, then in the script's folder;
 * a path from the script's folder. Everything else in the script is
 * ignored; every mistake names the script's line. */
START_TEST(test_narval_commands)
{
    char *dir = make_temp_dir();
    char *libs = join(dir, "libs");
    ck_assert_int_eq(mkdir(libs, 0700), 0);
    touch(libs, "libproduce.so");
    touch(dir, "libfilter.so");
    char *sub = join(dir, "sub");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    touch(sub, "libconsume.so");
    char *script = join(dir, "run.sh");
    write_text(script, "# start the sub-system\n"
                       "launch $1 localhost\n"
                       "set configuration_file mytopology.xml $1\n"
                       "\tset   library libproduce.so $1 data_transmitter   # the producer\n"
                       "set library \"libfilter.so\" $1 'data_filter'\n"
                       "set library sub/libconsume.so $1 data_receiver\n"
                       "set action start $1\n");
    tusk_topology_t *t = parse_ok(narval_c_example);
    tusk_error_t err;
    /* Without a library: what to write, where. */
    ck_assert_int_eq(tusk_topology_resolve(t, libs, &err), TUSK_ELOAD);
    tu_assert_error(&err, TUSK_ELOAD, "inline.xml:2: <producer> 'data_transmitter': <binary_code> generic_producer is "
                                      "NARVAL's host for a C actor library, and no library is set for "
                                      "'data_transmitter': name it as NARVAL does, with a line 'set library "
                                      "LIBRARY.so SUBSYSTEM data_transmitter' of a NARVAL script");
    ck_assert_msg(tusk_topology_narval_script(t, script, &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(actor_named(t, "data_transmitter")->narval_library, "libproduce.so");
    ck_assert_str_eq(actor_named(t, "data_filter")->narval_library, "libfilter.so");
    ck_assert_str_eq(actor_named(t, "data_receiver")->narval_library, "sub/libconsume.so");
    ck_assert_msg(tusk_topology_resolve(t, libs, &err) == TUSK_OK, "%s", err.message);
    char *want = join(libs, "libproduce.so");
    ck_assert_str_eq(actor_named(t, "data_transmitter")->library_path, want); /* the search path */
    free(want);
    want = join(dir, "libfilter.so");
    ck_assert_str_eq(actor_named(t, "data_filter")->library_path, want); /* the script's folder */
    free(want);
    want = join(dir, "sub/libconsume.so");
    ck_assert_str_eq(actor_named(t, "data_receiver")->library_path, want);
    free(want);
    /* A second script cannot set them again. */
    ck_assert_int_eq(tusk_topology_narval_script(t, script, &err), TUSK_ETOPOLOGY);
    char expect[8400];
    snprintf(expect, sizeof expect, "%s:4: set library for 'data_transmitter': already set (%s:4)", script, script);
    ck_assert_str_eq(err.message, expect);
    /* A library missing: where it was named, and where it was looked for. */
    remove_file(dir, "libfilter.so");
    ck_assert_int_eq(tusk_topology_resolve(t, libs, &err), TUSK_ELOAD);
    snprintf(expect, sizeof expect,
             "inline.xml:11: <intermediary> 'data_filter': actor library 'libfilter.so' (set library, %s:5) not found "
             "(searched: %s, %s)", script, libs, dir);
    ck_assert_str_eq(err.message, expect);
    tusk_topology_destroy(&t);

    /* Mistakes, each with its line; nothing is bound by a bad script. */
    static const struct {
        const char *text, *expect;
    } bad[] = {
        {"set library libp.so\n", "s.sh:1: 'set library' takes LIBRARY SUBSYSTEM ACTOR (1 word given)"},
        {"\nset library a.so b c d\n", "s.sh:2: 'set library' takes LIBRARY SUBSYSTEM ACTOR (4 words given)"},
        {"set library libp.so $1 nobody\n", "s.sh:1: set library libp.so for 'nobody': inline.xml has no such actor"},
        {"set library libp.so $1 data_transmitter\nset library libq.so $1 data_transmitter\n",
         "s.sh:2: a second 'set library' for 'data_transmitter' (the first at line 1)"},
        {"set library 'libp.so $1 data_filter\n", "s.sh:1: unclosed quote"},
        {"set library '' $1 data_filter\n", "s.sh:1: set library for 'data_filter': an empty library name"},
        {"set library a.so $1 x\0y\n", "s.sh:1: a NUL byte: not a NARVAL script"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = parse_ok(narval_c_example);
        size_t len = strlen(bad[i].text);
        if (strstr(bad[i].expect, "NUL"))
            len += 1 + strlen(bad[i].text + len + 1);
        ck_assert_int_eq(tusk_topology_narval_commands(t, bad[i].text, len, "s.sh", &err), TUSK_ETOPOLOGY);
        tu_assert_error(&err, TUSK_ETOPOLOGY, bad[i].expect);
        for (unsigned k = 0; k < tusk_topology_count(t); k++)
            ck_assert_ptr_null(tusk_topology_actor(t, k)->narval_library);
        tusk_topology_destroy(&t);
    }
    /* An actor that is not a generic one: its library would be ignored. */
    t = parse_ok("<configuration><producer><name>p</name><binary_code>file_producer</binary_code></producer>"
                 "<consumer><name>c</name><binary_code>w</binary_code><data_source>p</data_source></consumer>"
                 "</configuration>");
    const char *line = "set library libp.so sub p\n";
    ck_assert_int_eq(tusk_topology_narval_commands(t, line, strlen(line), "s.sh", &err), TUSK_ETOPOLOGY);
    tu_assert_error(&err, TUSK_ETOPOLOGY, "s.sh:1: set library libp.so for 'p': its <binary_code> is 'file_producer' "
                                          "(inline.xml:1), not NARVAL's generic_producer, generic_filter or "
                                          "generic_consumer");
    /* Comments, other commands, blank and long lines are no business of
     * tusk's. */
    char *text = malloc(5000);
    ck_assert_ptr_nonnull(text);
    memset(text, 'x', 4000);
    strcpy(text + 4000, "\n\n# set library libp.so sub p\nset libraries a b c\nlaunch sub host\n");
    ck_assert_int_eq(tusk_topology_narval_commands(t, text, strlen(text), "s.sh", &err), TUSK_OK);
    ck_assert_ptr_null(actor_named(t, "p")->narval_library);
    free(text);
    ck_assert_int_eq(tusk_topology_narval_commands(t, "", 0, "s.sh", &err), TUSK_OK);
    ck_assert_int_eq(tusk_topology_narval_commands(NULL, "", 0, "s.sh", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_topology_narval_script(t, "/nonexistent/run.sh", &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "/nonexistent/run.sh");
    tusk_topology_destroy(&t);

    remove_file(libs, "libproduce.so");
    remove_file(sub, "libconsume.so");
    unlink(script);
    rmdir(libs);
    rmdir(sub);
    rmdir(dir);
    free(script);
    free(sub);
    free(libs);
    free(dir);
}
END_TEST

/* ---- random mutations ---------------------------------------------------------------- */

static const char interesting[] = "<>/=\"'&;![]-? \n\t0123456789abxyz#%";

/* Apply 1-4 random edits: byte changes, deletions, duplications, a cut. */
static size_t mutate(char *buf, size_t len, size_t cap)
{
    unsigned edits = 1 + tu_below(4);
    for (unsigned e = 0; e < edits && len > 0; e++) {
        size_t at = tu_below((uint32_t)len);
        switch (tu_below(6)) {
        case 0:
            buf[at] = (char)tu_rand();
            break;
        case 1:
        case 2:
            buf[at] = interesting[tu_below(sizeof interesting - 1)];
            break;
        case 3: { /* delete a span */
            size_t n = 1 + tu_below(16);
            if (n > len - at)
                n = len - at;
            memmove(buf + at, buf + at + n, len - at - n);
            len -= n;
            break;
        }
        case 4: { /* duplicate a span (repeated elements, names...) */
            size_t n = 1 + tu_below(64);
            if (n > len - at)
                n = len - at;
            if (len + n > cap)
                break;
            size_t to = tu_below((uint32_t)len + 1);
            char tmp[64];
            memcpy(tmp, buf + at, n);
            memmove(buf + to + n, buf + to, len - to);
            memcpy(buf + to, tmp, n);
            len += n;
            break;
        }
        default: /* truncate */
            if (tu_below(4) == 0)
                len = at;
            break;
        }
    }
    return len;
}

START_TEST(test_random_mutations)
{
    const char *files[] = {"passthrough.xml", "fanin.xml"};
    const char *env = getenv("TUSK_TOPOLOGY_MUTATIONS");
    unsigned rounds = env && *env ? (unsigned)strtoul(env, NULL, 10) : 1000;
    unsigned ok = 0, refused = 0;
    for (size_t f = 0; f < 2; f++) {
        char *path = config_path(files[f]);
        size_t size;
        char *orig = read_all(path, &size);
        size_t cap = size + 1024;
        char *buf = malloc(cap);
        ck_assert_ptr_nonnull(buf);
        for (unsigned r = 0; r < rounds; r++) {
            memcpy(buf, orig, size);
            size_t len = mutate(buf, size, cap);
            tusk_topology_t *t = NULL;
            tusk_error_t err;
            memset(&err, 0x55, sizeof err);
            int rc = tusk_topology_parse(&t, buf, len, "mutant.xml", &err);
            if (rc == TUSK_OK) {
                tu_check(t != NULL);
                tu_check(err.code == TUSK_OK);
                check_invariants(t);
                tusk_topology_destroy(&t);
                ok++;
            } else {
                tu_check(t == NULL);
                tu_check(rc == TUSK_ETOPOLOGY);
                tu_check(err.code == rc);
                tu_check(memchr(err.message, '\0', sizeof err.message) != NULL);
                tu_check(strncmp(err.message, "mutant.xml", 10) == 0);
                tu_check(strlen(err.message) > 12);
                tu_check(strchr(err.message, '\n') == NULL);
                refused++;
            }
        }
        free(buf);
        free(orig);
        free(path);
    }
    /* Both outcomes must occur, or the mutations test nothing. */
    ck_assert_uint_gt(ok, 0);
    ck_assert_uint_gt(refused, 0);
}
END_TEST

static Suite *topology_suite(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("examples");
    tcase_add_test(tc, test_passthrough_example);
    tcase_add_test(tc, test_fanin_example);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad");
    tcase_add_test(tc, test_bad_corpus);
    tcase_add_test(tc, test_bad_corpus_complete);
    tcase_add_test(tc, test_xxe_never_expands);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_size_limit);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_inline_errors);
    tcase_add_test(tc, test_encoding);
    tcase_add_test(tc, test_actor_name_rule);
    tcase_add_test(tc, test_grouped_count_rule);
    tcase_add_test(tc, test_schema_matches_spec);
    suite_add_tcase(s, tc);

    tc = tcase_create("memory");
    tcase_add_test(tc, test_whitespace_trimmed);
    tcase_add_test(tc, test_narval_listing);
    tcase_add_test(tc, test_narval_c_example);
    tcase_add_test(tc, test_diamond_order);
    tcase_add_test(tc, test_fanin_source_order);
    tcase_add_test(tc, test_defaults_and_limits);
    tcase_add_test(tc, test_run_policies);
    tcase_add_test(tc, test_long_chain);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);

    tc = tcase_create("resolve");
    tcase_add_test(tc, test_resolve_search_path);
    tcase_add_test(tc, test_resolve_relative_path);
    tcase_add_test(tc, test_config_dir);
    tcase_add_test(tc, test_narval_commands);
    suite_add_tcase(s, tc);

    tc = tcase_create("robustness");
    tcase_add_test(tc, test_random_mutations);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(topology_suite());
}
