/*
 * gpu_metrics_internal.h - what the pipeline's helper thread asks of the
 * NVML sampler (gpu_metrics.c): the energy of a step, and the device name
 * the peak table is looked up with (issue 29). Internal to libtfboard.
 *
 * Thread-safety: any thread but the training thread's step calls (each
 * takes the samplers' lock and makes NVML calls); safe against a
 * concurrent tfb_gpu_metrics_stop.
 */
#ifndef TFB_COLLECTOR_GPU_METRICS_INTERNAL_H
#define TFB_COLLECTOR_GPU_METRICS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

/* Logs gpu/<dev>/energy_j at (step, wall) for each sampled device of w
 * whose energy is known: the counter's mean power between its last reads
 * x step_s, or (no counter) the power now x step_s. *total_j = their sum.
 * Returns how many devices were logged: 0 when no sampler runs on w (then
 * nothing is logged). */
int tfb_gpu_metrics_step_energy(tfb_writer *w, int64_t step, double wall,
                                double step_s, double *total_j);

/* The first sampled device's NVML name into buf: 1, or 0 ("" in buf) when
 * no sampler runs on w. */
int tfb_gpu_metrics_device_name(tfb_writer *w, char *buf, size_t cap);

#endif
