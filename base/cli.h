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

#endif
