/* progress.h - progress lines of the basis generator's stages (internal). */
#ifndef TUSK_DETECTOR_PROGRESS_H
#define TUSK_DETECTOR_PROGRESS_H

#include "tusk/error.h"

/* Format one line and hand it to fn(user, line); nothing when fn is NULL. */
void det_progress(void (*fn)(void *user, const char *line), void *user, const char *fmt, ...) TUSK_PRINTF(3, 4);

#endif
