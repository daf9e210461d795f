/* fuzz_topology.c - fuzz target: topology XML (tusk_topology_parse).
 *
 * Any bytes either load or give an error whose message names the file. A
 * loaded topology keeps its promises: at least one producer, unique names,
 * every actor after its sources, sources and sinks mirror each other,
 * producers have no source and consumers no reader, sizes and instance
 * counts within their limits.
 */
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/topology.h"

int fuzz_topology_one(const uint8_t *data, size_t size)
{
    tusk_topology_t *t = NULL;
    tusk_error_t err;
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
