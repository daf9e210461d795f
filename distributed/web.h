/* web.h - tusk-run's status page, served over HTTP with libmicrohttpd.
 *
 *   GET  /                  the page (web/index.html, built in): the topology as a graph
 *                           with every instance's figures, the run, the links, the live
 *                           pictures, and the run controller's commands
 *   GET  /api/status        the status snapshot as JSON (status.h)
 *   GET  /metrics           the same in the Prometheus text format (metrics.c)
 *   GET  /api/live/I        the live pictures of instance I: a JSON list of names
 *   GET  /live/I/NAME       one of them (.svg or .png)
 *   POST /api/command?verb=V&args=A
 *                           a command of the run controller (ctlstate.h), through the
 *                           same function as the command line's
 *                           (tusk_controller_command); its answer back as text
 *
 * Live pictures: an actor that shows something while the run goes
 * (the spectra consumer's spectra) writes pictures into the folder `live`
 * of its configuration folder (RUN_FOLDER/NAME.K/live), replacing each
 * whole (rename), every few seconds; the server lists and serves the
 * .svg and .png files there (names of letters, digits, '_', '-', '.';
 * no link followed). Instances on other hosts have their folder there:
 * their pictures are not shown.
 *
 * Security (README.md, "Operators"): the page is a control surface.
 *   - It binds 127.0.0.1 by default. There, reading (the page, the
 *     status, /metrics, pictures) is open to every local user, as `ps` is;
 *     requests must name the server as their Host (127.0.0.1:PORT,
 *     localhost:PORT or [::1]:PORT), which keeps out DNS rebinding.
 *   - Commands always need the page's token (128 random bits, made for
 *     each run, written with the address into RUN_FOLDER/web, 0600, and
 *     said on tusk-run's standard error): in an X-Tusk-Token header, an
 *     "Authorization: Bearer" header or the `token` argument. The page
 *     opened with ?token=... sends it; a page without it is read-only.
 *     A command is a POST with a custom header, which another site's
 *     page cannot send without a CORS preflight that is never granted.
 *   - Bound elsewhere (--web ADDR:PORT), every request needs the token
 *     (Prometheus: bearer_token_file). There is no TLS: across a network,
 *     use an SSH tunnel.
 * The server runs in threads of its own; it sees the controller only
 * through the snapshots it is given (tusk_web_publish) and the command
 * function.
 */
#ifndef TUSK_DISTRIBUTED_WEB_H
#define TUSK_DISTRIBUTED_WEB_H

#include <stdio.h>

#include "status.h"
#include "tusk/error.h"

typedef struct tusk_web tusk_web_t;

typedef struct tusk_web_options {
    const char *address; /* numeric IPv4 or IPv6 address to bind (NULL: 127.0.0.1) */
    unsigned port;       /* 0: one the kernel picks */
    const char *token;   /* NULL: a new random one */
    /* Run a controller command (tusk_controller_post's signature: the
     * answer in *reply, malloc'd). Called from the server's threads. */
    int (*command)(void *ctx, const char *verb, const char *args, const char *who, char **reply,
                   tusk_error_t *err);
    void *ctx;
} tusk_web_options_t;

int tusk_web_new(tusk_web_t **web, const tusk_web_options_t *opt, tusk_error_t *err);
void tusk_web_destroy(tusk_web_t **web);

/* The snapshot the server shows from now on (copied). */
void tusk_web_publish(tusk_web_t *web, const tusk_status_t *status);

/* http://ADDRESS:PORT/ (the port it bound), and the token. */
const char *tusk_web_url(const tusk_web_t *web);
const char *tusk_web_token(const tusk_web_t *web);

#endif
