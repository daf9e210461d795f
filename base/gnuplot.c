/* gnuplot.c - the one gnuplot runner (see gnuplot.h). */
#include "base/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* DIR/NAME, or NAME when DIR is NULL or empty; NULL when memory is short. */
static char *in_dir(const char *dir, const char *name)
{
    size_t d = dir ? strlen(dir) : 0, n = strlen(name);
    char *s = malloc(d + n + 2);
    if (!s)
        return NULL;
    if (d) {
        memcpy(s, dir, d);
        s[d] = '/';
        memcpy(s + d + 1, name, n + 1);
    } else {
        memcpy(s, name, n + 1);
    }
    return s;
}

int tusk_gnuplot_check_path(const char *who, const char *path, tusk_error_t *err)
{
    if (!path || !*path)
        return tusk_error_set(err, TUSK_EINVAL, "%s: no file name for the picture", who);
    if (strchr(path, '\''))
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s: %s: a single quote in the path cannot be written into a gnuplot script; "
                              "choose another name",
                              who, path);
    if (strpbrk(path, "\n\r"))
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s: the picture's path has a line break, which cannot be written into a gnuplot "
                              "script; choose another name",
                              who);
    return TUSK_OK;
}

int tusk_gnuplot_format(const char *format, bool *svg, tusk_error_t *err)
{
    *svg = format && !strcmp(format, "svg");
    if (format && !*svg && strcmp(format, "png"))
        return tusk_error_set(err, TUSK_EINVAL, "picture format '%s': png or svg", format);
    return TUSK_OK;
}

int tusk_gnuplot_picture(const char *dir, const char *name, const char *format, bool *svg, char *pic, size_t cap,
                         tusk_error_t *err)
{
    int st = tusk_gnuplot_format(format, svg, err);
    if (st != TUSK_OK)
        return st;
    snprintf(pic, cap, "%s/%s.%s", dir, name, *svg ? "svg" : "png");
    return tusk_gnuplot_check_path("picture", pic, err);
}

int tusk_gnuplot_draw(const char *dir, const char *name, const char *pic, tusk_error_t *err)
{
    char script[256], log[256];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(log, sizeof log, "%s.log", name);
    const char *pictures[] = {pic, NULL};
    return tusk_gnuplot_run(dir, script, log, pictures, err);
}

void tusk_gnuplot_head(FILE *fp, const char *name, const char *source, const char *data, bool svg, int width,
                       int height)
{
    fprintf(fp, "# %s.gp - written by tusk (%s); data in %s.\n"
                "# Redraw by hand: cd to this folder, then: gnuplot %s.gp\n",
            name, source, data, name);
    if (svg)
        fprintf(fp, "set terminal svg size %d,%d dynamic font 'Sans,12'\n", width, height);
    else
        fprintf(fp,
                "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                "    set terminal pngcairo size %d,%d font 'Sans,11'\n"
                "} else {\n"
                "    set terminal png size %d,%d\n"
                "}\n",
                width, height, width, height);
    fprintf(fp, "set output '%s.%s'\n", name, svg ? "svg" : "png");
}

void tusk_gnuplot_quote(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'')
            fputs("''", fp);
        else if (c < 0x20 || c == 0x7f)
            fputc(' ', fp);
        else
            fputc(c, fp);
    }
    fputc('\'', fp);
}

locale_t tusk_c_numeric_begin(locale_t *previous)
{
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c != (locale_t)0)
        *previous = uselocale(c);
    return c;
}

void tusk_c_numeric_end(locale_t c, locale_t previous)
{
    if (c == (locale_t)0)
        return;
    uselocale(previous);
    freelocale(c);
}

static void copy_line(char *out, size_t cap, const char *line)
{
    size_t n = strlen(line);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, line, n);
    out[n] = '\0';
}

/* The log's most telling line: gnuplot's `"script" line N: ...`, else the
 * first non-empty line; "(no output)" when there is none. */
static void log_line(const char *path, char *out, size_t cap)
{
    copy_line(out, cap, "(no output)");
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    char line[512];
    bool have_first = false;
    while (fgets(line, sizeof line, fp)) {
        bool whole = strchr(line, '\n') != NULL || feof(fp);
        size_t n = strcspn(line, "\r\n");
        line[n] = '\0';
        bool blank = strspn(line, " \t") == n;
        if (!blank && line[0] == '"' && strstr(line, "\" line ")) {
            copy_line(out, cap, line);
            break;
        }
        if (!blank && !have_first) {
            copy_line(out, cap, line);
            have_first = true;
        }
        while (!whole && fgets(line, sizeof line, fp))
            whole = strchr(line, '\n') != NULL;
    }
    fclose(fp);
}

/* What the child reports through the pipe when it could not run gnuplot. */
enum { CHILD_REDIRECT = 1, CHILD_CHDIR = 2, CHILD_EXEC = 3 };

static void child_fail(int fd, int stage)
{
    int msg[2] = {stage, errno};
    ssize_t w = write(fd, msg, sizeof msg);
    (void)w;
    _exit(127);
}

/* Run PROG ./SCRIPT in DIR; fills *status and *msg (the child's report). */
static int spawn_and_wait(const char *prog, const char *dir, const char *script_arg, const char *log_path,
                          int *status, int msg[2], tusk_error_t *err)
{
    int rc = TUSK_EIO;
    int logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (logfd < 0)
        return tusk_error_set(err, TUSK_EIO, "gnuplot: cannot write %s: %s", log_path, strerror(errno));
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int pfd[2] = {-1, -1};
    if (nullfd < 0 || pipe(pfd) != 0 || fcntl(pfd[0], F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(pfd[1], F_SETFD, FD_CLOEXEC) != 0) {
        tusk_error_set(err, TUSK_EIO, "gnuplot: cannot start it: %s", strerror(errno));
        goto out;
    }
    char *argv[3] = {(char *)prog, (char *)script_arg, NULL};
    pid_t pid = fork();
    if (pid < 0) {
        tusk_error_set(err, TUSK_EIO, "gnuplot: cannot start it: fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        /* The child: only async-signal-safe calls until exec. */
        if (dup2(nullfd, STDIN_FILENO) < 0 || dup2(logfd, STDOUT_FILENO) < 0 || dup2(logfd, STDERR_FILENO) < 0)
            child_fail(pfd[1], CHILD_REDIRECT);
        if (dir && *dir && chdir(dir) != 0)
            child_fail(pfd[1], CHILD_CHDIR);
        execvp(prog, argv);
        child_fail(pfd[1], CHILD_EXEC);
    }
    close(pfd[1]);
    pfd[1] = -1;
    size_t got = 0;
    while (got < 2 * sizeof msg[0]) {
        ssize_t n = read(pfd[0], (char *)msg + got, 2 * sizeof msg[0] - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got != 2 * sizeof msg[0])
        msg[0] = msg[1] = 0;
    pid_t w;
    while ((w = waitpid(pid, status, 0)) < 0 && errno == EINTR)
        ;
    if (w < 0 && errno == ECHILD) {
        /* SIGCHLD ignored: the child was reaped for us; the picture tells. */
        *status = 0;
    } else if (w < 0) {
        tusk_error_set(err, TUSK_EIO, "gnuplot: waiting for %s: %s", prog, strerror(errno));
        goto out;
    }
    rc = TUSK_OK;
out:
    if (logfd >= 0)
        close(logfd);
    if (nullfd >= 0)
        close(nullfd);
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    return rc;
}

int tusk_gnuplot_run(const char *dir, const char *script, const char *log, const char *const *pictures,
                     tusk_error_t *err)
{
    const char *env = getenv("TUSK_GNUPLOT");
    const char *prog = env && *env ? env : "gnuplot";
    char *prog_abs = NULL, *script_path = in_dir(dir, script), *log_path = in_dir(dir, log);
    char *script_arg = in_dir(".", script);
    int rc = TUSK_OK;
    if (!script_path || !log_path || !script_arg) {
        rc = tusk_error_set(err, TUSK_ENOMEM, "gnuplot: out of memory");
        goto out;
    }
    if (dir && *dir && prog[0] != '/' && strchr(prog, '/')) {
        /* A relative path names a program from here; gnuplot runs in DIR. */
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) {
            rc = tusk_error_set(err, TUSK_EIO, "gnuplot: cannot resolve TUSK_GNUPLOT=%s: getcwd: %s", prog,
                                strerror(errno));
            goto out;
        }
        if (!(prog_abs = in_dir(cwd, prog))) {
            rc = tusk_error_set(err, TUSK_ENOMEM, "gnuplot: out of memory");
            goto out;
        }
    }
    for (size_t i = 0; pictures && pictures[i]; i++) {
        if (unlink(pictures[i]) != 0 && errno != ENOENT) {
            rc = tusk_error_set(err, TUSK_EIO, "gnuplot: cannot replace %s: %s", pictures[i], strerror(errno));
            goto out;
        }
    }
    int status = 0, msg[2] = {0, 0};
    const char *run = prog_abs ? prog_abs : prog;
    if ((rc = spawn_and_wait(run, dir, script_arg, log_path, &status, msg, err)) != TUSK_OK) {
        tusk_error_prefix(err, "script %s", script_path);
        goto out;
    }
    char line[400];
    if (msg[0] == CHILD_EXEC && (msg[1] == ENOENT || msg[1] == ENOTDIR)) {
        rc = tusk_error_set(err, TUSK_EIO,
                            "gnuplot not found (Debian: apt-get install gnuplot-nox); script: %s (tried '%s': %s)",
                            script_path, prog, strerror(msg[1]));
    } else if (msg[0] == CHILD_EXEC) {
        rc = tusk_error_set(err, TUSK_EIO, "gnuplot cannot be executed ('%s': %s); script: %s", prog,
                            strerror(msg[1]), script_path);
    } else if (msg[0]) {
        rc = tusk_error_set(err, TUSK_EIO, "gnuplot: cannot start it (%s: %s); script: %s",
                            msg[0] == CHILD_CHDIR ? "cannot enter the picture's folder" : "redirection",
                            strerror(msg[1]), script_path);
    } else if (WIFSIGNALED(status)) {
        log_line(log_path, line, sizeof line);
        rc = tusk_error_set(err, TUSK_EIO, "gnuplot (%s) was killed by signal %d: %s; script: %s; log: %s", prog,
                            WTERMSIG(status), line, script_path, log_path);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        log_line(log_path, line, sizeof line);
        rc = tusk_error_set(err, TUSK_EIO, "gnuplot (%s) failed with exit status %d: %s; script: %s; log: %s", prog,
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1, line, script_path, log_path);
    }
    for (size_t i = 0; rc == TUSK_OK && pictures && pictures[i]; i++) {
        struct stat st;
        if (stat(pictures[i], &st) != 0 || st.st_size == 0) {
            log_line(log_path, line, sizeof line);
            rc = tusk_error_set(err, TUSK_EIO, "gnuplot (%s) wrote no picture %s: %s; script: %s; log: %s", prog,
                                pictures[i], line, script_path, log_path);
        }
    }
    if (rc == TUSK_OK) {
        struct stat st;
        if (stat(log_path, &st) == 0 && st.st_size == 0)
            unlink(log_path);
    }
out:
    free(prog_abs);
    free(script_path);
    free(log_path);
    free(script_arg);
    return rc;
}
