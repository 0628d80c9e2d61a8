/*
 * run_end.c - encodes the end-of-run record (run_end.h). The writer calls
 * it once at close; the record is small and rare, so it is built inside
 * out with exact sizes (pb.h) rather than through the scalar fast path.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/pb.h"
#include "collector/run_end.h"
#include "tfboard.h"

enum { DT_STRING = 7 };

/* Length of reason cut to TFB_RUN_END_REASON_MAX bytes without splitting
 * a UTF-8 sequence. */
static size_t reason_len(const char *reason)
{
    size_t n = reason ? strlen(reason) : 0;
    if (n <= TFB_RUN_END_REASON_MAX)
        return n;
    n = TFB_RUN_END_REASON_MAX;
    while (n > 0 && ((unsigned char)reason[n] & 0xC0) == 0x80)
        n--;
    return n;
}

int tfb_run_end_event(const char *reason, double wall, uint8_t **out,
                      size_t *len)
{
    size_t rn = reason_len(reason);
    const char *rs = rn ? reason : "";
    const size_t tag_n = sizeof TFB_RUN_END_TAG - 1;
    const size_t plug_n = sizeof TFB_RUN_END_PLUGIN - 1;
    /* TensorProto{dtype 1, tensor_shape 2 (empty), string_val 8}. */
    size_t tensor = 2 + 2 + pb_len_field_size(rn);
    /* PluginData{plugin_name 1, content 2}. */
    size_t plugin = pb_len_field_size(plug_n) + pb_len_field_size(rn);
    size_t meta = pb_len_field_size(plugin);
    size_t value = pb_len_field_size(tag_n) + pb_len_field_size(tensor) +
                   pb_len_field_size(meta);
    size_t summary = pb_len_field_size(value);
    size_t event = 9 + pb_len_field_size(summary);
    uint8_t *b = malloc(event), *p = b;
    if (!b)
        return TFB_ENOMEM;
    p = pb_put_key(p, 1, PB_I64);            /* Event.wall_time */
    p = pb_put_double(p, wall);
    p = pb_put_len(p, 5, summary);           /* Event.summary */
    p = pb_put_len(p, 1, value);             /* Summary.value */
    p = pb_put_bytes(p, 1, TFB_RUN_END_TAG, tag_n);
    p = pb_put_len(p, 8, tensor);            /* Value.tensor */
    p = pb_put_key(p, 1, PB_VARINT);
    p = pb_put_varint(p, DT_STRING);
    p = pb_put_len(p, 2, 0);                 /* scalar shape */
    p = pb_put_bytes(p, 8, rs, rn);
    p = pb_put_len(p, 9, meta);              /* Value.metadata */
    p = pb_put_len(p, 1, plugin);            /* SummaryMetadata.plugin_data */
    p = pb_put_bytes(p, 1, TFB_RUN_END_PLUGIN, plug_n);
    p = pb_put_bytes(p, 2, rs, rn);
    *out = b;
    *len = (size_t)(p - b);
    return 0;
}
