/* web.c - tusk-run's status page and /metrics over libmicrohttpd (see
 * web.h). */
#define _GNU_SOURCE /* open_memstream */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "security.h"
#include "tusk/export.h"
#include "web.h"

/* The page (web/index.html), built in by tools/embed-text.sh. */
TUSK_INTERNAL extern const char tusk_web_page[];
TUSK_INTERNAL extern const unsigned long tusk_web_page_size;

#define LIVE_FILE_MAX (16u << 20) /* a live picture larger than this is refused */
#define LIVE_NAMES_MAX 32         /* pictures listed per instance */
#define COMMAND_MAX 512           /* verb + args */

struct tusk_web {
    struct MHD_Daemon *daemon;
    pthread_mutex_t lock; /* the snapshot */
    tusk_status_t snap;
    bool loopback;
    unsigned port;
    char url[128];
    char token[65];
    char hosts[3][64]; /* Host headers taken on loopback */
    int (*command)(void *ctx, const char *verb, const char *args, const char *who, char **reply, tusk_error_t *err);
    void *ctx;
};

/* ---- responses ---------------------------------------------------------------- */

static enum MHD_Result send_buffer(struct MHD_Connection *conn, unsigned status, const char *type, void *data,
                                   size_t size, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(size, data, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                            "img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
                            "form-action 'none'");
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    return send_buffer(conn, status, "text/plain; charset=utf-8", (void *)text, strlen(text), MHD_RESPMEM_MUST_COPY);
}

/* A stream's text as the response (freed by libmicrohttpd). */
static enum MHD_Result send_stream(struct MHD_Connection *conn, unsigned status, const char *type, char *text,
                                   size_t size)
{
    if (!text)
        return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return send_buffer(conn, status, type, text, size, MHD_RESPMEM_MUST_FREE);
}

/* ---- who may ------------------------------------------------------------------ */

static bool same_secret(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned char diff = na != nb;
    for (size_t i = 0; i < na && i < nb; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0 && nb > 0;
}

static bool has_token(const tusk_web_t *w, struct MHD_Connection *conn)
{
    const char *t = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Tusk-Token");
    if (t && same_secret(t, w->token))
        return true;
    const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (a && strncmp(a, "Bearer ", 7) == 0 && same_secret(a + 7, w->token))
        return true;
    t = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
    return t && same_secret(t, w->token);
}

/* On loopback, the request must name us: a page of another site that a
 * DNS name rebound to 127.0.0.1 names that site. */
static bool host_ok(const tusk_web_t *w, struct MHD_Connection *conn)
{
    if (!w->loopback)
        return true;
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!host)
        return false;
    for (int i = 0; i < 3; i++)
        if (strcmp(host, w->hosts[i]) == 0)
            return true;
    return false;
}

static void peer_name(struct MHD_Connection *conn, char *out, size_t n)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(out, n, "?");
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out, (socklen_t)n);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out, (socklen_t)n);
}

/* ---- live pictures --------------------------------------------------------------- */

/* A picture's name: letters, digits, '_', '-', '.', not starting with
 * '.', ending in .svg or .png. */
static bool live_name_ok(const char *name, bool *svg)
{
    size_t n = strlen(name);
    if (n < 5 || n > 128 || name[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '-' || ch == '.'))
            return false;
    }
    *svg = strcmp(name + n - 4, ".svg") == 0;
    return *svg || strcmp(name + n - 4, ".png") == 0;
}

/* The live folder of instance `index` ("" none). */
static void live_dir_of(tusk_web_t *w, unsigned long index, char *dir, size_t n)
{
    pthread_mutex_lock(&w->lock);
    snprintf(dir, n, "%s", index < w->snap.n_inst ? w->snap.inst[index].live_dir : "");
    pthread_mutex_unlock(&w->lock);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static enum MHD_Result live_list(tusk_web_t *w, struct MHD_Connection *conn, unsigned long index)
{
    char dir[TUSK_STATUS_TEXT_MAX];
    live_dir_of(w, index, dir, sizeof dir);
    char *text = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&text, &size);
    if (!fp)
        return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    char *names[LIVE_NAMES_MAX];
    size_t n = 0;
    DIR *d = dir[0] ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) && n < LIVE_NAMES_MAX;) {
        bool svg;
        if (live_name_ok(e->d_name, &svg) && (names[n] = strdup(e->d_name)))
            n++;
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof names[0], cmp_names);
    fputc('[', fp);
    for (size_t i = 0; i < n; i++) {
        fprintf(fp, "%s\"%s\"", i ? "," : "", names[i]); /* the names need no escaping (live_name_ok) */
        free(names[i]);
    }
    fputs("]\n", fp);
    fclose(fp);
    return send_stream(conn, MHD_HTTP_OK, "application/json", text, size);
}

static enum MHD_Result live_file(tusk_web_t *w, struct MHD_Connection *conn, unsigned long index, const char *name)
{
    bool svg;
    char dir[TUSK_STATUS_TEXT_MAX], path[TUSK_STATUS_TEXT_MAX + 160];
    live_dir_of(w, index, dir, sizeof dir);
    if (!dir[0] || !live_name_ok(name, &svg))
        return send_text(conn, MHD_HTTP_NOT_FOUND, "no such picture\n");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tusk_error_t err;
    int fd = tusk_open_nofollow(path, O_RDONLY, 0, &err);
    if (fd < 0)
        return send_text(conn, MHD_HTTP_NOT_FOUND, "no such picture\n");
    char *data = NULL;
    size_t size = 0, cap = 0;
    bool ok = true;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 65536;
            char *more = cap <= LIVE_FILE_MAX ? realloc(data, cap) : NULL;
            if (!more) {
                ok = false;
                break;
            }
            data = more;
        }
        ssize_t got = read(fd, data + size, cap - size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            ok = false;
        if (got <= 0)
            break;
        size += (size_t)got;
    }
    close(fd);
    if (!ok) {
        free(data);
        return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the picture (too large?)\n");
    }
    return send_stream(conn, MHD_HTTP_OK, svg ? "image/svg+xml" : "image/png", data, size);
}

/* ---- commands --------------------------------------------------------------------- */

static bool command_text_ok(const char *s)
{
    if (strlen(s) > COMMAND_MAX)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            return false;
    return true;
}

static enum MHD_Result run_command(tusk_web_t *w, struct MHD_Connection *conn)
{
    if (!has_token(w, conn))
        return send_text(conn, MHD_HTTP_FORBIDDEN,
                         "commands need the page's token (open the address tusk-run printed, with its ?token=)\n");
    const char *verb = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "verb");
    const char *args = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "args");
    if (!args)
        args = "";
    if (!verb || !*verb || !command_text_ok(verb) || !command_text_ok(args))
        return send_text(conn, MHD_HTTP_BAD_REQUEST, "a command: verb=V (and args=A), printable ASCII\n");
    if (!w->command)
        return send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no controller to command\n");
    char peer[64], who[96];
    peer_name(conn, peer, sizeof peer);
    snprintf(who, sizeof who, "web %s", peer);
    char *reply = NULL;
    tusk_error_t err;
    int rc = w->command(w->ctx, verb, args, who, &reply, &err);
    if (rc != TUSK_OK) {
        free(reply);
        char text[TUSK_ERROR_MESSAGE_MAX + 2];
        snprintf(text, sizeof text, "%s\n", err.message);
        return send_text(conn, MHD_HTTP_CONFLICT, text);
    }
    if (!reply || !*reply) {
        free(reply);
        char text[COMMAND_MAX + 16];
        snprintf(text, sizeof text, "%s: done\n", verb);
        return send_text(conn, MHD_HTTP_OK, text);
    }
    return send_stream(conn, MHD_HTTP_OK, "text/plain; charset=utf-8", reply, strlen(reply));
}

/* ---- the handler --------------------------------------------------------------- */

static enum MHD_Result snapshot_as(tusk_web_t *w, struct MHD_Connection *conn, bool metrics)
{
    char *text = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&text, &size);
    if (!fp)
        return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    pthread_mutex_lock(&w->lock);
    if (metrics)
        tusk_status_metrics(&w->snap, fp);
    else
        tusk_status_json(&w->snap, fp);
    pthread_mutex_unlock(&w->lock);
    fclose(fp);
    return send_stream(conn, MHD_HTTP_OK, metrics ? "text/plain; version=0.0.4; charset=utf-8" : "application/json",
                       text, size);
}

/* "/PREFIX/N" or "/PREFIX/N/REST": N, and REST (or NULL). */
static bool indexed(const char *url, const char *prefix, unsigned long *index, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncmp(url, prefix, n) != 0 || url[n] < '0' || url[n] > '9')
        return false;
    char *end;
    errno = 0;
    *index = strtoul(url + n, &end, 10);
    if (errno || end - (url + n) > 6)
        return false;
    if (*end == '\0') {
        *rest = NULL;
        return true;
    }
    if (*end != '/')
        return false;
    *rest = end + 1;
    return true;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state)
{
    (void)version;
    (void)upload_data;
    static int first;
    tusk_web_t *w = cls;
    if (!*state) { /* the headers: wait for the body (none is read) */
        *state = &first;
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!host_ok(w, conn))
        return send_text(conn, MHD_HTTP_MISDIRECTED_REQUEST,
                         "this server answers requests for 127.0.0.1, localhost or [::1] with its port only\n");
    bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0, post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    if (strcmp(url, "/api/command") == 0) {
        if (!post)
            return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "commands are POSTs\n");
        return run_command(w, conn);
    }
    if (!get)
        return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET (or HEAD) only\n");
    if (!w->loopback && !has_token(w, conn))
        return send_text(conn, MHD_HTTP_FORBIDDEN, "this server needs its token (?token=, or a bearer token)\n");
    unsigned long index;
    const char *rest;
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return send_buffer(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (void *)tusk_web_page,
                           tusk_web_page_size, MHD_RESPMEM_PERSISTENT);
    if (strcmp(url, "/api/status") == 0)
        return snapshot_as(w, conn, false);
    if (strcmp(url, "/metrics") == 0)
        return snapshot_as(w, conn, true);
    if (indexed(url, "/api/live/", &index, &rest) && !rest)
        return live_list(w, conn, index);
    if (indexed(url, "/live/", &index, &rest) && rest)
        return live_file(w, conn, index, rest);
    return send_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* ---- life ------------------------------------------------------------------------ */

int tusk_web_new(tusk_web_t **web, const tusk_web_options_t *opt, tusk_error_t *err)
{
    *web = NULL;
    const char *address = opt->address && *opt->address ? opt->address : "127.0.0.1";
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt->port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)opt->port)};
    bool v6 = false;
    if (opt->port > 65535)
        return tusk_error_set(err, TUSK_EINVAL, "web page: port %u is no port", opt->port);
    if (inet_pton(AF_INET, address, &a4.sin_addr) == 1)
        v6 = false;
    else if (inet_pton(AF_INET6, address, &a6.sin6_addr) == 1)
        v6 = true;
    else
        return tusk_error_set(err, TUSK_EINVAL, "web page: '%s' is no numeric IPv4 or IPv6 address", address);
    tusk_web_t *w = calloc(1, sizeof *w);
    if (!w)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    w->loopback = v6 ? IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr) : (ntohl(a4.sin_addr.s_addr) >> 24) == 127;
    w->command = opt->command;
    w->ctx = opt->ctx;
    pthread_mutex_init(&w->lock, NULL);
    int rc = TUSK_OK;
    if (opt->token) {
        if (strlen(opt->token) < 16 || strlen(opt->token) >= sizeof w->token || !command_text_ok(opt->token))
            rc = tusk_error_set(err, TUSK_EINVAL, "web page: a token has 16 to 64 printable characters");
        else
            snprintf(w->token, sizeof w->token, "%s", opt->token);
    } else {
        rc = tusk_random_hex(w->token, 16, err);
    }
    if (rc != TUSK_OK) {
        tusk_web_destroy(&w);
        return rc;
    }
    /* A thread per connection: a command waits for the controller's
     * thread without holding up the other requests. libmicrohttpd's own
     * errors go to standard error (tusk-run's log). */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (v6)
        flags |= MHD_USE_IPv6;
    w->daemon = MHD_start_daemon(flags, (uint16_t)opt->port, NULL, NULL, handle, w, MHD_OPTION_SOCK_ADDR,
                                 v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)32, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    if (!w->daemon) {
        int e = errno;
        tusk_web_destroy(&w);
        return tusk_error_set(err, TUSK_EIO, "web page: cannot serve on %s port %u: %s", address, opt->port,
                              e ? strerror(e) : "libmicrohttpd refused");
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(w->daemon, MHD_DAEMON_INFO_BIND_PORT);
    w->port = info ? info->port : opt->port;
    snprintf(w->url, sizeof w->url, v6 ? "http://[%s]:%u/" : "http://%s:%u/", address, w->port);
    snprintf(w->hosts[0], sizeof w->hosts[0], "127.0.0.1:%u", w->port);
    snprintf(w->hosts[1], sizeof w->hosts[1], "localhost:%u", w->port);
    snprintf(w->hosts[2], sizeof w->hosts[2], "[::1]:%u", w->port);
    *web = w;
    return TUSK_OK;
}

void tusk_web_destroy(tusk_web_t **web)
{
    tusk_web_t *w = *web;
    if (!w)
        return;
    if (w->daemon)
        MHD_stop_daemon(w->daemon);
    pthread_mutex_destroy(&w->lock);
    tusk_status_free(&w->snap);
    memset(w->token, 0, sizeof w->token);
    free(w);
    *web = NULL;
}

void tusk_web_publish(tusk_web_t *w, const tusk_status_t *status)
{
    pthread_mutex_lock(&w->lock);
    tusk_error_t err;
    if (tusk_status_copy(&w->snap, status, &err) != TUSK_OK)
        tusk_status_free(&w->snap); /* out of memory: an empty page rather than a torn one */
    pthread_mutex_unlock(&w->lock);
}

const char *tusk_web_url(const tusk_web_t *w)
{
    return w->url;
}

const char *tusk_web_token(const tusk_web_t *w)
{
    return w->token;
}
