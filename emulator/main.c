/* tusk-emulate - run a topology serially in one process (for gdb,
 * valgrind and offline replay). See emulator.h and the README. */
/* sigaltstack, SA_ONSTACK, SA_NODEFER: XSI. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "emulator.h"
#include "tusk/actor_host.h"

#define PROG "tusk-emulate"

/* The signal that asked this process to stop (0: none). The program's
 * own state, set by the handler only. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* ---- crashes ------------------------------------------------------------------
 * What runs when an actor (or the emulator) crashes: the note the actor
 * host fills in before every hook call says which actor, instance, hook
 * and buffer it was, and the handler writes that out with
 * async-signal-safe calls only, then lets the signal do what it would
 * have done (a core dump, when `ulimit -c` allows one). */
static tusk_actor_note_t crash_note;
/* The instances' configuration folders, said in the report: a crash
 * leaves them (only async-signal-safe calls in the handler). */
static char crash_work_dir[4096];

/* Its own stack, so that a stack overflow can still be reported. */
static char crash_stack[1 << 16];

static size_t put(char *buf, size_t cap, size_t n, const char *s)
{
    while (*s && n + 1 < cap)
        buf[n++] = *s++;
    return n;
}

static void on_crash(int sig)
{
    const char *what = sig == SIGSEGV   ? "SIGSEGV (invalid memory access)"
                       : sig == SIGBUS  ? "SIGBUS (bus error)"
                       : sig == SIGFPE  ? "SIGFPE (arithmetic error)"
                       : sig == SIGABRT ? "SIGABRT (abort)"
                                        : "a fatal signal";
    char line[2048];
    size_t n = put(line, sizeof line, 0, PROG ": ");
    n = put(line, sizeof line, n, what);
    n = put(line, sizeof line, n, crash_note.active ? " in " : ": ");
    n += tusk_actor_note_format(&crash_note, line + n, sizeof line - n);
    n = put(line, sizeof line, n, crash_note.active ? "\n" : " (the emulator itself)\n");
    if (crash_work_dir[0]) {
        n = put(line, sizeof line, n, PROG ": the instances' configuration folders are kept in ");
        n = put(line, sizeof line, n, crash_work_dir);
        n = put(line, sizeof line, n, "\n");
    }
    n = put(line, sizeof line, n,
            PROG ": the process dies of the signal now (a core dump if `ulimit -c` allows; "
                 "gdb --args " PROG " ... stops at the crash)\n");
    for (size_t done = 0; done < n;) {
        ssize_t w = write(STDERR_FILENO, line + done, n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    /* The handler was reset on entry (SA_RESETHAND): the signal's default
     * action ends the process, with a core dump. A fault re-faults on
     * return anyway; a raised signal (abort, raise) needs raising again. */
    raise(sig);
}

static void catch_crashes(void)
{
    stack_t ss = {.ss_sp = crash_stack, .ss_size = sizeof crash_stack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_crash;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_ONSTACK | SA_NODEFER;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- memcheck ------------------------------------------------------------------
 * --memcheck runs this same command under valgrind's memcheck, with what
 * readable reports need: the actor libraries stay loaded (TUSK_NO_DLCLOSE),
 * so that valgrind names their functions in leak reports. The same is set
 * when this process finds itself under valgrind anyway. */
static bool under_valgrind(void)
{
    const char *pre = getenv("LD_PRELOAD");
    return pre && strstr(pre, "vgpreload") != NULL;
}

static int exec_memcheck(int argc, char **argv)
{
    const char *vg = getenv("VALGRIND");
    static const char *const vg_args[] = {TUSK_MEMCHECK_ARGS, "--error-exitcode=1"};
    const size_t nv = sizeof vg_args / sizeof vg_args[0];
    const char *tool[sizeof vg_args / sizeof vg_args[0] + 2];
    tool[0] = vg && *vg ? vg : "valgrind";
    for (size_t i = 0; i < nv; i++)
        tool[1 + i] = vg_args[i];
    tool[1 + nv] = NULL;
    char **args = calloc((size_t)argc, sizeof *args);
    if (!args)
        return TUSK_EXIT_FAIL;
    /* Every argument but --memcheck (or its abbreviation: no other option
     * starts so), up to a "--". */
    size_t k = 0;
    bool options = true;
    for (int i = 1; i < argc; i++) {
        if (options && strcmp(argv[i], "--") == 0)
            options = false;
        else if (options && strncmp(argv[i], "--mem", 5) == 0)
            continue;
        args[k++] = argv[i];
    }
    int rc = tusk_cli_exec_under(PROG ": --memcheck", tool, args, k, "TUSK_EMULATE_MEMCHECK");
    free(args);
    return rc;
}

/* SIGINT, SIGTERM, SIGHUP: the run stops between buffers, actors stop and
 * the temporary folder is removed, then the process dies of the signal
 * (so its parent sees it: 128+N in a shell). Once: a second one acts at
 * once. A signal ignored at start (nohup, background jobs) stays so. */
static void catch_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART | SA_RESETHAND;
        sigaction(sigs[i], &sa, NULL);
    }
}

static void help(FILE *out)
{
    fprintf(out,
            "Runs every actor of TOPOLOGY in this process, one buffer at a time, and\n"
            "prints per actor: calls, buffers, frames, bytes and time in its hooks.\n"
            "\n"
            "  -n, --buffers N          stop the producers after N buffers\n"
            "  -e, --events N           stop the producers after the buffer holding the\n"
            "                           Nth frame\n"
            "      --only ACTOR         run only ACTOR, fed from --input\n"
            "  -i, --input FILE         ADF file replayed into ACTOR, in buffers of the\n"
            "                           size ACTOR gets in the chain\n"
            "  -o, --output FILE        where ACTOR's output goes (default: counted only)\n"
            "      --dump-between SRC:DST\n"
            "                           also write the buffers from SRC to DST into\n"
            "                           DIR/SRC-DST.adf (repeatable)\n"
            "      --dump-dir DIR       folder for --dump-between files (default .)\n"
            "      --actor-path PATH    folders searched for actor libraries, ':'-separated\n"
            "                           (default $TUSK_ACTOR_PATH, then the installed folder)\n"
            "      --work-dir DIR       keep each instance's configuration folder in DIR\n"
            "      --narval-script FILE\n"
            "                           a NARVAL shell script: its 'set library LIB SUBSYSTEM\n"
            "                           ACTOR' lines name the libraries of the topology's\n"
            "                           generic_producer/filter/consumer actors (repeatable)\n"
            "      --memcheck           run under valgrind (memcheck, full leak check), the\n"
            "                           actor libraries kept loaded so that its reports name\n"
            "                           their functions; exit 1 on any error or leak\n"
            "      --describe           print each actor's description and parameters\n"
            "  -v, --verbose            progress with rates every second\n"
            "  -q, --quiet              no summary table\n"
            "  -h, --help\n"
            "      --version\n"
            "\n"
            "Exit status: 0 the chain ran to its end; 1 an actor failed; 2 bad usage,\n"
            "topology or library. SIGINT, SIGTERM or SIGHUP stop the producers at the\n"
            "next buffer; the chain finishes what is in flight, the actors stop, the\n"
            "temporary folder is removed, and the process then dies of that signal\n"
            "(a second signal ends it at once). A crash (SIGSEGV, SIGBUS, SIGFPE,\n"
            "SIGABRT) is reported with the actor, instance, hook and buffer it was in,\n"
            "then the process dies of it (a core dump if `ulimit -c` allows).\n");
}

static int describe(const tusk_topology_t *topo)
{
    int status = 0;
    for (unsigned i = 0; i < tusk_topology_count(topo); i++) {
        const tusk_actor_spec_t *s = tusk_topology_actor(topo, i);
        tusk_actor_lib_t *lib;
        tusk_error_t err;
        printf("%s (%s, %u instance%s): %s\n", s->name, tusk_actor_class_name(s->actor_class), s->instances,
               s->instances == 1 ? "" : "s", s->library_path);
        if (tusk_actor_lib_open(&lib, s->library_path, s->actor_class, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            status = TUSK_EXIT_USAGE;
            continue;
        }
        const tusk_actor_descriptor_t *d = tusk_actor_lib_descriptor(lib);
        if (d)
            printf("  %s: %s\n  parameters:\n    %s\n", d->name, d->summary, d->parameters);
        else
            printf("  plain NARVAL library (no tusk descriptor)\n");
        tusk_actor_lib_close(&lib);
    }
    return status;
}

static int run(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"buffers", required_argument, NULL, 'n'},   {"events", required_argument, NULL, 'e'},
        {"only", required_argument, NULL, 'O'},      {"input", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},    {"dump-between", required_argument, NULL, 'D'},
        {"dump-dir", required_argument, NULL, 'd'},  {"actor-path", required_argument, NULL, 'p'},
        {"work-dir", required_argument, NULL, 'w'},  {"describe", no_argument, NULL, 'x'},
        {"narval-script", required_argument, NULL, 'N'}, {"memcheck", no_argument, NULL, 'M'},
        {"verbose", no_argument, NULL, 'v'},         {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},            {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    catch_signals();
    catch_crashes();
    if (under_valgrind())
        setenv("TUSK_NO_DLCLOSE", "1", 1);
    tusk_emulator_options_t opt = {.stop = &stop_signal, .note = &crash_note};
    const char *only = NULL, *input = NULL, *output = NULL;
    const char **dumps = calloc((size_t)argc, sizeof *dumps);
    const char **scripts = calloc((size_t)argc, sizeof *scripts);
    unsigned n_scripts = 0;
    bool quiet = false, want_describe = false, memcheck = false;
    if (!dumps || !scripts) {
        free(dumps);
        free(scripts);
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "n:e:i:o:vqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
        case 'e':
            if (!tusk_cli_u64(PROG, c == 'n' ? "--buffers" : "--events", optarg, 0, UINT64_MAX,
                              c == 'n' ? &opt.max_buffers : &opt.max_frames)) {
                free(dumps);
                free(scripts);
                return TUSK_EXIT_USAGE;
            }
            break;
        case 'O': only = optarg; break;
        case 'i': input = optarg; break;
        case 'o': output = optarg; break;
        case 'D': dumps[opt.n_dumps++] = optarg; break;
        case 'd': opt.dump_dir = optarg; break;
        case 'p': opt.actor_path = optarg; break;
        case 'w': opt.work_dir = optarg; break;
        case 'x': want_describe = true; break;
        case 'N': scripts[n_scripts++] = optarg; break;
        case 'M': memcheck = true; break;
        case 'v': opt.verbose = true; break;
        case 'q': quiet = true; break;
        case 'h':
            free(dumps);
            free(scripts);
            return tusk_cli_help(cli);
        case 'V':
            free(dumps);
            free(scripts);
            return tusk_cli_version(cli);
        default:
            free(dumps);
            free(scripts);
            return TUSK_EXIT_USAGE;
        }
    }
    opt.dumps = dumps;
    if (optind + 1 != argc || (only && !input) || (input && !only) || (output && !only)) {
        if (only && !input)
            fprintf(stderr, PROG ": --only needs --input FILE\n");
        else if (input || output)
            fprintf(stderr, PROG ": --input and --output go with --only ACTOR\n");
        else if (optind == argc)
            fprintf(stderr, PROG ": no TOPOLOGY.xml (" PROG " --help says more)\n");
        else
            fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind + 1]);
        free(dumps);
        free(scripts);
        return TUSK_EXIT_USAGE;
    }
    if (memcheck) {
        free(dumps);
        free(scripts);
        if (getenv("TUSK_EMULATE_MEMCHECK")) {
            fprintf(stderr, PROG ": --memcheck: already running under it\n");
            return TUSK_EXIT_USAGE;
        }
        return exec_memcheck(argc, argv);
    }

    tusk_error_t err;
    tusk_topology_t *topo = NULL, *replay = NULL;
    tusk_emulator_t *em = NULL;
    int status = TUSK_EXIT_USAGE;
    bool em_ran = false;
    if (tusk_topology_load(&topo, argv[optind], &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        goto done;
    }
    for (unsigned i = 0; i < n_scripts; i++)
        if (tusk_topology_narval_script(topo, scripts[i], &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            goto done;
        }
    if (tusk_topology_resolve(topo, opt.actor_path, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        goto done;
    }
    if (want_describe) {
        status = describe(topo);
        goto done;
    }
    const tusk_topology_t *run = topo;
    if (only) {
        /* Replay one stage: a small topology around it, run the usual way. */
        char *xml = NULL;
        if (tusk_emulator_replay_topology(topo, only, input, output, &xml, &err) != TUSK_OK ||
            tusk_topology_parse(&replay, xml, strlen(xml), "(--only replay)", &err) != TUSK_OK ||
            tusk_topology_resolve(replay, opt.actor_path, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            free(xml);
            goto done;
        }
        free(xml);
        run = replay;
        if (output && tusk_topology_actor(topo, (unsigned)tusk_topology_find(topo, only))->actor_class ==
                          TUSK_CONSUMER)
            fprintf(stderr, PROG ": note: %s is a consumer, --output is not used\n", only);
    }
    if (tusk_emulator_new(&em, run, &opt, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        goto done;
    }
    em_ran = true;
    snprintf(crash_work_dir, sizeof crash_work_dir, "%s", tusk_emulator_work_dir(em));
    if (tusk_emulator_run(em, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        status = TUSK_EXIT_FAIL;
    } else {
        status = 0;
    }
    if (!quiet)
        tusk_emulator_print_summary(em, stdout);
done:
    if (em && tusk_emulator_destroy(&em, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        if (status == 0)
            status = TUSK_EXIT_FAIL;
    }
    crash_work_dir[0] = '\0';
    tusk_topology_destroy(&replay);
    tusk_topology_destroy(&topo);
    free(dumps);
    free(scripts);
    if (stop_signal) {
        int sig = stop_signal;
        fprintf(stderr, PROG ": stopped by signal %d (%s)%s\n", sig, strsignal(sig),
                em_ran ? ": the chain finished the buffers in flight and every actor was stopped" : "");
        /* Dying of the signal flushes nothing: the summary is in stdout's
         * buffer when that is a pipe or a file. */
        fflush(NULL);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return status;
}

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "[OPTIONS] TOPOLOGY.xml", NULL, run, help};
    return tusk_cli_main(&cli, argc, argv);
}
