/*
 * projector_cache.h - parsed tensors kept between requests (TensorBoard
 * keeps them too): parsing a 100,000 x 128 tensors.tsv takes seconds,
 * and /info, /tensor and /pca each need it. An entry is keyed by run,
 * name and the file's identity (size, mtime, inode), so a rewritten file
 * is read again; its PCA is computed once, on first request.
 *
 * Thread-safety: all functions may be called from any thread; an entry
 * stays valid until released, even when evicted meanwhile. Ownership: the
 * cache owns entries; callers hold references (get / release).
 */
#ifndef TFB_PLUGIN_PROJECTOR_CACHE_H
#define TFB_PLUGIN_PROJECTOR_CACHE_H

#include <stddef.h>

#include "plugins/projector/projector_data.h"
#include "plugins/projector/projector_pca.h"

/* Tensors kept at most, and their bytes: two of the largest tensors
 * allowed (TFB_PROJECTOR_MAX_VALUES), or 20 of the page's 100,000 x 128.
 * Past either, the least recently used unreferenced entry goes. */
#define TFB_PROJECTOR_CACHE_ENTRIES 16
#define TFB_PROJECTOR_CACHE_BYTES ((size_t)1 << 30)

typedef struct tfb_projector_entry tfb_projector_entry;

/* Reads and parses the tensor for a cache miss; 0 or a negative TFB_E*
 * code with a reason in err. */
typedef int (*tfb_projector_load_fn)(void *ctx, tfb_projector_tensor *out,
                                     char *err, size_t err_len);

/* The entry for key and the file's identity, loading it on a miss.
 * 0 with *out referenced, or load's error. */
int tfb_projector_cache_get(const char *key, const tfb_projector_file *id,
                            tfb_projector_load_fn load, void *ctx,
                            tfb_projector_entry **out, char *err,
                            size_t err_len);
const tfb_projector_tensor *tfb_projector_entry_tensor(
    const tfb_projector_entry *e);
/* Its PCA with TFB_PROJECTOR_PCA_COMPONENTS components, computed on the
 * first call (others wait for it). 0, or tfb_projector_pca_run's error. */
int tfb_projector_entry_pca(tfb_projector_entry *e,
                            const tfb_projector_pca **out);
void tfb_projector_entry_release(tfb_projector_entry *e);

#endif
