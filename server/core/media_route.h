/*
 * media_route.h - what the media dashboards' routes (images, audio) share:
 * TensorBoard's tags answer (PR curves' too), the parameters and lookup of
 * a listing (one sample of a tag: every item of every step) and of one
 * item's bytes, the opaque per-item query a listing hands out, and the
 * item's caching.
 * Each dashboard keeps only what is its own: the fields of a listed item
 * and the check of the bytes before they are served (an image's content
 * type, a clip's WAV header).
 *
 * Messages name the item by the dashboard's nouns (tfb_media_nouns), so a
 * 404 says "run 'r' has no clip 3 of tag 'x'" on the audio dashboard.
 *
 * Thread-safety: any thread (the media index has its own lock).
 */
#ifndef TFB_SERVER_MEDIA_ROUTE_H
#define TFB_SERVER_MEDIA_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "core/http_api.h"
#include "store/media_index.h"
#include "store/store.h"

typedef struct tfb_media_nouns {
    tfb_media_kind kind;
    const char *tag_noun;  /* "image", "audio": "has no audio tag 'x'" */
    const char *item_noun; /* "image", "clip": "has no clip 3 of tag 'x'" */
    /* Accept TensorBoard 1's "tagname" for "tag" (individualImage). */
    int tagname_alias;
} tfb_media_nouns;

/* The /tags route: tfb_media_tags_json over every run, with each tag's
 * sample counts when counts is 1 (images, audio) or without (PR curves,
 * whose page asks for a tag's steps itself). */
int tfb_media_route_tags(const tfb_http_req *req, tfb_http_resp *resp,
                         tfb_media_kind kind, int counts);

/* A listing: the items of one sample of a tag of a run, in file order,
 * and the opaque query of each (tfb_media_list_query). */
typedef struct tfb_media_list {
    tfb_run *run;
    tfb_media_index *ix;
    const char *tag; /* the request's, valid during the request */
    int sample;
    tfb_media_entry *e; /* malloc'd, n of them */
    size_t n;
    char *erun, *etag, *q; /* percent-encoded names; the query buffer */
    size_t qcap;
} tfb_media_list;

/* Reads run, tag and sample, and the items. 1: *out is filled (end it
 * with tfb_media_list_end); 0: the error answer is written (400 bad
 * parameter, 404 no such run or tag, 500 out of memory) and *out holds
 * nothing to free. */
int tfb_media_list_begin(const tfb_http_req *req, tfb_http_resp *resp,
                         const tfb_media_nouns *nouns, tfb_media_list *out);
/* "run=..&tag=..&sample=..&index=i&step=..": opaque to clients. It names
 * the item's step, so an answer cached for that URL can never be another
 * item. Valid until the next call or tfb_media_list_end. */
const char *tfb_media_list_query(tfb_media_list *l, size_t i);
void tfb_media_list_end(tfb_media_list *l);

/* One item: run, tag, sample, index and, when given, the step it must
 * have. 1: *bytes (malloc'd, free()) and *len hold its bytes from the
 * event file and *e its entry; 0: the error answer is written (400, 404,
 * 410 when the file no longer holds them, 500). */
int tfb_media_item_read(const tfb_http_req *req, tfb_http_resp *resp,
                        const tfb_media_nouns *nouns, tfb_media_entry *e,
                        uint8_t **bytes, size_t *len);
/* The item answer's Cache-Control: a day when the URL names the step (the
 * answer can never change), else revalidated. */
void tfb_media_item_cache(const tfb_http_req *req, tfb_http_resp *resp);

#endif
