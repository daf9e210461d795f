/* wire.c - data message headers and control messages (see wire.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h" /* explicit little-endian loads and stores (header only) */
#include "runtime/wire.h"
#include "tusk_private.h"
#include "base/parse.h"

void tusk_wire_encode(const tusk_wire_header_t *h, uint8_t out[TUSK_WIRE_HEADER_SIZE])
{
    tusk_put_u32(out, TUSK_WIRE_MAGIC);
    tusk_put_u16(out + 4, TUSK_WIRE_VERSION);
    tusk_put_u16(out + 6, h->flags);
    tusk_put_u32(out + 8, h->run);
    tusk_put_u16(out + 12, h->incarnation);
    tusk_put_u16(out + 14, h->source_actor);
    tusk_put_u16(out + 16, h->source_instance);
    tusk_put_u16(out + 18, h->input_actor);
    tusk_put_u16(out + 20, h->input_instance);
    tusk_put_u16(out + 22, 0);
    tusk_put_u64(out + 24, h->seq);
    tusk_put_u64(out + 32, h->input_seq);
    tusk_put_u32(out + 40, h->payload_size);
    tusk_put_u32(out + 44, 0);
}

int tusk_wire_decode(const uint8_t *in, size_t size, tusk_wire_header_t *h, tusk_error_t *err)
{
    if (size != TUSK_WIRE_HEADER_SIZE)
        return tusk_error_set(err, TUSK_EINVAL, "data message header of %zu bytes, expected %u", size,
                              TUSK_WIRE_HEADER_SIZE);
    if (tusk_get_u32(in) != TUSK_WIRE_MAGIC)
        return tusk_error_set(err, TUSK_EINVAL, "data message header without the TSKD magic (0x%08X)",
                              (unsigned)tusk_get_u32(in));
    if (tusk_get_u16(in + 4) != TUSK_WIRE_VERSION)
        return tusk_error_set(err, TUSK_EINVAL, "data message header version %u, this host speaks %u",
                              (unsigned)tusk_get_u16(in + 4), TUSK_WIRE_VERSION);
    h->flags = tusk_get_u16(in + 6);
    h->run = tusk_get_u32(in + 8);
    h->incarnation = tusk_get_u16(in + 12);
    h->source_actor = tusk_get_u16(in + 14);
    h->source_instance = tusk_get_u16(in + 16);
    h->input_actor = tusk_get_u16(in + 18);
    h->input_instance = tusk_get_u16(in + 20);
    h->seq = tusk_get_u64(in + 24);
    h->input_seq = tusk_get_u64(in + 32);
    h->payload_size = tusk_get_u32(in + 40);
    if (h->flags & ~TUSK_WIRE_KNOWN_FLAGS)
        return tusk_error_set(err, TUSK_EINVAL, "data message header with unknown flags 0x%04X", (unsigned)h->flags);
    if ((h->flags & (TUSK_WIRE_END_OF_RUN | TUSK_WIRE_EMPTY)) && h->payload_size != 0)
        return tusk_error_set(err, TUSK_EINVAL, "data message header: an end-of-run or empty message with %u bytes",
                              (unsigned)h->payload_size);
    if ((h->flags & TUSK_WIRE_END_OF_RUN) && (h->flags & ~TUSK_WIRE_END_OF_RUN))
        return tusk_error_set(err, TUSK_EINVAL, "data message header: end of run combined with other flags");
    if ((h->flags & TUSK_WIRE_RELEASE) && (!(h->flags & TUSK_WIRE_EMPTY) || (h->flags & TUSK_WIRE_COMPLETES)))
        return tusk_error_set(err, TUSK_EINVAL,
                              "data message header: a release that is not an empty marker, or also completes");
    if ((h->flags & TUSK_WIRE_SHM) && (h->flags & TUSK_WIRE_EMPTY))
        return tusk_error_set(err, TUSK_EINVAL, "data message header: an empty marker in shared memory");
    if (tusk_get_u16(in + 22) != 0 || tusk_get_u32(in + 44) != 0)
        return tusk_error_set(err, TUSK_EINVAL, "data message header: reserved fields are not zero");
    return TUSK_OK;
}

/* ---- shared-memory slots ------------------------------------------------- */

void tusk_wire_shm_encode(const tusk_wire_shm_t *d, uint8_t out[TUSK_WIRE_SHM_SIZE])
{
    tusk_put_u32(out, TUSK_WIRE_SHM_MAGIC);
    tusk_put_u32(out + 4, d->pid);
    tusk_put_u32(out + 8, d->fd);
    tusk_put_u32(out + 12, d->slot);
    tusk_put_u32(out + 16, d->link);
    tusk_put_u32(out + 20, 0);
    tusk_put_u64(out + 24, d->nonce);
}

int tusk_wire_shm_decode(const uint8_t *in, size_t size, tusk_wire_shm_t *d, tusk_error_t *err)
{
    if (size != TUSK_WIRE_SHM_SIZE)
        return tusk_error_set(err, TUSK_EINVAL, "shared-memory slot descriptor of %zu bytes, expected %u", size,
                              TUSK_WIRE_SHM_SIZE);
    if (tusk_get_u32(in) != TUSK_WIRE_SHM_MAGIC)
        return tusk_error_set(err, TUSK_EINVAL, "shared-memory slot descriptor without the TSHM magic (0x%08X)",
                              (unsigned)tusk_get_u32(in));
    d->pid = tusk_get_u32(in + 4);
    d->fd = tusk_get_u32(in + 8);
    d->slot = tusk_get_u32(in + 12);
    d->link = tusk_get_u32(in + 16);
    d->nonce = tusk_get_u64(in + 24);
    if (tusk_get_u32(in + 20) != 0)
        return tusk_error_set(err, TUSK_EINVAL, "shared-memory slot descriptor: reserved field is not zero");
    if (d->pid == 0 || d->pid > INT32_MAX || d->fd > INT32_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "shared-memory slot descriptor: pid %u, fd %u", (unsigned)d->pid,
                              (unsigned)d->fd);
    if (d->link >= 64)
        return tusk_error_set(err, TUSK_EINVAL, "shared-memory slot descriptor: link %u (at most 63)",
                              (unsigned)d->link);
    return TUSK_OK;
}

/* ---- control messages --------------------------------------------------- */

struct tusk_ctl {
    char verb[32];
    size_t n, cap;
    char **keys, **values;
};

static bool verb_valid(const char *v, size_t len)
{
    if (len == 0 || len >= 32)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((v[i] >= 'A' && v[i] <= 'Z') || v[i] == '_'))
            return false;
    return true;
}

static bool key_valid(const char *k, size_t len)
{
    if (len == 0 || len > 200)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ':' || c == '-'))
            return false;
    }
    return true;
}

tusk_ctl_t *tusk_ctl_new(const char *verb)
{
    if (!verb_valid(verb, strlen(verb)))
        return NULL;
    tusk_ctl_t *m = calloc(1, sizeof *m);
    if (m)
        memcpy(m->verb, verb, strlen(verb) + 1);
    return m;
}

void tusk_ctl_destroy(tusk_ctl_t **msg)
{
    if (!msg || !*msg)
        return;
    tusk_ctl_t *m = *msg;
    for (size_t i = 0; i < m->n; i++) {
        free(m->keys[i]);
        free(m->values[i]);
    }
    free(m->keys);
    free(m->values);
    free(m);
    *msg = NULL;
}

/* Take ownership of key and value. */
static int add(tusk_ctl_t *m, char *key, char *value)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 8;
        char **k = realloc(m->keys, cap * sizeof *k);
        if (k)
            m->keys = k;
        char **v = k ? realloc(m->values, cap * sizeof *v) : NULL;
        if (!v) {
            free(key);
            free(value);
            return TUSK_ENOMEM;
        }
        m->values = v;
        m->cap = cap;
    }
    m->keys[m->n] = key;
    m->values[m->n] = value;
    m->n++;
    return TUSK_OK;
}

int tusk_ctl_set(tusk_ctl_t *m, const char *key, const char *value)
{
    if (!key_valid(key, strlen(key)))
        return TUSK_EINVAL;
    char *k = tusk_strdup(key), *v = tusk_strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return TUSK_ENOMEM;
    }
    return add(m, k, v);
}

int tusk_ctl_set_u64(tusk_ctl_t *m, const char *key, uint64_t value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)value);
    return tusk_ctl_set(m, key, buf);
}

int tusk_ctl_setf(tusk_ctl_t *m, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return TUSK_EINVAL;
    char *v = malloc((size_t)n + 1);
    if (!v)
        return TUSK_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(v, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = tusk_ctl_set(m, key, v);
    free(v);
    return rc;
}

static bool needs_escape(unsigned char c)
{
    return c <= 0x20 || c == 0x7F || c == '%' || c == '=';
}

char *tusk_ctl_format(const tusk_ctl_t *m, size_t *length)
{
    size_t len = strlen(m->verb);
    for (size_t i = 0; i < m->n; i++) {
        len += 2 + strlen(m->keys[i]);
        for (const char *v = m->values[i]; *v; v++)
            len += needs_escape((unsigned char)*v) ? 3 : 1;
    }
    char *out = malloc(len + 1), *p = out;
    if (!out)
        return NULL;
    p += sprintf(p, "%s", m->verb);
    for (size_t i = 0; i < m->n; i++) {
        p += sprintf(p, " %s=", m->keys[i]);
        for (const unsigned char *v = (const unsigned char *)m->values[i]; *v; v++)
            if (needs_escape(*v))
                p += sprintf(p, "%%%02X", *v);
            else
                *p++ = (char)*v;
    }
    *p = '\0';
    if (length)
        *length = (size_t)(p - out);
    return out;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int tusk_ctl_parse(tusk_ctl_t **out, const char *text, size_t size, tusk_error_t *err)
{
    *out = NULL;
    const char *end = text + size;
    const char *sp = memchr(text, ' ', size);
    const char *vend = sp ? sp : end;
    if (!verb_valid(text, (size_t)(vend - text)))
        return tusk_error_set(err, TUSK_EINVAL, "control message: bad verb '%.*s'",
                              (int)((vend - text) > 40 ? 40 : (vend - text)), text);
    tusk_ctl_t *m = calloc(1, sizeof *m);
    if (!m)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    memcpy(m->verb, text, (size_t)(vend - text));
    char verb[32]; /* for messages, after m is gone */
    memcpy(verb, m->verb, sizeof verb);
    const char *p = vend;
    while (p < end) {
        if (*p != ' ') {
            tusk_ctl_destroy(&m);
            return tusk_error_set(err, TUSK_EINVAL, "control message %s: fields must be separated by one space",
                                  verb);
        }
        p++;
        const char *fend = memchr(p, ' ', (size_t)(end - p));
        if (!fend)
            fend = end;
        const char *eq = memchr(p, '=', (size_t)(fend - p));
        if (!eq || !key_valid(p, (size_t)(eq - p))) {
            tusk_ctl_destroy(&m);
            return tusk_error_set(err, TUSK_EINVAL, "control message %s: bad field '%.*s'", verb,
                                  (int)((fend - p) > 40 ? 40 : (fend - p)), p);
        }
        char *key = malloc((size_t)(eq - p) + 1), *value = malloc((size_t)(fend - eq));
        if (!key || !value) {
            free(key);
            free(value);
            tusk_ctl_destroy(&m);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        }
        memcpy(key, p, (size_t)(eq - p));
        key[eq - p] = '\0';
        size_t n = 0;
        for (const char *v = eq + 1; v < fend; v++) {
            if (*v == '%') {
                int hi = v + 2 < fend ? hexval(v[1]) : -1, lo = v + 2 < fend ? hexval(v[2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                    free(key);
                    free(value);
                    tusk_ctl_destroy(&m);
                    return tusk_error_set(err, TUSK_EINVAL, "control message %s: bad escape in field '%.*s'", verb,
                                          (int)((fend - p) > 40 ? 40 : (fend - p)), p);
                }
                value[n++] = (char)(hi << 4 | lo);
                v += 2;
            } else if ((unsigned char)*v <= 0x20 || *v == 0x7F || *v == '=') {
                free(key);
                free(value);
                tusk_ctl_destroy(&m);
                return tusk_error_set(err, TUSK_EINVAL, "control message %s: unescaped byte 0x%02X in a value", verb,
                                      (unsigned)(unsigned char)*v);
            } else {
                value[n++] = *v;
            }
        }
        value[n] = '\0';
        if (add(m, key, value) != TUSK_OK) {
            tusk_ctl_destroy(&m);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        }
        p = fend;
    }
    *out = m;
    return TUSK_OK;
}

const char *tusk_ctl_verb(const tusk_ctl_t *m)
{
    return m->verb;
}

size_t tusk_ctl_count(const tusk_ctl_t *m)
{
    return m->n;
}

const char *tusk_ctl_key(const tusk_ctl_t *m, size_t i)
{
    return i < m->n ? m->keys[i] : NULL;
}

const char *tusk_ctl_value(const tusk_ctl_t *m, size_t i)
{
    return i < m->n ? m->values[i] : NULL;
}

const char *tusk_ctl_get(const tusk_ctl_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->keys[i], key) == 0)
            return m->values[i];
    return NULL;
}

int tusk_ctl_get_u64(const tusk_ctl_t *m, const char *key, uint64_t fallback, uint64_t *value)
{
    const char *v = tusk_ctl_get(m, key);
    *value = fallback;
    if (!v)
        return TUSK_OK;
    return tusk_parse_u64(v, 0, UINT64_MAX, value) == 0 ? TUSK_OK : TUSK_EINVAL;
}

/* ---- run secrets and certificates ------------------------------------------ */

static const char z85_alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

int tusk_key_valid(const char *text, size_t len)
{
    if (len != TUSK_KEY_CHARS)
        return 0;
    for (size_t g = 0; g < len; g += 5) {
        uint64_t v = 0;
        for (size_t i = g; i < g + 5; i++) {
            const char *p = text[i] ? strchr(z85_alphabet, text[i]) : NULL;
            if (!p)
                return 0;
            v = v * 85 + (uint64_t)(p - z85_alphabet);
        }
        if (v > 0xFFFFFFFFu) /* five characters for four bytes: no more */
            return 0;
    }
    return 1;
}

static bool token_valid(const char *t, size_t len)
{
    if (len == 0 || len > 64)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f')))
            return false;
    return true;
}

/* A certificate's name (and so a file name): letters, digits and . _ : -,
 * not starting with a dot. */
static bool cert_name_valid(const char *n, size_t len)
{
    if (len == 0 || len >= 128 || n[0] == '.')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = n[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == ':' || c == '-'))
            return false;
    }
    return true;
}

/* Copy a value of `len` bytes into a field of `cap` bytes. */
static bool take_value(char *field, size_t cap, const char *v, size_t len)
{
    if (len >= cap || memchr(v, '\0', len))
        return false;
    memcpy(field, v, len);
    field[len] = '\0';
    return true;
}

int tusk_secrets_parse(const char *text, size_t size, tusk_secrets_t *s, tusk_error_t *err)
{
    memset(s, 0, sizeof *s);
    if (size > TUSK_SECRETS_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "run secrets: %zu bytes, more than the %u allowed", size,
                              TUSK_SECRETS_MAX);
    static const char *const keys[] = {"security", "public-key", "secret-key", "server-key",
                                       "certs",    "cert",       "server-cert", "token"};
    bool seen[sizeof keys / sizeof keys[0]] = {false};
    const char *p = text, *end = text + size;
    unsigned line = 0;
    bool header = false;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        size_t len = (size_t)(le - p);
        if (len == 0) {
            p = le + 1;
            continue;
        }
        if (!header) {
            if (len != 14 || memcmp(p, "tusk-secrets 1", 14) != 0)
                return tusk_error_set(err, TUSK_EINVAL, "run secrets, line %u: expected 'tusk-secrets 1'", line);
            header = true;
            p = le + 1;
            continue;
        }
        const char *sp = memchr(p, ' ', len);
        if (!sp)
            return tusk_error_set(err, TUSK_EINVAL, "run secrets, line %u: expected 'KEY VALUE'", line);
        size_t klen = (size_t)(sp - p), vlen = (size_t)(le - sp - 1);
        const char *v = sp + 1;
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] && !(strlen(keys[k]) == klen && memcmp(keys[k], p, klen) == 0))
            k++;
        if (k == sizeof keys / sizeof keys[0])
            return tusk_error_set(err, TUSK_EINVAL, "run secrets, line %u: unknown key '%.*s'", line,
                                  (int)(klen > 40 ? 40 : klen), p);
        if (seen[k])
            return tusk_error_set(err, TUSK_EINVAL, "run secrets, line %u: %s given twice", line, keys[k]);
        seen[k] = true;
        bool ok = true;
        switch (k) {
        case 0:
            ok = (vlen == 5 && memcmp(v, "curve", 5) == 0) || (vlen == 4 && memcmp(v, "none", 4) == 0);
            s->curve = vlen == 5;
            break;
        case 1: ok = tusk_key_valid(v, vlen) && take_value(s->public_key, sizeof s->public_key, v, vlen); break;
        case 2: ok = tusk_key_valid(v, vlen) && take_value(s->secret_key, sizeof s->secret_key, v, vlen); break;
        case 3: ok = tusk_key_valid(v, vlen) && take_value(s->server_key, sizeof s->server_key, v, vlen); break;
        case 4: ok = vlen > 0 && v[0] == '/' && take_value(s->certs, sizeof s->certs, v, vlen); break;
        case 5: ok = cert_name_valid(v, vlen) && take_value(s->cert, sizeof s->cert, v, vlen); break;
        case 6: ok = cert_name_valid(v, vlen) && take_value(s->server_cert, sizeof s->server_cert, v, vlen); break;
        default: ok = token_valid(v, vlen) && take_value(s->token, sizeof s->token, v, vlen); break;
        }
        if (!ok)
            return tusk_error_set(err, TUSK_EINVAL, "run secrets, line %u: bad %s", line, keys[k]);
        p = le + 1;
    }
    if (!header)
        return tusk_error_set(err, TUSK_EINVAL, "run secrets: empty (expected 'tusk-secrets 1' and the keys)");
    if (!seen[0])
        return tusk_error_set(err, TUSK_EINVAL, "run secrets: no 'security' line");
    bool pair = s->public_key[0] || s->secret_key[0] || s->server_key[0];
    bool certs = s->certs[0] || s->cert[0] || s->server_cert[0];
    if (!s->curve && (pair || certs))
        return tusk_error_set(err, TUSK_EINVAL, "run secrets: keys with 'security none'");
    if (s->curve && pair && certs)
        return tusk_error_set(err, TUSK_EINVAL, "run secrets: both a key pair and a certificate folder");
    if (s->curve && !certs && !(s->public_key[0] && s->secret_key[0] && s->server_key[0]))
        return tusk_error_set(err, TUSK_EINVAL, "run secrets: 'security curve' needs public-key, secret-key and "
                              "server-key, or certs, cert and server-cert");
    if (s->curve && certs && !(s->certs[0] && s->cert[0] && s->server_cert[0]))
        return tusk_error_set(err, TUSK_EINVAL, "run secrets: certs needs cert and server-cert");
    return TUSK_OK;
}

char *tusk_secrets_format(const tusk_secrets_t *s, size_t *length)
{
    size_t cap = 512 + strlen(s->certs) + strlen(s->cert) + strlen(s->server_cert) + strlen(s->token);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    int n = snprintf(out, cap, "tusk-secrets 1\nsecurity %s\n", s->curve ? "curve" : "none");
    const char *const names[] = {"public-key", "secret-key", "server-key", "certs", "cert", "server-cert", "token"};
    const char *const values[] = {s->public_key, s->secret_key, s->server_key, s->certs,
                                  s->cert,       s->server_cert, s->token};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (values[i][0])
            n += snprintf(out + n, cap - (size_t)n, "%s %s\n", names[i], values[i]);
    if (length)
        *length = (size_t)n;
    return out;
}

int tusk_cert_parse(const char *text, size_t size, tusk_cert_t *c, tusk_error_t *err)
{
    memset(c, 0, sizeof *c);
    if (size > TUSK_CERT_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "certificate: %zu bytes, more than the %u allowed", size,
                              TUSK_CERT_MAX);
    const char *p = text, *end = text + size;
    unsigned line = 0;
    char section[32] = "";
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end, *q = p;
        line++;
        while (q < le && (*q == ' ' || *q == '\t'))
            q++;
        const char *te = le;
        while (te > q && (te[-1] == ' ' || te[-1] == '\t' || te[-1] == '\r'))
            te--;
        bool indented = q > p;
        if (q == te || *q == '#') {
            p = le + 1;
            continue;
        }
        if (memchr(q, '\0', (size_t)(te - q)))
            return tusk_error_set(err, TUSK_EINVAL, "certificate, line %u: a NUL byte", line);
        if (!indented) {
            size_t n = (size_t)(te - q);
            if (memchr(q, '=', n) || n >= sizeof section)
                return tusk_error_set(err, TUSK_EINVAL, "certificate, line %u: expected a section name", line);
            memcpy(section, q, n);
            section[n] = '\0';
            p = le + 1;
            continue;
        }
        const char *eq = memchr(q, '=', (size_t)(te - q));
        if (!eq)
            return tusk_error_set(err, TUSK_EINVAL, "certificate, line %u: expected 'name = \"value\"'", line);
        const char *ke = eq;
        while (ke > q && (ke[-1] == ' ' || ke[-1] == '\t'))
            ke--;
        const char *v = eq + 1;
        while (v < te && (*v == ' ' || *v == '\t'))
            v++;
        size_t vlen = (size_t)(te - v);
        if (vlen >= 2 && (v[0] == '"' || v[0] == '\'') && v[vlen - 1] == v[0]) {
            v++;
            vlen -= 2;
        }
        size_t klen = (size_t)(ke - q);
        char *field = NULL;
        size_t cap = 0;
        bool key = false;
        if (strcmp(section, "curve") == 0 && klen == 10 && memcmp(q, "public-key", 10) == 0)
            field = c->public_key, cap = sizeof c->public_key, key = true;
        else if (strcmp(section, "curve") == 0 && klen == 10 && memcmp(q, "secret-key", 10) == 0)
            field = c->secret_key, cap = sizeof c->secret_key, key = true;
        else if (strcmp(section, "metadata") == 0 && klen == 4 && memcmp(q, "name", 4) == 0)
            field = c->name, cap = sizeof c->name;
        if (!field) {
            p = le + 1;
            continue; /* other metadata: not ours */
        }
        if (field[0])
            return tusk_error_set(err, TUSK_EINVAL, "certificate, line %u: %.*s given twice", line, (int)klen, q);
        if ((key && !tusk_key_valid(v, vlen)) || (!key && !cert_name_valid(v, vlen)) ||
            !take_value(field, cap, v, vlen))
            return tusk_error_set(err, TUSK_EINVAL, "certificate, line %u: bad %.*s", line, (int)klen, q);
        p = le + 1;
    }
    if (!c->public_key[0])
        return tusk_error_set(err, TUSK_EINVAL, "certificate: no curve public-key");
    return TUSK_OK;
}

char *tusk_cert_format(const tusk_cert_t *c, int with_secret, size_t *length)
{
    size_t cap = 512 + strlen(c->name);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    int n = snprintf(out, cap,
                     "#   tusk CURVE certificate%s%s\n"
                     "#   %s\n"
                     "metadata\n",
                     c->name[0] ? ": " : "", c->name,
                     with_secret ? "secret: keep this file to yourself (mode 0600), copy NAME.key instead"
                                 : "public: may be copied to every host of the deployment");
    if (c->name[0])
        n += snprintf(out + n, cap - (size_t)n, "    name = \"%s\"\n", c->name);
    n += snprintf(out + n, cap - (size_t)n, "curve\n    public-key = \"%s\"\n", c->public_key);
    if (with_secret && c->secret_key[0])
        n += snprintf(out + n, cap - (size_t)n, "    secret-key = \"%s\"\n", c->secret_key);
    if (length)
        *length = (size_t)n;
    return out;
}
