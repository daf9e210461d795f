/* progress.c - one formatter for every stage's progress lines. */
#include <stdarg.h>
#include <stdio.h>

#include "progress.h"

void det_progress(void (*fn)(void *user, const char *line), void *user, const char *fmt, ...)
{
    if (!fn)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fn(user, line);
}
