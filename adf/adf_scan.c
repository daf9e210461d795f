/* adf_scan.c - the frame scanner shared by the buffer and file readers.
 *
 * Resynchronisation: after a malformed frame the scanner looks, byte by
 * byte, for a position that holds a plausible key (class byte 0xFA/0xCA,
 * length >= 20 and within max_frame, 48-bit timestamp) whose frame ends
 * where the data ends or where another plausible key begins. Requiring
 * that second key makes a false match in random payload bytes unlikely.
 */
#include <string.h>

#include "base/bytes.h"
#include "adf_private.h"

enum { ADF_SCAN_NORMAL, ADF_SCAN_RESYNC, ADF_SCAN_STOPPED };

/* How many frames ahead of a walk adf_scan_next asks for a key. */
#define ADF_SCAN_AHEAD 16

void adf_scan_init(adf_scan_t *scan, adf_on_error_t policy, uint64_t max_frame)
{
    memset(scan, 0, sizeof *scan);
    scan->policy = policy;
    scan->max_frame = max_frame;
    scan->state = ADF_SCAN_NORMAL;
    adf_error_clear(&scan->error);
}

/* Key fields plausible at p (ADF_KEY_SIZE bytes available)? */
static bool key_plausible(const uint8_t *p, uint64_t max_frame, uint32_t *length)
{
    uint32_t len = tusk_get_u32(p);
    unsigned cls = p[7];
    uint64_t ts = tusk_get_u64(p + 12);
    if (cls != ADF_CLASS_SIMPLE && cls != ADF_CLASS_COMPOSITE)
        return false;
    if (len < ADF_KEY_SIZE || len > max_frame || ts > ADF_TIMESTAMP_MAX)
        return false;
    *length = len;
    return true;
}

static int scan_fail(adf_scan_t *scan, int code, uint64_t offset)
{
    scan->error.code = code;
    scan->error.offset = offset;
    scan->stats.errors++;
    if (scan->policy == ADF_ON_ERROR_RESYNC) {
        scan->state = ADF_SCAN_RESYNC;
        scan->pos++; /* never accept the same position twice */
        scan->stats.bytes_skipped++;
    } else {
        scan->state = ADF_SCAN_STOPPED;
    }
    return code;
}

static int want_more(adf_scan_t *scan, size_t need)
{
    scan->need = need;
    return ADF_SCAN_MORE;
}

/* Resync: advance pos to a plausible key. ADF_OK when found, ADF_END when
 * the data ended without one, ADF_SCAN_MORE when the window ran out. */
static int resync(adf_scan_t *scan, const uint8_t *win, size_t avail, bool at_eof)
{
    while (true) {
        size_t q = scan->pos;
        if (avail - q < ADF_KEY_SIZE) {
            if (!at_eof)
                return want_more(scan, ADF_KEY_SIZE);
            scan->stats.bytes_skipped += avail - q;
            scan->pos = avail;
            return ADF_END;
        }
        uint32_t len;
        if (key_plausible(win + q, scan->max_frame, &len)) {
            size_t end_rel = len; /* frame end relative to q */
            size_t left = avail - q;
            uint32_t next_len;
            if (end_rel > left) {
                if (!at_eof)
                    return want_more(scan, end_rel + ADF_KEY_SIZE);
            } else if (left - end_rel >= ADF_KEY_SIZE) {
                if (key_plausible(win + q + end_rel, scan->max_frame, &next_len))
                    return ADF_OK;
            } else if (at_eof) {
                /* Ends at (or a few bytes before) the end of the data. */
                return ADF_OK;
            } else {
                return want_more(scan, end_rel + ADF_KEY_SIZE);
            }
        }
        scan->pos++;
        scan->stats.bytes_skipped++;
    }
}

int adf_scan_next(adf_scan_t *scan, const uint8_t *win, size_t avail, bool at_eof,
                  uint64_t win_offset, adf_frame_t *frame)
{
    if (scan->state == ADF_SCAN_STOPPED)
        return scan->error.code;
    if (scan->state == ADF_SCAN_RESYNC) {
        int rc = resync(scan, win, avail, at_eof);
        if (rc != ADF_OK)
            return rc;
        scan->state = ADF_SCAN_NORMAL;
    }

    size_t pos = scan->pos;
    size_t left = avail - pos;
    uint64_t offset = win_offset + pos;
    if (left == 0)
        return at_eof ? ADF_END : want_more(scan, ADF_KEY_SIZE);
    if (left < ADF_KEY_SIZE) {
        if (!at_eof)
            return want_more(scan, ADF_KEY_SIZE);
        adf_error_set(&scan->error, ADF_ETRUNC, offset,
                      "offset %llu: incomplete key, only %zu bytes left where %u are needed",
                      (unsigned long long)offset, left, ADF_KEY_SIZE);
        return scan_fail(scan, ADF_ETRUNC, offset);
    }

    adf_key_t key;
    if (adf_key_decode(win + pos, left, &key, &scan->error) != ADF_OK) {
        char msg[ADF_ERROR_MESSAGE_MAX];
        memcpy(msg, scan->error.message, sizeof msg);
        adf_error_set(&scan->error, ADF_EBADKEY, offset, "offset %llu: malformed key: %s",
                      (unsigned long long)offset, msg);
        return scan_fail(scan, ADF_EBADKEY, offset);
    }
    if (key.length > scan->max_frame) {
        adf_error_set(&scan->error, ADF_EBADKEY, offset,
                      "offset %llu: frame length %u exceeds the limit of %llu bytes",
                      (unsigned long long)offset, (unsigned)key.length,
                      (unsigned long long)scan->max_frame);
        return scan_fail(scan, ADF_EBADKEY, offset);
    }
    if (key.length > left) {
        if (!at_eof)
            return want_more(scan, key.length);
        adf_error_set(&scan->error, ADF_ETRUNC, offset,
                      "offset %llu: truncated frame, key says %u bytes but only %zu remain",
                      (unsigned long long)offset, (unsigned)key.length, left);
        return scan_fail(scan, ADF_ETRUNC, offset);
    }

    /* A buffer's frames are mostly of one length: the key ADF_SCAN_AHEAD
     * frames on, were they all of this one's length, is asked for now,
     * so that a walk over frames straight from memory does not wait for
     * each key in turn (a frame's place is known only from the key
     * before it). A prefetch is a hint: a wrong guess costs a cache
     * line, never a fault (the place stays within the window). */
    if ((size_t)key.length * ADF_SCAN_AHEAD + ADF_KEY_SIZE <= left)
        __builtin_prefetch(win + pos + (size_t)key.length * ADF_SCAN_AHEAD);
    frame->key = key;
    frame->payload = win + pos + ADF_KEY_SIZE;
    frame->payload_size = key.length - ADF_KEY_SIZE;
    frame->offset = offset;
    scan->pos = pos + key.length;
    scan->stats.frames++;
    return ADF_OK;
}
