/* check_metrics.c - distributed/metrics.c: /metrics in the Prometheus
 * text exposition format (0.0.4), read back by a strict parser written
 * here from the format's description:
 *
 *  - every line ends in \n; "# HELP NAME TEXT" (TEXT escapes \\ and \n
 *    only), "# TYPE NAME counter|gauge|histogram|summary|untyped", other
 *    comments; samples NAME[{LABEL="VALUE",...}] VALUE [TIMESTAMP];
 *  - names [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*
 *    not starting with "__", label values escaping \\ \" \n and nothing
 *    else, no label twice in a sample;
 *  - values as Go's ParseFloat takes them (digits, '.', exponent, +Inf,
 *    -Inf, NaN);
 *  - a family's HELP and TYPE at most once each and before its samples,
 *    its samples in one block, no series (name and labels) twice;
 *  - and tusk's own rules: every family has HELP and TYPE, counters end
 *    in _total.
 *
 * Snapshots with random names (quotes, backslashes, line breaks, UTF-8)
 * and random counts (TUSK_TEST_SEED replays) are written and read back:
 * every counter of every instance and link comes back exact, with its
 * labels unescaped to the names. The parser itself is shown to refuse
 * each kind of malformed input.
 *
 * And the other text the operator's side reads (distributed/tap.c): the
 * link a `tap` command names, "UP[K]->DOWN[K]", taken and refused. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "tap.h"
#include "webctl_parse.h"
#include "testutil.h"

/* ---- the parser --------------------------------------------------------------- */

#define MAX_LABELS 8

typedef struct sample {
    char name[128];
    unsigned n_labels;
    char label[MAX_LABELS][32];
    char value_of[MAX_LABELS][256];
    char value[64]; /* as written */
} sample_t;

typedef struct parsed {
    sample_t *s;
    size_t n, cap;
    char error[256];
    unsigned line;
} parsed_t;

typedef struct family {
    char name[128];
    bool help, type, samples_done;
    char kind[16];
} family_t;

static bool fail_at(parsed_t *p, const char *what)
{
    snprintf(p->error, sizeof p->error, "line %u: %s", p->line, what);
    return false;
}

static bool name_char(char c, bool first, bool colon)
{
    return isalpha((unsigned char)c) || c == '_' || (colon && c == ':') || (!first && isdigit((unsigned char)c));
}

/* A name at *pp (metric: colons allowed), into out. */
static bool read_name(const char **pp, char *out, size_t n, bool colon)
{
    const char *p = *pp;
    size_t len = 0;
    while (name_char(p[len], len == 0, colon)) {
        if (len + 1 >= n)
            return false;
        out[len] = p[len];
        len++;
    }
    out[len] = '\0';
    *pp = p + len;
    return len > 0;
}

/* Go's strconv.ParseFloat, as the text format says. */
static bool float_ok(const char *v)
{
    if (!strcmp(v, "+Inf") || !strcmp(v, "-Inf") || !strcmp(v, "NaN"))
        return true;
    const char *p = v;
    if (*p == '+' || *p == '-')
        p++;
    bool digits = false;
    while (isdigit((unsigned char)*p))
        p++, digits = true;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            digits = true;
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

static family_t *family_of(family_t *fams, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(fams[i].name, name))
            return &fams[i];
    if (*n >= 256)
        return NULL;
    family_t *f = &fams[(*n)++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    return f;
}

static bool same_series(const sample_t *a, const sample_t *b)
{
    if (strcmp(a->name, b->name) || a->n_labels != b->n_labels)
        return false;
    for (unsigned i = 0; i < a->n_labels; i++) {
        bool found = false;
        for (unsigned j = 0; j < b->n_labels; j++)
            found |= !strcmp(a->label[i], b->label[j]) && !strcmp(a->value_of[i], b->value_of[j]);
        if (!found)
            return false;
    }
    return true;
}

static bool parse_sample(parsed_t *p, const char *line, sample_t *s)
{
    memset(s, 0, sizeof *s);
    const char *q = line;
    if (!read_name(&q, s->name, sizeof s->name, true))
        return fail_at(p, "a sample must start with a metric name");
    if (*q == '{') {
        q++;
        while (*q != '}') {
            if (s->n_labels == MAX_LABELS)
                return fail_at(p, "too many labels");
            unsigned k = s->n_labels;
            if (!read_name(&q, s->label[k], sizeof s->label[k], false))
                return fail_at(p, "bad label name");
            if (!strncmp(s->label[k], "__", 2))
                return fail_at(p, "label names starting with __ are reserved");
            for (unsigned j = 0; j < k; j++)
                if (!strcmp(s->label[j], s->label[k]))
                    return fail_at(p, "a label twice");
            if (*q++ != '=' || *q++ != '"')
                return fail_at(p, "label name not followed by =\"");
            size_t n = 0;
            for (;;) {
                char c = *q++;
                if (c == '\0')
                    return fail_at(p, "unterminated label value");
                if (c == '"')
                    break;
                if (c == '\\') {
                    char e = *q++;
                    c = e == '\\' ? '\\' : e == '"' ? '"' : e == 'n' ? '\n' : 0;
                    if (!c)
                        return fail_at(p, "bad escape in a label value");
                }
                if (n + 1 >= sizeof s->value_of[k])
                    return fail_at(p, "label value too long");
                s->value_of[k][n++] = c;
            }
            s->value_of[k][n] = '\0';
            s->n_labels++;
            if (*q == ',')
                q++;
            else if (*q != '}')
                return fail_at(p, "labels must be separated by ','");
        }
        q++;
    }
    if (*q != ' ')
        return fail_at(p, "no blank before the value");
    while (*q == ' ')
        q++;
    size_t n = strcspn(q, " ");
    if (n == 0 || n >= sizeof s->value)
        return fail_at(p, "no value");
    memcpy(s->value, q, n);
    s->value[n] = '\0';
    if (!float_ok(s->value))
        return fail_at(p, "the value is no float");
    q += n;
    if (*q == ' ') {
        q++;
        const char *t = q;
        if (*t == '-')
            t++;
        if (!*t)
            return fail_at(p, "empty timestamp");
        for (; *t; t++)
            if (!isdigit((unsigned char)*t))
                return fail_at(p, "the timestamp is no integer");
    } else if (*q) {
        return fail_at(p, "junk after the value");
    }
    return true;
}

/* Parse `text`; false with p->error on the first violation. */
static bool parse(parsed_t *p, const char *text)
{
    memset(p, 0, sizeof *p);
    family_t fams[256];
    size_t n_fams = 0;
    char current[128] = "";
    size_t len = strlen(text);
    if (len == 0 || text[len - 1] != '\n')
        return fail_at(p, "the text must end with a line feed");
    const char *at = text;
    while (*at) {
        p->line++;
        const char *nl = strchr(at, '\n');
        size_t n = (size_t)(nl - at);
        char *line = strndup(at, n);
        at = nl + 1;
        bool ok = true;
        if (n == 0) {
            /* empty lines are ignored */
        } else if (line[0] == '#') {
            char word[8] = "", name[128] = "";
            const char *q = line + 1;
            if (!strncmp(q, " HELP ", 6) || !strncmp(q, " TYPE ", 6)) {
                memcpy(word, q + 1, 4);
                q += 6;
                if (!read_name(&q, name, sizeof name, true) || *q != ' ') {
                    ok = fail_at(p, "HELP/TYPE without a metric name and text");
                } else {
                    q++;
                    family_t *f = family_of(fams, &n_fams, name);
                    if (!f)
                        ok = fail_at(p, "too many families");
                    else if (f->samples_done || (strcmp(current, name) && (f->help || f->type)))
                        ok = fail_at(p, "HELP/TYPE after the family's samples, or its lines apart");
                    else if (!strcmp(word, "HELP")) {
                        if (f->help)
                            ok = fail_at(p, "HELP twice");
                        for (const char *e = q; ok && *e; e++)
                            if (*e == '\\' && e[1] != '\\' && e[1] != 'n')
                                ok = fail_at(p, "bad escape in HELP");
                            else if (*e == '\\')
                                e++;
                        f->help = true;
                    } else {
                        static const char *const kinds[] = {"counter", "gauge", "histogram", "summary",
                                                            "untyped"};
                        bool known = false;
                        for (size_t i = 0; i < 5; i++)
                            known |= !strcmp(q, kinds[i]);
                        if (f->type)
                            ok = fail_at(p, "TYPE twice");
                        else if (!known)
                            ok = fail_at(p, "unknown TYPE");
                        snprintf(f->kind, sizeof f->kind, "%s", q);
                        f->type = true;
                    }
                    if (ok && strcmp(current, name)) {
                        family_t *prev = current[0] ? family_of(fams, &n_fams, current) : NULL;
                        if (prev)
                            prev->samples_done = true;
                        snprintf(current, sizeof current, "%s", name);
                    }
                }
            }
        } else {
            sample_t s;
            if ((ok = parse_sample(p, line, &s))) {
                family_t *f = family_of(fams, &n_fams, s.name);
                if (!f)
                    ok = fail_at(p, "too many families");
                else if (strcmp(current, s.name)) {
                    ok = fail_at(p, "a sample outside its family's block (or before its HELP and TYPE)");
                } else if (!f->help || !f->type) {
                    ok = fail_at(p, "a family without HELP or TYPE (tusk writes both)");
                } else if (!strcmp(f->kind, "counter") &&
                           (strlen(s.name) < 6 || strcmp(s.name + strlen(s.name) - 6, "_total"))) {
                    ok = fail_at(p, "a counter whose name does not end in _total");
                }
                for (size_t i = 0; ok && i < p->n; i++)
                    if (same_series(&p->s[i], &s))
                        ok = fail_at(p, "the same series twice");
                if (ok) {
                    if (p->n == p->cap) {
                        p->cap = p->cap ? 2 * p->cap : 64;
                        p->s = realloc(p->s, p->cap * sizeof *p->s);
                        tu_check(p->s != NULL);
                    }
                    p->s[p->n++] = s;
                }
            }
        }
        free(line);
        if (!ok)
            return false;
    }
    return true;
}

static void parsed_free(parsed_t *p)
{
    free(p->s);
    p->s = NULL;
}

static const char *label(const sample_t *s, const char *name)
{
    for (unsigned i = 0; i < s->n_labels; i++)
        if (!strcmp(s->label[i], name))
            return s->value_of[i];
    return NULL;
}

/* The value of the one sample NAME whose labels k1=v1 (and k2=v2). */
static const char *find(const parsed_t *p, const char *name, const char *k1, const char *v1, const char *k2,
                        const char *v2)
{
    const char *found = NULL;
    for (size_t i = 0; i < p->n; i++) {
        const sample_t *s = &p->s[i];
        if (strcmp(s->name, name))
            continue;
        if (k1 && (!label(s, k1) || strcmp(label(s, k1), v1)))
            continue;
        if (k2 && (!label(s, k2) || strcmp(label(s, k2), v2)))
            continue;
        ck_assert_msg(!found, "%s{%s=%s}: two samples", name, k1 ? k1 : "", v1 ? v1 : "");
        found = s->value;
    }
    ck_assert_msg(found != NULL, "%s{%s=%s,%s=%s}: no sample", name, k1 ? k1 : "", v1 ? v1 : "", k2 ? k2 : "",
                  v2 ? v2 : "");
    return found;
}

static char *metrics_text(const tusk_status_t *s)
{
    char *text = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(fp);
    tusk_status_metrics(s, fp);
    fclose(fp);
    return text;
}

/* ---- the tests ------------------------------------------------------------------ */

static void random_name(char *out, size_t n)
{
    static const char *const parts[] = {"a", "psa", "\"", "\\", "\n", "_", "é", "{", "}", ",", "=", " ", "x1"};
    size_t len = 0, want = 1 + tu_below(8);
    out[0] = '\0';
    for (size_t i = 0; i < want; i++) {
        const char *p = parts[tu_below(sizeof parts / sizeof parts[0])];
        if (len + strlen(p) + 1 >= n)
            break;
        strcat(out, p);
        len += strlen(p);
    }
}

static uint64_t random_count(void)
{
    switch (tu_below(4)) {
    case 0: return 0;
    case 1: return tu_below(1000);
    case 2: return UINT64_MAX - tu_below(10);
    default: return tu_rand();
    }
}

static void check_u64(const char *text, uint64_t want, const char *what)
{
    char *end;
    unsigned long long got = strtoull(text, &end, 10);
    ck_assert_msg(*end == '\0' && got == want, "%s: '%s', want %llu", what, text, (unsigned long long)want);
}

START_TEST(metrics_read_back_exactly)
{
    uint64_t seed = tu_seed();
    for (int round = 0; round < 40; round++) {
        tusk_status_t st = {0};
        tusk_error_t err;
        size_t n_inst = tu_below(6), n_links = n_inst ? tu_below(8) : 0;
        ck_assert_int_eq(tusk_status_size(&st, n_inst, n_links, &err), TUSK_OK);
        random_name(st.topology, sizeof st.topology);
        st.run = (uint32_t)tu_rand();
        st.elapsed_s = tu_below(100000) / 10.0;
        st.bad_control = random_count();
        st.refused_commands = random_count();
        for (size_t i = 0; i < n_inst; i++) {
            tusk_status_inst_t *in = &st.inst[i];
            random_name(in->actor, 24);
            /* unique labels: the index makes each series its own */
            in->k = (unsigned)i;
            random_name(in->host, 24);
            snprintf(in->state, sizeof in->state, "%s", tu_below(2) ? "running" : "FAILED");
            in->in_buffers = random_count();
            in->out_buffers = random_count();
            in->in_bytes = random_count();
            in->out_bytes = random_count();
            in->queue = random_count();
            in->restarts = random_count();
            in->dropped = random_count();
            in->block_ns = tu_below(1000000000);
            in->bytes_per_s = tu_below(1000000);
        }
        /* links: distinct (from, to) pairs, each taken or not */
        size_t kept = 0;
        for (size_t u = 0; u < n_inst; u++)
            for (size_t d = 0; d < n_inst && kept < n_links; d++) {
                if (tu_below(2))
                    continue;
                tusk_status_link_t *lk = &st.links[kept++];
                lk->from = (unsigned)u;
                lk->to = (unsigned)d;
                lk->sent = random_count();
                lk->received = random_count();
                lk->finished = random_count();
                lk->gaps = random_count();
                lk->malformed = random_count();
                lk->tap_dropped = random_count();
            }
        st.n_links = kept;
        char *text = metrics_text(&st);
        parsed_t p;
        ck_assert_msg(parse(&p, text), "seed %llu round %d: %s\n%s", (unsigned long long)seed, round, p.error, text);
        check_u64(find(&p, "tusk_run_number", NULL, NULL, NULL, NULL), st.run, "run");
        check_u64(find(&p, "tusk_control_malformed_messages_total", NULL, NULL, NULL, NULL), st.bad_control,
                  "bad_control");
        for (size_t i = 0; i < n_inst; i++) {
            const tusk_status_inst_t *in = &st.inst[i];
            char idx[16];
            snprintf(idx, sizeof idx, "%u", in->k);
            static const struct {
                const char *name;
                size_t off;
            } f[] = {{"tusk_instance_input_buffers_total", offsetof(tusk_status_inst_t, in_buffers)},
                     {"tusk_instance_output_buffers_total", offsetof(tusk_status_inst_t, out_buffers)},
                     {"tusk_instance_input_bytes_total", offsetof(tusk_status_inst_t, in_bytes)},
                     {"tusk_instance_output_bytes_total", offsetof(tusk_status_inst_t, out_bytes)},
                     {"tusk_instance_queue_buffers", offsetof(tusk_status_inst_t, queue)},
                     {"tusk_instance_restarts_total", offsetof(tusk_status_inst_t, restarts)},
                     {"tusk_instance_dropped_messages_total", offsetof(tusk_status_inst_t, dropped)}};
            for (size_t j = 0; j < sizeof f / sizeof f[0]; j++) {
                uint64_t want;
                memcpy(&want, (const char *)in + f[j].off, sizeof want);
                const char *v = find(&p, f[j].name, "actor", in->actor, "index", idx);
                check_u64(v, want, f[j].name);
            }
            /* the labels come back as the names were */
            for (size_t j = 0; j < p.n; j++)
                if (!strcmp(p.s[j].name, "tusk_instance_restarts_total") && !strcmp(label(&p.s[j], "index"), idx))
                    ck_assert_str_eq(label(&p.s[j], "host"), in->host);
            char state_idx[16];
            snprintf(state_idx, sizeof state_idx, "%u", in->k);
            for (size_t j = 0; j < p.n; j++)
                if (!strcmp(p.s[j].name, "tusk_instance_state") && !strcmp(label(&p.s[j], "index"), state_idx))
                    ck_assert_str_eq(label(&p.s[j], "state"), in->state);
        }
        for (size_t l = 0; l < st.n_links; l++) {
            const tusk_status_link_t *lk = &st.links[l];
            char from[96], to[96];
            tusk_status_label(&st, lk->from, from, sizeof from);
            tusk_status_label(&st, lk->to, to, sizeof to);
            check_u64(find(&p, "tusk_link_sent_buffers_total", "from", from, "to", to), lk->sent, "sent");
            check_u64(find(&p, "tusk_link_received_buffers_total", "from", from, "to", to), lk->received,
                      "received");
            check_u64(find(&p, "tusk_link_finished_buffers_total", "from", from, "to", to), lk->finished,
                      "finished");
            check_u64(find(&p, "tusk_link_gap_buffers_total", "from", from, "to", to), lk->gaps, "gaps");
            check_u64(find(&p, "tusk_link_malformed_buffers_total", "from", from, "to", to), lk->malformed,
                      "malformed");
            check_u64(find(&p, "tusk_link_tap_dropped_total", "from", from, "to", to), lk->tap_dropped,
                      "tap_dropped");
        }
        parsed_free(&p);
        free(text);
        tusk_status_free(&st);
    }
}
END_TEST

/* The parser can fail: each kind of malformed exposition is refused. */
START_TEST(parser_refuses_malformed_text)
{
    static const char head[] = "# HELP x_total X.\n# TYPE x_total counter\n";
    static const char *const bad[] = {
        "x_total{a=\"b\"} 1",                                  /* no final line feed (checked below) */
        "x_total{a=\"b\\\"} 1\n",                              /* unterminated value */
        "x_total{a=\"b\\t\"} 1\n",                             /* \t is no escape of the format */
        "x_total{a=\"b\"} one\n",                              /* no float */
        "x_total{a=\"b\",a=\"c\"} 1\n",                        /* a label twice */
        "x_total{__a=\"b\"} 1\n",                              /* reserved label name */
        "x_total{1a=\"b\"} 1\n",                               /* bad label name */
        "x_total{a=\"b\"} 1\nx_total{a=\"b\"} 2\n",            /* the same series twice */
        "x_total{a=b} 1\n",                                    /* unquoted */
        "x_total{a=\"b\"}1\n",                                 /* no blank */
        "x_total 1 12.5\n",                                    /* a timestamp is an integer */
        "y_total 1\n",                                         /* no HELP/TYPE */
        "# HELP y_total Y.\n# TYPE y_total counter\ny_total 1\nx_total 2\n", /* x apart from its block */
        "# TYPE x_total gauge\nx_total 1\n",                   /* TYPE twice */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", head, bad[i]);
        parsed_t p;
        ck_assert_msg(!parse(&p, text), "taken: %s", text);
        parsed_free(&p);
    }
    static const char *const bad_families[] = {
        "# HELP c C.\n# TYPE c counter\nc 1\n",          /* a counter without _total (tusk's rule) */
        "# HELP c C.\n# TYPE c countr\nc 1\n",           /* unknown type */
        "# HELP c C \\q.\n# TYPE c gauge\nc 1\n",        /* bad escape in HELP */
    };
    for (size_t i = 0; i < sizeof bad_families / sizeof bad_families[0]; i++) {
        parsed_t p;
        ck_assert_msg(!parse(&p, bad_families[i]), "taken: %s", bad_families[i]);
        parsed_free(&p);
    }
    /* and the same parser takes good text, escapes and all */
    parsed_t p;
    const char *good = "# HELP x_total X \\\\ y\\n.\n# TYPE x_total counter\n"
                       "x_total{a=\"q\\\"\\\\\\n\",b=\"\"} 1.5e3 -12\nx_total{a=\"r\"} +Inf\n"
                       "# a comment\n\n# HELP g G.\n# TYPE g gauge\ng NaN\n";
    ck_assert_msg(parse(&p, good), "%s", p.error);
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(label(&p.s[0], "a"), "q\"\\\n");
    parsed_free(&p);
}
END_TEST

/* JSON of the page: strings escaped (a name with quotes and a line break
 * does not end the string). */
START_TEST(json_escapes)
{
    tusk_status_t st = {0};
    tusk_error_t err;
    ck_assert_int_eq(tusk_status_size(&st, 1, 0, &err), TUSK_OK);
    snprintf(st.inst[0].actor, sizeof st.inst[0].actor, "a\"b\\c\nd\x01");
    char *text = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&text, &size);
    tusk_status_json(&st, fp);
    fclose(fp);
    ck_assert_msg(strstr(text, "\"actor\":\"a\\\"b\\\\c\\nd\\u0001\"") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "\"label\":\"a\\\"b\\\\c\\nd\\u0001[0]\"") != NULL, "%s", text);
    free(text);
    tusk_status_free(&st);
}
END_TEST

/* check_metrics --parse FILE: the strict parser on a scraped /metrics
 * (tests/web.sh); every sample on a line, "NAME{K=V,...} VALUE" (labels
 * unescaped, in their order); exit 1 with the violation. */
static int parse_file(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        perror(path);
        return 1;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
        fwrite(buf, 1, n, mem);
    fclose(fp);
    fclose(mem);
    parsed_t p = {0};
    int status = 0;
    if (strlen(text) != size) {
        fprintf(stderr, "%s: a NUL byte in the text\n", path);
        status = 1;
    } else if (!parse(&p, text)) {
        fprintf(stderr, "%s: %s\n", path, p.error);
        status = 1;
    } else {
        for (size_t i = 0; i < p.n; i++) {
            printf("%s{", p.s[i].name);
            for (unsigned j = 0; j < p.s[i].n_labels; j++)
                printf("%s%s=%s", j ? "," : "", p.s[i].label[j], p.s[i].value_of[j]);
            printf("} %s\n", p.s[i].value);
        }
    }
    parsed_free(&p);
    free(text);
    return status;
}

START_TEST(tap_link_names)
{
    static const struct {
        const char *text, *up;
        unsigned uk;
        const char *down;
        unsigned dk;
    } good[] = {{"psa[0]->spectra[0]", "psa", 0, "spectra", 0},
                {"psa[1] -> builder", "psa", 1, "builder", 0},
                {" a->b[65535] ", "a", 0, "b", 65535},
                {"sim_x[12]->t-y[3]", "sim_x", 12, "t-y", 3}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char up[64], down[64];
        unsigned uk = 99, dk = 99;
        tusk_error_t err;
        unsigned every = 0;
        ck_assert_msg(tusk_tap_link_parse(good[i].text, up, sizeof up, &uk, down, sizeof down, &dk, &every, &err) ==
                          TUSK_OK,
                      "'%s': %s", good[i].text, err.message);
        ck_assert_uint_eq(every, 1);
        ck_assert_str_eq(up, good[i].up);
        ck_assert_str_eq(down, good[i].down);
        ck_assert_uint_eq(uk, good[i].uk);
        ck_assert_uint_eq(dk, good[i].dk);
    }
    static const struct {
        const char *text, *says;
    } bad[] = {{"psa[0]", "one link"},         {"->b", "no upstream"},        {"a->", "no downstream"},
               {"a[x]->b", "no number"},        {"a[1->b", "NAME[K]"},         {"a[65536]->b", "no number"},
               {"a->b->c", "one link"},         {"a b->c", "no actor name"},   {"a[-1]->b", "no number"},
               {"a[]->b", "NAME[K]"},           {"", "one link"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char up[64], down[64];
        unsigned uk, dk;
        tusk_error_t err;
        unsigned every;
        ck_assert_msg(tusk_tap_link_parse(bad[i].text, up, sizeof up, &uk, down, sizeof down, &dk, &every, &err) !=
                          TUSK_OK,
                      "'%s' taken", bad[i].text);
        ck_assert_msg(strstr(err.message, bad[i].says) != NULL, "'%s': %s", bad[i].text, err.message);
    }
    char small[4], down[64];
    unsigned uk, dk;
    tusk_error_t err;
    ck_assert_int_ne(tusk_tap_link_parse("abcdef->b", small, sizeof small, &uk, down, sizeof down, &dk, NULL, &err),
                     TUSK_OK);
    ck_assert_ptr_nonnull(strstr(err.message, "too long"));
    /* every=N: after the link, for tap only */
    unsigned every = 0;
    ck_assert_int_eq(tusk_tap_link_parse("a[1]->b[2] every=10", small, sizeof small, &uk, down, sizeof down, &dk,
                                         &every, &err),
                     TUSK_OK);
    ck_assert_str_eq(small, "a");
    ck_assert_str_eq(down, "b");
    ck_assert_uint_eq(uk * 100 + dk, 102);
    ck_assert_uint_eq(every, 10);
    static const char *const bad_every[] = {"a->b every=0", "a->b every=x", "a->bevery=3", "a->b every=", "every=2"};
    for (size_t i = 0; i < sizeof bad_every / sizeof bad_every[0]; i++)
        ck_assert_msg(tusk_tap_link_parse(bad_every[i], small, sizeof small, &uk, down, sizeof down, &dk, &every,
                                          &err) != TUSK_OK,
                      "'%s' taken", bad_every[i]);
    ck_assert_int_ne(tusk_tap_link_parse("a->b every=2", small, sizeof small, &uk, down, sizeof down, &dk, NULL, &err),
                     TUSK_OK);
    ck_assert_ptr_nonnull(strstr(err.message, "untap"));
}
END_TEST

/* tusk-run --web's argument: PORT, IPV4:PORT, [IPV6]:PORT; the port
 * decimal digits only, the address numeric. */
START_TEST(web_argument)
{
    static const struct {
        const char *text, *address;
        unsigned port;
    } good[] = {{"8080", "", 8080},         {"0", "", 0},
                {"65535", "", 65535},       {"127.0.0.1:0", "127.0.0.1", 0},
                {"0.0.0.0:80", "0.0.0.0", 80}, {"[::1]:8080", "::1", 8080},
                {"[fe80::1:2]:1", "fe80::1:2", 1}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char address[64];
        unsigned port = 99999;
        tusk_error_t err;
        ck_assert_msg(tusk_webctl_parse(good[i].text, address, sizeof address, &port, &err) == TUSK_OK, "'%s': %s",
                      good[i].text, err.message);
        ck_assert_str_eq(address, good[i].address);
        ck_assert_uint_eq(port, good[i].port);
    }
    static const struct {
        const char *text, *says;
    } bad[] = {{"", "PORT, IPV4:PORT"},         {"65536", "PORT, IPV4:PORT"},  {"+80", "PORT, IPV4:PORT"},
               {" 80", "PORT, IPV4:PORT"},       {"-0", "PORT, IPV4:PORT"},     {"80 ", "PORT, IPV4:PORT"},
               {"127.0.0.1:", "PORT, IPV4:PORT"}, {":80", "no address"},        {"[]:80", "no address"},
               {"localhost:80", "no numeric IPv4"}, {"1.2.3:80", "no numeric IPv4"}, {"::1:80", "in brackets"},
               {"[1.2.3.4]:80", "no numeric IPv6"}, {"[::1:80", "in brackets"}, {"[::g]:80", "no numeric IPv6"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char address[64];
        unsigned port;
        tusk_error_t err;
        ck_assert_msg(tusk_webctl_parse(bad[i].text, address, sizeof address, &port, &err) == TUSK_EINVAL,
                      "'%s' taken", bad[i].text);
        ck_assert_msg(strncmp(err.message, "--web", 5) == 0 && strstr(err.message, bad[i].says) != NULL, "'%s': %s",
                      bad[i].text, err.message);
    }
    char small[9];
    unsigned port;
    tusk_error_t err;
    ck_assert_int_eq(tusk_webctl_parse("10.0.0.1:80", small, sizeof small, &port, &err), TUSK_OK);
    ck_assert_str_eq(small, "10.0.0.1");
    ck_assert_int_eq(tusk_webctl_parse("10.0.0.10:80", small, sizeof small, &port, &err), TUSK_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "too long"));
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--parse") == 0)
        return parse_file(argv[2]);
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("prometheus");
    tcase_add_test(tc, metrics_read_back_exactly);
    tcase_add_test(tc, parser_refuses_malformed_text);
    tcase_add_test(tc, json_escapes);
    suite_add_tcase(s, tc);
    tc = tcase_create("tap");
    tcase_add_test(tc, tap_link_names);
    tcase_add_test(tc, web_argument);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
