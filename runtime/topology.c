/* topology.c - load, validate and order a topology file (see topology.h).
 *
 * Loading runs in four steps, each reporting the first problem as
 * "FILE:LINE: <element> 'actor': what is wrong":
 *   1. parse the XML (no network, no DTD, no entities: a <!DOCTYPE> stops
 *      the parser at once, so hostile files cannot pull in other files);
 *   2. read the actors by the one table of what an actor element holds
 *      (topology_spec.c: attributes and child elements, types, ranges,
 *      defaults, required-ness, classes), checking structure and values
 *      with messages a person can act on ("bad size", "missing <name>",
 *      ...) and filling the specs, defaults included;
 *   3. validate against the embedded RelaxNG schema (config/topology.rng),
 *      which says what the table says (a test compares the two) and also
 *      sees what the walk does not (namespaces): nothing it refuses loads.
 *      Its messages (libxml2's) are vaguer, so when both steps complain
 *      about the same actor, step 2's message is the one reported;
 *   4. semantic checks: unique names, existing sources with an output, no
 *      cycle, every output read. Then order the actors so that each comes
 *      after its sources (file order among independent ones).
 *
 * The library keeps no global state: errors go to per-context handlers,
 * never to libxml2's global ones.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "base/textfile.h"
#include "topology_spec.h"
#include "tusk/params.h"
#include "tusk/topology.h"
#include "tusk_private.h"

#ifndef TUSK_ACTORDIR
#define TUSK_ACTORDIR "/usr/local/lib/tusk/actors"
#endif

/* Generated from config/topology.rng by tools/embed-text.sh. */
extern const char tusk_topology_schema[];
extern const unsigned long tusk_topology_schema_size;

/* libxml2 2.12 made the structured handler's error const. */
#if LIBXML_VERSION >= 21200
typedef const xmlError *xml_error_t;
#else
typedef xmlErrorPtr xml_error_t;
#endif

#define MAX_TOPOLOGY_BYTES (16u << 20)

typedef struct actor {
    tusk_actor_spec_t spec; /* the public view; first so a spec is an actor */
    char *name, *hostname, *library, *library_path, *debug, *interface;
    char *port, *log_level;
    char *config_text; /* <config_dir> as written */
    char *config_dir;  /* ... from the topology's folder */
    int config_line;
    /* A generic actor's "set library": as written, the script's folder
     * (NULL: none), and where it was said, for messages. */
    char *narval_library, *narval_dir, *narval_where;
    unsigned n_params;
    char **keys, **values;
    int *param_lines;
    unsigned *sources, *sinks;
    /* While loading: the <data_source> names, lines, and actors (file index). */
    unsigned n_src, cap_src;
    char **src_names;
    int *src_lines;
    unsigned *src_file;
    const char *shown; /* while reading: the unchecked <name>, for messages */
    unsigned file_index;
    int line;
} actor_t;

struct tusk_topology {
    char *name; /* the file name as given */
    char *dir;  /* its folder, NULL for the current one */
    unsigned n;
    actor_t *actors; /* dependency order */
};

static const unsigned no_indices[1];
static const char *const no_strings[1];

/* ---- messages ---------------------------------------------------------- */

static const char *const class_names[] = {"producer", "intermediary", "consumer"};

const char *tusk_actor_class_name(tusk_actor_class_t actor_class)
{
    if ((unsigned)actor_class < 3)
        return class_names[actor_class];
    return "unknown";
}

/* Messages quote what the file says: keep them on one line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

/* "FILE:LINE: <elem> 'actor': what" into err; parts that are NULL or 0 are
 * left out. */
static int fail(tusk_error_t *err, int code, const char *file, int line, const char *elem,
                const char *actor, const char *fmt, ...) TUSK_PRINTF(7, 8);
static int fail(tusk_error_t *err, int code, const char *file, int line, const char *elem,
                const char *actor, const char *fmt, ...)
{
    char what[TUSK_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);

    char where[TUSK_ERROR_MESSAGE_MAX];
    size_t n = 0;
    int w = snprintf(where, sizeof where, "%.300s", file ? file : "(topology)");
    n = w > 0 ? (size_t)w : 0;
    if (line > 0 && n < sizeof where) {
        w = snprintf(where + n, sizeof where - n, ":%d", line);
        n += w > 0 ? (size_t)w : 0;
    }
    if (elem && n < sizeof where) {
        w = snprintf(where + n, sizeof where - n, ": <%.40s>", elem);
        n += w > 0 ? (size_t)w : 0;
    }
    if (actor && *actor && n < sizeof where)
        snprintf(where + n, sizeof where - n, " '%.80s'", actor);
    if (!err)
        return code;
    tusk_error_set(err, code, "%s: %s", where, what);
    one_line(err->message);
    return code;
}

static int out_of_memory(tusk_error_t *err)
{
    return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
}

/* ---- small string helpers -------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A malloc'd copy of s without surrounding whitespace. */
static char *trimmed(const char *s)
{
    while (is_space(*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && is_space(s[len - 1]))
        len--;
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* The element's text (all descendants), trimmed; NULL when out of memory. */
static char *node_text(xmlNodePtr node)
{
    xmlChar *raw = xmlNodeGetContent(node);
    char *t = trimmed(raw ? (const char *)raw : "");
    xmlFree(raw);
    return t;
}

/* Attribute value trimmed; NULL when absent. *oom set when out of memory. */
static char *attr_text(xmlNodePtr node, const char *attr, bool *oom)
{
    xmlChar *raw = xmlGetProp(node, BAD_CAST attr);
    if (!raw)
        return NULL;
    char *t = trimmed((const char *)raw);
    xmlFree(raw);
    if (!t)
        *oom = true;
    return t;
}

/* Actor names, one rule for tusk-emulate and tusk-run (config/README.md,
 * "Actor names"): at most ACTOR_NAME_MAX characters; parts of letters,
 * digits, '_' and '-', each starting with a letter or '_', joined by
 * single dots. Instance K of actor NAME is "NAME.K" in the emulator's work
 * folder and tusk-run's run folder (configuration folder, log, ZeroMQ
 * identity) and tusk-run's ipc sockets are "a<actor>.<instance>.<input>"
 * there: as no part of a name starts with a digit, "NAME.K" reads one way
 * only and is never a socket's name (an actor "a1.0" was: its folder
 * "a1.0.0" is the socket of actor 1). Returns whether `s` is one; if not,
 * `why` says what is wrong. */
#define ACTOR_NAME_MAX 64
#define ACTOR_NAME_RULE                                                                                    \
    "an actor name is parts of letters, digits, '_' and '-', each starting with a letter or '_', joined by " \
    "single dots"

static bool actor_name_valid(const char *s, char *why, size_t n)
{
    size_t len = strlen(s);
    if (len == 0) {
        snprintf(why, n, "empty");
        return false;
    }
    if (len > ACTOR_NAME_MAX) {
        snprintf(why, n, "%zu characters, at most %u", len, ACTOR_NAME_MAX);
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        bool part_start = i == 0 || s[i - 1] == '.';
        if (!letter && !digit && c != '-' && c != '.') {
            if (c >= ' ' && c < 0x7f)
                snprintf(why, n, "'%c' is not allowed (%s)", c, ACTOR_NAME_RULE);
            else
                snprintf(why, n, "character 0x%02x is not allowed (%s)", c, ACTOR_NAME_RULE);
            return false;
        }
        if (part_start && !letter) {
            if (i == 0)
                snprintf(why, n, "it starts with '%c' (%s)", c, ACTOR_NAME_RULE);
            else if (c == '.')
                snprintf(why, n, "two dots in a row (%s)", ACTOR_NAME_RULE);
            else
                snprintf(why, n, "'%c' after a dot: instance K of NAME is NAME.K in run folders, so a part "
                         "must start with a letter or '_' (%s)", c, ACTOR_NAME_RULE);
            return false;
        }
    }
    if (s[len - 1] == '.') {
        snprintf(why, n, "it ends with a dot (%s)", ACTOR_NAME_RULE);
        return false;
    }
    return true;
}

/* Parameter names: letters, digits, '_', '-', '.' (as params.c). */
static bool name_valid(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* Decimal digits (an optional '+', as xsd integers allow), with `grouped`
 * also grouped by single underscores between digits (an Ada numeral, as
 * NARVAL writes sizes: 1_000_000); false when not a number, *value
 * saturates at ULLONG_MAX. */
static bool parse_count(const char *s, bool grouped, unsigned long long *value)
{
    if (*s == '+')
        s++;
    if (!*s)
        return false;
    const char *first = s;
    unsigned long long v = 0;
    for (; *s; s++) {
        if (*s == '_' && grouped && s > first && s[-1] != '_' && s[1] >= '0' && s[1] <= '9')
            continue;
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        v = v > (ULLONG_MAX - d) / 10 ? ULLONG_MAX : v * 10 + d;
    }
    *value = v;
    return true;
}

static bool elem_is(xmlNodePtr node, const char *name)
{
    return node->type == XML_ELEMENT_NODE && strcmp((const char *)node->name, name) == 0;
}

static int line_of(xmlNodePtr node)
{
    long l = xmlGetLineNo(node);
    return l > 0 && l < 0x7fffffff ? (int)l : 0;
}

static int class_of(xmlNodePtr node)
{
    for (int c = 0; c < 3; c++)
        if (elem_is(node, class_names[c]))
            return c;
    return -1;
}

/* Text of the actor element's first <name>, for messages (may be NULL). */
static char *display_name(xmlNodePtr actor)
{
    for (xmlNodePtr c = actor->children; c; c = c->next)
        if (elem_is(c, "name"))
            return node_text(c);
    return NULL;
}

/* ---- the specification (topology_spec.h) ---------------------------------- */

/* The attribute `name` among attrs for an element of class cls (attrs of
 * child elements list every class); NULL when it may not be there. */
static const tusk_topo_attr_t *spec_attr(const tusk_topo_attr_t *attrs, unsigned n, const char *name, int cls)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(attrs[i].name, name) == 0 && (attrs[i].classes & TOPO_CLASS(cls)))
            return &attrs[i];
    return NULL;
}

static const tusk_topo_elem_t *spec_elem(const char *name)
{
    for (unsigned i = 0; i < TUSK_TOPO_N_ACTOR_ELEMS; i++)
        if (strcmp(tusk_topo_actor_elems[i].name, name) == 0)
            return &tusk_topo_actor_elems[i];
    return NULL;
}

/* The first attribute of node the spec does not allow there, or NULL. */
static const char *bad_attr(xmlNodePtr node, const tusk_topo_attr_t *attrs, unsigned n, int cls)
{
    for (xmlAttrPtr a = node->properties; a; a = a->next)
        if (a->ns || !spec_attr(attrs, n, (const char *)a->name, cls))
            return (const char *)a->name;
    return NULL;
}

/* Check `text` against v: true with *out (a count, or a choice's index),
 * or false with what was expected in `why`. Names are checked by their
 * roles, with their own messages. */
static bool value_check(const tusk_topo_value_t *v, const char *text, unsigned long long *out, char *why, size_t n)
{
    *out = 0;
    switch (v->type) {
    case TOPO_COUNT:
        if (parse_count(text, v->grouped, out) && *out >= v->min && *out <= v->max)
            return true;
        if (v->max == TOPO_NO_MAX)
            snprintf(why, n, "expected %s, %llu or more", v->expected, v->min);
        else
            snprintf(why, n, "expected %s in [%llu, %llu]", v->expected, v->min, v->max);
        return false;
    case TOPO_CHOICE: {
        unsigned k = 0;
        for (; v->choices[k]; k++)
            if (strcmp(text, v->choices[k]) == 0) {
                *out = k;
                return true;
            }
        size_t used = 0;
        int w = snprintf(why, n, "expected");
        used = w > 0 ? (size_t)w : 0;
        for (unsigned i = 0; i < k && used < n; i++) {
            w = snprintf(why + used, n - used, "%s'%s'", i == 0 ? " " : i + 1 < k ? ", " : " or ", v->choices[i]);
            used += w > 0 ? (size_t)w : 0;
        }
        return false;
    }
    default:
        return true;
    }
}

/* Store a checked value into the actor's spec. */
static void value_keep(tusk_actor_spec_t *spec, const tusk_topo_value_t *v, unsigned long long x)
{
    char *field = (char *)spec + v->offset;
    switch (v->keep) {
    case TOPO_KEEP_UNSIGNED: {
        unsigned u = (unsigned)x;
        memcpy(field, &u, sizeof u);
        break;
    }
    case TOPO_KEEP_U32: {
        uint32_t u = (uint32_t)x;
        memcpy(field, &u, sizeof u);
        break;
    }
    case TOPO_KEEP_BOOL: {
        bool b = x != 0;
        memcpy(field, &b, sizeof b);
        break;
    }
    case TOPO_IGNORED:
        break;
    }
}

/* Text other than blanks (where only elements belong). */
static bool stray_text(xmlNodePtr node)
{
    if ((node->type != XML_TEXT_NODE && node->type != XML_CDATA_SECTION_NODE) || !node->content)
        return false;
    for (const xmlChar *p = node->content; *p; p++)
        if (!is_space((char)*p))
            return true;
    return false;
}

/* Line where a stray text starts: libxml2 gives a text node the line
 * where it ends, so step back over the newlines after its first word. */
static int text_line(xmlNodePtr text)
{
    int line = line_of(text);
    const xmlChar *p = text->content;
    while (p && *p && is_space((char)*p))
        p++;
    for (; p && *p; p++)
        line -= *p == '\n';
    return line > 0 ? line : 1;
}

/* ---- step 1: parsing --------------------------------------------------- */

typedef struct parse_state {
    bool failed;
    bool doctype;
    int line;
    char message[512];
} parse_state_t;

static void keep_first(parse_state_t *st, int line, const char *message)
{
    if (st->failed)
        return;
    st->failed = true;
    st->line = line;
    snprintf(st->message, sizeof st->message, "%s", message ? message : "not well-formed XML");
    size_t len = strlen(st->message);
    while (len > 0 && is_space(st->message[len - 1]))
        st->message[--len] = '\0';
}

/* The parser context's structured handler: only the first error counts
 * (the rest are usually consequences of it). */
static void on_parse_error(void *data, xml_error_t e)
{
    xmlParserCtxtPtr ctxt = data;
    if (!ctxt || !ctxt->_private || !e || e->level < XML_ERR_ERROR)
        return;
    keep_first(ctxt->_private, e->line, e->message);
}

/* A <!DOCTYPE> could declare entities that read other files or expand
 * without bound: topologies have no use for one, so stop right there. */
static void on_doctype(void *data, const xmlChar *name, const xmlChar *external_id, const xmlChar *system_id)
{
    (void)name;
    (void)external_id;
    (void)system_id;
    xmlParserCtxtPtr ctxt = data;
    int line = ctxt->input ? ctxt->input->line : 0;
    parse_state_t *st = ctxt->_private;
    if (!st->failed)
        st->doctype = true;
    keep_first(st, line, "<!DOCTYPE> is not allowed in a topology (no DTDs, no entities)");
    xmlStopParser(ctxt);
}

static int parse_xml(xmlDocPtr *doc, const char *xml, size_t size, const char *file, tusk_error_t *err)
{
    *doc = NULL;
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return out_of_memory(err);
    parse_state_t st = {0};
    ctxt->_private = &st;
    ctxt->sax->serror = on_parse_error;
    ctxt->sax->internalSubset = on_doctype;
    /* No network, no DTD loading, no entity substitution, no output.
     * Topologies are UTF-8: the encoding declaration is ignored, because
     * libxml2's converters report failures on stderr, past our handler. */
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES |
                  XML_PARSE_IGNORE_ENC;
    xmlDocPtr d = xmlCtxtReadMemory(ctxt, xml, (int)size, NULL, "UTF-8", options);
    xmlFreeParserCtxt(ctxt);
    if (st.failed || !d || !xmlDocGetRootElement(d)) {
        if (d)
            xmlFreeDoc(d);
        if (!st.failed)
            keep_first(&st, 0, "no document element");
        return fail(err, TUSK_ETOPOLOGY, file, st.line, NULL, NULL, "%s%s%s", st.doctype ? "" : "not well-formed XML: ",
                    st.message, strstr(st.message, "UTF-8") ? " (a topology must be UTF-8)" : "");
    }
    *doc = d;
    return TUSK_OK;
}

/* ---- step 3: the schema -------------------------------------------------- */

#define SCHEMA_MESSAGES 3

typedef struct schema_state {
    int count;
    int line;
    xmlNodePtr node;
    char message[SCHEMA_MESSAGES][256];
} schema_state_t;

/* Keep the first few distinct messages: libxml2 follows the real one
 * with consequences ("Element x failed to validate content"). */
static void on_schema_error(void *data, xml_error_t e)
{
    schema_state_t *st = data;
    if (!e || e->level < XML_ERR_ERROR)
        return;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", e->message ? e->message : "schema violation");
    size_t len = strlen(msg);
    while (len > 0 && is_space(msg[len - 1]))
        msg[--len] = '\0';
    if (st->count == 0) {
        st->node = e->node;
        st->line = st->node ? line_of(st->node) : 0;
        if (st->line == 0)
            st->line = e->line;
    }
    for (int i = 0; i < st->count && i < SCHEMA_MESSAGES; i++)
        if (strcmp(st->message[i], msg) == 0)
            return;
    if (st->count < SCHEMA_MESSAGES)
        memcpy(st->message[st->count], msg, sizeof msg);
    st->count++;
}

/* Index of the <configuration> child holding node; INT_MAX for the root
 * itself (the problem could be anywhere in it). */
static int top_index(xmlNodePtr root, xmlNodePtr node)
{
    if (node == root)
        return INT_MAX;
    while (node && node->parent != root)
        node = node->parent;
    if (!node)
        return INT_MAX;
    int k = 0;
    for (xmlNodePtr c = node->prev; c; c = c->prev)
        k += c->type == XML_ELEMENT_NODE;
    return k;
}

/* Validate doc; on failure fill err and *top (see top_index). */
static int check_schema(xmlDocPtr doc, const char *file, tusk_error_t *err, int *top)
{
    schema_state_t st = {0};
    *top = -1;
    xmlRelaxNGParserCtxtPtr pctxt = xmlRelaxNGNewMemParserCtxt(tusk_topology_schema, (int)tusk_topology_schema_size);
    if (!pctxt)
        return out_of_memory(err);
    xmlRelaxNGSetParserStructuredErrors(pctxt, on_schema_error, &st);
    xmlRelaxNGPtr schema = xmlRelaxNGParse(pctxt);
    xmlRelaxNGFreeParserCtxt(pctxt);
    if (!schema)
        return tusk_error_set(err, TUSK_ETOPOLOGY, "internal error: the embedded topology schema does not compile: %s",
                              st.count ? st.message[0] : "unknown reason");
    memset(&st, 0, sizeof st);
    int rc = TUSK_OK;
    xmlRelaxNGValidCtxtPtr vctxt = xmlRelaxNGNewValidCtxt(schema);
    if (!vctxt) {
        rc = out_of_memory(err);
    } else {
        xmlRelaxNGSetValidStructuredErrors(vctxt, on_schema_error, &st);
        int v = xmlRelaxNGValidateDoc(vctxt, doc);
        xmlRelaxNGFreeValidCtxt(vctxt);
        if (v != 0) {
            xmlNodePtr root = xmlDocGetRootElement(doc);
            xmlNodePtr actor = st.node;
            while (actor && actor->parent != root)
                actor = actor->parent;
            if (actor && class_of(actor) < 0)
                actor = NULL;
            /* The element at fault when it is not the actor itself. */
            xmlNodePtr at = st.node;
            while (at && at->type != XML_ELEMENT_NODE)
                at = at->parent;
            const char *elem = actor ? (const char *)actor->name : at ? (const char *)at->name : NULL;
            char what[TUSK_ERROR_MESSAGE_MAX];
            int w0 = at && actor && at != actor
                         ? snprintf(what, sizeof what, "schema violation in <%.40s>", (const char *)at->name)
                         : snprintf(what, sizeof what, "schema violation");
            size_t n = w0 > 0 ? (size_t)w0 : 0;
            for (int i = 0; i < st.count && i < SCHEMA_MESSAGES; i++) {
                int w = snprintf(what + n, sizeof what - n, "%s%s", i ? "; " : ": ", st.message[i]);
                if (w < 0 || (size_t)w >= sizeof what - n)
                    break;
                n += (size_t)w;
            }
            /* Name the actor the offending node belongs to. */
            char *name = actor ? display_name(actor) : NULL;
            /* Without a node it cannot be placed: let step 2 speak first. */
            *top = st.node ? top_index(root, st.node) : INT_MAX;
            rc = fail(err, TUSK_ETOPOLOGY, file, st.line, elem, name, "%s", what);
            free(name);
        }
    }
    xmlRelaxNGFree(schema);
    return rc;
}

/* ---- step 2: reading the actors ------------------------------------------ */

typedef struct loader {
    const char *file;
    tusk_error_t *err;
    int line; /* of the error reported */
    int top;  /* index of the <configuration> child it is in, -1: the root */
} loader_t;

static void actor_free(actor_t *a)
{
    free(a->name);
    free(a->hostname);
    free(a->interface);
    free(a->port);
    free(a->log_level);
    free(a->config_text);
    free(a->config_dir);
    free(a->narval_library);
    free(a->narval_dir);
    free(a->narval_where);
    free(a->library);
    free(a->library_path);
    free(a->debug);
    for (unsigned i = 0; i < a->n_params; i++) {
        free(a->keys[i]);
        free(a->values[i]);
    }
    free(a->keys);
    free(a->values);
    free(a->param_lines);
    free(a->sources);
    free(a->sinks);
    for (unsigned i = 0; i < a->n_src; i++)
        free(a->src_names[i]);
    free(a->src_names);
    free(a->src_lines);
    free(a->src_file);
}

/* An error about actor a at `line`. */
static int actor_fail(loader_t *ld, const actor_t *a, int line, const char *fmt, ...) TUSK_PRINTF(4, 5);
static int actor_fail(loader_t *ld, const actor_t *a, int line, const char *fmt, ...)
{
    char what[TUSK_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ld->line = line;
    ld->top = (int)a->file_index;
    return fail(ld->err, TUSK_ETOPOLOGY, ld->file, line, class_names[a->spec.actor_class],
                a->name ? a->name : a->shown, "%s", what);
}

static int add_param(loader_t *ld, actor_t *a, xmlNodePtr node)
{
    int line = line_of(node);
    bool oom = false;
    char *key = attr_text(node, "name", &oom);
    if (oom)
        return out_of_memory(ld->err);
    if (!key)
        return actor_fail(ld, a, line, "<parameter> without a name attribute");
    int rc = TUSK_OK;
    if (!name_valid(key)) {
        rc = actor_fail(ld, a, line, "bad parameter name '%.80s': use letters, digits, '_', '-' and '.' only", key);
        free(key);
        return rc;
    }
    /* The host sets these for every instance (actor.h): a topology value
     * would be overwritten without a word. */
    if (tusk_params_is_host_key(key)) {
        rc = actor_fail(ld, a, line, "parameter name '%s' is reserved: the host sets actor, instance and instances",
                        key);
        free(key);
        return rc;
    }
    for (unsigned i = 0; i < a->n_params; i++)
        if (strcmp(a->keys[i], key) == 0) {
            rc = actor_fail(ld, a, line, "duplicate parameter '%s' (first at line %d)", key, a->param_lines[i]);
            free(key);
            return rc;
        }
    char *value = node_text(node);
    if (!value) {
        free(key);
        return out_of_memory(ld->err);
    }
    if (strpbrk(value, "\r\n")) {
        rc = actor_fail(ld, a, line, "parameter '%s': the value must be a single line", key);
        free(key);
        free(value);
        return rc;
    }
    /* Grow one at a time: actors have a handful of parameters. */
    unsigned n = a->n_params + 1;
    char **k = realloc(a->keys, n * sizeof *k);
    if (k)
        a->keys = k;
    char **v = k ? realloc(a->values, n * sizeof *v) : NULL;
    if (v)
        a->values = v;
    int *l = v ? realloc(a->param_lines, n * sizeof *l) : NULL;
    if (!l) {
        free(key);
        free(value);
        return out_of_memory(ld->err);
    }
    a->param_lines = l;
    a->keys[a->n_params] = key;
    a->values[a->n_params] = value;
    a->param_lines[a->n_params] = line;
    a->n_params = n;
    return TUSK_OK;
}

static int add_source(loader_t *ld, actor_t *a, xmlNodePtr node, const tusk_topo_elem_t *e)
{
    int line = line_of(node);
    char *src = node_text(node);
    if (!src)
        return out_of_memory(ld->err);
    int rc = TUSK_OK;
    char why[400];
    if (!*src)
        rc = actor_fail(ld, a, line, "empty <%s>: %s", e->name, e->empty);
    else if (!actor_name_valid(src, why, sizeof why))
        rc = actor_fail(ld, a, line, "bad data source '%.80s': %s", src, why);
    if (rc) {
        free(src);
        return rc;
    }
    if (a->n_src == a->cap_src) {
        unsigned cap = a->cap_src ? 2 * a->cap_src : 4;
        char **names = realloc(a->src_names, cap * sizeof *names);
        if (names)
            a->src_names = names;
        int *lines = names ? realloc(a->src_lines, cap * sizeof *lines) : NULL;
        if (!lines) {
            free(src);
            return out_of_memory(ld->err);
        }
        a->src_lines = lines;
        a->cap_src = cap;
    }
    a->src_names[a->n_src] = src;
    a->src_lines[a->n_src] = line;
    a->n_src++;
    return TUSK_OK;
}

/* Where the text of an element of this role goes; NULL for the roles
 * read otherwise (parameters, sources) or not kept. */
static char **text_slot(actor_t *a, enum tusk_topo_role role)
{
    switch (role) {
    case TOPO_ROLE_NAME: return &a->name;
    case TOPO_ROLE_LIBRARY: return &a->library;
    case TOPO_ROLE_HOSTNAME: return &a->hostname;
    case TOPO_ROLE_DEBUG: return &a->debug;
    case TOPO_ROLE_PORT: return &a->port;
    case TOPO_ROLE_LOG_LEVEL: return &a->log_level;
    case TOPO_ROLE_ADDRESS: return &a->interface;
    case TOPO_ROLE_CONFIG_DIR: return &a->config_text;
    default: return NULL;
    }
}

/* Check node's attributes of the spec (n of them, in table order; those
 * of class cls) and keep their values: an error at `line` for a missing
 * required one or a bad value. */
static int read_attrs(loader_t *ld, actor_t *a, xmlNodePtr node, int line, const tusk_topo_attr_t *attrs, unsigned n,
                      int cls)
{
    for (unsigned i = 0; i < n; i++) {
        const tusk_topo_attr_t *spec = &attrs[i];
        if (!(spec->classes & TOPO_CLASS(cls)))
            continue;
        bool oom = false;
        char *text = attr_text(node, spec->name, &oom);
        if (oom)
            return out_of_memory(ld->err);
        if (!text) {
            if (spec->required)
                return actor_fail(ld, a, line, "<%.40s> without a %s attribute", (const char *)node->name,
                                  spec->name);
            continue;
        }
        unsigned long long v;
        char why[300];
        int rc = TUSK_OK;
        if (value_check(&spec->value, text, &v, why, sizeof why))
            value_keep(&a->spec, &spec->value, v);
        else
            rc = actor_fail(ld, a, line, "bad %s '%.40s': %s", spec->name, text, why);
        free(text);
        if (rc)
            return rc;
    }
    return TUSK_OK;
}

/* The text of a child element of the spec e, checked and kept. */
static int read_element(loader_t *ld, actor_t *a, xmlNodePtr node, int line, const tusk_topo_elem_t *e)
{
    if (e->role == TOPO_ROLE_PARAMETER)
        return add_param(ld, a, node);
    if (e->role == TOPO_ROLE_SOURCE)
        return add_source(ld, a, node, e);
    char *t = node_text(node);
    if (!t)
        return out_of_memory(ld->err);
    unsigned long long v;
    char why[400];
    int rc = TUSK_OK;
    if (!*t && !e->may_be_empty)
        rc = actor_fail(ld, a, line, "empty <%s>%s%s", e->name, e->empty ? ": " : "", e->empty ? e->empty : "");
    else if (!value_check(&e->content, t, &v, why, sizeof why))
        rc = actor_fail(ld, a, line, "bad %s '%.40s': %s%s", e->name, t, why,
                        e->role == TOPO_ROLE_PORT ? " (NARVAL's port type; the address a tusk actor's inputs bind to "
                                                    "is <address>)"
                                                  : "");
    else if (e->content.type == TOPO_ACTOR_NAME && !actor_name_valid(t, why, sizeof why))
        rc = actor_fail(ld, a, line, "bad actor name: %s", why);
    else
        value_keep(&a->spec, &e->content, v);
    tusk_actor_class_t generic_class;
    if (rc == TUSK_OK && e->role == TOPO_ROLE_LIBRARY && tusk_topology_is_generic(t, &generic_class) &&
        generic_class != a->spec.actor_class)
        rc = actor_fail(ld, a, line, "<binary_code> %s is NARVAL's host for a C %s, not for a <%s>", t,
                        class_names[generic_class], class_names[a->spec.actor_class]);
    if (rc == TUSK_OK && e->role == TOPO_ROLE_CONFIG_DIR)
        a->config_line = line;
    char **slot = text_slot(a, e->role);
    if (rc == TUSK_OK && slot) {
        *slot = t; /* a second one was refused before */
        t = NULL;
    }
    free(t);
    return rc;
}

/* One actor element of class cls, checked against the spec
 * (topology_spec.h) in document order: its attributes, then each child
 * element, then the elements it lacks. */
static int read_actor(loader_t *ld, actor_t *a, xmlNodePtr node, tusk_actor_class_t cls)
{
    a->spec.actor_class = cls;
    a->line = line_of(node);
    /* The name first, so every message can say which actor. */
    char *shown = display_name(node);
    a->shown = shown;
    int rc = TUSK_OK;

    /* Attributes: the defaults, then what the file says. */
    for (unsigned i = 0; i < TUSK_TOPO_N_ACTOR_ATTRS; i++) {
        const tusk_topo_attr_t *spec = &tusk_topo_actor_attrs[i];
        if ((spec->classes & TOPO_CLASS(cls)) && spec->value.has_default)
            value_keep(&a->spec, &spec->value, spec->value.dflt);
    }
    const char *attr = bad_attr(node, tusk_topo_actor_attrs, TUSK_TOPO_N_ACTOR_ATTRS, (int)cls);
    if (attr)
        rc = actor_fail(ld, a, a->line, "unknown attribute '%.40s' on <%s>", attr, class_names[cls]);
    if (rc == TUSK_OK)
        rc = read_attrs(ld, a, node, a->line, tusk_topo_actor_attrs, TUSK_TOPO_N_ACTOR_ATTRS, (int)cls);

    /* Child elements. */
    unsigned seen[TUSK_TOPO_N_ACTOR_ELEMS] = {0};
    for (xmlNodePtr c = node->children; c && rc == TUSK_OK; c = c->next) {
        if (stray_text(c)) {
            char *t = node_text(c);
            rc = t ? actor_fail(ld, a, text_line(c), "unexpected text '%.20s' in <%s>: only elements belong here", t,
                                class_names[cls])
                   : out_of_memory(ld->err);
            free(t);
            break;
        }
        if (c->type != XML_ELEMENT_NODE)
            continue; /* comments, blanks */
        int line = line_of(c);
        const char *elem = (const char *)c->name;
        const tusk_topo_elem_t *e = spec_elem(elem);
        if (!e) {
            rc = actor_fail(ld, a, line, "unknown element <%.40s> in a <%s>", elem, class_names[cls]);
            break;
        }
        if (!(e->classes & TOPO_CLASS(cls))) {
            rc = actor_fail(ld, a, line, "<%s> is not allowed in a <%s>: %s", e->name, class_names[cls], e->not_here);
            break;
        }
        if ((attr = bad_attr(c, e->attrs, e->n_attrs, (int)cls)) != NULL) {
            rc = actor_fail(ld, a, line, "unknown attribute '%.40s' on <%.40s>", attr, elem);
            break;
        }
        for (xmlNodePtr g = c->children; g && rc == TUSK_OK; g = g->next)
            if (g->type == XML_ELEMENT_NODE)
                rc = actor_fail(ld, a, line_of(g), "element <%.40s> inside <%.40s>: only text belongs there",
                                (const char *)g->name, elem);
        if (rc)
            break;
        unsigned k = (unsigned)(e - tusk_topo_actor_elems);
        if (e->max != TOPO_MANY && seen[k] >= e->max) {
            rc = actor_fail(ld, a, line, "more than one <%s>", e->name);
            break;
        }
        seen[k]++;
        rc = read_attrs(ld, a, c, line, e->attrs, e->n_attrs, (int)cls);
        if (rc == TUSK_OK)
            rc = read_element(ld, a, c, line, e);
    }

    /* The elements it lacks: required ones are missing, others take their
     * defaults. */
    for (unsigned k = 0; k < TUSK_TOPO_N_ACTOR_ELEMS && rc == TUSK_OK; k++) {
        const tusk_topo_elem_t *e = &tusk_topo_actor_elems[k];
        if (!(e->classes & TOPO_CLASS(cls)) || seen[k] > 0)
            continue;
        if (e->min > 0) {
            rc = actor_fail(ld, a, a->line, "missing <%s>%s%s", e->name, e->missing ? ": " : "",
                            e->missing ? e->missing : "");
        } else {
            if (e->content.has_default)
                value_keep(&a->spec, &e->content, e->content.dflt);
            char **slot = text_slot(a, e->role);
            if (slot && e->content.dflt_text && !(*slot = tusk_strdup(e->content.dflt_text)))
                rc = out_of_memory(ld->err);
        }
    }
    /* The host writes <parameter>s into the folder it makes; an actor
     * given its own folder reads what is there instead. */
    if (rc == TUSK_OK && a->config_text && a->n_params > 0)
        rc = actor_fail(ld, a, a->param_lines[0],
                        "<parameter> with <config_dir> (line %d): an actor given its own configuration folder reads "
                        "its settings from there (put them in %s/parameters.conf), the host writes none",
                        a->config_line, a->config_text);
    a->shown = NULL;
    free(shown);
    return rc;
}

/* Read every actor in file order into *out (n of them). */
static int read_actors(loader_t *ld, xmlNodePtr root, actor_t **out, unsigned *count)
{
    *out = NULL;
    *count = 0;
    if (strcmp((const char *)root->name, "configuration") != 0) {
        ld->line = line_of(root);
        ld->top = -1;
        return fail(ld->err, TUSK_ETOPOLOGY, ld->file, ld->line, (const char *)root->name, NULL,
                    "the root element must be <configuration>");
    }
    if (root->properties) {
        ld->line = line_of(root);
        ld->top = -1;
        return fail(ld->err, TUSK_ETOPOLOGY, ld->file, ld->line, "configuration", NULL,
                    "unknown attribute '%.40s' on <configuration>", (const char *)root->properties->name);
    }
    unsigned n = 0, cap = 0;
    actor_t *actors = NULL;
    int rc = TUSK_OK;
    for (xmlNodePtr c = root->children; c && rc == TUSK_OK; c = c->next) {
        if (stray_text(c)) {
            ld->line = text_line(c);
            ld->top = (int)n;
            char *t = node_text(c);
            rc = t ? fail(ld->err, TUSK_ETOPOLOGY, ld->file, ld->line, "configuration", NULL,
                          "unexpected text '%.20s': only <producer>, <intermediary> and <consumer> belong here", t)
                   : out_of_memory(ld->err);
            free(t);
            break;
        }
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int cls = class_of(c);
        if (cls < 0) {
            ld->line = line_of(c);
            ld->top = (int)n;
            rc = fail(ld->err, TUSK_ETOPOLOGY, ld->file, ld->line, "configuration", NULL,
                      "unknown element <%.40s> (expected <producer>, <intermediary> or <consumer>)",
                      (const char *)c->name);
            break;
        }
        if (n == cap) {
            unsigned ncap = cap ? 2 * cap : 8;
            actor_t *na = realloc(actors, ncap * sizeof *na);
            if (!na) {
                rc = out_of_memory(ld->err);
                break;
            }
            actors = na;
            cap = ncap;
        }
        actor_t *a = &actors[n++];
        memset(a, 0, sizeof *a);
        a->file_index = n - 1;
        rc = read_actor(ld, a, c, (tusk_actor_class_t)cls);
    }
    if (rc == TUSK_OK && n == 0) {
        ld->line = line_of(root);
        ld->top = -1;
        rc = fail(ld->err, TUSK_ETOPOLOGY, ld->file, ld->line, "configuration", NULL,
                  "no actors: expected <producer>, <intermediary> and <consumer> elements");
    }
    if (rc) {
        for (unsigned i = 0; i < n; i++)
            actor_free(&actors[i]);
        free(actors);
        return rc;
    }
    *out = actors;
    *count = n;
    return TUSK_OK;
}

/* ---- step 4: semantics and order ------------------------------------------ */

typedef struct name_ref {
    const char *name;
    unsigned index;
} name_ref_t;

static int cmp_name_ref(const void *pa, const void *pb)
{
    const name_ref_t *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int cmp_name_only(const void *pa, const void *pb)
{
    const name_ref_t *a = pa, *b = pb;
    return strcmp(a->name, b->name);
}

/* Min-heap of file indices: Kahn's algorithm taking the earliest ready
 * actor keeps file order among independent actors. */
static void heap_push(unsigned *heap, unsigned *n, unsigned v)
{
    unsigned i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] > v) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = v;
}

static unsigned heap_pop(unsigned *heap, unsigned *n)
{
    unsigned top = heap[0], v = heap[--*n], i = 0;
    for (;;) {
        unsigned c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap[c + 1] < heap[c])
            c++;
        if (heap[c] >= v)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n > 0)
        heap[i] = v;
    return top;
}

/* Resolve every <data_source> to a file index. */
static int link_sources(loader_t *ld, actor_t *actors, unsigned n, const name_ref_t *sorted)
{
    for (unsigned i = 0; i < n; i++) {
        actor_t *a = &actors[i];
        if (a->n_src == 0)
            continue;
        if (!(a->src_file = malloc(a->n_src * sizeof *a->src_file)))
            return out_of_memory(ld->err);
        for (unsigned j = 0; j < a->n_src; j++) {
            name_ref_t key = {a->src_names[j], 0};
            const name_ref_t *hit = bsearch(&key, sorted, n, sizeof *sorted, cmp_name_only);
            if (!hit)
                return actor_fail(ld, a, a->src_lines[j], "data source '%s': unknown actor", a->src_names[j]);
            const actor_t *s = &actors[hit->index];
            if (s->spec.actor_class == TUSK_CONSUMER)
                return actor_fail(ld, a, a->src_lines[j],
                                  "data source '%s' is a consumer (line %d): it has no output to read",
                                  s->name, s->line);
            for (unsigned k = 0; k < j; k++)
                if (a->src_file[k] == hit->index)
                    return actor_fail(ld, a, a->src_lines[j], "data source '%s' is listed twice (lines %d and %d)",
                                      s->name, a->src_lines[k], a->src_lines[j]);
            a->src_file[j] = hit->index;
        }
    }
    return TUSK_OK;
}

/* Called when the sort is stuck: every actor left waits on another one
 * left, so following sources from any of them must loop. Report the loop
 * in data-flow order, from its earliest actor in the file. */
static int report_cycle(loader_t *ld, const actor_t *actors, unsigned n, const bool *placed)
{
    unsigned start = 0;
    while (start < n && placed[start])
        start++;
    int *step = malloc(n * sizeof *step);
    unsigned *path = malloc((n + 1) * sizeof *path);
    if (!step || !path) {
        free(step);
        free(path);
        return out_of_memory(ld->err);
    }
    for (unsigned i = 0; i < n; i++)
        step[i] = -1;
    unsigned len = 0, v = start;
    while (step[v] < 0) {
        step[v] = (int)len;
        path[len++] = v;
        const actor_t *a = &actors[v];
        unsigned next = v;
        for (unsigned j = 0; j < a->n_src; j++)
            if (!placed[a->src_file[j]]) {
                next = a->src_file[j];
                break;
            }
        v = next;
    }
    /* path[first..len-1] is the loop, each reading the next one. */
    unsigned first = (unsigned)step[v], cyc = len - first;
    unsigned *loop = path + first;
    unsigned low = 0;
    for (unsigned i = 1; i < cyc; i++)
        if (loop[i] < loop[low])
            low = i;
    /* Data flows from loop[i+1] to loop[i]: walk backwards from low. */
    char text[TUSK_ERROR_MESSAGE_MAX / 2];
    size_t used = 0;
    for (unsigned k = 0; k <= cyc; k++) {
        unsigned idx = loop[(low + cyc - k % cyc) % cyc];
        int w = snprintf(text + used, sizeof text - used, "%s%s", k ? " -> " : "", actors[idx].name);
        if (w < 0 || (size_t)w >= sizeof text - used) {
            snprintf(text + (sizeof text - 5), 5, "...");
            break;
        }
        used += (size_t)w;
    }
    const actor_t *a = &actors[loop[low]];
    int rc = actor_fail(ld, a, a->line, "cycle: %s", text);
    free(step);
    free(path);
    return rc;
}

/* Order the actors (result: order[k] = file index), or report a cycle. */
static int sort_actors(loader_t *ld, const actor_t *actors, unsigned n, unsigned *order)
{
    unsigned *pending = calloc(n, sizeof *pending);
    unsigned *out_start = calloc((size_t)n + 1, sizeof *out_start);
    unsigned *heap = malloc(n * sizeof *heap);
    bool *placed = calloc(n, sizeof *placed);
    unsigned edges = 0;
    for (unsigned i = 0; i < n; i++)
        edges += actors[i].n_src;
    unsigned *out = malloc((edges ? edges : 1) * sizeof *out);
    int rc = TUSK_OK;
    if (!pending || !out_start || !heap || !placed || !out) {
        rc = out_of_memory(ld->err);
        goto done;
    }
    /* Readers of each actor, as a compressed adjacency list. */
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < actors[i].n_src; j++)
            out_start[actors[i].src_file[j] + 1]++;
    for (unsigned i = 0; i < n; i++)
        out_start[i + 1] += out_start[i];
    for (unsigned i = 0; i < n; i++)
        pending[i] = actors[i].n_src;
    /* Fill readers in file order, with running cursors. */
    {
        unsigned *cursor = heap; /* free until the sort starts */
        for (unsigned i = 0; i < n; i++)
            cursor[i] = out_start[i];
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = 0; j < actors[i].n_src; j++)
                out[cursor[actors[i].src_file[j]]++] = i;
    }
    unsigned hn = 0, placed_n = 0;
    for (unsigned i = 0; i < n; i++)
        if (pending[i] == 0)
            heap_push(heap, &hn, i);
    while (hn > 0) {
        unsigned v = heap_pop(heap, &hn);
        order[placed_n++] = v;
        placed[v] = true;
        for (unsigned e = out_start[v]; e < out_start[v + 1]; e++)
            if (--pending[out[e]] == 0)
                heap_push(heap, &hn, out[e]);
    }
    if (placed_n < n)
        rc = report_cycle(ld, actors, n, placed);
done:
    free(pending);
    free(out_start);
    free(heap);
    free(placed);
    free(out);
    return rc;
}

static int check_and_order(loader_t *ld, xmlNodePtr root, actor_t *actors, unsigned n, unsigned *order)
{
    bool producer = false;
    for (unsigned i = 0; i < n; i++)
        producer = producer || actors[i].spec.actor_class == TUSK_PRODUCER;
    if (!producer) {
        ld->line = line_of(root);
        ld->top = -1;
        return fail(ld->err, TUSK_ETOPOLOGY, ld->file, ld->line, "configuration", NULL,
                    "no <producer>: nothing would produce data");
    }

    name_ref_t *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return out_of_memory(ld->err);
    for (unsigned i = 0; i < n; i++)
        sorted[i] = (name_ref_t){actors[i].name, i};
    qsort(sorted, n, sizeof *sorted, cmp_name_ref);
    /* Of all the repeated names, report the earliest repeat in the file. */
    unsigned dup = n, first = 0;
    for (unsigned i = 1; i < n; i++)
        if (strcmp(sorted[i - 1].name, sorted[i].name) == 0 && sorted[i].index < dup) {
            dup = sorted[i].index;
            first = sorted[i - 1].index;
        }
    int rc = TUSK_OK;
    if (dup < n)
        rc = actor_fail(ld, &actors[dup], actors[dup].line, "duplicate actor name: also used by the <%s> at line %d",
                        class_names[actors[first].spec.actor_class], actors[first].line);
    if (rc == TUSK_OK)
        rc = link_sources(ld, actors, n, sorted);
    free(sorted);
    if (rc == TUSK_OK)
        rc = sort_actors(ld, actors, n, order);
    if (rc)
        return rc;

    /* An output nobody reads would be dropped without a word. */
    bool *read = calloc(n, sizeof *read);
    if (!read)
        return out_of_memory(ld->err);
    for (unsigned k = 0; k < n; k++)
        for (unsigned j = 0; j < actors[k].n_src; j++)
            read[actors[k].src_file[j]] = true;
    for (unsigned i = 0; i < n && rc == TUSK_OK; i++) {
        const actor_t *a = &actors[i];
        if (a->spec.actor_class != TUSK_CONSUMER && !read[i])
            rc = actor_fail(ld, a, a->line, "output of %s '%s' is not read by any actor (its data would be lost)",
                            class_names[a->spec.actor_class], a->name);
    }
    free(read);
    return rc;
}

static char *join_path(const char *dir, const char *file, const char *suffix);

/* Move the actors into dependency order and fill the public specs. */
static int finish(tusk_topology_t *t, actor_t *file_actors, unsigned n, const unsigned *order, tusk_error_t *err)
{
    /* Move first: from here on t owns the actors, whatever happens. */
    for (unsigned k = 0; k < n; k++)
        t->actors[k] = file_actors[order[k]];
    unsigned *pos = malloc((n ? n : 1) * sizeof *pos);
    unsigned *n_sinks = calloc(n ? n : 1, sizeof *n_sinks);
    if (!pos || !n_sinks) {
        free(pos);
        free(n_sinks);
        return out_of_memory(err);
    }
    for (unsigned k = 0; k < n; k++)
        pos[order[k]] = k;
    for (unsigned k = 0; k < n; k++) {
        actor_t *a = &t->actors[k];
        for (unsigned j = 0; j < a->n_src; j++)
            n_sinks[pos[a->src_file[j]]]++;
    }
    int rc = TUSK_OK;
    for (unsigned k = 0; k < n && rc == TUSK_OK; k++) {
        actor_t *a = &t->actors[k];
        if (a->n_src && !(a->sources = malloc(a->n_src * sizeof *a->sources)))
            rc = out_of_memory(err);
        else if (n_sinks[k] && !(a->sinks = malloc(n_sinks[k] * sizeof *a->sinks)))
            rc = out_of_memory(err);
    }
    if (rc == TUSK_OK) {
        /* Readers are appended in dependency order, so sinks come out sorted. */
        for (unsigned k = 0; k < n; k++) {
            actor_t *a = &t->actors[k];
            for (unsigned j = 0; j < a->n_src; j++) {
                actor_t *s = &t->actors[pos[a->src_file[j]]];
                a->sources[j] = pos[a->src_file[j]];
                s->sinks[s->spec.n_sinks++] = k;
            }
        }
        for (unsigned k = 0; k < n; k++) {
            actor_t *a = &t->actors[k];
            tusk_actor_spec_t *s = &a->spec;
            s->name = a->name;
            s->hostname = a->hostname;
            s->interface = a->interface;
            s->port = a->port;
            s->log_level = a->log_level;
            s->library = a->library;
            s->library_path = NULL;
            s->debug = a->debug;
            s->n_sources = a->n_src;
            s->sources = a->sources ? a->sources : no_indices;
            s->sinks = a->sinks ? a->sinks : no_indices;
            s->n_params = a->n_params;
            s->param_keys = a->keys ? (const char *const *)a->keys : no_strings;
            s->param_values = a->values ? (const char *const *)a->values : no_strings;
            s->line = a->line;
            /* The configuration folder from the topology's folder. */
            if (a->config_text && rc == TUSK_OK) {
                a->config_dir = a->config_text[0] == '/' || !t->dir ? tusk_strdup(a->config_text)
                                                                     : join_path(t->dir, a->config_text, "");
                if (!a->config_dir)
                    rc = out_of_memory(err);
            }
            s->config_dir = a->config_dir;
            s->narval_library = NULL;
        }
    }
    free(pos);
    free(n_sinks);
    return rc;
}

/* ---- public API --------------------------------------------------------- */

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return NULL;
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, path, len);
        d[len] = '\0';
    }
    return d;
}

int tusk_topology_parse(tusk_topology_t **topology, const char *xml, size_t size, const char *name,
                        tusk_error_t *err)
{
    if (!topology)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_topology_parse: no result pointer");
    *topology = NULL;
    if (!xml && size)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_topology_parse: no XML text");
    const char *file = name ? name : "(topology)";
    if (size > MAX_TOPOLOGY_BYTES)
        return tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s: too large (%zu bytes): a topology is at most %u MiB",
                              file, size, MAX_TOPOLOGY_BYTES >> 20);
    size_t blank = 0;
    while (blank < size && is_space(xml[blank]))
        blank++;
    if (blank == size)
        return tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s: empty file: a topology is an XML <configuration>", file);
    xmlInitParser();

    xmlDocPtr doc;
    int rc = parse_xml(&doc, xml ? xml : "", size, file, err);
    if (rc)
        return rc;
    xmlNodePtr root = xmlDocGetRootElement(doc);

    /* Steps 2 and 3 both run. The schema's complaint wins only when it is
     * about an earlier actor: about the same one, step 2 says it better
     * (libxml2 reports most interleave problems as "Invalid sequence"). */
    tusk_error_t walk_err = {0}, schema_err = {0};
    loader_t ld = {file, &walk_err, 0, -1};
    actor_t *actors = NULL;
    unsigned n = 0, *order = NULL;
    tusk_topology_t *t = NULL;
    int walk_rc = read_actors(&ld, root, &actors, &n);
    int schema_top = INT_MAX;
    int schema_rc = walk_rc == TUSK_ENOMEM ? TUSK_OK : check_schema(doc, file, &schema_err, &schema_top);
    if (walk_rc || schema_rc) {
        bool use_schema = schema_rc && (!walk_rc || schema_top < ld.top);
        rc = use_schema ? schema_rc : walk_rc;
        if (err)
            *err = use_schema ? schema_err : walk_err;
        goto out;
    }

    if (!(order = malloc((n ? n : 1) * sizeof *order))) {
        rc = out_of_memory(err);
        goto out;
    }
    ld.err = err;
    rc = check_and_order(&ld, root, actors, n, order);
    if (rc == TUSK_OK) {
        t = calloc(1, sizeof *t);
        if (!t || !(t->name = tusk_strdup(file)) || !(t->actors = calloc(n, sizeof *t->actors)) ||
            (strchr(file, '/') && !(t->dir = dir_of(file)))) {
            rc = out_of_memory(err);
        } else {
            rc = finish(t, actors, n, order, err);
            t->n = n; /* the actors now belong to t */
            free(actors);
            actors = NULL;
            n = 0;
        }
    }
    if (rc == TUSK_OK) {
        *topology = t;
        tusk_error_clear(err);
    } else {
        tusk_topology_destroy(&t);
    }
out:
    free(order);
    for (unsigned i = 0; i < n; i++)
        actor_free(&actors[i]);
    free(actors);
    xmlFreeDoc(doc);
    return rc;
}

int tusk_topology_load(tusk_topology_t **topology, const char *path, tusk_error_t *err)
{
    if (!topology || !path)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_topology_load: no %s", topology ? "path" : "result pointer");
    *topology = NULL;
    char *buf;
    size_t len;
    int rc = tusk_topology_read(path, &buf, &len, err);
    if (rc == TUSK_OK)
        rc = tusk_topology_parse(topology, buf, len, path, err);
    free(buf);
    return rc;
}

int tusk_topology_read(const char *path, char **text, size_t *size, tusk_error_t *err)
{
    int rc = tusk_file_read(path, MAX_TOPOLOGY_BYTES, text, size, err);
    if (rc == TUSK_ENOMEM)
        return out_of_memory(err);
    if (rc == TUSK_ELIMIT)
        return tusk_error_set(err, TUSK_ETOPOLOGY, "%s: too large (over %u MiB): not a topology", path,
                              MAX_TOPOLOGY_BYTES >> 20);
    return rc;
}

void tusk_topology_destroy(tusk_topology_t **topology)
{
    if (!topology || !*topology)
        return;
    tusk_topology_t *t = *topology;
    if (t->actors)
        for (unsigned i = 0; i < t->n; i++)
            actor_free(&t->actors[i]);
    free(t->actors);
    free(t->name);
    free(t->dir);
    free(t);
    *topology = NULL;
}

const char *tusk_topology_name(const tusk_topology_t *topology)
{
    return topology ? topology->name : NULL;
}

unsigned tusk_topology_count(const tusk_topology_t *topology)
{
    return topology ? topology->n : 0;
}

const tusk_actor_spec_t *tusk_topology_actor(const tusk_topology_t *topology, unsigned i)
{
    if (!topology || i >= topology->n)
        return NULL;
    return &topology->actors[i].spec;
}

int tusk_topology_set_hostname(tusk_topology_t *topology, unsigned i, const char *host, tusk_error_t *err)
{
    if (!topology || i >= topology->n || !host)
        return tusk_error_set(err, TUSK_EINVAL, "no actor %u in the topology", i);
    char *copy = tusk_strdup(host);
    if (!copy)
        return out_of_memory(err);
    actor_t *a = &topology->actors[i];
    free(a->hostname);
    a->hostname = copy;
    a->spec.hostname = copy;
    return TUSK_OK;
}

int tusk_topology_find(const tusk_topology_t *topology, const char *name)
{
    if (!topology || !name)
        return -1;
    for (unsigned i = 0; i < topology->n; i++)
        if (strcmp(topology->actors[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- resolving libraries ---------------------------------------------------- */

static char *join_path(const char *dir, const char *file, const char *suffix)
{
    size_t a = strlen(dir), b = strlen(file), c = strlen(suffix);
    char *p = malloc(a + 1 + b + c + 1);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, file, b);
        memcpy(p + a + 1 + b, suffix, c + 1);
    }
    return p;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* The folder part of `path` ("." when it has none); NULL when out of memory. */
static char *folder_of(const char *path)
{
    char *d = dir_of(path);
    return d ? d : strchr(path, '/') ? NULL : tusk_strdup(".");
}

/* Look up library `lib` of actor a: with a '/' a path from `base` (NULL:
 * the current folder), else LIB(.so) in each of `folders`, then in
 * `extra` (NULL: none). `said` names where the library was named, for
 * messages. The path (malloc'd) or an error. */
static int resolve_one(const tusk_topology_t *t, const actor_t *a, const char *lib, const char *base,
                       const char *folders, const char *extra, const char *said, char **out, tusk_error_t *err)
{
    const char *cls = class_names[a->spec.actor_class];
    *out = NULL;
    if (strchr(lib, '/')) {
        char *path = lib[0] == '/' || !base ? tusk_strdup(lib) : join_path(base, lib, "");
        if (!path)
            return out_of_memory(err);
        if (access(path, R_OK) != 0) {
            int e = errno;
            fail(err, TUSK_ELOAD, t->name, a->line, cls, a->name, "actor library '%s'%s not found (%s: %s)", lib, said,
                 path, strerror(e));
            free(path);
            return TUSK_ELOAD;
        }
        *out = path;
        return TUSK_OK;
    }
    const char *suffix = ends_with(lib, ".so") ? "" : ".so";
    char searched[TUSK_ERROR_MESSAGE_MAX / 2] = "";
    size_t used = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *list = pass == 0 ? folders : extra;
        for (const char *p = list ? list : ""; *p;) {
            /* `extra` is one folder, colons and all. */
            const char *colon = pass == 0 ? strchr(p, ':') : NULL;
            size_t len = colon ? (size_t)(colon - p) : strlen(p);
            if (len > 0) {
                char *dir = malloc(len + 1);
                if (!dir)
                    return out_of_memory(err);
                memcpy(dir, p, len);
                dir[len] = '\0';
                char *path = join_path(dir, lib, suffix);
                if (!path) {
                    free(dir);
                    return out_of_memory(err);
                }
                if (access(path, R_OK) == 0) {
                    free(dir);
                    *out = path;
                    return TUSK_OK;
                }
                free(path);
                if (used < sizeof searched) {
                    int w = snprintf(searched + used, sizeof searched - used, "%s%s", used ? ", " : "", dir);
                    used += w > 0 ? (size_t)w : 0;
                }
                free(dir);
            }
            p += len + (colon ? 1 : 0);
        }
    }
    return fail(err, TUSK_ELOAD, t->name, a->line, cls, a->name, "actor library '%s'%s not found (searched: %s)", lib,
                said, used ? searched : "no folders");
}

const char *tusk_topology_installed_actor_dir(void)
{
    const char *env = getenv("TUSK_ACTOR_DIR");
    return env ? env : TUSK_ACTORDIR;
}

bool tusk_topology_is_generic(const char *library, tusk_actor_class_t *actor_class)
{
    static const char *const hosts[] = {"generic_producer", "generic_filter", "generic_consumer"};
    for (int c = 0; library && c < 3; c++)
        if (strcmp(library, hosts[c]) == 0) {
            if (actor_class)
                *actor_class = (tusk_actor_class_t)c;
            return true;
        }
    return false;
}

/* One actor: its library, and its configuration folder. */
static int resolve_actor(const tusk_topology_t *t, actor_t *a, const char *folders, char **path, tusk_error_t *err)
{
    const char *cls = class_names[a->spec.actor_class];
    int rc;
    if (!tusk_topology_is_generic(a->library, NULL)) {
        rc = resolve_one(t, a, a->library, t->dir, folders, NULL, "", path, err);
    } else if (!a->narval_library) {
        rc = fail(err, TUSK_ELOAD, t->name, a->line, cls, a->name,
                  "<binary_code> %s is NARVAL's host for a C actor library, and no library is set for '%s': name it "
                  "as NARVAL does, with a line 'set library LIBRARY.so SUBSYSTEM %s' of a NARVAL script "
                  "(tusk-emulate --narval-script FILE)",
                  a->library, a->name, a->name);
    } else {
        char said[300];
        snprintf(said, sizeof said, " (set library, %.250s)", a->narval_where);
        rc = resolve_one(t, a, a->narval_library, a->narval_dir, folders, a->narval_dir, said, path, err);
    }
    if (rc == TUSK_OK && a->config_dir) {
        struct stat st;
        const char *why = NULL;
        if (stat(a->config_dir, &st) != 0)
            why = strerror(errno);
        else if (!S_ISDIR(st.st_mode))
            why = "not a folder";
        if (why) {
            rc = fail(err, TUSK_ETOPOLOGY, t->name, a->config_line, cls, a->name,
                      "<config_dir> '%s': the actor's configuration folder %s: %s", a->config_text, a->config_dir,
                      why);
            free(*path);
            *path = NULL;
        }
    }
    return rc;
}

int tusk_topology_resolve(tusk_topology_t *topology, const char *search_path, tusk_error_t *err)
{
    if (!topology)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_topology_resolve: no topology");
    char *folders = NULL;
    if (search_path) {
        folders = tusk_strdup(search_path);
    } else {
        /* $TUSK_ACTOR_PATH first, then the installed actors. */
        const char *env = getenv("TUSK_ACTOR_PATH");
        const char *installed = tusk_topology_installed_actor_dir();
        if (!env)
            env = "";
        size_t a = strlen(env), b = strlen(installed);
        if ((folders = malloc(a + 1 + b + 1))) {
            memcpy(folders, env, a);
            folders[a] = ':';
            memcpy(folders + a + 1, installed, b + 1);
        }
    }
    if (!folders)
        return out_of_memory(err);
    int rc = TUSK_OK;
    for (unsigned i = 0; i < topology->n && rc == TUSK_OK; i++) {
        actor_t *a = &topology->actors[i];
        char *path = NULL;
        rc = resolve_actor(topology, a, folders, &path, err);
        if (rc == TUSK_OK) {
            free(a->library_path);
            a->library_path = path;
            a->spec.library_path = path;
        }
    }
    free(folders);
    if (rc == TUSK_OK)
        tusk_error_clear(err);
    return rc;
}

/* ---- NARVAL's "set library" commands ------------------------------------------------ */

#define MAX_SCRIPT_BYTES (1u << 20)
#define SCRIPT_WORDS 8

/* The blank-separated words of one line (a word in '...' or "..." keeps its
 * blanks); '#' at the start of a word begins a comment. The words point
 * into `line`, which is changed. Returns the count (at most `max` kept;
 * more are counted); an unclosed quote ends the line, *unclosed set. */
static int split_words(char *line, char **words, int max, bool *unclosed)
{
    int n = 0;
    *unclosed = false;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p || *p == '#')
            return n;
        char *w = p;
        if (*p == '\'' || *p == '"') {
            char q = *p++;
            w = p;
            while (*p && *p != q)
                p++;
            if (!*p) {
                *unclosed = true;
                return n;
            }
            *p++ = '\0';
        } else {
            while (*p && *p != ' ' && *p != '\t' && *p != '\r')
                p++;
            if (*p)
                *p++ = '\0';
        }
        if (n < max)
            words[n] = w;
        n++;
    }
}

static actor_t *find_actor(tusk_topology_t *t, const char *name)
{
    int i = tusk_topology_find(t, name);
    return i < 0 ? NULL : &t->actors[i];
}

int tusk_topology_narval_commands(tusk_topology_t *t, const char *text, size_t size, const char *name,
                                  tusk_error_t *err)
{
    if (!t || (!text && size))
        return tusk_error_set(err, TUSK_EINVAL, "tusk_topology_narval_commands: no %s", t ? "text" : "topology");
    const char *file = name ? name : "(NARVAL script)";
    if (size > MAX_SCRIPT_BYTES)
        return tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s: too large (%zu bytes): a NARVAL script is at most %u MiB",
                              file, size, MAX_SCRIPT_BYTES >> 20);
    char *dir = folder_of(file);
    if (!dir)
        return out_of_memory(err);
    /* Bind nothing unless the whole script is good. */
    typedef struct binding {
        actor_t *actor;
        char *library, *where;
        int line;
    } binding_t;
    binding_t *b = NULL;
    size_t nb = 0, cap = 0;
    int rc = TUSK_OK, line = 0;
    for (size_t pos = 0; pos < size && rc == TUSK_OK;) {
        line++;
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (text + pos)) : size - pos;
        char buf[1024];
        if (memchr(text + pos, '\0', len)) {
            rc = tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s:%d: a NUL byte: not a NARVAL script", file, line);
            break;
        }
        if (len >= sizeof buf) {
            /* Only 'set library' lines matter, and they are short. */
            bool set = len >= 3 && strncmp(text + pos, "set", 3) == 0;
            if (set) {
                rc = tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s:%d: a line of %zu bytes, over %zu", file, line, len,
                                    sizeof buf - 1);
                break;
            }
            pos += len + (nl ? 1 : 0);
            continue;
        }
        memcpy(buf, text + pos, len);
        buf[len] = '\0';
        pos += len + (nl ? 1 : 0);
        char *w[SCRIPT_WORDS];
        bool unclosed;
        int n = split_words(buf, w, SCRIPT_WORDS, &unclosed);
        bool set_library = n >= 2 && strcmp(w[0], "set") == 0 && strcmp(w[1], "library") == 0;
        if (unclosed) {
            /* It matters only on a 'set library' line. */
            if (set_library)
                rc = tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s:%d: unclosed quote", file, line);
            continue;
        }
        if (n < 2 || strcmp(w[0], "set") != 0 || strcmp(w[1], "library") != 0)
            continue; /* launch, set action ..., set configuration_file ...: not tusk's business */
        if (n != 5) {
            rc = tusk_error_set(err, TUSK_ETOPOLOGY,
                                "%.300s:%d: 'set library' takes LIBRARY SUBSYSTEM ACTOR (%d word%s given)", file, line,
                                n - 2, n - 2 == 1 ? "" : "s");
            break;
        }
        const char *lib = w[2], *actor = w[4];
        actor_t *a = find_actor(t, actor);
        if (!a) {
            rc = tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s:%d: set library %.100s for '%.80s': %.300s has no such actor",
                                file, line, lib, actor, t->name);
        } else if (!tusk_topology_is_generic(a->library, NULL)) {
            rc = tusk_error_set(err, TUSK_ETOPOLOGY,
                                "%.300s:%d: set library %.100s for '%.80s': its <binary_code> is '%.80s' (%.300s:%d), not "
                                "NARVAL's generic_producer, generic_filter or generic_consumer: the library would not "
                                "be used",
                                file, line, lib, actor, a->library, t->name, a->line);
        } else if (!*lib) {
            rc = tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s:%d: set library for '%.80s': an empty library name", file,
                                line, actor);
        } else {
            for (size_t k = 0; k < nb && rc == TUSK_OK; k++)
                if (b[k].actor == a)
                    rc = tusk_error_set(err, TUSK_ETOPOLOGY,
                                        "%.300s:%d: a second 'set library' for '%.80s' (the first at line %d)", file, line,
                                        actor, b[k].line);
            if (rc == TUSK_OK && a->narval_library)
                rc = tusk_error_set(err, TUSK_ETOPOLOGY, "%.300s:%d: set library for '%.80s': already set (%.300s)",
                                    file, line, actor, a->narval_where);
        }
        if (rc != TUSK_OK)
            break;
        if (nb == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            binding_t *nbuf = realloc(b, ncap * sizeof *nbuf);
            if (!nbuf) {
                rc = out_of_memory(err);
                break;
            }
            b = nbuf;
            cap = ncap;
        }
        char where[400];
        snprintf(where, sizeof where, "%.300s:%d", file, line);
        b[nb] = (binding_t){a, tusk_strdup(lib), tusk_strdup(where), line};
        if (!b[nb].library || !b[nb].where) {
            free(b[nb].library);
            free(b[nb].where);
            rc = out_of_memory(err);
            break;
        }
        nb++;
    }
    /* Each actor gets its own copy of the folder. */
    for (size_t k = 0; k < nb && rc == TUSK_OK; k++) {
        char *d = tusk_strdup(dir);
        if (!d) {
            rc = out_of_memory(err);
            break;
        }
        actor_t *a = b[k].actor;
        a->narval_library = b[k].library;
        a->narval_where = b[k].where;
        a->narval_dir = d;
        a->spec.narval_library = a->narval_library;
        b[k].library = b[k].where = NULL;
    }
    for (size_t k = 0; k < nb; k++) {
        free(b[k].library);
        free(b[k].where);
    }
    free(b);
    free(dir);
    if (rc == TUSK_OK)
        tusk_error_clear(err);
    return rc;
}

int tusk_topology_narval_script(tusk_topology_t *topology, const char *path, tusk_error_t *err)
{
    if (!topology || !path)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_topology_narval_script: no %s", topology ? "path" : "topology");
    char *text;
    size_t len;
    int rc = tusk_file_read(path, MAX_SCRIPT_BYTES, &text, &len, err);
    if (rc == TUSK_ENOMEM)
        return out_of_memory(err);
    if (rc == TUSK_ELIMIT)
        return tusk_error_set(err, TUSK_ETOPOLOGY, "%s: too large (over %u MiB): not a NARVAL script", path,
                              MAX_SCRIPT_BYTES >> 20);
    if (rc != TUSK_OK)
        return rc;
    rc = tusk_topology_narval_commands(topology, text, len, path, err);
    free(text);
    return rc;
}
