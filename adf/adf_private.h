/* adf_private.h - helpers shared inside libtusk-adf (not installed). */
#ifndef ADF_PRIVATE_H
#define ADF_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tusk/adf.h"

#if defined(__GNUC__)
#define ADF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ADF_PRINTF(f, a)
#endif

/* Fill `err` (may be NULL) and return `code` (adf_error.c). */
int adf_error_set(adf_error_t *err, int code, uint64_t offset, const char *fmt, ...) ADF_PRINTF(4, 5);

/* Human-readable type: the name, or "0x%08X" into buf (adf_key.c). */
const char *adf_type_label(uint32_t type, char buf[16]);

/* --- the window scanner ---------------------------------------------------
 * The state machine behind adf_reader (whole buffer in view) and
 * adf_file_reader (a sliding window over a file). It looks at
 * win[pos .. avail) and either hands out a frame, reports an error, or
 * asks for more bytes (ADF_SCAN_MORE) when the window ends before it can
 * decide and more data may follow (at_eof false).
 */
#define ADF_SCAN_MORE 2

typedef struct adf_scan {
    adf_on_error_t policy;
    uint64_t max_frame;      /* longest acceptable frame */
    size_t pos;              /* next byte to look at, in the window */
    size_t need;             /* on ADF_SCAN_MORE: bytes wanted from pos */
    int state;               /* ADF_SCAN_NORMAL, _RESYNC or _STOPPED */
    adf_error_t error;
    adf_reader_stats_t stats;
} adf_scan_t;

void adf_scan_init(adf_scan_t *scan, adf_on_error_t policy, uint64_t max_frame);

/* `win_offset` is the offset of win[0] in the whole stream. */
int adf_scan_next(adf_scan_t *scan, const uint8_t *win, size_t avail, bool at_eof,
                  uint64_t win_offset, adf_frame_t *frame);

#endif
