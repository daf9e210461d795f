/* reports.c - merging tusk-run reports (see reports.h). */
#include "reports.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "base/str.h"
#include "base/textfile.h"
#include "runtime/wire.h"

#define REPORT_MAX ((size_t)64 << 20)

typedef struct field {
    char *key, *value;
} field_t;

typedef struct line {
    field_t *f;
    size_t n;
    unsigned runs;
} line_t;

typedef struct merged {
    line_t *lines;
    size_t n, cap;
} merged_t;

static void merged_free(merged_t *m)
{
    for (size_t i = 0; i < m->n; i++) {
        for (size_t j = 0; j < m->lines[i].n; j++) {
            free(m->lines[i].f[j].key);
            free(m->lines[i].f[j].value);
        }
        free(m->lines[i].f);
    }
    free(m->lines);
}

static bool whole(const char *s, uint64_t *v)
{
    return tusk_parse_u64(s, 0, UINT64_MAX, v) == 0;
}

static bool decimal(const char *s, double *v)
{
    return strchr(s, '.') && tusk_parse_double(s, 0, 1e300, v) == 0;
}

static bool number(const char *s, double *v)
{
    uint64_t u;
    if (whole(s, &u)) {
        *v = (double)u;
        return true;
    }
    return decimal(s, v);
}

/* Fold `value` into field f (same key). */
static int fold(field_t *f, const char *value, const char *path, unsigned lineno, tusk_error_t *err)
{
    uint64_t a, b;
    double x, y;
    char buf[64];
    bool num_a = number(f->value, &x), num_b = number(value, &y);
    if (num_a != num_b)
        return tusk_error_set(err, TUSK_EINVAL, "%s:%u: %s=%s, a number in one report and text in another", path,
                              lineno, f->key, value);
    if (num_a && whole(f->value, &a) && whole(value, &b)) {
        uint64_t r = strcmp(f->key, "exact") == 0 ? (a < b ? a : b) : a + b;
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)r);
    } else if (num_a) {
        snprintf(buf, sizeof buf, "%.3f", x + y);
    } else if (strcmp(f->value, value) == 0) {
        return TUSK_OK;
    } else {
        snprintf(buf, sizeof buf, "*");
    }
    char *v = tusk_strdup(buf);
    if (!v)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    free(f->value);
    f->value = v;
    return TUSK_OK;
}

static int add_field(line_t *l, const char *key, const char *value, tusk_error_t *err)
{
    field_t *grown = realloc(l->f, (l->n + 1) * sizeof *grown);
    if (!grown)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    l->f = grown;
    l->f[l->n].key = tusk_strdup(key);
    l->f[l->n].value = tusk_strdup(value);
    if (!l->f[l->n].key || !l->f[l->n].value) {
        free(l->f[l->n].key);
        free(l->f[l->n].value);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    l->n++;
    return TUSK_OK;
}

static int merge_line(merged_t *m, const tusk_ctl_t *msg, const char *path, unsigned lineno, tusk_error_t *err)
{
    size_t nf = tusk_ctl_count(msg);
    if (nf == 0)
        return tusk_error_set(err, TUSK_EINVAL, "%s:%u: no key=value field", path, lineno);
    const char *k0 = tusk_ctl_key(msg, 0), *v0 = tusk_ctl_value(msg, 0);
    line_t *l = NULL;
    for (size_t i = 0; i < m->n && !l; i++)
        if (strcmp(m->lines[i].f[0].key, k0) == 0 && strcmp(m->lines[i].f[0].value, v0) == 0)
            l = &m->lines[i];
    int rc;
    if (!l) {
        if (m->n == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 16;
            line_t *grown = realloc(m->lines, cap * sizeof *grown);
            if (!grown)
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            m->lines = grown;
            m->cap = cap;
        }
        l = &m->lines[m->n++];
        memset(l, 0, sizeof *l);
        if ((rc = add_field(l, k0, v0, err)) != TUSK_OK)
            return rc;
    }
    l->runs++;
    for (size_t i = 1; i < nf; i++) {
        const char *key = tusk_ctl_key(msg, i), *value = tusk_ctl_value(msg, i);
        field_t *f = NULL;
        for (size_t j = 1; j < l->n && !f; j++)
            if (strcmp(l->f[j].key, key) == 0)
                f = &l->f[j];
        rc = f ? fold(f, value, path, lineno, err) : add_field(l, key, value, err);
        if (rc != TUSK_OK)
            return rc;
    }
    return TUSK_OK;
}

static int merge_file(merged_t *m, const char *path, tusk_error_t *err)
{
    char *text = NULL;
    size_t size = 0;
    int rc = tusk_file_read(path, REPORT_MAX, &text, &size, err);
    if (rc != TUSK_OK)
        return rc;
    unsigned lineno = 0;
    for (size_t pos = 0; pos < size && rc == TUSK_OK;) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (text + pos)) : size - pos;
        lineno++;
        if (len > 0) {
            /* The parser's messages start with a verb. */
            char *msg_text = malloc(len + 3);
            if (!msg_text) {
                rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
                break;
            }
            memcpy(msg_text, "R ", 2);
            memcpy(msg_text + 2, text + pos, len);
            tusk_ctl_t *msg = NULL;
            rc = tusk_ctl_parse(&msg, msg_text, len + 2, err);
            free(msg_text);
            if (rc != TUSK_OK)
                tusk_error_prefix(err, "%s:%u", path, lineno);
            else
                rc = merge_line(m, msg, path, lineno, err);
            tusk_ctl_destroy(&msg);
        }
        pos += len + 1;
    }
    free(text);
    return rc;
}

int tusk_reports_merge(const char *const *paths, size_t n, FILE *out, tusk_error_t *err)
{
    merged_t m = {NULL, 0, 0};
    int rc = TUSK_OK;
    for (size_t i = 0; i < n && rc == TUSK_OK; i++)
        rc = merge_file(&m, paths[i], err);
    if (rc == TUSK_OK) {
        fprintf(out, "reports=%zu\n", n);
        for (size_t i = 0; i < m.n; i++) {
            for (size_t j = 0; j < m.lines[i].n; j++)
                fprintf(out, "%s%s=%s", j ? " " : "", m.lines[i].f[j].key, m.lines[i].f[j].value);
            fprintf(out, " runs=%u\n", m.lines[i].runs);
        }
        if (fflush(out) != 0)
            rc = tusk_error_set(err, TUSK_EIO, "cannot write the merged report");
    }
    merged_free(&m);
    return rc;
}
