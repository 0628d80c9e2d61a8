/*
 * media_index.h - where each image of a run lies in its event files.
 *
 * The store keeps no image bytes: for every image value read (TF1
 * Summary.Image from PyTorch, tensorboardX and Keras; TF2 image tensors,
 * plugin "images", several images per step) the index keeps the file, the
 * offset of the TFRecord that holds it, the image's place inside that
 * record's Summary, its length, step, wall time, sample number and size:
 * 48 bytes per image, in fixed blocks (no slack from doubling). Every
 * image of every step is kept (TensorBoard samples 10 per series); a
 * logdir of 10 GB of images costs tens of MB of index.
 *
 * The bytes are read from the file when asked (tfb_media_read): the
 * whole record is read with pread, its CRC checked and its step compared,
 * so a file changed since it was indexed gives an error, never wrong
 * bytes.
 *
 * Ownership: each run owns one index (store.c creates and frees it;
 * tfb_run_media returns it). Thread-safety: one writer (the loader thread
 * of the run) and any number of readers; every function takes the
 * index's own lock for a short copy and never does I/O under it.
 */
#ifndef TFB_SERVER_MEDIA_INDEX_H
#define TFB_SERVER_MEDIA_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_media_index tfb_media_index;

/* What the index keeps, each kind with its own tags: the encoded images
 * (TF1 Summary.Image; plugin "images"), the TensorProto of each PR
 * curve value (plugin "pr_curves", decoded by its plugin when asked), and
 * the encoded audio clips (TF1 Summary.Audio, as PyTorch writes it; TF2
 * string tensors [k, 2] of clip and label, plugin "audio"). An audio
 * entry's `width` is the length of its label (0: none, or over 65535),
 * which follows the clip in its tensor, so a label is read with the clip's
 * record, never kept. */
typedef enum {
    TFB_MEDIA_IMAGE = 0,
    TFB_MEDIA_PR_CURVE,
    TFB_MEDIA_AUDIO,
    TFB_MEDIA_KIND_COUNT
} tfb_media_kind;

/* Images per tag, over all steps: past this, later images are counted
 * (tfb_media_tag_info.dropped) but not indexed. 2^26 images * 48 B = 3 GB. */
#define TFB_MEDIA_MAX_PER_TAG (1u << 26)
/* Images of one TF2 tensor (one step) that get a sample number. */
#define TFB_MEDIA_MAX_SAMPLES 65535u

/* One indexed image (48 bytes). */
typedef struct tfb_media_entry {
    int64_t step;
    double wall;
    uint64_t record_off; /* file offset of the TFRecord that holds it */
    uint32_t delta;      /* where the bytes start in the record's Summary */
    uint32_t len;        /* bytes of the encoded image */
    uint32_t file;       /* the run's file number (tfb_media_read) */
    uint16_t sample;     /* index in its step's tensor (TF1: 0) */
    uint16_t width, height; /* as the record says (0: unknown, or > 65535) */
} tfb_media_entry;

typedef struct tfb_media_tag_info {
    char *tag, *display, *desc; /* malloc'd */
    uint32_t samples;  /* the most images at one step (TensorBoard's) */
    uint64_t count;    /* images indexed */
    uint64_t dropped;  /* images past TFB_MEDIA_MAX_PER_TAG */
    tfb_media_entry last; /* the last image indexed (count > 0) */
} tfb_media_tag_info;

int tfb_media_index_create(tfb_media_index **out);
/* The one shared index that holds nothing, for every run without images
 * (store.h, tfb_run_media); never add to it, never destroy it. */
tfb_media_index *tfb_media_index_empty(void);
void tfb_media_index_destroy(tfb_media_index *ix); /* NULL-safe */
/* Forgets every image (the run is re-read from its start); tags stay. */
void tfb_media_index_reset(tfb_media_index *ix);

/* The loader's one call per decoded value: indexes v when it is an image
 * (Summary.Image, or a string tensor whose plugin is "images"), a PR
 * curve (plugin "pr_curves") or audio (Summary.Audio, plugin "audio"); plugin is the tag's plugin, which TF2 puts
 * on the first value only. path is the
 * event file ev came from (copied once per file). Returns the number of
 * images indexed (0 when v is no image), or TFB_ENOMEM. */
int tfb_media_index_add(tfb_media_index *ix, const char *path,
                        const tfb_event *ev, const tfb_value *v,
                        const char *plugin, size_t plugin_len);

/* 1 when v is a value the index takes (for the loader's switch). */
int tfb_media_is_image(const tfb_value *v, const char *plugin,
                       size_t plugin_len);

/* The tags in first-seen order; free with tfb_media_tag_infos_free. */
int tfb_media_tags(tfb_media_index *ix, tfb_media_kind kind,
                   tfb_media_tag_info **out, size_t *n);
void tfb_media_tag_infos_free(tfb_media_tag_info *v, size_t n);
/* Values of that kind indexed in all (every tag). */
uint64_t tfb_media_count(tfb_media_index *ix, tfb_media_kind kind);

/* The images of tag with that sample number (sample < 0: every sample),
 * in file order; *out is malloc'd (free()). TFB_ENOENT: no such tag. */
int tfb_media_entries(tfb_media_index *ix, tfb_media_kind kind,
                      const char *tag, int sample, tfb_media_entry **out,
                      size_t *n);
/* The index-th image of tag with that sample number. */
int tfb_media_find(tfb_media_index *ix, tfb_media_kind kind, const char *tag,
                   int sample, uint64_t index, tfb_media_entry *out);

/* Reads e's bytes from its file: *out is malloc'd (free()), *len bytes.
 * TFB_EIO / TFB_ECORRUPT when the file no longer holds them. */
int tfb_media_read(tfb_media_index *ix, const tfb_media_entry *e,
                   uint8_t **out, size_t *len);

/* The content type of encoded image bytes: "image/png", "image/jpeg",
 * "image/gif", "image/webp", or NULL for anything else (never served). */
const char *tfb_media_sniff(const uint8_t *p, size_t n);

/* The most pixels an image may claim and still be served: a browser
 * asked to decode 100,000 x 100,000 pixels would need 40 GB. */
#define TFB_MEDIA_MAX_PIXELS ((uint64_t)1 << 28)

/* The content type to serve bytes with, or NULL with the reason in why
 * (cap bytes): not an image of the four types, a PNG or GIF whose header
 * claims more than TFB_MEDIA_MAX_PIXELS or no pixels, a PNG cut short (no
 * IEND chunk at its end). Pure; thread-safe. */
const char *tfb_media_check(const uint8_t *p, size_t n, char *why,
                            size_t cap);

#endif
