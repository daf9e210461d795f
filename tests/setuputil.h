/* setuputil.h - setting up before the tests fork (in main), for the test
 * programs that need a real signal basis. Check's assertions cannot
 * report outside a test, so these print "PROG: setting up: WHAT failed"
 * and exit(1) instead. */
#ifndef TUSK_SETUPUTIL_H
#define TUSK_SETUPUTIL_H

#include <stddef.h>

#include "tusk/basis.h"

/* Exit with a message unless ok. */
void su_need(int ok, const char *prog, const char *what);
/* A fresh temporary folder (mkdtemp in $TMPDIR or /tmp) into dir. */
void su_make_dir(char *dir, size_t size, const char *prog);
/* Write text to path. */
void su_write_file(const char *path, const char *text, const char *prog);
/* A coarse basis of the default crystal (8 mm points, 3 mm fields: about
 * a second on 2 cores), saved at path. */
void su_coarse_basis(const char *path, enum det_sample_type type, const char *prog);

#endif
