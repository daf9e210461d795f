/* cli.c - the scaffolding of every tusk command-line tool (see cli.h). */
#include "base/cli.h"

#include <string.h>

#include "base/exit.h"
#include "tusk/version.h"

void tusk_cli_usage(const tusk_cli_t *cli, FILE *out)
{
    const char *s = cli->synopsis ? cli->synopsis : "";
    const char *lead = "usage: ";
    for (;;) {
        size_t n = strcspn(s, "\n");
        fprintf(out, "%s%s %.*s\n", lead, cli->prog, (int)n, s);
        lead = "       ";
        if (!s[n])
            break;
        s += n + 1;
    }
    fprintf(out, "%s%s --help | --version\n", lead, cli->prog);
    if (cli->commands) {
        int width = 0;
        for (const tusk_cli_command_t *c = cli->commands; c->name; c++)
            if ((int)strlen(c->name) > width)
                width = (int)strlen(c->name);
        fputs("\ncommands:\n", out);
        for (const tusk_cli_command_t *c = cli->commands; c->name; c++)
            fprintf(out, "  %-*s  %s\n", width, c->name, c->summary ? c->summary : "");
    }
    if (cli->help) {
        fputc('\n', out);
        cli->help(out);
    }
}

int tusk_cli_help(const tusk_cli_t *cli)
{
    tusk_cli_usage(cli, stdout);
    return TUSK_EXIT_OK;
}

int tusk_cli_version(const tusk_cli_t *cli)
{
    /* The libraries' version (tusk_version(): what runs); the tool's own,
     * from its build, only when it differs (a tool and libraries of two
     * installations). */
    const char *lib = tusk_version();
    if (cli->version && strcmp(cli->version, lib) != 0)
        printf("%s (tusk) %s (libraries %s)\n", cli->prog, cli->version, lib);
    else
        printf("%s (tusk) %s\n", cli->prog, lib);
    return TUSK_EXIT_OK;
}

static void command_list(const tusk_cli_t *cli, FILE *out)
{
    fputs("commands: ", out);
    for (const tusk_cli_command_t *c = cli->commands; c->name; c++)
        fprintf(out, "%s%s", c == cli->commands ? "" : ", ", c->name);
}

int tusk_cli_main(const tusk_cli_t *cli, int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
        return tusk_cli_help(cli);
    if (argc >= 2 && !strcmp(argv[1], "--version"))
        return tusk_cli_version(cli);
    if (argc < 2) {
        tusk_cli_usage(cli, stderr);
        return TUSK_EXIT_USAGE;
    }
    optind = 0; /* getopt starts afresh (GNU, musl: 0 resets its state too) */
    if (!cli->commands) {
        argv[0] = (char *)cli->prog;
        return cli->run(cli, argc, argv);
    }
    for (const tusk_cli_command_t *c = cli->commands; c->name; c++) {
        if (strcmp(argv[1], c->name) != 0)
            continue;
        /* The handler's argv[0]: getopt and the handler's messages name
         * the program and the command. */
        char name[128];
        snprintf(name, sizeof name, "%s %s", cli->prog, c->name);
        argv[1] = name;
        return c->run(cli, argc - 1, argv + 1);
    }
    fprintf(stderr, "%s: unknown %s '%s' (", cli->prog, argv[1][0] == '-' ? "option" : "command", argv[1]);
    command_list(cli, stderr);
    fprintf(stderr, "; %s --help says more)\n", cli->prog);
    return TUSK_EXIT_USAGE;
}

/* The long options NAME (N characters) abbreviates, when more than one. */
static int ambiguous(const struct option *longopts, const char *name, size_t n, FILE *out)
{
    int count = 0;
    for (const struct option *o = longopts; o && o->name; o++)
        if (strncmp(o->name, name, n) == 0)
            count++;
    if (count < 2 || !out)
        return count;
    const char *sep = "";
    for (const struct option *o = longopts; o->name; o++)
        if (strncmp(o->name, name, n) == 0) {
            fprintf(out, "%s--%s", sep, o->name);
            sep = ", ";
        }
    return count;
}

int tusk_cli_getopt(const tusk_cli_t *cli, int argc, char **argv, const char *optstring,
                    const struct option *longopts, int *longindex)
{
    char spec[256];
    size_t len = strlen(optstring);
    if (len + 2 > sizeof spec) {
        fprintf(stderr, "%s: too many options for tusk_cli_getopt\n", argv[0]);
        return '?';
    }
    spec[0] = ':'; /* ':' for a missing value, '?' for the rest */
    memcpy(spec + 1, optstring, len + 1);
    int before = optind;
    opterr = 0;
    int c = getopt_long(argc, argv, spec, longopts, longindex);
    if (c != '?' && c != ':')
        return c;
    /* The element read: a short option inside a group (-qx) leaves optind
     * where it was; anything else moves it past the element. */
    const char *el = optind > before ? argv[optind - 1] : optind < argc ? argv[optind] : "";
    char shown[80];
    if (el[0] == '-' && el[1] == '-') {
        size_t n = strcspn(el + 2, "=");
        snprintf(shown, sizeof shown, "--%.*s", (int)n, el + 2);
        if (c == '?' && optopt == 0 && ambiguous(longopts, el + 2, n, NULL) >= 2) {
            fprintf(stderr, "%s: ambiguous option '%s' (", argv[0], shown);
            ambiguous(longopts, el + 2, n, stderr);
            fputs(")\n", stderr);
            return '?';
        }
    } else {
        snprintf(shown, sizeof shown, "-%c", optopt > 0 && optopt < 128 ? optopt : '?');
    }
    if (c == ':')
        fprintf(stderr, "%s: option '%s' needs a value\n", argv[0], shown);
    else if (shown[1] == '-' && optopt != 0)
        fprintf(stderr, "%s: option '%s' takes no value\n", argv[0], shown);
    else
        fprintf(stderr, "%s: unknown option '%s' (%s --help lists the options)\n", argv[0], shown, cli->prog);
    return '?';
}
