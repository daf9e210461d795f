/* reports.h - tusk-run --merge-reports: the --report files of many runs
 * (the tasks of a reprocessing job array, tools/tusk-reprocess) merged
 * into one.
 *
 * Every line of a report is `key=value ...`, read with the control
 * message parser (runtime/wire.h). Lines are matched across reports by
 * their first field (instance=reader[0], link=reader[0]->copy[0],
 * control=tusk-run, run=1) and merged field by field: whole numbers are
 * summed (counts, losses, bytes, restarts; `failed` and `fatal` become the
 * number of runs that failed), but for `exact`, which is 1 only when it is
 * 1 in every report; decimals (seconds) are summed; text is kept when
 * every report says the same, else it becomes "*". Each merged line ends
 * with runs=N, the reports it was in; the first line says reports=N.
 * Lines come out in the order first seen.
 */
#ifndef TUSK_REPORTS_H
#define TUSK_REPORTS_H

#include <stddef.h>
#include <stdio.h>

#include "tusk/error.h"

/* Merge `n` report files into `out`. TUSK_EIO naming a file that cannot be
 * read, TUSK_EINVAL naming the file and line that does not parse or
 * whose field is a number in one report and text in another. */
int tusk_reports_merge(const char *const *paths, size_t n, FILE *out, tusk_error_t *err);

#endif
