/*
 * projector_data.c - reading an embedding's files (tensor, metadata,
 * sprite) inside the logdir, within the bounds of projector_data.h.
 */
#include "plugins/projector/projector_data.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "tfboard.h"

char *tfb_projector_resolve(const char *logdir, const char *cfg_dir,
                            const char *path, char *err, size_t err_len)
{
    if (!path[0]) {
        snprintf(err, err_len, "no file named");
        return NULL;
    }
    char *joined = path[0] == '/' ? tfb_strdup(path)
                                  : tfb_strfmt("%s/%s", cfg_dir, path);
    if (!joined) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    char *real = realpath(joined, NULL);
    if (!real) {
        snprintf(err, err_len, "\"%s\" not found, or is not a file", joined);
        free(joined);
        return NULL;
    }
    char *root = realpath(logdir, NULL);
    size_t n = root ? strlen(root) : 0;
    /* Inside the logdir only: a config is data from the logdir, and must
     * not make the server send any file its user may read. */
    int inside = root && !strncmp(real, root, n) &&
                 (real[n] == '/' || real[n] == 0 ||
                  (n == 1 && root[0] == '/'));
    if (!inside) {
        snprintf(err, err_len,
                 "\"%s\" lies outside the logdir: the projector reads only "
                 "files inside it", joined);
        free(real);
        real = NULL;
    }
    free(root);
    free(joined);
    return real;
}

static void ident_of(const struct stat *st, tfb_projector_file *out)
{
    out->size = (uint64_t)st->st_size;
    out->mtime_ns =
        (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    out->ino = (uint64_t)st->st_ino;
    out->dev = (uint64_t)st->st_dev;
}

int tfb_projector_stat(const char *abs, tfb_projector_file *out)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(abs, &st) < 0)
        return TFB_ENOENT;
    if (!S_ISREG(st.st_mode))
        return TFB_EINVAL;
    ident_of(&st, out);
    return 0;
}

int tfb_projector_read(const char *abs, uint64_t max, tfb_projector_file *out,
                       char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    /* O_NONBLOCK: a FIFO named by a hostile config must not block. */
    int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, err_len, "\"%s\" cannot be opened: %s", abs,
                 strerror(errno));
        return errno == ENOENT ? TFB_ENOENT : TFB_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, err_len, "\"%s\" not found, or is not a file", abs);
        return TFB_EINVAL;
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        snprintf(err, err_len,
                 "\"%s\" is %llu bytes; the projector reads at most %llu",
                 abs, (unsigned long long)st.st_size,
                 (unsigned long long)max);
        return TFB_ETOOBIG;
    }
    ident_of(&st, out);
    size_t want = (size_t)st.st_size;
    char *buf = malloc(want + 1);
    if (!buf) {
        close(fd);
        snprintf(err, err_len, "out of memory");
        return TFB_ENOMEM;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t r = read(fd, buf + got, want - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, err_len, "\"%s\": %s", abs, strerror(errno));
            free(buf);
            close(fd);
            return TFB_EIO;
        }
        if (r == 0) /* shrank while read: what is there */
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    out->data = buf;
    out->len = got;
    return 0;
}

void tfb_projector_file_free(tfb_projector_file *f)
{
    if (!f)
        return;
    free(f->data);
    f->data = NULL;
    f->len = 0;
}

/* A value as Python's float() reads it: surrounding whitespace allowed,
 * "nan"/"inf"/"infinity" in any case, decimal digits (strtod's hex
 * floats, which Python refuses, are refused too). */
static int parse_value(const char *b, const char *e, double *out)
{
    while (b < e && (*b == ' ' || *b == '\r' || *b == '\v' || *b == '\f'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\v' ||
                     e[-1] == '\f'))
        e--;
    if (b == e)
        return -1;
    const char *d = b + (*b == '-' || *b == '+');
    if (d + 1 < e && d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
        return -1;
    /* strtod in place: the value ends at a tab, newline or space, none of
     * which a number contains, and the buffer is NUL-terminated. */
    char *end;
    double v = strtod(b, &end);
    if (end != e)
        return -1;
    *out = v;
    return 0;
}

int tfb_projector_parse_tensor(const char *data, size_t len,
                               const uint32_t *shape, size_t n_shape,
                               tfb_projector_tensor *out, char *err,
                               size_t err_len)
{
    memset(out, 0, sizeof *out);
    /* TensorBoard reads the file as text and, on a UnicodeDecodeError,
     * as raw float32 of the config's tensor_shape. */
    if (!tfb_utf8_valid(data, len)) {
        if (!shape || n_shape != 2) {
            snprintf(err, err_len,
                     "the tensor file is not text, and the config gives no "
                     "2-D tensor_shape to read it as raw float32");
            return TFB_ECORRUPT;
        }
        uint64_t nv = (uint64_t)shape[0] * shape[1];
        if (nv > TFB_PROJECTOR_MAX_VALUES) {
            snprintf(err, err_len, "tensor_shape %u x %u is past the %llu "
                     "values the projector keeps", shape[0], shape[1],
                     (unsigned long long)TFB_PROJECTOR_MAX_VALUES);
            return TFB_ETOOBIG;
        }
        if (nv * 4 != len) {
            snprintf(err, err_len, "the raw tensor file has %zu bytes; "
                     "tensor_shape %u x %u needs %llu", len, shape[0],
                     shape[1], (unsigned long long)(nv * 4));
            return TFB_ECORRUPT;
        }
        out->data = malloc(len ? len : 1);
        if (!out->data) {
            snprintf(err, err_len, "out of memory");
            return TFB_ENOMEM;
        }
        memcpy(out->data, data, len);
        out->rows = shape[0];
        out->cols = shape[1];
        out->binary = 1;
        for (uint64_t i = 0; i < nv; i++)
            if (!isfinite(out->data[i]))
                out->nonfinite++;
        return 0;
    }
    TFB_VEC(float) v = {0};
    uint32_t cols = 0, rows = 0;
    const char *p = data, *end = data + len;
    uint64_t line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        if (le == p) { /* empty lines are skipped */
            p = le + 1;
            continue;
        }
        uint32_t c = 0;
        const char *f = p;
        for (;;) {
            const char *tab = memchr(f, '\t', (size_t)(le - f));
            const char *fe = tab ? tab : le;
            double x;
            if (parse_value(f, fe, &x) < 0) {
                snprintf(err, err_len, "line %llu, value %u: \"%.*s\" is "
                         "not a number", (unsigned long long)line, c + 1,
                         (int)((fe - f) > 40 ? 40 : (fe - f)), f);
                tfb_vec_free(&v);
                return TFB_ECORRUPT;
            }
            if (c >= TFB_PROJECTOR_MAX_DIM) {
                snprintf(err, err_len, "line %llu has more than %d values, "
                         "the projector's bound on dimensions",
                         (unsigned long long)line, TFB_PROJECTOR_MAX_DIM);
                tfb_vec_free(&v);
                return TFB_ETOOBIG;
            }
            if (v.n >= TFB_PROJECTOR_MAX_VALUES) {
                snprintf(err, err_len, "the tensor has more than %llu "
                         "values, the projector's bound",
                         (unsigned long long)TFB_PROJECTOR_MAX_VALUES);
                tfb_vec_free(&v);
                return TFB_ETOOBIG;
            }
            /* 4096 values the first time, then doubling (vec.h). */
            if (v.n == v.cap &&
                tfb_vec_need(&v, v.cap ? v.n + 1 : 4096) < 0) {
                snprintf(err, err_len, "out of memory");
                tfb_vec_free(&v);
                return TFB_ENOMEM;
            }
            float fx = (float)x;
            if (!isfinite(fx))
                out->nonfinite++;
            v.v[v.n++] = fx;
            c++;
            if (!tab)
                break;
            f = tab + 1;
        }
        if (rows == 0)
            cols = c;
        else if (c != cols) {
            snprintf(err, err_len, "line %llu has %u values; the rows "
                     "before it have %u", (unsigned long long)line, c, cols);
            tfb_vec_free(&v);
            return TFB_ECORRUPT;
        }
        rows++;
        p = le + 1;
    }
    if (!rows) {
        snprintf(err, err_len, "the tensor file has no rows");
        tfb_vec_free(&v);
        return TFB_ECORRUPT;
    }
    out->data = v.v; /* taken over: freed by tfb_projector_tensor_free */
    out->rows = rows;
    out->cols = cols;
    return 0;
}

void tfb_projector_tensor_free(tfb_projector_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    t->data = NULL;
}

void tfb_projector_meta_count(const char *data, size_t len,
                              tfb_projector_meta_shape *out)
{
    memset(out, 0, sizeof *out);
    const char *p = data, *end = data + len;
    uint64_t lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (lines == 0) {
            if (memchr(p, '\t', (size_t)(le - p))) {
                out->header = 1;
                uint32_t c = 1;
                for (const char *q = p; q < le; q++)
                    c += *q == '\t';
                out->columns = c;
            } else {
                out->columns = 1;
            }
        }
        lines++;
        p = nl ? nl + 1 : end;
    }
    out->rows = lines - (out->header && lines ? 1 : 0);
}

size_t tfb_projector_meta_prefix(const char *data, size_t len,
                                 uint64_t num_rows)
{
    if (!num_rows)
        return len;
    const char *p = data, *end = data + len;
    const char *first_nl = memchr(data, '\n', len);
    int header = memchr(data, '\t',
                        (size_t)((first_nl ? first_nl : end) - data)) != NULL;
    uint64_t want = num_rows + (header ? 1 : 0), lines = 0;
    while (p < end && lines < want) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
        lines++;
    }
    return (size_t)(p - data);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
           (uint32_t)p[2] << 8 | p[3];
}

const char *tfb_projector_image_size(const char *data, size_t len,
                                     uint32_t *w, uint32_t *h)
{
    const unsigned char *u = (const unsigned char *)data;
    *w = *h = 0;
    if (len >= 24 && !memcmp(u, "\x89PNG\r\n\x1a\n", 8) &&
        !memcmp(u + 12, "IHDR", 4)) {
        *w = be32(u + 16);
        *h = be32(u + 20);
        return "image/png";
    }
    if (len >= 4 && u[0] == 0xFF && u[1] == 0xD8) {
        /* JPEG: walk the segments to the first start-of-frame. */
        size_t i = 2;
        while (i + 9 < len) {
            if (u[i] != 0xFF) {
                i++;
                continue;
            }
            unsigned m = u[i + 1];
            if (m == 0xFF) {
                i++;
                continue;
            }
            if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
                i += 2;
                continue;
            }
            size_t seg = (size_t)u[i + 2] << 8 | u[i + 3];
            if ((m >= 0xC0 && m <= 0xCF) && m != 0xC4 && m != 0xC8 &&
                m != 0xCC) {
                *h = (uint32_t)u[i + 5] << 8 | u[i + 6];
                *w = (uint32_t)u[i + 7] << 8 | u[i + 8];
                return "image/jpeg";
            }
            if (seg < 2)
                return NULL;
            i += 2 + seg;
        }
        return NULL;
    }
    return NULL;
}
