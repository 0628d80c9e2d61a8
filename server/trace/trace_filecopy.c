/*
 * trace_filecopy.c - bounded, hole-keeping file copies into the cache
 * directory (trace_filecopy.h).
 */
#include "trace/trace_filecopy.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/errors.h"
#include "tfboard.h"

uint64_t tfb_trace_copy_cost(const struct stat *st)
{
    uint64_t size = st->st_size > 0 ? (uint64_t)st->st_size : 0;
    uint64_t alloc = st->st_blocks > 0 ? (uint64_t)st->st_blocks * 512u : 0;
    return alloc < size ? alloc : size;
}

uint64_t tfb_trace_copy_room(int fd)
{
    struct statvfs v;
    if (fstatvfs(fd, &v) != 0 || v.f_frsize == 0)
        return UINT64_MAX;
    uint64_t bs = (uint64_t)v.f_frsize, free_blocks = (uint64_t)v.f_bavail;
    if (free_blocks > UINT64_MAX / bs)
        return UINT64_MAX;
    return free_blocks * bs / TFB_TRACE_COPY_FREE_DIVISOR;
}

/* Copies len bytes at off of in to the same offset of out. *done: bytes
 * written. 0, or the errno's code; a source that ends early (it shrank)
 * ends the copy there, without error. */
static int copy_range(int in, int out, off_t off, uint64_t len,
                      uint64_t *done)
{
    int plain = 0;
    while (len) {
        size_t want = len > ((uint64_t)1 << 30) ? (size_t)1 << 30 : len;
        ssize_t r;
        if (!plain) {
            off_t a = off, b = off; /* 64-bit: _FILE_OFFSET_BITS */
            r = copy_file_range(in, &a, out, &b, want, 0);
            if (r < 0 && (errno == EXDEV || errno == ENOSYS ||
                          errno == EINVAL || errno == EOPNOTSUPP)) {
                /* Plain reads and writes where the kernel cannot. */
                plain = 1;
                continue;
            }
        } else {
            char buf[1 << 16];
            r = pread(in, buf, want < sizeof buf ? want : sizeof buf, off);
            if (r > 0) {
                int w = tfb_trace_pwrite_full(out, buf, (size_t)r,
                                              (uint64_t)off);
                if (w < 0)
                    return w;
            }
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return tfb_err_from_errno(errno);
        if (r == 0)
            break;
        off += r;
        len -= (uint64_t)r;
        *done += (uint64_t)r;
    }
    return 0;
}

int tfb_trace_copy_fd(int in, int out, uint64_t max, uint64_t *used)
{
    struct stat st;
    if (fstat(in, &st) != 0)
        return tfb_err_from_errno(errno);
    uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    uint64_t room = tfb_trace_copy_room(out);
    uint64_t left = max > *used ? max - *used : 0;
    if (room < left)
        left = room;
    /* Refused before a byte is written when what the source holds is
     * already too much; the count below is the bound itself (a file
     * system that cannot tell holes, a source that grows). */
    if (tfb_trace_copy_cost(&st) > left)
        return TFB_ETOOBIG;
    uint64_t done = 0;
    off_t at = 0;
    uint64_t end = size; /* the copy's size */
    int err = 0;
    while ((uint64_t)at < size && !err) {
        off_t data = lseek(in, at, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break; /* only a hole is left */
        if (data < 0)
            data = at; /* no SEEK_DATA here: all of it is data */
        if ((uint64_t)data >= size)
            break;
        off_t hole = lseek(in, data, SEEK_HOLE);
        if (hole < 0 || (uint64_t)hole > size)
            hole = (off_t)size;
        uint64_t len = (uint64_t)(hole - data);
        if (len > left - done) {
            err = TFB_ETOOBIG;
            break;
        }
        uint64_t before = done;
        err = copy_range(in, out, data, len, &done);
        if (!err && done - before < len) {
            end = (uint64_t)data + (done - before);
            break; /* the source shrank: the copy ends where it did */
        }
        at = hole;
    }
    *used += done;
    /* The size, with the holes at the end (ftruncate allocates nothing). */
    if (!err && ftruncate(out, (off_t)end) != 0)
        err = tfb_err_from_errno(errno);
    return err;
}

int tfb_trace_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
    const char *p = buf;
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return tfb_err_from_errno(w < 0 ? errno : ENOSPC);
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}
