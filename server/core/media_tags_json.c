/*
 * media_tags_json.c - the media dashboards' tags answer (media_tags_json.h).
 */
#include "core/media_tags_json.h"

void tfb_media_tags_json(tfb_json *j, tfb_run *const *runs, size_t nr,
                         tfb_media_kind kind, int counts)
{
    tfb_json_object_begin(j);
    for (size_t i = 0; i < nr; i++) {
        tfb_media_tag_info *t;
        size_t nt;
        if (tfb_media_tags(tfb_run_media(runs[i]), kind, &t, &nt) < 0)
            continue;
        size_t shown = 0;
        for (size_t k = 0; k < nt; k++) {
            if (!t[k].count)
                continue;
            if (!shown++) {
                tfb_json_key(j, tfb_run_name(runs[i]));
                tfb_json_object_begin(j);
            }
            tfb_json_key(j, t[k].tag);
            tfb_json_object_begin(j);
            tfb_json_key(j, "displayName");
            tfb_json_str(j, t[k].display[0] ? t[k].display : t[k].tag);
            tfb_json_key(j, "description");
            tfb_json_str(j, t[k].desc);
            if (counts) {
                tfb_json_key(j, "samples");
                tfb_json_u64(j, t[k].samples);
                tfb_json_key(j, "count");
                tfb_json_u64(j, t[k].count);
                tfb_json_key(j, "dropped");
                tfb_json_u64(j, t[k].dropped);
            }
            tfb_json_object_end(j);
        }
        if (shown)
            tfb_json_object_end(j);
        tfb_media_tag_infos_free(t, nt);
    }
    tfb_json_object_end(j);
}
