/*
 * trace_walcopy.c - copies of trace stores whose data is still in their
 * WAL, made in the cache directory (trace_walcopy.h).
 */
#include "trace/trace_walcopy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace_cachedir.h"

/* ------------------------------------------------------------------------
 * WAL copies
 * ---------------------------------------------------------------------- */
/* Copies the whole file src to the open fd dst (copy_file_range: the
 * kernel copies, or clones on file systems that can). */
static int copy_into(const char *src, int dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int rc = 0;
    for (;;) {
        ssize_t r = copy_file_range(in, NULL, dst, NULL, (size_t)1 << 30, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                      errno == EOPNOTSUPP)) {
            /* Plain reads and writes where the kernel cannot. */
            char buf[1 << 16];
            for (;;) {
                ssize_t g = read(in, buf, sizeof buf);
                if (g < 0 && errno == EINTR)
                    continue;
                if (g <= 0) {
                    rc = g < 0 ? -1 : 0;
                    break;
                }
                for (ssize_t o = 0; o < g;) {
                    ssize_t p = write(dst, buf + o, (size_t)(g - o));
                    if (p < 0 && errno == EINTR)
                        continue;
                    if (p <= 0) {
                        rc = -1;
                        break;
                    }
                    o += p;
                }
                if (rc)
                    break;
            }
            break;
        }
        if (r < 0) {
            rc = -1;
            break;
        }
        if (r == 0)
            break;
    }
    close(in);
    return rc;
}

char *tfb_trace_wal_copy(const char *path)
{
    const char *dir = tfb_trace_colcache_dir();
    if (!dir || !path)
        return NULL;
    size_t pl = strlen(path);
    char *wal = malloc(pl + 5);
    if (!wal)
        return NULL;
    memcpy(wal, path, pl);
    memcpy(wal + pl, "-wal", 5);
    struct stat st;
    if (stat(wal, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        free(wal);
        return NULL;
    }
    /* wal-XXXXXX: no .sqlite suffix, so that nothing takes the copy for a
     * trace of its own. */
    size_t dl = strlen(dir);
    char *copy = malloc(dl + sizeof "/wal-XXXXXX" + 4);
    char *cwal = malloc(dl + sizeof "/wal-XXXXXX" + 4);
    if (!copy || !cwal) {
        free(wal);
        free(copy);
        free(cwal);
        return NULL;
    }
    snprintf(copy, dl + sizeof "/wal-XXXXXX", "%s/wal-XXXXXX", dir);
    int fd = mkstemp(copy);
    int ok = fd >= 0;
    int wfd = -1;
    if (ok) {
        snprintf(cwal, dl + sizeof "/wal-XXXXXX" + 4, "%s-wal", copy);
        wfd = open(cwal, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ok = wfd >= 0;
    }
    /* The WAL before the database: a checkpoint that runs in between
     * writes frames we also hold in the WAL copy, so the pair still reads
     * as one consistent state (SQLite checks each frame's checksum and
     * salt and stops at the last whole commit). */
    if (ok)
        ok = copy_into(wal, wfd) == 0;
    if (ok)
        ok = copy_into(path, fd) == 0;
    if (wfd >= 0)
        close(wfd);
    if (fd >= 0)
        close(fd);
    free(wal);
    if (!ok) {
        if (fd >= 0)
            unlink(copy);
        if (wfd >= 0)
            unlink(cwal);
        free(copy);
        free(cwal);
        return NULL;
    }
    free(cwal);
    return copy;
}

void tfb_trace_wal_drop(char *copy)
{
    if (!copy)
        return;
    size_t n = strlen(copy);
    char *p = malloc(n + 5);
    if (p) {
        memcpy(p, copy, n);
        memcpy(p + n, "-wal", 5);
        unlink(p);
        memcpy(p + n, "-shm", 5);
        unlink(p);
        free(p);
    }
    unlink(copy);
    free(copy);
}
