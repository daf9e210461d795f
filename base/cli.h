/* cli.h - the scaffolding of every tusk command-line tool (internal).
 *
 * A tool is a table: its name and version, its commands (name, handler,
 * one-line summary) and the text of its options. The conventions live
 * here, once:
 *
 *   PROG                   the usage on stderr, exit 2
 *   PROG --help, -h        the usage on stdout, exit 0
 *   PROG --version         "PROG (tusk) VERSION" on stdout, exit 0 (the
 *                          libraries' version, tusk_version(); when the
 *                          tool was built as another: "PROG (tusk)
 *                          TOOL_VERSION (libraries VERSION)")
 *   PROG CMD ARGS...       CMD's handler, with argv[0] "PROG CMD" (so that
 *                          every message names the program and the command)
 *   PROG OTHER             "PROG: unknown command 'OTHER' (the commands:
 *                          a, b, c; PROG --help says more)" on stderr, exit 2
 *
 * A tool without commands (commands NULL) has one handler, run, called
 * with every argument and argv[0] PROG (when there is one: PROG alone
 * gets the usage); --help and --version are taken when they come first,
 * and its option loop takes them anywhere else (tusk_cli_help,
 * tusk_cli_version).
 *
 * Options: tusk_cli_getopt is getopt_long with one style of message for
 * an unknown option, a missing value or a value where none is taken. A
 * usage error prints one line that names the problem and the tool exits
 * 2; the whole usage comes only with --help (stdout) or with no argument
 * at all (stderr). Exit statuses: base/exit.h.
 *
 * The usage: "usage: PROG SYNOPSIS" (a line of the synopsis each), "PROG
 * --help | --version", the commands with their summaries, then what the
 * tool's help function prints (options, settings, environment, exit
 * statuses). No state is kept: the table is the tool's constant. */
#ifndef TUSK_BASE_CLI_H
#define TUSK_BASE_CLI_H

#include "tusk/export.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct tusk_cli tusk_cli_t;

/* A handler: the arguments from the command's name on (argv[0] is "PROG
 * CMD", or PROG for a tool without commands); returns the exit status. */
typedef int (*tusk_cli_fn)(const tusk_cli_t *cli, int argc, char **argv);

typedef struct tusk_cli_command {
    const char *name;    /* as typed */
    tusk_cli_fn run;
    const char *summary; /* one line, for the list in the usage */
} tusk_cli_command_t;

struct tusk_cli {
    const char *prog;                   /* "tusk-adf" */
    const char *version;                /* PACKAGE_VERSION (config.h) */
    const char *synopsis;               /* after "usage: PROG ", '\n' between forms */
    const tusk_cli_command_t *commands; /* ended by a NULL name; NULL: run */
    tusk_cli_fn run;                    /* the handler of a tool without commands */
    void (*help)(FILE *out);            /* the rest of the usage (may be NULL) */
};

/* The tool's main: dispatch as above. */
TUSK_INTERNAL int tusk_cli_main(const tusk_cli_t *cli, int argc, char **argv);

/* The usage, to out. */
TUSK_INTERNAL void tusk_cli_usage(const tusk_cli_t *cli, FILE *out);

/* The usage on stdout; returns 0 (TUSK_EXIT_OK), for `return
 * tusk_cli_help(cli);` in an option loop. */
TUSK_INTERNAL int tusk_cli_help(const tusk_cli_t *cli);

/* "PROG (tusk) VERSION" on stdout (as above); returns 0. */
TUSK_INTERNAL int tusk_cli_version(const tusk_cli_t *cli);

/* getopt_long (optstring without a leading ':'), printing instead of
 * getopt's own messages, to stderr:
 *   ARGV0: unknown option '--x' (PROG --help lists the options)
 *   ARGV0: option '--x' needs a value
 *   ARGV0: option '--x' takes no value
 * and returning '?' for each. */
TUSK_INTERNAL int tusk_cli_getopt(const tusk_cli_t *cli, int argc, char **argv, const char *optstring,
                                  const struct option *longopts, int *longindex);

/* ---- a command's options, read by a table ---------------------------------
 *
 * tusk_cli_options reads a command's options with tusk_cli_getopt, by a
 * table in place of a getopt loop of the command's own: each entry names a
 * long option (and its short letter, if any), what its value is and where
 * it goes. --help and -h are always taken: the usage on stdout (the
 * tool's, tusk_cli_help, or usage(stdout) when usage is given) ends the
 * command with status 0. The options are read in order; the first bad one
 * prints one line naming argv[0] (tusk_cli_u64's and the like, or
 *   ARGV0: --OPT is a, b or c, not 'TEXT'      CHOICE
 *   ARGV0: at most MAX --OPT                   LIST
 *   ARGV0: --OPT: the parameter store's complaint   PARAM)
 * and ends the command with status 2. What follows the options (argv from
 * optind) is the command's. */
enum tusk_cli_kind {
    TUSK_CLI_TRUE,     /* no value: *(bool *)to = true */
    TUSK_CLI_FALSE,    /* no value: *(bool *)to = false */
    TUSK_CLI_TEXT,     /* *(const char **)to = the value */
    TUSK_CLI_U64,      /* *(uint64_t *)to = a whole number from min to max */
    TUSK_CLI_UNSIGNED, /* *(unsigned *)to = a whole number from min to max */
    TUSK_CLI_DOUBLE,   /* *(double *)to = a finite number from lo to hi */
    TUSK_CLI_CHOICE,   /* *(int *)to = the value's index among key's choices, "a|b|c" */
    TUSK_CLI_LIST,     /* ((const char **)to)[(*n)++] = the value, at most max of them */
    TUSK_CLI_PARAM,    /* parameter `key` of params = the value (first checked as a whole
                          number from min to max when max > 0) */
    TUSK_CLI_SET,      /* KEY=VALUE into params (tusk_cli_set) */
    TUSK_CLI_CALL      /* call(to, argv[0], the value): false after its own message */
};

struct tusk_params;

typedef struct tusk_cli_option {
    const char *name;        /* the long option, without "--"; NULL ends a table */
    int letter;              /* its short form ('o': -o), or 0 */
    enum tusk_cli_kind kind;
    void *to;                /* where the value goes, of the type the kind says */
    unsigned long long min, max; /* U64, UNSIGNED, PARAM: the range; LIST: max values */
    double lo, hi;           /* DOUBLE: the range */
    const char *key;         /* PARAM: the parameter's name; CHOICE: "a|b|c" */
    unsigned *n;             /* LIST: the values so far */
    bool (*call)(void *to, const char *prog, const char *text); /* CALL */
} tusk_cli_option_t;

/* tusk_cli_options' answer when the options were read and the command
 * goes on; any other answer is the command's exit status. */
#define TUSK_CLI_RUN (-1)

/* Read argv's options by `options` (ended by a NULL name, at most
 * TUSK_CLI_MAX_OPTIONS); params takes PARAM and SET values (may be NULL
 * when the table has none). Sets optind to the first argument after them. */
#define TUSK_CLI_MAX_OPTIONS 32
TUSK_INTERNAL int tusk_cli_options(const tusk_cli_t *cli, int argc, char **argv, const tusk_cli_option_t *options,
                                   struct tusk_params *params, void (*usage)(FILE *out));

/* The label of a [LABEL=]FILE argument into label (cap bytes), *path the
 * file: LABEL when given (1 to cap - 1 characters, no comma or slash,
 * else "PROG: 'LABEL' is not a label (1-N characters, no comma or slash)"
 * on stderr and false), else the file's name without folder and
 * extension, commas made underscores. */
TUSK_INTERNAL bool tusk_cli_label(const char *prog, const char *arg, char *label, size_t cap, const char **path);

/* Every key of params one of `known` (host keys aside), or "PROG: unknown
 * parameter 'K' (known: ...)" on stderr and false. */
TUSK_INTERNAL bool tusk_cli_keys(const char *prog, const struct tusk_params *params, const char *const *known);

/* ---- running under a debugging tool ------------------------------------------
 * valgrind's memcheck as tusk's tools run it (tusk-emulate --memcheck,
 * tusk-run --debug INSTANCE=valgrind): full leak checking, definite and
 * indirect leaks counted as errors, 40 callers. */
#define TUSK_MEMCHECK_ARGS                                                                                   \
    "-q", "--leak-check=full", "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect", \
        "--num-callers=40"

/* Run this same program (/proc/self/exe: the real binary, not a libtool
 * wrapper) again under a tool: exec tool[0] tool[1].. SELF args[0..n_args),
 * `tool` NULL-terminated, its first word looked up on PATH. The
 * environment gets TUSK_NO_DLCLOSE=1 (actor libraries stay loaded, so the
 * tool's reports name their functions) and MARK=1 (the program then knows
 * it runs under the tool). Returns only on failure: TUSK_EXIT_USAGE, the
 * message on stderr naming PROG, the tool and what installs it. */
TUSK_INTERNAL int tusk_cli_exec_under(const char *prog, const char *const *tool, char *const *args, size_t n_args,
                                      const char *mark);

#endif
