/*
 * custom_scalars.c - tfb_custom_scalars_layout: the custom_scalars
 * plugin's layout record (see tfboard.h).
 */
#include <stdlib.h>

#include "collector/event.h"
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
    /* TensorProto{dtype DT_STRING, tensor_shape {}, string_val layout} */
    size_t tensor = 2 + pb_len_field_size(0) + pb_len_field_size(len), n;
    uint8_t *p, *buf = tfb_ev_plugin_event(tfb_now_wall(), 0, tag,
                                           sizeof tag - 1, "custom_scalars",
                                           NULL, 0, tensor, &p, &n);
    if (!buf)
        return TFB_ENOMEM;
    *p++ = 0x08;
    *p++ = 7; /* DT_STRING */
    p = pb_put_len(p, 2, 0);
    pb_put_bytes(p, 8, layout_pb, len);
    int rc = tfb_writer_log_event(w, buf, n);
    free(buf);
    return rc;
}
