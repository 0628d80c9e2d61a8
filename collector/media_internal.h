/*
 * media_internal.h - what collector/media.c tells about its image buffer
 * pool (see media.c, "Buffer pool"), for tests and benchmarks. Not
 * installed.
 */
#ifndef TFB_MEDIA_INTERNAL_H
#define TFB_MEDIA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_media_pool_info {
    uint64_t fresh;      /* job buffers allocated since the first image */
    uint64_t reused;     /* tfb_image calls served from the pool */
    size_t pooled;       /* buffers in the pool now */
    size_t pool_bytes;   /* their capacity in bytes */
    size_t queued_bytes; /* pixel bytes queued or being encoded */
} tfb_media_pool_info;

/* Fills *out with w's pool counters (all 0 before w's first image).
 * TFB_EINVAL for NULL. Thread-safe on one writer (takes the media lock). */
int tfb_media_pool_stats(tfb_writer *w, tfb_media_pool_info *out);

/* Encodes height x width pixels of channels (1, 3 or 4) 8-bit samples,
 * row-major HWC, as a PNG appended to m (libpng, level 3): the images'
 * encoder, also used for the projector's sprite (embedding.c). 0, or
 * TFB_ENOMEM. Thread-safe (no shared state). */
struct tfb_buf;
int tfb_png_encode(const uint8_t *px, int height, int width, int channels,
                   struct tfb_buf *m);

#endif
