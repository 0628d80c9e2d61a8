/*
 * gpu_hta_routes.h - the GPU dashboard's routes of HTA's counters over the
 * whole trace: launch statistics (analysis/trace_launch.h) and queue
 * length per stream (analysis/trace_queue.h). Formats in the plugin's
 * API.md. Thread-safety: any request thread.
 */
#ifndef TFB_SERVER_GPU_HTA_ROUTES_H
#define TFB_SERVER_GPU_HTA_ROUTES_H

#include "core/http_api.h"

/* GET /data/plugin/gpu/launches?run= */
int tfb_gpu_route_launches(const tfb_http_req *req, tfb_http_resp *resp);
/* GET /data/plugin/gpu/queue?run= */
int tfb_gpu_route_queue(const tfb_http_req *req, tfb_http_resp *resp);

#endif
