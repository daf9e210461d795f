/* fuzz_tap_link.c - fuzz target: the link a sampling tap is put on
 * (distributed/tap_link.h), as `tusk-run --tap/--untap` and the status
 * page's command line send it to the controller. data[0] picks how it is
 * called, the rest (up to a NUL) is the text:
 *   bit 0: as `untap` (every NULL: an every= is refused), else as `tap`;
 *   bit 1: small name buffers, (data[0] >> 2) % 16 and (data[0] >> 4) % 16
 *          bytes (0 included), else 256 each.
 * Each name buffer is allocated at exactly its size (AddressSanitizer
 * sees a byte written past it) and filled with a pattern first.
 *   - The text is taken, or refused with TUSK_EINVAL and a message that
 *     names the command ("tap"/"untap").
 *   - Taken: both names are 1 to size - 1 bytes, NUL-terminated, without
 *     blanks, '[', ']' or '>'; the instances are at most 65535; every is
 *     at least 1; the text holds exactly one "->".
 *   - Taken: "UP[K]->DOWN[K]" (with " every=N" as tap) formatted from what
 *     was read is taken again, to the same names, instances and every.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "distributed/tap_link.h"
#include "fuzz_targets.h"

#define NAME_BIG 256
#define PATTERN 0xA5

static bool name_ok(const char *s, size_t size)
{
    size_t n = strnlen(s, size);
    if (n == 0 || n >= size)
        return false;
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)s[i]) || s[i] == '[' || s[i] == ']' || s[i] == '>')
            return false;
    return true;
}

/* A buffer of exactly `size` bytes (one byte when size is 0, which must
 * then stay as it was). */
static char *name_buffer(size_t size)
{
    char *b = malloc(size ? size : 1);
    FUZZ_CHECK(b != NULL);
    memset(b, PATTERN, size ? size : 1);
    return b;
}

int fuzz_tap_link_one(const uint8_t *data, size_t size)
{
    uint8_t sel;
    char *text = fuzz_selector_text(data, size, &sel);
    bool untap = sel & 1;
    size_t up_size = sel & 2 ? (size_t)((sel >> 2) % 16) : NAME_BIG;
    size_t down_size = sel & 2 ? (size_t)((sel >> 4) % 16) : NAME_BIG;
    char *up = name_buffer(up_size), *down = name_buffer(down_size);
    unsigned uk = 1u << 20, dk = 1u << 20, every = 0;
    tusk_error_t err;
    err.message[0] = '\0';
    int rc = tusk_tap_link_parse(text, up, up_size, &uk, down, down_size, &dk, untap ? NULL : &every, &err);
    if (rc != TUSK_OK) {
        FUZZ_CHECK(rc == TUSK_EINVAL);
        FUZZ_CHECK(strncmp(err.message, "tap: ", 5) == 0 || strncmp(err.message, "untap: ", 7) == 0);
        FUZZ_CHECK(strnlen(err.message, sizeof err.message) < sizeof err.message);
    } else {
        FUZZ_CHECK(up_size > 0 && down_size > 0);
        FUZZ_CHECK(name_ok(up, up_size) && name_ok(down, down_size));
        FUZZ_CHECK(uk <= 65535 && dk <= 65535);
        const char *arrow = strstr(text, "->");
        FUZZ_CHECK(arrow != NULL && strstr(arrow + 2, "->") == NULL);
        if (untap)
            FUZZ_CHECK(strstr(arrow + 2, "every=") == NULL);
        else
            FUZZ_CHECK(every >= 1);
        /* Formatted back, read back. */
        char again[2 * NAME_BIG + 64];
        if (untap)
            snprintf(again, sizeof again, "%s[%u]->%s[%u]", up, uk, down, dk);
        else
            snprintf(again, sizeof again, "%s[%u]->%s[%u] every=%u", up, uk, down, dk, every);
        char up2[NAME_BIG], down2[NAME_BIG];
        unsigned uk2, dk2, every2 = 0;
        FUZZ_CHECK(tusk_tap_link_parse(again, up2, sizeof up2, &uk2, down2, sizeof down2, &dk2,
                                       untap ? NULL : &every2, &err) == TUSK_OK);
        FUZZ_CHECK(strcmp(up, up2) == 0 && strcmp(down, down2) == 0 && uk == uk2 && dk == dk2);
        FUZZ_CHECK(untap || every == every2);
    }
    if (up_size == 0)
        FUZZ_CHECK((unsigned char)up[0] == PATTERN);
    if (down_size == 0)
        FUZZ_CHECK((unsigned char)down[0] == PATTERN);
    free(up);
    free(down);
    free(text);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tap_link_one(data, size);
}
#endif
