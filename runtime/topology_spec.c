/* topology_spec.c - the table of a topology's attributes and elements
 * (see topology_spec.h). config/topology.rng says the same; the test
 * test_schema_matches_spec in tests/check_topology.c holds the two
 * together. */
#include <stddef.h>

#include "topology_spec.h"

#define MAX_HOOK_TIMEOUT_S 604800u /* a week */

#define KEEP(kind, field) .keep = (kind), .offset = offsetof(tusk_actor_spec_t, field)

static const char *const restart_choices[] = {"no", "on-failure", NULL};
static const char *const on_failure_choices[] = {"stop", "continue", NULL};
/* NARVAL's port types (its nrv_conf/README): a FIFO between actors of one
 * host, an Ethernet or an InfiniBand interface. */
static const char *const port_choices[] = {"fifo", "eth0", "eth1", "eth2", "eth3", "ib0", "ib1", NULL};

/* NARVAL's counts: digits may be grouped (1_000), as NARVAL writes them. */
/* Whose an attribute or element is: NARVAL's, or a tusk extension. */
#define NARVAL false
#define EXTENSION true

#define COUNT_NO_MAX(what) {.type = TOPO_COUNT, .min = 0, .max = TOPO_NO_MAX, .expected = (what), .grouped = true}
#define TEXT {.type = TOPO_TEXT}

/* Defined with [] against the header's [TUSK_TOPO_N_ACTOR_ATTRS]: a count
 * that differs is a compile error (conflicting types). */
const tusk_topo_attr_t tusk_topo_actor_attrs[] = {
    /* Copies of the actor sharing the load. */
    {"instances", TOPO_ALL_CLASSES, false,
     {.type = TOPO_COUNT, .min = 1, .max = TUSK_MAX_INSTANCES, .expected = "a count", .has_default = true,
      .dflt = 1, KEEP(TOPO_KEEP_UNSIGNED, instances)}, .extension = EXTENSION},
    /* Distributed runs: buffers queued per link before the sender waits. */
    {"hwm", TOPO_ALL_CLASSES, false,
     {.type = TOPO_COUNT, .min = 1, .max = TUSK_MAX_HWM, .expected = "a count of buffers", .has_default = true,
      .dflt = TUSK_DEFAULT_HWM, KEEP(TOPO_KEEP_UNSIGNED, hwm)}, .extension = EXTENSION},
    /* What happens when an instance fails. */
    {"restart", TOPO_ALL_CLASSES, false,
     {.type = TOPO_CHOICE, .choices = restart_choices, .has_default = true, .dflt = 0,
      KEEP(TOPO_KEEP_BOOL, restart)}, .extension = EXTENSION},
    {"on_failure", TOPO_ALL_CLASSES, false,
     {.type = TOPO_CHOICE, .choices = on_failure_choices, .has_default = true, .dflt = 0,
      KEEP(TOPO_KEEP_BOOL, continue_on_failure)}, .extension = EXTENSION},
    /* Seconds one hook call may take under tusk-run before it counts as a
     * stall; absent: no limit (kept as 0). */
    {"hook_timeout", TOPO_ALL_CLASSES, false,
     {.type = TOPO_COUNT, .min = 1, .max = MAX_HOOK_TIMEOUT_S, .expected = "whole seconds",
      KEEP(TOPO_KEEP_UNSIGNED, hook_timeout_s)}, .extension = EXTENSION},
    /* NARVAL's buffer counts (its "Configuration Files" page: a producer
     * has output_buffers, a consumer input_buffers, an intermediary both):
     * accepted, ignored. */
    {"input_buffers", TOPO_CLASS(TUSK_FILTER) | TOPO_CLASS(TUSK_CONSUMER), false, COUNT_NO_MAX("a count of buffers"), NARVAL},
    {"output_buffers", TOPO_CLASS(TUSK_PRODUCER) | TOPO_CLASS(TUSK_FILTER), false,
     COUNT_NO_MAX("a count of buffers"), NARVAL},
};

/* NARVAL's names for an output buffer and a source's port: accepted, ignored. */
static const tusk_topo_attr_t output_buffer_attrs[] = {
    {"output_buffer", TOPO_ALL_CLASSES, false, TEXT, NARVAL},
};
static const tusk_topo_attr_t source_attrs[] = {
    {"source_port", TOPO_ALL_CLASSES, false, TEXT, NARVAL},
    {"source_buffer", TOPO_ALL_CLASSES, false, TEXT, NARVAL},
};
static const tusk_topo_attr_t parameter_attrs[] = {
    {"name", TOPO_ALL_CLASSES, true, {.type = TOPO_PARAM_NAME}, .extension = EXTENSION},
};

#define ATTRS(a) (a), (unsigned)(sizeof(a) / sizeof((a)[0]))
#define NO_ATTRS NULL, 0

#define WITH_OUTPUT (TOPO_CLASS(TUSK_PRODUCER) | TOPO_CLASS(TUSK_FILTER))
#define WITH_INPUT (TOPO_CLASS(TUSK_FILTER) | TOPO_CLASS(TUSK_CONSUMER))

const tusk_topo_elem_t tusk_topo_actor_elems[] = {
    /* Unique among the actors; data sources refer to it. */
    {"name", TOPO_ROLE_NAME, TOPO_ALL_CLASSES, NULL, 1, 1, NULL, false, NULL, {.type = TOPO_ACTOR_NAME},
     NO_ATTRS, NARVAL},
    /* The actor library: a bare name N (N.so on the actor search path) or
     * a path with a '/' (relative to the topology file). */
    {"binary_code", TOPO_ROLE_LIBRARY, TOPO_ALL_CLASSES, NULL, 1, 1, "which actor library to run", false,
     "which actor library to run", TEXT, NO_ATTRS, NARVAL},
    /* Where the actor runs. */
    {"hostname", TOPO_ROLE_HOSTNAME, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, false, NULL,
     {.type = TOPO_TEXT, .dflt_text = "localhost"}, NO_ATTRS, NARVAL},
    /* NARVAL's debug level, passed on as is. */
    {"debug", TOPO_ROLE_DEBUG, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, true, NULL, TEXT, NO_ATTRS, NARVAL},
    /* <parameter name="KEY">VALUE</parameter>: a line "KEY = VALUE" of
     * the actor's parameters.conf; one line. */
    {"parameter", TOPO_ROLE_PARAMETER, TOPO_ALL_CLASSES, NULL, 0, TOPO_MANY, NULL, true, NULL, TEXT,
     ATTRS(parameter_attrs), .extension = EXTENSION},
    {"output_buffer_name", TOPO_ROLE_NARVAL_ONLY, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, true, NULL, TEXT,
     NO_ATTRS, NARVAL},
    /* NARVAL's port type of the output buffer: kept, not acted on (tusk
     * chooses ipc or tcp itself). */
    {"port", TOPO_ROLE_PORT, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, false, NULL,
     {.type = TOPO_CHOICE, .choices = port_choices}, ATTRS(output_buffer_attrs), NARVAL},
    /* NARVAL's log level (info, debug, ...), like <debug>: kept as is. */
    {"log_level", TOPO_ROLE_LOG_LEVEL, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, true, NULL, TEXT, NO_ATTRS, NARVAL},
    /* tusk: the interface or address the actor's inputs bind to in a
     * distributed run. */
    {"address", TOPO_ROLE_ADDRESS, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, false, NULL, TEXT, NO_ATTRS,
     .extension = EXTENSION},
    /* tusk: the actor's own configuration folder, given to process_config
     * (relative to the topology's folder). */
    {"config_dir", TOPO_ROLE_CONFIG_DIR, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, false, NULL, TEXT, NO_ATTRS,
     .extension = EXTENSION},
    /* The output buffer's bytes (a consumer has no output, so no size). */
    {"size", TOPO_ROLE_SIZE, WITH_OUTPUT, "it has no output", 0, 1, NULL, false, NULL,
     {.type = TOPO_COUNT, .min = TUSK_MIN_BUFFER_SIZE, .max = TUSK_MAX_BUFFER_SIZE, .expected = "a byte count",
      .grouped = true, .has_default = true, .dflt = TUSK_DEFAULT_BUFFER_SIZE, KEEP(TOPO_KEEP_U32, buffer_size)},
     ATTRS(output_buffer_attrs), NARVAL},
    /* The name of an actor whose output this one reads. */
    {"data_source", TOPO_ROLE_SOURCE, WITH_INPUT, "it has no input", 1, TOPO_MANY,
     "it reads at least one actor", false, "name the actor to read", {.type = TOPO_ACTOR_NAME},
     ATTRS(source_attrs), NARVAL},
};
