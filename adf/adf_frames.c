/* adf_frames.c - the reconstruction filters' walks over a buffer
 * (adf_frames.h): one reader loop for reading, one copy loop for writing,
 * with the same checks and messages for all of them. */
#include "adf_frames.h"

int adf_frames_error(const adf_error_t *e, tusk_error_t *err)
{
    return tusk_error_set(err, e->code == ADF_EFULL || e->code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s",
                          e->message);
}

int adf_frames_read(const void *buf, size_t size, uint64_t base, uint32_t type, adf_frames_read_fn fn, void *ctx,
                    tusk_error_t *err)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, base);
    adf_frame_t f;
    int rc = ADF_OK, st = TUSK_OK;
    while (st == TUSK_OK && (rc = adf_reader_next(r, &f)) == ADF_OK)
        if (type == ADF_FRAMES_ALL || f.key.type == type)
            st = fn(ctx, &f, err);
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    adf_reader_destroy(&r);
    return st;
}

int adf_frames_write(const void *buf, size_t size, uint32_t type, bool keep, size_t n, const char *what,
                     adf_frames_write_fn fn, void *ctx, adf_writer_t *w, tusk_error_t *err)
{
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f;
    size_t k = 0;
    int rc = ADF_OK, st = TUSK_OK;
    while (st == TUSK_OK && (rc = adf_reader_next(r, &f)) == ADF_OK) {
        bool ours = f.key.type == type;
        if ((!ours || keep) && adf_writer_put_frame(w, &f) != ADF_OK)
            st = adf_frames_error(adf_writer_error(w), err);
        else if (ours && k >= n)
            st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds more %s than the %zu results", what, n);
        else if (ours)
            st = fn(ctx, k++, &f, w, err);
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    if (st == TUSK_OK && k != n)
        st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds %zu %s, not the %zu of the results", k, what, n);
    adf_reader_destroy(&r);
    return st;
}
