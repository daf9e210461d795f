/* hostlist.h - Slurm's compact host lists (SLURM_JOB_NODELIST,
 * SLURM_STEP_NODELIST, `scontrol show hostnames`), expanded (internal).
 *
 * A list is names separated by commas; a name may hold bracketed ranges,
 * each a comma-separated list of numbers and LO-HI ranges:
 *
 *   "node[01-03,07],gpu5"   node01 node02 node03 node07 gpu5
 *   "rack[1-2]-n[8-9]"      rack1-n8 rack1-n9 rack2-n8 rack2-n9
 *
 * A bound written with leading zeros keeps its width ("098-100" gives
 * 098 099 100); without them the numbers are written as they are. Names
 * come out in the order written, duplicates kept (Slurm keeps them too).
 * Host names are letters, digits and - . _ only; no spaces, no empty
 * names, no nested or unbalanced brackets, LO <= HI, numbers of at most 9
 * digits; a list that would expand beyond `max_hosts` names (or
 * TUSK_HOSTLIST_MAX) is refused before anything is made.
 */
#ifndef TUSK_BASE_HOSTLIST_H
#define TUSK_BASE_HOSTLIST_H

#include "tusk/export.h"

#include <stddef.h>

#include "tusk/error.h"

#define TUSK_HOSTLIST_MAX 65536u /* names in one expanded list, at most */
#define TUSK_HOSTLIST_NAME_MAX 255u /* characters in one expanded name */

/* Expand `text` into *hosts (malloc'd, *n names, each malloc'd; free with
 * tusk_hostlist_free). TUSK_EINVAL naming the column and what is wrong,
 * TUSK_ELIMIT when it expands beyond the limit, TUSK_ENOMEM; *hosts is
 * then NULL and *n 0. */
TUSK_INTERNAL int tusk_hostlist_expand(const char *text, size_t max_hosts, char ***hosts, size_t *n,
                                       tusk_error_t *err);
TUSK_INTERNAL void tusk_hostlist_free(char **hosts, size_t n);

#endif
