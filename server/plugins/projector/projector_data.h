/*
 * projector_data.h - the files an embedding names, read as TensorBoard's
 * projector reads them: the tensor (tensors.tsv: one row a line, values
 * separated by tabs; or raw float32 with the config's tensor_shape), the
 * metadata TSV (one row a point, a header line when it has a tab), the
 * sprite image (PNG or JPEG, with its single-image size), and the checks
 * that say what does not fit (notes, never a lost embedding).
 *
 * Every file is read only inside the logdir (a config naming /etc/passwd
 * or ../.. gets an error), only when it is a regular file (a FIFO would
 * block a request thread), and only up to the bounds below.
 *
 * Ownership: results belong to the caller (free with the _free
 * functions). Thread-safety: no shared state.
 */
#ifndef TFB_PLUGIN_PROJECTOR_DATA_H
#define TFB_PLUGIN_PROJECTOR_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/projector/projector_config.h"

/* The largest tensor file read: 2 GiB of TSV is about 100 million
 * values written by PyTorch (%.17g-ish, ~20 bytes each). */
#define TFB_PROJECTOR_TENSOR_FILE_MAX ((uint64_t)2 << 30)
/* The most values (rows x columns) kept as float32: 256 Mi values are
 * 1 GiB of memory and of /tensor answer, past what a browser holds (the
 * page's 100,000 x 128 is 12.8 Mi). */
#define TFB_PROJECTOR_MAX_VALUES ((uint64_t)256 << 20)
/* The most columns of one row: TensorBoard's projector needs a
 * dimension it can reduce; 100,000 covers word vectors and image
 * features, and bounds a hostile single line's width. */
#define TFB_PROJECTOR_MAX_DIM 100000
/* The largest metadata file served: 256 MiB is 100,000 rows of 2 KiB of
 * labels; /metadata sends it whole. */
#define TFB_PROJECTOR_METADATA_FILE_MAX ((uint64_t)256 << 20)
/* The largest sprite file served, and its sides: TensorBoard's projector
 * documents sprites up to 8192 x 8192 pixels (a WebGL texture limit). */
#define TFB_PROJECTOR_SPRITE_FILE_MAX ((uint64_t)64 << 20)
#define TFB_PROJECTOR_SPRITE_MAX_SIDE 8192

/* A file's bytes, read whole. */
typedef struct tfb_projector_file {
    char *data;   /* NUL-terminated (one byte past len) */
    size_t len;
    uint64_t size;
    int64_t mtime_ns;
    uint64_t ino, dev;
} tfb_projector_file;

/* The absolute path of path (relative to the config's directory cfg_dir
 * unless absolute), or NULL with a reason in err: the file must exist
 * and lie inside logdir (symbolic links resolved). malloc'd. */
char *tfb_projector_resolve(const char *logdir, const char *cfg_dir,
                            const char *path, char *err, size_t err_len);

/* Reads the regular file at abs (from tfb_projector_resolve) whole, at
 * most max bytes. 0, or TFB_ENOENT / TFB_EINVAL (not a regular file) /
 * TFB_ETOOBIG / TFB_EIO / TFB_ENOMEM with a reason in err. */
int tfb_projector_read(const char *abs, uint64_t max, tfb_projector_file *out,
                       char *err, size_t err_len);
/* Its identity only (size, mtime, inode), for a cache. */
int tfb_projector_stat(const char *abs, tfb_projector_file *out);
void tfb_projector_file_free(tfb_projector_file *f);

/* A tensor as float32, row-major. */
typedef struct tfb_projector_tensor {
    float *data;
    uint32_t rows, cols;
    uint64_t nonfinite; /* NaN or infinite values (kept as they are) */
    int binary;         /* 1: read as raw float32 (tensor_shape) */
} tfb_projector_tensor;

/* Parses a tensor file's bytes: TSV as TensorBoard reads it (lines split
 * on \n, empty lines skipped, values split on \t, each a Python float
 * rounded to float32), or, when the bytes are not UTF-8 text, raw
 * float32 of the shape given (shape NULL or n_shape != 2: refused).
 * 0, or TFB_ECORRUPT (a value that is not a number, rows of different
 * lengths, a raw size that is not the shape's), TFB_ETOOBIG (past
 * TFB_PROJECTOR_MAX_VALUES or _MAX_DIM), TFB_ENOMEM; reason in err. */
int tfb_projector_parse_tensor(const char *data, size_t len,
                               const uint32_t *shape, size_t n_shape,
                               tfb_projector_tensor *out, char *err,
                               size_t err_len);
void tfb_projector_tensor_free(tfb_projector_tensor *t);

/* Metadata lines as TensorBoard counts them: the first line is a header
 * when it has a tab. rows: the data lines (non-empty last line counted),
 * columns: the header's. */
typedef struct tfb_projector_meta_shape {
    uint64_t rows;
    uint32_t columns;
    int header;
} tfb_projector_meta_shape;
void tfb_projector_meta_count(const char *data, size_t len,
                              tfb_projector_meta_shape *out);
/* The length of the prefix TensorBoard's /metadata sends for num_rows
 * (0: all): num_rows lines, plus the header line when there is one. */
size_t tfb_projector_meta_prefix(const char *data, size_t len,
                                 uint64_t num_rows);

/* An image's kind and size from its first bytes: "image/png" or
 * "image/jpeg", or NULL when neither (or the header is cut). */
const char *tfb_projector_image_size(const char *data, size_t len,
                                     uint32_t *w, uint32_t *h);

#endif
