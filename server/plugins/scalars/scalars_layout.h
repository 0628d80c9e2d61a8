/*
 * scalars_layout.h - the shared layout file of the scalars page
 * (<logdir>/tfboard_layout.json), GET and PUT; see scalars_layout.c.
 * Thread-safety: the handler may run on many threads; two PUTs at once
 * each write a whole file (the last rename wins).
 */
#ifndef TFB_SCALARS_LAYOUT_H
#define TFB_SCALARS_LAYOUT_H

#include <stddef.h>

#include "core/http_api.h"

/* 0 when text[0..len) is exactly one JSON object (RFC 8259, at most 64
 * levels deep, strings valid UTF-8), else TFB_EINVAL. */
int tfb_json_validate_object(const char *text, size_t len);

/* GET/HEAD: {"layout": object | null}; PUT: saves the body. */
int tfb_route_scalars_layout(const tfb_http_req *req, tfb_http_resp *resp);

#endif
