/*
 * gpu_routes.h - HTTP handlers of the GPU plugin (times in ns):
 *   GET /data/plugin/gpu/summary?run=R
 *   GET /data/plugin/gpu/kernels?run=R&limit=N          (default 100, 0 = all)
 *   GET /data/plugin/gpu/utilization?run=R&device=D&buckets=N
 *                                   (default: first device, 200 buckets)
 *   GET /data/plugin/gpu/timeline?run=R&start_ns=&end_ns=&max=N
 *                                   (default: whole trace, 2000 spans)
 *   GET /data/plugin/gpu/trace.json?run=R               Chrome trace JSON
 * The answers are gpu_analysis.h's. A missing run is 400, an unknown run
 * 404. A run without GPU trace answers summary {"devices": []}, kernels
 * {"kernels": []}, timeline with no spans; utilization and trace.json are
 * 404 there (nothing to draw or open).
 *
 * Ownership: area "gpu". Thread-safety: handlers may run on many threads
 * at once.
 */
#ifndef TFB_SERVER_GPU_ROUTES_H
#define TFB_SERVER_GPU_ROUTES_H

#include "http_api.h"

int tfb_route_gpu_summary(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_gpu_kernels(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_gpu_utilization(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_gpu_timeline(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_gpu_trace_json(const tfb_http_req *req, tfb_http_resp *resp);

#endif
