/* security.c - see security.h. */
#define _GNU_SOURCE /* getrandom's header on older glibc; O_NOFOLLOW, O_CLOEXEC */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "security.h"
#include "base/parse.h"

/* ---- files ------------------------------------------------------------------ */

/* What is wrong with a private folder (NULL: nothing). */
static const char *private_problem(const struct stat *st, char *why, size_t n)
{
    if (S_ISLNK(st->st_mode))
        return "it is a symbolic link";
    if (!S_ISDIR(st->st_mode))
        return "it is not a folder";
    if (st->st_uid != geteuid()) {
        snprintf(why, n, "it belongs to uid %ld, not to you (uid %ld)", (long)st->st_uid, (long)geteuid());
        return why;
    }
    if (st->st_mode & 077) {
        snprintf(why, n, "its mode %04o lets others in (chmod 700 it)", (unsigned)(st->st_mode & 07777));
        return why;
    }
    return NULL;
}

int tusk_private_folder(const char *dir, bool create, tusk_error_t *err)
{
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot create: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0)
        return tusk_error_set(err, TUSK_EIO, "%s: %s", dir, strerror(errno));
    char why[128];
    const char *problem = private_problem(&st, why, sizeof why);
    if (problem)
        return tusk_error_set(err, TUSK_EIO, "%s: refused as a private folder: %s", dir, problem);
    return TUSK_OK;
}

int tusk_private_dir(char *out, size_t size, tusk_error_t *err)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (xdg && *xdg) {
        /* systemd makes it 0700 and ours; anything else is not to be trusted. */
        int rc = tusk_private_folder(xdg, false, err);
        if (rc != TUSK_OK) {
            tusk_error_prefix(err, "XDG_RUNTIME_DIR");
            return rc;
        }
        n = snprintf(out, size, "%s/tusk", xdg);
    } else {
        const char *tmp = getenv("TMPDIR");
        n = snprintf(out, size, "%s/tusk-%ld", tmp && *tmp ? tmp : "/tmp", (long)geteuid());
    }
    if (n < 0 || (size_t)n >= size)
        return tusk_error_set(err, TUSK_EINVAL, "the private folder's path is too long");
    int rc = tusk_private_folder(out, true, err);
    if (rc != TUSK_OK)
        tusk_error_prefix(err, "the folder for your runs' files");
    return rc;
}

/* tusk_open_nofollow; `root_too`: a file of root's will do as well. */
static int open_nofollow(const char *path, int flags, mode_t mode, bool root_too, tusk_error_t *err)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ELOOP || (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)))
            tusk_error_set(err, TUSK_EIO, "%s: is a symbolic link: refused (it may point anywhere)", path);
        else if (e == EEXIST)
            tusk_error_set(err, TUSK_EIO, "%s: exists already: refused (a new file was expected)", path);
        else
            tusk_error_set(err, TUSK_EIO, "%s: cannot open: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    const char *problem = NULL;
    if (fstat(fd, &st) != 0)
        problem = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        problem = "not a regular file";
    else if (st.st_uid != geteuid() && !(root_too && st.st_uid == 0))
        problem = "it belongs to another user";
    else if (st.st_nlink != 1)
        problem = "it has other (hard) links";
    if (problem) {
        close(fd);
        tusk_error_set(err, TUSK_EIO, "%s: refused: %s", path, problem);
        return -1;
    }
    return fd;
}

int tusk_open_nofollow(const char *path, int flags, mode_t mode, tusk_error_t *err)
{
    return open_nofollow(path, flags, mode, false, err);
}

/* Read at most `max` bytes of an open file (closed here). */
static int read_fd(int fd, const char *path, size_t max, char **data, size_t *size, tusk_error_t *err)
{
    char *buf = malloc(max + 1);
    if (!buf) {
        close(fd);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    size_t got = 0;
    while (got <= max) {
        ssize_t r = read(fd, buf + got, max + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return tusk_error_set(err, TUSK_EIO, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got > max) {
        free(buf);
        return tusk_error_set(err, TUSK_EIO, "%s: larger than %zu bytes", path, max);
    }
    buf[got] = '\0';
    *data = buf;
    *size = got;
    return TUSK_OK;
}

int tusk_read_private(const char *path, size_t max, char **data, size_t *size, tusk_error_t *err)
{
    *data = NULL;
    *size = 0;
    int fd = tusk_open_nofollow(path, O_RDONLY, 0, err);
    if (fd < 0)
        return TUSK_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0 || (st.st_mode & 077)) {
        close(fd);
        return tusk_error_set(err, TUSK_EIO, "%s: readable by others (mode %04o): refused, it holds secrets "
                              "(chmod 600 it)", path, (unsigned)(st.st_mode & 07777));
    }
    return read_fd(fd, path, max, data, size, err);
}

int tusk_write_new(const char *path, const void *data, size_t size, mode_t mode, tusk_error_t *err)
{
    int fd = tusk_open_nofollow(path, O_WRONLY | O_CREAT | O_EXCL, mode, err);
    if (fd < 0)
        return TUSK_EIO;
    const char *p = data;
    while (size) {
        ssize_t w = write(fd, p, size);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(path);
            return tusk_error_set(err, TUSK_EIO, "%s: cannot write: %s", path, strerror(e));
        }
        p += w;
        size -= (size_t)w;
    }
    if (close(fd) != 0)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot write: %s", path, strerror(errno));
    return TUSK_OK;
}

/* ---- names ------------------------------------------------------------------ */

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool tusk_host_name_valid(const char *host)
{
    size_t len = strlen(host);
    if (len == 0 || len > 253)
        return false;
    if (strchr(host, ':')) { /* an IPv6 address */
        for (const char *p = host; *p; p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F') || *p == ':' ||
                  *p == '.'))
                return false;
        return true;
    }
    size_t label = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = host[i];
        if (c == '.' || c == '\0') {
            if (label == 0 || label > 63 || host[i - 1] == '-')
                return false;
            label = 0;
        } else if (is_alnum(c) || (c == '-' && label > 0)) {
            label++;
        } else {
            return false;
        }
    }
    return true;
}

bool tusk_arg_shell_safe(const char *arg, bool option)
{
    if (!*arg || (arg[0] == '-' && !option))
        return false;
    for (const char *p = arg; *p; p++)
        if (!is_alnum(*p) && !strchr("_./:@%+=,-", *p))
            return false;
    return true;
}

int tusk_launcher_split(const char *tmpl, const char *host, char ***argv_out, size_t *argc_out, tusk_error_t *err)
{
    *argv_out = NULL;
    *argc_out = 0;
    size_t hlen = strlen(host), tlen = strlen(tmpl), words = 0;
    /* Room for every word with every {host} replaced, the pointers and the NULL. */
    size_t marks = 0;
    for (const char *p = strstr(tmpl, "{host}"); p; p = strstr(p + 6, "{host}"))
        marks++;
    size_t text_cap = tlen + marks * hlen + tlen + 1, ptr_cap = tlen / 2 + 2;
    char **argv = malloc(ptr_cap * sizeof *argv + 2 * text_cap);
    if (!argv)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    char *raw = (char *)(argv + ptr_cap), *out = raw + text_cap;
    /* First the words, unquoted, each NUL-terminated in raw. */
    size_t r = 0;
    const char *p = tmpl;
    char *starts[4096];
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (words == sizeof starts / sizeof starts[0]) {
            free(argv);
            return tusk_error_set(err, TUSK_EINVAL, "launcher '%s': too many words", tmpl);
        }
        starts[words++] = raw + r;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
            if (*p == '\'') {
                const char *q = strchr(p + 1, '\'');
                if (!q) {
                    free(argv);
                    return tusk_error_set(err, TUSK_EINVAL, "launcher '%s': a ' is not closed", tmpl);
                }
                memcpy(raw + r, p + 1, (size_t)(q - p - 1));
                r += (size_t)(q - p - 1);
                p = q + 1;
            } else if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
                        p++;
                    raw[r++] = *p++;
                }
                if (*p != '"') {
                    free(argv);
                    return tusk_error_set(err, TUSK_EINVAL, "launcher '%s': a \" is not closed", tmpl);
                }
                p++;
            } else if (*p == '\\') {
                if (!p[1]) {
                    free(argv);
                    return tusk_error_set(err, TUSK_EINVAL, "launcher '%s': ends with a backslash", tmpl);
                }
                raw[r++] = p[1];
                p += 2;
            } else {
                raw[r++] = *p++;
            }
        }
        raw[r++] = '\0';
    }
    if (words == 0) {
        free(argv);
        return tusk_error_set(err, TUSK_EINVAL, "launcher '%s': no command", tmpl);
    }
    if (words + 1 > ptr_cap) { /* cannot happen: a word takes at least one character and a blank */
        free(argv);
        return tusk_error_set(err, TUSK_EINVAL, "launcher '%s': too many words", tmpl);
    }
    /* Then {host} in each word. */
    size_t o = 0;
    for (size_t w = 0; w < words; w++) {
        argv[w] = out + o;
        for (const char *s = starts[w]; *s;) {
            if (strncmp(s, "{host}", 6) == 0) {
                memcpy(out + o, host, hlen);
                o += hlen;
                s += 6;
            } else {
                out[o++] = *s++;
            }
        }
        out[o++] = '\0';
    }
    argv[words] = NULL;
    *argv_out = argv;
    *argc_out = words;
    return TUSK_OK;
}

/* ---- keys ---------------------------------------------------------------------- */

int tusk_keypair_new(char public_key[TUSK_KEY_CHARS + 1], char secret_key[TUSK_KEY_CHARS + 1], tusk_error_t *err)
{
    if (zmq_curve_keypair(public_key, secret_key) != 0)
        return tusk_error_set(err, TUSK_EIO, "cannot make a CURVE key pair: %s (libzmq without CURVE?)",
                              zmq_strerror(errno));
    return TUSK_OK;
}

int tusk_random_hex(char *out, size_t bytes, tusk_error_t *err)
{
    unsigned char buf[64];
    if (bytes > sizeof buf)
        return tusk_error_set(err, TUSK_EINVAL, "too many random bytes");
    size_t got = 0;
    while (got < bytes) {
        ssize_t r = getrandom(buf + got, bytes - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return tusk_error_set(err, TUSK_EIO, "getrandom: %s", strerror(errno));
        got += (size_t)r;
    }
    for (size_t i = 0; i < bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", buf[i]);
    out[2 * bytes] = '\0';
    return TUSK_OK;
}

static bool cert_name_ok(const char *name)
{
    if (!*name || name[0] == '.' || strlen(name) >= 128)
        return false;
    for (const char *p = name; *p; p++)
        if (!is_alnum(*p) && !strchr("._:-", *p))
            return false;
    return true;
}

int tusk_cert_dir_check(const char *dir, tusk_error_t *err)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return tusk_error_set(err, TUSK_EIO, "certificate folder %s: %s", dir, strerror(errno));
    if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
        return tusk_error_set(err, TUSK_EIO, "certificate folder %s: not a folder (or a symbolic link)", dir);
    if (st.st_uid != geteuid() && st.st_uid != 0)
        return tusk_error_set(err, TUSK_EIO, "certificate folder %s: belongs to uid %ld, neither you nor root", dir,
                              (long)st.st_uid);
    if (st.st_mode & 022)
        return tusk_error_set(err, TUSK_EIO, "certificate folder %s: others may write in it (mode %04o): anyone "
                              "could add a key", dir, (unsigned)(st.st_mode & 07777));
    return TUSK_OK;
}

int tusk_cert_load(const char *dir, const char *name, bool secret, tusk_cert_t *cert, tusk_error_t *err)
{
    if (!cert_name_ok(name))
        return tusk_error_set(err, TUSK_EINVAL, "certificate name '%s': letters, digits and . _ : - only", name);
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s.%s", dir, name, secret ? "key_secret" : "key");
    if (n < 0 || (size_t)n >= sizeof path)
        return tusk_error_set(err, TUSK_EINVAL, "%s: path too long", dir);
    char *text = NULL;
    size_t size = 0;
    int rc;
    if (secret) {
        rc = tusk_read_private(path, TUSK_CERT_MAX, &text, &size, err);
    } else {
        /* Public: anyone may read it, but it must not be a link or writable by others. */
        int fd = open_nofollow(path, O_RDONLY, 0, true, err);
        struct stat st;
        if (fd < 0)
            return TUSK_EIO;
        if (fstat(fd, &st) != 0 || (st.st_mode & 022)) {
            close(fd);
            return tusk_error_set(err, TUSK_EIO, "%s: others may write it: refused", path);
        }
        rc = read_fd(fd, path, TUSK_CERT_MAX, &text, &size, err);
    }
    if (rc != TUSK_OK)
        return rc;
    rc = tusk_cert_parse(text, size, cert, err);
    free(text);
    if (rc != TUSK_OK) {
        tusk_error_prefix(err, "%s", path);
        return rc;
    }
    if (secret && !cert->secret_key[0])
        return tusk_error_set(err, TUSK_EINVAL, "%s: no curve secret-key", path);
    return TUSK_OK;
}

int tusk_cert_new(const char *path, tusk_error_t *err)
{
    tusk_cert_t c;
    memset(&c, 0, sizeof c);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!cert_name_ok(name))
        return tusk_error_set(err, TUSK_EINVAL, "certificate name '%s': letters, digits and . _ : - only", name);
    snprintf(c.name, sizeof c.name, "%s", name);
    int rc = tusk_keypair_new(c.public_key, c.secret_key, err);
    if (rc != TUSK_OK)
        return rc;
    char pub[PATH_MAX], sec[PATH_MAX];
    if ((size_t)snprintf(pub, sizeof pub, "%s.key", path) >= sizeof pub ||
        (size_t)snprintf(sec, sizeof sec, "%s.key_secret", path) >= sizeof sec)
        return tusk_error_set(err, TUSK_EINVAL, "%s: path too long", path);
    size_t len;
    char *text = tusk_cert_format(&c, 1, &len);
    if (!text)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    rc = tusk_write_new(sec, text, len, 0600, err);
    free(text);
    if (rc != TUSK_OK)
        return rc;
    text = tusk_cert_format(&c, 0, &len);
    if (!text) {
        unlink(sec);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    rc = tusk_write_new(pub, text, len, 0644, err);
    free(text);
    if (rc != TUSK_OK)
        unlink(sec);
    memset(&c, 0, sizeof c);
    return rc;
}

/* ---- sockets ---------------------------------------------------------------------- */

#define MAX_WATCHED 128
#define DOMAIN_TCP "tusk-tcp"
#define DOMAIN_IPC "tusk-ipc"
/* Refusals said in the log: the first ones, then every 1000th. */
#define DENIALS_SAID 10

typedef struct watched {
    void *sock;   /* the bound socket (the main thread's) */
    void *reader; /* PAIR reading its monitor (the handler thread's) */
    char name[64];
    atomic_uint_fast64_t accepted, succeeded;
} watched_t;

typedef struct trusted {
    char key[TUSK_KEY_CHARS + 1];
    char user[128];
} trusted_t;

struct tusk_sec {
    void *zctx;
    tusk_secrets_t sx;
    char label[160];
    char public_key[TUSK_KEY_CHARS + 1], secret_key[TUSK_KEY_CHARS + 1];
    char owner[128];
    trusted_t *trusted;
    size_t n_trusted;
    /* the handler thread, started by the first bind */
    pthread_t thread;
    bool started;
    void *pipe_main, *pipe_thread; /* PAIR: commands */
    void *zap;                     /* REP at inproc://zeromq.zap.01 (the thread's) */
    watched_t watched[MAX_WATCHED];
    atomic_uint n_watched;
    atomic_uint_fast64_t denied;
};

static int load_trusted(tusk_sec_t *sec, tusk_error_t *err)
{
    const char *dir = sec->sx.certs;
    int rc = tusk_cert_dir_check(dir, err);
    if (rc != TUSK_OK)
        return rc;
    DIR *d = opendir(dir);
    if (!d)
        return tusk_error_set(err, TUSK_EIO, "certificate folder %s: %s", dir, strerror(errno));
    struct dirent *e;
    rc = TUSK_OK;
    while (rc == TUSK_OK && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".key") != 0 || e->d_name[0] == '.')
            continue;
        char name[128];
        if (len - 4 >= sizeof name)
            continue;
        memcpy(name, e->d_name, len - 4);
        name[len - 4] = '\0';
        tusk_cert_t c;
        rc = tusk_cert_load(dir, name, false, &c, err);
        if (rc != TUSK_OK)
            break;
        trusted_t *t = realloc(sec->trusted, (sec->n_trusted + 1) * sizeof *t);
        if (!t) {
            rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            break;
        }
        sec->trusted = t;
        snprintf(t[sec->n_trusted].key, sizeof t->key, "%s", c.public_key);
        snprintf(t[sec->n_trusted].user, sizeof t->user, "%s", name);
        sec->n_trusted++;
    }
    closedir(d);
    return rc;
}

int tusk_sec_new(tusk_sec_t **out, void *zctx, const tusk_secrets_t *secrets, const char *label, tusk_error_t *err)
{
    *out = NULL;
    tusk_sec_t *sec = calloc(1, sizeof *sec);
    if (!sec)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    sec->zctx = zctx;
    sec->sx = *secrets;
    snprintf(sec->label, sizeof sec->label, "%s", label);
    atomic_init(&sec->n_watched, 0);
    atomic_init(&sec->denied, 0);
    int rc = TUSK_OK;
    if (sec->sx.curve && !zmq_has("curve")) {
        rc = tusk_error_set(err, TUSK_EINVAL, "this libzmq has no CURVE (zmq_has(\"curve\") is false): build it "
                            "with libsodium, or run without authentication (tusk-run --security none)");
    } else if (sec->sx.curve && sec->sx.certs[0]) {
        tusk_cert_t own;
        rc = tusk_cert_load(sec->sx.certs, sec->sx.cert, true, &own, err);
        if (rc == TUSK_OK)
            rc = load_trusted(sec, err);
        if (rc == TUSK_OK) {
            memcpy(sec->public_key, own.public_key, sizeof sec->public_key);
            memcpy(sec->secret_key, own.secret_key, sizeof sec->secret_key);
            snprintf(sec->owner, sizeof sec->owner, "%s", sec->sx.server_cert);
            memset(&own, 0, sizeof own);
        }
    } else if (sec->sx.curve) {
        memcpy(sec->public_key, sec->sx.public_key, sizeof sec->public_key);
        memcpy(sec->secret_key, sec->sx.secret_key, sizeof sec->secret_key);
        sec->trusted = calloc(1, sizeof *sec->trusted);
        if (!sec->trusted) {
            rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        } else {
            /* The run's key pair: every process of the run holds it. */
            memcpy(sec->trusted[0].key, sec->sx.public_key, sizeof sec->trusted[0].key);
            snprintf(sec->trusted[0].user, sizeof sec->trusted[0].user, "run");
            sec->n_trusted = 1;
            snprintf(sec->owner, sizeof sec->owner, "run");
        }
    }
    if (rc != TUSK_OK) {
        free(sec->trusted);
        free(sec);
        return rc;
    }
    *out = sec;
    return TUSK_OK;
}

bool tusk_sec_curve(const tusk_sec_t *sec)
{
    return sec && sec->sx.curve;
}

const char *tusk_sec_owner(const tusk_sec_t *sec)
{
    return sec->owner;
}

const char *tusk_sec_user_for(const tusk_sec_t *sec, const char *name)
{
    return sec->sx.certs[0] ? name : "run";
}

static const char *trusted_user(const tusk_sec_t *sec, const char *key)
{
    for (size_t i = 0; i < sec->n_trusted; i++)
        if (strcmp(sec->trusted[i].key, key) == 0)
            return sec->trusted[i].user;
    return NULL;
}

/* The user id in a ZAP address of ipc: "...:UID:GID:PID" (libzmq's
 * SO_PEERCRED); -1 if there is none. */
static long ipc_peer_uid(const char *addr)
{
    const char *c3 = strrchr(addr, ':');
    if (!c3 || c3 == addr)
        return -1;
    const char *c2 = c3 - 1;
    while (c2 > addr && *c2 != ':')
        c2--;
    if (*c2 != ':' || c2 == addr)
        return -1;
    const char *c1 = c2 - 1;
    while (c1 > addr && *c1 != ':')
        c1--;
    if (*c1 != ':')
        return -1;
    char uid[32];
    size_t n = (size_t)(c2 - c1 - 1);
    if (n == 0 || n >= sizeof uid)
        return -1;
    memcpy(uid, c1 + 1, n);
    uid[n] = '\0';
    uint64_t v;
    return tusk_parse_u64(uid, 0, LONG_MAX, &v) == 0 ? (long)v : -1;
}

/* Answer one ZAP request (ZeroMQ RFC 27). */
static void zap_answer(tusk_sec_t *sec)
{
    zmq_msg_t f[8];
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sec->zap, 0) < 0) {
            zmq_msg_close(&m);
            break;
        }
        more = zmq_msg_more(&m);
        if (n < 8)
            f[n++] = m;
        else
            zmq_msg_close(&m);
    }
    char domain[32] = "", address[256] = "", mech[16] = "", why[160] = "";
    const char *user = NULL;
    if (n >= 6) {
        size_t s = zmq_msg_size(&f[2]);
        memcpy(domain, zmq_msg_data(&f[2]), s < sizeof domain ? s : sizeof domain - 1);
        s = zmq_msg_size(&f[3]);
        memcpy(address, zmq_msg_data(&f[3]), s < sizeof address ? s : sizeof address - 1);
        s = zmq_msg_size(&f[5]);
        memcpy(mech, zmq_msg_data(&f[5]), s < sizeof mech ? s : sizeof mech - 1);
    }
    char uid_user[32];
    if (n < 6) {
        snprintf(why, sizeof why, "a malformed request");
    } else if (strcmp(mech, "CURVE") == 0 && n == 7 && zmq_msg_size(&f[6]) == 32) {
        char key[TUSK_KEY_CHARS + 1];
        zmq_z85_encode(key, zmq_msg_data(&f[6]), 32);
        user = sec->sx.curve ? trusted_user(sec, key) : NULL;
        if (!user)
            snprintf(why, sizeof why, "an unknown key %.8s...", key);
    } else if (strcmp(mech, "NULL") == 0 && strcmp(domain, DOMAIN_IPC) == 0) {
        long uid = ipc_peer_uid(address);
        if (uid >= 0 && uid == (long)geteuid()) {
            snprintf(uid_user, sizeof uid_user, "uid:%ld", uid);
            user = uid_user;
        } else {
            snprintf(why, sizeof why, "another user (uid %ld)", uid);
        }
    } else if (strcmp(mech, "NULL") == 0 && strcmp(domain, DOMAIN_TCP) == 0 && !sec->sx.curve) {
        user = ""; /* security none: anyone who reaches the port */
    } else {
        snprintf(why, sizeof why, "mechanism %s not allowed here", mech);
    }
    zmq_send(sec->zap, "1.0", 3, ZMQ_SNDMORE);
    if (n >= 2)
        zmq_send(sec->zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), ZMQ_SNDMORE);
    else
        zmq_send(sec->zap, "", 0, ZMQ_SNDMORE);
    zmq_send(sec->zap, user ? "200" : "400", 3, ZMQ_SNDMORE);
    zmq_send(sec->zap, user ? "OK" : "refused", user ? 2 : 7, ZMQ_SNDMORE);
    zmq_send(sec->zap, user ? user : "", user ? strlen(user) : 0, ZMQ_SNDMORE);
    zmq_send(sec->zap, "", 0, 0);
    if (!user) {
        uint64_t d = atomic_fetch_add(&sec->denied, 1) + 1;
        if (d <= DENIALS_SAID || d % 1000 == 0)
            fprintf(stderr, "%s: refused a connection from %s (%s, %s): %s%s\n", sec->label,
                    address[0] ? address : "?", domain, mech[0] ? mech : "?", why,
                    d == DENIALS_SAID ? " (further refusals are counted, one in 1000 said)" : "");
    }
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
}

/* Count the events of one monitor. */
static void read_monitor(watched_t *w)
{
    while (true) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, w->reader, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            return;
        }
        int more = zmq_msg_more(&m);
        if (zmq_msg_size(&m) >= 2) {
            uint16_t ev; /* in the host's order: libzmq and this thread share the machine */
            memcpy(&ev, zmq_msg_data(&m), sizeof ev);
            if (ev == ZMQ_EVENT_ACCEPTED)
                atomic_fetch_add(&w->accepted, 1);
            else if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
                atomic_fetch_add(&w->succeeded, 1);
        }
        zmq_msg_close(&m);
        if (more) { /* the endpoint frame */
            zmq_msg_init(&m);
            zmq_msg_recv(&m, w->reader, 0);
            zmq_msg_close(&m);
        }
    }
}

static void *handler(void *arg)
{
    tusk_sec_t *sec = arg;
    zmq_pollitem_t items[2 + MAX_WATCHED];
    while (true) {
        unsigned n = atomic_load(&sec->n_watched);
        items[0] = (zmq_pollitem_t){.socket = sec->pipe_thread, .events = ZMQ_POLLIN};
        items[1] = (zmq_pollitem_t){.socket = sec->zap, .events = ZMQ_POLLIN};
        for (unsigned i = 0; i < n; i++)
            items[2 + i] = (zmq_pollitem_t){.socket = sec->watched[i].reader, .events = ZMQ_POLLIN};
        if (zmq_poll(items, (int)(2 + n), -1) < 0) {
            if (errno == ETERM)
                break;
            continue;
        }
        for (unsigned i = 0; i < n; i++)
            if (items[2 + i].revents & ZMQ_POLLIN)
                read_monitor(&sec->watched[i]);
        if (items[1].revents & ZMQ_POLLIN)
            zap_answer(sec);
        if (items[0].revents & ZMQ_POLLIN) {
            char cmd[80] = "";
            int len = zmq_recv(sec->pipe_thread, cmd, sizeof cmd - 1, 0);
            if (len < 0)
                break;
            cmd[len < (int)sizeof cmd ? len : (int)sizeof cmd - 1] = '\0';
            if (strcmp(cmd, "stop") == 0)
                break;
            if (strcmp(cmd, "sync") == 0) {
                /* Everything the monitors said so far, counted now. */
                for (unsigned i = 0; i < atomic_load(&sec->n_watched); i++)
                    read_monitor(&sec->watched[i]);
                zmq_send(sec->pipe_thread, "ok", 2, 0);
                continue;
            }
            /* "watch N ENDPOINT": read socket N's monitor from now on. */
            unsigned idx = 0;
            char ep[64] = "";
            if (sscanf(cmd, "watch %u %63s", &idx, ep) != 2)
                continue;
            int ok = idx == atomic_load(&sec->n_watched) && idx < MAX_WATCHED;
            void *r = ok ? zmq_socket(sec->zctx, ZMQ_PAIR) : NULL;
            int zero = 0;
            ok = r && zmq_setsockopt(r, ZMQ_RCVHWM, &zero, sizeof zero) == 0 &&
                 zmq_setsockopt(r, ZMQ_LINGER, &zero, sizeof zero) == 0 && zmq_connect(r, ep) == 0;
            if (ok) {
                sec->watched[idx].reader = r;
                atomic_store(&sec->n_watched, idx + 1);
            } else if (r) {
                zmq_close(r);
            }
            zmq_send(sec->pipe_thread, ok ? "ok" : "no", 2, 0);
        }
    }
    for (unsigned i = 0; i < atomic_load(&sec->n_watched); i++)
        if (sec->watched[i].reader)
            read_monitor(&sec->watched[i]);
    return NULL;
}

static int start_handler(tusk_sec_t *sec, tusk_error_t *err)
{
    if (sec->started)
        return TUSK_OK;
    char pipe[64];
    snprintf(pipe, sizeof pipe, "inproc://tusk-sec-%p", (void *)sec);
    int zero = 0;
    sec->pipe_main = zmq_socket(sec->zctx, ZMQ_PAIR);
    sec->pipe_thread = zmq_socket(sec->zctx, ZMQ_PAIR);
    sec->zap = zmq_socket(sec->zctx, ZMQ_REP);
    if (!sec->pipe_main || !sec->pipe_thread || !sec->zap ||
        zmq_setsockopt(sec->pipe_main, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_setsockopt(sec->pipe_thread, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_setsockopt(sec->zap, ZMQ_LINGER, &zero, sizeof zero) != 0 || zmq_bind(sec->pipe_main, pipe) != 0 ||
        zmq_connect(sec->pipe_thread, pipe) != 0 || zmq_bind(sec->zap, "inproc://zeromq.zap.01") != 0)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot set up the authentication handler: %s", sec->label,
                              zmq_strerror(errno));
    /* pthread_create is a full barrier: the thread may use the sockets made here. */
    if (pthread_create(&sec->thread, NULL, handler, sec) != 0)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot start the authentication thread", sec->label);
    sec->started = true;
    return TUSK_OK;
}

static bool is_tcp(const char *endpoint)
{
    return strncmp(endpoint, "tcp://", 6) == 0;
}

int tusk_sec_bind(tusk_sec_t *sec, void *sock, const char *endpoint, const char *name, char *bound, size_t bound_size,
                  tusk_error_t *err)
{
    int rc = start_handler(sec, err);
    if (rc != TUSK_OK)
        return rc;
    unsigned idx = atomic_load(&sec->n_watched);
    if (idx >= MAX_WATCHED)
        return tusk_error_set(err, TUSK_EINVAL, "%s: more than %d bound sockets", sec->label, MAX_WATCHED);
    bool tcp = is_tcp(endpoint);
    const char *domain = tcp ? DOMAIN_TCP : DOMAIN_IPC;
    int one = 1;
    if (zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, domain, strlen(domain)) != 0 ||
        (tcp && sec->sx.curve &&
         (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
          zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, sec->secret_key, TUSK_KEY_CHARS) != 0)))
        return tusk_error_set(err, TUSK_EIO, "%s: %s: cannot set up authentication: %s", sec->label, name,
                              zmq_strerror(errno));
    /* Watch it before it binds: nothing is missed, and the monitor always
     * has its reader (a monitor without one would block libzmq). */
    watched_t *w = &sec->watched[idx];
    char mon[64], cmd[96], answer[8] = "";
    snprintf(mon, sizeof mon, "inproc://tusk-mon-%p-%u", (void *)sec, idx);
    snprintf(cmd, sizeof cmd, "watch %u %s", idx, mon);
    atomic_init(&w->accepted, 0);
    atomic_init(&w->succeeded, 0);
    w->sock = sock;
    w->reader = NULL;
    snprintf(w->name, sizeof w->name, "%s", name);
    if (zmq_socket_monitor(sock, mon, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0 ||
        zmq_send(sec->pipe_main, cmd, strlen(cmd), 0) < 0 || zmq_recv(sec->pipe_main, answer, sizeof answer, 0) != 2 ||
        memcmp(answer, "ok", 2) != 0) {
        zmq_socket_monitor(sock, NULL, 0);
        return tusk_error_set(err, TUSK_EIO, "%s: %s: cannot watch the socket: %s", sec->label, name,
                              zmq_strerror(errno));
    }
    /* The reader is connected (the thread counts it from now on). */
    if (zmq_bind(sock, endpoint) != 0)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot bind %s at %s: %s", sec->label, name, endpoint,
                              zmq_strerror(errno));
    if (bound) {
        size_t len = bound_size;
        if (zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, bound, &len) != 0)
            return tusk_error_set(err, TUSK_EIO, "%s: %s: where did it bind? %s", sec->label, name,
                                  zmq_strerror(errno));
    }
    return TUSK_OK;
}

int tusk_sec_connect(tusk_sec_t *sec, void *sock, const char *endpoint, const char *server, tusk_error_t *err)
{
    if (sec && is_tcp(endpoint) && sec->sx.curve) {
        char server_key[TUSK_KEY_CHARS + 1];
        if (sec->sx.certs[0]) {
            tusk_cert_t c;
            int rc = tusk_cert_load(sec->sx.certs, server ? server : sec->sx.server_cert, false, &c, err);
            if (rc != TUSK_OK)
                return rc;
            memcpy(server_key, c.public_key, sizeof server_key);
        } else {
            memcpy(server_key, sec->sx.server_key, sizeof server_key);
        }
        if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server_key, TUSK_KEY_CHARS) != 0 ||
            zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, sec->public_key, TUSK_KEY_CHARS) != 0 ||
            zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, sec->secret_key, TUSK_KEY_CHARS) != 0)
            return tusk_error_set(err, TUSK_EIO, "%s: cannot set the CURVE keys for %s: %s", sec->label, endpoint,
                                  zmq_strerror(errno));
    }
    if (zmq_connect(sock, endpoint) != 0)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot connect to %s: %s", sec ? sec->label : "tusk", endpoint,
                              zmq_strerror(errno));
    return TUSK_OK;
}

void tusk_sec_close(tusk_sec_t *sec, void *sock)
{
    if (!sock)
        return;
    unsigned n = sec ? atomic_load(&sec->n_watched) : 0;
    for (unsigned i = 0; i < n; i++)
        if (sec->watched[i].sock == sock) {
            zmq_socket_monitor(sock, NULL, 0); /* no more events: none can wait for a reader */
            sec->watched[i].sock = NULL;
        }
    zmq_close(sock);
}

tusk_sec_counts_t tusk_sec_counts(tusk_sec_t *sec, const char *name)
{
    tusk_sec_counts_t c = {0};
    if (!sec)
        return c;
    if (sec->started) {
        /* A connection's accept and its handshake are in its monitor before
         * any message of it reaches us: once the handler has read what is
         * there, every connection that delivered something is counted as
         * through the handshake. */
        char ok[4];
        if (zmq_send(sec->pipe_main, "sync", 4, 0) == 4)
            zmq_recv(sec->pipe_main, ok, sizeof ok, 0);
    }
    unsigned n = atomic_load(&sec->n_watched);
    for (unsigned i = 0; i < n; i++) {
        if (name && strcmp(sec->watched[i].name, name) != 0)
            continue;
        uint64_t s = atomic_load(&sec->watched[i].succeeded), a = atomic_load(&sec->watched[i].accepted);
        c.accepted += a;
        c.refused += a > s ? a - s : 0;
    }
    c.denied = atomic_load(&sec->denied);
    return c;
}

void tusk_sec_destroy(tusk_sec_t **secp)
{
    if (!secp || !*secp)
        return;
    tusk_sec_t *sec = *secp;
    if (sec->started) {
        zmq_send(sec->pipe_main, "stop", 4, 0);
        pthread_join(sec->thread, NULL); /* a barrier too: its sockets are ours again */
    }
    for (unsigned i = 0; i < atomic_load(&sec->n_watched); i++)
        if (sec->watched[i].reader)
            zmq_close(sec->watched[i].reader);
    if (sec->zap)
        zmq_close(sec->zap);
    if (sec->pipe_main)
        zmq_close(sec->pipe_main);
    if (sec->pipe_thread)
        zmq_close(sec->pipe_thread);
    free(sec->trusted);
    memset(sec->secret_key, 0, sizeof sec->secret_key);
    memset(sec->sx.secret_key, 0, sizeof sec->sx.secret_key);
    free(sec);
    *secp = NULL;
}
