/* setuputil.c - see setuputil.h. */
#include "setuputil.h"

#include <stdio.h>
#include <stdlib.h>

#include "tusk/crystal.h"
#include "detector/generate.h"

void su_need(int ok, const char *prog, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s: setting up: %s failed\n", prog, what);
        exit(1);
    }
}

void su_make_dir(char *dir, size_t size, const char *prog)
{
    const char *tmp = getenv("TMPDIR");
    su_need((size_t)snprintf(dir, size, "%s/tusk-test-XXXXXX", tmp && *tmp ? tmp : "/tmp") < size, prog,
            "the folder name");
    su_need(mkdtemp(dir) != NULL, prog, "mkdtemp");
}

void su_write_file(const char *path, const char *text, const char *prog)
{
    FILE *f = fopen(path, "w");
    su_need(f && fputs(text, f) >= 0 && fclose(f) == 0, prog, path);
}

void su_coarse_basis(const char *path, enum det_sample_type type, const char *prog)
{
    det_config_t cfg;
    det_config_default(&cfg);
    cfg.field_grid = 3.0;
    cfg.basis_grid = 8.0;
    det_generate_options_t opt = {2, NULL, NULL};
    det_basis_t *b = NULL;
    tusk_error_t err;
    if (det_basis_generate(&cfg, &opt, &b, NULL, &err) != TUSK_OK || det_basis_save(b, path, type, &err) != TUSK_OK) {
        fprintf(stderr, "%s: setting up: the basis %s: %s\n", prog, path, err.message);
        exit(1);
    }
    det_basis_destroy(&b);
}
