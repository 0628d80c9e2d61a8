/*
 * trace_walcopy.c - copies of trace stores whose data is still in their
 * WAL, made in the cache directory (trace_walcopy.h).
 */
#include "trace/trace_walcopy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "tfboard.h"
#include "trace/trace_cachedir.h"
#include "trace/trace_filecopy.h"

/* ------------------------------------------------------------------------
 * WAL copies
 * ---------------------------------------------------------------------- */
static const uint64_t MIB = (uint64_t)1 << 20;

/* Opens a source to copy: a regular file only (O_NONBLOCK: a FIFO put in
 * the logdir under a -wal name must not hang the load). -1 otherwise. */
static int open_source(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return -1;
    }
    return fd;
}

int tfb_trace_wal_copy(const char *path, uint64_t max_bytes, char **out)
{
    *out = NULL;
    const char *dir = tfb_trace_colcache_dir();
    if (!dir || !path)
        return 0;
    if (max_bytes == 0)
        max_bytes = TFB_TRACE_WAL_COPY_MAX_BYTES;
    size_t pl = strlen(path);
    char *wal = malloc(pl + 5);
    if (!wal)
        return TFB_ENOMEM;
    memcpy(wal, path, pl);
    memcpy(wal + pl, "-wal", 5);
    struct stat wst, dst;
    int win = open_source(wal, &wst);
    free(wal);
    if (win < 0)
        return 0; /* no WAL (or not a file SQLite would read) */
    int din = wst.st_size > 0 ? open_source(path, &dst) : -1;
    if (din < 0) {
        close(win); /* no WAL data, or no store */
        return 0;
    }
    /* wal-XXXXXX: no .sqlite suffix, so that nothing takes the copy for a
     * trace of its own. */
    size_t dl = strlen(dir);
    char *copy = malloc(dl + sizeof "/wal-XXXXXX" + 4);
    char *cwal = malloc(dl + sizeof "/wal-XXXXXX" + 4);
    int fd = -1, wfd = -1, ok = copy && cwal;
    int err = ok ? 0 : TFB_ENOMEM;
    if (ok) {
        snprintf(copy, dl + sizeof "/wal-XXXXXX", "%s/wal-XXXXXX", dir);
        fd = mkostemp(copy, O_CLOEXEC);
        ok = fd >= 0;
    }
    if (ok) {
        snprintf(cwal, dl + sizeof "/wal-XXXXXX" + 4, "%s-wal", copy);
        wfd = open(cwal, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ok = wfd >= 0;
    }
    if (!ok && !err)
        err = tfb_err_from_errno(errno);
    /* The budget: what both files hold (their data, not their sizes: a
     * sparse file costs its data only), within the copy budget and the
     * room on the cache's file system. Refused up front when they hold
     * more; tfb_trace_copy_fd's count is the bound while copying. */
    uint64_t cost = tfb_trace_copy_cost(&wst) + tfb_trace_copy_cost(&dst);
    uint64_t room = ok ? tfb_trace_copy_room(fd) : UINT64_MAX;
    if (ok && (cost > max_bytes || cost > room))
        err = TFB_ETOOBIG;
    /* The WAL before the database: a checkpoint that runs in between
     * writes frames we also hold in the WAL copy, so the pair still reads
     * as one consistent state (SQLite checks each frame's checksum and
     * salt and stops at the last whole commit). */
    uint64_t used = 0;
    if (ok && !err)
        err = tfb_trace_copy_fd(win, wfd, max_bytes, &used);
    if (ok && !err)
        err = tfb_trace_copy_fd(din, fd, max_bytes, &used);
    close(win);
    close(din);
    if (wfd >= 0)
        close(wfd);
    if (fd >= 0)
        close(fd);
    if (err == TFB_ETOOBIG) {
        /* Said in the server's log: the store is then read as without a
         * cache directory (immutable), its WAL's data not shown. */
        int budget = cost > max_bytes || room >= max_bytes;
        tfb_trace_colcache_log(
            "tfboard: %s: the data in its -wal is not shown: copying the "
            "store with it (%llu MiB of data) would pass %s (%llu MiB); "
            "see docs/trace-cache.md\n",
            path, (unsigned long long)((cost > used ? cost : used) / MIB),
            budget ? "the copy budget"
                   : "half the free space of the cache directory",
            (unsigned long long)((budget ? max_bytes : room) / MIB));
    }
    if (err) {
        if (fd >= 0)
            unlink(copy);
        if (wfd >= 0)
            unlink(cwal);
        free(copy);
        free(cwal);
        return err;
    }
    free(cwal);
    *out = copy;
    return 0;
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
