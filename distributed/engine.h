/* engine.h - where tusk-run's instances run: its own processes (direct),
 * transient systemd units, or Slurm job steps; and unit files for a
 * permanent systemd installation of a chain.
 *
 *   direct          tusk-run forks the instances of this host and starts the
 *                   others through the launcher (default "ssh {host}")
 *   systemd         each instance is a transient unit of the user's manager:
 *                   systemd-run --user --pipe --wait --collect --quiet
 *                   --same-dir --unit=tusk-rRUN-PID-ACTOR.K.INC
 *                   --setenv=TUSK_JOURNAL=tusk-rRUN-PID-ACTOR.K
 *                   [--setenv=TUSK_ACTOR_PATH] [-p PROPERTY=VALUE ...] --
 *                   tusk-actor ...; on another host, through the launcher
 *                   ("ssh {host} systemd-run ...")
 *   systemd-system  the same with the system manager (no --user)
 *   slurm           each instance is a job step of the allocation tusk-run
 *                   runs in: srun --nodes=1 --ntasks=1 --nodelist=NODE
 *                   --overlap --quiet --job-name=tusk-ACTOR.K --
 *                   tusk-actor ...; NODE is the actor's <hostname>, which
 *                   must be a node of the allocation (SLURM_JOB_NODELIST,
 *                   expanded by base/hostlist.h), or, for an actor without
 *                   one, the node tusk_engine_place gave it (round robin).
 *                   srun reaches the node itself: no launcher.
 *
 * In every engine the instance reads its keys on standard input (--pipe
 * for systemd-run; srun forwards its standard input to the task) and its
 * output goes to its log in the run folder, which the controller reads for
 * failure reports; with systemd, to the journal as well
 * (tusk_engine_journal). The process tusk-run holds is systemd-run or srun: the
 * controller treats it as it treats a launcher (an instance leaves when
 * told to, or when the controller falls silent to it: --orphan-ms), and
 * its failure policies (restart, continue, stop) apply on top: a restarted
 * instance is a new unit (its incarnation is in the name) or a new step.
 *
 * Properties (--unit-property [ACTOR:]NAME=VALUE, systemd engines): a unit
 * property (CPUQuota=50%, MemoryMax=2G, AllowedCPUs=0-3, ...) for every
 * instance, or for ACTOR's only. NAME is letters and digits; VALUE only
 * characters no shell reads as syntax (it may reach a remote shell).
 */
#ifndef TUSK_ENGINE_H
#define TUSK_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tusk/error.h"
#include "tusk/topology.h"

typedef enum {
    TUSK_ENGINE_DIRECT,
    TUSK_ENGINE_SYSTEMD,
    TUSK_ENGINE_SYSTEMD_SYSTEM,
    TUSK_ENGINE_SLURM
} tusk_engine_kind_t;

typedef struct tusk_engine tusk_engine_t;

/* `name`: direct, systemd, systemd-system or slurm (TUSK_EINVAL otherwise). */
int tusk_engine_new(tusk_engine_t **engine, const char *name, tusk_error_t *err);
void tusk_engine_destroy(tusk_engine_t **engine);
tusk_engine_kind_t tusk_engine_kind(const tusk_engine_t *engine);
const char *tusk_engine_name(const tusk_engine_t *engine);

/* --unit-property [ACTOR:]NAME=VALUE (kept in order; TUSK_EINVAL with the
 * reason for a malformed one). */
int tusk_engine_add_property(tusk_engine_t *engine, const char *text, tusk_error_t *err);

/* systemd engines: pass this environment variable of systemd-run's own
 * environment to the instances (--setenv=NAME); the unit's environment
 * is the manager's, not tusk-run's. */
int tusk_engine_pass_env(tusk_engine_t *engine, const char *name, tusk_error_t *err);

/* slurm: the allocation's node list (SLURM_JOB_NODELIST's text) and the
 * node tusk-run runs on (an actor on localhost runs there). */
int tusk_engine_set_nodes(tusk_engine_t *engine, const char *nodelist, const char *this_node, tusk_error_t *err);

/* Before anything starts: every --unit-property's ACTOR is an actor of the
 * topology; with slurm, the node list is set and every actor is on a node
 * of the allocation (the message names the actor, its host and the
 * nodes). */
int tusk_engine_check(const tusk_engine_t *engine, const tusk_topology_t *topology, tusk_error_t *err);

/* slurm, inside an allocation: put every actor without a host (its
 * <hostname> is localhost, the default, 127.0.0.1 or ::1) on a node of
 * the allocation, round robin in the topology's order (sources before
 * their readers): the n-th such actor, all its instances, on node n mod N
 * of the expanded node list. An actor's instances stay together: the
 * data layout (layout.h) is per actor, and an actor placed on another
 * node than its sources needs its <address> as on any remote host. An
 * actor with a <hostname> stays there, and that host must be a node of
 * the allocation (TUSK_EINVAL naming actor, line, host and node list,
 * as tusk_engine_check). Says the placement of every actor in `note`
 * ("" when nothing is placed: another engine, or no node list). */
int tusk_engine_place(const tusk_engine_t *engine, tusk_topology_t *topology, char *note, size_t note_size,
                      tusk_error_t *err);

/* Does the engine reach other hosts itself (slurm), so that the launcher
 * is not used? */
bool tusk_engine_replaces_launcher(const tusk_engine_t *engine);

/* The words that go before tusk-actor's for incarnation `inc` of instance
 * k of actor `actor`, in run `run` of the tusk-run with process id `pid`:
 * the `before` words (the launcher's), then the engine's (none for
 * direct); *words is NULL-terminated, one allocation the caller frees. */
int tusk_engine_words(const tusk_engine_t *engine, const tusk_topology_t *topology, unsigned actor, unsigned k,
                      unsigned inc, uint32_t run, long pid, char *const *before, size_t n_before, char ***words,
                      size_t *n, tusk_error_t *err);

/* systemd engines: each instance's output goes to its log in the run
 * folder and to the journal of its host (the unit gets
 * TUSK_JOURNAL=tusk-rRUN-PID-ACTOR.K, tusk-actor copies its output there:
 * journal.h). This writes RUN_DIR/journal.txt, the journalctl command of
 * every instance ("ssh HOST journalctl -t IDENT" for another host's) and
 * the units' names, and says the first command and the file in `note`
 * (for the start message); other engines: nothing, note "". The engine
 * keeps `run` for the identifiers from then on: a slot restarted in a
 * later run of a served tusk-run (a unit named after that run) writes
 * under the identifier journal.txt gives. */
int tusk_engine_journal(tusk_engine_t *engine, const tusk_topology_t *topology, uint32_t run, long pid,
                        const char *run_dir, char *note, size_t note_size, tusk_error_t *err);

/* --units DIR: the unit file of a permanent installation of the chain:
 * DIR/tusk-STEM.service (STEM: the topology file's name without .xml)
 * runs `tusk_run` --no-live --engine ENGINE [--unit-property ...]
 * TOPOLOGY (absolute paths), restarted by systemd on failure within start
 * limits; its instances are transient units with the properties (the
 * engine must be systemd or systemd-system). unit_text gives the text
 * (caller frees), write_units writes it (the file must not exist) and
 * says its path in `path`. */
int tusk_engine_unit_text(const tusk_engine_t *engine, const tusk_topology_t *topology, const char *topology_path,
                          const char *tusk_run, char **text, tusk_error_t *err);
int tusk_engine_write_units(const tusk_engine_t *engine, const tusk_topology_t *topology,
                            const char *topology_path, const char *tusk_run, const char *dir, char *path,
                            size_t path_size, tusk_error_t *err);

/* tusk-run's options: --engine NAME (NULL: none given, *engine stays
 * NULL: direct) and its --unit-property texts; passes TUSK_ACTOR_PATH to
 * systemd units when it is set; slurm reads the allocation's node list
 * from SLURM_JOB_NODELIST (or SLURM_NODELIST) and this host's node from
 * SLURMD_NODENAME (else the short host name). */
int tusk_engine_from_options(tusk_engine_t **engine, const char *name, const char *const *props, size_t n_props,
                             tusk_error_t *err);

/* tusk-run --units DIR TOPOLOGY: read and check the topology, write the
 * unit file (absolute paths: the topology's, and tusk-run's own from
 * /proc/self/exe), say on `out` what was written and how to install it. */
int tusk_engine_units(const tusk_engine_t *engine, const char *topology_path, const char *dir, FILE *out,
                      tusk_error_t *err);

#endif
