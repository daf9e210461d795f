/* journal.c - an instance's output to the journal as well (journal.h). */
#define _POSIX_C_SOURCE 200809L
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int tusk_journal_ident_check(const char *ident, tusk_error_t *err)
{
    size_t n = strlen(ident);
    bool ok = n >= 1 && n <= 200;
    for (const char *p = ident; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
             *p == '_' || *p == '.' || *p == '@';
    return ok ? TUSK_OK
              : tusk_error_set(err, TUSK_EINVAL,
                               "journal identifier '%.80s': 1 to 200 of letters, digits and - _ . @ only", ident);
}

/* Every byte of [data, data+size) to fd; false when it fails. */
static bool write_all(int fd, const char *data, size_t size)
{
    while (size) {
        ssize_t w = write(fd, data, size);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        data += w;
        size -= (size_t)w;
    }
    return true;
}

int tusk_journal_connect(const char *socket_path, const char *ident, int *fd, tusk_error_t *err)
{
    *fd = -1;
    int rc = tusk_journal_ident_check(ident, err);
    if (rc != TUSK_OK)
        return rc;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof sa.sun_path)
        return tusk_error_set(err, TUSK_EINVAL, "journal socket %s: path too long", socket_path);
    memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return tusk_error_set(err, TUSK_EIO, "journal: socket: %s", strerror(errno));
    if (connect(s, (const struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(s);
        return tusk_error_set(err, TUSK_EIO, "no journal (connect %s: %s)", socket_path, strerror(e));
    }
    shutdown(s, SHUT_RD);
    /* identifier, unit id (journald finds the unit itself), priority 6
     * (info), no level prefixes, not forwarded to syslog, kmsg, console. */
    char header[128];
    int len = snprintf(header, sizeof header, "%s\n\n6\n0\n0\n0\n0\n", ident);
    if (len < 0 || (size_t)len >= sizeof header || !write_all(s, header, (size_t)len)) {
        int e = errno;
        close(s);
        return tusk_error_set(err, TUSK_EIO, "journal %s: cannot write the stream header: %s", socket_path,
                              strerror(e));
    }
    *fd = s;
    return TUSK_OK;
}

/* The copier: every byte of `in` to `out` and to the journal, until every
 * writer has closed the pipe. */
static void copy_out(int in, int out, int journal)
{
    char buf[8192];
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        if (out >= 0 && !write_all(out, buf, (size_t)r))
            out = -1; /* the log is gone: the journal still gets it */
        if (journal >= 0 && !write_all(journal, buf, (size_t)r)) {
            close(journal); /* journald went away: the log still gets it */
            journal = -1;
        }
    }
}

int tusk_journal_tee(const char *socket_path, const char *ident, tusk_error_t *err)
{
    int journal;
    int rc = tusk_journal_connect(socket_path, ident, &journal, err);
    if (rc != TUSK_OK)
        return rc;
    int p[2];
    int out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (out < 0 || pipe(p) != 0) {
        int e = errno;
        if (out >= 0)
            close(out);
        close(journal);
        return tusk_error_set(err, TUSK_EIO, "journal: pipe: %s", strerror(e));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        close(out);
        close(journal);
        return tusk_error_set(err, TUSK_EIO, "journal: fork: %s", strerror(e));
    }
    if (pid == 0) {
        /* Stopping the unit stops its main process; the copier ends on
         * the pipe's end, after the last line. */
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        close(p[1]);
        close(STDIN_FILENO);
        close(STDOUT_FILENO);
        close(STDERR_FILENO);
        copy_out(p[0], out, journal);
        _exit(0);
    }
    close(p[0]);
    close(out);
    close(journal);
    if (dup2(p[1], STDOUT_FILENO) < 0 || dup2(p[1], STDERR_FILENO) < 0) {
        int e = errno;
        close(p[1]);
        return tusk_error_set(err, TUSK_EIO, "journal: dup2: %s", strerror(e));
    }
    if (p[1] > STDERR_FILENO)
        close(p[1]);
    return TUSK_OK;
}
