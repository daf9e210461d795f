/* layout.h - where the sockets of a distributed run are.
 *
 * Input j of instance k of actor a binds at bind_endpoint(a, k, j):
 *
 *   ipc (every actor on localhost): ipc://RUN_DIR/a<a>.<k>.<j>, in the
 *        run's private folder;
 *   tcp: on the actor's <address> (interface or address) or 127.0.0.1, at a
 *        port the kernel picks (tcp://ADDR:*): no two runs can clash; or,
 *        with a base port (--base-port, for firewalls), at base_port +
 *        the input's ordinal (actors in topology order, then instances,
 *        then inputs).
 *
 * The instance reports where it bound (ZMQ_LAST_ENDPOINT) and tusk-run
 * tells its senders: they connect at connect_endpoint(a, bound), the
 * address its senders reach (<address> when it is an address, else
 * <hostname>, or 127.0.0.1 for an actor here) with the port it got.
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
/* Is it a loopback name (localhost, 127.0.0.1, ::1): no host named? */
bool layout_host_is_loopback(const char *host);

/* ipc when every actor is local, else tcp. */
tusk_transport_t layout_default_transport(const tusk_topology_t *topology);

/* Check the topology can run distributed with this transport: every host
 * name is a host name (tusk_host_name_valid: no shell syntax); a remote
 * actor that receives data must name the interface to bind to; with a
 * base port, all tcp ports must fit. */
int layout_check(const tusk_topology_t *topology, const tusk_layout_t *layout, tusk_error_t *err);

int layout_bind_endpoint(const tusk_topology_t *topology, const tusk_layout_t *layout, unsigned actor,
                         unsigned instance, unsigned input, char *out, size_t size);
/* Where senders reach an input of `actor` that bound at `bound` (what the
 * instance reported). TUSK_EINVAL when `bound` is no endpoint of this
 * transport. */
int layout_connect_endpoint(const tusk_topology_t *topology, const tusk_layout_t *layout, unsigned actor,
                            const char *bound, char *out, size_t size);

const char *layout_transport_name(tusk_transport_t transport);

#endif
