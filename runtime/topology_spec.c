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

#define COUNT_NO_MAX(what) {.type = TOPO_COUNT, .min = 0, .max = TOPO_NO_MAX, .expected = (what)}
#define TEXT {.type = TOPO_TEXT}

/* Defined with [] against the header's [TUSK_TOPO_N_ACTOR_ATTRS]: a count
 * that differs is a compile error (conflicting types). */
const tusk_topo_attr_t tusk_topo_actor_attrs[] = {
    /* Copies of the actor sharing the load. */
    {"instances", TOPO_ALL_CLASSES, false,
     {.type = TOPO_COUNT, .min = 1, .max = TUSK_MAX_INSTANCES, .expected = "a count", .has_default = true,
      .dflt = 1, KEEP(TOPO_KEEP_UNSIGNED, instances)}},
    /* Distributed runs: buffers queued per link before the sender waits. */
    {"hwm", TOPO_ALL_CLASSES, false,
     {.type = TOPO_COUNT, .min = 1, .max = TUSK_MAX_HWM, .expected = "a count of buffers", .has_default = true,
      .dflt = TUSK_DEFAULT_HWM, KEEP(TOPO_KEEP_UNSIGNED, hwm)}},
    /* What happens when an instance fails. */
    {"restart", TOPO_ALL_CLASSES, false,
     {.type = TOPO_CHOICE, .choices = restart_choices, .has_default = true, .dflt = 0,
      KEEP(TOPO_KEEP_BOOL, restart)}},
    {"on_failure", TOPO_ALL_CLASSES, false,
     {.type = TOPO_CHOICE, .choices = on_failure_choices, .has_default = true, .dflt = 0,
      KEEP(TOPO_KEEP_BOOL, continue_on_failure)}},
    /* Seconds one hook call may take under tusk-run before it counts as a
     * stall; absent: no limit (kept as 0). */
    {"hook_timeout", TOPO_ALL_CLASSES, false,
     {.type = TOPO_COUNT, .min = 1, .max = MAX_HOOK_TIMEOUT_S, .expected = "whole seconds",
      KEEP(TOPO_KEEP_UNSIGNED, hook_timeout_s)}},
    /* NARVAL's buffer counts of a filter: accepted, ignored. */
    {"input_buffers", TOPO_CLASS(TUSK_FILTER), false, COUNT_NO_MAX("a count of buffers")},
    {"output_buffers", TOPO_CLASS(TUSK_FILTER), false, COUNT_NO_MAX("a count of buffers")},
};

/* NARVAL's names for an output buffer and a source's port: accepted, ignored. */
static const tusk_topo_attr_t output_buffer_attrs[] = {
    {"output_buffer", TOPO_ALL_CLASSES, false, TEXT},
};
static const tusk_topo_attr_t source_attrs[] = {
    {"source_port", TOPO_ALL_CLASSES, false, TEXT},
    {"source_buffer", TOPO_ALL_CLASSES, false, TEXT},
};
static const tusk_topo_attr_t parameter_attrs[] = {
    {"name", TOPO_ALL_CLASSES, true, {.type = TOPO_PARAM_NAME}},
};

#define ATTRS(a) (a), (unsigned)(sizeof(a) / sizeof((a)[0]))
#define NO_ATTRS NULL, 0

#define WITH_OUTPUT (TOPO_CLASS(TUSK_PRODUCER) | TOPO_CLASS(TUSK_FILTER))
#define WITH_INPUT (TOPO_CLASS(TUSK_FILTER) | TOPO_CLASS(TUSK_CONSUMER))

const tusk_topo_elem_t tusk_topo_actor_elems[] = {
    /* Unique among the actors; data sources refer to it. */
    {"name", TOPO_ROLE_NAME, TOPO_ALL_CLASSES, NULL, 1, 1, NULL, false, NULL, {.type = TOPO_ACTOR_NAME},
     NO_ATTRS},
    /* The actor library: a bare name N (N.so on the actor search path) or
     * a path with a '/' (relative to the topology file). */
    {"binary_code", TOPO_ROLE_LIBRARY, TOPO_ALL_CLASSES, NULL, 1, 1, "which actor library to run", false,
     "which actor library to run", TEXT, NO_ATTRS},
    /* Where the actor runs. */
    {"hostname", TOPO_ROLE_HOSTNAME, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, false, NULL,
     {.type = TOPO_TEXT, .dflt_text = "localhost"}, NO_ATTRS},
    /* NARVAL's debug level, passed on as is. */
    {"debug", TOPO_ROLE_DEBUG, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, true, NULL, TEXT, NO_ATTRS},
    /* <parameter name="KEY">VALUE</parameter>: a line "KEY = VALUE" of
     * the actor's parameters.conf; one line. */
    {"parameter", TOPO_ROLE_PARAMETER, TOPO_ALL_CLASSES, NULL, 0, TOPO_MANY, NULL, true, NULL, TEXT,
     ATTRS(parameter_attrs)},
    {"output_buffer_name", TOPO_ROLE_NARVAL_ONLY, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, true, NULL, TEXT,
     NO_ATTRS},
    /* NARVAL's network port: the interface or address the actor's inputs
     * bind to in a distributed run. */
    {"port", TOPO_ROLE_PORT, TOPO_ALL_CLASSES, NULL, 0, 1, NULL, false, NULL, TEXT, ATTRS(output_buffer_attrs)},
    /* The output buffer's bytes (a consumer has no output, so no size). */
    {"size", TOPO_ROLE_SIZE, WITH_OUTPUT, "it has no output", 0, 1, NULL, false, NULL,
     {.type = TOPO_COUNT, .min = TUSK_MIN_BUFFER_SIZE, .max = TUSK_MAX_BUFFER_SIZE, .expected = "a byte count",
      .has_default = true, .dflt = TUSK_DEFAULT_BUFFER_SIZE, KEEP(TOPO_KEEP_U32, buffer_size)},
     ATTRS(output_buffer_attrs)},
    /* The name of an actor whose output this one reads. */
    {"data_source", TOPO_ROLE_SOURCE, WITH_INPUT, "it has no input", 1, TOPO_MANY,
     "it reads at least one actor", false, "name the actor to read", {.type = TOPO_ACTOR_NAME},
     ATTRS(source_attrs)},
};
