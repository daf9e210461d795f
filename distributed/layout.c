/* layout.c - see layout.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "security.h"
#include "base/parse.h"

bool layout_host_is_loopback(const char *host)
{
    return strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 || strcmp(host, "::1") == 0;
}

bool layout_host_is_local(const char *host)
{
    if (layout_host_is_loopback(host))
        return true;
    char name[256];
    return gethostname(name, sizeof name) == 0 && strcmp(name, host) == 0;
}

tusk_transport_t layout_default_transport(const tusk_topology_t *t)
{
    for (unsigned i = 0; i < tusk_topology_count(t); i++)
        if (!layout_host_is_local(tusk_topology_actor(t, i)->hostname))
            return TUSK_TRANSPORT_TCP;
    return TUSK_TRANSPORT_IPC;
}

const char *layout_transport_name(tusk_transport_t transport)
{
    return transport == TUSK_TRANSPORT_IPC ? "ipc" : "tcp";
}

/* The input's number among every input of the topology. */
static unsigned ordinal(const tusk_topology_t *t, unsigned actor, unsigned instance, unsigned input)
{
    unsigned n = 0;
    for (unsigned a = 0; a < actor; a++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, a);
        n += s->instances * s->n_sources;
    }
    return n + instance * tusk_topology_actor(t, actor)->n_sources + input;
}

static unsigned total_inputs(const tusk_topology_t *t)
{
    unsigned n = tusk_topology_count(t);
    return n == 0 ? 0 : ordinal(t, n - 1, 0, 0) + tusk_topology_actor(t, n - 1)->instances *
                                                      tusk_topology_actor(t, n - 1)->n_sources;
}

int layout_check(const tusk_topology_t *t, const tusk_layout_t *l, tusk_error_t *err)
{
    /* Host names reach a launcher (ssh) and the remote shell behind it. */
    for (unsigned i = 0; i < tusk_topology_count(t); i++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(t, i);
        if (!tusk_host_name_valid(s->hostname))
            return tusk_error_set(err, TUSK_ETOPOLOGY,
                                  "%s:%d: %s '%s': '%s' is not a host name (letters, digits and '-' in labels "
                                  "separated by dots, or an IP address)",
                                  tusk_topology_name(t), s->line, tusk_actor_class_name(s->actor_class), s->name,
                                  s->hostname);
    }
    if (l->transport == TUSK_TRANSPORT_TCP) {
        if (l->base_port && l->base_port + total_inputs(t) > 65535)
            return tusk_error_set(err, TUSK_EINVAL, "tcp ports %u..%u are out of range: choose another --base-port",
                                  l->base_port, l->base_port + total_inputs(t));
        for (unsigned i = 0; i < tusk_topology_count(t); i++) {
            const tusk_actor_spec_t *s = tusk_topology_actor(t, i);
            bool local = layout_host_is_local(s->hostname);
            /* Does data come from another host? */
            bool from_elsewhere = false;
            for (unsigned j = 0; j < s->n_sources; j++) {
                const char *h = tusk_topology_actor(t, s->sources[j])->hostname;
                bool same = local ? layout_host_is_local(h) : strcmp(h, s->hostname) == 0;
                from_elsewhere |= !same;
            }
            if (!from_elsewhere)
                continue;
            if (!s->interface)
                return tusk_error_set(err, TUSK_ETOPOLOGY,
                                      "%s:%d: %s '%s' on %s receives data from another host: name the interface or "
                                      "address its inputs bind to with <address> (inputs bind to loopback otherwise)",
                                      tusk_topology_name(t), s->line, tusk_actor_class_name(s->actor_class), s->name,
                                      s->hostname);
            /* Remote senders reach a local actor at its <address>, or at
             * its <hostname> when that is this host's name (an actor
             * placed on a Slurm node, engine.h): with localhost, a bare
             * interface name gives them nothing to connect to. */
            if (local && !strpbrk(s->interface, ".:") && layout_host_is_loopback(s->hostname))
                return tusk_error_set(err, TUSK_ETOPOLOGY,
                                      "%s:%d: %s '%s' runs on this host (%s) and receives data from other hosts: give "
                                      "<address> as an address they reach, not the interface name '%s'",
                                      tusk_topology_name(t), s->line, tusk_actor_class_name(s->actor_class), s->name,
                                      s->hostname, s->interface);
        }
    } else {
        for (unsigned i = 0; i < tusk_topology_count(t); i++) {
            const tusk_actor_spec_t *s = tusk_topology_actor(t, i);
            if (!layout_host_is_local(s->hostname))
                return tusk_error_set(err, TUSK_EINVAL, "ipc transport with actor '%s' on %s: use tcp", s->name,
                                      s->hostname);
        }
        /* sun_path holds 107 characters. */
        char probe[512];
        int n = snprintf(probe, sizeof probe, "%s/a%u.%u.%u", l->run_dir, 65535u, 65535u, 65535u);
        if (n < 0 || n > 100)
            return tusk_error_set(err, TUSK_EINVAL, "run folder %s is too long for ipc socket paths: use a shorter "
                                  "--run-dir", l->run_dir);
    }
    return TUSK_OK;
}

int layout_bind_endpoint(const tusk_topology_t *t, const tusk_layout_t *l, unsigned actor, unsigned instance,
                         unsigned input, char *out, size_t size)
{
    const tusk_actor_spec_t *s = tusk_topology_actor(t, actor);
    const char *addr = s->interface ? s->interface : "127.0.0.1";
    int n;
    if (l->transport == TUSK_TRANSPORT_IPC)
        n = snprintf(out, size, "ipc://%s/a%u.%u.%u", l->run_dir, actor, instance, input);
    else if (l->base_port)
        n = snprintf(out, size, "tcp://%s:%u", addr, l->base_port + ordinal(t, actor, instance, input));
    else
        n = snprintf(out, size, "tcp://%s:*", addr); /* the kernel picks a free port */
    return n > 0 && (size_t)n < size ? TUSK_OK : TUSK_EINVAL;
}

int layout_connect_endpoint(const tusk_topology_t *t, const tusk_layout_t *l, unsigned actor, const char *bound,
                            char *out, size_t size)
{
    const tusk_actor_spec_t *s = tusk_topology_actor(t, actor);
    int n;
    if (l->transport == TUSK_TRANSPORT_IPC) {
        if (strncmp(bound, "ipc://", 6) != 0)
            return TUSK_EINVAL;
        n = snprintf(out, size, "%s", bound);
        return n > 0 && (size_t)n < size ? TUSK_OK : TUSK_EINVAL;
    }
    const char *colon = strrchr(bound, ':');
    uint64_t port;
    if (strncmp(bound, "tcp://", 6) != 0 || !colon || tusk_parse_u64(colon + 1, 1, 65535, &port) != 0)
        return TUSK_EINVAL;
    /* Reach an actor at the address its inputs bind to when <address> names
     * one; else a local actor at loopback (it binds there) and a remote one
     * at its <hostname>. layout_check makes sure that reaches it. */
    const char *host = s->hostname;
    if (s->interface && strpbrk(s->interface, ".:"))
        host = s->interface;
    else if (layout_host_is_local(host) && !s->interface)
        host = "127.0.0.1";
    n = snprintf(out, size, "tcp://%s:%u", host, (unsigned)port);
    return n > 0 && (size_t)n < size ? TUSK_OK : TUSK_EINVAL;
}
