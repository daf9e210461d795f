/* ctlstate.h - run control of a controller that stays up (tusk-run --serve):
 * THE CONTRACT between the controller (controller.c) and what runs inside
 * its process (the web page and /metrics, web.c; status.h is the snapshot).
 *
 * A serving controller is configured once (the instances started, their
 * libraries loaded, process_config and process_initialise called), then
 * runs any number of runs, each with its own run number, counts and
 * report. Phases (tusk_controller_phase, status.h's run_state):
 *
 *   "setup"    starting the instances, configuring, initialising
 *   "ready"    between runs: start, set, reset, quit are taken
 *   "running"  a run moves data: stop, pause, status are taken
 *   "paused"   every instance paused: resume, stop
 *   "stopping" producers stopped, the rest draining
 *   "ended"    the controller is going away (quit, a signal, a failure
 *              during setup)
 *
 * Commands (verbs, lower case; arguments in one string):
 *
 *   start [N]          a new run, number N (default: the last one + 1; the
 *                      first: --run, default 1). Refused unless "ready"
 *                      and every instance is ready.
 *   stop               end the run: producers first, the rest once drained;
 *                      the run's summary and report are written
 *                      (RUN_FOLDER/run-N.report, and --report FILE if given).
 *   pause, resume      producers first / consumers first.
 *   reset              between runs: process_reset then process_initialise
 *                      on every instance (its process and library stay).
 *   set A.P=V          between runs: parameter P of every instance of actor
 *   set A[K].P=V       A (or of instance K only) becomes V. Only parameters
 *                      the actor declares changeable (actor.h,
 *                      process_changeable) are taken; each instance rewrites
 *                      its parameters.conf and calls process_update. A
 *                      restarted instance gets the value too.
 *   status             the status table, as text (serving: under a line
 *                      "run N: PHASE, T s; R runs done").
 *   wait               the last run's summary. From the command line
 *                      (tusk-run --wait) during a run: answered when the
 *                      run ends, with its summary.
 *   quit               stop the run if one goes on, tell every instance to
 *                      exit, end the controller.
 *
 * A one-shot tusk-run (tusk_run_topology) takes status, stop, pause,
 * resume and wait; start, reset, set and quit are for a serving one.
 *
 * Every command comes through ONE function, tusk_controller_command: the
 * command line (tusk-run --start etc., through the control socket: owner
 * only, security.h) and the web page call it alike.
 *
 * Threads. The controller's state belongs to its own thread (the one in
 * tusk_run_topology / tusk_run_serve). tusk_controller_command and
 * tusk_controller_phase must be called on that thread: from the observer's
 * tick (below), or through tusk_controller_post from any other thread,
 * which hands the command to the controller's thread and waits for its
 * reply (the loop takes it within ~100 ms).
 *
 * Observer. tusk_run_options_t.observer (controller.h) is called on the
 * controller's thread: start once the control socket is up (before the
 * instances are configured), tick on every turn of the controller's loop
 * (at least every 100 ms, during setup, runs and between runs: fill the
 * status snapshot here), stop before the controller frees its state (after
 * stop returns, tusk_controller_post must no longer be called).
 */
#ifndef TUSK_CTLSTATE_H
#define TUSK_CTLSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "tusk/error.h"

typedef struct ctrl tusk_controller_t;

typedef struct tusk_ctl_observer {
    void *ctx;
    int (*start)(void *ctx, tusk_controller_t *c, tusk_error_t *err); /* an error ends the controller */
    void (*tick)(void *ctx, tusk_controller_t *c);
    void (*stop)(void *ctx, tusk_controller_t *c);
} tusk_ctl_observer_t;

/* Run `verb` with `args` ("" or NULL: none). Its answer (text, lines
 * ending in \n; for "status" the status table) in *reply (malloc'd, the
 * caller frees it; NULL on an error). TUSK_OK, or an error whose message
 * says why the command was refused ("start: run 3 is going on").
 * `who` says who asked, for the controller's log ("web 127.0.0.1"). */
int tusk_controller_command(tusk_controller_t *c, const char *verb, const char *args, const char *who, char **reply,
                            tusk_error_t *err);

/* The same, from any thread: waits until the controller's thread ran it
 * (or until the controller ends: TUSK_EIO). */
int tusk_controller_post(tusk_controller_t *c, const char *verb, const char *args, const char *who, char **reply,
                         tusk_error_t *err);

/* "setup", "ready", "running", "paused", "stopping", "ended" (above). */
const char *tusk_controller_phase(const tusk_controller_t *c);

/* The current (or last) run number, and its data-moving time so far in
 * seconds (0 before the first run). */
uint32_t tusk_controller_run(const tusk_controller_t *c);
double tusk_controller_elapsed(const tusk_controller_t *c);

#endif
