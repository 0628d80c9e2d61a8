/*
 * embedding.c - tfb_embedding: the projector's files, as PyTorch's
 * add_embedding lays them out (include/tfboard.h, "Embeddings"). Files
 * rather than events, so nothing goes through the writer's queue: each
 * file is built in memory, written to a temporary name and renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/str.h"
#include "collector/media_internal.h"
#include "collector/writer_internal.h"
#include "tfboard.h"

/* projector_config.pbtxt is read, extended and replaced under this lock:
 * two threads (or two writers of one run) adding embeddings at once must
 * not lose one's entry. */
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;

void tfb_embedding_opts_init(tfb_embedding_opts *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

/* The caller's opts as far as its size covers (fields past it unset). */
static int read_opts(const tfb_embedding_opts *in, tfb_embedding_opts *o)
{
    tfb_embedding_opts_init(o);
    if (!in)
        return 0;
    if (!in->size)
        return TFB_EINVAL;
    memcpy(o, in, in->size < sizeof *o ? in->size : sizeof *o);
    o->size = sizeof *o;
    return 0;
}

static int bad_label(const char *s)
{
    return !s || strpbrk(s, "\t\n\r") != NULL;
}

/* PyTorch's SummaryWriter._encode: the tag as one folder name. */
static void put_encoded_tag(tfb_buf *b, const char *tag)
{
    for (const char *p = tag; *p; p++) {
        if (*p == '%')
            tfb_buf_puts(b, "%25");
        else if (*p == '/')
            tfb_buf_puts(b, "%2f");
        else if (*p == '\\')
            tfb_buf_puts(b, "%5c");
        else
            tfb_buf_put(b, p, 1);
    }
}

/* A string as protobuf's text format writes it (C escapes; bytes past
 * ASCII in octal, as MessageToString does by default). */
static void put_pbtxt_str(tfb_buf *b, const char *s)
{
    tfb_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[8];
        switch (*p) {
        case '\n': tfb_buf_puts(b, "\\n"); break;
        case '\r': tfb_buf_puts(b, "\\r"); break;
        case '\t': tfb_buf_puts(b, "\\t"); break;
        case '"': tfb_buf_puts(b, "\\\""); break;
        case '\'': tfb_buf_puts(b, "\\'"); break;
        case '\\': tfb_buf_puts(b, "\\\\"); break;
        default:
            if (*p < 0x20 || *p >= 0x7F) {
                snprintf(tmp, sizeof tmp, "\\%03o", *p);
                tfb_buf_puts(b, tmp);
            } else {
                tfb_buf_put(b, p, 1);
            }
        }
    }
    tfb_buf_puts(b, "\"");
}

/* Writes len bytes to path through path.tmp<pid>.<n> and a rename: the
 * counter keeps two threads writing the same embedding apart. */
static int write_file(const char *path, const void *data, size_t len)
{
    static unsigned long seq;
    unsigned long nth = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
    char *tmp = tfb_strfmt("%s.tmp%ld.%lu", path, (long)getpid(), nth);
    if (!tmp)
        return TFB_ENOMEM;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(tmp);
        return TFB_EIO;
    }
    const char *p = data;
    size_t left = len;
    int rc = 0;
    while (left) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = errno == ENOSPC ? TFB_ENOSPC : TFB_EIO;
            break;
        }
        p += n;
        left -= (size_t)n;
    }
    if (close(fd) < 0 && !rc)
        rc = TFB_EIO;
    if (!rc && rename(tmp, path) < 0)
        rc = TFB_EIO;
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

static int mkdir_one(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    return TFB_EIO;
}

/* The sprite: images tiled cols = ceil(sqrt(n)) a row on a black square
 * canvas cols * width wide (PyTorch's make_sprite), gray as RGB. */
static int sprite_png(const tfb_embedding_opts *o, size_t n, tfb_buf *out)
{
    size_t cols = (size_t)ceil(sqrt((double)n));
    while (cols * cols < n) /* sqrt's rounding */
        cols++;
    if (cols > n)
        cols = n;
    size_t h = (size_t)o->image_height, w = (size_t)o->image_width;
    size_t c = (size_t)o->image_channels;
    size_t side = cols * w;
    size_t rows = (n + cols - 1) / cols;
    if (rows * h > side) /* images taller than wide: PyTorch fails here */
        side = rows * h;
    uint8_t *px = calloc(side * side, 3);
    if (!px)
        return TFB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *img = o->images + i * h * w * c;
        size_t y0 = (i / cols) * h, x0 = (i % cols) * w;
        for (size_t y = 0; y < h; y++) {
            uint8_t *dst = px + ((y0 + y) * side + x0) * 3;
            const uint8_t *src = img + y * w * c;
            for (size_t x = 0; x < w; x++)
                for (size_t k = 0; k < 3; k++)
                    dst[x * 3 + k] = src[x * c + (c == 1 ? 0 : k)];
        }
    }
    int rc = tfb_png_encode(px, (int)side, (int)side, 3, out);
    free(px);
    return rc;
}

/* Appends the entry to run_dir's projector_config.pbtxt unless one with
 * the same tensor name is there already. */
static int append_config(const char *run_dir, const char *entry,
                         const char *name_line)
{
    char *path = tfb_strfmt("%s/projector_config.pbtxt", run_dir);
    if (!path)
        return TFB_ENOMEM;
    pthread_mutex_lock(&config_lock);
    tfb_buf b = {0};
    int rc = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
            tfb_buf_put(&b, chunk, n);
        if (ferror(f))
            rc = TFB_EIO;
        fclose(f);
    }
    char *old = rc ? NULL : tfb_buf_take(&b);
    if (!rc && !old)
        rc = TFB_ENOMEM;
    if (!rc && !strstr(old, name_line)) {
        tfb_buf nb = {0};
        tfb_buf_puts(&nb, old);
        tfb_buf_puts(&nb, entry);
        char *text = tfb_buf_take(&nb);
        rc = text ? write_file(path, text, strlen(text)) : TFB_ENOMEM;
        free(text);
    }
    free(old);
    pthread_mutex_unlock(&config_lock);
    free(path);
    return rc;
}

int tfb_embedding(tfb_writer *w, const char *tag, const float *mat,
                  size_t rows, size_t cols, int64_t step,
                  const tfb_embedding_opts *opts)
{
    tfb_embedding_opts o;
    /* "." and ".." would name the step's folder or the run's own (the
     * tag is one folder name: '/' is encoded, these are not). */
    if (!w || !tag || !*tag || !strcmp(tag, ".") || !strcmp(tag, "..") ||
        !mat || !rows || !cols || step < 0 || read_opts(opts, &o) < 0)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    if (cols > TFB_EMBEDDING_MAX_VALUES / rows)
        return TFB_ETOOBIG;
    if (o.labels) {
        if (!o.label_columns || (o.label_columns == 1) != !o.header)
            return TFB_EINVAL;
        if (o.label_columns > SIZE_MAX / rows)
            return TFB_ETOOBIG;
        for (size_t i = 0; i < rows * o.label_columns; i++)
            if (bad_label(o.labels[i]))
                return TFB_EINVAL;
        for (size_t i = 0; o.header && i < o.label_columns; i++)
            if (bad_label(o.header[i]))
                return TFB_EINVAL;
    }
    if (o.images) {
        if (o.image_height <= 0 || o.image_width <= 0 ||
            (o.image_channels != 1 && o.image_channels != 3))
            return TFB_EINVAL;
        size_t per_row = (size_t)ceil(sqrt((double)rows));
        if (o.image_width > TFB_EMBEDDING_SPRITE_MAX_SIDE ||
            o.image_height > TFB_EMBEDDING_SPRITE_MAX_SIDE ||
            per_row > TFB_EMBEDDING_SPRITE_MAX_SIDE ||
            per_row * (size_t)o.image_width > TFB_EMBEDDING_SPRITE_MAX_SIDE ||
            ((rows + per_row - 1) / per_row) * (size_t)o.image_height >
                TFB_EMBEDDING_SPRITE_MAX_SIDE)
            return TFB_ETOOBIG;
    }
    const char *run_dir = tfb_writer_run_dir(w);
    if (!run_dir)
        return TFB_EINVAL;
    if (tfb_writer_in_bucket(w))
        return TFB_ENOTSUP;

    /* <step, 5 digits>/<encoded tag>, as PyTorch names the folder. */
    tfb_buf sub = {0};
    char stepbuf[32];
    snprintf(stepbuf, sizeof stepbuf, "%05lld", (long long)step);
    tfb_buf_puts(&sub, stepbuf);
    tfb_buf_puts(&sub, "/");
    put_encoded_tag(&sub, tag);
    char *subdir = tfb_buf_take(&sub);
    char *d_step = tfb_strfmt("%s/%s", run_dir, stepbuf);
    char *d = subdir ? tfb_strfmt("%s/%s", run_dir, subdir) : NULL;
    char *name = tfb_strfmt("%s:%s", tag, stepbuf);
    int rc = subdir && d_step && d && name ? 0 : TFB_ENOMEM;
    if (!rc)
        rc = mkdir_one(d_step);
    if (!rc)
        rc = mkdir_one(d);

    /* tensors.tsv: %.9g reads back as the same float32. */
    if (!rc) {
        tfb_buf t = {0};
        char num[40];
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                int n = snprintf(num, sizeof num, "%.9g%c",
                                 (double)mat[r * cols + c],
                                 c + 1 < cols ? '\t' : '\n');
                tfb_buf_put(&t, num, (size_t)n);
            }
        size_t len = t.n;
        char *text = tfb_buf_take(&t);
        char *p = tfb_strfmt("%s/tensors.tsv", d);
        rc = text && p ? write_file(p, text, len) : TFB_ENOMEM;
        free(p);
        free(text);
    }
    if (!rc && o.labels) {
        tfb_buf m = {0};
        size_t nc = o.label_columns;
        if (nc > 1)
            for (size_t c = 0; c < nc; c++) {
                tfb_buf_puts(&m, o.header[c]);
                tfb_buf_puts(&m, c + 1 < nc ? "\t" : "\n");
            }
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < nc; c++) {
                tfb_buf_puts(&m, o.labels[r * nc + c]);
                tfb_buf_puts(&m, c + 1 < nc ? "\t" : "\n");
            }
        size_t len = m.n;
        char *text = tfb_buf_take(&m);
        char *p = tfb_strfmt("%s/metadata.tsv", d);
        rc = text && p ? write_file(p, text, len) : TFB_ENOMEM;
        free(p);
        free(text);
    }
    if (!rc && o.images) {
        tfb_buf png = {0};
        rc = sprite_png(&o, rows, &png);
        size_t len = png.n;
        char *bytes = tfb_buf_take(&png);
        char *p = tfb_strfmt("%s/sprite.png", d);
        if (!rc)
            rc = bytes && p ? write_file(p, bytes, len) : TFB_ENOMEM;
        free(p);
        free(bytes);
    }
    /* The config entry, in PyTorch's field order (tensor_name,
     * metadata_path, sprite, tensor_path). */
    if (!rc) {
        tfb_buf e = {0}, nl = {0};
        char *mp = tfb_strfmt("%s/metadata.tsv", subdir);
        char *sp = tfb_strfmt("%s/sprite.png", subdir);
        char *tp = tfb_strfmt("%s/tensors.tsv", subdir);
        tfb_buf_puts(&nl, "  tensor_name: ");
        put_pbtxt_str(&nl, name ? name : "");
        tfb_buf_puts(&nl, "\n");
        char *name_line = tfb_buf_take(&nl);
        tfb_buf_puts(&e, "embeddings {\n");
        tfb_buf_puts(&e, name_line ? name_line : "");
        if (o.labels && mp) {
            tfb_buf_puts(&e, "  metadata_path: ");
            put_pbtxt_str(&e, mp);
            tfb_buf_puts(&e, "\n");
        }
        if (o.images && sp) {
            char dims[96];
            tfb_buf_puts(&e, "  sprite {\n    image_path: ");
            put_pbtxt_str(&e, sp);
            snprintf(dims, sizeof dims,
                     "\n    single_image_dim: %d\n    single_image_dim: "
                     "%d\n  }\n", o.image_width, o.image_height);
            tfb_buf_puts(&e, dims);
        }
        tfb_buf_puts(&e, "  tensor_path: ");
        put_pbtxt_str(&e, tp ? tp : "");
        tfb_buf_puts(&e, "\n}\n");
        char *entry = tfb_buf_take(&e);
        rc = entry && name_line && mp && sp && tp
                 ? append_config(run_dir, entry, name_line)
                 : TFB_ENOMEM;
        free(entry);
        free(name_line);
        free(mp);
        free(sp);
        free(tp);
    }
    free(subdir);
    free(d_step);
    free(d);
    free(name);
    return rc;
}
