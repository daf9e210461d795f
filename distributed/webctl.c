/* webctl.c - the web page as the controller's observer (ctlstate.h,
 * webctl.h): the server starts with the controller's control socket,
 * gets a fresh snapshot twice a second, and hands the page's commands to
 * the controller's one command function. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "security.h"
#include "webctl.h"

#define PUBLISH_MS 500

struct tusk_webctl {
    char address[64];
    unsigned port;
    char token[65];
    tusk_web_t *web;
    tusk_status_t snap;
    uint64_t *prev_bytes; /* per instance, at prev_ms: for the rates */
    size_t n_prev;
    uint64_t prev_ms, next_ms;
    char file[TUSK_STATUS_TEXT_MAX + 8];
};

static int post(void *ctx, const char *verb, const char *args, const char *who, char **reply, tusk_error_t *err)
{
    return tusk_controller_post(ctx, verb, args, who, reply, err);
}

static void publish(tusk_webctl_t *w, tusk_controller_t *c)
{
    tusk_error_t err;
    if (tusk_controller_status(c, &w->snap, &err) != TUSK_OK)
        return;
    uint64_t now = tusk_clock_ms();
    if (w->n_prev != w->snap.n_inst) {
        free(w->prev_bytes);
        w->prev_bytes = calloc(w->snap.n_inst ? w->snap.n_inst : 1, sizeof *w->prev_bytes);
        w->n_prev = w->prev_bytes ? w->snap.n_inst : 0;
        w->prev_ms = 0;
    }
    double dt = w->prev_ms ? (double)(now - w->prev_ms) / 1000.0 : 0;
    for (size_t i = 0; i < w->n_prev; i++) {
        tusk_status_inst_t *in = &w->snap.inst[i];
        uint64_t bytes = strcmp(in->actor_class, "producer") == 0 ? in->out_bytes : in->in_bytes;
        in->bytes_per_s = dt > 0 && bytes >= w->prev_bytes[i] ? (double)(bytes - w->prev_bytes[i]) / dt : 0;
        w->prev_bytes[i] = bytes;
    }
    w->prev_ms = now;
    tusk_web_publish(w->web, &w->snap);
}

static int on_start(void *ctx, tusk_controller_t *c, tusk_error_t *err)
{
    tusk_webctl_t *w = ctx;
    tusk_web_options_t o = {.address = w->address[0] ? w->address : NULL,
                            .port = w->port,
                            .token = w->token[0] ? w->token : NULL,
                            .command = post,
                            .ctx = c};
    int rc = tusk_web_new(&w->web, &o, err);
    if (rc != TUSK_OK)
        return rc;
    if ((rc = tusk_controller_status(c, &w->snap, err)) != TUSK_OK)
        return rc;
    /* Where the page is, with the token that commands it: for the run's
     * owner only (the run folder is private; the file is 0600). */
    snprintf(w->file, sizeof w->file, "%s/web", w->snap.run_dir);
    char text[512];
    int n = snprintf(text, sizeof text, "%s\n%s?token=%s\n", tusk_web_url(w->web), tusk_web_url(w->web),
                     tusk_web_token(w->web));
    unlink(w->file);
    if ((rc = tusk_write_new(w->file, text, (size_t)n, 0600, err)) != TUSK_OK) {
        w->file[0] = '\0';
        return rc;
    }
    fprintf(stderr, "tusk-run: status page %s (to command it, open the address with the token in %s)\n",
            tusk_web_url(w->web), w->file);
    tusk_web_publish(w->web, &w->snap);
    w->next_ms = tusk_clock_ms() + PUBLISH_MS;
    return TUSK_OK;
}

static void on_tick(void *ctx, tusk_controller_t *c)
{
    tusk_webctl_t *w = ctx;
    if (!w->web || tusk_clock_ms() < w->next_ms)
        return;
    publish(w, c);
    w->next_ms = tusk_clock_ms() + PUBLISH_MS;
}

static void on_stop(void *ctx, tusk_controller_t *c)
{
    tusk_webctl_t *w = ctx;
    (void)c;
    /* No command may reach the controller any more: the server ends
     * before its state goes. */
    tusk_web_destroy(&w->web);
    if (w->file[0])
        unlink(w->file);
    w->file[0] = '\0';
}

int tusk_webctl_new(tusk_webctl_t **out, const char *address, unsigned port, const char *token,
                    tusk_ctl_observer_t *obs, tusk_error_t *err)
{
    *out = NULL;
    tusk_webctl_t *w = calloc(1, sizeof *w);
    if (!w)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if ((address && strlen(address) >= sizeof w->address) || (token && strlen(token) >= sizeof w->token)) {
        free(w);
        return tusk_error_set(err, TUSK_EINVAL, "web page: address or token too long");
    }
    snprintf(w->address, sizeof w->address, "%s", address ? address : "");
    snprintf(w->token, sizeof w->token, "%s", token ? token : "");
    w->port = port;
    *obs = (tusk_ctl_observer_t){.ctx = w, .start = on_start, .tick = on_tick, .stop = on_stop};
    *out = w;
    return TUSK_OK;
}

void tusk_webctl_destroy(tusk_webctl_t **wp)
{
    tusk_webctl_t *w = *wp;
    if (!w)
        return;
    on_stop(w, NULL);
    tusk_status_free(&w->snap);
    free(w->prev_bytes);
    memset(w->token, 0, sizeof w->token);
    free(w);
    *wp = NULL;
}
