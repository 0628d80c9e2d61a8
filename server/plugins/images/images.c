/*
 * images.c - the images dashboard: TensorBoard's /data/plugin/images/
 * {tags, images, individualImage}, over the run's image index
 * (store/media_index.h). The bytes are read from the event file when an
 * image is asked for; the content type comes from the bytes, and bytes
 * that are no PNG, JPEG, GIF or WebP are refused (never served as what
 * they claim to be).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/media_index.h"
#include "core/json.h"
#include "core/media_route.h"
#include "core/plugin.h"

/* TensorBoard 1 named the tag "tagname" in individualImage queries. */
static const tfb_media_nouns nouns = {TFB_MEDIA_IMAGE, "image", "image", 1};

/* {run: {tag: {displayName, description, samples}}}, TensorBoard's shape;
 * runs without images are left out (as TensorBoard 2's data provider
 * does). tfboard adds "count" (images of the tag) and "dropped". */
static int route_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_media_route_tags(req, resp, TFB_MEDIA_IMAGE, 1);
}

/* [{wall_time, step, width, height, sample, query}] for one sample of a
 * tag; every image of every step (no reservoir). */
static int route_images(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_media_list l;
    if (!tfb_media_list_begin(req, resp, &nouns, &l))
        return 0;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < l.n; i++) {
        const tfb_media_entry *e = &l.e[i];
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "wall_time");
        tfb_json_double(&j, e->wall);
        tfb_json_key(&j, "step");
        tfb_json_i64(&j, e->step);
        tfb_json_key(&j, "width");
        tfb_json_u64(&j, e->width);
        tfb_json_key(&j, "height");
        tfb_json_u64(&j, e->height);
        tfb_json_key(&j, "sample");
        tfb_json_u64(&j, e->sample);
        tfb_json_key(&j, "bytes");
        tfb_json_u64(&j, e->len);
        tfb_json_key(&j, "query");
        tfb_json_str(&j, tfb_media_list_query(&l, i));
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    tfb_media_list_end(&l);
    return tfb_http_json(resp, &j);
}

/* The bytes of one image, with the content type its bytes say. */
static int route_individual(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_media_entry e;
    uint8_t *bytes;
    size_t len;
    if (!tfb_media_item_read(req, resp, &nouns, &e, &bytes, &len))
        return 0;
    char why[256];
    const char *type = tfb_media_check(bytes, len, why, sizeof why);
    if (!type) {
        /* 415 for what is no image at all (HTML, a script), 422 for an
         * image that cannot or must not be decoded. */
        unsigned st = tfb_media_sniff(bytes, len) ? 422 : 415;
        free(bytes);
        return tfb_http_error(resp, st, "%s", why);
    }
    tfb_http_body_take(resp, 200, type, (char *)bytes, len);
    tfb_media_item_cache(req, resp);
    return 0;
}

static int has_images(tfb_store *s, tfb_run *r)
{
    (void)s;
    return tfb_media_count(tfb_run_media(r), TFB_MEDIA_IMAGE) > 0;
}

static const tfb_plugin_route routes[] = {
    {"tags", route_tags},
    {"images", route_images},
    {"individualImage", route_individual},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_images_assets[];

const tfb_plugin tfb_plugin_images = {
    TFB_PLUGIN_ABI,
    .name = "images",
    .title = "Images",
    .module = "js/pages/images.js",
    .assets = tfb_images_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_images,
};
