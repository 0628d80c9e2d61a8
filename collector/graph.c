/*
 * graph.c - tfb_graph_def and tfb_run_metadata: the Event fields
 * TensorBoard's graphs plugin reads (see tfboard.h).
 */
#include <stdlib.h>
#include <string.h>

#include "collector/pb.h"
#include "collector/writer_internal.h"
#include "tfboard.h"

/* Event{wall_time = 1, step = 2 (when not 0), field = the bytes}, the
 * bytes being body (one LEN field) or, for tagged_run_metadata, the
 * message {tag = 1, run_metadata = 2}. */
static int log_blob(tfb_writer *w, unsigned field, int64_t step,
                    const char *tag, const void *bytes, size_t len)
{
    size_t tag_len = tag ? strlen(tag) : 0;
    size_t inner = tag ? pb_len_field_size(tag_len) + 1 +
                             pb_varint_size(len) + len
                       : len;
    size_t n = 9 + (step ? 1 + pb_varint_size((uint64_t)step) : 0) + 1 +
               pb_varint_size(inner) + inner;
    uint8_t *buf = malloc(n), *p = buf;
    if (!buf)
        return TFB_ENOMEM;
    *p++ = 0x09;
    p = pb_put_double(p, tfb_now_wall());
    if (step) {
        *p++ = 0x10;
        p = pb_put_varint(p, (uint64_t)step);
    }
    p = pb_put_len(p, field, inner);
    if (tag) {
        p = pb_put_bytes(p, 1, tag, tag_len);
        p = pb_put_len(p, 2, len);
    }
    if (len)
        memcpy(p, bytes, len);
    int rc = tfb_writer_log_event(w, buf, n);
    free(buf);
    return rc;
}

int tfb_graph_def(tfb_writer *w, const void *graph_pb, size_t len)
{
    if (!w || !graph_pb || !len)
        return TFB_EINVAL;
    if (len > TFB_GRAPH_DEF_MAX)
        return TFB_ETOOBIG;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    return log_blob(w, 4, 0, NULL, graph_pb, len);
}

int tfb_run_metadata(tfb_writer *w, const char *tag,
                     const void *run_metadata_pb, size_t len, int64_t step)
{
    if (!w || !tag || !*tag || (!run_metadata_pb && len))
        return TFB_EINVAL;
    if (len > TFB_GRAPH_DEF_MAX || strlen(tag) > TFB_GRAPH_DEF_MAX)
        return TFB_ETOOBIG;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    return log_blob(w, 8, step, tag, run_metadata_pb, len);
}
