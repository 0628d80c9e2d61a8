/*
 * gpu_file.c - whole trace files, gzip'ed or not, with a cap on their
 * inflated size (gpu_file.h).
 */
#include "plugins/gpu/gpu_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "tfboard.h"

int tfb_gpu_read_text(const char *path, size_t max, char **out, size_t *len)
{
    /* gzread passes uncompressed files through unchanged. */
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT ? TFB_ENOENT : TFB_EIO;
    /* JSON traces compress 5-30x; far more is a bomb, refused early (past
     * 64 MiB) instead of at the absolute cap. */
    uint64_t ratio_cap = (uint64_t)st.st_size * TFB_GPU_MAX_RATIO;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return errno == ENOENT ? TFB_ENOENT : TFB_EIO;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    int rc = buf ? 0 : TFB_ENOMEM;
    while (rc == 0) {
        if (n == cap) {
            if (cap >= max) {
                rc = TFB_ETOOBIG;
                break;
            }
            size_t nc = cap * 2 < max ? cap * 2 : max;
            char *nb = realloc(buf, nc + 1);
            if (!nb) {
                rc = TFB_ENOMEM;
                break;
            }
            buf = nb;
            cap = nc;
        }
        size_t room = cap - n;
        int r = gzread(f, buf + n, (unsigned)(room > (1u << 30) ? 1u << 30
                                                                : room));
        if (r < 0) {
            rc = TFB_ECORRUPT; /* a damaged .gz */
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > ((size_t)64 << 20) && n > ratio_cap) {
            rc = TFB_ETOOBIG;
            break;
        }
    }
    gzclose(f);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

/* Appends "path|size|mtime_ns|" to *sig; frees it and sets NULL on
 * ENOMEM. */
static void sig_add(char **sig, size_t *len, const char *path)
{
    struct stat st;
    char buf[128];
    long long size = -1, mt = -1;
    if (stat(path, &st) == 0) {
        size = (long long)st.st_size;
        mt = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
    int k = snprintf(buf, sizeof buf, "|%lld|%lld|", size, mt);
    size_t pl = strlen(path);
    char *ns = realloc(*sig, *len + pl + (size_t)k + 1);
    if (!ns) {
        free(*sig);
        *sig = NULL;
        return;
    }
    memcpy(ns + *len, path, pl);
    memcpy(ns + *len + pl, buf, (size_t)k + 1);
    *len += pl + (size_t)k;
    *sig = ns;
}

char *tfb_gpu_files_signature(char *const *files, size_t n)
{
    char *sig = calloc(1, 1);
    size_t len = 0;
    for (size_t i = 0; i < n && sig; i++) {
        sig_add(&sig, &len, files[i]);
        size_t pl = strlen(files[i]);
        if (sig && pl >= 7 && strcmp(files[i] + pl - 7, ".sqlite") == 0) {
            char *wal = malloc(pl + 5);
            if (!wal) {
                free(sig);
                return NULL;
            }
            memcpy(wal, files[i], pl);
            memcpy(wal + pl, "-wal", 5);
            sig_add(&sig, &len, wal);
            free(wal);
        }
    }
    return sig;
}
