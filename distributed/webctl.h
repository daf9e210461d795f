/* webctl.h - tusk-run --web: the status page (web.h) as an observer of
 * the controller (ctlstate.h). Started with the controller's control
 * socket, it writes RUN_FOLDER/web (0600: the page's address, then the
 * address with its token) and says the address on standard error; it
 * publishes a snapshot (tusk_controller_status) every 0.5 s, with the
 * bytes per second over that period; the page's commands go to
 * tusk_controller_post. At the observer's stop the server ends and the
 * file is removed. */
#ifndef TUSK_DISTRIBUTED_WEBCTL_H
#define TUSK_DISTRIBUTED_WEBCTL_H

#include "ctlstate.h"
#include "web.h"
#include "webctl_parse.h"

typedef struct tusk_webctl tusk_webctl_t;

/* address NULL: 127.0.0.1; port 0: any; token NULL: a new random one.
 * *obs is filled: put it into tusk_run_options_t.observer. */
int tusk_webctl_new(tusk_webctl_t **w, const char *address, unsigned port, const char *token,
                    tusk_ctl_observer_t *obs, tusk_error_t *err);
void tusk_webctl_destroy(tusk_webctl_t **w);

#endif
