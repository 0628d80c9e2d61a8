/*
 * gpu_file.c - whole trace files, gzip'ed or not, with a cap on their
 * inflated size (gpu_file.h).
 */
#include "gpu_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
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
