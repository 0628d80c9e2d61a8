/*
 * projector.c - the embedding projector's routes, as TensorBoard 2.21's
 * projector plugin answers them (/data/plugin/projector/{runs, info,
 * tensor, metadata, sprite_image, bookmarks}), plus PCA computed here
 * (pca, pca_projection), and the dashboard's descriptor.
 *
 * A run is a projector run when its directory (or TensorFlow's
 * <run>/plugins/projector/) holds a projector_config.pbtxt naming at
 * least one tensor file; the logdir itself is run "." when no run has
 * event files, as in TensorBoard. Paths in the config are relative to
 * the config's directory. Tensors read from checkpoints are not
 * supported (API.md says why).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/str.h"
#include "core/plugin.h"
#include "plugins/projector/projector_cache.h"
#include "plugins/projector/projector_config.h"
#include "plugins/projector/projector_data.h"
#include "tfboard.h"

#define PROJECTOR_CONFIG_NAME "projector_config.pbtxt"
/* TensorFlow's projector.visualize_embeddings writes the config under
 * the run's plugin assets; TensorBoard prefers it to the run's own. */
#define PROJECTOR_ASSETS_DIR "plugins/projector"
/* Notes kept per embedding in /info (each a line): a handful of kinds
 * exist, so this only bounds a writer that repeats one. */
#define PROJECTOR_MAX_NOTES 8
/* One note's bytes: a reason (512) with its prefix. */
#define PROJECTOR_NOTE_MAX 640

/* A run's config, loaded for one request. */
typedef struct loaded {
    char *dir;      /* the config's directory */
    char *path;     /* the config file */
    tfb_projector_config cfg;
} loaded;

static void loaded_free(loaded *l)
{
    free(l->dir);
    free(l->path);
    tfb_projector_config_free(&l->cfg);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The config file of the run directory dir, or NULL. */
static char *config_path(const char *dir, char **cfg_dir)
{
    char *assets = tfb_strfmt("%s/%s", dir, PROJECTOR_ASSETS_DIR);
    char *p = assets ? tfb_strfmt("%s/%s", assets, PROJECTOR_CONFIG_NAME)
                     : NULL;
    if (p && is_file(p)) {
        *cfg_dir = assets;
        return p;
    }
    free(p);
    free(assets);
    p = tfb_strfmt("%s/%s", dir, PROJECTOR_CONFIG_NAME);
    if (p && is_file(p)) {
        *cfg_dir = tfb_strdup(dir);
        if (*cfg_dir)
            return p;
    }
    free(p);
    return NULL;
}

static int has_tensor_files(const tfb_projector_config *c)
{
    for (size_t i = 0; i < c->n_emb; i++)
        if (c->emb[i].tensor_path[0])
            return 1;
    return 0;
}

/* Loads run name's config: 0, TFB_ENOENT (not a projector run), or
 * TFB_ECORRUPT with the reason in err. */
static int load_run(tfb_store *s, const char *name, loaded *out, char *err,
                    size_t err_len)
{
    memset(out, 0, sizeof *out);
    const char *dir = NULL;
    tfb_run *r = tfb_store_find_run(s, name);
    if (r)
        dir = tfb_run_dir(r);
    else if (!strcmp(name, "."))
        dir = tfb_store_logdir(s);
    if (!dir)
        return TFB_ENOENT;
    out->path = config_path(dir, &out->dir);
    if (!out->path)
        return TFB_ENOENT;
    tfb_projector_file f;
    char why[256];
    int rc = tfb_projector_read(out->path, TFB_PROJECTOR_CONFIG_MAX_BYTES, &f,
                                why, sizeof why);
    if (rc == 0) {
        rc = tfb_projector_config_parse(f.data, f.len, &out->cfg, why,
                                        sizeof why);
        tfb_projector_file_free(&f);
    }
    if (rc < 0) {
        snprintf(err, err_len, "%s: %s", out->path, why);
        loaded_free(out);
        return rc == TFB_ENOMEM ? rc : TFB_ECORRUPT;
    }
    if (!has_tensor_files(&out->cfg)) {
        loaded_free(out);
        return TFB_ENOENT;
    }
    return 0;
}

/* The candidates in run order: every run, and "." for the logdir when
 * it holds a config and is not a run (TensorBoard's fallback). */
static int projector_runs(tfb_store *s, char ***names, size_t *n)
{
    tfb_run **runs;
    size_t nr;
    *names = NULL;
    *n = 0;
    if (tfb_store_runs(s, &runs, &nr) < 0)
        return TFB_ENOMEM;
    char **v = calloc(nr + 1, sizeof *v);
    if (!v) {
        free(runs);
        return TFB_ENOMEM;
    }
    size_t k = 0;
    int dot = 0;
    for (size_t i = 0; i < nr; i++) {
        loaded l;
        char err[8];
        const char *name = tfb_run_name(runs[i]);
        dot |= !strcmp(name, ".");
        /* A run whose config cannot be parsed is listed: /info says why
         * (nothing is hidden from its user). */
        int rc = load_run(s, name, &l, err, sizeof err);
        if (rc == 0)
            loaded_free(&l);
        if (rc == 0 || rc == TFB_ECORRUPT)
            v[k++] = tfb_strdup(name);
    }
    free(runs);
    if (!nr && !dot) {
        loaded l;
        char err[8];
        int rc = load_run(s, ".", &l, err, sizeof err);
        if (rc == 0)
            loaded_free(&l);
        if (rc == 0 || rc == TFB_ECORRUPT)
            v[k++] = tfb_strdup(".");
    }
    for (size_t i = 0; i < k; i++)
        if (!v[i]) {
            tfb_strv_free(v, k);
            return TFB_ENOMEM;
        }
    *names = v;
    *n = k;
    return 0;
}

static int route_runs(const tfb_http_req *req, tfb_http_resp *resp)
{
    char **names;
    size_t n;
    if (projector_runs(tfb_server_store(req), &names, &n) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < n; i++)
        tfb_json_str(&j, names[i]);
    tfb_json_array_end(&j);
    tfb_strv_free(names, n);
    return tfb_http_json(resp, &j);
}

/* run (and name when want_name) of a request, and the run's config; on
 * failure the 400 answer TensorBoard gives is set. */
static int request_run(const tfb_http_req *req, tfb_http_resp *resp,
                       int want_name, loaded *l, const char **name,
                       const tfb_projector_embedding **emb)
{
    const char *run;
    if (tfb_http_param_str(req, resp, "run", 1, NULL, &run) < 0)
        return TFB_EINVAL;
    if (want_name &&
        tfb_http_param_str(req, resp, "name", 1, NULL, name) < 0)
        return TFB_EINVAL;
    char err[512];
    int rc = load_run(tfb_server_store(req), run, l, err, sizeof err);
    if (rc == TFB_ENOENT)
        return tfb_http_error(resp, 400, "Unknown run: \"%s\"", run);
    if (rc < 0)
        return tfb_http_error(resp, 400, "the projector config of run "
                              "\"%s\" cannot be read: %s", run, err);
    if (want_name) {
        *emb = tfb_projector_config_find(&l->cfg, *name);
        if (!*emb) {
            tfb_http_error(resp, 400, "No tensor \"%s\" in the config file "
                           "\"%s\"", *name, l->path);
            loaded_free(l);
            return TFB_EINVAL;
        }
    }
    return 0;
}

/* num_rows: absent (0, all) or an integer > 0. */
static int num_rows_param(const tfb_http_req *req, tfb_http_resp *resp,
                          int64_t *out)
{
    return tfb_http_param_i64(req, resp, "num_rows", 0, 0, 1, INT64_MAX, out);
}

typedef struct load_ctx {
    const char *abs;
    const tfb_projector_embedding *emb;
} load_ctx;

static int load_tensor(void *vctx, tfb_projector_tensor *out, char *err,
                       size_t err_len)
{
    load_ctx *c = vctx;
    tfb_projector_file f;
    int rc = tfb_projector_read(c->abs, TFB_PROJECTOR_TENSOR_FILE_MAX, &f,
                                err, err_len);
    if (rc < 0)
        return rc;
    rc = tfb_projector_parse_tensor(f.data, f.len, c->emb->tensor_shape,
                                    c->emb->n_tensor_shape, out, err,
                                    err_len);
    tfb_projector_file_free(&f);
    return rc;
}

/* The embedding's tensor through the cache. 0, or an error with the
 * reason in err. */
static int get_tensor(tfb_store *s, const char *run, const loaded *l,
                      const tfb_projector_embedding *emb,
                      tfb_projector_entry **out, char *err, size_t err_len)
{
    *out = NULL;
    char *abs = tfb_projector_resolve(tfb_store_logdir(s), l->dir,
                                      emb->tensor_path, err, err_len);
    if (!abs)
        return TFB_ENOENT;
    tfb_projector_file id;
    int rc = tfb_projector_stat(abs, &id);
    if (rc < 0) {
        snprintf(err, err_len, "Tensor file \"%s\" does not exist, or is "
                 "not a file", abs);
        free(abs);
        return rc;
    }
    char *key = tfb_strfmt("%s\n%s\n%s", run, emb->tensor_name, abs);
    if (!key) {
        free(abs);
        return TFB_ENOMEM;
    }
    load_ctx ctx = {abs, emb};
    rc = tfb_projector_cache_get(key, &id, load_tensor, &ctx, out, err,
                                 err_len);
    free(key);
    free(abs);
    return rc;
}

/* The notes of one embedding: what does not fit between its tensor,
 * metadata and sprite. Each is a line; the data is still served. */
static size_t embedding_notes(tfb_store *s, const loaded *l,
                              const tfb_projector_embedding *e,
                              const tfb_projector_tensor *t,
                              const char *tensor_err,
                              char notes[][PROJECTOR_NOTE_MAX], size_t max)
{
    size_t n = 0;
#define NOTE(...) \
    do { \
        if (n < max) \
            snprintf(notes[n++], sizeof notes[0], __VA_ARGS__); \
    } while (0)
    if (tensor_err)
        NOTE("tensor: %.500s", tensor_err);
    if (t && t->nonfinite)
        NOTE("tensor: %llu values are NaN or infinite (served as they "
             "are; PCA leaves their rows out)",
             (unsigned long long)t->nonfinite);
    if (t && t->cols > TFB_PROJECTOR_PCA_MAX_DIM)
        NOTE("tensor: %u dimensions; PCA takes at most %d", t->cols,
             TFB_PROJECTOR_PCA_MAX_DIM);
    char err[512];
    const char *logdir = tfb_store_logdir(s);
    if (e->metadata_path[0]) {
        char *abs = tfb_projector_resolve(logdir, l->dir, e->metadata_path,
                                          err, sizeof err);
        tfb_projector_file f = {0};
        int rc = abs ? tfb_projector_read(abs,
                                          TFB_PROJECTOR_METADATA_FILE_MAX, &f,
                                          err, sizeof err)
                     : TFB_ENOENT;
        if (rc < 0) {
            NOTE("metadata: %.500s", err);
        } else if (t) {
            tfb_projector_meta_shape m;
            tfb_projector_meta_count(f.data, f.len, &m);
            if (m.rows != t->rows)
                NOTE("metadata: %llu rows for %u points (%s); labels are "
                     "matched to points in order, %s",
                     (unsigned long long)m.rows, t->rows,
                     m.rows > t->rows ? "more" : "fewer",
                     m.rows > t->rows ? "rows past the last point are "
                                        "not shown"
                                      : "points past the last row have "
                                        "no label");
        }
        tfb_projector_file_free(&f);
        free(abs);
    }
    if (e->has_sprite) {
        char *abs = tfb_projector_resolve(logdir, l->dir,
                                          e->sprite_image_path, err,
                                          sizeof err);
        tfb_projector_file f = {0};
        int rc = abs ? tfb_projector_read(abs, TFB_PROJECTOR_SPRITE_FILE_MAX,
                                          &f, err, sizeof err)
                     : TFB_ENOENT;
        uint32_t w, h;
        const char *type =
            rc == 0 ? tfb_projector_image_size(f.data, f.len, &w, &h) : NULL;
        if (rc < 0) {
            NOTE("sprite: %.500s", err);
        } else if (!type) {
            NOTE("sprite: not a PNG or JPEG image");
        } else if (e->n_sprite_dim != 2 || !e->sprite_dim[0] ||
                   !e->sprite_dim[1]) {
            NOTE("sprite: single_image_dim must give 2 sides above 0");
        } else {
            uint32_t sw = e->sprite_dim[0], sh = e->sprite_dim[1];
            if (w > TFB_PROJECTOR_SPRITE_MAX_SIDE ||
                h > TFB_PROJECTOR_SPRITE_MAX_SIDE)
                NOTE("sprite: %u x %u pixels, past the %d x %d a browser "
                     "can use as one texture", w, h,
                     TFB_PROJECTOR_SPRITE_MAX_SIDE,
                     TFB_PROJECTOR_SPRITE_MAX_SIDE);
            uint64_t cap = (uint64_t)(w / sw) * (h / sh);
            /* PyTorch pads its sprite to a square, so a height that is
             * not a multiple is normal when the images fit; a width that
             * is not one is never written by PyTorch or TensorFlow. */
            if (w % sw || (h % sh && t && cap < t->rows))
                NOTE("sprite: %u x %u pixels is not a multiple of its %u x "
                     "%u images; the partial images at its right and "
                     "bottom edges are not used", w, h, sw, sh);
            if (t && cap < t->rows)
                NOTE("sprite: holds %llu images for %u points; points past "
                     "the %llu-th have no image", (unsigned long long)cap,
                     t->rows, (unsigned long long)cap);
        }
        tfb_projector_file_free(&f);
        free(abs);
    }
#undef NOTE
    return n;
}

/* TensorBoard's ProjectorConfig as JSON, each embedding's tensorShape
 * filled from its tensor file when the config gives none, plus our
 * "tfboardNotes" (only when there is something to say). */
static int route_info(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *run;
    if (tfb_http_param_str(req, resp, "run", 1, NULL, &run) < 0)
        return 0;
    loaded l;
    if (request_run(req, resp, 0, &l, NULL, NULL) < 0)
        return 0;
    tfb_store *s = tfb_server_store(req);
    size_t ne = l.cfg.n_emb;
    char (*notes)[PROJECTOR_NOTE_MAX] = ne ? malloc(ne * PROJECTOR_MAX_NOTES *
                                     sizeof *notes)
                            : NULL;
    size_t *nn = calloc(ne ? ne : 1, sizeof *nn);
    if ((ne && !notes) || !nn) {
        free(notes);
        free(nn);
        loaded_free(&l);
        return tfb_http_error(resp, 500, "out of memory");
    }
    for (size_t i = 0; i < ne; i++) {
        tfb_projector_embedding *e = &l.cfg.emb[i];
        tfb_projector_entry *ent = NULL;
        char err[512];
        const tfb_projector_tensor *t = NULL;
        const char *terr = NULL;
        if (e->tensor_path[0]) {
            if (get_tensor(s, run, &l, e, &ent, err, sizeof err) == 0)
                t = tfb_projector_entry_tensor(ent);
            else
                terr = err;
        } else {
            terr = "no tensor_path: tensors in checkpoints are not read "
                   "by tfboard";
        }
        if (t && !e->n_tensor_shape) {
            e->tensor_shape[0] = t->rows;
            e->tensor_shape[1] = t->cols;
            e->n_tensor_shape = 2;
        }
        nn[i] = embedding_notes(s, &l, e, t, terr,
                                notes + i * PROJECTOR_MAX_NOTES,
                                PROJECTOR_MAX_NOTES);
        tfb_projector_entry_release(ent);
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_projector_config_json(&j, &l.cfg);
    /* Our notes go into the embeddings' objects: reopen is not possible
     * per element, so they are written as one map by tensor name. */
    int any = 0;
    for (size_t i = 0; i < ne; i++)
        any |= nn[i] > 0;
    if (any || l.cfg.dropped) {
        tfb_json_object_reopen(&j);
        tfb_json_key(&j, "tfboardNotes");
        tfb_json_object_begin(&j);
        if (l.cfg.dropped) {
            char line[160];
            snprintf(line, sizeof line, "%zu embeddings past the first %d "
                     "are not listed", l.cfg.dropped,
                     TFB_PROJECTOR_MAX_EMBEDDINGS);
            tfb_json_key(&j, "");
            tfb_json_array_begin(&j);
            tfb_json_str(&j, line);
            tfb_json_array_end(&j);
        }
        for (size_t i = 0; i < ne; i++) {
            if (!nn[i])
                continue;
            tfb_json_key(&j, l.cfg.emb[i].tensor_name);
            tfb_json_array_begin(&j);
            for (size_t k = 0; k < nn[i]; k++)
                tfb_json_str(&j, notes[i * PROJECTOR_MAX_NOTES + k]);
            tfb_json_array_end(&j);
        }
        tfb_json_object_end(&j);
        tfb_json_object_end(&j);
    }
    free(notes);
    free(nn);
    loaded_free(&l);
    return tfb_http_json(resp, &j);
}

/* The tensor as raw float32, row-major, rows cut to num_rows: the bytes
 * TensorBoard sends. */
static int route_tensor(const tfb_http_req *req, tfb_http_resp *resp)
{
    loaded l;
    const char *name;
    const tfb_projector_embedding *e = NULL; /* set by request_run */
    int64_t num_rows;
    if (request_run(req, resp, 1, &l, &name, &e) < 0)
        return 0;
    if (num_rows_param(req, resp, &num_rows) < 0) {
        loaded_free(&l);
        return 0;
    }
    if (!e->tensor_path[0]) {
        loaded_free(&l);
        return tfb_http_error(resp, 400, "Tensor \"%s\" has no tensor_path: "
                              "tensors in checkpoints are not read by "
                              "tfboard", name);
    }
    const char *run = tfb_http_query(req, "run");
    tfb_projector_entry *ent;
    char err[512];
    int rc = get_tensor(tfb_server_store(req), run, &l, e, &ent, err,
                        sizeof err);
    loaded_free(&l);
    if (rc < 0)
        return tfb_http_error(resp, rc == TFB_ENOMEM ? 500 : 400, "%s", err);
    const tfb_projector_tensor *t = tfb_projector_entry_tensor(ent);
    uint64_t rows = t->rows;
    if (num_rows && (uint64_t)num_rows < rows)
        rows = (uint64_t)num_rows;
    size_t len = (size_t)(rows * t->cols * sizeof(float));
    rc = tfb_http_text(resp, 200, "application/octet-stream",
                       (const char *)t->data, len);
    tfb_projector_entry_release(ent);
    return rc;
}

/* A file the embedding names (metadata, sprite, bookmarks), read whole
 * within max; on failure TensorBoard's 400 is set. */
static int embedding_file(const tfb_http_req *req, tfb_http_resp *resp,
                          const loaded *l, const char *what, const char *name,
                          const char *path, uint64_t max,
                          tfb_projector_file *f)
{
    if (!path[0])
        return tfb_http_error(resp, 400, "No %s file found for tensor "
                              "\"%s\" in the config file \"%s\"", what, name,
                              l->path);
    char err[512];
    char *abs = tfb_projector_resolve(tfb_store_logdir(tfb_server_store(req)),
                                      l->dir, path, err, sizeof err);
    if (!abs)
        return tfb_http_error(resp, 400, "%s", err);
    int rc = tfb_projector_read(abs, max, f, err, sizeof err);
    free(abs);
    if (rc < 0)
        return tfb_http_error(resp, rc == TFB_ENOMEM ? 500 : 400, "%s", err);
    return 0;
}

/* The metadata TSV as text, the header and num_rows lines. */
static int route_metadata(const tfb_http_req *req, tfb_http_resp *resp)
{
    loaded l;
    const char *name;
    const tfb_projector_embedding *e = NULL; /* set by request_run */
    int64_t num_rows;
    if (request_run(req, resp, 1, &l, &name, &e) < 0)
        return 0;
    tfb_projector_file f;
    if (num_rows_param(req, resp, &num_rows) < 0 ||
        embedding_file(req, resp, &l, "metadata", name, e->metadata_path,
                       TFB_PROJECTOR_METADATA_FILE_MAX, &f) < 0) {
        loaded_free(&l);
        return 0;
    }
    loaded_free(&l);
    size_t len = tfb_projector_meta_prefix(f.data, f.len, (uint64_t)num_rows);
    int rc = tfb_http_body_take(resp, 200, "text/plain; charset=utf-8",
                                f.data, len);
    f.data = NULL;
    return rc;
}

static int route_sprite(const tfb_http_req *req, tfb_http_resp *resp)
{
    loaded l;
    const char *name;
    const tfb_projector_embedding *e = NULL; /* set by request_run */
    if (request_run(req, resp, 1, &l, &name, &e) < 0)
        return 0;
    tfb_projector_file f;
    if (embedding_file(req, resp, &l, "sprite image", name,
                       e->has_sprite ? e->sprite_image_path : "",
                       TFB_PROJECTOR_SPRITE_FILE_MAX, &f) < 0) {
        loaded_free(&l);
        return 0;
    }
    loaded_free(&l);
    uint32_t w, h;
    const char *type = tfb_projector_image_size(f.data, f.len, &w, &h);
    if (!type) {
        tfb_projector_file_free(&f);
        return tfb_http_error(resp, 400, "the sprite of \"%s\" is not a PNG "
                              "or JPEG image", name);
    }
    int rc = tfb_http_body_take(resp, 200, type, f.data, f.len);
    f.data = NULL;
    return rc;
}

static int route_bookmarks(const tfb_http_req *req, tfb_http_resp *resp)
{
    loaded l;
    const char *name;
    const tfb_projector_embedding *e = NULL; /* set by request_run */
    if (request_run(req, resp, 1, &l, &name, &e) < 0)
        return 0;
    tfb_projector_file f;
    if (embedding_file(req, resp, &l, "bookmarks", name, e->bookmarks_path,
                       TFB_PROJECTOR_CONFIG_MAX_BYTES, &f) < 0) {
        loaded_free(&l);
        return 0;
    }
    loaded_free(&l);
    int rc = tfb_http_body_take(resp, 200, "application/json", f.data, f.len);
    f.data = NULL;
    return rc;
}

/* The PCA of a request's tensor (cached with it). */
static int request_pca(const tfb_http_req *req, tfb_http_resp *resp,
                       tfb_projector_entry **ent,
                       const tfb_projector_pca **p, int64_t *k)
{
    loaded l;
    const char *name;
    const tfb_projector_embedding *e = NULL; /* set by request_run */
    if (request_run(req, resp, 1, &l, &name, &e) < 0)
        return TFB_EINVAL;
    if (tfb_http_param_i64(req, resp, "components", 0,
                           TFB_PROJECTOR_PCA_COMPONENTS, 1,
                           TFB_PROJECTOR_PCA_COMPONENTS, k) < 0) {
        loaded_free(&l);
        return TFB_EINVAL;
    }
    char err[512];
    int rc = e->tensor_path[0]
                 ? get_tensor(tfb_server_store(req), tfb_http_query(req, "run"),
                              &l, e, ent, err, sizeof err)
                 : (snprintf(err, sizeof err, "no tensor_path: tensors in "
                             "checkpoints are not read by tfboard"),
                    TFB_EINVAL);
    loaded_free(&l);
    if (rc < 0)
        return tfb_http_error(resp, rc == TFB_ENOMEM ? 500 : 400, "%s", err);
    const tfb_projector_tensor *t = tfb_projector_entry_tensor(*ent);
    if (t->cols > TFB_PROJECTOR_PCA_MAX_DIM) {
        tfb_projector_entry_release(*ent);
        return tfb_http_error(resp, 400, "the tensor has %u dimensions; PCA "
                              "takes at most %d", t->cols,
                              TFB_PROJECTOR_PCA_MAX_DIM);
    }
    rc = tfb_projector_entry_pca(*ent, p);
    if (rc < 0) {
        tfb_projector_entry_release(*ent);
        if (rc == TFB_ENOMEM)
            return tfb_http_error(resp, 500, "out of memory");
        return tfb_http_error(resp, 400, "no row of the tensor is finite: "
                              "PCA has nothing to work on");
    }
    if ((uint32_t)*k > (*p)->k)
        *k = (*p)->k;
    return 0;
}

typedef struct pca_summary {
    uint32_t rows, dim, k, iterations;
    uint64_t rows_used, rows_skipped;
    double total_variance;
} pca_summary;

static const tfb_json_field pca_fields[] = {
    TFB_JSON_FIELD(pca_summary, rows, U32),
    TFB_JSON_FIELD(pca_summary, dim, U32),
    TFB_JSON_FIELD(pca_summary, k, U32),
    TFB_JSON_FIELD(pca_summary, rows_used, U64),
    TFB_JSON_FIELD(pca_summary, rows_skipped, U64),
    TFB_JSON_FIELD(pca_summary, total_variance, DOUBLE),
    TFB_JSON_FIELD(pca_summary, iterations, U32),
};

/* {rows, dim, k, rows_used, rows_skipped, total_variance, iterations,
 * explained_variance: [k], explained_variance_ratio: [k],
 * components: [[dim] x k], mean: [dim]}. */
static int route_pca(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_projector_entry *ent;
    const tfb_projector_pca *p;
    int64_t k;
    if (request_pca(req, resp, &ent, &p, &k) < 0)
        return 0;
    const tfb_projector_tensor *t = tfb_projector_entry_tensor(ent);
    pca_summary sm = {t->rows, t->cols, (uint32_t)k, p->iterations,
                      p->rows_used, p->rows_skipped, p->total_variance};
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    TFB_JSON_FIELDS(&j, &sm, pca_fields);
    tfb_json_key(&j, "explained_variance");
    tfb_json_array_begin(&j);
    for (int64_t c = 0; c < k; c++)
        tfb_json_double(&j, p->variance[c]);
    tfb_json_array_end(&j);
    tfb_json_key(&j, "explained_variance_ratio");
    tfb_json_array_begin(&j);
    for (int64_t c = 0; c < k; c++)
        tfb_json_double(&j, p->ratio[c]);
    tfb_json_array_end(&j);
    tfb_json_key(&j, "components");
    tfb_json_array_begin(&j);
    for (int64_t c = 0; c < k; c++) {
        tfb_json_array_begin(&j);
        for (uint32_t d = 0; d < p->dim; d++)
            tfb_json_float(&j, p->components[(size_t)c * p->dim + d]);
        tfb_json_array_end(&j);
    }
    tfb_json_array_end(&j);
    tfb_json_key(&j, "mean");
    tfb_json_array_begin(&j);
    for (uint32_t d = 0; d < p->dim; d++)
        tfb_json_float(&j, p->mean[d]);
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    tfb_projector_entry_release(ent);
    return tfb_http_json(resp, &j);
}

/* Every point's coordinates on the first `components` components: raw
 * float32, rows x components, row-major (NaN for a row PCA left out). */
static int route_pca_projection(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_projector_entry *ent;
    const tfb_projector_pca *p;
    int64_t k;
    if (request_pca(req, resp, &ent, &p, &k) < 0)
        return 0;
    const tfb_projector_tensor *t = tfb_projector_entry_tensor(ent);
    float *all = tfb_projector_pca_project(p, t->data, t->rows);
    uint32_t rows = t->rows;
    tfb_projector_entry_release(ent);
    if (!all)
        return tfb_http_error(resp, 500, "out of memory");
    /* Keep the first k of each row's p->k values. */
    for (uint32_t r = 0; r < rows; r++)
        memmove(all + (size_t)r * k, all + (size_t)r * p->k,
                (size_t)k * sizeof *all);
    return tfb_http_body_take(resp, 200, "application/octet-stream",
                              (char *)all, (size_t)rows * k * sizeof *all);
}

/* A run has the projector's data when its directory holds a config:
 * two stats, no parse (has_data runs per run per listing). */
static int has_projector(tfb_store *s, tfb_run *r)
{
    (void)s;
    /* config_path's two places, in buffers of the stack: the listing asks
     * every run (100,000 at once, issue 28) */
    char p[PATH_MAX];
    const char *dir = tfb_run_dir(r);
    int n = snprintf(p, sizeof p, "%s/%s/%s", dir, PROJECTOR_ASSETS_DIR,
                     PROJECTOR_CONFIG_NAME);
    if (n > 0 && (size_t)n < sizeof p && is_file(p))
        return 1;
    n = snprintf(p, sizeof p, "%s/%s", dir, PROJECTOR_CONFIG_NAME);
    return n > 0 && (size_t)n < sizeof p && is_file(p);
}

static const tfb_plugin_route routes[] = {
    {"runs", route_runs},
    {"info", route_info},
    {"tensor", route_tensor},
    {"metadata", route_metadata},
    {"sprite_image", route_sprite},
    {"bookmarks", route_bookmarks},
    {"pca", route_pca},
    {"pca_projection", route_pca_projection},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_projector_assets[];

const tfb_plugin tfb_plugin_projector = {
    TFB_PLUGIN_ABI,
    .name = "projector",
    .title = "Projector",
    .module = "js/pages/projector.js",
    .assets = tfb_projector_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_projector,
};
