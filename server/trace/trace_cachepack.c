/*
 * trace_cachepack.c - a trace cache's bucket form: independent zstd
 * frames of one chunk each, packed and unpacked by several threads
 * (trace_cachepack.h says why and what is bounded).
 */
#include "trace/trace_cachepack.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/errors.h"
#include "base/vec.h"
#include "trace/trace_filecopy.h"
#include "tfboard.h"

/* zstd's fastest level: the cache is packed once, after the trace
 * answered, and level 1 already takes most of what a higher one would
 * (4.4x here), at ~500 MB/s a core. */
#define PACK_LEVEL 1

static int threads_for(uint64_t chunks)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t n = cpus > 0 ? (uint64_t)cpus : 1;
    if (n > TFB_TRACE_PACK_THREADS)
        n = TFB_TRACE_PACK_THREADS;
    if (n > chunks)
        n = chunks;
    return n ? (int)n : 1;
}

/* Runs fn(job) on n workers (threads_for): n - 1 threads and this one,
 * which returns once every worker has. A thread that cannot start leaves
 * its share to the others. */
static void run_workers(void *(*fn)(void *), void *job, int n)
{
    pthread_t th[TFB_TRACE_PACK_THREADS];
    int started = 0;
    for (int i = 1; i < n && i < TFB_TRACE_PACK_THREADS; i++)
        if (pthread_create(&th[started], NULL, fn, job) == 0)
            started++;
    fn(job);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* A read-only map of a whole file (NULL for an empty one). */
static int map_file(const char *path, const unsigned char **p, uint64_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tfb_err_from_errno(errno);
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? tfb_err_from_errno(errno) : 0;
    *p = NULL;
    *n = rc == 0 ? (uint64_t)st.st_size : 0;
    if (rc == 0 && *n) {
        void *m = mmap(NULL, (size_t)*n, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            rc = TFB_ENOMEM;
        else
            *p = m;
    }
    close(fd);
    return rc;
}

/* ------------------------------------------------------------------------
 * Pack: each worker takes the next chunk, compresses it into its own
 * buffer, and appends it when its turn comes, so the frames are written
 * in order while the workers compress side by side.
 * ---------------------------------------------------------------------- */
typedef struct pack_job {
    const unsigned char *src;
    uint64_t src_n, chunks;
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t turn;
    uint64_t next;    /* next chunk to take */
    uint64_t written; /* chunks written so far, in order */
    uint64_t out_off; /* dst's bytes so far */
    int err;
} pack_job;

static void *pack_main(void *arg)
{
    pack_job *j = arg;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    size_t cap = ZSTD_compressBound((size_t)TFB_TRACE_PACK_CHUNK);
    void *buf = malloc(cap);
    int err = !cc || !buf ? TFB_ENOMEM : 0;
    if (!err &&
        (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
                                             PACK_LEVEL)) ||
         ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)) ||
         ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1))))
        err = TFB_ENOMEM;
    pthread_mutex_lock(&j->mu);
    if (err && !j->err)
        j->err = err;
    for (;;) {
        if (j->err || j->next >= j->chunks)
            break;
        uint64_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        uint64_t off = i * TFB_TRACE_PACK_CHUNK;
        uint64_t len = j->src_n - off < TFB_TRACE_PACK_CHUNK
                           ? j->src_n - off
                           : TFB_TRACE_PACK_CHUNK;
        size_t got = ZSTD_compress2(cc, buf, cap, j->src + off, (size_t)len);
        pthread_mutex_lock(&j->mu);
        /* chunks are taken in order, so the one written next is always
         * some worker's: waiting for it cannot deadlock */
        while (!j->err && j->written != i)
            pthread_cond_wait(&j->turn, &j->mu);
        if (!j->err) {
            int rc = ZSTD_isError(got) ? TFB_ENOMEM
                                       : tfb_trace_pwrite_full(j->fd, buf, got, j->out_off);
            if (rc)
                j->err = rc;
            j->out_off += got;
            j->written++;
        }
        pthread_cond_broadcast(&j->turn);
    }
    pthread_cond_broadcast(&j->turn);
    pthread_mutex_unlock(&j->mu);
    ZSTD_freeCCtx(cc);
    free(buf);
    return NULL;
}

int tfb_trace_cachepack_pack(const char *src, const char *dst,
                             uint64_t *packed)
{
    if (packed)
        *packed = 0;
    const unsigned char *p;
    uint64_t n;
    int rc = map_file(src, &p, &n);
    if (rc < 0)
        return rc;
    int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = tfb_err_from_errno(errno);
        if (p)
            munmap((void *)p, (size_t)n);
        return rc;
    }
    pack_job j = {.src = p, .src_n = n, .fd = fd};
    j.chunks = (n + TFB_TRACE_PACK_CHUNK - 1) / TFB_TRACE_PACK_CHUNK;
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.turn, NULL);
    run_workers(pack_main, &j, threads_for(j.chunks));
    rc = j.err;
    pthread_mutex_destroy(&j.mu);
    pthread_cond_destroy(&j.turn);
    if (p)
        munmap((void *)p, (size_t)n);
    if (close(fd) != 0 && rc == 0)
        rc = tfb_err_from_errno(errno);
    if (rc < 0)
        unlink(dst);
    else if (packed)
        *packed = j.out_off;
    return rc;
}

/* ------------------------------------------------------------------------
 * Unpack: the frames are walked and bounded first; then the workers
 * decode them in any order, each into its place in dst.
 * ---------------------------------------------------------------------- */
typedef struct frame {
    uint64_t off, len;     /* in the packed file */
    uint64_t raw_off, raw; /* in the unpacked one */
} frame;
typedef TFB_VEC(frame) frame_vec;

typedef struct unpack_job {
    const unsigned char *src;
    const frame *frames;
    uint64_t count;
    int fd;
    pthread_mutex_t mu;
    uint64_t next;
    int err;
} unpack_job;

static void *unpack_main(void *arg)
{
    unpack_job *j = arg;
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    void *buf = malloc((size_t)TFB_TRACE_PACK_CHUNK);
    int err = !dc || !buf ? TFB_ENOMEM : 0;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        if (err && !j->err)
            j->err = err;
        uint64_t i = j->next++;
        int stop = j->err || i >= j->count;
        pthread_mutex_unlock(&j->mu);
        if (stop)
            break;
        const frame *f = &j->frames[i];
        /* the buffer holds one chunk: a frame that decodes to more (or
         * to other than it declared) fails here, whatever it claims */
        size_t got = ZSTD_decompressDCtx(dc, buf, (size_t)TFB_TRACE_PACK_CHUNK,
                                         j->src + f->off, (size_t)f->len);
        if (ZSTD_isError(got) || got != f->raw)
            err = TFB_ECORRUPT;
        else
            err = tfb_trace_pwrite_full(j->fd, buf, got, f->raw_off);
    }
    ZSTD_freeDCtx(dc);
    free(buf);
    return NULL;
}

/* The walk: every frame parses and declares its size, a whole chunk but
 * for the last (as packed), so the sizes sum within the bound and the
 * table holds max_raw / chunk + 1 frames at most, whatever the object.
 * out (NULL: only sized) gets the frames, *total what they hold. */
static int walk(const unsigned char *p, uint64_t n, uint64_t max_raw,
                frame_vec *out, uint64_t *total_out)
{
    uint64_t count = 0, total = 0, last = 0;
    int rc = n == 0 ? TFB_ECORRUPT : 0; /* a cache file is never empty */
    for (uint64_t off = 0; off < n && rc == 0;) {
        size_t len = ZSTD_findFrameCompressedSize(p + off, (size_t)(n - off));
        unsigned long long sz =
            ZSTD_isError(len) ? ZSTD_CONTENTSIZE_ERROR
                              : ZSTD_getFrameContentSize(p + off, len);
        if (ZSTD_isError(len) || sz == ZSTD_CONTENTSIZE_ERROR ||
            sz == ZSTD_CONTENTSIZE_UNKNOWN || sz == 0 ||
            sz > TFB_TRACE_PACK_CHUNK ||
            (count && last != TFB_TRACE_PACK_CHUNK)) {
            rc = TFB_ECORRUPT;
            break;
        }
        if (total + sz > max_raw) {
            rc = TFB_ETOOBIG;
            break;
        }
        frame f = {off, len, total, sz};
        if (out && tfb_vec_push(out, f) < 0) {
            rc = TFB_ENOMEM;
            break;
        }
        count++;
        last = sz;
        total += sz;
        off += len;
    }
    *total_out = rc == 0 ? total : 0;
    return rc;
}

int tfb_trace_cachepack_size(const char *src, uint64_t max_raw,
                             uint64_t *raw)
{
    *raw = 0;
    const unsigned char *p;
    uint64_t n;
    int rc = map_file(src, &p, &n);
    if (rc < 0)
        return rc;
    rc = walk(p, n, max_raw, NULL, raw);
    if (p)
        munmap((void *)p, (size_t)n);
    return rc;
}

int tfb_trace_cachepack_unpack(const char *src, int dst_fd, uint64_t max_raw,
                               uint64_t *raw)
{
    if (raw)
        *raw = 0;
    const unsigned char *p;
    uint64_t n, total;
    int rc = map_file(src, &p, &n);
    if (rc < 0)
        return rc;
    frame_vec fr = {0};
    rc = walk(p, n, max_raw, &fr, &total);
    /* The file's whole size first: a full disk shows here, before any
     * decoding (and the unpacked file is never sparse). */
    if (rc == 0) {
        int e = posix_fallocate(dst_fd, 0, (off_t)total);
        if (e == ENOSPC || e == EFBIG)
            rc = TFB_ENOSPC;
        else if (e != 0 && e != EOPNOTSUPP && e != EINVAL)
            rc = tfb_err_from_errno(e);
    }
    if (rc == 0) {
        unpack_job j = {.src = p, .frames = fr.v, .count = fr.n, .fd = dst_fd};
        pthread_mutex_init(&j.mu, NULL);
        run_workers(unpack_main, &j, threads_for(fr.n));
        pthread_mutex_destroy(&j.mu);
        rc = j.err;
    }
    tfb_vec_free(&fr);
    if (p)
        munmap((void *)p, (size_t)n);
    if (rc == 0 && raw)
        *raw = total;
    return rc;
}
