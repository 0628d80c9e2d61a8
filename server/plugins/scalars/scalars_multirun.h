/*
 * scalars_multirun.h - the batched scalars routes: one tag over many runs
 * (/data/plugin/scalars/multirun) and the runs nearest a point of a band
 * (/data/plugin/scalars/nearest). Contract in server/API.md.
 * Thread-safety: the handlers may run on many threads at once; they pin
 * store series only for the length of one call.
 */
#ifndef TFB_SCALARS_MULTIRUN_H
#define TFB_SCALARS_MULTIRUN_H

#include "core/http_api.h"

int tfb_route_scalars_multirun(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_scalars_nearest(const tfb_http_req *req, tfb_http_resp *resp);

#endif
