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
#include "core/media_tags_json.h"
#include "core/plugin.h"

/* {run: {tag: {displayName, description, samples}}}, TensorBoard's shape;
 * runs without images are left out (as TensorBoard 2's data provider
 * does). tfboard adds "count" (images of the tag) and "dropped". */
static int route_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_media_tags_json(&j, runs, nr, TFB_MEDIA_IMAGE, 1);
    free(runs);
    return tfb_http_json(resp, &j);
}

/* s percent-encoded (RFC 3986 unreserved kept), malloc'd. */
static char *encoded(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(strlen(s) * 3 + 1), *o = out;
    if (!out)
        return NULL;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
            c == '~') {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = 0;
    return out;
}

static int param_tag(const tfb_http_req *req, tfb_http_resp *resp,
                     const char **tag)
{
    /* TensorBoard 1 named it "tagname" in individualImage queries. */
    if (!tfb_http_query(req, "tag") && tfb_http_query(req, "tagname"))
        return tfb_http_param_str(req, resp, "tagname", 1, NULL, tag);
    return tfb_http_param_str(req, resp, "tag", 1, NULL, tag);
}

/* [{wall_time, step, width, height, sample, query}] for one sample of a
 * tag; every image of every step (no reservoir). */
static int route_images(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *tag;
    tfb_run *run;
    int64_t sample;
    if (!tfb_http_query(req, "run"))
        return tfb_http_error(resp, 400, "missing parameter 'run'");
    if (param_tag(req, resp, &tag) < 0 ||
        tfb_http_param_i64(req, resp, "sample", 0, 0, 0,
                           TFB_MEDIA_MAX_SAMPLES, &sample) < 0 ||
        tfb_http_param_run(req, resp, &run) < 0)
        return 0;
    tfb_media_entry *e;
    size_t n;
    int rc = tfb_media_entries(tfb_run_media(run), TFB_MEDIA_IMAGE, tag,
                               (int)sample, &e, &n);
    if (rc == TFB_ENOENT)
        return tfb_http_error(resp, 404, "run '%s' has no image tag '%s'",
                              tfb_run_name(run), tag);
    if (rc < 0)
        return tfb_http_error(resp, 500, "out of memory");
    char *erun = encoded(tfb_run_name(run)), *etag = encoded(tag);
    size_t qcap = (erun ? strlen(erun) : 0) + (etag ? strlen(etag) : 0) + 96;
    char *q = malloc(qcap);
    if (!erun || !etag || !q) {
        free(erun);
        free(etag);
        free(q);
        free(e);
        return tfb_http_error(resp, 500, "out of memory");
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < n; i++) {
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "wall_time");
        tfb_json_double(&j, e[i].wall);
        tfb_json_key(&j, "step");
        tfb_json_i64(&j, e[i].step);
        tfb_json_key(&j, "width");
        tfb_json_u64(&j, e[i].width);
        tfb_json_key(&j, "height");
        tfb_json_u64(&j, e[i].height);
        tfb_json_key(&j, "sample");
        tfb_json_u64(&j, e[i].sample);
        tfb_json_key(&j, "bytes");
        tfb_json_u64(&j, e[i].len);
        /* Opaque to clients; it names the step, so a cached answer for
         * this URL can never be another image. */
        tfb_json_key(&j, "query");
        snprintf(q, qcap, "run=%s&tag=%s&sample=%d&index=%zu&step=%lld",
                 erun, etag, (int)sample, i, (long long)e[i].step);
        tfb_json_str(&j, q);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    free(erun);
    free(etag);
    free(q);
    free(e);
    return tfb_http_json(resp, &j);
}

/* The bytes of one image, with the content type its bytes say. */
static int route_individual(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *tag;
    tfb_run *run;
    int64_t sample, index, step;
    if (!tfb_http_query(req, "run"))
        return tfb_http_error(resp, 400, "missing parameter 'run'");
    if (param_tag(req, resp, &tag) < 0 ||
        tfb_http_param_i64(req, resp, "sample", 0, 0, 0,
                           TFB_MEDIA_MAX_SAMPLES, &sample) < 0 ||
        tfb_http_param_i64(req, resp, "index", 1, 0, 0, INT64_MAX,
                           &index) < 0 ||
        tfb_http_param_i64(req, resp, "step", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &step) < 0 ||
        tfb_http_param_run(req, resp, &run) < 0)
        return 0;
    tfb_media_index *ix = tfb_run_media(run);
    tfb_media_entry e;
    if (tfb_media_find(ix, TFB_MEDIA_IMAGE, tag, (int)sample,
                       (uint64_t)index, &e) < 0 ||
        (tfb_http_query(req, "step") && e.step != step))
        return tfb_http_error(resp, 404,
                              "run '%s' has no image %lld of tag '%s'",
                              tfb_run_name(run), (long long)index, tag);
    uint8_t *bytes;
    size_t len;
    int rc = tfb_media_read(ix, &e, &bytes, &len);
    if (rc == TFB_ENOMEM)
        return tfb_http_error(resp, 500, "out of memory");
    if (rc < 0)
        return tfb_http_error(resp, 410,
                              "the image is no longer in its event file: %s",
                              tfb_strerror(rc));
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
    if (tfb_http_query(req, "step"))
        tfb_http_set_cache(resp, "private, max-age=86400");
    else
        tfb_http_set_cache(resp, "private, no-cache");
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
