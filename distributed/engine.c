/* engine.c - where tusk-run's instances run (see engine.h). */
#define _XOPEN_SOURCE 700 /* strndup, open_memstream */
#include "engine.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hostlist.h"
#include "base/str.h"
#include "layout.h"
#include "security.h"

#define PROPERTIES_MAX 64
#define ENV_MAX 8

typedef struct property {
    char *actor; /* NULL: every actor */
    char *assignment; /* NAME=VALUE */
} property_t;

struct tusk_engine {
    tusk_engine_kind_t kind;
    property_t props[PROPERTIES_MAX];
    size_t n_props;
    char *env[ENV_MAX];
    size_t n_env;
    char **nodes;
    size_t n_nodes;
    char *nodelist; /* as given, for messages */
    char *this_node;
    bool journal_fixed; /* tusk_engine_journal ran: the identifiers' run */
    uint32_t journal_run;
};

static const char *const engine_names[] = {"direct", "systemd", "systemd-system", "slurm"};

int tusk_engine_new(tusk_engine_t **engine, const char *name, tusk_error_t *err)
{
    *engine = NULL;
    for (size_t i = 0; i < sizeof engine_names / sizeof engine_names[0]; i++)
        if (strcmp(name, engine_names[i]) == 0) {
            tusk_engine_t *e = calloc(1, sizeof *e);
            if (!e)
                return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            e->kind = (tusk_engine_kind_t)i;
            *engine = e;
            return TUSK_OK;
        }
    return tusk_error_set(err, TUSK_EINVAL, "--engine '%s': direct, systemd, systemd-system or slurm", name);
}

void tusk_engine_destroy(tusk_engine_t **engine)
{
    tusk_engine_t *e = *engine;
    if (!e)
        return;
    for (size_t i = 0; i < e->n_props; i++) {
        free(e->props[i].actor);
        free(e->props[i].assignment);
    }
    for (size_t i = 0; i < e->n_env; i++)
        free(e->env[i]);
    tusk_hostlist_free(e->nodes, e->n_nodes);
    free(e->nodelist);
    free(e->this_node);
    free(e);
    *engine = NULL;
}

tusk_engine_kind_t tusk_engine_kind(const tusk_engine_t *engine)
{
    return engine ? engine->kind : TUSK_ENGINE_DIRECT;
}

const char *tusk_engine_name(const tusk_engine_t *engine)
{
    return engine_names[tusk_engine_kind(engine)];
}

static bool is_systemd(const tusk_engine_t *e)
{
    return e && (e->kind == TUSK_ENGINE_SYSTEMD || e->kind == TUSK_ENGINE_SYSTEMD_SYSTEM);
}

static bool alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

int tusk_engine_add_property(tusk_engine_t *e, const char *text, tusk_error_t *err)
{
    if (!is_systemd(e))
        return tusk_error_set(err, TUSK_EINVAL, "--unit-property '%s': only with --engine systemd or systemd-system",
                              text);
    if (e->n_props == PROPERTIES_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "--unit-property: more than %d", PROPERTIES_MAX);
    const char *eq = strchr(text, '='), *colon = strchr(text, ':');
    if (colon && eq && colon > eq)
        colon = NULL; /* a ':' in the value */
    const char *name = colon ? colon + 1 : text;
    if (!eq || eq == name)
        return tusk_error_set(err, TUSK_EINVAL, "--unit-property '%s': [ACTOR:]NAME=VALUE expected", text);
    for (const char *p = name; p < eq; p++)
        if (!alnum(*p))
            return tusk_error_set(err, TUSK_EINVAL,
                                  "--unit-property '%s': a property name is letters and digits (CPUQuota, "
                                  "MemoryMax, AllowedCPUs, ...)",
                                  text);
    if (colon == text)
        return tusk_error_set(err, TUSK_EINVAL, "--unit-property '%s': an empty actor name", text);
    if (eq[1] == '\0' || !tusk_arg_shell_safe(eq + 1, false))
        return tusk_error_set(err, TUSK_EINVAL,
                              "--unit-property '%s': the value must be letters, digits and _ . / : @ %% + = , - "
                              "only (it may reach a remote shell)",
                              text);
    property_t *p = &e->props[e->n_props];
    p->assignment = tusk_strdup(name);
    p->actor = colon ? strndup(text, (size_t)(colon - text)) : NULL;
    if (!p->assignment || (colon && !p->actor)) {
        free(p->assignment);
        free(p->actor);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    e->n_props++;
    return TUSK_OK;
}

int tusk_engine_pass_env(tusk_engine_t *e, const char *name, tusk_error_t *err)
{
    if (!is_systemd(e))
        return TUSK_OK; /* the other engines pass the environment themselves */
    if (e->n_env == ENV_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "more than %d variables to pass", ENV_MAX);
    for (const char *p = name; *p; p++)
        if (!alnum(*p) && *p != '_')
            return tusk_error_set(err, TUSK_EINVAL, "'%s' is no environment variable name", name);
    if (!(e->env[e->n_env] = tusk_strdup(name)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    e->n_env++;
    return TUSK_OK;
}

int tusk_engine_set_nodes(tusk_engine_t *e, const char *nodelist, const char *this_node, tusk_error_t *err)
{
    tusk_hostlist_free(e->nodes, e->n_nodes);
    e->nodes = NULL;
    e->n_nodes = 0;
    free(e->nodelist);
    free(e->this_node);
    e->nodelist = tusk_strdup(nodelist);
    e->this_node = tusk_strdup(this_node);
    if (!e->nodelist || !e->this_node)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int rc = tusk_hostlist_expand(nodelist, 0, &e->nodes, &e->n_nodes, err);
    if (rc != TUSK_OK)
        tusk_error_prefix(err, "SLURM_JOB_NODELIST");
    return rc;
}

static bool allocated(const tusk_engine_t *e, const char *host)
{
    for (size_t i = 0; i < e->n_nodes; i++)
        if (strcmp(e->nodes[i], host) == 0)
            return true;
    return false;
}

/* The node an actor's instances run on (slurm). */
static const char *node_of(const tusk_engine_t *e, const tusk_actor_spec_t *s)
{
    return layout_host_is_loopback(s->hostname) ? e->this_node : s->hostname;
}

int tusk_engine_check(const tusk_engine_t *e, const tusk_topology_t *t, tusk_error_t *err)
{
    if (!e)
        return TUSK_OK;
    for (size_t i = 0; i < e->n_props; i++)
        if (e->props[i].actor && tusk_topology_find(t, e->props[i].actor) < 0)
            return tusk_error_set(err, TUSK_EINVAL, "--unit-property %s:%s: the topology has no actor '%s'",
                                  e->props[i].actor, e->props[i].assignment, e->props[i].actor);
    if (e->kind != TUSK_ENGINE_SLURM)
        return TUSK_OK;
    if (!e->nodes)
        return tusk_error_set(err, TUSK_EINVAL,
                              "--engine slurm: no node list (run tusk-run inside an allocation: sbatch, salloc; "
                              "SLURM_JOB_NODELIST is not set)");
    for (unsigned a = 0; a < tusk_topology_count(t); a++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, a);
        const char *node = node_of(e, s);
        if (!allocated(e, node) && node == s->hostname)
            return tusk_error_set(err, TUSK_EINVAL,
                                  "actor '%s' (line %d): its <hostname> %s is not a node of the allocation (%s)",
                                  s->name, s->line, node, e->nodelist);
        if (!allocated(e, node))
            return tusk_error_set(err, TUSK_EINVAL,
                                  "actor '%s' (line %d) is on %s, this host, and %s is not a node of the "
                                  "allocation (%s)",
                                  s->name, s->line, s->hostname, node, e->nodelist);
    }
    return TUSK_OK;
}

int tusk_engine_place(const tusk_engine_t *e, tusk_topology_t *t, char *note, size_t note_size, tusk_error_t *err)
{
    if (note_size)
        note[0] = '\0';
    if (!e || e->kind != TUSK_ENGINE_SLURM || !e->nodes)
        return TUSK_OK;
    size_t len = 0, next = 0;
    int rc = TUSK_OK;
    if (note_size)
        len = (size_t)snprintf(note, note_size, "placement on the allocation's nodes (%s):", e->nodelist);
    for (unsigned a = 0; a < tusk_topology_count(t) && rc == TUSK_OK; a++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, a);
        bool named = !layout_host_is_loopback(s->hostname);
        if (!named)
            rc = tusk_topology_set_hostname(t, a, e->nodes[next++ % e->n_nodes], err);
        s = tusk_topology_actor(t, a);
        if (rc == TUSK_OK && len < note_size)
            len += (size_t)snprintf(note + len, note_size - len, "%s %s -> %s%s", a ? "," : "", s->name,
                                    s->hostname, named ? " (its <hostname>)" : "");
    }
    if (note_size && len >= note_size && note_size > 4)
        memcpy(note + note_size - 4, "...", 4);
    /* A <hostname> off the allocation is an error, here as later. */
    return rc == TUSK_OK ? tusk_engine_check(e, t, err) : rc;
}

bool tusk_engine_replaces_launcher(const tusk_engine_t *e)
{
    return e && e->kind == TUSK_ENGINE_SLURM;
}

/* ---- words ------------------------------------------------------------------- */

typedef struct words {
    char *w[4096 + 64];
    size_t n;
    bool oom;
} words_t;

static void add(words_t *ws, const char *fmt, ...) TUSK_PRINTF(2, 3);
static void add(words_t *ws, const char *fmt, ...)
{
    if (ws->oom || ws->n == sizeof ws->w / sizeof ws->w[0] - 1) {
        ws->oom = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char text[512];
    int len = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char *s = len >= 0 && (size_t)len < sizeof text ? tusk_strdup(text) : NULL;
    if (!s)
        ws->oom = true;
    else
        ws->w[ws->n++] = s;
}

/* The words into one allocation: the pointers, then the strings. */
static int pack(words_t *ws, char ***out, size_t *n, tusk_error_t *err)
{
    size_t bytes = (ws->n + 1) * sizeof(char *);
    for (size_t i = 0; i < ws->n; i++)
        bytes += strlen(ws->w[i]) + 1;
    char **block = ws->oom ? NULL : malloc(bytes);
    if (block) {
        char *p = (char *)(block + ws->n + 1);
        for (size_t i = 0; i < ws->n; i++) {
            size_t len = strlen(ws->w[i]) + 1;
            memcpy(p, ws->w[i], len);
            block[i] = p;
            p += len;
        }
        block[ws->n] = NULL;
        *out = block;
        *n = ws->n;
    }
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i]);
    return block ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
}

int tusk_engine_words(const tusk_engine_t *e, const tusk_topology_t *t, unsigned actor, unsigned k, unsigned inc,
                      uint32_t run, long pid, char *const *before, size_t n_before, char ***words, size_t *n,
                      tusk_error_t *err)
{
    *words = NULL;
    *n = 0;
    const tusk_actor_spec_t *s = tusk_topology_actor(t, actor);
    words_t ws = {.n = 0};
    for (size_t i = 0; i < n_before && !ws.oom; i++) {
        ws.oom = ws.n == sizeof ws.w / sizeof ws.w[0] - 1 || !(ws.w[ws.n] = tusk_strdup(before[i]));
        ws.n += !ws.oom;
    }
    if (!e || e->kind == TUSK_ENGINE_DIRECT)
        return pack(&ws, words, n, err);
    if (e->kind == TUSK_ENGINE_SLURM) {
        if (!e->nodes) {
            pack(&ws, words, n, err);
            free(*words);
            *words = NULL;
            *n = 0;
            return tusk_error_set(err, TUSK_EINVAL, "--engine slurm: no node list");
        }
        add(&ws, "srun");
        add(&ws, "--nodes=1");
        add(&ws, "--ntasks=1");
        add(&ws, "--nodelist=%s", node_of(e, s));
        add(&ws, "--overlap");
        add(&ws, "--quiet");
        add(&ws, "--job-name=tusk-%s.%u", s->name, k);
        add(&ws, "--");
        return pack(&ws, words, n, err);
    }
    add(&ws, "systemd-run");
    if (e->kind == TUSK_ENGINE_SYSTEMD)
        add(&ws, "--user");
    add(&ws, "--pipe");
    add(&ws, "--wait");
    add(&ws, "--collect");
    add(&ws, "--quiet");
    add(&ws, "--same-dir");
    add(&ws, "--unit=tusk-r%lu-%ld-%s.%u.%u", (unsigned long)run, pid, s->name, k, inc);
    /* Its output to the journal as well as to its log (journal.h). */
    add(&ws, "--setenv=TUSK_JOURNAL=tusk-r%lu-%ld-%s.%u", (unsigned long)(e->journal_fixed ? e->journal_run : run),
        pid, s->name, k);
    for (size_t i = 0; i < e->n_env; i++)
        add(&ws, "--setenv=%s", e->env[i]);
    for (size_t i = 0; i < e->n_props; i++)
        if (!e->props[i].actor || strcmp(e->props[i].actor, s->name) == 0) {
            add(&ws, "-p");
            add(&ws, "%s", e->props[i].assignment);
        }
    add(&ws, "--");
    return pack(&ws, words, n, err);
}

/* ---- the journal ------------------------------------------------------------- */

int tusk_engine_journal(tusk_engine_t *e, const tusk_topology_t *t, uint32_t run, long pid, const char *run_dir,
                        char *note, size_t note_size, tusk_error_t *err)
{
    if (note_size)
        note[0] = '\0';
    if (!is_systemd(e))
        return TUSK_OK;
    e->journal_fixed = true; /* a served tusk-run's later runs keep these identifiers */
    e->journal_run = run;
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    fprintf(fp, "# The output of each instance (tusk-run --engine %s): in this folder, ACTOR.K.log,\n"
                "# and in the journal of its host, identifier tusk-rRUN-PID-ACTOR.K (incarnations together):\n",
            tusk_engine_name(e));
    char first[512] = "";
    for (unsigned a = 0; a < tusk_topology_count(t); a++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, a);
        for (unsigned k = 0; k < s->instances; k++) {
            char line[512];
            snprintf(line, sizeof line, "%s%s%sjournalctl -t tusk-r%lu-%ld-%s.%u",
                     layout_host_is_local(s->hostname) ? "" : "ssh ",
                     layout_host_is_local(s->hostname) ? "" : s->hostname,
                     layout_host_is_local(s->hostname) ? "" : " ", (unsigned long)run, pid, s->name, k);
            fprintf(fp, "%s\n", line);
            if (!first[0])
                memcpy(first, line, sizeof first);
        }
    }
    fprintf(fp, "# Units: systemctl%s status 'tusk-r*-%ld-*' while they run (tusk-rRUN-PID-ACTOR.K.INC).\n",
            e->kind == TUSK_ENGINE_SYSTEMD ? " --user" : "", pid);
    if (fclose(fp) != 0) {
        free(buf);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    char path[PATH_MAX];
    int rc = TUSK_OK;
    if ((size_t)snprintf(path, sizeof path, "%s/journal.txt", run_dir) >= sizeof path)
        rc = tusk_error_set(err, TUSK_EINVAL, "%s: path too long", run_dir);
    if (rc == TUSK_OK) {
        unlink(path); /* a --run-dir used before */
        rc = tusk_write_new(path, buf, size, 0600, err);
    }
    free(buf);
    if (rc == TUSK_OK && note_size)
        snprintf(note, note_size, "each instance's output is in the run folder and in the journal: %s (every "
                                  "instance: %s)", first, path);
    return rc;
}

/* ---- unit files -------------------------------------------------------------- */

/* A path for an ExecStart= line: absolute, nothing a shell or systemd's
 * splitting reads as syntax; '%' (a specifier) doubled. */
static int exec_word(FILE *fp, const char *what, const char *path, tusk_error_t *err)
{
    if (path[0] != '/' || !tusk_arg_shell_safe(path, false))
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s '%s': an absolute path of letters, digits and _ . / : @ %% + = , - only, for "
                              "ExecStart=",
                              what, path);
    for (const char *p = path; *p; p++)
        fputs(*p == '%' ? "%%" : (char[]){*p, '\0'}, fp);
    return TUSK_OK;
}

int tusk_engine_unit_text(const tusk_engine_t *e, const tusk_topology_t *t, const char *topology_path,
                          const char *tusk_run, char **text, tusk_error_t *err)
{
    *text = NULL;
    if (!is_systemd(e))
        return tusk_error_set(err, TUSK_EINVAL, "with --engine systemd or systemd-system only");
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    const char *base = strrchr(topology_path, '/');
    base = base ? base + 1 : topology_path;
    fprintf(fp, "# Made by tusk-run --units from %s: the chain, run by tusk-run;\n", base);
    fprintf(fp, "# each instance is a transient unit of its own (tusk-rRUN-PID-ACTOR.K.INC):\n");
    for (unsigned a = 0; a < tusk_topology_count(t); a++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, a);
        fprintf(fp, "#   %s x%u on %s", s->name, s->instances, s->hostname);
        for (size_t i = 0; i < e->n_props; i++)
            if (!e->props[i].actor || strcmp(e->props[i].actor, s->name) == 0)
                fprintf(fp, " %s", e->props[i].assignment);
        fprintf(fp, "\n");
    }
    fprintf(fp, "[Unit]\nDescription=tusk chain %s\n", base);
    fprintf(fp, "After=network-online.target\nWants=network-online.target\n");
    fprintf(fp, "StartLimitIntervalSec=600\nStartLimitBurst=3\n\n");
    fprintf(fp, "[Service]\nType=exec\nExecStart=");
    int rc = exec_word(fp, "tusk-run", tusk_run, err);
    if (rc == TUSK_OK) {
        fprintf(fp, " --no-live --engine %s", tusk_engine_name(e));
        for (size_t i = 0; i < e->n_props; i++) {
            fprintf(fp, " --unit-property ");
            if (e->props[i].actor)
                fprintf(fp, "%s:", e->props[i].actor);
            for (const char *p = e->props[i].assignment; *p; p++)
                fputs(*p == '%' ? "%%" : (char[]){*p, '\0'}, fp);
        }
        fprintf(fp, " ");
        rc = exec_word(fp, "topology", topology_path, err);
    }
    fprintf(fp, "\nRestart=on-failure\nRestartSec=10\n");
    fprintf(fp, "# SIGTERM: tusk-run stops the producers, lets the rest drain, then ends.\n");
    fprintf(fp, "KillMode=mixed\nTimeoutStopSec=60\n\n");
    fprintf(fp, "[Install]\nWantedBy=%s\n", e->kind == TUSK_ENGINE_SYSTEMD ? "default.target" : "multi-user.target");
    if (fclose(fp) != 0 && rc == TUSK_OK)
        rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (rc != TUSK_OK) {
        free(buf);
        return rc;
    }
    *text = buf;
    return TUSK_OK;
}

int tusk_engine_write_units(const tusk_engine_t *e, const tusk_topology_t *t, const char *topology_path,
                            const char *tusk_run, const char *dir, char *path, size_t path_size, tusk_error_t *err)
{
    char *text = NULL;
    int rc = tusk_engine_unit_text(e, t, topology_path, tusk_run, &text, err);
    if (rc != TUSK_OK)
        return rc;
    const char *base = strrchr(topology_path, '/');
    base = base ? base + 1 : topology_path;
    size_t stem = strlen(base);
    if (stem > 4 && strcmp(base + stem - 4, ".xml") == 0)
        stem -= 4;
    for (size_t i = 0; i < stem; i++)
        if (!alnum(base[i]) && base[i] != '_' && base[i] != '-' && base[i] != '.') {
            free(text);
            return tusk_error_set(err, TUSK_EINVAL,
                                  "--units: the unit is named after the topology file, '%.*s' is no unit name "
                                  "(letters, digits and _ - . only)",
                                  (int)stem, base);
        }
    if ((size_t)snprintf(path, path_size, "%s/tusk-%.*s.service", dir, (int)stem, base) >= path_size) {
        free(text);
        return tusk_error_set(err, TUSK_EINVAL, "--units %s: path too long", dir);
    }
    rc = tusk_write_new(path, text, strlen(text), 0644, err);
    free(text);
    return rc;
}

/* ---- tusk-run's options ------------------------------------------------------- */

int tusk_engine_from_options(tusk_engine_t **engine, const char *name, const char *const *props, size_t n_props,
                             tusk_error_t *err)
{
    *engine = NULL;
    if (!name) {
        if (n_props > 0)
            return tusk_error_set(err, TUSK_EINVAL, "--unit-property: only with --engine systemd or systemd-system");
        return TUSK_OK;
    }
    tusk_engine_t *e;
    int rc = tusk_engine_new(&e, name, err);
    for (size_t i = 0; rc == TUSK_OK && i < n_props; i++)
        rc = tusk_engine_add_property(e, props[i], err);
    /* The unit's environment is the manager's: the actor folders travel. */
    if (rc == TUSK_OK && getenv("TUSK_ACTOR_PATH"))
        rc = tusk_engine_pass_env(e, "TUSK_ACTOR_PATH", err);
    if (rc == TUSK_OK && e->kind == TUSK_ENGINE_SLURM) {
        const char *list = getenv("SLURM_JOB_NODELIST");
        if (!list)
            list = getenv("SLURM_NODELIST");
        /* This host's node: Slurm says it inside a job (batch script,
         * step); else the host name, short. */
        char host[256] = "";
        const char *node = getenv("SLURMD_NODENAME");
        if (!node) {
            if (gethostname(host, sizeof host - 1) != 0)
                host[0] = '\0';
            host[sizeof host - 1] = '\0';
            char *dot = strchr(host, '.');
            if (dot)
                *dot = '\0';
            node = host;
        }
        if (list)
            rc = tusk_engine_set_nodes(e, list, node, err);
    }
    if (rc != TUSK_OK) {
        tusk_engine_destroy(&e);
        return rc;
    }
    *engine = e;
    return TUSK_OK;
}

int tusk_engine_units(const tusk_engine_t *engine, const char *topology_path, const char *dir, FILE *out,
                      tusk_error_t *err)
{
    char topo_abs[PATH_MAX], self[PATH_MAX], path[PATH_MAX + 64];
    if (!realpath(topology_path, topo_abs))
        return tusk_error_set(err, TUSK_EIO, "%s: %s", topology_path, strerror(errno));
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return tusk_error_set(err, TUSK_EIO, "cannot find tusk-run's own path (/proc/self/exe): %s",
                              strerror(errno));
    self[len] = '\0';
    char *xml = NULL;
    size_t size = 0;
    tusk_topology_t *t = NULL;
    int rc = tusk_topology_read(topology_path, &xml, &size, err);
    if (rc == TUSK_OK)
        rc = tusk_topology_parse(&t, xml, size, topology_path, err);
    if (rc == TUSK_OK)
        rc = tusk_engine_check(engine, t, err);
    if (rc == TUSK_OK)
        rc = tusk_engine_write_units(engine, t, topo_abs, self, dir, path, sizeof path, err);
    if (rc == TUSK_OK)
        fprintf(out, "tusk-run: wrote %s (install: copy it to %s, then systemctl%s daemon-reload; "
                     "systemctl%s enable --now %s)\n",
                path,
                tusk_engine_kind(engine) == TUSK_ENGINE_SYSTEMD ? "~/.config/systemd/user/" : "/etc/systemd/system/",
                tusk_engine_kind(engine) == TUSK_ENGINE_SYSTEMD ? " --user" : "",
                tusk_engine_kind(engine) == TUSK_ENGINE_SYSTEMD ? " --user" : "", strrchr(path, '/') + 1);
    tusk_topology_destroy(&t);
    free(xml);
    return rc;
}
