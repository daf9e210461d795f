/* params.c - actor parameters: parameters.conf, typed access. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tusk/params.h"
#include "base/textfile.h"
#include "tusk/error.h"
#include "base/parse.h"
#include "base/str.h"

struct tusk_params {
    size_t n, cap;
    char **keys;
    char **values;
};

/* The keys the host adds to every instance (runtime/actor_host.c sets
 * them): always accepted by tusk_params_expect (tusk_params_is_host_key). */
static const char *const host_keys[] = {"actor", "instance", "instances", NULL};

tusk_params_t *tusk_params_new(void)
{
    return calloc(1, sizeof(tusk_params_t));
}

void tusk_params_destroy(tusk_params_t **params)
{
    if (!params || !*params)
        return;
    tusk_params_t *p = *params;
    for (size_t i = 0; i < p->n; i++) {
        free(p->keys[i]);
        free(p->values[i]);
    }
    free(p->keys);
    free(p->values);
    free(p);
    *params = NULL;
}

static bool key_valid(const char *key, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        if (!isalnum(c) && c != '_' && c != '-' && c != '.')
            return false;
    }
    return true;
}

static int find(const tusk_params_t *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->keys[i], key) == 0)
            return (int)i;
    return -1;
}

int tusk_params_set(tusk_params_t *p, const char *key, const char *value, tusk_error_t *err)
{
    if (!key_valid(key, strlen(key)))
        return tusk_error_set(err, TUSK_EPARAM,
                              "parameter name '%s': use letters, digits, '_', '-' and '.' only", key);
    if (strpbrk(value, "\r\n"))
        return tusk_error_set(err, TUSK_EPARAM, "parameter '%s': the value must be a single line", key);
    char *v = tusk_strdup(value);
    if (!v)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int i = find(p, key);
    if (i >= 0) {
        free(p->values[i]);
        p->values[i] = v;
        return TUSK_OK;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        char **k = realloc(p->keys, cap * sizeof *k);
        if (k)
            p->keys = k;
        char **vs = k ? realloc(p->values, cap * sizeof *vs) : NULL;
        if (!vs) {
            free(v);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        }
        p->values = vs;
        p->cap = cap;
    }
    char *kc = tusk_strdup(key);
    if (!kc) {
        free(v);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    p->keys[p->n] = kc;
    p->values[p->n] = v;
    p->n++;
    return TUSK_OK;
}

static const char *skip_space(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

static const char *trim_end(const char *start, const char *end)
{
    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    return end;
}

int tusk_params_parse(tusk_params_t *p, const char *text, size_t size, const char *origin, tusk_error_t *err)
{
    const char *s = text, *end = text + size;
    for (int line = 1; s < end; line++) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol)
            eol = end;
        const char *a = skip_space(s, eol);
        const char *b = trim_end(a, eol);
        const char *next = eol < end ? eol + 1 : end;
        if (a == b || *a == '#') {
            s = next;
            continue;
        }
        if (memchr(a, '\0', (size_t)(b - a)))
            return tusk_error_set(err, TUSK_EPARAM, "%s:%d: NUL byte in the line", origin, line);
        const char *eq = memchr(a, '=', (size_t)(b - a));
        if (!eq)
            return tusk_error_set(err, TUSK_EPARAM, "%s:%d: expected 'key = value', got '%.*s'", origin, line,
                                  (int)(b - a > 60 ? 60 : b - a), a);
        const char *kend = trim_end(a, eq);
        const char *vstart = skip_space(eq + 1, b);
        if (!key_valid(a, (size_t)(kend - a)))
            return tusk_error_set(err, TUSK_EPARAM,
                                  "%s:%d: bad parameter name '%.*s' (letters, digits, '_', '-', '.')", origin,
                                  line, (int)(kend - a > 60 ? 60 : kend - a), a);
        char key[256];
        if ((size_t)(kend - a) >= sizeof key)
            return tusk_error_set(err, TUSK_EPARAM, "%s:%d: parameter name longer than %zu characters", origin,
                                  line, sizeof key - 1);
        memcpy(key, a, (size_t)(kend - a));
        key[kend - a] = '\0';
        size_t vlen = (size_t)(b - vstart);
        char *value = malloc(vlen + 1);
        if (!value)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memcpy(value, vstart, vlen);
        value[vlen] = '\0';
        int rc = tusk_params_set(p, key, value, err);
        free(value);
        if (rc != TUSK_OK) {
            tusk_error_prefix(err, "%s:%d", origin, line);
            return rc;
        }
        s = next;
    }
    return TUSK_OK;
}

int tusk_params_load(tusk_params_t **params, const char *dir, tusk_error_t *err)
{
    *params = NULL;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, TUSK_PARAMS_FILE) >= sizeof path)
        return tusk_error_set(err, TUSK_EINVAL, "%s: path too long", dir);
    tusk_params_t *p = tusk_params_new();
    if (!p)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    char *text;
    size_t len;
    int rc = tusk_file_read(path, 16u << 20, &text, &len, err);
    if (rc == TUSK_EIO && errno == ENOENT) {
        *params = p;
        return TUSK_OK;
    }
    if (rc == TUSK_OK)
        rc = tusk_params_parse(p, text, len, path, err);
    free(text);
    if (rc != TUSK_OK)
        tusk_params_destroy(&p);
    *params = p;
    return rc;
}

int tusk_params_save(const tusk_params_t *p, const char *dir, tusk_error_t *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, TUSK_PARAMS_FILE) >= sizeof path)
        return tusk_error_set(err, TUSK_EINVAL, "%s: path too long", dir);
    FILE *fp = fopen(path, "wbe");
    if (!fp)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot create: %s", path, strerror(errno));
    fprintf(fp, "# written by tusk: one 'key = value' per line\n");
    for (size_t i = 0; i < p->n; i++)
        fprintf(fp, "%s = %s\n", p->keys[i], p->values[i]);
    int bad = ferror(fp);
    if (fclose(fp) != 0 || bad)
        return tusk_error_set(err, TUSK_EIO, "%s: write failed: %s", path, strerror(errno));
    return TUSK_OK;
}

size_t tusk_params_count(const tusk_params_t *p)
{
    return p->n;
}

const char *tusk_params_key(const tusk_params_t *p, size_t i)
{
    return i < p->n ? p->keys[i] : NULL;
}

const char *tusk_params_value(const tusk_params_t *p, size_t i)
{
    return i < p->n ? p->values[i] : NULL;
}

const char *tusk_params_get(const tusk_params_t *p, const char *key)
{
    int i = find(p, key);
    return i < 0 ? NULL : p->values[i];
}

const char *tusk_params_string(const tusk_params_t *p, const char *key, const char *fallback)
{
    const char *v = tusk_params_get(p, key);
    return v ? v : fallback;
}

int tusk_params_u64(const tusk_params_t *p, const char *key, uint64_t fallback, uint64_t *value,
                    tusk_error_t *err)
{
    const char *v = tusk_params_get(p, key);
    *value = fallback;
    if (!v)
        return TUSK_OK;
    if (tusk_parse_u64x(v, 0, UINT64_MAX, value) != 0)
        return tusk_error_set(err, TUSK_EPARAM, "parameter '%s': '%s' is not an unsigned integer", key, v);
    return TUSK_OK;
}

int tusk_params_double(const tusk_params_t *p, const char *key, double fallback, double *value,
                       tusk_error_t *err)
{
    const char *v = tusk_params_get(p, key);
    *value = fallback;
    if (!v)
        return TUSK_OK;
    if (tusk_parse_double(v, -DBL_MAX, DBL_MAX, value) != 0)
        return tusk_error_set(err, TUSK_EPARAM, "parameter '%s': '%s' is not a finite number", key, v);
    return TUSK_OK;
}

int tusk_params_bool(const tusk_params_t *p, const char *key, bool fallback, bool *value, tusk_error_t *err)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    const char *v = tusk_params_get(p, key);
    *value = fallback;
    if (!v)
        return TUSK_OK;
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *value = true;
            return TUSK_OK;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *value = false;
            return TUSK_OK;
        }
    }
    return tusk_error_set(err, TUSK_EPARAM, "parameter '%s': '%s' is not a boolean (true/false, yes/no, on/off, 1/0)",
                          key, v);
}

/* An entry ending in '*' names a family of keys by its prefix
 * ("cl.define.*" accepts cl.define.NSEG). */
static bool listed(const char *const *list, const char *key)
{
    for (; *list; list++) {
        size_t n = strlen(*list);
        if (n && (*list)[n - 1] == '*' ? strncmp(*list, key, n - 1) == 0 && key[n - 1] != '\0'
                                       : strcmp(*list, key) == 0)
            return true;
    }
    return false;
}

bool tusk_params_is_host_key(const char *key)
{
    return listed(host_keys, key);
}

int tusk_params_expect(const tusk_params_t *p, const char *const *known, tusk_error_t *err)
{
    for (size_t i = 0; i < p->n; i++) {
        if (tusk_params_is_host_key(p->keys[i]) || listed(known, p->keys[i]))
            continue;
        char list[512] = "";
        size_t used = 0;
        for (const char *const *k = known; *k && used < sizeof list; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *k);
        return tusk_error_set(err, TUSK_EPARAM, "unknown parameter '%s' (known: %s)", p->keys[i],
                              list[0] ? list : "none");
    }
    return TUSK_OK;
}
