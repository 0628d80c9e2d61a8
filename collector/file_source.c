/*
 * file_source.c - a local file as a tfb_reader_source (reader_source.h):
 * regular files only, opened without blocking, read with pread at the
 * reader's offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "collector/file_source.h"

typedef struct file_source {
    int fd;
    char *path;
} file_source;

static tfb_object_id id_of(const struct stat *st)
{
    tfb_object_id id = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
    return id;
}

static void fs_release(void *ctx)
{
    file_source *f = ctx;
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

int tfb_file_open_regular(const char *path, int *fd_out, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return tfb_err_from_errno(errno);
    if (fstat(fd, st) < 0) {
        int rc = tfb_err_from_errno(errno);
        close(fd);
        return rc;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return TFB_ENOTFILE;
    }
    *fd_out = fd;
    return 0;
}

long tfb_file_pread(int fd, uint64_t off, void *buf, size_t len)
{
    for (;;) {
        ssize_t k = pread(fd, buf, len, (off_t)off);
        if (k >= 0)
            return (long)k;
        if (errno != EINTR)
            return tfb_err_from_errno(errno);
    }
}

static int fs_open(void *ctx, tfb_object_id *id, uint64_t *size)
{
    file_source *f = ctx;
    fs_release(f);
    struct stat st;
    int rc = tfb_file_open_regular(f->path, &f->fd, &st);
    if (rc < 0) {
        f->fd = -1;
        return rc;
    }
    *id = id_of(&st);
    *size = (uint64_t)st.st_size;
    return 0;
}

static int fs_stat(void *ctx, tfb_object_id *id, uint64_t *size)
{
    file_source *f = ctx;
    struct stat st;
    if (stat(f->path, &st) < 0)
        return tfb_err_from_errno(errno);
    if (!S_ISREG(st.st_mode))
        return TFB_ENOTFILE;
    *id = id_of(&st);
    *size = (uint64_t)st.st_size;
    return 0;
}

static long fs_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
    file_source *f = ctx;
    return tfb_file_pread(f->fd, off, buf, len);
}

static void fs_destroy(void *ctx)
{
    file_source *f = ctx;
    fs_release(f);
    free(f->path);
    free(f);
}

int tfb_file_source_make(const char *path, tfb_reader_source *out)
{
    file_source *f = calloc(1, sizeof *f);
    if (!f)
        return TFB_ENOMEM;
    f->fd = -1;
    f->path = strdup(path);
    if (!f->path) {
        free(f);
        return TFB_ENOMEM;
    }
    *out = (tfb_reader_source){f, fs_open, fs_stat, fs_read_at, fs_release,
                               fs_destroy};
    return 0;
}
