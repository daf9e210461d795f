/* topology.h - the XML file that wires a chain of actors.
 *
 * NARVAL's topology format (seed 002, listing 1; NARVAL's "Writing a C
 * actor" and "Configuration Files" pages) with tusk additions:
 *
 *   <configuration>
 *     <producer>
 *       <name>reader</name>
 *       <hostname>localhost</hostname>         (optional, default localhost)
 *       <binary_code>file_producer</binary_code>
 *       <size>1048576</size>                    (output buffer bytes, default 1 MiB;
 *                                                NARVAL's 1_000_000 too)
 *       <parameter name="file">run.adf</parameter>
 *     </producer>
 *     <intermediary instances="3"               (load sharing, default 1)
 *                   hwm="8"                     (queue bound per link, buffers)
 *                   on_failure="continue"       (or stop, the default)
 *                   restart="on-failure"        (or no, the default)
 *                   hook_timeout="60">          (seconds a hook call may take under
 *                                                tusk-run; default: no limit)
 *       <name>psa</name>
 *       <binary_code>passthrough</binary_code>
 *       <data_source>reader</data_source>       (one or more: fan-in)
 *       <address>10.0.0.2</address>             (tusk: where its inputs bind in a
 *                                                distributed run)
 *     </intermediary>
 *     <consumer>
 *       <name>writer</name>
 *       <binary_code>file_writer</binary_code>
 *       <data_source>psa</data_source>
 *       <config_dir>writer.d</config_dir>       (tusk: the folder process_config gets)
 *     </consumer>
 *   </configuration>
 *
 * NARVAL's own elements and attributes load unchanged: <output_buffer_name>,
 * <port> (NARVAL's port type: fifo, eth0..eth3, ib0, ib1), <debug>,
 * <log_level>, input_buffers / output_buffers, source_port / source_buffer,
 * sizes with digits grouped by '_' (1_000_000, as NARVAL, an Ada program,
 * writes them). tusk keeps them in the spec and does not act on them: it
 * chooses its transport itself (ipc on one host, tcp across hosts). A NARVAL
 * C actor named through NARVAL's convention, <binary_code>generic_producer
 * (generic_filter, generic_consumer) with its library set by a NARVAL shell
 * line "set library LIB SUBSYSTEM ACTOR", is resolved through
 * tusk_topology_narval_script below. config/topology.rng marks every tusk
 * extension as such.
 *
 * Loading validates the file against config/topology.rng (embedded in
 * libtusk) and then checks what a schema cannot: unique names, data
 * sources that exist and produce output, no cycles, every output consumed,
 * sane sizes. Every error names the file, the line and the element.
 *
 * The order of actors in a loaded topology is a dependency order: every
 * actor comes after all of its sources.
 */
#ifndef TUSK_TOPOLOGY_H
#define TUSK_TOPOLOGY_H

#include "export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tusk_actor_class {
    TUSK_PRODUCER = 0,
    TUSK_FILTER = 1,   /* <intermediary> */
    TUSK_CONSUMER = 2
} tusk_actor_class_t;

#define TUSK_DEFAULT_BUFFER_SIZE (1u << 20)
#define TUSK_MIN_BUFFER_SIZE 64u
#define TUSK_MAX_BUFFER_SIZE (1u << 30)
#define TUSK_MAX_INSTANCES 256u
#define TUSK_DEFAULT_HWM 8u
#define TUSK_MAX_HWM 65536u

typedef struct tusk_actor_spec {
    const char *name;
    tusk_actor_class_t actor_class;
    const char *hostname;      /* "localhost" unless given */
    const char *library;       /* <binary_code> as written */
    const char *library_path;  /* after tusk_topology_resolve, else NULL */
    const char *debug;         /* <debug> text or NULL */
    uint32_t buffer_size;      /* output buffer bytes; 0 for consumers */
    unsigned instances;
    unsigned n_sources;
    const unsigned *sources;   /* indices of the source actors, in file order */
    unsigned n_sinks;
    const unsigned *sinks;     /* indices of the actors reading this output */
    unsigned n_params;
    const char *const *param_keys;
    const char *const *param_values;
    int line;                  /* line of the actor's element in the file */
    /* Distributed runs (tusk-run): */
    const char *interface;     /* <address>: interface or address its inputs bind to (NULL: default) */
    unsigned hwm;              /* hwm="N": buffers queued per link before the sender waits */
    bool restart;              /* restart="on-failure": the controller restarts a failed instance */
    bool continue_on_failure;  /* on_failure="continue": the run goes on without a failed instance */
    unsigned hook_timeout_s;   /* hook_timeout="S": a hook call longer than S seconds is a stall
                                  (0, the default: no limit) */
    /* NARVAL's, kept as written (tusk does not act on them); NULL when absent: */
    const char *port;          /* <port>: NARVAL's port type, fifo, eth0..eth3, ib0 or ib1 */
    const char *log_level;     /* <log_level> text */
    /* The actor's own configuration folder (<config_dir>, relative to the
     * topology's folder): what process_config and process_register_dir
     * get, for every instance. NULL: the host makes one per instance and
     * writes parameters.conf there (tusk_actor_config_folder). */
    const char *config_dir;
    /* A NARVAL generic actor (<binary_code>generic_producer, generic_filter
     * or generic_consumer): the library its "set library" line names, as
     * written; NULL otherwise or until one is set. */
    const char *narval_library;
} tusk_actor_spec_t;

typedef struct tusk_topology tusk_topology_t;

/* Read and validate a topology file. */
TUSK_API int tusk_topology_load(tusk_topology_t **topology, const char *path, tusk_error_t *err);

/* Read a topology file's text (NUL-terminated, the caller frees it) with
 * the size limit and messages of tusk_topology_load, for a host that
 * passes the text on (tusk-run). */
TUSK_API int tusk_topology_read(const char *path, char **text, size_t *size, tusk_error_t *err);

/* The same from memory; `name` stands for the file in messages. */
TUSK_API int tusk_topology_parse(tusk_topology_t **topology, const char *xml, size_t size, const char *name,
                                 tusk_error_t *err);

TUSK_API void tusk_topology_destroy(tusk_topology_t **topology);

/* Find every actor's library: <binary_code> with a '/' is a path relative
 * to the topology file's folder; a bare name N is looked up as N.so in each
 * folder of `search_path` (colon-separated; NULL: $TUSK_ACTOR_PATH, then
 * the installed actor folder, which $TUSK_ACTOR_DIR replaces when set:
 * empty, no installed folder at all). A NARVAL generic actor's library
 * (its "set library" line) is found the same way, then, for a bare name,
 * also in the script's folder. Checks
 * that every <config_dir> is a folder. TUSK_ELOAD naming file, line, actor
 * and the folders searched when a library is missing (or a generic actor
 * has none set); TUSK_ETOPOLOGY for a missing configuration folder. */
TUSK_API int tusk_topology_resolve(tusk_topology_t *topology, const char *search_path, tusk_error_t *err);

/* The installed actor folder as tusk_topology_resolve uses it: the
 * compiled-in one, or $TUSK_ACTOR_DIR when that is set ("" when it is set
 * empty: no installed folder is searched). */
TUSK_API const char *tusk_topology_installed_actor_dir(void);

/* NARVAL names a C actor's library outside the topology, with a
 * narval_shell command:
 *
 *   set library LIBRARY SUBSYSTEM ACTOR
 *
 * Read those from NARVAL shell script text (`size` bytes, `name` standing
 * for the file in messages, its folder for libraries given with a '/' and
 * for bare names not on the search path): each binds LIBRARY to ACTOR, a
 * generic actor of the topology; every other command ('launch', 'set
 * action ...', comments) is ignored. TUSK_ETOPOLOGY naming the script's
 * line for a malformed 'set library', an unknown actor, an actor that is
 * not a generic one, or a second library for one actor. */
TUSK_API int tusk_topology_narval_commands(tusk_topology_t *topology, const char *text, size_t size, const char *name,
                                           tusk_error_t *err);
/* The same from a file. */
TUSK_API int tusk_topology_narval_script(tusk_topology_t *topology, const char *path, tusk_error_t *err);

/* Whether `library` (a <binary_code>) is one of NARVAL's generic actor
 * hosts, and for which class. */
TUSK_API bool tusk_topology_is_generic(const char *library, tusk_actor_class_t *actor_class);

TUSK_API const char *tusk_topology_name(const tusk_topology_t *topology);
TUSK_API unsigned tusk_topology_count(const tusk_topology_t *topology);
TUSK_API const tusk_actor_spec_t *tusk_topology_actor(const tusk_topology_t *topology, unsigned i);
/* Index of the actor called `name`, or -1. */
TUSK_API int tusk_topology_find(const tusk_topology_t *topology, const char *name);
/* Put actor i on `host` (a placement by tusk-run's engine, engine.h: an
 * actor without a <hostname> on a node of a Slurm allocation). The
 * caller checks the name; TUSK_EINVAL for no such actor. */
TUSK_API int tusk_topology_set_hostname(tusk_topology_t *topology, unsigned i, const char *host, tusk_error_t *err);

TUSK_API const char *tusk_actor_class_name(tusk_actor_class_t actor_class);

#ifdef __cplusplus
}
#endif
#endif
