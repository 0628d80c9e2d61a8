/*
 * reader.c - incremental, zero-copy reader of one event file.
 *
 * The file is read in large chunks into one buffer, by offset (pread-like,
 * through a tfb_reader_source: a local file, or any storage); events are
 * views into it. Bytes in the buffer are never moved: when a record runs
 * past the end of the buffer, the buffer starts again at that record's
 * offset and the record's first bytes are read again from the file (page
 * cache), which costs a part of one record instead of a memmove per chunk.
 * A record not yet wholly in the file is "nothing more yet": the
 * offset stays at its start and a later call retries once the file grew.
 * Corruption never stops reading: a bad payload CRC skips one record, a bad
 * length CRC scans forward for the next header whose length CRC checks.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/abi.h"
#include "collector/crc32c.h"
#include "base/errors.h"
#include "collector/event_decode.h"
#include "collector/file_source.h"
#include "collector/pb.h"
#include "collector/reader_source.h"
#include "tfboard.h"
#include "base/vec.h"

#define CHUNK (1u << 20)
/* A length CRC can match by chance on garbage; a record claiming more
 * than this is treated as corrupt rather than awaited. */
#define MAX_RECORD (1ull << 31)

struct tfb_reader {
    tfb_reader_source src;
    int opened;      /* src.open done since the last release */
    int lent;        /* buf is the caller's (tfb_reader_lend_buffer) */
    tfb_object_id id;
    TFB_VEC(uint8_t) buf; /* buf.n: the valid bytes */
    size_t pos;      /* next record starts at buf.v + pos */
    uint64_t base;   /* file offset of buf.v[0] */
    int resyncing;   /* a resync scan was cut by the limit: go on with it */
    uint64_t limit_end; /* tfb_reader_set_limit: stop at this offset; 0 none */
    tfb_reader_stats st;
    uint64_t open_size; /* the object's size at tfb_reader_open_source */
};

int tfb_reader_open_source(tfb_reader **out, const tfb_reader_source *src)
{
    if (!out || !src) {
        if (src)
            src->destroy(src->ctx);
        return TFB_EINVAL;
    }
    tfb_reader *r = calloc(1, sizeof *r);
    if (!r) {
        src->destroy(src->ctx);
        return TFB_ENOMEM;
    }
    r->src = *src;
    uint64_t size;
    int rc = r->src.open(r->src.ctx, &r->id, &size);
    if (rc < 0) {
        tfb_reader_close(r);
        return rc;
    }
    r->opened = 1;
    r->open_size = size;
    *out = r;
    return 0;
}

int tfb_reader_open(tfb_reader **out, const char *path)
{
    if (!out || !path)
        return TFB_EINVAL;
    tfb_reader_source src;
    int rc = tfb_file_source_make(path, &src);
    if (rc < 0)
        return rc;
    return tfb_reader_open_source(out, &src);
}

void tfb_reader_close(tfb_reader *r)
{
    if (!r)
        return;
    r->src.release(r->src.ctx);
    r->src.destroy(r->src.ctx);
    tfb_vec_free(&r->buf);
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
        /* Near the end of the buffer (or all of it used): start it again
         * at the unread bytes, which the next read fetches again from the
         * file; nothing is moved. */
        if (r->pos > 0 && (r->pos == r->buf.n || r->buf.cap - r->buf.n < CHUNK / 4)) {
            r->base += r->pos;
            r->buf.n = r->pos = 0;
        }
        /* Grow only when the bytes actually read fill the buffer, never
         * straight to `need`: a record header can claim up to 2 GiB, and
         * reserving that before the bytes exist would cost 4 GiB per file
         * (garbage, or a record that never completes). So the buffer stays
         * within twice what the file really holds past our offset. */
        if (r->buf.cap - r->buf.n < CHUNK / 4) {
            /* cap + 1: one growth step of the vector (it doubles). */
            if (tfb_vec_need(&r->buf, r->buf.cap ? r->buf.cap + 1 : CHUNK) < 0)
                return TFB_ENOMEM;
        }
        long k = r->src.read_at(r->src.ctx, r->base + r->buf.n, r->buf.v + r->buf.n,
                                r->buf.cap - r->buf.n);
        if (k < 0)
            return (int)k;
        if (k == 0)
            return 0;
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
 * otherwise outweigh the data. fill_slow() allocates it again. A lent
 * buffer (tfb_reader_lend_buffer) stays for its lender to reclaim. */
static void release_idle_buffer(tfb_reader *r)
{
    if (r->pos != r->buf.n)
        return; /* a partial record waits there */
    r->base += r->pos;
    r->pos = r->buf.n = 0;
    if (r->lent)
        return;
    tfb_vec_free(&r->buf);
}

int tfb_reader_resume(tfb_reader *r, const tfb_reader_stats *prev)
{
    if (!r || !prev || prev->size < sizeof *prev || r->buf.n || r->base ||
        r->pos)
        return TFB_EINVAL;
    if (prev->offset > r->open_size)
        return TFB_EINVAL;
    r->st = *prev;
    r->st.buffer_bytes = 0;
    r->base = prev->offset;
    return 0;
}

int tfb_reader_lend_buffer(tfb_reader *r, uint8_t *buf, size_t cap)
{
    if (!r || r->buf.v || !buf)
        return 0;
    r->buf.v = buf;
    r->buf.cap = cap;
    r->lent = 1;
    return 1;
}

int tfb_reader_reclaim_buffer(tfb_reader *r, uint8_t **buf, size_t *cap)
{
    if (!r || !r->buf.v)
        return 0;
    /* Bytes of a partial record waiting there are dropped: reading goes
     * on at base + pos, where they are read again once complete. */
    r->base += r->pos;
    r->pos = r->buf.n = 0;
    *buf = r->buf.v;
    *cap = r->buf.cap;
    r->buf.v = NULL;
    r->buf.cap = 0;
    r->lent = 0;
    return 1;
}

static int same_id(tfb_object_id a, tfb_object_id b)
{
    return a.a == b.a && a.b == b.b;
}

/* At the end of what the file holds: detect a file that was truncated
 * below our offset or replaced by another file of the same name, and
 * start over from its beginning. */
static int check_replaced(tfb_reader *r)
{
    uint64_t off = r->base + r->pos, size;
    tfb_object_id id;
    int s = r->src.stat(r->src.ctx, &id, &size);
    if (s == TFB_ENOTFILE)
        return s; /* replaced by a FIFO or a device: never read it */
    if (s < 0)
        return 0; /* gone: keep what we have */
    if (!same_id(id, r->id)) {
        int rc = r->src.open(r->src.ctx, &id, &size);
        if (rc == TFB_ENOTFILE)
            return rc;
        if (rc < 0)
            return 0; /* gone again: keep what we have */
        r->id = id;
        r->opened = 1;
    } else if (size >= off) {
        return 0;
    }
    r->base = 0;
    r->pos = r->buf.n = 0;
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
        if (tfb_tfrecord_len_ok(h) &&
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
    if (r && r->opened) {
        r->src.release(r->src.ctx);
        r->opened = 0;
    }
    return 0;
}

/* The object released by tfb_reader_release_fd, opened again; one
 * replaced (or truncated below what was buffered) meanwhile is read from
 * its start. */
static int reopen(tfb_reader *r)
{
    tfb_object_id id;
    uint64_t size;
    int rc = r->src.open(r->src.ctx, &id, &size);
    if (rc < 0)
        return rc;
    r->opened = 1;
    if (!same_id(id, r->id) || size < r->base + r->buf.n) {
        r->id = id;
        r->base = 0;
        r->pos = r->buf.n = 0;
        r->resyncing = 0;
        r->st.replaced = 1;
        r->st.truncated_tail = 0;
    }
    return 0;
}

int tfb_reader_next(tfb_reader *r, tfb_event *ev)
{
    if (!r || !ev || tfb_abi_size(ev) < sizeof(size_t))
        return TFB_EINVAL;
    if (!r->opened) {
        int rc = reopen(r);
        if (rc < 0)
            return rc;
    }
    for (;;) {
        if (r->limit_end && r->base + r->pos >= r->limit_end)
            return 0; /* the caller's limit: our place is kept */
        if (r->resyncing) {
            int s = resync(r);
            if (s <= 0)
                return s;
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
            /* The next call reads again: the file may grow. */
            release_idle_buffer(r);
            return 0;
        }
        const uint8_t *h = r->buf.v + r->pos;
        uint64_t len = pb_le64(h);
        uint64_t off = r->base + r->pos;
        if (!tfb_tfrecord_len_ok(h) || len > MAX_RECORD) {
            r->st.resyncs++;
            note_corruption(r, off);
            int s = resync(r);
            if (s <= 0)
                return s;
            continue;
        }
        size_t total = 12 + (size_t)len + 4;
        f = fill(r, total);
        if (f < 0)
            return f;
        if (f == 0) {
            r->st.truncated_tail = 1;
            int c = check_replaced(r);
            if (c <= 0)
                return c;
            continue;
        }
        h = r->buf.v + r->pos;
        const uint8_t *payload = h + 12;
        r->pos += total;
        /* A caller's tfb_event as large as ours is decoded into in
         * place; an older, smaller one gets a whole event's fields as
         * far as its size reaches. `whole` is cleared only for the
         * latter: an initialiser cleared it on every record, a `rep stos`
         * that was 45 % of this function on a file of scalars. */
        tfb_event whole;
        tfb_event *dst = ev;
        if (tfb_abi_size(ev) < sizeof whole) {
            memset(&whole, 0, sizeof whole);
            whole.size = sizeof whole;
            dst = &whole;
        }
        if (!tfb_tfrecord_data_ok(payload, (size_t)len) ||
            tfb_event_decode(payload, (size_t)len, dst) < 0) {
            r->st.corrupt_records++;
            r->st.bytes_skipped += total;
            note_corruption(r, off);
            continue;
        }
        dst->offset = off;
        if (dst != ev) /* an older, smaller tfb_event: its fields only */
            tfb_abi_write(ev, &whole, sizeof whole);
        r->st.records++;
        r->st.truncated_tail = 0;
        return 1;
    }
}
