/*
 * gpu_visible.h - CUDA_VISIBLE_DEVICES read as CUDA reads it, so the NVML
 * sampler (gpu_metrics.c) samples only the job's GPUs (issue 29).
 *
 * Ownership: the caller's arrays. Thread-safety: pure, any thread.
 * Internal to libtfboard.
 */
#ifndef TFB_COLLECTOR_GPU_VISIBLE_H
#define TFB_COLLECTOR_GPU_VISIBLE_H

/* A UUID as NVML writes it: "GPU-" or "MIG-" and 36 characters, NUL. */
#define TFB_VISIBLE_UUID_MAX 96

typedef struct tfb_visible_entry {
    int is_uuid;   /* 1: uuid holds "GPU-..." (maybe a prefix) or "MIG-..." */
    unsigned index; /* is_uuid 0: the device index */
    char uuid[TFB_VISIBLE_UUID_MAX];
} tfb_visible_entry;

/* Parses s (the variable's value) into at most max entries, in order (the
 * CUDA ordinal of entry i is i). Entries are separated by ','; blanks
 * around one are ignored. An entry is a decimal index or a UUID starting
 * "GPU-" or "MIG-"; as CUDA does, the list ends at the first entry that is
 * neither (or repeats an earlier one), the rest being ignored: "0,1" ->
 * 2, "2,x,3" -> 1, "" -> 0, "-1" -> 0. Returns the count. */
int tfb_visible_parse(const char *s, tfb_visible_entry *out, int max);

#endif
