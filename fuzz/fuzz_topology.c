/* fuzz_topology.c - fuzz target: topology XML (tusk_topology_parse), and
 * the same bytes as a NARVAL shell script (tusk_topology_narval_commands)
 * for a topology of NARVAL's generic actors.
 *
 * Any bytes either load or give an error whose message names the file. A
 * loaded topology keeps its promises: at least one producer, unique names,
 * every actor after its sources, sources and sinks mirror each other,
 * producers have no source and consumers no reader, sizes and instance
 * counts within their limits. A script either binds libraries to generic
 * actors only, or is refused with its name and nothing bound.
 */
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/topology.h"

static const char generic_topology[] =
    "<configuration><producer><name>p</name><binary_code>generic_producer</binary_code></producer>"
    "<intermediary><name>f</name><binary_code>generic_filter</binary_code><data_source>p</data_source>"
    "</intermediary><consumer><name>c</name><binary_code>file_writer</binary_code><data_source>f</data_source>"
    "</consumer></configuration>";

/* Parsed once (the schema's compilation dominates a parse), again only
 * after a script bound a library to it. */
static tusk_topology_t *generic;

static void fuzz_narval_script(const uint8_t *data, size_t size)
{
    tusk_error_t err;
    if (!generic)
        FUZZ_CHECK(tusk_topology_parse(&generic, generic_topology, sizeof generic_topology - 1, "g.xml", &err) ==
                   TUSK_OK);
    tusk_topology_t *t = generic;
    int rc = tusk_topology_narval_commands(t, (const char *)data, size, "fuzz.sh", &err);
    FUZZ_CHECK(rc == TUSK_OK || rc == TUSK_ETOPOLOGY || rc == TUSK_ENOMEM);
    if (rc == TUSK_ETOPOLOGY)
        FUZZ_CHECK(strncmp(err.message, "fuzz.sh", 7) == 0);
    for (unsigned i = 0; i < tusk_topology_count(t); i++) {
        const tusk_actor_spec_t *a = tusk_topology_actor(t, i);
        if (rc != TUSK_OK || !tusk_topology_is_generic(a->library, NULL))
            FUZZ_CHECK(a->narval_library == NULL);
        else if (a->narval_library)
            FUZZ_CHECK(a->narval_library[0] != '\0');
    }
    if (rc == TUSK_OK)
        for (unsigned i = 0; i < tusk_topology_count(t) && generic; i++)
            if (tusk_topology_actor(t, i)->narval_library)
                tusk_topology_destroy(&generic);
}

int fuzz_topology_one(const uint8_t *data, size_t size)
{
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    fuzz_narval_script(data, size);
    int rc = tusk_topology_parse(&t, (const char *)data, size, "fuzz.xml", &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(t == NULL);
        FUZZ_CHECK(rc == TUSK_ETOPOLOGY || rc == TUSK_ENOMEM || rc == TUSK_EINVAL);
        FUZZ_CHECK(strstr(err.message, "fuzz.xml") != NULL || rc == TUSK_ENOMEM);
        return 0;
    }
    unsigned n = tusk_topology_count(t), producers = 0;
    FUZZ_CHECK(n > 0);
    for (unsigned i = 0; i < n; i++) {
        const tusk_actor_spec_t *a = tusk_topology_actor(t, i);
        FUZZ_CHECK(a->name && a->name[0] && a->library && a->library[0] && a->hostname);
        FUZZ_CHECK(tusk_topology_find(t, a->name) == (int)i);
        FUZZ_CHECK(a->instances >= 1 && a->instances <= TUSK_MAX_INSTANCES);
        if (a->actor_class == TUSK_PRODUCER) {
            producers++;
            FUZZ_CHECK(a->n_sources == 0);
        } else {
            FUZZ_CHECK(a->n_sources >= 1);
        }
        if (a->actor_class == TUSK_CONSUMER)
            FUZZ_CHECK(a->buffer_size == 0 && a->n_sinks == 0);
        else
            FUZZ_CHECK(a->buffer_size >= TUSK_MIN_BUFFER_SIZE && a->buffer_size <= TUSK_MAX_BUFFER_SIZE &&
                       a->n_sinks >= 1);
        for (unsigned k = 0; k < a->n_sources; k++) {
            unsigned s = a->sources[k];
            FUZZ_CHECK(s < i); /* dependency order */
            const tusk_actor_spec_t *src = tusk_topology_actor(t, s);
            int found = 0;
            for (unsigned j = 0; j < src->n_sinks; j++)
                found |= src->sinks[j] == i;
            FUZZ_CHECK(found);
        }
        for (unsigned k = 0; k < a->n_sinks; k++)
            FUZZ_CHECK(a->sinks[k] > i && a->sinks[k] < n);
        for (unsigned k = 0; k < a->n_params; k++)
            FUZZ_CHECK(strpbrk(a->param_values[k], "\r\n") == NULL);
    }
    FUZZ_CHECK(producers >= 1);
    tusk_topology_destroy(&t);
    FUZZ_CHECK(t == NULL);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_topology_one(data, size);
}
#endif
