/* exit.h - the exit statuses of every tusk command-line tool (internal).
 *
 *   0  success
 *   1  the work failed: bad data, an I/O error, a failed chain or check
 *   2  bad usage, settings, topology or library: nothing was done
 *   3  it ended, but with losses (tusk-run: instances failed, buffers lost)
 *
 * Each tool's usage text states what its own 1 means (and 2: tusk-adf
 * counts an unreadable file as 2, tusk-run an instance that never came up).
 * No tool defines statuses of its own: these names are used directly. */
#ifndef TUSK_BASE_EXIT_H
#define TUSK_BASE_EXIT_H

enum tusk_exit {
    TUSK_EXIT_OK = 0,
    TUSK_EXIT_FAIL = 1,
    TUSK_EXIT_USAGE = 2,
    TUSK_EXIT_LOSS = 3
};

#endif
