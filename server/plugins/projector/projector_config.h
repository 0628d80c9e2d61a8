/*
 * projector_config.h - projector_config.pbtxt, TensorBoard's
 * ProjectorConfig message in protobuf text format (what PyTorch's
 * add_embedding and TensorFlow's projector.visualize_embeddings write):
 * parsed into plain structs, written back as TensorBoard's /info JSON.
 *
 * The text format read is the part protobuf's text parser accepts for
 * this message: fields `name: value` or `name { ... }` / `name < ... >`,
 * strings in single or double quotes with C escapes (adjacent strings
 * joined), numbers, `#` comments. Unknown fields are skipped (a newer
 * writer's field loses nothing else).
 *
 * Ownership: a tfb_projector_config owns all its strings; free with
 * tfb_projector_config_free. Thread-safety: plain data, no shared state.
 */
#ifndef TFB_PLUGIN_PROJECTOR_CONFIG_H
#define TFB_PLUGIN_PROJECTOR_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"

/* A config file past this is refused: PyTorch appends ~400 bytes an
 * embedding, so 1 MiB is thousands of embeddings. */
#define TFB_PROJECTOR_CONFIG_MAX_BYTES (1024 * 1024)
/* Embeddings kept from one config (the rest are dropped with a note):
 * the projector's menu lists them all, and a run logging one per step
 * for 10,000 steps is already past what anyone picks from. */
#define TFB_PROJECTOR_MAX_EMBEDDINGS 10000
/* tensor_shape and single_image_dim entries kept: a tensor is 2-D and a
 * sprite image has 2 sides; 8 leaves room for a writer's extra axes. */
#define TFB_PROJECTOR_MAX_SHAPE 8
/* Nesting of unknown message fields skipped: the ProjectorConfig is 3
 * deep; a deeper text is refused rather than recursed into. */
#define TFB_PROJECTOR_MAX_DEPTH 16

typedef struct tfb_projector_embedding {
    char *tensor_name;    /* "" when absent */
    char *metadata_path;
    char *bookmarks_path;
    char *tensor_path;
    uint32_t tensor_shape[TFB_PROJECTOR_MAX_SHAPE];
    size_t n_tensor_shape;
    int has_sprite;
    char *sprite_image_path;
    uint32_t sprite_dim[TFB_PROJECTOR_MAX_SHAPE];
    size_t n_sprite_dim;
} tfb_projector_embedding;

typedef struct tfb_projector_config {
    char *model_checkpoint_path; /* "" when absent */
    char *model_checkpoint_dir;
    tfb_projector_embedding *emb;
    size_t n_emb;
    size_t dropped; /* embeddings past TFB_PROJECTOR_MAX_EMBEDDINGS */
} tfb_projector_config;

/* Parses len bytes of text into *out (zeroed first). Returns 0, or
 * TFB_ECORRUPT with a one-line reason ("line 3: expected ...") in err,
 * or TFB_ENOMEM; *out is then empty. */
int tfb_projector_config_parse(const char *text, size_t len,
                               tfb_projector_config *out, char *err,
                               size_t err_len);
void tfb_projector_config_free(tfb_projector_config *c);

/* TensorBoard's name of a tensor: a trailing ":0" is dropped. The
 * embedding whose name matches name, or NULL. */
const tfb_projector_embedding *
tfb_projector_config_find(const tfb_projector_config *c, const char *name);

/* The config as TensorBoard's /info answers it (protobuf's JSON mapping:
 * camelCase keys, fields in field-number order, empty fields left out). */
void tfb_projector_config_json(tfb_json *j, const tfb_projector_config *c);

#endif
