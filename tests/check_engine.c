/* check_engine.c - issue 27's pieces: Slurm host lists (base/hostlist.h:
 * every form expanded as Slurm does, every malformed one refused with its
 * column, random lists against their names written out), the words put
 * before tusk-actor by each engine (distributed/engine.h: systemd-run,
 * srun; the launcher's first), the engine's checks of a topology (actors
 * off the allocation, properties of unknown actors), the placement of
 * actors without a host on a Slurm allocation's nodes (round robin, a
 * named host kept or refused), an instance's output copied to a journal
 * (distributed/journal.h, against a stand-in journald socket: the stream
 * header and every byte in both places, also when the process is
 * killed) and the journalctl commands tusk-run writes into the run
 * folder, the unit file of a permanent installation, and merged --report
 * files (distributed/reports.h). Outputs are asserted as compact text. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hostlist.h"
#include "engine.h"
#include "journal.h"
#include "reports.h"
#include "testutil.h"

/* ---- host lists -------------------------------------------------------------- */

/* The expansion as "a b c", or "ERROR: message". */
static const char *expand(const char *text, size_t max)
{
    static char out[8192];
    char **hosts;
    size_t n;
    tusk_error_t err;
    if (tusk_hostlist_expand(text, max, &hosts, &n, &err) != TUSK_OK) {
        ck_assert_ptr_null(hosts);
        ck_assert_uint_eq(n, 0);
        snprintf(out, sizeof out, "ERROR: %s", err.message);
        return out;
    }
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " " : "", hosts[i]);
    tusk_hostlist_free(hosts, n);
    return out;
}

START_TEST(hostlist_forms)
{
    ck_assert_str_eq(expand("node[01-03,07],gpu5", 0), "node01 node02 node03 node07 gpu5");
    ck_assert_str_eq(expand("vm", 0), "vm");
    ck_assert_str_eq(expand("a,b,a", 0), "a b a");
    ck_assert_str_eq(expand("n[8-11]", 0), "n8 n9 n10 n11");
    ck_assert_str_eq(expand("n[098-100]", 0), "n098 n099 n100");
    ck_assert_str_eq(expand("x[0],x[00],x[7]", 0), "x0 x00 x7");
    ck_assert_str_eq(expand("rack[1-2]-n[8-9]", 0), "rack1-n8 rack1-n9 rack2-n8 rack2-n9");
    ck_assert_str_eq(expand("[1-2].cluster", 0), "1.cluster 2.cluster");
    ck_assert_str_eq(expand("c_1.lab-2[3]", 0), "c_1.lab-23");
    ck_assert_str_eq(expand("n[0-999]", 1000), expand("n[0-999]", 0)); /* exactly the limit */
}
END_TEST

START_TEST(hostlist_errors)
{
    ck_assert_str_eq(expand("", 0), "ERROR: host list, column 1: an empty name");
    ck_assert_str_eq(expand("a,,b", 0), "ERROR: host list, column 3: an empty name");
    ck_assert_str_eq(expand("a,", 0), "ERROR: host list, column 3: an empty name");
    ck_assert_str_eq(expand("n[1-", 0), "ERROR: host list, column 5: '[' at the end is not closed");
    ck_assert_str_eq(expand("n[1", 0), "ERROR: host list, column 2: '[' is not closed");
    ck_assert_str_eq(expand("n[3-1]", 0), "ERROR: host list, column 3: range 3-1 goes down");
    ck_assert_str_eq(expand("n]", 0), "ERROR: host list, column 2: ']' without '['");
    ck_assert_str_eq(expand("n[]", 0), "ERROR: host list, column 3: a number expected in brackets, not ']'");
    ck_assert_str_eq(expand("n[a]", 0), "ERROR: host list, column 3: a number expected in brackets, not 'a'");
    ck_assert_str_eq(expand("n[[1]]", 0), "ERROR: host list, column 3: a number expected in brackets, not '['");
    ck_assert_str_eq(expand("n[1;2]", 0), "ERROR: host list, column 4: ';' in brackets (numbers, '-' and ',' only)");
    ck_assert_str_eq(expand("a b", 0), "ERROR: host list, column 2: a space (names are separated by ',')");
    ck_assert_str_eq(expand("a;b", 0),
                     "ERROR: host list, column 2: ';' in a host name (letters, digits and - . _ only)");
    ck_assert_str_eq(expand("n[1234567890]", 0), "ERROR: host list, column 3: a number longer than 9 digits");
    ck_assert_str_eq(expand("n[0-1000]", 1000), "ERROR: host list: more than 1000 names");
    ck_assert_str_eq(expand("a[0-99],b[0-99]", 150), "ERROR: host list: more than 150 names");
    ck_assert_str_eq(expand("n[0-99999]", 0), "ERROR: host list: more than 65536 names");
    ck_assert_str_eq(expand("n[0-999999999]x[0-999999999]", 0), "ERROR: host list: more than 65536 names");
    char longname[300];
    memset(longname, 'a', 255);
    strcpy(longname + 255, "[1]");
    ck_assert_ptr_nonnull(strstr(expand(longname, 0), "ERROR: host list: a name longer than 255 characters"));
    longname[255] = '\0';
    ck_assert_uint_eq(strlen(expand(longname, 0)), 255);
}
END_TEST

/* Random lists, compressed as Slurm writes them, against their names
 * written out one by one. */
START_TEST(hostlist_random)
{
    uint64_t seed = tu_seed();
    for (int round = 0; round < 200; round++) {
        char text[4096] = "", expect[16384] = "";
        size_t tl = 0, el = 0;
        unsigned items = 1 + tu_below(4);
        for (unsigned i = 0; i < items; i++) {
            char prefix[8];
            unsigned plen = 1 + tu_below(5);
            for (unsigned c = 0; c < plen; c++)
                prefix[c] = "abcxyz-._"[c == 0 ? tu_below(6) : tu_below(9)];
            prefix[plen] = '\0';
            tl += (size_t)snprintf(text + tl, sizeof text - tl, "%s%s", i ? "," : "", prefix);
            if (tu_below(4) == 0) { /* a plain name */
                el += (size_t)snprintf(expect + el, sizeof expect - el, "%s%s", el ? " " : "", prefix);
                continue;
            }
            unsigned ranges = 1 + tu_below(3);
            tl += (size_t)snprintf(text + tl, sizeof text - tl, "[");
            for (unsigned r = 0; r < ranges; r++) {
                unsigned lo = tu_below(120), hi = lo + tu_below(6);
                int width = tu_below(2) ? 3 : 0;
                if (lo >= 100)
                    width = 0; /* no leading zero to say it */
                tl += (size_t)snprintf(text + tl, sizeof text - tl, "%s%0*u", r ? "," : "", width, lo);
                if (hi != lo || tu_below(2))
                    tl += (size_t)snprintf(text + tl, sizeof text - tl, "-%0*u", width, hi);
                for (unsigned v = lo; v <= hi; v++)
                    el += (size_t)snprintf(expect + el, sizeof expect - el, "%s%s%0*u", el ? " " : "", prefix,
                                           width, v);
            }
            tl += (size_t)snprintf(text + tl, sizeof text - tl, "]");
        }
        const char *got = expand(text, 0);
        if (strcmp(got, expect) != 0)
            ck_abort_msg("seed %llu round %d: '%s' gave '%s', expected '%s'", (unsigned long long)seed, round, text,
                         got, expect);
    }
}
END_TEST

/* ---- engines ------------------------------------------------------------------ */

static const char topology_xml[] =
    "<configuration>\n"
    "  <producer><name>reader</name><binary_code>file_producer</binary_code><size>1024</size>\n"
    "    <parameter name=\"file\">in.adf</parameter></producer>\n"
    "  <intermediary instances=\"2\"><name>copy</name><hostname>node2</hostname><address>node2</address>\n"
    "    <binary_code>passthrough</binary_code><size>1024</size><data_source>reader</data_source></intermediary>\n"
    "  <consumer><name>writer</name><binary_code>null_consumer</binary_code><data_source>copy</data_source>"
    "</consumer>\n"
    "</configuration>\n";

static tusk_topology_t *topology(void)
{
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    if (tusk_topology_parse(&t, topology_xml, strlen(topology_xml), "chain.xml", &err) != TUSK_OK)
        ck_abort_msg("topology: %s", err.message);
    return t;
}

static tusk_engine_t *engine(const char *name, const char *const *props, size_t n)
{
    tusk_engine_t *e = NULL;
    tusk_error_t err;
    if (tusk_engine_new(&e, name, &err) != TUSK_OK)
        ck_abort_msg("%s", err.message);
    for (size_t i = 0; i < n; i++)
        if (tusk_engine_add_property(e, props[i], &err) != TUSK_OK)
            ck_abort_msg("%s", err.message);
    return e;
}

/* The words for actor a, instance k, incarnation inc of run 7 by pid 4242. */
static const char *words(const tusk_engine_t *e, const tusk_topology_t *t, unsigned a, unsigned k, unsigned inc,
                         char *const *before, size_t n_before)
{
    static char out[4096];
    char **w = NULL;
    size_t n = 0;
    tusk_error_t err;
    if (tusk_engine_words(e, t, a, k, inc, 7, 4242, before, n_before, &w, &n, &err) != TUSK_OK) {
        snprintf(out, sizeof out, "ERROR: %s", err.message);
        return out;
    }
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " " : "", w[i]);
    ck_assert_ptr_null(w[n]);
    free(w);
    return out;
}

START_TEST(engine_words)
{
    tusk_topology_t *t = topology();
    char *ssh[] = {"ssh", "node2"};
    ck_assert_str_eq(words(NULL, t, 1, 0, 0, ssh, 2), "ssh node2");
    tusk_engine_t *e = engine("direct", NULL, 0);
    ck_assert_str_eq(words(e, t, 0, 0, 0, NULL, 0), "");
    ck_assert(!tusk_engine_replaces_launcher(e));
    tusk_engine_destroy(&e);

    const char *props[] = {"MemoryMax=2G", "copy:CPUQuota=50%", "writer:AllowedCPUs=0-1"};
    e = engine("systemd", props, 3);
    tusk_error_t err;
    ck_assert_int_eq(tusk_engine_pass_env(e, "TUSK_ACTOR_PATH", &err), TUSK_OK);
    ck_assert_str_eq(words(e, t, 0, 0, 0, NULL, 0),
                     "systemd-run --user --pipe --wait --collect --quiet --same-dir --unit=tusk-r7-4242-reader.0.0 "
                     "--setenv=TUSK_JOURNAL=tusk-r7-4242-reader.0 --setenv=TUSK_ACTOR_PATH -p MemoryMax=2G --");
    ck_assert_str_eq(words(e, t, 1, 1, 2, ssh, 2),
                     "ssh node2 systemd-run --user --pipe --wait --collect --quiet --same-dir "
                     "--unit=tusk-r7-4242-copy.1.2 --setenv=TUSK_JOURNAL=tusk-r7-4242-copy.1 --setenv=TUSK_ACTOR_PATH "
                     "-p MemoryMax=2G -p CPUQuota=50% --");
    ck_assert_int_eq(tusk_engine_check(e, t, &err), TUSK_OK);
    ck_assert(!tusk_engine_replaces_launcher(e));
    tusk_engine_destroy(&e);

    e = engine("systemd-system", props + 2, 1);
    ck_assert_str_eq(words(e, t, 2, 0, 1, NULL, 0),
                     "systemd-run --pipe --wait --collect --quiet --same-dir --unit=tusk-r7-4242-writer.0.1 "
                     "--setenv=TUSK_JOURNAL=tusk-r7-4242-writer.0 -p AllowedCPUs=0-1 --");
    tusk_engine_destroy(&e);

    e = engine("slurm", NULL, 0);
    ck_assert(tusk_engine_replaces_launcher(e));
    ck_assert_int_eq(tusk_engine_check(e, t, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--engine slurm: no node list (run tusk-run inside an allocation: sbatch, "
                                  "salloc; SLURM_JOB_NODELIST is not set)");
    ck_assert_str_eq(words(e, t, 0, 0, 0, NULL, 0), "ERROR: --engine slurm: no node list");
    ck_assert_int_eq(tusk_engine_set_nodes(e, "vm,node[1-2]", "vm", &err), TUSK_OK);
    ck_assert_int_eq(tusk_engine_check(e, t, &err), TUSK_OK);
    ck_assert_str_eq(words(e, t, 0, 0, 0, NULL, 0),
                     "srun --nodes=1 --ntasks=1 --nodelist=vm --overlap --quiet --job-name=tusk-reader.0 --");
    ck_assert_str_eq(words(e, t, 1, 1, 3, NULL, 0),
                     "srun --nodes=1 --ntasks=1 --nodelist=node2 --overlap --quiet --job-name=tusk-copy.1 --");
    ck_assert_int_eq(tusk_engine_set_nodes(e, "node[1-2]", "vm", &err), TUSK_OK);
    ck_assert_int_eq(tusk_engine_check(e, t, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "actor 'reader' (line 2) is on localhost, this host, and vm is not a node of "
                                  "the allocation (node[1-2])");
    ck_assert_int_eq(tusk_engine_set_nodes(e, "vm,node[3-4]", "vm", &err), TUSK_OK);
    ck_assert_int_eq(tusk_engine_check(e, t, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "actor 'copy' (line 4): its <hostname> node2 is not a node of the allocation "
                                  "(vm,node[3-4])");
    ck_assert_int_eq(tusk_engine_set_nodes(e, "node[2", "vm", &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "SLURM_JOB_NODELIST: host list, column 5: '[' is not closed");
    tusk_engine_destroy(&e);
    tusk_topology_destroy(&t);
}
END_TEST

/* Slurm placement (tusk_engine_place): the actors without a host round
 * robin over the allocation's nodes, in the topology's order; a named
 * host stays, and must be a node of the allocation. */
static const char placement_xml[] =
    "<configuration>\n"
    "  <producer><name>reader</name><binary_code>file_producer</binary_code><size>1024</size>\n"
    "    <parameter name=\"file\">in.adf</parameter></producer>\n"
    "  <intermediary instances=\"2\"><name>copy</name><address>eth0</address>\n"
    "    <binary_code>passthrough</binary_code><size>1024</size><data_source>reader</data_source></intermediary>\n"
    "  <intermediary><name>sorter</name><hostname>@HOST@</hostname><address>eth0</address>\n"
    "    <binary_code>passthrough</binary_code><size>1024</size><data_source>copy</data_source></intermediary>\n"
    "  <consumer><name>writer</name><hostname>localhost</hostname><address>eth0</address>\n"
    "    <binary_code>null_consumer</binary_code><data_source>sorter</data_source></consumer>\n"
    "  <consumer><name>tap</name><hostname>127.0.0.1</hostname><address>eth0</address>\n"
    "    <binary_code>null_consumer</binary_code><data_source>sorter</data_source></consumer>\n"
    "</configuration>\n";

/* The placement note, then "| actor host" for each actor, or "ERROR: ...". */
static const char *place(const char *engine_name, const char *nodelist, const char *sorter_host)
{
    static char out[2048];
    char xml[sizeof placement_xml + 64];
    const char *at = strstr(placement_xml, "@HOST@");
    snprintf(xml, sizeof xml, "%.*s%s%s", (int)(at - placement_xml), placement_xml, sorter_host, at + 6);
    tusk_topology_t *t = NULL;
    tusk_error_t err;
    if (tusk_topology_parse(&t, xml, strlen(xml), "chain.xml", &err) != TUSK_OK)
        ck_abort_msg("topology: %s", err.message);
    tusk_engine_t *e = engine(engine_name, NULL, 0);
    if (nodelist)
        ck_assert_int_eq(tusk_engine_set_nodes(e, nodelist, "vm", &err), TUSK_OK);
    char note[1024];
    if (tusk_engine_place(e, t, note, sizeof note, &err) != TUSK_OK) {
        snprintf(out, sizeof out, "ERROR: %s", err.message);
    } else {
        size_t len = (size_t)snprintf(out, sizeof out, "%s", note);
        for (unsigned a = 0; a < tusk_topology_count(t); a++)
            len += (size_t)snprintf(out + len, sizeof out - len, " | %s %s", tusk_topology_actor(t, a)->name,
                                    tusk_topology_actor(t, a)->hostname);
        /* Every instance of an actor is a step on its node. */
        if (nodelist) {
            char want[128];
            snprintf(want, sizeof want, " --nodelist=%s ", tusk_topology_actor(t, 1)->hostname);
            ck_assert_ptr_nonnull(strstr(words(e, t, 1, 1, 0, NULL, 0), want));
        }
    }
    tusk_engine_destroy(&e);
    tusk_topology_destroy(&t);
    return out;
}

START_TEST(engine_placement)
{
    ck_assert_str_eq(place("slurm", "n[1-3]", "n3"),
                     "placement on the allocation's nodes (n[1-3]): reader -> n1, copy -> n2, sorter -> n3 (its "
                     "<hostname>), writer -> n3, tap -> n1 | reader n1 | copy n2 | sorter n3 | writer n3 | tap n1");
    /* One node: everything there. */
    ck_assert_str_eq(place("slurm", "vm", "vm"),
                     "placement on the allocation's nodes (vm): reader -> vm, copy -> vm, sorter -> vm (its "
                     "<hostname>), writer -> vm, tap -> vm | reader vm | copy vm | sorter vm | writer vm | tap vm");
    /* Twice the same node in the list: it takes twice the share. */
    ck_assert_str_eq(place("slurm", "a,b,a", "b"),
                     "placement on the allocation's nodes (a,b,a): reader -> a, copy -> b, sorter -> b (its "
                     "<hostname>), writer -> a, tap -> a | reader a | copy b | sorter b | writer a | tap a");
    ck_assert_str_eq(place("slurm", "n[1-3]", "n9"),
                     "ERROR: actor 'sorter' (line 6): its <hostname> n9 is not a node of the allocation (n[1-3])");
    /* Nothing placed: no allocation (tusk_engine_check says so), or another engine. */
    ck_assert_str_eq(place("slurm", NULL, "n3"),
                     " | reader localhost | copy localhost | sorter n3 | writer localhost | tap 127.0.0.1");
    ck_assert_str_eq(place("systemd", NULL, "n3"),
                     " | reader localhost | copy localhost | sorter n3 | writer localhost | tap 127.0.0.1");
    ck_assert_str_eq(place("direct", NULL, "n3"),
                     " | reader localhost | copy localhost | sorter n3 | writer localhost | tap 127.0.0.1");
    /* A note too long for its buffer ends in "...". */
    tusk_topology_t *t = topology();
    tusk_engine_t *e = engine("slurm", NULL, 0);
    tusk_error_t err;
    ck_assert_int_eq(tusk_engine_set_nodes(e, "node[1-2]", "vm", &err), TUSK_OK);
    char small[24];
    ck_assert_int_eq(tusk_engine_place(e, t, small, sizeof small, &err), TUSK_OK);
    ck_assert_str_eq(small, "placement on the all...");
    ck_assert_str_eq(tusk_topology_actor(t, 0)->hostname, "node1");
    ck_assert_str_eq(tusk_topology_actor(t, 1)->hostname, "node2");
    ck_assert_str_eq(tusk_topology_actor(t, 2)->hostname, "node2");
    tusk_engine_destroy(&e);
    tusk_topology_destroy(&t);
}
END_TEST

START_TEST(engine_options_refused)
{
    tusk_engine_t *e = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_engine_new(&e, "docker", &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--engine 'docker': direct, systemd, systemd-system or slurm");
    ck_assert_ptr_null(e);
    e = engine("systemd", NULL, 0);
    static const char *const bad[][2] = {
        {"MemoryMax", "--unit-property 'MemoryMax': [ACTOR:]NAME=VALUE expected"},
        {"=2G", "--unit-property '=2G': [ACTOR:]NAME=VALUE expected"},
        {"Memory-Max=2G", "--unit-property 'Memory-Max=2G': a property name is letters and digits (CPUQuota, "
                          "MemoryMax, AllowedCPUs, ...)"},
        {":MemoryMax=2G", "--unit-property ':MemoryMax=2G': an empty actor name"},
        {"MemoryMax=", "--unit-property 'MemoryMax=': the value must be letters, digits and _ . / : @ % + = , - "
                       "only (it may reach a remote shell)"},
        {"ExecStartPre=rm -rf ~", "--unit-property 'ExecStartPre=rm -rf ~': the value must be letters, digits and "
                                  "_ . / : @ % + = , - only (it may reach a remote shell)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(tusk_engine_add_property(e, bad[i][0], &err), TUSK_EINVAL);
        ck_assert_str_eq(err.message, bad[i][1]);
    }
    ck_assert_int_eq(tusk_engine_pass_env(e, "A;B", &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "'A;B' is no environment variable name");
    ck_assert_int_eq(tusk_engine_add_property(e, "sorter:MemoryMax=1G", &err), TUSK_OK);
    tusk_topology_t *t = topology();
    ck_assert_int_eq(tusk_engine_check(e, t, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--unit-property sorter:MemoryMax=1G: the topology has no actor 'sorter'");
    tusk_engine_destroy(&e);
    e = engine("slurm", NULL, 0);
    ck_assert_int_eq(tusk_engine_add_property(e, "MemoryMax=1G", &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--unit-property 'MemoryMax=1G': only with --engine systemd or systemd-system");
    tusk_engine_destroy(&e);
    ck_assert_int_eq(tusk_engine_from_options(&e, NULL, (const char *const[]){"MemoryMax=1G"}, 1, &err),
                     TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--unit-property: only with --engine systemd or systemd-system");
    ck_assert_int_eq(tusk_engine_from_options(&e, NULL, NULL, 0, &err), TUSK_OK);
    ck_assert_ptr_null(e);
    tusk_topology_destroy(&t);
}
END_TEST

START_TEST(unit_file)
{
    tusk_topology_t *t = topology();
    const char *props[] = {"MemoryMax=2G", "copy:CPUQuota=50%"};
    tusk_engine_t *e = engine("systemd", props, 2);
    char *text = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_engine_unit_text(e, t, "/srv/tusk/chain.xml", "/usr/bin/tusk-run", &text, &err), TUSK_OK);
    ck_assert_str_eq(text,
                     "# Made by tusk-run --units from chain.xml: the chain, run by tusk-run;\n"
                     "# each instance is a transient unit of its own (tusk-rRUN-PID-ACTOR.K.INC):\n"
                     "#   reader x1 on localhost MemoryMax=2G\n"
                     "#   copy x2 on node2 MemoryMax=2G CPUQuota=50%\n"
                     "#   writer x1 on localhost MemoryMax=2G\n"
                     "[Unit]\n"
                     "Description=tusk chain chain.xml\n"
                     "After=network-online.target\n"
                     "Wants=network-online.target\n"
                     "StartLimitIntervalSec=600\n"
                     "StartLimitBurst=3\n"
                     "\n"
                     "[Service]\n"
                     "Type=exec\n"
                     "ExecStart=/usr/bin/tusk-run --no-live --engine systemd --unit-property MemoryMax=2G "
                     "--unit-property copy:CPUQuota=50%% /srv/tusk/chain.xml\n"
                     "Restart=on-failure\n"
                     "RestartSec=10\n"
                     "# SIGTERM: tusk-run stops the producers, lets the rest drain, then ends.\n"
                     "KillMode=mixed\n"
                     "TimeoutStopSec=60\n"
                     "\n"
                     "[Install]\n"
                     "WantedBy=default.target\n");
    free(text);
    ck_assert_int_eq(tusk_engine_unit_text(e, t, "chain.xml", "/usr/bin/tusk-run", &text, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "topology 'chain.xml': an absolute path of letters, digits and _ . / : @ % + = , - "
                                  "only, for ExecStart=");
    ck_assert_int_eq(tusk_engine_unit_text(e, t, "/srv/a b.xml", "/usr/bin/tusk-run", &text, &err), TUSK_EINVAL);
    ck_assert_ptr_null(text);
    tusk_engine_destroy(&e);

    e = engine("systemd-system", NULL, 0);
    char dir[256], path[512];
    tu_make_dir(dir, sizeof dir);
    ck_assert_int_eq(tusk_engine_write_units(e, t, "/srv/daq-1.xml", "/opt/tusk/bin/tusk-run", dir, path,
                                             sizeof path, &err),
                     TUSK_OK);
    char want[512];
    snprintf(want, sizeof want, "%s/tusk-daq-1.service", dir);
    ck_assert_str_eq(path, want);
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    char line[512], exec[512] = "", wanted[512] = "";
    while (fgets(line, sizeof line, fp)) {
        if (strncmp(line, "ExecStart=", 10) == 0)
            snprintf(exec, sizeof exec, "%s", line);
        if (strncmp(line, "WantedBy=", 9) == 0)
            snprintf(wanted, sizeof wanted, "%s", line);
    }
    fclose(fp);
    ck_assert_str_eq(exec, "ExecStart=/opt/tusk/bin/tusk-run --no-live --engine systemd-system /srv/daq-1.xml\n");
    ck_assert_str_eq(wanted, "WantedBy=multi-user.target\n");
    /* Never over an existing file. */
    ck_assert_int_ne(tusk_engine_write_units(e, t, "/srv/daq-1.xml", "/opt/tusk/bin/tusk-run", dir, path,
                                             sizeof path, &err),
                     TUSK_OK);
    unlink(want);
    ck_assert_int_eq(tusk_engine_write_units(e, t, "/srv/daq+1.xml", "/opt/tusk/bin/tusk-run", dir, path,
                                             sizeof path, &err),
                     TUSK_EINVAL);
    ck_assert_str_eq(err.message, "--units: the unit is named after the topology file, 'daq+1' is no unit name "
                                  "(letters, digits and _ - . only)");
    tu_remove_dir(dir);
    tusk_engine_destroy(&e);
    e = engine("slurm", NULL, 0);
    ck_assert_int_eq(tusk_engine_unit_text(e, t, "/srv/chain.xml", "/usr/bin/tusk-run", &text, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "with --engine systemd or systemd-system only");
    tusk_engine_destroy(&e);
    tusk_topology_destroy(&t);
}
END_TEST

/* ---- the journal (journal.h) ------------------------------------------------------ */

/* A journald stand-in: a listening stream socket DIR/stdout. */
static int fake_journald(const char *dir, char *path, size_t size)
{
    snprintf(path, size, "%s/stdout", dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    ck_assert_uint_lt(strlen(path), sizeof sa.sun_path);
    strcpy(sa.sun_path, path);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    ck_assert_int_eq(bind(s, (const struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(s, 4), 0);
    return s;
}

/* Everything until the end of fd, as text. */
static const char *read_to_end(int fd)
{
    static char out[4096];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, out + len, sizeof out - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    out[len] = '\0';
    return out;
}

/* A process that tees its output (tusk_journal_tee) to the journal at
 * `sock`, prints a line on each of stdout and stderr, and ends by exit or
 * SIGKILL; what its log (its standard output before) and the journal
 * got, "log|journal". */
static const char *tee_child(const char *sock, int listener, bool killed)
{
    static char out[8192];
    int log[2];
    ck_assert_int_eq(pipe(log), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(log[1], STDOUT_FILENO);
        dup2(log[1], STDERR_FILENO);
        close(log[0]);
        close(log[1]);
        tusk_error_t err;
        if (tusk_journal_tee(sock, "tusk-r7-4242-copy.1", &err) != TUSK_OK)
            _exit(3);
        printf("out line\n");
        fflush(stdout); /* stdout is buffered as it was; stderr is not */
        fprintf(stderr, "err line\n");
        printf("no newline at the end");
        fflush(stdout);
        if (killed)
            raise(SIGKILL);
        _exit(0);
    }
    close(log[1]);
    int conn = accept(listener, NULL, NULL);
    ck_assert_int_ge(conn, 0);
    char logged[4096];
    snprintf(logged, sizeof logged, "%s", read_to_end(log[0]));
    snprintf(out, sizeof out, "%s|%s", logged, read_to_end(conn));
    close(conn);
    close(log[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(killed ? WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL : WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return out;
}

START_TEST(journal_tee)
{
    tusk_error_t err;
    ck_assert_int_eq(tusk_journal_ident_check("tusk-r1-77-copy.0", &err), TUSK_OK);
    ck_assert_int_eq(tusk_journal_ident_check("a\nb", &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "journal identifier 'a\nb': 1 to 200 of letters, digits and - _ . @ only");
    ck_assert_int_eq(tusk_journal_ident_check("", &err), TUSK_EINVAL);
    char dir[256], sock[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(sock, sizeof sock, "%s/none", dir);
    int fd = 7;
    ck_assert_int_eq(tusk_journal_connect(sock, "x", &fd, &err), TUSK_EIO);
    ck_assert_int_eq(fd, -1);
    char want[600];
    snprintf(want, sizeof want, "no journal (connect %s: No such file or directory)", sock);
    ck_assert_str_eq(err.message, want);
    int listener = fake_journald(dir, sock, sizeof sock);
    const char *both = "out line\nerr line\nno newline at the end|"
                       "tusk-r7-4242-copy.1\n\n6\n0\n0\n0\n0\nout line\nerr line\nno newline at the end";
    ck_assert_str_eq(tee_child(sock, listener, false), both);
    /* Killed: every line written before is in both, none lost. */
    ck_assert_str_eq(tee_child(sock, listener, true), both);
    close(listener);
    unlink(sock);
    tu_remove_dir(dir);
}
END_TEST

/* tusk_engine_journal: RUN_DIR/journal.txt and the start message's note. */
START_TEST(engine_journal_note)
{
    tusk_topology_t *t = topology();
    tusk_engine_t *e = engine("systemd", NULL, 0);
    char dir[256], note[1024];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    for (int twice = 0; twice < 2; twice++) /* a run folder used again */
        ck_assert_int_eq(tusk_engine_journal(e, t, 7, 4242, dir, note, sizeof note, &err), TUSK_OK);
    char want[1024];
    snprintf(want, sizeof want, "each instance's output is in the run folder and in the journal: journalctl -t "
                                "tusk-r7-4242-reader.0 (every instance: %s/journal.txt)", dir);
    ck_assert_str_eq(note, want);
    char path[512];
    snprintf(path, sizeof path, "%s/journal.txt", dir);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_str_eq(read_to_end(fd),
                     "# The output of each instance (tusk-run --engine systemd): in this folder, ACTOR.K.log,\n"
                     "# and in the journal of its host, identifier tusk-rRUN-PID-ACTOR.K (incarnations together):\n"
                     "journalctl -t tusk-r7-4242-reader.0\n"
                     "ssh node2 journalctl -t tusk-r7-4242-copy.0\n"
                     "ssh node2 journalctl -t tusk-r7-4242-copy.1\n"
                     "journalctl -t tusk-r7-4242-writer.0\n"
                     "# Units: systemctl --user status 'tusk-r*-4242-*' while they run (tusk-rRUN-PID-ACTOR.K.INC).\n");
    close(fd);
    unlink(path);
    /* From now on, a restart in a later run (9: its unit's name) writes
     * under run 7's identifier, the one journal.txt gives. */
    ck_assert_str_eq(words(e, t, 1, 1, 3, NULL, 0) + strlen("systemd-run --user --pipe --wait --collect --quiet "
                                                            "--same-dir --unit=tusk-r7-4242-copy.1.3 "),
                     "--setenv=TUSK_JOURNAL=tusk-r7-4242-copy.1 --");
    char **w = NULL;
    size_t n = 0;
    ck_assert_int_eq(tusk_engine_words(e, t, 1, 1, 3, 9, 4242, NULL, 0, &w, &n, &err), TUSK_OK);
    ck_assert_str_eq(w[7], "--unit=tusk-r9-4242-copy.1.3");
    ck_assert_str_eq(w[8], "--setenv=TUSK_JOURNAL=tusk-r7-4242-copy.1");
    free(w);
    tusk_engine_destroy(&e);
    /* No journal with the other engines: nothing written, nothing said. */
    e = engine("slurm", NULL, 0);
    ck_assert_int_eq(tusk_engine_journal(e, t, 7, 4242, dir, note, sizeof note, &err), TUSK_OK);
    ck_assert_str_eq(note, "");
    ck_assert_int_ne(access(path, F_OK), 0);
    tusk_engine_destroy(&e);
    ck_assert_int_eq(tusk_engine_journal(NULL, t, 7, 4242, dir, note, sizeof note, &err), TUSK_OK);
    ck_assert_str_eq(note, "");
    tu_remove_dir(dir);
    tusk_topology_destroy(&t);
}
END_TEST

/* ---- merged reports -------------------------------------------------------------- */

static char *write_temp(const char *text)
{
    char *path = tu_temp_path();
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
    return path;
}

static const char *merge(const char *a, const char *b)
{
    static char out[4096];
    char *pa = write_temp(a), *pb = write_temp(b);
    const char *paths[] = {pa, pb};
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    tusk_error_t err;
    int rc = tusk_reports_merge(paths, 2, fp, &err);
    fclose(fp);
    if (rc != TUSK_OK) {
        /* The paths are temporary: name them A and B. */
        const char *msg = err.message;
        const char *which = strncmp(msg, pa, strlen(pa)) == 0 ? "A" : strncmp(msg, pb, strlen(pb)) == 0 ? "B" : "?";
        size_t skip = which[0] == 'A' ? strlen(pa) : which[0] == 'B' ? strlen(pb) : 0;
        snprintf(out, sizeof out, "ERROR: %s%s", which, msg + skip);
    } else {
        snprintf(out, sizeof out, "%s", buf);
    }
    free(buf);
    unlink(pa);
    unlink(pb);
    free(pa);
    free(pb);
    return out;
}

START_TEST(reports_merged)
{
    const char *a = "instance=reader[0] actor=reader class=producer host=localhost failed=0 restarts=0 "
                    "out_buffers=10\n"
                    "link=reader[0]->writer[0] sent=10 received=10 lost=0 exact=1\n"
                    "run=1 seconds=1.500 lost=0 fatal=0\n";
    const char *b = "instance=reader[0] actor=reader class=producer host=vm failed=1 restarts=2 out_buffers=5\n"
                    "\n"
                    "link=reader[0]->writer[0] sent=5 received=4 lost=1 exact=0\n"
                    "link=reader[0]->writer[1] sent=3 received=3 lost=0 exact=1\n"
                    "run=1 seconds=0.250 lost=1 fatal=1 dropped=4\n";
    ck_assert_str_eq(merge(a, b), "reports=2\n"
                                  "instance=reader[0] actor=reader class=producer host=* failed=1 restarts=2 "
                                  "out_buffers=15 runs=2\n"
                                  "link=reader[0]->writer[0] sent=15 received=14 lost=1 exact=0 runs=2\n"
                                  "run=1 seconds=1.750 lost=1 fatal=1 dropped=4 runs=2\n"
                                  "link=reader[0]->writer[1] sent=3 received=3 lost=0 exact=1 runs=1\n");
    ck_assert_str_eq(merge(a, a), "reports=2\n"
                                  "instance=reader[0] actor=reader class=producer host=localhost failed=0 restarts=0 "
                                  "out_buffers=20 runs=2\n"
                                  "link=reader[0]->writer[0] sent=20 received=20 lost=0 exact=1 runs=2\n"
                                  "run=1 seconds=3.000 lost=0 fatal=0 runs=2\n");
    ck_assert_str_eq(merge(a, "run=1 seconds=many\n"),
                     "ERROR: B:1: seconds=many, a number in one report and text in another");
    ck_assert_str_eq(merge("x=1\ngarbage here\n", a), "ERROR: A:2: control message R: bad field 'garbage'");
    ck_assert_str_eq(merge(a, "x=1  y=2\n"), "ERROR: B:1: control message R: bad field ''");
}
END_TEST

START_TEST(reports_missing)
{
    const char *paths[] = {"/nonexistent/tusk/report"};
    tusk_error_t err;
    ck_assert_int_eq(tusk_reports_merge(paths, 1, stdout, &err), TUSK_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent/tusk/report"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("hostlist");
    tcase_add_test(tc, hostlist_forms);
    tcase_add_test(tc, hostlist_errors);
    tcase_add_test(tc, hostlist_random);
    suite_add_tcase(s, tc);
    tc = tcase_create("engine");
    tcase_add_test(tc, engine_words);
    tcase_add_test(tc, engine_placement);
    tcase_add_test(tc, journal_tee);
    tcase_add_test(tc, engine_journal_note);
    tcase_add_test(tc, engine_options_refused);
    tcase_add_test(tc, unit_file);
    suite_add_tcase(s, tc);
    tc = tcase_create("reports");
    tcase_add_test(tc, reports_merged);
    tcase_add_test(tc, reports_missing);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
