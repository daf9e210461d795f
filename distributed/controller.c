/* controller.c - tusk-run (see controller.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "controller.h"
#include "security.h"
#include "status.h"
#include "tap.h"
#include "tusk/topology.h"
#include "runtime/wire.h"
#include "zutil.h"
#include "ctlstate.h"
#include "runctl.h"
#include "tusk/params.h"
#include "base/clock.h"
#include "base/grow.h"
#include "base/parse.h"

#define MAX_RESTARTS 3
#define DRAIN_TIMEOUT_MS 10000
#define EXIT_TIMEOUT_MS 5000

typedef enum {
    I_STARTING, /* spawned, no HELLO yet */
    I_HELLO,
    I_CONFIGURED,
    I_READY,
    I_RUNNING,
    I_PAUSED,
    I_ENDED,    /* its end of run went downstream */
    I_STOPPED,
    I_FAILED,   /* failed; being killed or told to exit */
    I_GONE      /* exited (or given up) */
} ist_t;

static const char *const ist_names[] = {"starting", "hello", "configured", "ready",  "running",
                                        "paused",   "ended", "stopped",    "FAILED", "gone"};

typedef struct inst {
    unsigned actor, k, incarnation;
    char id[256];           /* routing id: name.k.incarnation~token */
    char token[65];         /* handed to this incarnation only (standard input) */
    char (*bound)[256];     /* where each input bound, as it said (n_sources of them) */
    pid_t pid;              /* local child (or the launcher's process) */
    bool local;
    ist_t st;
    uint64_t last_seen;
    tusk_ctl_t *stats;      /* the latest statistics of this incarnation */
    tusk_ctl_t **old_stats; /* last statistics of earlier incarnations */
    unsigned n_old;
    char waiting[16];       /* command awaiting its reply */
    bool reply_error;
    char reply_message[TUSK_ERROR_MESSAGE_MAX];
    bool failed_once;       /* this slot failed at least once */
    bool failed_now;        /* its current incarnation failed */
    bool lost;              /* given up: peers told */
    unsigned restarts;
    unsigned respawned;     /* between runs (respawn_lost): the next run's restarts (its START is no restart's) */
    char reason[TUSK_ERROR_MESSAGE_MAX];
    char log[4096];
    uint64_t prev_bytes, prev_ms; /* for rates */
    uint64_t kill_at;       /* told to exit after a failure: kill if still there */
    bool draining;          /* failed but working: its sinks wait for what it sent */
    char hook[48];          /* from its liveness thread: the hook it is in ("" none) */
    uint64_t hook_ms;       /* and for how long, as it last said */
    tusk_ctl_t *prev_stats; /* the statistics before in->stats (for the queue column) */
    uint64_t stats_at, prev_at; /* when they arrived (tusk_clock_ms) */
    tusk_params_t *sets;    /* parameters changed between runs (set): a restart gets them too */
} inst_t;

typedef struct ctrl {
    tusk_run_options_t opt;
    FILE *out;
    tusk_topology_t *topo;
    char *xml;
    size_t xml_size;
    tusk_layout_t layout;
    char run_dir[PATH_MAX];
    bool temp_run_dir;
    char endpoint[256];
    char actor_bin[PATH_MAX];
    void *zctx, *router;
    inst_t *inst;
    unsigned n_inst;
    unsigned *first; /* index of actor a's instance 0 in inst[] */
    bool running, stop_requested, producers_stopped, fatal;
    uint64_t stop_at;              /* when the stop began */
    uint64_t started_ms, ended_ms; /* the run's data-moving time */
    uint64_t fatal_at, next_ping, next_live;
    char fatal_reason[TUSK_ERROR_MESSAGE_MAX];
    int lock_fd;                   /* RUN_FOLDER/lock, locked while we live (-1: none) */
    char private_dir[PATH_MAX];    /* the user's private folder (security.h) */
    char registry[PATH_MAX + 32];  /* PRIVATE/run.PID: names our run folder, for --stop */
    char keys_path[PATH_MAX + 16]; /* RUN_FOLDER/keys, for --status (0600) */
    tusk_secrets_t secrets;        /* our own (the run's key pair, or the certificates) */
    tusk_sec_t *sec;
    uint64_t bad_control;          /* control messages that did not parse: dropped */
    uint64_t refused_commands;     /* messages from a peer not allowed to send them */
    char **narval_paths;           /* --narval-script, absolute: what the instances read */
    int debug_actor;               /* --debug: its actor (-1: none), instance, tool, */
    unsigned debug_k;
    bool debug_gdb, debug_errors;  /* gdbserver (else valgrind); valgrind said errors */
    char debug_how[PATH_MAX + 32]; /* what its tusk-actor's --debug gets */
    char debug_log[PATH_MAX + 32]; /* valgrind's report */
    /* Run control (ctlstate.h): a controller that stays up, and commands. */
    bool serving;                  /* tusk_run_serve: runs until quit */
    bool configured;               /* every instance initialised */
    bool ended;                    /* going away */
    bool quit_requested, start_requested;
    bool in_run;                   /* serve_run: from its start to its report */
    uint32_t next_run;             /* the number a plain start takes */
    unsigned runs;                 /* runs done */
    unsigned in_command;           /* inside a command that waits for the instances */
    char (*waiters)[256];          /* --wait: control ids answered when the run ends */
    unsigned n_waiters;
    unsigned live_lines;           /* lines of the live table on the terminal (redrawn in place) */
    bool observing;                /* opt.observer started */
    bool mail_ready;               /* mail_lock and mail_cond made */
    pthread_mutex_t mail_lock;     /* commands from other threads (tusk_controller_post) */
    pthread_cond_t mail_cond;
    struct mail *mail;
    bool mail_closed;              /* the controller is ending: no more posts */
    char *summary;                 /* the last run's summary (serving) */
} ctrl_t;

/* Set by SIGINT/SIGTERM; the loop turns it into an orderly stop. */
static volatile sig_atomic_t stop_signals;

static void on_signal(int sig)
{
    (void)sig;
    stop_signals++;
}

/* --debug's instance: no timeouts apply to it (a dead one is still
 * noticed: its process ends). */
static bool debugged(const ctrl_t *c, const inst_t *in)
{
    return c->debug_actor >= 0 && in->actor == (unsigned)c->debug_actor && in->k == c->debug_k;
}

static const tusk_actor_spec_t *spec_of(const ctrl_t *c, const inst_t *in)
{
    return tusk_topology_actor(c->topo, in->actor);
}

static void say(ctrl_t *c, const char *fmt, ...) TUSK_PRINTF(2, 3);
static void say(ctrl_t *c, const char *fmt, ...)
{
    if (c)
        c->live_lines = 0; /* the live table starts again below what was said */
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tusk-run: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static uint64_t stat_u64(const tusk_ctl_t *m, const char *key)
{
    uint64_t v = 0;
    if (m)
        tusk_ctl_get_u64(m, key, 0, &v);
    return v;
}

/* A statistic summed over every incarnation of the slot. */
static uint64_t slot_stat(const inst_t *in, const char *key)
{
    uint64_t v = stat_u64(in->stats, key);
    for (unsigned i = 0; i < in->n_old; i++)
        v += stat_u64(in->old_stats[i], key);
    return v;
}

/* The statistics of incarnation `inc` of a slot (NULL: none came). */
static const tusk_ctl_t *stats_of(const inst_t *in, unsigned inc)
{
    if (in->stats && stat_u64(in->stats, "incarnation") == inc)
        return in->stats;
    for (unsigned i = 0; i < in->n_old; i++)
        if (stat_u64(in->old_stats[i], "incarnation") == inc)
            return in->old_stats[i];
    return NULL;
}

/* Statistics that can no longer change: sent when no data moved any more
 * (ended, failed, stopped). Those of a process that died while moving
 * data are out of date by what it did since. */
static bool stats_final(const tusk_ctl_t *m)
{
    return m && stat_u64(m, "final") == 1;
}

static bool alive(const inst_t *in)
{
    return in->st != I_FAILED && in->st != I_GONE;
}

/* ---- spawning --------------------------------------------------------------- */

/* What an instance gets on its standard input: the keys (or where its
 * certificate is) and its own token. */
static char *instance_secrets(const ctrl_t *c, const inst_t *in, size_t *len)
{
    tusk_secrets_t sx = c->secrets;
    if (sx.certs[0]) {
        /* Its host's certificate, which is on its host (the secret never travels). */
        snprintf(sx.cert, sizeof sx.cert, "%s", spec_of(c, in)->hostname);
        snprintf(sx.server_cert, sizeof sx.server_cert, "%s", c->secrets.cert);
    }
    snprintf(sx.token, sizeof sx.token, "%s", in->token);
    char *text = tusk_secrets_format(&sx, len);
    memset(&sx, 0, sizeof sx);
    return text;
}

static int spawn(ctrl_t *c, inst_t *in, tusk_error_t *err)
{
    const tusk_actor_spec_t *s = spec_of(c, in);
    int rc = tusk_random_hex(in->token, 16, err);
    if (rc != TUSK_OK)
        return rc;
    snprintf(in->id, sizeof in->id, "%s.%u.%u~%s", s->name, in->k, in->incarnation, in->token);
    zu_format(in->log, sizeof in->log, "%s/%s.%u.log", c->run_dir, s->name, in->k);
    char k[16], inc[16], orphan[16];
    snprintf(k, sizeof k, "%u", in->k);
    snprintf(inc, sizeof inc, "%u", in->incarnation);
    /* Stopped in gdb, an instance hears nothing: it must not end itself. */
    snprintf(orphan, sizeof orphan, "%u", debugged(c, in) && c->debug_gdb ? 0 : c->opt.orphan_ms);
    /* Another host's instance goes through the launcher, unless the engine
     * (engine.h) reaches it itself (srun); with an engine, the process we
     * hold is systemd-run's or srun's, treated as a launcher's. */
    bool here = layout_host_is_local(s->hostname) || tusk_engine_replaces_launcher(c->opt.engine);
    in->local = here && tusk_engine_kind(c->opt.engine) == TUSK_ENGINE_DIRECT;
    /* No shell: the launcher's words, then tusk-actor's. A remote shell
     * (ssh) reads them once more, so they must mean nothing to it. */
    const char *actor_args[] = {c->actor_bin, "--control", c->endpoint, "--actor", s->name, "--instance", k,
                                "--incarnation", inc, "--orphan-ms", orphan, "--secrets", "-"};
    enum { N_ACTOR_ARGS = sizeof actor_args / sizeof actor_args[0] };
    char **launcher = NULL;
    size_t n_launcher = 0;
    if (!here) {
        if ((rc = tusk_launcher_split(c->opt.launcher ? c->opt.launcher : "ssh {host}", s->hostname, &launcher,
                                      &n_launcher, err)) != TUSK_OK)
            return rc;
        for (size_t i = 0; i < N_ACTOR_ARGS; i++)
            if (!tusk_arg_shell_safe(actor_args[i], i > 0 && actor_args[i][0] == '-')) {
                free(launcher);
                return tusk_error_set(err, TUSK_EINVAL,
                                      "cannot start %s[%u] on %s: '%s' would reach the remote shell of the "
                                      "launcher with characters it reads as syntax (letters, digits and "
                                      "_ . / : @ %% + = , - only)",
                                      s->name, in->k, s->hostname, actor_args[i]);
            }
    }
    if (c->opt.engine) { /* then the engine's: systemd-run ..., srun ... */
        char **words = NULL;
        rc = tusk_engine_words(c->opt.engine, c->topo, in->actor, in->k, in->incarnation, c->opt.run,
                               (long)getpid(), launcher, n_launcher, &words, &n_launcher, err);
        free(launcher);
        launcher = words;
        if (rc != TUSK_OK)
            return rc;
    }
    char *argv[4096 + N_ACTOR_ARGS + 3];
    size_t argc = 0;
    for (size_t i = 0; i < n_launcher && argc < 4096; i++)
        argv[argc++] = launcher[i];
    for (size_t i = 0; i < N_ACTOR_ARGS; i++)
        argv[argc++] = (char *)actor_args[i];
    if (debugged(c, in)) {
        argv[argc++] = "--debug";
        argv[argc++] = c->debug_how;
    }
    argv[argc] = NULL;
    /* Its log: in our private run folder, never through a link. */
    int log_fd = tusk_open_nofollow(in->log, O_WRONLY | O_CREAT | O_APPEND, 0600, err);
    if (log_fd < 0) {
        free(launcher);
        return TUSK_EIO;
    }
    size_t secrets_len = 0;
    char *secrets = instance_secrets(c, in, &secrets_len);
    int pipe_fd[2] = {-1, -1};
    if (!secrets || pipe(pipe_fd) != 0) {
        int e = errno;
        close(log_fd);
        free(launcher);
        if (!secrets)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        free(secrets);
        return tusk_error_set(err, TUSK_EIO, "cannot start %s[%u]: pipe: %s", s->name, in->k, strerror(e));
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(log_fd);
        close(pipe_fd[0]);
        close(pipe_fd[1]);
        free(secrets);
        free(launcher);
        return tusk_error_set(err, TUSK_EIO, "cannot start %s[%u]: fork: %s", s->name, in->k, strerror(e));
    }
    if (pid == 0) {
        /* Own process group: a Ctrl-C on tusk-run is for tusk-run, which
         * then stops every instance in order. */
        setpgid(0, 0);
#ifdef __linux__
        /* But when tusk-run dies (kill -9), the instance (or the launcher
         * of a remote one) dies with it, at once; a remote instance ends
         * itself after --orphan-ms of silence. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127); /* it died before the line above */
#else
        (void)parent;
#endif
        signal(SIGPIPE, SIG_DFL);
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        /* The secrets come on standard input (a pipe only we write). */
        dup2(pipe_fd[0], STDIN_FILENO);
        if (pipe_fd[0] != STDIN_FILENO)
            close(pipe_fd[0]);
        close(pipe_fd[1]);
        if (log_fd > STDERR_FILENO)
            close(log_fd);
        execvp(argv[0], argv);
        fprintf(stderr, "tusk-run: cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(log_fd);
    close(pipe_fd[0]);
    /* A few hundred bytes: one write, which a new pipe always takes whole
     * (PIPE_BUF); a child that died already is an EPIPE, not a signal. */
    ssize_t w = write(pipe_fd[1], secrets, secrets_len);
    (void)w; /* a dead child is noticed as such (reap) */
    close(pipe_fd[1]);
    memset(secrets, 0, secrets_len);
    free(secrets);
    free(launcher);
    in->pid = pid;
    in->failed_now = false;
    in->draining = false;
    in->hook[0] = '\0';
    in->st = I_STARTING;
    in->last_seen = tusk_clock_ms();
    in->waiting[0] = '\0';
    return TUSK_OK;
}

/* The last lines of an instance's log, for failure reports. */
static void print_log_tail(const inst_t *in)
{
    FILE *fp = fopen(in->log, "r");
    if (!fp)
        return;
    char lines[5][512];
    int n = 0;
    char line[512];
    while (fgets(line, sizeof line, fp))
        memcpy(lines[n++ % 5], line, sizeof line);
    fclose(fp);
    int first = n > 5 ? n - 5 : 0;
    for (int i = first; i < n; i++)
        fprintf(stderr, "    | %s", lines[i % 5]);
    if (n)
        fprintf(stderr, "    (log: %s)\n", in->log);
}

/* ---- sending commands ------------------------------------------------------- */

static void command(ctrl_t *c, inst_t *in, const char *verb, tusk_ctl_t *m, const char *payload, size_t size)
{
    tusk_ctl_t *own = m ? NULL : tusk_ctl_new(verb);
    tusk_error_t err;
    if (zu_send_ctl(c->router, in->id, m ? m : own, payload, size, &err) != TUSK_OK)
        say(c, "%s: %s", in->id, err.message);
    tusk_ctl_destroy(&own);
    if (strcmp(verb, "PING") && strcmp(verb, "PEER_LOST") && strcmp(verb, "RESEND_EOR") && strcmp(verb, "PEER_BACK"))
        snprintf(in->waiting, sizeof in->waiting, "%s", verb);
}

static void command_peer(ctrl_t *c, inst_t *to, const char *verb, const inst_t *about)
{
    tusk_ctl_t *m = tusk_ctl_new(verb);
    tusk_ctl_set_u64(m, "actor", about->actor);
    tusk_ctl_set_u64(m, "instance", about->k);
    command(c, to, verb, m, NULL, 0);
    tusk_ctl_destroy(&m);
}

static void send_configure(ctrl_t *c, inst_t *in)
{
    tusk_ctl_t *m = tusk_ctl_new("CONFIGURE");
    tusk_ctl_set(m, "topology", tusk_topology_name(c->topo));
    tusk_ctl_set(m, "run_dir", c->run_dir);
    tusk_ctl_set(m, "transport", layout_transport_name(c->layout.transport));
    if (c->opt.shm && c->layout.transport == TUSK_TRANSPORT_IPC)
        tusk_ctl_set(m, "shm", "1"); /* the buffers in shared memory (shmlink.h) */
    tusk_ctl_set_u64(m, "base_port", c->layout.base_port);
    tusk_ctl_set_u64(m, "heartbeat_ms", c->opt.heartbeat_ms);
    if (c->opt.actor_path)
        tusk_ctl_set(m, "actor_path", c->opt.actor_path);
    for (unsigned i = 0; i < c->opt.n_narval_scripts; i++) {
        char key[32];
        snprintf(key, sizeof key, "narval_script:%u", i);
        tusk_ctl_set(m, key, c->narval_paths[i]);
    }
    const tusk_actor_spec_t *s = spec_of(c, in);
    /* A restart binds where its predecessor did: the senders' sockets
     * reconnect there by themselves. */
    for (unsigned j = 0; j < s->n_sources; j++)
        if (in->bound[j][0]) {
            char key[32];
            snprintf(key, sizeof key, "rebind:%u", j);
            tusk_ctl_set(m, key, in->bound[j]);
        }
    /* Where each instance of each sink listens for us (sinks are
     * configured first, so all have said where they bound). */
    for (unsigned q = 0; q < s->n_sinks; q++) {
        unsigned a = s->sinks[q];
        const tusk_actor_spec_t *d = tusk_topology_actor(c->topo, a);
        unsigned input = 0;
        for (unsigned j = 0; j < d->n_sources; j++)
            if (d->sources[j] == in->actor)
                input = j;
        for (unsigned k = 0; k < d->instances; k++) {
            const inst_t *o = &c->inst[c->first[a] + k];
            char key[48], ep[512];
            if (!o->bound[input][0] ||
                layout_connect_endpoint(c->topo, &c->layout, a, o->bound[input], ep, sizeof ep) != TUSK_OK)
                continue; /* the instance says what is missing */
            snprintf(key, sizeof key, "to:%u:%u", a, k);
            tusk_ctl_set(m, key, ep);
        }
    }
    /* Parameters changed between runs (set): a restarted instance has them too. */
    for (size_t i = 0; in->sets && i < tusk_params_count(in->sets); i++) {
        char key[160];
        zu_format(key, sizeof key, "set:%s", tusk_params_key(in->sets, i));
        tusk_ctl_set(m, key, tusk_params_value(in->sets, i));
    }
    command(c, in, "CONFIGURE", m, c->xml, c->xml_size);
    tusk_ctl_destroy(&m);
}

static void send_start(ctrl_t *c, inst_t *in)
{
    tusk_ctl_t *m = tusk_ctl_new("START");
    tusk_ctl_set_u64(m, "run", c->opt.run);
    command(c, in, "START", m, NULL, 0);
    tusk_ctl_destroy(&m);
}

/* Tell every instance of the actors around `in` (its sources and sinks). */
static void tell_neighbours(ctrl_t *c, const inst_t *in, const char *verb, bool sources, bool sinks)
{
    const tusk_actor_spec_t *s = spec_of(c, in);
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *o = &c->inst[i];
        if (!alive(o) || o->st == I_STARTING)
            continue;
        bool near = false;
        for (unsigned j = 0; sources && j < s->n_sources; j++)
            near |= s->sources[j] == o->actor;
        for (unsigned j = 0; sinks && j < s->n_sinks; j++)
            near |= s->sinks[j] == o->actor;
        if (near)
            command_peer(c, o, verb, in);
    }
}

/* PEER_LOST about `in` to the instances around it. Its sources stop
 * sending to it. Its sinks stop waiting for it: with `counted` (it failed
 * but reported its final counts, and still sends what it had sent), once
 * the buffers it sent each of them have arrived; else at once. */
static void tell_lost(ctrl_t *c, const inst_t *in, bool counted)
{
    const tusk_actor_spec_t *s = spec_of(c, in);
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *o = &c->inst[i];
        if (!alive(o) || o->st == I_STARTING)
            continue;
        bool source = false, sink = false;
        for (unsigned j = 0; j < s->n_sources; j++)
            source |= s->sources[j] == o->actor;
        for (unsigned j = 0; j < s->n_sinks; j++)
            sink |= s->sinks[j] == o->actor;
        if (!source && !sink)
            continue;
        tusk_ctl_t *m = tusk_ctl_new("PEER_LOST");
        tusk_ctl_set_u64(m, "actor", in->actor);
        tusk_ctl_set_u64(m, "instance", in->k);
        tusk_ctl_set_u64(m, "incarnation", in->incarnation);
        if (sink && counted) {
            char key[64];
            snprintf(key, sizeof key, "sent:%u:%u", o->actor, o->k);
            tusk_ctl_set_u64(m, "sent", stat_u64(in->stats, key));
        }
        command(c, o, "PEER_LOST", m, NULL, 0);
        tusk_ctl_destroy(&m);
    }
}

/* ---- failures ----------------------------------------------------------------- */

static void retire_stats(inst_t *in)
{
    if (!in->stats)
        return;
    tusk_ctl_t **n = realloc(in->old_stats, (in->n_old + 1) * sizeof *n);
    if (!n)
        return;
    in->old_stats = n;
    in->old_stats[in->n_old++] = in->stats;
    in->stats = NULL;
}

static void begin_fatal_stop(ctrl_t *c, const char *reason)
{
    if (c->fatal)
        return;
    c->fatal = true;
    c->fatal_at = tusk_clock_ms();
    zu_format(c->fatal_reason, sizeof c->fatal_reason, "%s", reason);
    c->stop_requested = true;
}

/* A failed instance whose process still works (it reported the failure)
 * is told to exit, so what it queued still leaves; a crashed or silent
 * one is killed. */
static void on_failure_how(ctrl_t *c, inst_t *in, bool graceful, const char *fmt, va_list ap) TUSK_PRINTF(4, 0);

static void on_failure(ctrl_t *c, inst_t *in, const char *fmt, ...) TUSK_PRINTF(3, 4);
static void on_failure(ctrl_t *c, inst_t *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    on_failure_how(c, in, false, fmt, ap);
    va_end(ap);
}

static void on_reported_failure(ctrl_t *c, inst_t *in, const char *fmt, ...) TUSK_PRINTF(3, 4);
static void on_reported_failure(ctrl_t *c, inst_t *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    on_failure_how(c, in, true, fmt, ap);
    va_end(ap);
}

static void on_failure_how(ctrl_t *c, inst_t *in, bool graceful, const char *fmt, va_list ap)
{
    if (!alive(in))
        return;
    const tusk_actor_spec_t *s = spec_of(c, in);
    vsnprintf(in->reason, sizeof in->reason, fmt, ap);
    say(c, "%s[%u] on %s failed: %s", s->name, in->k, s->hostname, in->reason);
    print_log_tail(in);
    in->failed_once = true;
    in->failed_now = true;
    in->st = I_FAILED;
    in->waiting[0] = '\0';
    /* Make sure it is gone, so its connections close and peers move on
     * (for a remote instance this ends its launcher; the instance itself
     * leaves when the controller falls silent to it). */
    if (graceful || !in->local)
        command(c, in, "EXIT", NULL, NULL, 0);
    if (graceful && in->pid > 0)
        in->kill_at = tusk_clock_ms() + 3000;
    else if (in->pid > 0)
        kill(in->pid, SIGKILL);
    if (!c->running) {
        begin_fatal_stop(c, in->reason);
        return;
    }
    /* It reported its failure with counts that no longer change, and
     * still sends what it had sent: its sinks wait for those buffers. If
     * it dies before they all left, reap() tells them to stop waiting. */
    bool counted = graceful && stats_final(in->stats);
    in->draining = counted;
    unsigned others = 0;
    for (unsigned i = 0; i < c->n_inst; i++)
        if (c->inst[i].actor == in->actor && &c->inst[i] != in && alive(&c->inst[i]))
            others++;
    if (s->restart && in->restarts < MAX_RESTARTS && !c->stop_requested) {
        if (in->pid > 0)
            kill(in->pid, SIGKILL); /* the slot's endpoints are for its successor */
        in->kill_at = 0;
        in->draining = false;
        in->restarts++;
        retire_stats(in);
        in->incarnation++;
        tusk_error_t err;
        say(c, "restarting %s[%u] (restart %u of at most %u)", s->name, in->k, in->restarts, MAX_RESTARTS);
        if (spawn(c, in, &err) != TUSK_OK) {
            say(c, "%s", err.message);
            in->st = I_GONE;
            begin_fatal_stop(c, err.message);
        }
        return;
    }
    if (s->continue_on_failure && others > 0) {
        say(c, "going on without %s[%u]: %u other instance%s carr%s the load", s->name, in->k, others,
            others == 1 ? "" : "s", others == 1 ? "ies" : "y");
        in->lost = true;
        tell_lost(c, in, counted);
        return;
    }
    in->lost = true;
    /* Nobody waits for its end of run while the rest stops. */
    tell_lost(c, in, counted);
    char why[TUSK_ERROR_MESSAGE_MAX + 64];
    snprintf(why, sizeof why, "%s[%u]: %s", s->name, in->k, in->reason);
    begin_fatal_stop(c, why);
}

static void describe_exit(int status, char *out, size_t n)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *name = sig == SIGKILL ? "SIGKILL" : sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT"
                         : sig == SIGTERM ? "SIGTERM" : sig == SIGBUS ? "SIGBUS" : "";
        snprintf(out, n, "was killed by signal %d%s%s%s", sig, *name ? " (" : "", name, *name ? ")" : "");
    } else {
        snprintf(out, n, "exited with status %d", WEXITSTATUS(status));
    }
}

/* Collect exited children; an exit nobody asked for is a failure. */
static void reap(ctrl_t *c)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (unsigned i = 0; i < c->n_inst; i++) {
            inst_t *in = &c->inst[i];
            if (in->pid != pid)
                continue; /* not current: e.g. a restarted slot's predecessor */
            in->pid = 0;
            if (in->draining) {
                /* A clean exit flushed what it had sent (its data sockets
                 * linger longer than we wait before a kill); anything
                 * else may have taken some with it. */
                in->draining = false;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    tell_lost(c, in, false);
            }
            if (in->st == I_FAILED || in->st == I_GONE || in->st == I_STOPPED || strcmp(in->waiting, "EXIT") == 0) {
                in->st = I_GONE; /* expected: we killed it, or told it to exit */
                in->waiting[0] = '\0';
            } else {
                char how[128];
                describe_exit(status, how, sizeof how);
                on_failure(c, in, "the process %s", how);
            }
            break;
        }
    }
}

/* ---- receiving -------------------------------------------------------------- */

static inst_t *find_inst(ctrl_t *c, const char *id)
{
    for (unsigned i = 0; i < c->n_inst; i++)
        if (strcmp(c->inst[i].id, id) == 0)
            return &c->inst[i];
    return NULL;
}

static void status_table(ctrl_t *c, FILE *out, bool final);

/* Who sent a command: what the authentication says (the key or the user
 * id: proven), and what the sender says of itself (not proven). */
static void who(const tusk_ctl_t *m, const char *id, const char *user, char *out, size_t n)
{
    static const char *const keys[] = {"user", "uid", "pid", "host"};
    char said[4][64];
    for (int i = 0; i < 4; i++)
        zu_printable(said[i], sizeof said[i], tusk_ctl_get(m, keys[i]) ? tusk_ctl_get(m, keys[i]) : "?");
    zu_format(out, n, "%.64s (authenticated as %s; it says user %s, uid %s, pid %s on %s)", id,
              *user ? user : "nobody: no authentication", said[0], said[1], said[2], said[3]);
}

/* Run control (defined with tusk_run_serve, below). */
static int controller_command(ctrl_t *c, const char *verb, const char *args, const char *via, const char *who,
                              char **reply, tusk_error_t *err);
static void observe_tick(ctrl_t *c);
static void live_table(ctrl_t *c);
static int observe_start(ctrl_t *c, tusk_error_t *err);
static void control_end(ctrl_t *c);
static int bring_up(ctrl_t *c, tusk_error_t *err);
static void drive_run(ctrl_t *c);

/* The options with their defaults; nothing taken yet. */
static void ctrl_init(ctrl_t *c, const tusk_run_options_t *opt)
{
    c->opt = *opt;
    if (!c->opt.heartbeat_ms)
        c->opt.heartbeat_ms = 500;
    if (!c->opt.timeout_ms)
        c->opt.timeout_ms = 5000;
    if (!c->opt.start_timeout_ms)
        c->opt.start_timeout_ms = 20000;
    if (!c->opt.orphan_ms)
        c->opt.orphan_ms = 10000;
    c->lock_fd = -1;
    c->debug_actor = -1;
    if (!c->opt.run)
        c->opt.run = 1;
    c->out = opt->out ? opt->out : stdout;
}

static void handle_cli(ctrl_t *c, const char *id, const char *user, tusk_ctl_t *m)
{
    const char *cmd = tusk_ctl_get(m, "cmd");
    tusk_ctl_t *r = tusk_ctl_new("CLI_REPLY");
    char *text = NULL;
    char sender[512];
    who(m, id, user, sender, sizeof sender);
    if (tusk_sec_curve(c->sec) && strcmp(user, tusk_sec_owner(c->sec)) != 0) {
        /* Authenticated, but not as the run's owner (another certificate of
         * the deployment): it may connect, not command. */
        c->refused_commands++;
        say(c, "refused '%s' from %s: only the run's owner (%s) commands it", cmd ? cmd : "?", sender,
            tusk_sec_owner(c->sec));
        tusk_ctl_set(r, "status", "error");
        tusk_ctl_set(r, "message", "not the run's owner");
    } else if (cmd && strcmp(cmd, "wait") == 0 && (c->running || c->in_run)) {
        /* Answered when the run ends, with its summary (answer_waiters). */
        char (*w)[256] = realloc(c->waiters, (c->n_waiters + 1) * sizeof *w);
        if (w) {
            c->waiters = w;
            zu_format(c->waiters[c->n_waiters++], sizeof *w, "%s", id);
            tusk_ctl_destroy(&r);
            return;
        }
        tusk_ctl_set(r, "status", "error");
        tusk_ctl_set(r, "message", "out of memory");
    } else {
        char via[64];
        tusk_error_t e;
        zu_format(via, sizeof via, "tusk-run --%s", cmd ? cmd : "?");
        if (controller_command(c, cmd ? cmd : "", tusk_ctl_get(m, "args"), via, sender, &text, &e) == TUSK_OK) {
            tusk_ctl_set(r, "status", "ok");
        } else {
            tusk_ctl_set(r, "status", "error");
            tusk_ctl_set(r, "message", e.message);
        }
    }
    tusk_error_t err;
    zu_send_ctl(c->router, id, r, text ? text : "", text ? strlen(text) : 0, &err);
    tusk_ctl_destroy(&r);
    free(text);
}

/* Is a message from instance `in` from where it should be? With
 * configured keys, the certificate of its host; else anyone the handler
 * let in (the run's key, or our uid). */
static bool from_its_host(ctrl_t *c, const inst_t *in, const char *id, const char *user)
{
    if (!tusk_sec_curve(c->sec))
        return true;
    const char *want = tusk_sec_user_for(c->sec, spec_of(c, in)->hostname);
    if (strcmp(user, want) == 0)
        return true;
    c->refused_commands++;
    if (c->refused_commands <= 10)
        say(c, "refused a message as %s from a peer authenticated as %s, not %s", id, user, want);
    return false;
}

/* Handle one message; true when `m` was kept (as the instance's
 * statistics), so the caller must not free it. */
static bool handle_message(ctrl_t *c, const char *id, const char *user, tusk_ctl_t *m)
{
    const char *verb = tusk_ctl_verb(m);
    if (strncmp(id, "cli.", 4) == 0) {
        if (strcmp(verb, "CLI") == 0)
            handle_cli(c, id, user, m);
        return false;
    }
    size_t idlen = strlen(id);
    if (idlen > 3 && strcmp(id + idlen - 3, "/hb") == 0) {
        /* From an instance's liveness thread: alive, and in which hook. */
        char main_id[256];
        zu_format(main_id, sizeof main_id, "%.*s", (int)(idlen - 3), id);
        inst_t *in = find_inst(c, main_id);
        if (in && !from_its_host(c, in, id, user))
            return false;
        if (in && strcmp(verb, "ALIVE") == 0) {
            in->last_seen = tusk_clock_ms();
            const char *hook = tusk_ctl_get(m, "hook");
            zu_format(in->hook, sizeof in->hook, "%s", hook ? hook : "");
            in->hook_ms = stat_u64(m, "hook_ms");
        }
        return false;
    }
    inst_t *in = find_inst(c, id);
    if (!in)
        return false; /* an earlier incarnation (its token is not the slot's now) */
    if (!from_its_host(c, in, id, user))
        return false;
    in->last_seen = tusk_clock_ms();
    bool kept = tusk_ctl_get(m, "state") != NULL;
    if (kept) {
        /* The one before stays, for the queue column's estimate. */
        tusk_ctl_destroy(&in->prev_stats);
        in->prev_stats = in->stats;
        in->prev_at = in->stats_at;
        in->stats = m;
        in->stats_at = tusk_clock_ms();
    }
    if (strcmp(verb, "BAD_DATA") == 0) {
        /* A malformed buffer arrived (the first on its link): say so now;
         * the final counts come with the statistics. */
        const tusk_actor_spec_t *s = spec_of(c, in);
        say(c, "corrupt data: %s[%u] on %s received a %s", s->name, in->k, s->hostname,
            tusk_ctl_get(m, "message") ? tusk_ctl_get(m, "message") : "malformed buffer");
        return kept;
    }
    if (in->st == I_FAILED || in->st == I_GONE)
        return kept;
    if (strcmp(verb, "HELLO") == 0) {
        if (in->st == I_STARTING)
            in->st = I_HELLO;
        if (in->incarnation > 0 && c->running)
            send_configure(c, in); /* a restart: on through the states */
    } else if (strcmp(verb, "ENDED") == 0) {
        in->st = I_ENDED;
    } else if (strcmp(verb, "FAILED") == 0) {
        on_reported_failure(c, in, "%s", tusk_ctl_get(m, "message") ? tusk_ctl_get(m, "message") : "(no message)");
    } else if (strcmp(verb, "HEARTBEAT") == 0) {
        const char *st = tusk_ctl_get(m, "state");
        if (st && strcmp(st, "paused") == 0)
            in->st = I_PAUSED;
        else if (st && strcmp(st, "running") == 0 && in->st == I_PAUSED)
            in->st = I_RUNNING;
    } else if (strcmp(verb, "REPLY") == 0) {
        const char *to = tusk_ctl_get(m, "to"), *status = tusk_ctl_get(m, "status");
        bool ok = status && strcmp(status, "ok") == 0;
        if (!to || strcmp(to, in->waiting) != 0)
            return kept;
        in->waiting[0] = '\0';
        if (!ok) {
            in->reply_error = true;
            snprintf(in->reply_message, sizeof in->reply_message, "%s: %s", to,
                     tusk_ctl_get(m, "message") ? tusk_ctl_get(m, "message") : "failed");
        }
        if (!ok && (c->running || strcmp(to, "STOP") == 0)) {
            on_reported_failure(c, in, "%s", in->reply_message);
            return kept;
        }
        if (!ok)
            return kept;
        if (strcmp(to, "CONFIGURE") == 0) {
            /* Where its inputs bound: its senders are told at their CONFIGURE. */
            const tusk_actor_spec_t *s = spec_of(c, in);
            for (unsigned j = 0; j < s->n_sources; j++) {
                char key[32], ep[512];
                snprintf(key, sizeof key, "bound:%u", j);
                const char *b = tusk_ctl_get(m, key);
                if (!b || layout_connect_endpoint(c->topo, &c->layout, in->actor, b, ep, sizeof ep) != TUSK_OK) {
                    in->reply_error = true;
                    zu_format(in->reply_message, sizeof in->reply_message,
                              "CONFIGURE: its input %u did not say where it bound (%s)", j, b ? b : "nothing");
                    if (c->running)
                        on_reported_failure(c, in, "%s", in->reply_message);
                    return kept;
                }
                zu_format(in->bound[j], sizeof in->bound[j], "%s", b);
            }
            in->st = I_CONFIGURED;
            if (in->incarnation > 0 && c->running)
                command(c, in, "INITIALISE", NULL, NULL, 0);
        } else if (strcmp(to, "INITIALISE") == 0) {
            in->st = I_READY;
            if (in->incarnation > 0 && c->running)
                send_start(c, in);
        } else if (strcmp(to, "START") == 0) {
            in->st = I_RUNNING;
            if (in->incarnation > 0 && !in->respawned) {
                /* Its predecessor may have taken the upstream end of run
                 * with it: ask for it again. */
                tell_neighbours(c, in, "RESEND_EOR", true, false);
                say(c, "%s[%u] restarted", spec_of(c, in)->name, in->k);
            }
        } else if (strcmp(to, "PAUSE") == 0 || strcmp(to, "RESUME") == 0) {
            /* What it is now, as it says: one that ended (or was stopped)
             * before the command came stays so, or the run never ends. */
            const char *now = tusk_ctl_get(m, "state");
            in->st = !now                          ? (to[0] == 'P' ? I_PAUSED : I_RUNNING)
                   : strcmp(now, "paused") == 0  ? I_PAUSED
                   : strcmp(now, "running") == 0 ? I_RUNNING
                   : strcmp(now, "ended") == 0   ? I_ENDED
                   : strcmp(now, "ready") == 0   ? I_STOPPED
                                                 : in->st;
        } else if (strcmp(to, "STOP") == 0) {
            in->st = I_STOPPED;
        } else if (strcmp(to, "EXIT") == 0) {
            in->st = I_GONE;
        }
    }
    return kept;
}

/* One turn: messages, exits, heartbeats, pings, the live table. */
static void pump(ctrl_t *c, long timeout_ms)
{
    zmq_pollitem_t item = {.socket = c->router, .events = ZMQ_POLLIN};
    if (zmq_poll(&item, 1, timeout_ms) > 0) {
        while (true) {
            char id[256], user[160];
            tusk_ctl_t *m = NULL;
            tusk_error_t err;
            int rc = zu_recv_ctl(c->router, true, id, sizeof id, user, sizeof user, &m, NULL, NULL, &err);
            if (rc == TUSK_EIO)
                break;
            if (rc != TUSK_OK) {
                /* Dropped and counted, never fatal; the first ones said. */
                c->bad_control++;
                if (c->bad_control <= 10 || c->bad_control % 1000 == 0)
                    say(c, "dropped a malformed control message (%llu so far) from %s (authenticated as %s): %s",
                        (unsigned long long)c->bad_control, *id ? id : "?", *user ? user : "nobody", err.message);
                continue;
            }
            if (!handle_message(c, id, user, m))
                tusk_ctl_destroy(&m);
        }
    }
    reap(c);
    uint64_t now = tusk_clock_ms();
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (in->kill_at && now >= in->kill_at) {
            in->kill_at = 0;
            if (in->pid > 0 && in->st == I_FAILED)
                kill(in->pid, SIGKILL);
        }
    }
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (!alive(in) || debugged(c, in))
            continue;
        uint64_t limit = in->st == I_STARTING ? c->opt.start_timeout_ms : c->opt.timeout_ms;
        /* A command in progress (CONFIGURE loads a library, START may warm
         * up a device) gets the longer start timeout. */
        if (in->waiting[0])
            limit = c->opt.start_timeout_ms;
        if (now - in->last_seen <= limit)
            continue;
        if (in->st == I_STARTING)
            on_failure(c, in, "did not report within %.1f s (is tusk-actor installed there, and can it reach the "
                       "control socket %s?)", (double)(now - in->last_seen) / 1000.0, c->endpoint);
        else
            on_failure(c, in, "no heartbeat for %.1f s (the process is frozen, or its host is unreachable)",
                       (double)(now - in->last_seen) / 1000.0);
    }
    /* A hook call that overruns the actor's hook_timeout is a stall. The
     * duration is the instance's own measure, so a late message can only
     * make it look shorter. */
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        unsigned limit_s = spec_of(c, in)->hook_timeout_s;
        if (alive(in) && in->hook[0] && limit_s && in->hook_ms > (uint64_t)limit_s * 1000u && !debugged(c, in))
            on_failure(c, in, "stalled in %s for %.1f s, over its hook_timeout of %u s", in->hook,
                       (double)in->hook_ms / 1000.0, limit_s);
    }
    if (now >= c->next_ping) {
        /* Both connections of every instance hear from us: the liveness
         * thread's tells it, even inside a long hook, that we are here. */
        tusk_ctl_t *ping = tusk_ctl_new("PING");
        for (unsigned i = 0; i < c->n_inst; i++) {
            inst_t *in = &c->inst[i];
            if (!alive(in) || in->st == I_STARTING)
                continue;
            command(c, in, "PING", NULL, NULL, 0);
            char hb_id[272];
            snprintf(hb_id, sizeof hb_id, "%s/hb", in->id);
            tusk_error_t err;
            zu_send_ctl(c->router, hb_id, ping, NULL, 0, &err);
        }
        tusk_ctl_destroy(&ping);
        c->next_ping = now + c->opt.heartbeat_ms;
    }
    observe_tick(c);
    if (c->opt.live && c->running && now >= c->next_live) {
        live_table(c);
        c->next_live = now + 1000;
    }
    if (stop_signals && !c->stop_requested) {
        say(c, "stopping (signal): producers first, then the rest once drained; again to abort");
        c->stop_requested = true;
    }
}

/* The hook a command calls (as tusk-actor names it), or "". */
static const char *hook_of(const char *verb)
{
    static const char *const map[][2] = {
        {"CONFIGURE", "process_config/process_register"}, {"INITIALISE", "process_initialise"},
        {"START", "process_start"}, {"STOP", "process_stop"}, {"PAUSE", "process_pause"},
        {"RESUME", "process_resume"}, {"RESET", "process_reset"}, {"EXIT", "process_unload"},
        {"UPDATE", "process_update"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], verb) == 0)
            return map[i][1];
    return "";
}

/* Wait until no instance awaits a reply to `verb`. An instance that is
 * alive and inside the hook the command calls has as long as its
 * hook_timeout allows (see pump): the timeout counts from when it left. */
static bool wait_for(ctrl_t *c, const char *verb, unsigned timeout_ms)
{
    uint64_t end = tusk_clock_ms() + timeout_ms;
    const char *hook = hook_of(verb);
    while (tusk_clock_ms() < end) {
        bool pending = false, in_hook = false;
        for (unsigned i = 0; i < c->n_inst; i++) {
            const inst_t *in = &c->inst[i];
            if (alive(in) && strcmp(in->waiting, verb) == 0) {
                pending = true;
                in_hook |= (*hook && strcmp(in->hook, hook) == 0) || debugged(c, in);
            }
        }
        if (!pending)
            return true;
        if (in_hook)
            end = tusk_clock_ms() + timeout_ms;
        if (stop_signals > 1)
            return false;
        pump(c, 50);
    }
    return false;
}

/* Send `verb` to the alive instances of every actor, in dependency order
 * or backwards, one actor at a time. */
static bool step_all(ctrl_t *c, const char *verb, bool backwards, unsigned timeout_ms, ist_t only)
{
    unsigned n = tusk_topology_count(c->topo);
    for (unsigned j = 0; j < n; j++) {
        unsigned a = backwards ? n - 1 - j : j;
        for (unsigned i = 0; i < c->n_inst; i++) {
            inst_t *in = &c->inst[i];
            if (in->actor != a || !alive(in) || in->st == I_STARTING || (only != I_GONE && in->st != only))
                continue;
            if (strcmp(verb, "START") == 0)
                send_start(c, in);
            else if (strcmp(verb, "CONFIGURE") == 0)
                send_configure(c, in);
            else
                command(c, in, verb, NULL, NULL, 0);
        }
        if (!wait_for(c, verb, timeout_ms))
            return false;
        /* Setting up, an actor that refused goes no further, nor do the
         * ones after it (they would only fail for want of it). */
        for (unsigned i = 0; !c->running && i < c->n_inst; i++)
            if (c->inst[i].actor == a && c->inst[i].reply_error)
                return false;
    }
    return true;
}

/* EXIT to every instance still there, all at once, and a bounded wait
 * for the replies (even after an abort: instances must not linger). */
static void exit_all(ctrl_t *c)
{
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (alive(in) && in->st != I_STARTING)
            command(c, in, "EXIT", NULL, NULL, 0);
    }
    uint64_t end = tusk_clock_ms() + EXIT_TIMEOUT_MS;
    while (tusk_clock_ms() < end) {
        bool pending = false;
        for (unsigned i = 0; i < c->n_inst; i++)
            pending |= alive(&c->inst[i]) && strcmp(c->inst[i].waiting, "EXIT") == 0;
        if (!pending)
            break;
        pump(c, 50);
    }
}

/* ---- reporting ---------------------------------------------------------------- */

/* The queue column: buffers sent to `in` and not yet received by it, over
 * its input links (what waits in the senders' and its own socket queues,
 * at most hwm each, and in the pipe between them). The counts of the
 * current incarnations, the sender's taken at the moment of the
 * receiver's (runctl.h: two processes report at different moments; the
 * difference of their latest counts alone showed a second's worth of
 * buffers on a fast link). */
static uint64_t queue_depth(const ctrl_t *c, const inst_t *in)
{
    uint64_t q = 0;
    for (unsigned i = 0; in->stats && i < c->n_inst; i++) {
        const inst_t *up = &c->inst[i];
        char key[64], rkey[96];
        snprintf(key, sizeof key, "sent:%u:%u", in->actor, in->k);
        if (!up->stats || !tusk_ctl_get(up->stats, key) || stat_u64(up->stats, "run") != stat_u64(in->stats, "run"))
            continue;
        uint64_t inc = stat_u64(up->stats, "incarnation");
        tusk_count_sample_t last = {true, up->stats_at, stat_u64(up->stats, key)}, before = {0};
        const tusk_ctl_t *pm = up->prev_stats;
        if (pm && tusk_ctl_get(pm, key) && stat_u64(pm, "incarnation") == inc &&
            stat_u64(pm, "run") == stat_u64(up->stats, "run"))
            before = (tusk_count_sample_t){true, up->prev_at, stat_u64(pm, key)};
        snprintf(rkey, sizeof rkey, "recvi:%u:%u:%llu", up->actor, up->k, (unsigned long long)inc);
        tusk_count_sample_t got = {true, in->stats_at, stat_u64(in->stats, rkey)};
        q += tusk_queue_estimate(&before, &last, &got);
    }
    return q;
}

/* What was kept out, where: one line per process with anything to say. */
static void security_lines(ctrl_t *c, FILE *out)
{
    tusk_sec_counts_t sc = tusk_sec_counts(c->sec, NULL);
    if (sc.refused || sc.denied || c->bad_control || c->refused_commands)
        fprintf(out, "security: tusk-run's control socket: %llu connections refused (%llu denied by the "
                     "authentication), %llu malformed messages dropped, %llu messages refused\n",
                (unsigned long long)sc.refused, (unsigned long long)sc.denied, (unsigned long long)c->bad_control,
                (unsigned long long)c->refused_commands);
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        uint64_t refused = slot_stat(in, "refused"), denied = slot_stat(in, "denied"),
                 dropped = slot_stat(in, "dropped");
        if (refused || denied || dropped)
            fprintf(out, "security: %s[%u]'s inputs: %llu connections refused (%llu denied by the "
                         "authentication), %llu messages dropped\n",
                    spec_of(c, in)->name, in->k, (unsigned long long)refused, (unsigned long long)denied,
                    (unsigned long long)dropped);
    }
}

/* An instance's state as the status table says it. */
static const char *state_word(const inst_t *in)
{
    return in->lost && in->st == I_GONE ? "lost" : in->st == I_GONE ? (in->failed_now ? "gone" : "done")
                                                                     : ist_names[in->st];
}

static void status_table(ctrl_t *c, FILE *out, bool final)
{
    uint64_t now = tusk_clock_ms();
    fprintf(out, "%-20s %-12s %-10s %9s %9s %10s %10s %8s %8s\n", "instance", "host", "state", "buf in", "buf out",
            "MB in", "MB out", final ? "block s" : "MB/s in", final ? "restarts" : "queue");
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        const tusk_actor_spec_t *s = spec_of(c, in);
        char name[64];
        snprintf(name, sizeof name, "%s[%u]%s", s->name, in->k, in->incarnation ? "*" : "");
        uint64_t bin = slot_stat(in, "in_bytes"), bout = slot_stat(in, "out_bytes");
        double third;
        if (final) {
            third = (double)slot_stat(in, "block_ns") / 1e9;
        } else {
            uint64_t bytes = s->actor_class == TUSK_PRODUCER ? bout : bin;
            double dt = in->prev_ms ? (double)(now - in->prev_ms) / 1000.0 : 0;
            third = dt > 0 ? (double)(bytes - in->prev_bytes) / 1e6 / dt : 0;
            in->prev_bytes = bytes;
            in->prev_ms = now;
        }
        fprintf(out, "%-20s %-12s %-10s %9llu %9llu %10.1f %10.1f %8.*f %8llu\n", name, s->hostname, state_word(in),
                (unsigned long long)slot_stat(in, "in_buffers"), (unsigned long long)slot_stat(in, "out_buffers"),
                (double)bin / 1e6, (double)bout / 1e6, final ? 2 : 1, third,
                (unsigned long long)(final ? in->restarts : queue_depth(c, in)));
    }
    /* Instances inside one hook call for more than a second, as their
     * liveness threads say. */
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        const tusk_actor_spec_t *s = spec_of(c, in);
        if (!alive(in) || !in->hook[0] || in->hook_ms < 1000)
            continue;
        char limit[32] = "none";
        if (s->hook_timeout_s)
            snprintf(limit, sizeof limit, "%u s", s->hook_timeout_s);
        fprintf(out, "%s[%u] is in %s for %.1f s (hook_timeout: %s)\n", s->name, in->k, in->hook,
                (double)in->hook_ms / 1000.0, limit);
    }
    security_lines(c, out);
    fflush(out);
}

/* One link's figures (one upstream slot -> one downstream slot, summed
 * over the incarnations of both). */
typedef struct link_count {
    uint64_t sent;       /* buffers the upstream slot sent on it */
    uint64_t received;   /* buffers that arrived (duplicates included) */
    uint64_t finished;   /* inputs the downstream slot finished: every output left, or consumed */
    uint64_t lost;       /* sent, never finished */
    uint64_t held;       /* of those: held back (no output of their own) when it failed or stopped */
    uint64_t extra;      /* arrived beyond what was sent */
    uint64_t duplicates; /* buffer numbers that arrived again (dropped) */
    uint64_t gaps;       /* buffer numbers skipped */
    uint64_t malformed;  /* buffers whose ADF framing was broken */
    bool exact;          /* false: an incarnation died with out-of-date counts and so did the
                            actor that would have counted for it: the loss is an upper bound */
} link_count_t;

typedef struct totals {
    uint64_t links, sent, lost, extra, malformed, gaps, duplicates;
    uint64_t refused, denied, dropped; /* connections kept out, messages dropped: every process */
} totals_t;

static uint64_t sum_over(const inst_t *in, const char *key)
{
    uint64_t v = 0;
    for (unsigned j = 0; j <= in->incarnation; j++)
        v += stat_u64(stats_of(in, j), key);
    return v;
}

static bool all_final(const inst_t *in)
{
    for (unsigned j = 0; j <= in->incarnation; j++)
        if (!stats_final(stats_of(in, j)))
            return false;
    return true;
}

/* The counts of link up -> d. Each incarnation's own final counts are
 * exact. For one that died while moving data (its last statistics are
 * out of date), the neighbours count instead: what it sent is what
 * arrived of it (what it had sent but did not leave it is the loss of
 * its own inputs, which are unfinished), and what it finished is what
 * the actor below it saw it finish. So every lost buffer is counted
 * once, on the link into the instance that did not pass it on. */
static void count_link(const ctrl_t *c, const inst_t *up, const inst_t *d, link_count_t *lc)
{
    const tusk_actor_spec_t *ds = spec_of(c, d);
    char key[96];
    memset(lc, 0, sizeof *lc);
    lc->exact = true;
    bool d_final = all_final(d);
    for (unsigned i = 0; i <= up->incarnation; i++) {
        const tusk_ctl_t *um = stats_of(up, i);
        snprintf(key, sizeof key, "sent:%u:%u", d->actor, d->k);
        uint64_t sent = stat_u64(um, key);
        if (!stats_final(um)) {
            snprintf(key, sizeof key, "recvi:%u:%u:%u", up->actor, up->k, i);
            uint64_t arrived = sum_over(d, key);
            if (d_final) {
                sent = arrived;
            } else {
                sent = arrived > sent ? arrived : sent;
                lc->exact = false;
            }
        }
        lc->sent += sent;
    }
    snprintf(key, sizeof key, "recv:%u:%u", up->actor, up->k);
    lc->received = sum_over(d, key);
    for (unsigned j = 0; j <= d->incarnation; j++) {
        const tusk_ctl_t *dm = stats_of(d, j);
        snprintf(key, sizeof key, "held:%u:%u", up->actor, up->k);
        lc->held += stat_u64(dm, key);
        snprintf(key, sizeof key, "dup:%u:%u", up->actor, up->k);
        lc->duplicates += stat_u64(dm, key);
        snprintf(key, sizeof key, "gap:%u:%u", up->actor, up->k);
        lc->gaps += stat_u64(dm, key);
        snprintf(key, sizeof key, "bad:%u:%u", up->actor, up->k);
        lc->malformed += stat_u64(dm, key);
        if (stats_final(dm)) {
            snprintf(key, sizeof key, "fin:%u:%u", up->actor, up->k);
            lc->finished += stat_u64(dm, key);
        } else if (ds->n_sinks) {
            /* What came out of it, as the first actor below counted. */
            snprintf(key, sizeof key, "done:%u:%u:%u:%u:%u", d->actor, d->k, j, up->actor, up->k);
            for (unsigned e = 0; e < c->n_inst; e++) {
                const inst_t *below = &c->inst[e];
                if (below->actor != ds->sinks[0])
                    continue;
                lc->finished += sum_over(below, key);
                lc->exact &= all_final(below);
            }
        } else {
            /* A consumer that died: what it had received, at most. */
            snprintf(key, sizeof key, "recv:%u:%u", up->actor, up->k);
            lc->finished += stat_u64(dm, key);
            lc->exact = false;
        }
    }
    lc->lost = lc->sent > lc->finished ? lc->sent - lc->finished : 0;
    lc->extra = lc->received > lc->sent ? lc->received - lc->sent : 0;
}

/* Does up's actor feed d's? */
static bool linked(const ctrl_t *c, const inst_t *up, const inst_t *d)
{
    const tusk_actor_spec_t *ds = spec_of(c, d);
    for (unsigned j = 0; j < ds->n_sources; j++)
        if (ds->sources[j] == up->actor)
            return true;
    return false;
}

/* The status snapshot (status.h) for the web page and /metrics: the
 * figures of the status table and of the links' reconciliation
 * (count_link), as they are now. */
int tusk_controller_status(ctrl_t *c, tusk_status_t *st, tusk_error_t *err)
{
    size_t n_links = 0;
    for (unsigned u = 0; u < c->n_inst; u++)
        for (unsigned d = 0; d < c->n_inst; d++)
            n_links += linked(c, &c->inst[u], &c->inst[d]);
    int rc = tusk_status_size(st, c->n_inst, n_links, err);
    if (rc != TUSK_OK)
        return rc;
    zu_format(st->topology, sizeof st->topology, "%s", tusk_topology_name(c->topo));
    zu_format(st->run_dir, sizeof st->run_dir, "%s", c->run_dir);
    st->run = tusk_controller_run(c);
    zu_format(st->run_state, sizeof st->run_state, "%s", tusk_controller_phase(c));
    st->elapsed_s = tusk_controller_elapsed(c);
    tusk_sec_counts_t sc = tusk_sec_counts(c->sec, NULL);
    st->bad_control = c->bad_control;
    st->refused_commands = c->refused_commands;
    st->ctl_refused = sc.refused;
    st->ctl_denied = sc.denied;
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        const tusk_actor_spec_t *s = spec_of(c, in);
        tusk_status_inst_t *o = &st->inst[i];
        zu_format(o->actor, sizeof o->actor, "%s", s->name);
        o->k = in->k;
        o->incarnation = in->incarnation;
        zu_format(o->host, sizeof o->host, "%s", s->hostname);
        zu_format(o->actor_class, sizeof o->actor_class, "%s",
                  s->actor_class == TUSK_PRODUCER ? "producer" : s->n_sinks ? "filter" : "consumer");
        zu_format(o->state, sizeof o->state, "%s",
                  in->lost && in->st == I_GONE ? "lost"
                  : in->st == I_GONE          ? (in->failed_now ? "gone" : "done")
                                              : ist_names[in->st]);
        o->in_buffers = slot_stat(in, "in_buffers");
        o->out_buffers = slot_stat(in, "out_buffers");
        o->in_bytes = slot_stat(in, "in_bytes");
        o->out_bytes = slot_stat(in, "out_bytes");
        o->block_ns = slot_stat(in, "block_ns");
        o->queue = queue_depth(c, in);
        o->restarts = in->restarts;
        o->refused = slot_stat(in, "refused");
        o->denied = slot_stat(in, "denied");
        o->dropped = slot_stat(in, "dropped");
        if (alive(in) && in->hook[0]) {
            zu_format(o->hook, sizeof o->hook, "%s", in->hook);
            o->hook_ms = in->hook_ms;
        }
        zu_format(o->last_error, sizeof o->last_error, "%s", in->reason);
        if (in->local)
            zu_format(o->live_dir, sizeof o->live_dir, "%s/%s.%u/live", c->run_dir, s->name, in->k);
    }
    size_t l = 0;
    for (unsigned u = 0; u < c->n_inst; u++)
        for (unsigned d = 0; d < c->n_inst && l < n_links; d++) {
            if (!linked(c, &c->inst[u], &c->inst[d]))
                continue;
            link_count_t lc;
            count_link(c, &c->inst[u], &c->inst[d], &lc);
            tusk_status_link_t *o = &st->links[l++];
            *o = (tusk_status_link_t){.from = u, .to = d, .sent = lc.sent, .received = lc.received,
                                      .finished = lc.finished, .held = lc.held, .duplicates = lc.duplicates,
                                      .gaps = lc.gaps, .malformed = lc.malformed};
            /* Its sampling tap (tap.h), as the sending instance says. */
            char key[64];
            const inst_t *in = &c->inst[d];
            snprintf(key, sizeof key, "tap:%u:%u", in->actor, in->k);
            const char *address = c->inst[u].stats ? tusk_ctl_get(c->inst[u].stats, key) : NULL;
            o->tap = address != NULL;
            zu_format(o->tap_address, sizeof o->tap_address, "%s", address ? address : "");
            snprintf(key, sizeof key, "tap_listening:%u:%u", in->actor, in->k);
            o->tap_listening = o->tap && stat_u64(c->inst[u].stats, key) != 0;
            snprintf(key, sizeof key, "tap_sent:%u:%u", in->actor, in->k);
            o->tap_sent = slot_stat(&c->inst[u], key);
            snprintf(key, sizeof key, "tap_dropped:%u:%u", in->actor, in->k);
            o->tap_dropped = slot_stat(&c->inst[u], key);
        }
    return TUSK_OK;
}

/* `tap UP[K]->DOWN[K]` / `untap ...` (tap.h): the sending instance
 * opens (closes) a sampling tap on its link to DOWN[K]; the reply names
 * the tap's address. */
static int tap_link(ctrl_t *c, const char *args, bool on, const char *by, char **reply, tusk_error_t *err)
{
    char up_name[128], down_name[128];
    unsigned uk, dk, every;
    int rc = tusk_tap_link_parse(args, up_name, sizeof up_name, &uk, down_name, sizeof down_name, &dk,
                                 on ? &every : NULL, err);
    if (rc != TUSK_OK)
        return rc;
    inst_t *up = NULL, *down = NULL;
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (in->k == uk && strcmp(spec_of(c, in)->name, up_name) == 0)
            up = in;
        if (in->k == dk && strcmp(spec_of(c, in)->name, down_name) == 0)
            down = in;
    }
    if (!up || !down || !linked(c, up, down))
        return tusk_error_set(err, TUSK_EINVAL, "%s: no link %s[%u]->%s[%u] in the topology", on ? "tap" : "untap",
                              up_name, uk, down_name, dk);
    if (!alive(up) || up->st == I_STARTING || up->st == I_HELLO)
        return tusk_error_set(err, TUSK_EINVAL, "%s: %s[%u] is %s", on ? "tap" : "untap", up_name, uk,
                              ist_names[up->st]);
    tusk_ctl_t *m = tusk_ctl_new("TAP");
    if (!m)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    tusk_ctl_set_u64(m, "actor", down->actor);
    tusk_ctl_set_u64(m, "instance", down->k);
    tusk_ctl_set_u64(m, "on", on);
    if (on)
        tusk_ctl_set_u64(m, "every", every);
    command(c, up, "TAP", m, NULL, 0);
    tusk_ctl_destroy(&m);
    if (!wait_for(c, "TAP", c->opt.start_timeout_ms) || !alive(up))
        return tusk_error_set(err, TUSK_EIO, "%s: %s[%u] did not answer", on ? "tap" : "untap", up_name, uk);
    if (!up->stats)
        return tusk_error_set(err, TUSK_EIO, "tap: %s[%u] sent no statistics", up_name, uk);
    const char *problem = tusk_ctl_get(up->stats, "tap_error");
    if (problem)
        return tusk_error_set(err, TUSK_EIO, "tap: %s[%u]: %s", up_name, uk, problem);
    char key[64];
    snprintf(key, sizeof key, "tap:%u:%u", down->actor, down->k);
    const char *address = tusk_ctl_get(up->stats, key);
    if (on && !address)
        return tusk_error_set(err, TUSK_EIO, "tap: %s[%u] did not say where its tap is", up_name, uk);
    size_t size = 0;
    FILE *mem = open_memstream(reply, &size);
    if (!mem)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (on)
        fprintf(mem, "tap on %s[%u]->%s[%u]: %s\n", up_name, uk, down_name, dk, address);
    else
        fprintf(mem, "tap off %s[%u]->%s[%u]\n", up_name, uk, down_name, dk);
    fclose(mem);
    say(c, "tap %s %s[%u]->%s[%u]%s%s %s", on ? "on" : "off", up_name, uk, down_name, dk, on ? ": " : "",
        on ? address : "", by);
    return TUSK_OK;
}

/* Every link's counts: what was lost (and where), what arrived beyond
 * what was sent, what arrived malformed. */
static totals_t reconcile(ctrl_t *c, FILE *out)
{
    totals_t t = {0};
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *d = &c->inst[i];
        const tusk_actor_spec_t *ds = spec_of(c, d);
        for (unsigned u = 0; u < c->n_inst; u++) {
            inst_t *up = &c->inst[u];
            if (!linked(c, up, d))
                continue;
            const tusk_actor_spec_t *us = spec_of(c, up);
            link_count_t lc;
            count_link(c, up, d, &lc);
            t.links++;
            t.sent += lc.sent;
            t.lost += lc.lost;
            t.extra += lc.extra;
            t.malformed += lc.malformed;
            t.gaps += lc.gaps;
            t.duplicates += lc.duplicates;
            if (lc.lost) {
                char held[160] = "";
                if (lc.held)
                    zu_format(held, sizeof held, ", %llu of them held back by %s[%u] (no output of their own) %s",
                              (unsigned long long)lc.held, ds->name, d->k,
                              d->failed_once ? "when it failed" : "and never flushed");
                fprintf(out, "lost: %llu of %llu buffers from %s[%u] to %s[%u]%s%s\n", (unsigned long long)lc.lost,
                        (unsigned long long)lc.sent, us->name, up->k, ds->name, d->k, held,
                        lc.exact ? "" : " (at most: instances died with out-of-date counts)");
            }
            if (lc.extra || lc.duplicates)
                fprintf(out, "extra: %llu buffers arrived from %s[%u] at %s[%u], %llu were sent (%llu numbered "
                             "again, dropped: a duplicate or a stray sender)\n",
                        (unsigned long long)lc.received, us->name, up->k, ds->name, d->k,
                        (unsigned long long)lc.sent, (unsigned long long)lc.duplicates);
            if (lc.gaps)
                fprintf(out, "gaps: %llu buffer numbers from %s[%u] never arrived at %s[%u]\n",
                        (unsigned long long)lc.gaps, us->name, up->k, ds->name, d->k);
            if (lc.malformed)
                fprintf(out, "corrupt: %llu malformed buffer%s (broken ADF framing) from %s[%u] at %s[%u]\n",
                        (unsigned long long)lc.malformed, lc.malformed == 1 ? "" : "s", us->name, up->k, ds->name,
                        d->k);
        }
    }
    tusk_sec_counts_t sc = tusk_sec_counts(c->sec, NULL);
    t.refused = sc.refused;
    t.denied = sc.denied;
    for (unsigned i = 0; i < c->n_inst; i++) {
        t.refused += slot_stat(&c->inst[i], "refused");
        t.denied += slot_stat(&c->inst[i], "denied");
        t.dropped += slot_stat(&c->inst[i], "dropped");
    }
    if (t.dropped)
        fprintf(out, "dropped: %llu messages on data links were no data message of this run (see the instances' "
                     "logs)\n",
                (unsigned long long)t.dropped);
    if (t.refused || c->bad_control || c->refused_commands)
        fprintf(out, "kept out: %llu connections refused (%llu denied by the authentication), %llu malformed "
                     "control messages, %llu messages refused\n",
                (unsigned long long)t.refused, (unsigned long long)t.denied, (unsigned long long)c->bad_control,
                (unsigned long long)c->refused_commands);
    fprintf(out, "links: %llu, buffers sent %llu, lost %llu", (unsigned long long)t.links,
            (unsigned long long)t.sent, (unsigned long long)t.lost);
    if (t.extra || t.duplicates)
        fprintf(out, ", extra %llu", (unsigned long long)(t.extra > t.duplicates ? t.extra : t.duplicates));
    if (t.malformed)
        fprintf(out, ", malformed %llu", (unsigned long long)t.malformed);
    fprintf(out, "\n");
    return t;
}

/* --report FILE: the final figures, one `key=value ...` line per instance,
 * one per link and a totals line, for scripts. */
static void write_report(ctrl_t *c, const char *path, const totals_t *t, double seconds)
{
    tusk_error_t err;
    int fd = tusk_open_nofollow(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, &err);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!fp) {
        if (fd >= 0)
            close(fd);
        say(c, "--report: %s", fd >= 0 ? strerror(errno) : err.message);
        return;
    }
    static const char *const keys[] = {"in_buffers", "out_buffers", "in_frames", "out_frames",
                                       "in_bytes",   "out_bytes",   "calls",     "block_ns"};
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        const tusk_actor_spec_t *s = spec_of(c, in);
        fprintf(fp, "instance=%s[%u] actor=%s class=%s host=%s failed=%d restarts=%u", s->name, in->k, s->name,
                tusk_actor_class_name(s->actor_class), s->hostname, in->failed_once ? 1 : 0, in->restarts);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            fprintf(fp, " %s=%llu", keys[k], (unsigned long long)slot_stat(in, keys[k]));
        static const char *const kept_out[] = {"refused", "denied", "dropped"};
        for (size_t k = 0; k < sizeof kept_out / sizeof kept_out[0]; k++)
            fprintf(fp, " %s=%llu", kept_out[k], (unsigned long long)slot_stat(in, kept_out[k]));
        fprintf(fp, "\n");
    }
    for (unsigned i = 0; i < c->n_inst; i++)
        for (unsigned u = 0; u < c->n_inst; u++) {
            const inst_t *d = &c->inst[i], *up = &c->inst[u];
            if (!linked(c, up, d))
                continue;
            link_count_t lc;
            count_link(c, up, d, &lc);
            fprintf(fp,
                    "link=%s[%u]->%s[%u] sent=%llu received=%llu finished=%llu lost=%llu held=%llu extra=%llu "
                    "duplicates=%llu gaps=%llu malformed=%llu exact=%d\n",
                    spec_of(c, up)->name, up->k, spec_of(c, d)->name, d->k, (unsigned long long)lc.sent,
                    (unsigned long long)lc.received, (unsigned long long)lc.finished, (unsigned long long)lc.lost,
                    (unsigned long long)lc.held, (unsigned long long)lc.extra, (unsigned long long)lc.duplicates,
                    (unsigned long long)lc.gaps, (unsigned long long)lc.malformed, lc.exact ? 1 : 0);
        }
    tusk_sec_counts_t sc = tusk_sec_counts(c->sec, NULL);
    fprintf(fp, "control=tusk-run security=%s refused=%llu denied=%llu bad_control=%llu refused_commands=%llu\n",
            !tusk_sec_curve(c->sec) ? "none" : c->secrets.certs[0] ? "curve-certs" : "curve",
            (unsigned long long)sc.refused, (unsigned long long)sc.denied, (unsigned long long)c->bad_control,
            (unsigned long long)c->refused_commands);
    fprintf(fp, "run=%u seconds=%.3f extra=%llu malformed=%llu gaps=%llu refused=%llu denied=%llu dropped=%llu "
                "lost=%llu fatal=%d\n",
            c->opt.run, seconds, (unsigned long long)(t->extra > t->duplicates ? t->extra : t->duplicates),
            (unsigned long long)t->malformed, (unsigned long long)t->gaps, (unsigned long long)t->refused,
            (unsigned long long)t->denied, (unsigned long long)t->dropped, (unsigned long long)t->lost,
            c->fatal ? 1 : 0);
    fclose(fp);
}

/* ---- setup ------------------------------------------------------------------ */

static void find_actor_bin(ctrl_t *c)
{
    if (c->opt.actor_bin) {
        snprintf(c->actor_bin, sizeof c->actor_bin, "%s", c->opt.actor_bin);
        return;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            /* In a build tree the real binary is in .libs; its wrapper is above. */
            size_t len = strlen(self);
            if (len >= 6 && strcmp(self + len - 6, "/.libs") == 0)
                self[len - 6] = '\0';
            snprintf(c->actor_bin, sizeof c->actor_bin, "%s/tusk-actor", self);
            if (access(c->actor_bin, X_OK) == 0)
                return;
        }
    }
    snprintf(c->actor_bin, sizeof c->actor_bin, "tusk-actor"); /* from PATH (through sh for remote) */
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void ctrl_free(ctrl_t *c, bool keep_dir)
{
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        /* Local instances, and the launchers (ssh) of remote ones. */
        if (in->pid > 0) {
            kill(in->pid, SIGKILL);
            waitpid(in->pid, NULL, 0);
        }
        tusk_ctl_destroy(&in->stats);
        tusk_ctl_destroy(&in->prev_stats);
        tusk_params_destroy(&in->sets);
        for (unsigned j = 0; j < in->n_old; j++)
            tusk_ctl_destroy(&in->old_stats[j]);
        free(in->old_stats);
        free(in->bound);
    }
    free(c->inst);
    free(c->first);
    free(c->waiters);
    free(c->summary);
    tusk_sec_close(c->sec, c->router);
    /* Its sockets closed, the authentication handler may go. */
    tusk_sec_destroy(&c->sec);
    if (c->zctx)
        zmq_ctx_term(c->zctx);
    tusk_topology_destroy(&c->topo);
    free(c->xml);
    for (unsigned i = 0; c->narval_paths && i < c->opt.n_narval_scripts; i++)
        free(c->narval_paths[i]);
    free(c->narval_paths);
    memset(&c->secrets, 0, sizeof c->secrets);
    /* The secrets and the entry for --stop go with the run. */
    if (c->keys_path[0])
        unlink(c->keys_path);
    if (c->registry[0])
        unlink(c->registry);
    if (c->lock_fd >= 0) {
        /* The run is over: a folder without a lock is nobody's. */
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/lock", c->run_dir);
        unlink(path);
        close(c->lock_fd);
        c->lock_fd = -1;
    }
    if (c->temp_run_dir && !keep_dir && c->run_dir[0])
        nftw(c->run_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- run folders kept: the retention rule ---------------------------------------- */

static unsigned keep_runs(const ctrl_t *c)
{
    return c->opt.keep_runs_set ? c->opt.keep_runs : TUSK_KEEP_RUNS;
}

/* A small file of the run folder (opened without following links). */
static void run_file(ctrl_t *c, const char *name, const char *text)
{
    char path[PATH_MAX + 16];
    tusk_error_t err;
    snprintf(path, sizeof path, "%s/%s", c->run_dir, name);
    int fd = tusk_open_nofollow(path, O_WRONLY | O_CREAT | O_TRUNC, 0600, &err);
    if (fd < 0) {
        say(c, "%s", err.message);
        return;
    }
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n)
        say(c, "%s: %s", path, strerror(errno));
    close(fd);
}

/* The run is over: whether its folder stays (a failed run's, --keep's, or
 * a temporary one under the retention rule; a --run-dir always), said;
 * a kept temporary folder is marked `ended` (the retention rule's), and
 * `kept` with --keep (never pruned). */
static bool run_folder_end(ctrl_t *c, int status)
{
    if (!c->run_dir[0])
        return false;
    const bool keep = status != TUSK_EXIT_OK || c->opt.keep_run_dir || keep_runs(c) > 0;
    if (!keep)
        return false;
    if (c->temp_run_dir) {
        char line[32];
        snprintf(line, sizeof line, "exit %d\n", status);
        run_file(c, "ended", line);
        if (c->opt.keep_run_dir)
            run_file(c, "kept", "--keep\n");
    }
    say(c, "logs kept in %s", c->run_dir);
    return true;
}

typedef struct ended_folder {
    char name[256];
    struct timespec at;
} ended_folder_t;

static int newest_first(const void *a, const void *b)
{
    const ended_folder_t *x = a, *y = b;
    if (x->at.tv_sec != y->at.tv_sec)
        return x->at.tv_sec < y->at.tv_sec ? 1 : -1;
    if (x->at.tv_nsec != y->at.tv_nsec)
        return x->at.tv_nsec < y->at.tv_nsec ? 1 : -1;
    return strcmp(y->name, x->name);
}

/* The retention rule, after the run: of the finished run folders in the
 * private folder (tusk-run.* with an `ended` file and no `lock` or
 * `kept`: never a live run's, a dead run's or a --keep one), the newest
 * keep_runs stay and the older are removed. Nothing with keep_runs 0. */
static void prune_run_folders(ctrl_t *c)
{
    const unsigned keep = keep_runs(c);
    if (!keep || !c->temp_run_dir || !c->private_dir[0])
        return;
    DIR *d = opendir(c->private_dir);
    if (!d)
        return;
    ended_folder_t *f = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "tusk-run.", 9) != 0 || strlen(e->d_name) >= sizeof f->name)
            continue;
        char path[PATH_MAX + 300];
        struct stat st, lk;
        zu_format(path, sizeof path, "%s/%s/ended", c->private_dir, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        zu_format(path, sizeof path, "%s/%s/lock", c->private_dir, e->d_name);
        if (lstat(path, &lk) == 0)
            continue;
        zu_format(path, sizeof path, "%s/%s/kept", c->private_dir, e->d_name);
        if (lstat(path, &lk) == 0)
            continue;
        if (tusk_grow(&f, &cap, n + 1, sizeof *f) != 0)
            break;
        snprintf(f[n].name, sizeof f[n].name, "%s", e->d_name);
        f[n].at = st.st_mtim;
        n++;
    }
    closedir(d);
    unsigned removed = 0;
    if (n > keep) {
        qsort(f, n, sizeof *f, newest_first);
        for (size_t i = keep; i < n; i++) {
            char path[PATH_MAX + 300];
            zu_format(path, sizeof path, "%s/%s", c->private_dir, f[i].name);
            if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0)
                removed++;
        }
    }
    free(f);
    if (removed)
        say(c, "removed %u older run folder%s of %s (--keep-runs %u: the newest are kept)", removed,
            removed == 1 ? "" : "s", c->private_dir, keep);
}

/* ---- run folders: whose they are -------------------------------------------------- */

/* The run folder's lock: 1 held by a live tusk-run, 0 not held (the fd,
 * now locked by us, in *fd), -1 no lock file. *pid: the owner it names. */
static int probe_lock(const char *dir, int *fd, long *pid)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/lock", dir);
    *fd = -1;
    *pid = 0;
    int f = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (f < 0)
        return -1;
    char buf[32] = "";
    ssize_t n = pread(f, buf, sizeof buf - 1, 0);
    uint64_t v;
    buf[strcspn(buf, "\n")] = '\0';
    if (n > 0 && tusk_parse_u64(buf, 1, LONG_MAX, &v) == 0)
        *pid = (long)v;
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        close(f);
        return 1;
    }
    *fd = f;
    return 0;
}

/* A run folder whose tusk-run died (kill -9, a crash): say so, and remove
 * what refers to the dead run (its sockets, its control endpoint, its
 * lock). The logs stay. Called with the folder's lock held (fd). */
static void clean_stale(ctrl_t *c, const char *dir, int fd, long pid)
{
    unsigned sockets = 0;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char path[PATH_MAX + 260];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && unlink(path) == 0)
                sockets++;
        }
        closedir(d);
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/control", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/keys", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/lock", dir);
    unlink(path);
    close(fd);
    say(c, "run folder %s belonged to a tusk-run (process %ld) that died without cleaning up: removed its %u "
        "socket%s and its control file; its logs are kept", dir, pid, sockets, sockets == 1 ? "" : "s");
}

/* Report and clean the run folders in our private folder (tusk-run.*)
 * whose tusk-run is dead. */
static void clean_stale_folders(ctrl_t *c, const char *tmpdir)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "tusk-run.", 9) != 0)
            continue;
        char dir[PATH_MAX];
        zu_format(dir, sizeof dir, "%s/%s", tmpdir, e->d_name);
        int fd;
        long pid;
        if (probe_lock(dir, &fd, &pid) == 0)
            clean_stale(c, dir, fd, pid);
    }
    closedir(d);
}

/* Take the run folder: a lock file, made under a name of our own, locked,
 * and then linked as `lock` (atomically: only one tusk-run gets it; and a
 * `lock` is locked from the moment it exists). A stale one is cleaned
 * first; a live one means the folder is in use. */
static int take_run_dir(ctrl_t *c, tusk_error_t *err)
{
    char mine[PATH_MAX + 32], lock[PATH_MAX + 16];
    snprintf(mine, sizeof mine, "%s/lock.%ld", c->run_dir, (long)getpid());
    snprintf(lock, sizeof lock, "%s/lock", c->run_dir);
    unlink(mine); /* one of a dead process that had our number */
    int fd = tusk_open_nofollow(mine, O_RDWR | O_CREAT | O_EXCL, 0600, err);
    if (fd < 0)
        return TUSK_EIO;
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || write(fd, pid, (size_t)n) != n) {
        int e = errno;
        close(fd);
        unlink(mine);
        return tusk_error_set(err, TUSK_EIO, "%s: cannot lock: %s", mine, strerror(e));
    }
    for (int tries = 0; link(mine, lock) != 0; tries++) {
        int e = errno, other = -1;
        long owner = 0;
        int held = e == EEXIST ? probe_lock(c->run_dir, &other, &owner) : -2;
        if (held == 0) {
            clean_stale(c, c->run_dir, other, owner);
        } else if (held != -1 || tries > 3) {
            close(fd);
            unlink(mine);
            if (held == 1)
                return tusk_error_set(err, TUSK_EINVAL,
                                      "run folder %s is in use by a running tusk-run (process %ld): give another "
                                      "--run-dir",
                                      c->run_dir, owner);
            return tusk_error_set(err, TUSK_EIO, "%s: cannot create: %s", lock, strerror(e));
        }
    }
    unlink(mine);
    c->lock_fd = fd;
    return TUSK_OK;
}

/* Our secrets: a key pair made for this run, or the configured
 * certificates (--certs), or none (--security none). */
static int make_secrets(ctrl_t *c, tusk_error_t *err)
{
    tusk_secrets_t *sx = &c->secrets;
    memset(sx, 0, sizeof *sx);
    if (c->opt.insecure) {
        if (c->opt.certs)
            return tusk_error_set(err, TUSK_EINVAL, "--certs with --security none: choose one");
        return TUSK_OK;
    }
    sx->curve = 1;
    if (c->opt.certs) {
        if (c->opt.certs[0] != '/')
            return tusk_error_set(err, TUSK_EINVAL, "--certs %s: give an absolute path (the instances read it on "
                                  "their hosts)", c->opt.certs);
        if ((size_t)snprintf(sx->certs, sizeof sx->certs, "%s", c->opt.certs) >= sizeof sx->certs)
            return tusk_error_set(err, TUSK_EINVAL, "--certs: too long");
        snprintf(sx->cert, sizeof sx->cert, "%s", c->opt.cert ? c->opt.cert : "controller");
        snprintf(sx->server_cert, sizeof sx->server_cert, "%s", sx->cert);
        return TUSK_OK;
    }
    int rc = tusk_keypair_new(sx->public_key, sx->secret_key, err);
    if (rc == TUSK_OK)
        memcpy(sx->server_key, sx->public_key, sizeof sx->server_key);
    return rc;
}

/* --narval-script (as tusk-emulate takes it; the instances get the
 * absolute paths) and --debug NAME[K]=TOOL (a local instance, checked
 * before anything starts). */
static int setup_narval_debug(ctrl_t *c, tusk_error_t *err)
{
    int rc = TUSK_OK;
    if (c->opt.n_narval_scripts && !(c->narval_paths = calloc(c->opt.n_narval_scripts, sizeof *c->narval_paths)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    for (unsigned i = 0; rc == TUSK_OK && i < c->opt.n_narval_scripts; i++) {
        const char *script = c->opt.narval_scripts[i];
        rc = tusk_topology_narval_script(c->topo, script, err);
        if (rc == TUSK_OK && !(c->narval_paths[i] = realpath(script, NULL)))
            rc = tusk_error_set(err, TUSK_EIO, "--narval-script %s: %s", script, strerror(errno));
    }
    c->debug_actor = -1;
    if (rc != TUSK_OK || !c->opt.debug)
        return rc;
    const char *how = c->opt.debug, *eq = strchr(how, '=');
    char name[256];
    unsigned k = 0;
    size_t len = eq ? (size_t)(eq - how) : 0;
    const char *br = eq ? memchr(how, '[', len) : NULL;
    if (!eq || len == 0 || len >= sizeof name)
        return tusk_error_set(err, TUSK_EINVAL, "--debug '%s': NAME[K]=gdbserver:PORT or NAME[K]=valgrind", how);
    memcpy(name, how, br ? (size_t)(br - how) : len);
    name[br ? (size_t)(br - how) : len] = '\0';
    if (br) {
        char digits[16];
        size_t nd = len - (size_t)(br - how) - 1;
        if (nd < 2 || nd >= sizeof digits || how[len - 1] != ']')
            return tusk_error_set(err, TUSK_EINVAL, "--debug '%s': the instance is written NAME[K]", how);
        memcpy(digits, br + 1, nd - 1);
        digits[nd - 1] = '\0';
        if (tusk_parse_unsigned(digits, 0, 0xFFFF, &k) != TUSK_OK)
            return tusk_error_set(err, TUSK_EINVAL, "--debug '%s': '%s' is no instance number", how, digits);
    }
    int a = tusk_topology_find(c->topo, name);
    if (a < 0)
        return tusk_error_set(err, TUSK_EINVAL, "--debug '%s': %s has no actor '%s'", how, c->opt.topology, name);
    const tusk_actor_spec_t *s = tusk_topology_actor(c->topo, (unsigned)a);
    if (k >= s->instances)
        return tusk_error_set(err, TUSK_EINVAL, "--debug '%s': %s has %u instance%s (0 to %u)", how, name,
                              s->instances, s->instances == 1 ? "" : "s", s->instances - 1);
    if (!layout_host_is_local(s->hostname))
        return tusk_error_set(err, TUSK_EINVAL, "--debug '%s': %s runs on %s: only an instance on this host can "
                              "be debugged", how, name, s->hostname);
    const char *tool = eq + 1;
    unsigned port = 0;
    if (strncmp(tool, "gdbserver:", 10) == 0 && tusk_parse_unsigned(tool + 10, 1, 65535, &port) == TUSK_OK) {
        c->debug_gdb = true;
        snprintf(c->debug_how, sizeof c->debug_how, "gdbserver:%u", port);
    } else if (strcmp(tool, "valgrind") != 0) {
        return tusk_error_set(err, TUSK_EINVAL, "--debug '%s': the tool is gdbserver:PORT (a port, 1 to 65535) or "
                              "valgrind", how);
    }
    c->debug_actor = a;
    c->debug_k = k;
    return TUSK_OK;
}

static int setup(ctrl_t *c, tusk_error_t *err)
{
    /* The size limit and messages of every other topology reader. */
    int rc = tusk_topology_read(c->opt.topology, &c->xml, &c->xml_size, err);
    if (rc == TUSK_OK)
        rc = tusk_topology_parse(&c->topo, c->xml, c->xml_size, c->opt.topology, err);
    if (rc == TUSK_OK)
        rc = setup_narval_debug(c, err);
    char placed[1024]; /* slurm: actors without a host onto the allocation's nodes (engine.h) */
    if (rc == TUSK_OK && (rc = tusk_engine_place(c->opt.engine, c->topo, placed, sizeof placed, err)) == TUSK_OK &&
        placed[0])
        say(c, "%s", placed);
    if (rc != TUSK_OK)
        return rc;
    c->layout.transport = c->opt.force_transport ? c->opt.transport : layout_default_transport(c->topo);
    bool all_local = layout_default_transport(c->topo) == TUSK_TRANSPORT_IPC;
    /* Find local libraries now, so a missing one is reported before any
     * process starts; remote instances look theirs up on their host. */
    if (all_local && (rc = tusk_topology_resolve(c->topo, c->opt.actor_path, err)) != TUSK_OK)
        return rc;
    /* Runtime files: in the user's private folder (security.h). */
    if ((rc = tusk_private_dir(c->private_dir, sizeof c->private_dir, err)) != TUSK_OK)
        return rc;
    /* Folders left by a tusk-run that died: said and cleaned, each once. */
    clean_stale_folders(c, c->private_dir);
    if (c->opt.run_dir) {
        /* Made private, or checked to be: ours, a folder, closed to others. */
        if ((size_t)snprintf(c->run_dir, sizeof c->run_dir, "%s", c->opt.run_dir) >= sizeof c->run_dir)
            return tusk_error_set(err, TUSK_EINVAL, "--run-dir: too long");
        if ((rc = tusk_private_folder(c->run_dir, true, err)) != TUSK_OK) {
            tusk_error_prefix(err, "--run-dir");
            return rc;
        }
    } else {
        if ((size_t)snprintf(c->run_dir, sizeof c->run_dir, "%.*s/tusk-run.XXXXXX", PATH_MAX - 32,
                             c->private_dir) >= sizeof c->run_dir || !mkdtemp(c->run_dir))
            return tusk_error_set(err, TUSK_EIO, "%s: cannot create the run folder: %s", c->run_dir, strerror(errno));
        c->temp_run_dir = true;
    }
    if ((rc = take_run_dir(c, err)) != TUSK_OK)
        return rc;
    c->layout.run_dir = c->run_dir;
    c->layout.base_port = c->opt.base_port; /* 0: the kernel picks free ports */
    if ((rc = layout_check(c->topo, &c->layout, err)) != TUSK_OK)
        return rc;
    if ((rc = tusk_engine_check(c->opt.engine, c->topo, err)) != TUSK_OK)
        return rc;
    char journal[1024]; /* systemd: where the instances' output goes as well (engine.h) */
    if ((rc = tusk_engine_journal(c->opt.engine, c->topo, c->opt.run, (long)getpid(), c->run_dir, journal,
                                  sizeof journal, err)) != TUSK_OK)
        return rc;
    if (journal[0])
        say(c, "%s", journal);
    find_actor_bin(c);

    const char *caddr = c->opt.control_address ? c->opt.control_address : "127.0.0.1";
    /* Instances connect to exactly this address: a wildcard reaches none. */
    if (strcmp(caddr, "*") == 0 || strcmp(caddr, "0.0.0.0") == 0 || strcmp(caddr, "::") == 0)
        return tusk_error_set(err, TUSK_EINVAL,
                              "--control-address %s: give an address of this host that every instance can reach",
                              caddr);
    if (!all_local && layout_host_is_local(caddr))
        return tusk_error_set(err, TUSK_EINVAL,
                              "actors run on other hosts: give --control-address as an address of this host they "
                              "can reach (not %s)",
                              caddr);
    if ((rc = make_secrets(c, err)) != TUSK_OK)
        return rc;
    c->zctx = zmq_ctx_new();
    if (!c->zctx)
        return tusk_error_set(err, TUSK_EIO, "no ZeroMQ context: %s", zmq_strerror(errno));
    if ((rc = tusk_sec_new(&c->sec, c->zctx, &c->secrets, "tusk-run", err)) != TUSK_OK)
        return rc;
    c->router = zmq_socket(c->zctx, ZMQ_ROUTER);
    char ep[256], port[16] = "*";
    if (c->opt.control_port)
        snprintf(port, sizeof port, "%u", c->opt.control_port);
    snprintf(ep, sizeof ep, "tcp://%s:%s", caddr, port);
    int linger = 0, mandatory = 0;
    if (!c->router || zmq_setsockopt(c->router, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(c->router, ZMQ_ROUTER_MANDATORY, &mandatory, sizeof mandatory) != 0)
        return tusk_error_set(err, TUSK_EIO, "cannot make the control socket: %s", zmq_strerror(errno));
    if ((rc = tusk_sec_bind(c->sec, c->router, ep, "control", c->endpoint, sizeof c->endpoint, err)) != TUSK_OK)
        return rc;
    if (!tusk_sec_curve(c->sec))
        say(c, "security none: the control socket (%s)%s lets in anyone who reaches it", c->endpoint,
            c->layout.transport == TUSK_TRANSPORT_TCP ? " and every tcp data link" : "");
    /* Where `tusk-run --status` finds us: the endpoint, and the keys to
     * talk there (ours only: 0600 in our private run folder). */
    char path[PATH_MAX + 16], line[PATH_MAX + 2];
    snprintf(path, sizeof path, "%s/control", c->run_dir);
    int w = snprintf(line, sizeof line, "%s\n", c->endpoint);
    unlink(path);
    if ((rc = tusk_write_new(path, line, (size_t)w, 0644, err)) != TUSK_OK)
        return rc;
    size_t len;
    snprintf(c->keys_path, sizeof c->keys_path, "%s/keys", c->run_dir);
    unlink(c->keys_path);
    char *keys = tusk_secrets_format(&c->secrets, &len);
    rc = keys ? tusk_write_new(c->keys_path, keys, len, 0600, err) : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (keys)
        memset(keys, 0, len);
    free(keys);
    if (rc != TUSK_OK) {
        c->keys_path[0] = '\0';
        return rc;
    }
    /* ... and where `tusk-run --stop` without a folder finds our run. */
    snprintf(c->registry, sizeof c->registry, "%s/run.%ld", c->private_dir, (long)getpid());
    unlink(c->registry);
    w = snprintf(line, sizeof line, "%s\n", c->run_dir);
    if (w < 0 || (size_t)w >= sizeof line)
        rc = tusk_error_set(err, TUSK_EINVAL, "run folder path too long");
    else
        rc = tusk_write_new(c->registry, line, (size_t)w, 0600, err);
    if (rc != TUSK_OK) {
        c->registry[0] = '\0';
        return rc;
    }

    unsigned n = tusk_topology_count(c->topo);
    c->first = calloc(n, sizeof *c->first);
    for (unsigned a = 0; a < n; a++)
        c->n_inst += tusk_topology_actor(c->topo, a)->instances;
    c->inst = calloc(c->n_inst, sizeof *c->inst);
    if (!c->first || !c->inst)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    unsigned i = 0;
    for (unsigned a = 0; a < n; a++) {
        c->first[a] = i;
        const tusk_actor_spec_t *spec = tusk_topology_actor(c->topo, a);
        for (unsigned k = 0; k < spec->instances; k++, i++) {
            c->inst[i].actor = a;
            c->inst[i].k = k;
            c->inst[i].bound = calloc(spec->n_sources ? spec->n_sources : 1, sizeof *c->inst[i].bound);
            if (!c->inst[i].bound)
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        }
    }
    return TUSK_OK;
}

/* RUN_FOLDER/endpoints: where every input listens, one line each
 * (`instance=NAME[K] input=J source=ACTOR endpoint=EP`): for firewalls,
 * and for tests that knock on every door. */
static void write_endpoints(ctrl_t *c)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/endpoints", c->run_dir);
    unlink(path);
    tusk_error_t err;
    int fd = tusk_open_nofollow(path, O_WRONLY | O_CREAT | O_EXCL, 0644, &err);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!fp) {
        if (fd >= 0)
            close(fd);
        say(c, "%s", fd >= 0 ? strerror(errno) : err.message);
        return;
    }
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        const tusk_actor_spec_t *s = spec_of(c, in);
        for (unsigned j = 0; j < s->n_sources; j++) {
            char ep[512];
            if (layout_connect_endpoint(c->topo, &c->layout, in->actor, in->bound[j], ep, sizeof ep) == TUSK_OK)
                fprintf(fp, "instance=%s[%u] input=%u source=%s endpoint=%s\n", s->name, in->k, j,
                        tusk_topology_actor(c->topo, s->sources[j])->name, ep);
        }
    }
    fclose(fp);
}

/* Report what went wrong during start-up, for every instance. */
static int setup_failure(ctrl_t *c, const char *what, tusk_error_t *err)
{
    char first[TUSK_ERROR_MESSAGE_MAX] = "";
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        const tusk_actor_spec_t *s = spec_of(c, in);
        const char *why = in->reason[0] ? in->reason : in->reply_message[0] ? in->reply_message : NULL;
        if (!why && in->waiting[0])
            why = "no reply";
        if (!why && in->st == I_STARTING)
            why = "never reported (is tusk-actor installed there?)";
        if (!why)
            continue;
        say(c, "%s[%u] on %s: %s", s->name, in->k, s->hostname, why);
        if (!in->reason[0])
            print_log_tail(in);
        if (!first[0])
            zu_format(first, sizeof first, "%s[%u] on %s: %s", s->name, in->k, s->hostname, why);
    }
    return tusk_error_set(err, TUSK_EACTOR, "%s failed: %s", what, first[0] ? first : "see above");
}

static bool everyone_in(const ctrl_t *c, ist_t st)
{
    for (unsigned i = 0; i < c->n_inst; i++)
        if (alive(&c->inst[i]) && c->inst[i].st != st)
            return false;
    return true;
}

static bool run_finished(const ctrl_t *c)
{
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        if (alive(in) && in->st != I_ENDED && in->st != I_STOPPED)
            return false;
    }
    return true;
}

/* ---- --debug, and what consumers said ------------------------------------------ */

/* --debug's instance's process is there (valgrind's leak check runs
 * after its EXIT reply). */
static bool debug_alive(const ctrl_t *c)
{
    return c->debug_actor >= 0 && c->inst[c->first[c->debug_actor] + c->debug_k].pid > 0;
}

/* Where the debugged instance's tool reports, and how to reach it. */
static void debug_announce(ctrl_t *c)
{
    if (c->debug_actor < 0)
        return;
    const char *name = tusk_topology_actor(c->topo, (unsigned)c->debug_actor)->name;
    if (c->debug_gdb) {
        say(c, "%s[%u] waits under gdbserver for gdb: gdb -ex 'target remote localhost:%s' (then 'continue'); "
            "no timeouts apply to it", name, c->debug_k, strchr(c->debug_how, ':') + 1);
        return;
    }
    zu_format(c->debug_log, sizeof c->debug_log, "%s/%s.%u.valgrind", c->run_dir, name, c->debug_k);
    unlink(c->debug_log);
    zu_format(c->debug_how, sizeof c->debug_how, "valgrind:%s", c->debug_log);
    say(c, "%s[%u] runs under valgrind's memcheck, its report in %s; no timeouts apply to it", name, c->debug_k,
        c->debug_log);
}

/* valgrind's report at the end: errors (anything in it: -q) are said and
 * make the run fail; none is said too. */
static void debug_verdict(ctrl_t *c)
{
    if (c->debug_actor < 0 || c->debug_gdb)
        return;
    const char *name = tusk_topology_actor(c->topo, (unsigned)c->debug_actor)->name;
    struct stat st;
    if (stat(c->debug_log, &st) != 0) {
        say(c, "valgrind wrote no report for %s[%u] (%s): did it run?", name, c->debug_k, c->debug_log);
        c->debug_errors = true;
        return;
    }
    if (st.st_size == 0) {
        say(c, "valgrind: no errors and no leaks in %s[%u]", name, c->debug_k);
        return;
    }
    c->debug_errors = true;
    say(c, "valgrind found errors in %s[%u] (%s):", name, c->debug_k, c->debug_log);
    FILE *fp = fopen(c->debug_log, "r");
    char line[1024];
    for (unsigned n = 0; fp && n < 200 && fgets(line, sizeof line, fp); n++)
        fputs(line, stderr);
    if (fp)
        fclose(fp);
}

/* What the consumers printed (their logs: spectra, peak tables, QA
 * summaries at process_stop), under the summary; the last 64 KiB of
 * each. */
static void print_reports(ctrl_t *c, FILE *out)
{
    enum { REPORT_MAX = 64 * 1024 };
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        const tusk_actor_spec_t *s = spec_of(c, in);
        struct stat st;
        if (s->actor_class != TUSK_CONSUMER || stat(in->log, &st) != 0 || st.st_size == 0)
            continue;
        FILE *fp = fopen(in->log, "r");
        if (!fp)
            continue;
        fprintf(out, "\n%s[%u] reports:\n", s->name, in->k);
        if (st.st_size > REPORT_MAX && fseek(fp, (long)(st.st_size - REPORT_MAX), SEEK_SET) == 0) {
            int ch;
            while ((ch = fgetc(fp)) != EOF && ch != '\n')
                ; /* from a whole line */
            fprintf(out, "(the last %d KiB: the whole report is its log, %s)\n", REPORT_MAX / 1024, in->log);
        }
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, fp)) > 0)
            fwrite(buf, 1, got, out);
        fclose(fp);
    }
}

/* The end of tusk-run, one-shot or served: the instances told to exit
 * after a usage failure, the run folder kept or removed (the retention
 * rule), everything freed, the signal handlers put back; status. */
/* The signal handlers tusk-run found, put back at its end. */
typedef struct saved_signals {
    struct sigaction int_, term, pipe;
} saved_signals_t;

static int finish(ctrl_t *c, int status, const saved_signals_t *old)
{
    if (status == TUSK_EXIT_USAGE && c->router) {
        c->running = false;
        exit_all(c);
    }
    const bool keep = run_folder_end(c, status);
    control_end(c);
    ctrl_free(c, keep);
    prune_run_folders(c);
    sigaction(SIGINT, &old->int_, NULL);
    sigaction(SIGTERM, &old->term, NULL);
    sigaction(SIGPIPE, &old->pipe, NULL);
    return status;
}

/* The start of tusk-run, one-shot or served: the signal handlers (the
 * old ones into old), the topology and layout, the observers, --debug
 * said, then every instance started, configured and initialised. */
static int begin(ctrl_t *c, saved_signals_t *old, tusk_error_t *err)
{
    stop_signals = 0;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, &old->int_);
    sigaction(SIGTERM, &sa, &old->term);
    /* Writing an instance's secrets to the pipe of one that died is an
     * error to see (EPIPE), not a signal to die of. */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGPIPE, &ign, &old->pipe);
    int rc = setup(c, err);
    if (rc == TUSK_OK)
        rc = observe_start(c, err);
    if (rc != TUSK_OK)
        return rc;
    /* --debug: served, the instance stays under its tool across the runs
     * (and a respawn of it too); valgrind's verdict comes after the quit. */
    debug_announce(c);
    return bring_up(c, err);
}

/* Every instance told to exit; their ends awaited (EXIT_TIMEOUT_MS, no
 * limit for one under a debugger until a second signal). */
static void exit_and_wait(ctrl_t *c)
{
    exit_all(c);
    uint64_t end = tusk_clock_ms() + EXIT_TIMEOUT_MS;
    bool children = true;
    while (children && (tusk_clock_ms() < end || (debug_alive(c) && stop_signals < 2))) {
        pump(c, 50);
        children = false;
        for (unsigned i = 0; i < c->n_inst; i++)
            children |= c->inst[i].pid > 0;
    }
}

int tusk_run_topology(const tusk_run_options_t *opt, tusk_error_t *err)
{
    ctrl_t cs = {0}, *c = &cs;
    ctrl_init(c, opt);
    saved_signals_t old;
    int status = TUSK_EXIT_USAGE;
    if (begin(c, &old, err) != TUSK_OK)
        goto done;
    /* Consumers first: nothing is produced before it can be taken. */
    c->running = true;
    if (!step_all(c, "START", true, c->opt.start_timeout_ms, I_READY) && !c->fatal) {
        setup_failure(c, "start", err);
        c->running = false;
        goto done;
    }
    /* Data moves until every instance ended, or a stop drained; then
     * stop in dependency order, producers first (not after an abort), and
     * tell every instance at once to exit. */
    drive_run(c);
    exit_and_wait(c);

    bool failures = false;
    for (unsigned i = 0; i < c->n_inst; i++)
        failures |= c->inst[i].failed_once;
    if (!opt->quiet) {
        fprintf(c->out, "\n");
        status_table(c, c->out, true);
    }
    totals_t totals = reconcile(c, opt->quiet ? stderr : c->out);
    uint64_t produced = 0;
    for (unsigned i = 0; i < c->n_inst; i++)
        if (spec_of(c, &c->inst[i])->actor_class == TUSK_PRODUCER)
            produced += slot_stat(&c->inst[i], "out_bytes");
    double seconds = (double)(c->ended_ms - c->started_ms) / 1000.0;
    if (!opt->quiet)
        fprintf(c->out, "run time %.2f s, produced %.1f MB (%.1f MB/s)\n", seconds, (double)produced / 1e6,
                seconds > 0 ? (double)produced / 1e6 / seconds : 0.0);
    if (!opt->quiet)
        print_reports(c, c->out);
    debug_verdict(c);
    if (opt->report)
        write_report(c, opt->report, &totals, seconds);
    uint64_t extra = totals.extra > totals.duplicates ? totals.extra : totals.duplicates;
    if (c->fatal) {
        status = TUSK_EXIT_FAIL;
        tusk_error_set(err, TUSK_EACTOR, "run %u stopped: %s", c->opt.run, c->fatal_reason);
    } else if (stop_signals > 1) {
        status = TUSK_EXIT_FAIL;
        tusk_error_set(err, TUSK_EACTOR, "run %u aborted", c->opt.run);
    } else if (c->debug_errors) {
        status = TUSK_EXIT_LOSS;
        tusk_error_set(err, TUSK_EACTOR, "run %u ended, but valgrind found errors in %s[%u]: %s", c->opt.run,
                       tusk_topology_actor(c->topo, (unsigned)c->debug_actor)->name, c->debug_k, c->debug_log);
    } else if (failures || totals.lost || extra || totals.malformed || totals.gaps || totals.dropped) {
        status = TUSK_EXIT_LOSS;
        char more[200] = "";
        if (extra)
            zu_format(more + strlen(more), sizeof more - strlen(more), ", %llu extra", (unsigned long long)extra);
        if (totals.malformed)
            zu_format(more + strlen(more), sizeof more - strlen(more), ", %llu malformed",
                      (unsigned long long)totals.malformed);
        if (totals.dropped)
            zu_format(more + strlen(more), sizeof more - strlen(more), ", %llu messages dropped",
                      (unsigned long long)totals.dropped);
        tusk_error_set(err, TUSK_EACTOR, "run %u ended with failures: %llu buffers lost%s", c->opt.run,
                       (unsigned long long)totals.lost, more);
    } else {
        status = TUSK_EXIT_OK;
        tusk_error_clear(err);
    }
done:
    return finish(c, status, &old);
}

/* ---- talking to a running controller ---------------------------------------------- */

/* The run folder of the user's only run going on (--stop etc. without a
 * folder): the entries run.PID of the private folder whose tusk-run holds
 * its folder's lock. Entries of dead runs are removed. */
static int find_my_run(char *dir, size_t size, tusk_error_t *err)
{
    char priv[PATH_MAX];
    int rc = tusk_private_dir(priv, sizeof priv, err);
    if (rc != TUSK_OK)
        return rc;
    DIR *d = opendir(priv);
    if (!d)
        return tusk_error_set(err, TUSK_EIO, "%s: %s", priv, strerror(errno));
    unsigned found = 0;
    char list[1024] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t pid;
        if (strncmp(e->d_name, "run.", 4) != 0 || tusk_parse_u64(e->d_name + 4, 1, LONG_MAX, &pid) != 0)
            continue;
        char entry[PATH_MAX + 300], *text = NULL, run[PATH_MAX];
        size_t n = 0;
        zu_format(entry, sizeof entry, "%s/%s", priv, e->d_name);
        tusk_error_t ignored;
        if (tusk_read_private(entry, PATH_MAX, &text, &n, &ignored) != TUSK_OK)
            continue;
        zu_format(run, sizeof run, "%.*s", (int)strcspn(text, "\n"), text);
        free(text);
        int fd;
        long owner;
        int held = probe_lock(run, &fd, &owner);
        if (fd >= 0)
            close(fd);
        if (held != 1 || owner != (long)pid) {
            unlink(entry); /* its run is over */
            continue;
        }
        if (found++ == 0)
            zu_format(dir, size, "%s", run);
        size_t used = strlen(list);
        zu_format(list + used, sizeof list - used, "%s%s (process %ld)", used ? ", " : "", run, owner);
    }
    closedir(d);
    if (found == 0)
        return tusk_error_set(err, TUSK_EIO, "no run of yours is going on (none listed in %s): give the run folder",
                              priv);
    if (found > 1)
        return tusk_error_set(err, TUSK_EINVAL, "%u runs of yours are going on: give the run folder of one: %s",
                              found, list);
    return TUSK_OK;
}

int tusk_run_command(const char *run_dir, const char *command_name, FILE *out, tusk_error_t *err)
{
    return tusk_run_command_args(run_dir, command_name, NULL, out, err);
}

int tusk_run_command_args(const char *run_dir, const char *command_name, const char *args, FILE *out,
                          tusk_error_t *err)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], endpoint[256];
    if (run_dir) {
        snprintf(dir, sizeof dir, "%s", run_dir);
    } else {
        int rc = find_my_run(dir, sizeof dir, err);
        if (rc != TUSK_OK)
            return rc;
    }
    /* Only a run folder of ours: a private folder. */
    int rc = tusk_private_folder(dir, false, err);
    if (rc != TUSK_OK)
        return rc;
    /* Is its tusk-run there at all? */
    int lock_fd;
    long owner;
    int held = probe_lock(dir, &lock_fd, &owner);
    if (held == 0) {
        close(lock_fd);
        return tusk_error_set(err, TUSK_EIO, "%s: its tusk-run (process %ld) is gone: it died without cleaning up "
                              "(the next tusk-run cleans the folder)", dir, owner);
    }
    if (held < 0)
        return tusk_error_set(err, TUSK_EIO, "%s: no run is going on there (it ended)", dir);
    snprintf(path, sizeof path, "%s/control", dir);
    int fd = tusk_open_nofollow(path, O_RDONLY, 0, err);
    FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!fp || !fgets(endpoint, sizeof endpoint, fp)) {
        if (fp)
            fclose(fp);
        else if (fd >= 0)
            close(fd);
        return tusk_error_set(err, TUSK_EIO, "%s: no controller endpoint (is the run still going?)", path);
    }
    fclose(fp);
    endpoint[strcspn(endpoint, "\n")] = '\0';
    /* The keys to talk there: readable by the run's owner only. */
    snprintf(path, sizeof path, "%s/keys", dir);
    char *text = NULL;
    size_t size = 0;
    tusk_secrets_t secrets;
    rc = tusk_read_private(path, TUSK_SECRETS_MAX, &text, &size, err);
    if (rc == TUSK_OK)
        rc = tusk_secrets_parse(text, size, &secrets, err);
    if (text) {
        memset(text, 0, size);
        free(text);
    }
    if (rc != TUSK_OK)
        return rc;
    void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
    tusk_sec_t *sec = NULL;
    char id[64];
    snprintf(id, sizeof id, "cli.%d", (int)getpid());
    int linger = 0;
    zmq_setsockopt(s, ZMQ_ROUTING_ID, id, strlen(id));
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    rc = tusk_sec_new(&sec, ctx, &secrets, "tusk-run", err);
    memset(&secrets, 0, sizeof secrets);
    if (rc == TUSK_OK)
        rc = tusk_sec_connect(sec, s, endpoint, NULL, err);
    if (rc == TUSK_OK) {
        /* Who asks (the controller says it in its log; the key is what it trusts). */
        tusk_ctl_t *m = tusk_ctl_new("CLI");
        tusk_ctl_set(m, "cmd", command_name);
        if (args && *args)
            tusk_ctl_set(m, "args", args);
        const char *user = getenv("USER");
        char host[256] = "?";
        gethostname(host, sizeof host);
        host[sizeof host - 1] = '\0';
        tusk_ctl_set(m, "user", user && *user ? user : "?");
        tusk_ctl_set_u64(m, "uid", (uint64_t)getuid());
        tusk_ctl_set_u64(m, "pid", (uint64_t)getpid());
        tusk_ctl_set(m, "host", host);
        rc = zu_send_ctl(s, NULL, m, NULL, 0, err);
        tusk_ctl_destroy(&m);
        zmq_pollitem_t item = {.socket = s, .events = ZMQ_POLLIN};
        /* A quick answer, but for a command that waits for the instances
         * (set, reset: up to their hooks' time), and for wait (until the
         * run ends): those as long as the controller lives. */
        bool quick = strcmp(command_name, "wait") != 0 && strcmp(command_name, "set") != 0 &&
                     strcmp(command_name, "reset") != 0;
        int polled = 0;
        while (rc == TUSK_OK && (polled = zmq_poll(&item, 1, quick ? 5000 : 1000)) == 0 && !quick) {
            int probe_fd;
            long probe_owner;
            int live = probe_lock(dir, &probe_fd, &probe_owner);
            if (probe_fd >= 0)
                close(probe_fd);
            if (live != 1)
                break; /* its tusk-run is gone */
        }
        if (rc == TUSK_OK && polled <= 0)
            rc = tusk_error_set(err, TUSK_EIO, "the controller at %s did not answer (is the run still going?)",
                                endpoint);
        if (rc == TUSK_OK) {
            tusk_ctl_t *r = NULL;
            char *payload = NULL;
            size = 0;
            rc = zu_recv_ctl(s, false, NULL, 0, NULL, 0, &r, &payload, &size, err);
            if (rc == TUSK_OK) {
                const char *st = tusk_ctl_get(r, "status");
                if (!st || strcmp(st, "ok") != 0)
                    rc = tusk_error_set(err, TUSK_EINVAL, "the controller refused '%s': %s", command_name,
                                        tusk_ctl_get(r, "message") ? tusk_ctl_get(r, "message") : "?");
                else if (payload && size)
                    fwrite(payload, 1, size, out);
                else
                    fprintf(out, "tusk-run: %s: done\n", command_name);
            }
            tusk_ctl_destroy(&r);
            free(payload);
        }
    }
    zmq_close(s);
    tusk_sec_destroy(&sec);
    zmq_ctx_term(ctx);
    return rc;
}

/* ---- run control: a controller that stays up (ctlstate.h) ------------------------- */

struct mail { /* a command from another thread (tusk_controller_post) */
    const char *verb, *args, *who;
    char *reply;
    int rc;
    tusk_error_t err;
    bool done;
    struct mail *next;
};

/* A reply's text (malloc'd; NULL when out of memory). */
static char *reply_text(const char *fmt, ...) TUSK_PRINTF(1, 2);
static char *reply_text(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return text;
}

static const char *phase_of(const ctrl_t *c)
{
    if (c->ended)
        return "ended";
    if (c->running || c->in_run) {
        if (c->stop_requested || !c->running)
            return "stopping";
        /* Paused: none moves data any more (those that ended stay so). */
        bool paused = false, moving = false;
        for (unsigned i = 0; i < c->n_inst; i++)
            if (alive(&c->inst[i])) {
                paused |= c->inst[i].st == I_PAUSED;
                moving |= c->inst[i].st == I_RUNNING;
            }
        return paused && !moving ? "paused" : "running";
    }
    if (!c->serving && c->ended_ms)
        return "ended";
    return c->configured ? "ready" : "setup";
}

const char *tusk_controller_phase(const tusk_controller_t *c)
{
    return phase_of(c);
}

uint32_t tusk_controller_run(const tusk_controller_t *c)
{
    return c->opt.run;
}

double tusk_controller_elapsed(const tusk_controller_t *c)
{
    if (!c->started_ms)
        return 0;
    uint64_t end = c->running ? tusk_clock_ms() : c->ended_ms;
    return end > c->started_ms ? (double)(end - c->started_ms) / 1000.0 : 0;
}

/* The observer (ctlstate.h) starts once the control socket is up; the
 * mailbox for tusk_controller_post is made before any thread of it can
 * post. */
static int observe_start(ctrl_t *c, tusk_error_t *err)
{
    const tusk_ctl_observer_t *o = c->opt.observer;
    if (!o)
        return TUSK_OK;
    if (pthread_mutex_init(&c->mail_lock, NULL) != 0 || pthread_cond_init(&c->mail_cond, NULL) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "cannot make the command mailbox");
    c->mail_ready = true;
    if (o->start) {
        int rc = o->start(o->ctx, c, err);
        if (rc != TUSK_OK)
            return rc;
    }
    c->observing = true;
    return TUSK_OK;
}

/* Answer the --wait clients: the run ended, with `text`. */
static void answer_waiters(ctrl_t *c, const char *text)
{
    for (unsigned i = 0; i < c->n_waiters; i++) {
        tusk_ctl_t *r = tusk_ctl_new("CLI_REPLY");
        tusk_ctl_set(r, "status", "ok");
        tusk_error_t err;
        zu_send_ctl(c->router, c->waiters[i], r, text, strlen(text), &err);
        tusk_ctl_destroy(&r);
    }
    c->n_waiters = 0;
}

/* Every turn of the loop: the commands other threads posted (not inside
 * another command: they wait for its end), then the observer's tick. */
static void observe_tick(ctrl_t *c)
{
    if (c->mail_ready && !c->in_command) {
        pthread_mutex_lock(&c->mail_lock);
        struct mail *list = c->mail;
        c->mail = NULL;
        pthread_mutex_unlock(&c->mail_lock);
        for (struct mail *m = list, *next; m; m = next) {
            /* m lives on its poster's stack: once done, it may be gone. */
            next = m->next;
            char *reply = NULL;
            int rc = controller_command(c, m->verb, m->args, NULL, m->who, &reply, &m->err);
            pthread_mutex_lock(&c->mail_lock);
            m->reply = reply;
            m->rc = rc;
            m->done = true;
            pthread_cond_broadcast(&c->mail_cond);
            pthread_mutex_unlock(&c->mail_lock);
        }
    }
    if (c->observing && c->opt.observer->tick)
        c->opt.observer->tick(c->opt.observer->ctx, c);
}

/* The controller ends: the --wait clients are told, posts still waiting
 * are refused, the observer stops. */
static void control_end(ctrl_t *c)
{
    c->ended = true;
    if (c->router)
        answer_waiters(c, "tusk-run: the controller ended\n");
    if (c->mail_ready) {
        pthread_mutex_lock(&c->mail_lock);
        c->mail_closed = true;
        for (struct mail *m = c->mail; m; m = m->next) {
            m->rc = tusk_error_set(&m->err, TUSK_EIO, "%s: the controller ended", m->verb);
            m->done = true;
        }
        c->mail = NULL;
        pthread_cond_broadcast(&c->mail_cond);
        pthread_mutex_unlock(&c->mail_lock);
    }
    if (c->observing && c->opt.observer->stop)
        c->opt.observer->stop(c->opt.observer->ctx, c);
    c->observing = false;
    if (c->mail_ready) {
        pthread_cond_destroy(&c->mail_cond);
        pthread_mutex_destroy(&c->mail_lock);
        c->mail_ready = false;
    }
}

int tusk_controller_post(tusk_controller_t *c, const char *verb, const char *args, const char *who, char **reply,
                         tusk_error_t *err)
{
    *reply = NULL;
    if (!c->mail_ready)
        return tusk_error_set(err, TUSK_EINVAL, "%s: no observer, so no mailbox: call tusk_controller_command on "
                              "the controller's thread", verb);
    struct mail m = {.verb = verb, .args = args, .who = who ? who : "?"};
    pthread_mutex_lock(&c->mail_lock);
    if (c->mail_closed) {
        pthread_mutex_unlock(&c->mail_lock);
        return tusk_error_set(err, TUSK_EIO, "%s: the controller ended", verb);
    }
    struct mail **tail = &c->mail;
    while (*tail)
        tail = &(*tail)->next;
    *tail = &m;
    while (!m.done)
        pthread_cond_wait(&c->mail_cond, &c->mail_lock);
    pthread_mutex_unlock(&c->mail_lock);
    *reply = m.reply;
    if (m.rc != TUSK_OK)
        *err = m.err;
    return m.rc;
}

int tusk_controller_command(tusk_controller_t *c, const char *verb, const char *args, const char *who, char **reply,
                            tusk_error_t *err)
{
    return controller_command(c, verb, args, NULL, who ? who : "?", reply, err);
}

/* The live table (--live): on a terminal redrawn in place (the cursor
 * back up over the last one, each line cleared); otherwise plain lines,
 * each table under a line with the run's time. */
static void live_table(ctrl_t *c)
{
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    if (!mem)
        return;
    status_table(c, mem, false);
    fclose(mem);
    if (isatty(fileno(c->out))) {
        if (c->live_lines)
            fprintf(c->out, "\033[%uA", c->live_lines);
        unsigned lines = 0;
        for (const char *p = text; *p;) {
            size_t len = strcspn(p, "\n");
            fprintf(c->out, "\r%.*s\033[K\n", (int)len, p);
            lines++;
            p += len + (p[len] == '\n');
        }
        fputs("\033[J", c->out); /* what a longer table left below */
        c->live_lines = lines;
    } else {
        fprintf(c->out, "-- run %u, %.1f s\n%s", c->opt.run, tusk_controller_elapsed(c), text);
    }
    fflush(c->out);
    free(text);
}

/* The alive instances of every actor not ready for a run (the first, for
 * a message), or NULL. */
static const inst_t *not_ready(const ctrl_t *c)
{
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        if (!alive(in) || (in->st != I_READY && in->st != I_STOPPED))
            return in;
    }
    return NULL;
}

/* Clear the instances' reply errors before a command to them all. */
static void clear_replies(ctrl_t *c)
{
    for (unsigned i = 0; i < c->n_inst; i++) {
        c->inst[i].reply_error = false;
        c->inst[i].reply_message[0] = '\0';
    }
}

/* The first instance whose reply was an error, said into err. */
static int reply_failure(ctrl_t *c, const char *what, tusk_error_t *err)
{
    for (unsigned i = 0; i < c->n_inst; i++) {
        const inst_t *in = &c->inst[i];
        if (in->reply_error || (alive(in) && in->waiting[0]))
            return tusk_error_set(err, TUSK_EACTOR, "%s: %s[%u]: %s", what, spec_of(c, in)->name, in->k,
                                  in->reply_error ? in->reply_message : "no reply");
        if (!alive(in))
            return tusk_error_set(err, TUSK_EACTOR, "%s: %s[%u] is %s", what, spec_of(c, in)->name, in->k,
                                  state_word(in));
    }
    return TUSK_OK;
}

/* Between runs (start, reset): every instance lost (killed, crashed,
 * failed, during the last run or since) is started again and brought to
 * ready as at the set-up (hello, configure where its predecessor bound,
 * initialise), counted as a restart of the next run; the instances
 * around one its failure was told to hear it is back (PEER_BACK). What
 * cannot be respawned is refused, naming the instance, and stays lost. */
static int respawn_lost(ctrl_t *c, const char *what, tusk_error_t *err)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (alive(in))
            continue;
        const tusk_actor_spec_t *s = spec_of(c, in);
        if (in->pid > 0)
            kill(in->pid, SIGKILL); /* its endpoints are for its successor */
        in->kill_at = 0;
        in->draining = false;
        retire_stats(in);
        in->incarnation++;
        in->respawned++;
        say(c, "%s: respawning %s[%u] on %s (it was %s%s%s)", what, s->name, in->k, s->hostname, state_word(in),
            in->reason[0] ? ": " : "", in->reason);
        in->reason[0] = '\0';
        if (spawn(c, in, err) != TUSK_OK) {
            in->st = I_GONE;
            tusk_error_prefix(err, "%s: %s[%u] is lost and cannot be respawned", what, s->name, in->k);
            return TUSK_EACTOR;
        }
        n++;
    }
    if (!n)
        return TUSK_OK;
    clear_replies(c);
    uint64_t deadline = tusk_clock_ms() + c->opt.start_timeout_ms;
    /* One under gdbserver waits for gdb before it says hello: no time limit. */
    for (bool starting = true; starting && (tusk_clock_ms() < deadline || debug_alive(c)) && stop_signals < 2;) {
        starting = false;
        for (unsigned i = 0; i < c->n_inst; i++)
            starting |= c->inst[i].st == I_STARTING;
        if (starting)
            pump(c, 50);
    }
    step_all(c, "CONFIGURE", true, c->opt.start_timeout_ms, I_HELLO);
    step_all(c, "INITIALISE", false, c->opt.start_timeout_ms, I_CONFIGURED);
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (!in->respawned || (alive(in) && (in->st == I_READY || in->st == I_STOPPED)))
            continue;
        const tusk_actor_spec_t *s = spec_of(c, in);
        const char *why = in->reason[0] ? in->reason : in->reply_message[0] ? in->reply_message
                        : in->st == I_STARTING ? "it never said hello" : in->waiting[0] ? "no reply" : state_word(in);
        tusk_error_set(err, TUSK_EACTOR, "%s: %s[%u] on %s was lost and its respawn failed: %s (log: %s)", what,
                       s->name, in->k, s->hostname, why, in->log);
        if (alive(in))
            on_failure(c, in, "respawn: %s", why);
        return TUSK_EACTOR;
    }
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (in->respawned && in->lost) {
            tell_neighbours(c, in, "PEER_BACK", true, true);
            in->lost = false;
        }
    }
    say(c, "%s: %u lost instance%s respawned and ready", what, n, n == 1 ? "" : "s");
    return TUSK_OK;
}

/* reset: process_reset, then process_initialise, on every instance
 * (producers first), their processes and libraries kept. */
static int reset_all(ctrl_t *c, tusk_error_t *err)
{
    clear_replies(c);
    for (unsigned i = 0; i < c->n_inst; i++)
        if (c->inst[i].st == I_STOPPED)
            c->inst[i].st = I_READY;
    bool ok = step_all(c, "RESET", false, c->opt.start_timeout_ms, I_READY);
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        if (alive(in) && in->st == I_READY && !in->reply_error && !in->waiting[0])
            in->st = I_CONFIGURED; /* what process_reset leaves */
    }
    if (!ok || reply_failure(c, "reset", err) != TUSK_OK)
        return reply_failure(c, "reset", err) != TUSK_OK ? TUSK_EACTOR
                                                          : tusk_error_set(err, TUSK_EACTOR, "reset: no reply");
    ok = step_all(c, "INITIALISE", false, c->opt.start_timeout_ms, I_CONFIGURED);
    if (!ok || !everyone_in(c, I_READY) || reply_failure(c, "reset: initialise", err) != TUSK_OK)
        return reply_failure(c, "reset: initialise", err) != TUSK_OK
                   ? TUSK_EACTOR
                   : tusk_error_set(err, TUSK_EACTOR, "reset: initialise: not every instance is ready");
    return TUSK_OK;
}

/* set A.P=V / A[K].P=V: UPDATE to the instances (actor.h, process_update);
 * what they took is kept for their restarts (inst->sets). */
static int set_param(ctrl_t *c, const char *args, char **reply, tusk_error_t *err)
{
    tusk_set_arg_t a;
    int rc = tusk_set_arg_parse(args, &a, err);
    if (rc != TUSK_OK)
        return rc;
    int actor = tusk_topology_find(c->topo, a.actor);
    if (actor < 0)
        return tusk_error_set(err, TUSK_EINVAL, "set: the topology has no actor '%s'", a.actor);
    const tusk_actor_spec_t *s = tusk_topology_actor(c->topo, (unsigned)actor);
    if (a.instance >= 0 && (unsigned)a.instance >= s->instances)
        return tusk_error_set(err, TUSK_EINVAL, "set: actor %s has %u instance%s, not %d", s->name, s->instances,
                              s->instances == 1 ? "" : "s", a.instance + 1);
    tusk_ctl_t *m = tusk_ctl_new("UPDATE");
    char key[160];
    zu_format(key, sizeof key, "set:%s", a.key);
    if (!m || tusk_ctl_set(m, key, a.value) != TUSK_OK) {
        tusk_ctl_destroy(&m);
        return tusk_error_set(err, TUSK_EINVAL, "set: '%s' is no parameter name (letters, digits, _ . -)", a.key);
    }
    unsigned first = a.instance >= 0 ? (unsigned)a.instance : 0, last = a.instance >= 0 ? first + 1 : s->instances;
    for (unsigned k = first; k < last; k++) {
        inst_t *in = &c->inst[c->first[actor] + k];
        if (!alive(in) || (in->st != I_READY && in->st != I_STOPPED && in->st != I_CONFIGURED)) {
            tusk_ctl_destroy(&m);
            return tusk_error_set(err, TUSK_EINVAL, "set: %s[%u] is %s, not ready", s->name, k, state_word(in));
        }
    }
    clear_replies(c);
    for (unsigned k = first; k < last; k++)
        command(c, &c->inst[c->first[actor] + k], "UPDATE", m, NULL, 0);
    tusk_ctl_destroy(&m);
    wait_for(c, "UPDATE", c->opt.start_timeout_ms);
    unsigned took = 0;
    const inst_t *bad = NULL;
    for (unsigned k = first; k < last; k++) {
        inst_t *in = &c->inst[c->first[actor] + k];
        if (in->reply_error || in->waiting[0] || !alive(in)) {
            if (!bad)
                bad = in;
            continue;
        }
        took++;
        tusk_error_t ignored;
        if (!in->sets)
            in->sets = tusk_params_new();
        if (in->sets)
            tusk_params_set(in->sets, a.key, a.value, &ignored);
    }
    if (bad)
        return tusk_error_set(err, TUSK_EACTOR, "set %s.%s: %s[%u]: %s (%u of %u instances took the value)", s->name,
                              a.key, s->name, bad->k,
                              bad->reply_error ? bad->reply_message : alive(bad) ? "no reply" : state_word(bad), took,
                              last - first);
    *reply = reply_text("%s.%s = %s (%u instance%s)\n", s->name, a.key, a.value, took, took == 1 ? "" : "s");
    return TUSK_OK;
}

/* The one command path (ctlstate.h): the control socket's clients
 * (handle_cli, `via` "tusk-run --VERB") and the observer's threads. */
static int controller_command(ctrl_t *c, const char *verb, const char *args, const char *via, const char *who,
                              char **reply, tusk_error_t *err)
{
    *reply = NULL;
    const char *phase = phase_of(c);
    char by[700];
    zu_format(by, sizeof by, "%s%s%sby %s", via ? "(" : "", via ? via : "", via ? ") " : "", who);
    if (strcmp(verb, "status") == 0) {
        size_t size = 0;
        FILE *mem = open_memstream(reply, &size);
        if (!mem)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        if (c->serving)
            fprintf(mem, "run %u: %s, %.1f s; %u run%s done\n", c->opt.run, phase, tusk_controller_elapsed(c),
                    c->runs, c->runs == 1 ? "" : "s");
        status_table(c, mem, false);
        fclose(mem);
        return TUSK_OK;
    }
    if (c->in_command)
        return tusk_error_set(err, TUSK_EINVAL, "%s: another command is being carried out; try again", verb);
    bool between = c->serving && strcmp(phase, "ready") == 0;
    if (strcmp(verb, "stop") == 0) {
        if (c->serving && !c->running)
            return tusk_error_set(err, TUSK_EINVAL, "stop: no run is going on (%s)", phase);
        c->stop_requested = true;
        say(c, "stop requested %s", by);
        return TUSK_OK;
    }
    if (strcmp(verb, "pause") == 0 || strcmp(verb, "resume") == 0) {
        bool pause = verb[0] == 'p';
        if (c->serving && !c->running)
            return tusk_error_set(err, TUSK_EINVAL, "%s: no run is going on (%s)", verb, phase);
        /* Producers first when pausing, consumers first when resuming. */
        for (unsigned j = 0; j < c->n_inst; j++) {
            inst_t *in = &c->inst[pause ? j : c->n_inst - 1 - j];
            if (in->st == (pause ? I_RUNNING : I_PAUSED))
                command(c, in, pause ? "PAUSE" : "RESUME", NULL, NULL, 0);
        }
        say(c, "%s requested %s", verb, by);
        return TUSK_OK;
    }
    if (strcmp(verb, "tap") == 0 || strcmp(verb, "untap") == 0)
        return tap_link(c, args, verb[0] == 't', by, reply, err);
    if (strcmp(verb, "wait") == 0) {
        /* Not during a run (handle_cli waits for its end): the last summary. */
        *reply = strdup(c->summary ? c->summary : "tusk-run: no run is going on, none ended yet\n");
        return *reply ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    bool known = strcmp(verb, "start") == 0 || strcmp(verb, "reset") == 0 || strcmp(verb, "set") == 0 ||
                 strcmp(verb, "quit") == 0;
    if (!known)
        return tusk_error_set(err, TUSK_EINVAL, "unknown command '%s' (start, stop, pause, resume, reset, set, "
                              "status, wait, quit)", verb);
    if (!c->serving)
        return tusk_error_set(err, TUSK_EINVAL, "%s: this tusk-run makes one run only (a controller that stays up "
                              "is tusk-run --serve)", verb);
    if (strcmp(verb, "quit") == 0) {
        if (c->running)
            c->stop_requested = true;
        c->quit_requested = true;
        say(c, "quit requested %s", by);
        *reply = strdup(c->running ? "tusk-run: stopping the run, then quitting\n" : "tusk-run: quitting\n");
        return TUSK_OK;
    }
    if (!between || c->start_requested)
        return tusk_error_set(err, TUSK_EINVAL, "%s: only between runs (now: %s%s)", verb, phase,
                              c->start_requested ? ", a run is starting" : "");
    if (strcmp(verb, "start") == 0) {
        uint32_t run = c->next_run;
        if (args && *args) {
            unsigned v;
            if (tusk_parse_unsigned(args, 1, UINT32_MAX, &v) != TUSK_OK)
                return tusk_error_set(err, TUSK_EINVAL, "start: '%s' is no run number (1 or more)", args);
            run = v;
        }
        c->in_command++;
        int rc = respawn_lost(c, "start", err);
        c->in_command--;
        if (rc != TUSK_OK) {
            say(c, "%s", err->message);
            return rc;
        }
        const inst_t *in = not_ready(c);
        if (in)
            return tusk_error_set(err, TUSK_EINVAL, "start: %s[%u] is %s, not ready%s", spec_of(c, in)->name, in->k,
                                  state_word(in), alive(in) ? " (reset?)" : " (quit, and serve again)");
        c->next_run = run;
        c->start_requested = true;
        say(c, "start of run %u requested %s", run, by);
        *reply = reply_text("tusk-run: run %u starting\n", run);
        return TUSK_OK;
    }
    int rc;
    c->in_command++;
    if (strcmp(verb, "reset") == 0) {
        say(c, "reset requested %s", by);
        rc = respawn_lost(c, "reset", err);
        if (rc == TUSK_OK)
            rc = reset_all(c, err);
        if (rc == TUSK_OK)
            *reply = reply_text("tusk-run: reset: %u instances reset and initialised\n", c->n_inst);
    } else {
        say(c, "set %s requested %s", args ? args : "", by);
        rc = set_param(c, args, reply, err);
    }
    c->in_command--;
    if (rc != TUSK_OK)
        say(c, "%s", err->message);
    return rc;
}

/* Spawn every instance, and bring them to ready: hello, configure
 * (consumers first), initialise. */
static int bring_up(ctrl_t *c, tusk_error_t *err)
{
    int rc = TUSK_OK;
    for (unsigned i = 0; i < c->n_inst && rc == TUSK_OK; i++)
        rc = spawn(c, &c->inst[i], err);
    if (rc != TUSK_OK)
        return rc;
    uint64_t deadline = tusk_clock_ms() + c->opt.start_timeout_ms;
    while (!everyone_in(c, I_HELLO) && (tusk_clock_ms() < deadline || debug_alive(c)) && !c->fatal &&
           stop_signals < 2)
        pump(c, 50);
    if (c->fatal || !everyone_in(c, I_HELLO))
        return setup_failure(c, "start-up", err);
    /* Consumers first: each input is bound before anyone connects to it. */
    if (!step_all(c, "CONFIGURE", true, c->opt.start_timeout_ms, I_HELLO) || c->fatal ||
        !everyone_in(c, I_CONFIGURED))
        return setup_failure(c, "configuration", err);
    write_endpoints(c);
    if (!step_all(c, "INITIALISE", false, c->opt.start_timeout_ms, I_CONFIGURED) || c->fatal ||
        !everyone_in(c, I_READY))
        return setup_failure(c, "initialisation", err);
    return TUSK_OK;
}

/* A run started: data moves until every instance ended, or a stop (a
 * command, a signal, a failure) drained: producers first, the rest once
 * drained (or after DRAIN_TIMEOUT_MS as they are); then STOP to every
 * instance in dependency order (not after an abort). */
static void drive_run(ctrl_t *c)
{
    c->started_ms = tusk_clock_ms();
    say(c, "run %u started: %u instances of %u actors over %s (run folder %s)", c->opt.run, c->n_inst,
        tusk_topology_count(c->topo),
        c->opt.shm && c->layout.transport == TUSK_TRANSPORT_IPC ? "shm" : layout_transport_name(c->layout.transport),
        c->run_dir);
    while (!run_finished(c) && stop_signals < 2) {
        pump(c, 100);
        if (c->stop_requested && !c->stop_at)
            c->stop_at = tusk_clock_ms();
        if (c->stop_requested && !c->producers_stopped) {
            for (unsigned i = 0; i < c->n_inst; i++) {
                inst_t *in = &c->inst[i];
                if (spec_of(c, in)->actor_class == TUSK_PRODUCER && alive(in) &&
                    (in->st == I_RUNNING || in->st == I_PAUSED))
                    command(c, in, "STOP", NULL, NULL, 0);
            }
            c->producers_stopped = true;
        }
        if (c->stop_at && tusk_clock_ms() - c->stop_at > DRAIN_TIMEOUT_MS) {
            say(c, "the rest did not drain within %d s: stopping them as they are", DRAIN_TIMEOUT_MS / 1000);
            break;
        }
    }
    c->running = false;
    c->ended_ms = tusk_clock_ms();
    if (stop_signals < 2)
        step_all(c, "STOP", false, c->opt.start_timeout_ms, I_GONE);
}

/* One run of a serving controller: start (consumers first), move data
 * until every instance ended or a stop drained, stop (producers first),
 * then the run's summary and report. The instances stay. */
static void serve_run(ctrl_t *c)
{
    c->opt.run = c->next_run;
    c->in_run = true;
    /* A new run: the last one's figures go. */
    for (unsigned i = 0; i < c->n_inst; i++) {
        inst_t *in = &c->inst[i];
        tusk_ctl_destroy(&in->stats);
        tusk_ctl_destroy(&in->prev_stats);
        for (unsigned j = 0; j < in->n_old; j++)
            tusk_ctl_destroy(&in->old_stats[j]);
        in->n_old = 0;
        in->failed_once = in->failed_now = false;
        in->restarts = in->respawned; /* lost, and respawned before this run (respawn_lost) */
        in->reason[0] = '\0';
        in->prev_bytes = in->prev_ms = 0;
        if (in->st == I_STOPPED)
            in->st = I_READY;
    }
    clear_replies(c);
    c->stop_requested = c->producers_stopped = c->fatal = false;
    c->stop_at = c->fatal_at = 0;
    c->fatal_reason[0] = '\0';
    c->running = true;
    c->ended_ms = 0;
    c->started_ms = tusk_clock_ms();
    c->live_lines = 0;
    if (!step_all(c, "START", true, c->opt.start_timeout_ms, I_READY) && !c->fatal) {
        tusk_error_t e;
        setup_failure(c, "start", &e);
        begin_fatal_stop(c, e.message);
    }
    for (unsigned i = 0; i < c->n_inst; i++)
        c->inst[i].respawned = 0; /* started: a restart from now on is one during the run */
    drive_run(c);

    /* The summary, as tusk_run_topology prints it, and the report. */
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    c->in_run = false;
    if (!mem)
        return;
    fprintf(mem, "\n");
    status_table(c, mem, true);
    totals_t t = reconcile(c, mem);
    uint64_t produced = 0;
    bool failures = false;
    for (unsigned i = 0; i < c->n_inst; i++) {
        failures |= c->inst[i].failed_once;
        if (spec_of(c, &c->inst[i])->actor_class == TUSK_PRODUCER)
            produced += slot_stat(&c->inst[i], "out_bytes");
    }
    double seconds = (double)(c->ended_ms - c->started_ms) / 1000.0;
    fprintf(mem, "run time %.2f s, produced %.1f MB (%.1f MB/s)\n", seconds, (double)produced / 1e6,
            seconds > 0 ? (double)produced / 1e6 / seconds : 0.0);
    uint64_t extra = t.extra > t.duplicates ? t.extra : t.duplicates;
    const char *verdict = c->fatal ? "stopped by a failure"
                        : stop_signals > 1 ? "aborted"
                        : failures || t.lost || extra || t.malformed || t.gaps || t.dropped ? "ended with failures"
                                                                                            : "ended cleanly";
    fprintf(mem, "run %u %s%s%s\n", c->opt.run, verdict, c->fatal ? ": " : "", c->fatal ? c->fatal_reason : "");
    fclose(mem);
    if (!c->opt.quiet)
        fputs(text, c->out);
    fflush(c->out);
    say(c, "run %u %s", c->opt.run, verdict);
    char path[PATH_MAX + 32];
    zu_format(path, sizeof path, "%s/run-%u.report", c->run_dir, c->opt.run);
    write_report(c, path, &t, seconds);
    if (c->opt.report)
        write_report(c, c->opt.report, &t, seconds);
    answer_waiters(c, text);
    free(c->summary);
    c->summary = text;
}

int tusk_run_serve(const tusk_run_options_t *opt, tusk_error_t *err)
{
    ctrl_t cs = {0}, *c = &cs;
    ctrl_init(c, opt);
    c->serving = true;
    saved_signals_t old;
    int status = TUSK_EXIT_USAGE;
    if (begin(c, &old, err) != TUSK_OK)
        goto done;
    c->configured = true;
    c->next_run = c->opt.run;
    say(c, "ready: %u instances of %u actors configured and initialised over %s (run folder %s); waiting for "
        "commands (tusk-run --start)", c->n_inst, tusk_topology_count(c->topo),
        layout_transport_name(c->layout.transport), c->run_dir);
    while (!c->quit_requested && !stop_signals) {
        pump(c, 100);
        if (c->start_requested && !c->quit_requested && !stop_signals) {
            c->start_requested = false;
            serve_run(c);
            c->runs++;
            c->next_run = c->opt.run + 1;
        }
    }
    say(c, "quitting after %u run%s", c->runs, c->runs == 1 ? "" : "s");
    status = stop_signals > 1 ? TUSK_EXIT_FAIL : TUSK_EXIT_OK;
    if (stop_signals > 1)
        tusk_error_set(err, TUSK_EACTOR, "aborted");
    else
        tusk_error_clear(err);
    c->ended = true;
    exit_and_wait(c);
    debug_verdict(c);
    if (status == TUSK_EXIT_OK && c->debug_errors) {
        status = TUSK_EXIT_LOSS;
        tusk_error_set(err, TUSK_EACTOR, "valgrind found errors in %s[%u]: %s",
                       tusk_topology_actor(c->topo, (unsigned)c->debug_actor)->name, c->debug_k, c->debug_log);
    }
done:
    return finish(c, status, &old);
}
