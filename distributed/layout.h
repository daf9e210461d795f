/* layout.h - where the sockets of a distributed run are.
 *
 * Every process computes the same endpoints from the topology and a few
 * run settings, so nothing has to be exchanged: input j of instance k of
 * actor a binds at bind_endpoint(a, k, j) and every sender to it connects
 * to connect_endpoint(a, k, j).
 *
 *   ipc (every actor on localhost): ipc://RUN_DIR/a<a>.<k>.<j>
 *   tcp: port = base_port + the input's ordinal (actors in topology order,
 *        then instances, then inputs); bound on the actor's <port>
 *        (interface or address) or 127.0.0.1; connected at <hostname>.
 */
#ifndef TUSK_LAYOUT_H
#define TUSK_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "tusk/error.h"
#include "tusk/topology.h"

typedef enum { TUSK_TRANSPORT_IPC, TUSK_TRANSPORT_TCP } tusk_transport_t;

typedef struct tusk_layout {
    tusk_transport_t transport;
    const char *run_dir;
    unsigned base_port;
} tusk_layout_t;

/* Is `host` this machine as far as the topology is concerned? */
bool layout_host_is_local(const char *host);

/* ipc when every actor is local, else tcp. */
tusk_transport_t layout_default_transport(const tusk_topology_t *topology);

/* Check the topology can run distributed with this transport: a remote
 * actor that receives data must name the interface to bind to; all tcp
 * ports must fit. */
int layout_check(const tusk_topology_t *topology, const tusk_layout_t *layout, tusk_error_t *err);

int layout_bind_endpoint(const tusk_topology_t *topology, const tusk_layout_t *layout, unsigned actor,
                         unsigned instance, unsigned input, char *out, size_t size);
int layout_connect_endpoint(const tusk_topology_t *topology, const tusk_layout_t *layout, unsigned actor,
                            unsigned instance, unsigned input, char *out, size_t size);

const char *layout_transport_name(tusk_transport_t transport);

#endif
