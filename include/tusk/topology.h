/* topology.h - the XML file that wires a chain of actors.
 *
 * NARVAL's topology format (seed 002, listing 1) with tusk additions:
 *
 *   <configuration>
 *     <producer>
 *       <name>reader</name>
 *       <hostname>localhost</hostname>         (optional, default localhost)
 *       <binary_code>file_producer</binary_code>
 *       <size>1048576</size>                    (output buffer bytes, default 1 MiB)
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
 *     </intermediary>
 *     <consumer>
 *       <name>writer</name>
 *       <binary_code>file_writer</binary_code>
 *       <data_source>psa</data_source>
 *     </consumer>
 *   </configuration>
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
    const char *interface;     /* <port>: interface or address its inputs bind to (NULL: default) */
    unsigned hwm;              /* hwm="N": buffers queued per link before the sender waits */
    bool restart;              /* restart="on-failure": the controller restarts a failed instance */
    bool continue_on_failure;  /* on_failure="continue": the run goes on without a failed instance */
    unsigned hook_timeout_s;   /* hook_timeout="S": a hook call longer than S seconds is a stall
                                  (0, the default: no limit) */
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
 * the installed actor folder). TUSK_ELOAD naming file, line, actor and the
 * folders searched when one is missing. */
TUSK_API int tusk_topology_resolve(tusk_topology_t *topology, const char *search_path, tusk_error_t *err);

TUSK_API const char *tusk_topology_name(const tusk_topology_t *topology);
TUSK_API unsigned tusk_topology_count(const tusk_topology_t *topology);
TUSK_API const tusk_actor_spec_t *tusk_topology_actor(const tusk_topology_t *topology, unsigned i);
/* Index of the actor called `name`, or -1. */
TUSK_API int tusk_topology_find(const tusk_topology_t *topology, const char *name);

TUSK_API const char *tusk_actor_class_name(tusk_actor_class_t actor_class);

#ifdef __cplusplus
}
#endif
#endif
