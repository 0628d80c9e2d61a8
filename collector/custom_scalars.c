/*
 * custom_scalars.c - tfb_custom_scalars_layout: the custom_scalars
 * plugin's layout record (see tfboard.h).
 */
#include <stdlib.h>

#include "collector/pb.h"
#include "tfboard.h"
#include "collector/writer_internal.h"

int tfb_custom_scalars_layout(tfb_writer *w, const void *layout_pb,
                              size_t len)
{
    static const char tag[] = "custom_scalars__config__";
    if (!w || !layout_pb || !len)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    size_t tag_len = sizeof tag - 1;
    /* TensorProto{dtype DT_STRING, tensor_shape {}, string_val layout} */
    size_t tensor = 2 + pb_len_field_size(0) + pb_len_field_size(len);
    size_t plugin_data = pb_len_field_size(14); /* "custom_scalars" */
    size_t meta = pb_len_field_size(plugin_data);
    size_t value = pb_len_field_size(tag_len) + pb_len_field_size(meta) +
                   pb_len_field_size(tensor);
    size_t summary = pb_len_field_size(value);
    size_t ev = 9 + 2 + pb_len_field_size(summary);
    uint8_t *buf = malloc(ev), *p = buf;
    if (!buf)
        return TFB_ENOMEM;
    *p++ = 0x09;
    p = pb_put_double(p, tfb_now_wall());
    *p++ = 0x10; /* step 0 */
    *p++ = 0;
    p = pb_put_len(p, 5, summary);
    p = pb_put_len(p, 1, value);
    p = pb_put_bytes(p, 1, tag, tag_len);
    p = pb_put_len(p, 9, meta);
    p = pb_put_len(p, 1, plugin_data);
    p = pb_put_bytes(p, 1, "custom_scalars", 14);
    p = pb_put_len(p, 8, tensor);
    *p++ = 0x08;
    *p++ = 7; /* DT_STRING */
    p = pb_put_len(p, 2, 0);
    p = pb_put_bytes(p, 8, layout_pb, len);
    int rc = tfb_writer_log_event(w, buf, (size_t)(p - buf));
    free(buf);
    return rc;
}
