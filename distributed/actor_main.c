/* tusk-actor - host one instance of one actor in a distributed run.
 *
 * Started by tusk-run (locally, or on another host through ssh); it
 * connects to the controller and takes its orders from there. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "journal.h"
#include "node.h"
#include "security.h"

#define PROG "tusk-actor"

static void help(FILE *out)
{
    fprintf(out, "Hosts instance K of actor NAME for the tusk-run controller at ENDPOINT\n"
                 "(e.g. tcp://10.0.0.1:5500). tusk-run starts it; you run it by hand only\n"
                 "to debug. It exits when told to, or when the controller has been silent\n"
                 "for MS milliseconds (default 10000; tusk-run passes its --orphan-ms), even\n"
                 "inside a hook: an orphan does not go on producing.\n"
                 "\n"
                 "  --secrets FILE|-   the run's keys and this instance's token: what\n"
                 "                     tusk-run writes to its standard input ('-'), or a\n"
                 "                     file only you can read (RUN_FOLDER/keys, to debug)\n"
                 "  --security none    no keys: tcp without authentication\n"
                 "  --debug gdbserver:PORT | valgrind:LOG\n"
                 "                     run under gdbserver (waiting for gdb on localhost:PORT)\n"
                 "                     or valgrind's memcheck (its report into LOG); tusk-run\n"
                 "                     --debug INSTANCE=... passes it to one instance\n"
                 "\n"
                 "Exit status: 0 told to end, 2 bad usage, another the controller was lost.\n");
}

/* The secrets tusk-run writes to our standard input, up to its end. */
static int read_stdin(char **text, size_t *size, tusk_error_t *err)
{
    char *buf = malloc(TUSK_SECRETS_MAX + 1);
    size_t got = 0;
    if (!buf)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    while (got <= TUSK_SECRETS_MAX) {
        ssize_t r = read(STDIN_FILENO, buf + got, TUSK_SECRETS_MAX + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got > TUSK_SECRETS_MAX) {
        free(buf);
        return tusk_error_set(err, TUSK_EINVAL, "more than %u bytes on standard input", TUSK_SECRETS_MAX);
    }
    buf[got] = '\0';
    *text = buf;
    *size = got;
    return TUSK_OK;
}

/* --debug: this same process again under gdbserver or valgrind (with
 * every argument but --debug's; the secrets stay on standard input).
 * Once: the marked environment says it runs under it already. */
static int exec_debug(const char *how, int argc, char **argv)
{
    if (getenv("TUSK_ACTOR_DEBUGGED"))
        return TUSK_EXIT_OK;
    char spec[512];
    if ((size_t)snprintf(spec, sizeof spec, "%s", how) >= sizeof spec) {
        fprintf(stderr, PROG ": --debug: too long\n");
        return TUSK_EXIT_USAGE;
    }
    char *arg = strchr(spec, ':');
    if (arg)
        *arg++ = '\0';
    char comm[64], log[600];
    const char *tool[16];
    size_t n = 0;
    unsigned port = 0;
    if (strcmp(spec, "gdbserver") == 0 && arg && tusk_cli_unsigned(PROG, "--debug gdbserver:PORT", arg, 1, 65535, &port)) {
        snprintf(comm, sizeof comm, "localhost:%u", port);
        tool[n++] = "gdbserver";
        tool[n++] = comm;
    } else if (strcmp(spec, "valgrind") == 0 && arg && *arg) {
        static const char *const vg_args[] = {TUSK_MEMCHECK_ARGS};
        const char *vg = getenv("VALGRIND");
        tool[n++] = vg && *vg ? vg : "valgrind";
        for (size_t i = 0; i < sizeof vg_args / sizeof vg_args[0]; i++)
            tool[n++] = vg_args[i];
        snprintf(log, sizeof log, "--log-file=%s", arg);
        tool[n++] = log;
    } else {
        if (strcmp(spec, "gdbserver") != 0 || !arg)
            fprintf(stderr, PROG ": --debug '%s': gdbserver:PORT or valgrind:LOG\n", how);
        return TUSK_EXIT_USAGE;
    }
    tool[n] = NULL;
    char **args = calloc((size_t)argc, sizeof *args);
    if (!args)
        return TUSK_EXIT_FAIL;
    size_t k = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--debug") == 0 && i + 1 < argc)
            i++;
        else if (strncmp(argv[i], "--debug=", 8) != 0)
            args[k++] = argv[i];
    }
    int rc = tusk_cli_exec_under(PROG ": --debug", tool, args, k, "TUSK_ACTOR_DEBUGGED");
    free(args);
    return rc;
}

static int run(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"control", required_argument, NULL, 'c'},
                                             {"actor", required_argument, NULL, 'a'},
                                             {"instance", required_argument, NULL, 'i'},
                                             {"incarnation", required_argument, NULL, 'n'},
                                             {"orphan-ms", required_argument, NULL, 'o'},
                                             {"secrets", required_argument, NULL, 's'},
                                             {"security", required_argument, NULL, 'S'},
                                             {"debug", required_argument, NULL, 'D'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    tusk_node_options_t opt = {.orphan_ms = 10000};
    int c;
    bool have_instance = false, insecure = false;
    const char *secrets_from = NULL, *debug = NULL;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': opt.control = optarg; break;
        case 'a': opt.actor = optarg; break;
        case 'i':
            if (!tusk_cli_unsigned(PROG, "--instance", optarg, 0, 0xFFFF, &opt.instance))
                return TUSK_EXIT_USAGE;
            have_instance = true;
            break;
        case 'n':
            if (!tusk_cli_unsigned(PROG, "--incarnation", optarg, 0, 0xFFFF, &opt.incarnation))
                return TUSK_EXIT_USAGE;
            break;
        case 'o':
            if (!tusk_cli_unsigned(PROG, "--orphan-ms", optarg, 0, UINT_MAX, &opt.orphan_ms))
                return TUSK_EXIT_USAGE;
            break;
        case 's': secrets_from = optarg; break;
        case 'D': debug = optarg; break;
        case 'S':
            if (strcmp(optarg, "none") != 0) {
                fprintf(stderr, PROG ": --security takes 'none' (keys come with --secrets)\n");
                return TUSK_EXIT_USAGE;
            }
            insecure = true;
            break;
        case 'h': return tusk_cli_help(cli);
        case 'V': return tusk_cli_version(cli);
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (!opt.control || !opt.actor || !have_instance || optind != argc) {
        if (optind != argc)
            fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        else
            fprintf(stderr, PROG ": --control, --actor and --instance are required\n");
        return TUSK_EXIT_USAGE;
    }
    if (!secrets_from == !insecure) {
        fprintf(stderr, PROG ": give --secrets FILE|- (tusk-run does) or --security none\n");
        return TUSK_EXIT_USAGE;
    }
    if (debug) {
        /* Under gdbserver or valgrind, no copier process beside the
         * instance (journal.h): its output goes to the run folder only. */
        unsetenv("TUSK_JOURNAL");
        int rc = exec_debug(debug, argc, argv);
        if (rc != TUSK_EXIT_OK)
            return rc;
    }
    /* A dead downstream peer must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    tusk_error_t err;
    tusk_error_clear(&err);
    /* A systemd unit's output to the journal too (journal.h, engine.h). */
    const char *journal = getenv("TUSK_JOURNAL");
    if (journal && *journal && tusk_journal_tee(TUSK_JOURNAL_SOCKET, journal, &err) != TUSK_OK)
        fprintf(stderr, PROG ": TUSK_JOURNAL=%s: %s: the output goes to the run folder only\n", journal,
                err.message);
    tusk_error_clear(&err);
    tusk_secrets_t secrets;
    if (secrets_from) {
        char *text = NULL;
        size_t size = 0;
        int rc = strcmp(secrets_from, "-") == 0 ? read_stdin(&text, &size, &err)
                                                : tusk_read_private(secrets_from, TUSK_SECRETS_MAX, &text, &size, &err);
        if (rc == TUSK_OK)
            rc = tusk_secrets_parse(text, size, &secrets, &err);
        if (text) {
            memset(text, 0, size);
            free(text);
        }
        if (rc != TUSK_OK) {
            fprintf(stderr, PROG ": --secrets %s: %s\n", secrets_from, err.message);
            return TUSK_EXIT_USAGE;
        }
        opt.secrets = &secrets;
    }
    int status = tusk_node_run(&opt, &err);
    memset(&secrets, 0, sizeof secrets);
    if (status != 0)
        fprintf(stderr, "%s\n", err.message);
    return status;
}

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION,
                                   "--control ENDPOINT --actor NAME --instance K --secrets FILE|- [--incarnation N]\n"
                                   "[--orphan-ms MS] [--debug gdbserver:PORT|valgrind:LOG]",
                                   NULL, run, help};
    return tusk_cli_main(&cli, argc, argv);
}
