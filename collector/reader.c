/*
 * reader.c - incremental, zero-copy reader of one event file.
 *
 * The file is read in large chunks into one buffer; events are views into
 * it. A record not yet wholly in the file is "nothing more yet": the
 * offset stays at its start and a later call retries once the file grew.
 * Corruption never stops reading: a bad payload CRC skips one record, a bad
 * length CRC scans forward for the next header whose length CRC checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/abi.h"
#include "collector/errors.h"
#include "collector/event_decode.h"
#include "collector/pb.h"
#include "tfboard.h"
#include "base/vec.h"

#define CHUNK (1u << 20)
/* A length CRC can match by chance on garbage; a record claiming more
 * than this is treated as corrupt rather than awaited. */
#define MAX_RECORD (1ull << 31)

struct tfb_reader {
    int fd;
    char *path;
    dev_t dev;
    ino_t ino;
    TFB_VEC(uint8_t) buf; /* buf.n: the bytes read so far */
    size_t pos;      /* next record starts at buf.v + pos */
    uint64_t base;   /* file offset of buf.v[0] */
    int eof;         /* the last read() returned 0 */
    int resyncing;   /* a resync scan was cut by the limit: go on with it */
    uint64_t limit_end; /* tfb_reader_set_limit: stop at this offset; 0 none */
    tfb_reader_stats st;
};

/* Opens path without blocking (a FIFO would block a plain open until a
 * writer comes) and accepts regular files only. */
static int open_regular(const char *path, int *fd_out, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return tfb_err_from_errno(errno);
    if (fstat(fd, st) < 0) {
        int rc = tfb_err_from_errno(errno);
        close(fd);
        return rc;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return TFB_ENOTFILE;
    }
    *fd_out = fd;
    return 0;
}

int tfb_reader_open(tfb_reader **out, const char *path)
{
    if (!out || !path)
        return TFB_EINVAL;
    tfb_reader *r = calloc(1, sizeof *r);
    if (!r)
        return TFB_ENOMEM;
    struct stat st;
    int rc = open_regular(path, &r->fd, &st);
    if (rc < 0) {
        free(r);
        return rc;
    }
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    r->path = strdup(path);
    if (!r->path) {
        tfb_reader_close(r);
        return TFB_ENOMEM;
    }
    *out = r;
    return 0;
}

void tfb_reader_close(tfb_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    tfb_vec_free(&r->buf);
    free(r->path);
    free(r);
}

void tfb_reader_stats_init(tfb_reader_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
}

int tfb_reader_get_stats(const tfb_reader *r, tfb_reader_stats *out)
{
    if (!r || !out)
        return TFB_EINVAL;
    tfb_reader_stats st = r->st;
    st.size = sizeof st;
    st.offset = r->base + r->pos;
    st.buffer_bytes = r->buf.cap;
    return tfb_abi_write(out, &st, sizeof st);
}

static void note_corruption(tfb_reader *r, uint64_t off)
{
    if (r->st.n_offsets < TFB_READER_MAX_CORRUPTIONS)
        r->st.corruption_offsets[r->st.n_offsets++] = off;
}

/* Makes at least `need` bytes available at buf + pos if the file has them.
 * Returns 1 when they are there, 0 when the file ends first, <0 on error. */
static int fill_slow(tfb_reader *r, size_t need)
{
    while (r->buf.n - r->pos < need) {
        if (r->pos > 0) { /* slide the unread tail to the front */
            memmove(r->buf.v, r->buf.v + r->pos, r->buf.n - r->pos);
            r->buf.n -= r->pos;
            r->base += r->pos;
            r->pos = 0;
        }
        /* Grow only when the bytes actually read fill the buffer, never
         * straight to `need`: a record header can claim up to 2 GiB, and
         * reserving that before the bytes exist would cost 4 GiB per file
         * (garbage, or a record that never completes). So the buffer stays
         * within twice what the file really holds past our offset. */
        size_t want = r->buf.cap ? r->buf.n + CHUNK / 4 : CHUNK;
        if (r->buf.cap - r->buf.n < CHUNK / 4 &&
            tfb_vec_need(&r->buf, want) < 0)
            return TFB_ENOMEM;
        ssize_t k = read(r->fd, r->buf.v + r->buf.n, r->buf.cap - r->buf.n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return tfb_err_from_errno(errno);
        }
        if (k == 0) {
            r->eof = 1;
            return 0;
        }
        r->buf.n += (size_t)k;
        r->st.file_size = r->base + r->buf.n;
    }
    return 1;
}

static inline int fill(tfb_reader *r, size_t need)
{
    if (r->buf.n - r->pos >= need) /* the common case: already buffered */
        return 1;
    return fill_slow(r, need);
}

/* A reader waiting at the end of a file that is not growing holds no
 * buffer: a server keeps one reader open per file, and the buffers would
 * otherwise outweigh the data. fill_slow() allocates it again. */
static void release_idle_buffer(tfb_reader *r)
{
    if (r->pos != r->buf.n)
        return; /* a partial record waits there */
    r->base += r->pos;
    r->pos = 0;
    tfb_vec_free(&r->buf);
}

/* At the end of what the file holds: detect a file that was truncated
 * below our offset or replaced by another file of the same name, and
 * start over from its beginning. */
static int check_replaced(tfb_reader *r)
{
    struct stat st, fst;
    uint64_t off = r->base + r->pos;
    int swapped = stat(r->path, &st) == 0 &&
                  (st.st_dev != r->dev || st.st_ino != r->ino);
    if (swapped) {
        int fd;
        int rc = open_regular(r->path, &fd, &fst);
        if (rc == TFB_ENOTFILE)
            return rc; /* replaced by a FIFO or a device: never read it */
        if (rc < 0)
            return 0; /* gone again: keep what we have */
        close(r->fd);
        r->fd = fd;
        r->dev = fst.st_dev;
        r->ino = fst.st_ino;
    } else if (fstat(r->fd, &fst) < 0 || (uint64_t)fst.st_size >= off) {
        return 0;
    }
    if (lseek(r->fd, 0, SEEK_SET) < 0)
        return tfb_err_from_errno(errno);
    r->base = 0;
    r->pos = r->buf.n = 0;
    r->eof = 0;
    r->st.replaced = 1;
    r->st.truncated_tail = 0;
    return 1;
}

/* After a bad length CRC at pos: the next offset > pos whose 8 bytes have
 * a matching masked CRC, within what is buffered (more is read as needed). */
static int resync(tfb_reader *r)
{
    uint64_t start = r->base + r->pos;
    if (!r->resyncing)
        r->pos++;
    r->resyncing = 0;
    for (;;) {
        if (r->limit_end && r->base + r->pos >= r->limit_end) {
            /* Cut by the caller's limit (a huge file of garbage): go on
             * from here at the next call. */
            r->st.bytes_skipped += r->base + r->pos - start;
            r->resyncing = 1;
            return 0;
        }
        int f = fill(r, 12);
        if (f < 0)
            return f;
        if (f == 0) {
            /* Fewer than 12 bytes left: they may be the start of a record
             * still being written; wait there. */
            r->st.bytes_skipped += r->base + r->pos - start;
            return 0;
        }
        const uint8_t *h = r->buf.v + r->pos;
        if (tfb_masked_crc32c(h, 8) == pb_le32(h + 8) &&
            pb_le64(h) <= MAX_RECORD) {
            r->st.bytes_skipped += r->base + r->pos - start;
            return 1;
        }
        /* No header starts inside 12 zero bytes (the masked CRC of a zero
         * length is not zero), so a zero-filled stretch (a preallocated or
         * sparse file, the tail of a crash) is passed at memory speed,
         * not one CRC per byte. */
        if (h[0] == 0 && h[11] == 0) {
            size_t end = r->buf.n, q = r->pos + 1;
            while (q < end && r->buf.v[q] == 0)
                q++;
            r->pos = q - r->pos >= 12 ? q - 11 : r->pos + 1;
            continue;
        }
        r->pos++;
    }
}

void tfb_reader_set_limit(tfb_reader *r, uint64_t bytes)
{
    if (r)
        r->limit_end = bytes ? r->base + r->pos + bytes : 0;
}

int tfb_reader_release_fd(tfb_reader *r)
{
    if (r && r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
    }
    return 0;
}

/* The descriptor released by tfb_reader_release_fd, opened again where
 * reading stopped; a file replaced meanwhile is read from its start. */
static int reopen(tfb_reader *r)
{
    struct stat st;
    int rc = open_regular(r->path, &r->fd, &st);
    if (rc < 0) {
        r->fd = -1;
        return rc;
    }
    if (st.st_dev != r->dev || st.st_ino != r->ino ||
        (uint64_t)st.st_size < r->base + r->buf.n) {
        r->dev = st.st_dev;
        r->ino = st.st_ino;
        r->base = 0;
        r->pos = r->buf.n = 0;
        r->resyncing = 0;
        r->st.replaced = 1;
        r->st.truncated_tail = 0;
        return 0;
    }
    if (lseek(r->fd, (off_t)(r->base + r->buf.n), SEEK_SET) < 0)
        return tfb_err_from_errno(errno);
    return 0;
}

int tfb_reader_next(tfb_reader *r, tfb_event *ev)
{
    if (!r || !ev || tfb_abi_size(ev) < sizeof(size_t))
        return TFB_EINVAL;
    if (r->fd < 0) {
        int rc = reopen(r);
        if (rc < 0)
            return rc;
    }
    for (;;) {
        if (r->limit_end && r->base + r->pos >= r->limit_end)
            return 0; /* the caller's limit: our place is kept */
        if (r->resyncing) {
            int s = resync(r);
            if (s < 0)
                return s;
            if (s == 0) {
                r->eof = 0;
                return 0;
            }
            continue;
        }
        int f = fill(r, 12);
        if (f < 0)
            return f;
        if (f == 0) {
            r->st.truncated_tail = r->buf.n > r->pos;
            int c = check_replaced(r);
            if (c < 0)
                return c;
            if (c > 0)
                continue;
            r->eof = 0; /* next call reads again: the file may grow */
            release_idle_buffer(r);
            return 0;
        }
        const uint8_t *h = r->buf.v + r->pos;
        uint64_t len = pb_le64(h);
        uint64_t off = r->base + r->pos;
        if (tfb_masked_crc32c(h, 8) != pb_le32(h + 8) || len > MAX_RECORD) {
            r->st.resyncs++;
            note_corruption(r, off);
            int s = resync(r);
            if (s < 0)
                return s;
            if (s == 0) {
                r->eof = 0;
                return 0;
            }
            continue;
        }
        size_t total = 12 + (size_t)len + 4;
        f = fill(r, total);
        if (f < 0)
            return f;
        if (f == 0) {
            r->st.truncated_tail = 1;
            int c = check_replaced(r);
            if (c < 0)
                return c;
            if (c > 0)
                continue;
            r->eof = 0;
            return 0;
        }
        h = r->buf.v + r->pos;
        const uint8_t *payload = h + 12;
        r->pos += total;
        /* Decoded whole here, then given back as far as the caller's
         * size reaches (an older, smaller tfb_event gets its fields). */
        tfb_event whole = {.size = sizeof whole};
        if (tfb_masked_crc32c(payload, (size_t)len) != pb_le32(payload + len) ||
            tfb_event_decode(payload, (size_t)len, &whole) < 0) {
            r->st.corrupt_records++;
            r->st.bytes_skipped += total;
            note_corruption(r, off);
            continue;
        }
        whole.offset = off;
        tfb_abi_write(ev, &whole, sizeof whole);
        r->st.records++;
        r->st.truncated_tail = 0;
        return 1;
    }
}
