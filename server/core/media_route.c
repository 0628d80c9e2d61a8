/* media_route.c - the media dashboards' shared route steps (see
 * media_route.h). */
#include "core/media_route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "core/json.h"
#include "core/media_tags_json.h"

int tfb_media_route_tags(const tfb_http_req *req, tfb_http_resp *resp,
                         tfb_media_kind kind, int counts)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_media_tags_json(&j, runs, nr, kind, counts);
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
                     const tfb_media_nouns *nouns, const char **tag)
{
    if (nouns->tagname_alias && !tfb_http_query(req, "tag") &&
        tfb_http_query(req, "tagname"))
        return tfb_http_param_str(req, resp, "tagname", 1, NULL, tag);
    return tfb_http_param_str(req, resp, "tag", 1, NULL, tag);
}

/* run, tag and sample, in the order their errors are reported. */
static int params(const tfb_http_req *req, tfb_http_resp *resp,
                  const tfb_media_nouns *nouns, const char **tag,
                  int64_t *sample)
{
    if (!tfb_http_query(req, "run")) {
        tfb_http_error(resp, 400, "missing parameter 'run'");
        return -1;
    }
    if (param_tag(req, resp, nouns, tag) < 0 ||
        tfb_http_param_i64(req, resp, "sample", 0, 0, 0,
                           TFB_MEDIA_MAX_SAMPLES, sample) < 0)
        return -1;
    return 0;
}

int tfb_media_list_begin(const tfb_http_req *req, tfb_http_resp *resp,
                         const tfb_media_nouns *nouns, tfb_media_list *out)
{
    memset(out, 0, sizeof *out);
    int64_t sample;
    if (params(req, resp, nouns, &out->tag, &sample) < 0 ||
        tfb_http_param_run(req, resp, &out->run) < 0)
        return 0;
    out->sample = (int)sample;
    out->ix = tfb_run_media(out->run);
    int rc = tfb_media_entries(out->ix, nouns->kind, out->tag, out->sample,
                               &out->e, &out->n);
    if (rc == TFB_ENOENT) {
        tfb_http_error(resp, 404, "run '%s' has no %s tag '%s'",
                       tfb_run_name(out->run), nouns->tag_noun, out->tag);
        return 0;
    }
    if (rc < 0) {
        tfb_http_error(resp, 500, "out of memory");
        return 0;
    }
    out->erun = encoded(tfb_run_name(out->run));
    out->etag = encoded(out->tag);
    out->qcap = (out->erun ? strlen(out->erun) : 0) +
                (out->etag ? strlen(out->etag) : 0) + 96;
    out->q = malloc(out->qcap);
    if (!out->erun || !out->etag || !out->q) {
        tfb_media_list_end(out);
        tfb_http_error(resp, 500, "out of memory");
        return 0;
    }
    return 1;
}

const char *tfb_media_list_query(tfb_media_list *l, size_t i)
{
    snprintf(l->q, l->qcap, "run=%s&tag=%s&sample=%d&index=%zu&step=%lld",
             l->erun, l->etag, l->sample, i, (long long)l->e[i].step);
    return l->q;
}

void tfb_media_list_end(tfb_media_list *l)
{
    free(l->e);
    free(l->erun);
    free(l->etag);
    free(l->q);
    memset(l, 0, sizeof *l);
}

int tfb_media_item_read(const tfb_http_req *req, tfb_http_resp *resp,
                        const tfb_media_nouns *nouns, tfb_media_entry *e,
                        uint8_t **bytes, size_t *len)
{
    tfb_run *run;
    const char *tag;
    int64_t sample, index, step;
    if (params(req, resp, nouns, &tag, &sample) < 0 ||
        tfb_http_param_i64(req, resp, "index", 1, 0, 0, INT64_MAX,
                           &index) < 0 ||
        tfb_http_param_i64(req, resp, "step", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &step) < 0 ||
        tfb_http_param_run(req, resp, &run) < 0)
        return 0;
    tfb_media_index *ix = tfb_run_media(run);
    if (tfb_media_find(ix, nouns->kind, tag, (int)sample, (uint64_t)index,
                       e) < 0 ||
        (tfb_http_query(req, "step") && e->step != step)) {
        tfb_http_error(resp, 404, "run '%s' has no %s %lld of tag '%s'",
                       tfb_run_name(run), nouns->item_noun, (long long)index,
                       tag);
        return 0;
    }
    int rc = tfb_media_read(ix, e, bytes, len);
    if (rc == TFB_ENOMEM) {
        tfb_http_error(resp, 500, "out of memory");
        return 0;
    }
    if (rc < 0) {
        tfb_http_error(resp, 410, "the %s is no longer in its event file: %s",
                       nouns->item_noun, tfb_strerror(rc));
        return 0;
    }
    return 1;
}

void tfb_media_item_cache(const tfb_http_req *req, tfb_http_resp *resp)
{
    if (tfb_http_query(req, "step"))
        tfb_http_set_cache(resp, "private, max-age=86400");
    else
        tfb_http_set_cache(resp, "private, no-cache");
}
