/* topology_spec.h - the one specification of what a topology file holds
 * (internal to libtusk, not installed).
 *
 * Every attribute and child element of the three actor elements
 * (<producer>, <intermediary>, <consumer>) with its type, range, default,
 * whether it is required and in which classes it may appear. The loader
 * (topology.c) checks a file by walking this table, and fills the actor
 * specs from it (defaults included); tests/check_topology.c reads
 * config/topology.rng, the RelaxNG schema embedded into libtusk, and
 * checks that it says the same: the same attributes and elements in each
 * class, the same types, ranges, defaults (as a:defaultValue annotations)
 * and required-ness, and which are tusk's extensions of NARVAL's format
 * (t:extension="true"). So a rule is changed here, in the schema next to
 * it, and the test tells when the two part.
 *
 * Only data: no libxml2, no state. The checks of meaning (unique names,
 * sources that exist, no cycles) stay in topology.c.
 */
#ifndef TUSK_TOPOLOGY_SPEC_H
#define TUSK_TOPOLOGY_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "tusk/topology.h"

/* A set of actor classes. */
#define TOPO_CLASS(c) (1u << (unsigned)(c))
#define TOPO_ALL_CLASSES (TOPO_CLASS(TUSK_PRODUCER) | TOPO_CLASS(TUSK_FILTER) | TOPO_CLASS(TUSK_CONSUMER))
/* An element that may appear any number of times. */
#define TOPO_MANY 0u
/* A count without an upper bound. */
#define TOPO_NO_MAX (~0ull)

enum tusk_topo_type {
    TOPO_TEXT,       /* any text (NARVAL's, passed on or ignored) */
    TOPO_COUNT,      /* decimal digits, an optional '+' (as xsd integers), in [min, max];
                        with `grouped`, digits may also be grouped by single '_' (NARVAL's
                        1_000_000: an Ada numeral) */
    TOPO_CHOICE,     /* one of `choices` */
    TOPO_ACTOR_NAME, /* an actor name (config/README.md, "Actor names") */
    TOPO_PARAM_NAME  /* a parameter name: letters, digits, '_', '-', '.' */
};

/* Where a value goes in the actor's tusk_actor_spec_t, at `offset`. */
enum tusk_topo_keep {
    TOPO_IGNORED,       /* NARVAL's: accepted and checked, not kept */
    TOPO_KEEP_UNSIGNED, /* an unsigned */
    TOPO_KEEP_U32,      /* a uint32_t */
    TOPO_KEEP_BOOL      /* a choice: true for every choice but the first */
};

typedef struct tusk_topo_value {
    enum tusk_topo_type type;
    unsigned long long min, max;  /* TOPO_COUNT: the range; max TOPO_NO_MAX for none */
    const char *const *choices;   /* TOPO_CHOICE: NULL-terminated */
    const char *expected;         /* TOPO_COUNT: what a good value is, in messages ("a count of buffers") */
    bool grouped;                 /* TOPO_COUNT: 1_000_000 allowed (the schema's grouped_count.type) */
    bool has_default;             /* the value when absent: */
    unsigned long long dflt;      /*   a count, or the index of a choice */
    const char *dflt_text;        /* TOPO_TEXT: the text when absent (NULL: none) */
    enum tusk_topo_keep keep;
    size_t offset;                /* in tusk_actor_spec_t, unless TOPO_IGNORED */
} tusk_topo_value_t;

typedef struct tusk_topo_attr {
    const char *name;
    unsigned classes; /* on an actor element: the classes that may carry it */
    bool required;
    tusk_topo_value_t value;
    bool extension;   /* tusk's, not NARVAL's (the schema's t:extension="true") */
} tusk_topo_attr_t;

/* What the loader does with a child element. */
enum tusk_topo_role {
    TOPO_ROLE_NAME,        /* the actor's name */
    TOPO_ROLE_LIBRARY,     /* <binary_code> */
    TOPO_ROLE_HOSTNAME,
    TOPO_ROLE_DEBUG,
    TOPO_ROLE_PARAMETER,   /* key (attribute), value (text) */
    TOPO_ROLE_SOURCE,      /* a <data_source> */
    TOPO_ROLE_SIZE,        /* the output buffer's bytes */
    TOPO_ROLE_PORT,        /* NARVAL's port type (fifo, eth0, ...): kept, not acted on */
    TOPO_ROLE_LOG_LEVEL,   /* NARVAL's log level: kept, not acted on */
    TOPO_ROLE_ADDRESS,     /* tusk: the interface or address the inputs bind to */
    TOPO_ROLE_CONFIG_DIR,  /* tusk: the actor's own configuration folder */
    TOPO_ROLE_NARVAL_ONLY  /* accepted, ignored */
};

typedef struct tusk_topo_elem {
    const char *name;
    enum tusk_topo_role role;
    unsigned classes;           /* the actor classes it may appear in */
    const char *not_here;       /* in the other classes: why not ("it has no output") */
    unsigned min, max;          /* occurrences in an actor of those classes (max TOPO_MANY: any) */
    const char *missing;        /* min > 0: what it is for, said when it is missing (or NULL) */
    bool may_be_empty;          /* the text may be empty */
    const char *empty;          /* !may_be_empty: what to write there, said when empty (or NULL) */
    tusk_topo_value_t content;  /* the text */
    const tusk_topo_attr_t *attrs;
    unsigned n_attrs;
    bool extension;             /* tusk's, not NARVAL's (the schema's t:extension="true") */
} tusk_topo_elem_t;

/* The root element; it has no attributes. */
#define TOPO_ROOT "configuration"

/* The attributes of the actor elements, then their child elements, in the
 * order the loader checks them. */
#define TUSK_TOPO_N_ACTOR_ATTRS 7
#define TUSK_TOPO_N_ACTOR_ELEMS 12
extern const tusk_topo_attr_t tusk_topo_actor_attrs[TUSK_TOPO_N_ACTOR_ATTRS];
extern const tusk_topo_elem_t tusk_topo_actor_elems[TUSK_TOPO_N_ACTOR_ELEMS];

#endif
