/* cli.c - the scaffolding of every tusk command-line tool (see cli.h). */
#include "base/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/exit.h"
#include "base/parse.h"
#include "tusk/params.h"
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

/* "a, b or c" of the choices "a|b|c", to out. */
static void choices(FILE *out, const char *list)
{
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, "|");
        fprintf(out, "%.*s", (int)n, s);
        s += n + (s[n] == '|');
        if (*s)
            fputs(strchr(s, '|') ? ", " : " or ", out);
    }
}

/* The index of text among the choices "a|b|c", or -1. */
static int choice(const char *list, const char *text)
{
    int i = 0;
    for (const char *s = list; *s; i++) {
        size_t n = strcspn(s, "|");
        if (strlen(text) == n && strncmp(s, text, n) == 0)
            return i;
        s += n + (s[n] == '|');
    }
    return -1;
}

/* One option's value into its place: false after a message. */
static bool take(const tusk_cli_option_t *o, const char *prog, const char *text, tusk_params_t *params)
{
    char opt[80];
    snprintf(opt, sizeof opt, "--%s", o->name);
    switch (o->kind) {
    case TUSK_CLI_TRUE: *(bool *)o->to = true; return true;
    case TUSK_CLI_FALSE: *(bool *)o->to = false; return true;
    case TUSK_CLI_TEXT: *(const char **)o->to = text; return true;
    case TUSK_CLI_U64: return tusk_cli_u64(prog, opt, text, o->min, o->max, o->to);
    case TUSK_CLI_UNSIGNED: return tusk_cli_unsigned(prog, opt, text, (unsigned)o->min, (unsigned)o->max, o->to);
    case TUSK_CLI_DOUBLE: return tusk_cli_double(prog, opt, text, o->lo, o->hi, o->to);
    case TUSK_CLI_CHOICE: {
        int i = choice(o->key, text);
        if (i < 0) {
            fprintf(stderr, "%s: %s is ", prog, opt);
            choices(stderr, o->key);
            fprintf(stderr, ", not '%s'\n", text);
            return false;
        }
        *(int *)o->to = i;
        return true;
    }
    case TUSK_CLI_LIST:
        if (*o->n >= o->max) {
            fprintf(stderr, "%s: at most %llu %s\n", prog, o->max, opt);
            return false;
        }
        ((const char **)o->to)[(*o->n)++] = text;
        return true;
    case TUSK_CLI_PARAM: {
        uint64_t v;
        tusk_error_t err;
        if (o->max > 0 && !tusk_cli_u64(prog, opt, text, o->min, o->max, &v))
            return false;
        if (tusk_params_set(params, o->key, text, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, opt, err.message);
            return false;
        }
        return true;
    }
    case TUSK_CLI_SET: return tusk_cli_set(prog, params, text);
    case TUSK_CLI_CALL: return o->call(o->to, prog, text);
    }
    return false;
}

/* getopt's answer for option k of a table: its letter, or one past a byte. */
#define LONG_ONLY(k) (256 + (int)(k))

int tusk_cli_options(const tusk_cli_t *cli, int argc, char **argv, const tusk_cli_option_t *options,
                     tusk_params_t *params, void (*usage)(FILE *out))
{
    struct option longs[TUSK_CLI_MAX_OPTIONS + 2];
    char shorts[2 * TUSK_CLI_MAX_OPTIONS + 2];
    size_t n = 0, s = 0;
    for (; options[n].name; n++) {
        if (n == TUSK_CLI_MAX_OPTIONS) {
            fprintf(stderr, "%s: more than %d options for tusk_cli_options\n", argv[0], TUSK_CLI_MAX_OPTIONS);
            return TUSK_EXIT_USAGE;
        }
        const tusk_cli_option_t *o = &options[n];
        int has = o->kind == TUSK_CLI_TRUE || o->kind == TUSK_CLI_FALSE ? no_argument : required_argument;
        longs[n] = (struct option){o->name, has, NULL, o->letter ? o->letter : LONG_ONLY(n)};
        if (o->letter) {
            shorts[s++] = (char)o->letter;
            if (has == required_argument)
                shorts[s++] = ':';
        }
    }
    longs[n] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n + 1] = (struct option){NULL, 0, NULL, 0};
    shorts[s++] = 'h';
    shorts[s] = '\0';
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            if (!usage)
                return tusk_cli_help(cli);
            usage(stdout);
            return TUSK_EXIT_OK;
        }
        const tusk_cli_option_t *o = NULL;
        for (size_t k = 0; k < n && !o; k++)
            if (c == (options[k].letter ? options[k].letter : LONG_ONLY(k)))
                o = &options[k];
        if (!o || !take(o, argv[0], optarg, params))
            return TUSK_EXIT_USAGE;
    }
    return TUSK_CLI_RUN;
}

bool tusk_cli_label(const char *prog, const char *arg, char *label, size_t cap, const char **path)
{
    const char *eq = strchr(arg, '=');
    *path = eq ? eq + 1 : arg;
    if (eq) {
        size_t n = (size_t)(eq - arg);
        if (n == 0 || n >= cap || memchr(arg, ',', n) || memchr(arg, '/', n)) {
            fprintf(stderr, "%s: '%.*s' is not a label (1-%zu characters, no comma or slash)\n", prog, (int)n, arg,
                    cap - 1);
            return false;
        }
        snprintf(label, cap, "%.*s", (int)n, arg);
        return true;
    }
    const char *base = strrchr(arg, '/');
    snprintf(label, cap, "%s", base ? base + 1 : arg);
    char *dot = strrchr(label, '.');
    if (dot && dot != label)
        *dot = '\0';
    for (char *q = label; *q; q++)
        if (*q == ',')
            *q = '_';
    return true;
}

bool tusk_cli_keys(const char *prog, const tusk_params_t *params, const char *const *known)
{
    tusk_error_t err;
    if (tusk_params_expect(params, known, &err) == TUSK_OK)
        return true;
    fprintf(stderr, "%s: %s\n", prog, err.message);
    return false;
}

int tusk_cli_exec_under(const char *prog, const char *const *tool, char *const *args, size_t n_args, const char *mark)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "%s: cannot find this program (/proc/self/exe) to run it under %s: %s\n", prog, tool[0],
                strerror(errno));
        return TUSK_EXIT_USAGE;
    }
    self[len] = '\0';
    size_t n_tool = 0;
    while (tool[n_tool])
        n_tool++;
    char **argv = calloc(n_tool + n_args + 2, sizeof *argv);
    if (!argv) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return TUSK_EXIT_FAIL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n_tool; i++)
        argv[k++] = (char *)tool[i];
    argv[k++] = self;
    for (size_t i = 0; i < n_args; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    setenv("TUSK_NO_DLCLOSE", "1", 1);
    setenv(mark, "1", 1);
    fflush(NULL);
    execvp(argv[0], argv);
    int e = errno;
    const char *base = strrchr(tool[0], '/');
    base = base ? base + 1 : tool[0];
    fprintf(stderr, "%s: cannot run %s: %s (Debian: apt-get install %s)\n", prog, tool[0], strerror(e),
            strcmp(base, "gdbserver") == 0 ? "gdbserver" : base);
    free(argv);
    return TUSK_EXIT_USAGE;
}
