/* controller.h - tusk-run: start every actor instance of a topology, drive
 * them through a run, watch them, report.
 *
 * Instances are tusk-actor processes: forked here for actors on this host,
 * started through a launcher (default "ssh {host}") for the others. The
 * controller drives the state machine in dependency order (consumers
 * first on start, producers first on stop), collects heartbeats and
 * statistics, notices failures within a heartbeat timeout and applies the
 * actor's policy: stop the run, go on without the instance, or restart it.
 * At the end it reconciles every link's counts and reports what was lost,
 * what arrived beyond what was sent, and what arrived malformed.
 *
 * The run folder holds a file `lock`, locked (flock) by the live tusk-run
 * and naming its process id: a run folder whose lock nobody holds belongs
 * to a tusk-run that died. The next tusk-run reports such folders (in the
 * user's private folder, or the --run-dir it is given) and removes their
 * sockets.
 *
 * Security (security.h, README.md): every socket authenticates its peers
 * (CURVE on tcp with a key pair made for the run, or configured
 * certificates; the user id on ipc); the instances get the keys and a
 * token of their own on their standard input; control commands are taken
 * from the run's owner only, and said with who sent them; run folders are
 * private (0700, ours) and their files are opened without following links.
 */
#ifndef TUSK_CONTROLLER_H
#define TUSK_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "layout.h"
#include "base/exit.h"
#include "tusk/error.h"

/* Finished run folders kept by default (tusk_run_options_t.keep_runs). */
#define TUSK_KEEP_RUNS 10

typedef struct tusk_run_options {
    const char *topology;        /* file */
    const char *run_dir;         /* NULL: a new temporary folder */
    bool force_transport;
    tusk_transport_t transport;  /* with force_transport */
    bool shm;                    /* --transport shm: ipc, the buffers in shared memory
                                    (distributed/shmlink.h) */
    unsigned base_port;          /* tcp: fixed ports from here; 0: the kernel picks free ones */
    const char *control_address; /* where the control socket binds (default 127.0.0.1) */
    unsigned control_port;       /* its port (0: one the kernel picks) */
    const char *launcher;        /* for remote hosts: words, run without a shell, {host} replaced
                                    (default "ssh {host}") */
    const char *actor_bin;       /* tusk-actor to run (default: next to tusk-run, else PATH) */
    const char *actor_path;      /* actor library search path given to every instance */
    unsigned heartbeat_ms;       /* default 500 */
    unsigned timeout_ms;         /* silence that counts as a failure (default 5000) */
    unsigned start_timeout_ms;   /* for every instance to report (default 20000) */
    unsigned orphan_ms;          /* an instance that hears nothing from tusk-run this long ends
                                    itself (default 10000; instances here also end at once
                                    when tusk-run dies) */
    uint32_t run;                /* run number (default 1) */
    bool live;                   /* redraw a status table every second */
    bool quiet;                  /* no summary */
    const char *report;          /* also write the final figures as key=value lines here */
    FILE *out;                   /* summary and status (NULL: stdout) */
    bool insecure;               /* no CURVE on tcp (--security none) */
    const char *certs;           /* configured keys: the certificate folder (NULL: a key pair
                                    made for the run) */
    const char *cert;            /* with certs: tusk-run's certificate (default "controller");
                                    an instance's is named after its <hostname> */
    tusk_engine_t *engine; /* where the instances run (engine.h; NULL: direct) */
    const char *const *narval_scripts; /* NARVAL scripts whose "set library" lines name the
                                    libraries of generic_* actors (tusk-emulate's
                                    --narval-script); the same paths on every host */
    unsigned n_narval_scripts;
    bool keep_run_dir;           /* keep this run folder (logs, reports) whatever the retention rule */
    bool keep_runs_set;          /* keep_runs given (else TUSK_KEEP_RUNS) */
    unsigned keep_runs;          /* the retention rule: the newest keep_runs finished run folders in
                                    the user's private folder stay, older ones are removed; 0: a
                                    clean run removes its own folder (a failed one keeps it) */
    const char *debug;           /* one local instance under a debugging tool: "NAME[K]=gdbserver:PORT"
                                    or "NAME[K]=valgrind" ("NAME": instance 0); its timeouts off */
    const struct tusk_ctl_observer *observer; /* ctlstate.h: called on the controller's thread
                                    (the web page); NULL: none */
} tusk_run_options_t;

/* Run the topology to its end; returns tusk-run's exit status (base/exit.h):
 *   TUSK_EXIT_OK     the run ended cleanly, every count reconciled
 *   TUSK_EXIT_FAIL   a failure stopped the run
 *   TUSK_EXIT_USAGE  bad usage, topology, library, or an instance that never came up
 *   TUSK_EXIT_LOSS   the run ended, but instances failed, or buffers were lost, extra or
 *                    malformed */
int tusk_run_topology(const tusk_run_options_t *options, tusk_error_t *err);

/* --status / --stop / --pause / --resume: talk to the controller of the
 * run in `run_dir` (NULL: the user's only run going on; refused when
 * there are several, or none). */
int tusk_run_command(const char *run_dir, const char *command, FILE *out, tusk_error_t *err);

/* tusk-run --serve: a controller that stays up (ctlstate.h). Configures
 * once, then runs what it is told (start, stop, pause, resume, reset,
 * set, status, quit) until quit or a signal (SIGINT/SIGTERM: the run
 * going on is stopped, then it quits). Each run's summary goes to
 * options->out, its figures to RUN_FOLDER/run-N.report (and to
 * options->report, overwritten by every run). Returns TUSK_EXIT_OK after
 * a quit, TUSK_EXIT_USAGE when the setup failed, TUSK_EXIT_FAIL on a
 * second signal. */
int tusk_run_serve(const tusk_run_options_t *options, tusk_error_t *err);

/* A command with arguments (ctlstate.h's verbs: start "N", set "A.P=V",
 * and "wait": the reply comes when the run going on ends, with its
 * summary) to the controller of `run_dir` (as tusk_run_command). */
int tusk_run_command_args(const char *run_dir, const char *command, const char *args, FILE *out, tusk_error_t *err);

#endif
