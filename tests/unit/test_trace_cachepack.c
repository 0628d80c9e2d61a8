/*
 * test_trace_cachepack.c - a trace cache's bucket form
 * (trace_cachepack.h): a file of several chunks and a partial last one
 * packs into independent frames and unpacks to the same bytes, on every
 * worker count the machine gives; what a hostile bucket could hand over
 * is refused before anything is written past the bound: a flipped byte
 * (the frame's checksum), a truncation, trailing bytes, a frame without
 * its content size, a short frame before another (an unbounded frame
 * table), a frame over one chunk, an empty object, a pack that declares
 * more than the bound (TFB_ETOOBIG, nothing written).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "test_util.h"
#include "tfboard.h"
#include "trace/trace_cachepack.h"

#define CHUNK TFB_TRACE_PACK_CHUNK

static char *g_dir;

static char *path_of(const char *name)
{
    size_t n = strlen(g_dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", g_dir, name);
    return p;
}

/* Cache-like bytes: sorted timestamps and small ids, with some noise so
 * that zstd has real work. */
static uint8_t *cache_like(size_t n)
{
    uint8_t *b = malloc(n);
    assert_non_null(b);
    uint64_t t = 1700000000000000000ull;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        t += 1000 + (uint64_t)(tu_uniform() * 64);
        memcpy(b + i, &t, 8);
    }
    for (size_t i = n & ~(size_t)7; i < n; i++)
        b[i] = (uint8_t)i;
    return b;
}

/* Unpacks src into a new file; its bytes (malloc'd) or NULL, and rc. */
static uint8_t *unpack(const char *src, uint64_t max_raw, int *rc,
                       size_t *len, struct stat *st)
{
    char *out = path_of("out");
    unlink(out);
    int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    uint64_t raw = 0;
    *rc = tfb_trace_cachepack_unpack(src, fd, max_raw, &raw);
    close(fd);
    stat(out, st);
    uint8_t *b = *rc == 0 ? tu_read_file(out, len) : NULL;
    if (*rc == 0)
        assert_int_equal(raw, *len);
    free(out);
    return b;
}

static void test_round_trip(void **state)
{
    (void)state;
    size_t n = 3 * CHUNK + 12345;
    uint8_t *data = cache_like(n);
    char *src = path_of("cache"), *packed = path_of("cache.zst");
    assert_int_equal(tu_write_file(src, data, n), 0);
    uint64_t pn = 0;
    assert_int_equal(tfb_trace_cachepack_pack(src, packed, &pn), 0);
    struct stat st;
    assert_int_equal(stat(packed, &st), 0);
    assert_int_equal((uint64_t)st.st_size, pn);
    assert_true(pn < n / 2); /* it packs */
    /* four independent frames: three whole chunks and the rest */
    size_t zn;
    uint8_t *z = tu_read_file(packed, &zn);
    size_t off = 0, frames = 0;
    while (off < zn) {
        size_t fl = ZSTD_findFrameCompressedSize(z + off, zn - off);
        assert_false(ZSTD_isError(fl));
        unsigned long long cs = ZSTD_getFrameContentSize(z + off, fl);
        assert_int_equal(cs, frames < 3 ? CHUNK : 12345);
        off += fl;
        frames++;
    }
    assert_int_equal(frames, 4);
    uint64_t raw = 0;
    assert_int_equal(tfb_trace_cachepack_size(packed, n, &raw), 0);
    assert_int_equal(raw, n);
    int rc;
    size_t len;
    uint8_t *back = unpack(packed, n, &rc, &len, &st);
    assert_int_equal(rc, 0);
    assert_int_equal(len, n);
    assert_memory_equal(back, data, n);
    /* one byte less of bound: refused before a byte is written */
    back = (free(back), unpack(packed, n - 1, &rc, &len, &st));
    assert_int_equal(rc, TFB_ETOOBIG);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(tfb_trace_cachepack_size(packed, n - 1, &raw),
                     TFB_ETOOBIG);
    free(z);
    free(data);
    free(src);
    free(packed);
}

/* Writes body to a file and expects unpack to refuse it with want. */
static void refused(const void *body, size_t n, int want)
{
    char *p = path_of("bad.zst");
    assert_int_equal(tu_write_file(p, body, n), 0);
    int rc;
    size_t len;
    struct stat st;
    uint8_t *b = unpack(p, (uint64_t)8 * CHUNK, &rc, &len, &st);
    assert_null(b);
    assert_int_equal(rc, want);
    free(p);
}

/* One zstd frame of data, with or without its content size. */
static uint8_t *frame_of(const void *data, size_t n, int with_size,
                         size_t *out)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t cap = ZSTD_compressBound(n);
    uint8_t *z = malloc(cap);
    size_t got;
    if (with_size) {
        got = ZSTD_compress2(cc, z, cap, data, n);
    } else {
        /* streamed with no pledged size (its input given before the
         * end, not in the call that ends it: then zstd would know the
         * size): the frame says nothing of it */
        ZSTD_inBuffer in = {data, n, 0};
        ZSTD_outBuffer o = {z, cap, 0};
        got = ZSTD_compressStream2(cc, &o, &in, ZSTD_e_continue);
        assert_false(ZSTD_isError(got));
        ZSTD_inBuffer none = {NULL, 0, 0};
        got = ZSTD_compressStream2(cc, &o, &none, ZSTD_e_end);
        assert_int_equal(got, 0);
        got = o.pos;
        assert_int_equal(ZSTD_getFrameContentSize(z, got),
                         ZSTD_CONTENTSIZE_UNKNOWN);
    }
    assert_false(ZSTD_isError(got));
    ZSTD_freeCCtx(cc);
    *out = got;
    return z;
}

static void test_hostile_objects(void **state)
{
    (void)state;
    size_t n = 2 * CHUNK + 999;
    uint8_t *data = cache_like(n);
    char *src = path_of("c2"), *packed = path_of("c2.zst");
    assert_int_equal(tu_write_file(src, data, n), 0);
    assert_int_equal(tfb_trace_cachepack_pack(src, packed, NULL), 0);
    size_t zn;
    uint8_t *z = tu_read_file(packed, &zn);
    /* a flipped byte in the middle: the frame's checksum or its parse */
    uint8_t *bad = malloc(zn + 8);
    memcpy(bad, z, zn);
    bad[zn / 2] ^= 0x40;
    refused(bad, zn, TFB_ECORRUPT);
    /* truncations, and bytes after the last frame */
    refused(z, zn / 3, TFB_ECORRUPT);
    refused(z, zn - 1, TFB_ECORRUPT);
    memcpy(bad, z, zn);
    memcpy(bad + zn, "trailing", 8);
    refused(bad, zn + 8, TFB_ECORRUPT);
    refused(z, 0, TFB_ECORRUPT);
    /* a frame that does not say its size */
    size_t fl;
    uint8_t *f = frame_of(data, 1000, 0, &fl);
    refused(f, fl, TFB_ECORRUPT);
    free(f);
    /* a short frame followed by another: the table would be unbounded */
    f = frame_of(data, 1000, 1, &fl);
    uint8_t *two = malloc(2 * fl);
    memcpy(two, f, fl);
    memcpy(two + fl, f, fl);
    refused(two, 2 * fl, TFB_ECORRUPT);
    /* ...while the one short frame alone is a sound (small) pack */
    char *one = path_of("one.zst");
    assert_int_equal(tu_write_file(one, f, fl), 0);
    int rc;
    size_t len;
    struct stat st;
    uint8_t *back = unpack(one, CHUNK, &rc, &len, &st);
    assert_int_equal(rc, 0);
    assert_int_equal(len, 1000);
    assert_memory_equal(back, data, 1000);
    free(back);
    free(one);
    free(two);
    free(f);
    /* a frame over one chunk */
    f = frame_of(data, CHUNK + 1, 1, &fl);
    refused(f, fl, TFB_ECORRUPT);
    free(f);
    free(bad);
    free(z);
    free(data);
    free(src);
    free(packed);
}

static void test_missing_source(void **state)
{
    (void)state;
    char *src = path_of("nope"), *packed = path_of("nope.zst");
    assert_int_equal(tfb_trace_cachepack_pack(src, packed, NULL), TFB_ENOENT);
    assert_int_equal(access(packed, F_OK), -1); /* nothing left behind */
    uint64_t raw;
    assert_int_equal(tfb_trace_cachepack_size(src, CHUNK, &raw), TFB_ENOENT);
    free(src);
    free(packed);
}

int main(void)
{
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_hostile_objects),
        cmocka_unit_test(test_missing_source),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    free(g_dir);
    return rc;
}
