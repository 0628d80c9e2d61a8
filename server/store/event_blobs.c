/*
 * event_blobs.c - locators of an Event's graph and run metadata blobs
 * (see event_blobs.h).
 */
#include "store/event_blobs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/event_decode.h"
#include "collector/pb.h"

/* A locator: step (8), record offset (8), blob offset in the Event's field (8),
 * blob length (8), then the file's path. Little-endian. */
#define LOC_HEAD 32

static int put_locator(tfb_run *r, const char *plugin, const char *tag,
                       size_t tag_len, const char *path, const tfb_event *ev,
                       const uint8_t *payload, const uint8_t *blob,
                       size_t blob_len)
{
    size_t plen = strlen(path);
    uint8_t *loc = malloc(LOC_HEAD + plen);
    if (!loc)
        return TFB_ENOMEM;
    pb_put_fixed64(loc, (uint64_t)ev->step);
    pb_put_fixed64(loc + 8, ev->offset);
    pb_put_fixed64(loc + 16, (uint64_t)(blob - payload));
    pb_put_fixed64(loc + 24, (uint64_t)blob_len);
    memcpy(loc + LOC_HEAD, path, plen);
    int rc = tfb_run_put_record(r, plugin, strlen(plugin), tag, tag_len,
                                ev->step, ev->wall_time, TFB_EVENT_BLOB_MARK,
                                sizeof TFB_EVENT_BLOB_MARK - 1, loc,
                                LOC_HEAD + plen);
    free(loc);
    return rc == TFB_ETOOBIG ? 0 : rc;
}

int tfb_event_blob_note(tfb_run *r, const char *path, const tfb_event *ev)
{
    if (!r || !path || !ev || !ev->blob)
        return 0;
    /* Offsets are kept relative to the Event's field (ev->blob): the
     * reader decodes the record again and finds the same field. */
    const uint8_t *blob = ev->blob;
    size_t len = ev->blob_len;
    const uint8_t *base = ev->blob;
    if (ev->blob_field == 4)
        return put_locator(r, "graphs", TFB_RUN_GRAPH_TAG,
                           sizeof TFB_RUN_GRAPH_TAG - 1, path, ev, base,
                           blob, len);
    const uint8_t *p = blob, *end = blob + len;
    pb_field f;
    if (ev->blob_field == 9) {
        /* MetaGraphDef.graph_def is field 2. */
        while (pb_next(&p, end, &f) > 0)
            if (f.num == 2 && f.wt == PB_LEN)
                return put_locator(r, "graphs", TFB_META_GRAPH_TAG,
                                   sizeof TFB_META_GRAPH_TAG - 1, path, ev,
                                   base, f.p, f.len);
        return 0;
    }
    if (ev->blob_field == 8) {
        /* TaggedRunMetadata{tag = 1, run_metadata = 2}. */
        const char *tag = NULL;
        size_t tag_len = 0;
        const uint8_t *md = NULL;
        size_t md_len = 0;
        while (pb_next(&p, end, &f) > 0) {
            if (f.num == 1 && f.wt == PB_LEN) {
                tag = (const char *)f.p;
                tag_len = f.len;
            } else if (f.num == 2 && f.wt == PB_LEN) {
                md = f.p;
                md_len = f.len;
            }
        }
        if (!tag || !tag_len || !md)
            return 0;
        return put_locator(r, "graph_tagged_run_metadata", tag, tag_len,
                           path, ev, base, md, md_len);
    }
    return 0;
}

int tfb_event_blob_is_locator(const tfb_plugin_record *rec)
{
    return rec && rec->content_len == sizeof TFB_EVENT_BLOB_MARK - 1 &&
           memcmp(rec->content, TFB_EVENT_BLOB_MARK, rec->content_len) ==
               0 &&
           rec->tensor_len > LOC_HEAD;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return TFB_EIO;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int tfb_event_blob_read(const tfb_plugin_record *rec, uint8_t **out,
                        size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!tfb_event_blob_is_locator(rec))
        return TFB_EINVAL;
    const uint8_t *loc = rec->tensor;
    int64_t step = (int64_t)pb_le64(loc);
    uint64_t off = pb_le64(loc + 8), delta = pb_le64(loc + 16),
             blen = pb_le64(loc + 24);
    if (blen > TFB_EVENT_BLOB_MAX)
        return TFB_ETOOBIG;
    size_t plen = rec->tensor_len - LOC_HEAD;
    char *path = malloc(plen + 1);
    if (!path)
        return TFB_ENOMEM;
    memcpy(path, loc + LOC_HEAD, plen);
    path[plen] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return errno == EMFILE || errno == ENFILE ? TFB_EMFILE : TFB_EIO;
    uint8_t head[12];
    uint8_t *buf = NULL;
    uint64_t n = 0;
    int rc = pread_all(fd, head, sizeof head, off);
    if (rc == 0) {
        n = pb_le64(head);
        /* The record holds the blob and the Event's few other fields. */
        if (tfb_masked_crc32c(head, 8) != pb_le32(head + 8) ||
            n > TFB_EVENT_BLOB_MAX + 4096 || n < blen)
            rc = TFB_ECORRUPT;
    }
    if (rc == 0 && !(buf = malloc((size_t)n + 4)))
        rc = TFB_ENOMEM;
    if (rc == 0)
        rc = pread_all(fd, buf, (size_t)n + 4, off + 12);
    close(fd);
    tfb_event ev = {.size = sizeof ev};
    if (rc == 0 && (tfb_masked_crc32c(buf, (size_t)n) != pb_le32(buf + n) ||
                    tfb_event_decode(buf, (size_t)n, &ev) < 0 ||
                    ev.step != step || !ev.blob))
        rc = TFB_ECORRUPT;
    if (rc == 0) {
        /* delta is the blob's place inside the Event's field (0 for a
         * graph_def; the graph_def inside a meta_graph_def, the
         * run_metadata inside a tagged_run_metadata further in). */
        if (delta > ev.blob_len || blen > ev.blob_len - delta)
            rc = TFB_ECORRUPT;
    }
    if (rc < 0) {
        free(buf);
        return rc;
    }
    memmove(buf, ev.blob + delta, (size_t)blen);
    *out = buf;
    *len = (size_t)blen;
    return 0;
}
