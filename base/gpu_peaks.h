/*
 * gpu_peaks.h - dense tensor-core peaks of GPUs: one table, keyed by the
 * device name NVML, CUPTI and Kineto report, each entry citing its vendor
 * datasheet (gpu_peaks.c). Shared by the collector (perf/mfu, the perf/work
 * record) and the server (MFU, the link a collective is compared with).
 *
 * Peaks are dense: where a datasheet gives a figure "with sparsity" (2:4
 * structured sparsity doubles it), the table holds half of it, and the
 * entry's comment says so. A device the table does not know has no peak:
 * tfb_gpu_peak_find returns NULL and callers say "peak unknown", never a
 * guess from a similar name.
 *
 * Ownership: the table is static and constant. Thread-safety: any thread.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_GPU_PEAKS_H
#define TFB_BASE_GPU_PEAKS_H

#include <stddef.h>

typedef enum {
    TFB_PEAK_BF16 = 0,
    TFB_PEAK_FP16,
    TFB_PEAK_TF32,
    TFB_PEAK_FP8,
    TFB_PEAK_DTYPE_COUNT
} tfb_peak_dtype;

typedef struct tfb_gpu_peak {
    const char *name;                    /* "H100 SXM" */
    double tflops[TFB_PEAK_DTYPE_COUNT]; /* dense TFLOP/s; 0 = not supported */
    double link_gbps; /* NVLink (or PCIe) GB/s per GPU, one direction x links
                         as nccl-tests' busbw compares; 0 unknown */
    const char *link; /* "NVLink 4", "PCIe 4.0 x16" */
} tfb_gpu_peak;

/* The entry for a device name as NVML/CUPTI/Kineto report it ("NVIDIA H100
 * 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"...); NULL =
 * peak unknown (never a guess). Matching is by whole words of the name
 * (split at anything not a letter or digit, without case), most specific
 * rule first: "H100 PCIe" before "H100", "L40S" is not "L40", "A10G" is not
 * "A10". NULL or "" gives NULL. */
const tfb_gpu_peak *tfb_gpu_peak_find(const char *device_name);

/* The whole table (*n entries), e.g. for a listing. */
const tfb_gpu_peak *tfb_gpu_peak_table(size_t *n);

/* "bf16"/"bfloat16"/"torch.bfloat16", "fp16"/"float16"/"half",
 * "tf32"/"tfloat32", "fp8"/"float8_e4m3fn"/"float8_e5m2"/... (without case,
 * an optional "torch." prefix): 0 with *out set, or TFB_EINVAL when s is not
 * a known dtype (or NULL). */
int tfb_peak_dtype_parse(const char *s, tfb_peak_dtype *out);

/* "bf16", "fp16", "tf32", "fp8"; "unknown" out of range. */
const char *tfb_peak_dtype_name(tfb_peak_dtype d);

#endif
