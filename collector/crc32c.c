/*
 * crc32c.c - CRC-32C (Castagnoli), as TFRecord framing needs it.
 *
 * Two paths: the SSE4.2 crc32 instruction (8 bytes per instruction), and a
 * slicing-by-8 table for other CPUs. The choice is made once, at load time,
 * from cpuid, so the library needs no global -msse4.2 and still runs on any
 * x86-64 (and on other architectures through the table).
 */
#include <stdint.h>
#include <string.h>

#include "collector/crc32c.h"
#include "tfboard.h"

#define CRC32C_POLY 0x82f63b78u /* reflected 0x1EDC6F41 */

static uint32_t crc_table[8][256];

static void crc_table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
                              crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc32c_table(uint32_t crc, const uint8_t *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc; /* little-endian layout assumed below */
        crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
              crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
              crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
              crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define TFB_HAVE_SSE42_PATH 1
__attribute__((target("sse4.2"))) static uint32_t
crc32c_sse42(uint32_t crc, const uint8_t *p, size_t n)
{
    /* Unaligned 8-byte loads cost nothing extra on x86-64, and records are
     * short: no alignment prologue, and the tail in 4/2/1-byte steps. */
    uint64_t c = crc;
    while (n >= 32) {
        uint64_t a, b, d, e;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        memcpy(&d, p + 16, 8);
        memcpy(&e, p + 24, 8);
        c = __builtin_ia32_crc32di(c, a);
        c = __builtin_ia32_crc32di(c, b);
        c = __builtin_ia32_crc32di(c, d);
        c = __builtin_ia32_crc32di(c, e);
        p += 32;
        n -= 32;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    if (n & 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        c32 = __builtin_ia32_crc32si(c32, w);
        p += 4;
    }
    if (n & 2) {
        uint16_t w;
        memcpy(&w, p, 2);
        c32 = __builtin_ia32_crc32hi(c32, w);
        p += 2;
    }
    if (n & 1)
        c32 = __builtin_ia32_crc32qi(c32, *p);
    return c32;
}
#endif

typedef uint32_t (*crc_fn)(uint32_t, const uint8_t *, size_t);
static crc_fn crc_impl = crc32c_table;

static inline uint32_t mask(uint32_t c)
{
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* crc32c.h's record checks, each one call (tfb_masked_crc32c was a call
 * into a call through crc_impl, 75 instructions a record of 48 bytes). */
static int len_ok_table(const uint8_t *head)
{
    return mask(~crc32c_table(~0u, head, 8)) == le32(head + 8);
}

static int data_ok_table(const uint8_t *p, size_t n)
{
    return mask(~crc32c_table(~0u, p, n)) == le32(p + n);
}

typedef int (*len_ok_fn)(const uint8_t *);
typedef int (*data_ok_fn)(const uint8_t *, size_t);
static len_ok_fn len_ok_impl = len_ok_table;
static data_ok_fn data_ok_impl = data_ok_table;

#ifdef TFB_HAVE_SSE42_PATH
__attribute__((target("sse4.2"))) static int len_ok_sse42(const uint8_t *head)
{
    uint64_t w;
    memcpy(&w, head, 8);
    uint32_t c = (uint32_t)__builtin_ia32_crc32di(0xffffffffu, w);
    return mask(~c) == le32(head + 8);
}

__attribute__((target("sse4.2"))) static int data_ok_sse42(const uint8_t *p,
                                                         size_t n)
{
    return mask(~crc32c_sse42(~0u, p, n)) == le32(p + n);
}
#endif

int tfb_tfrecord_len_ok(const uint8_t *head)
{
    return len_ok_impl(head);
}

int tfb_tfrecord_data_ok(const uint8_t *p, size_t n)
{
    return data_ok_impl(p, n);
}

/* Runs before main (and at dlopen): the table and the dispatch are ready
 * before any thread can log, so no lock or once-flag is on the hot path. */
__attribute__((constructor)) static void crc32c_init(void)
{
    crc_table_init();
#ifdef TFB_HAVE_SSE42_PATH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        crc_impl = crc32c_sse42;
        len_ok_impl = len_ok_sse42;
        data_ok_impl = data_ok_sse42;
    }
#endif
}

uint32_t tfb_crc32c(uint32_t crc, const void *buf, size_t len)
{
    return ~crc_impl(~crc, (const uint8_t *)buf, len);
}

uint32_t tfb_masked_crc32c(const void *buf, size_t len)
{
    uint32_t c = ~crc_impl(~0u, (const uint8_t *)buf, len);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

/* For tests: the table path on its own, to check both against the vectors. */
uint32_t tfb_crc32c_portable(uint32_t crc, const void *buf, size_t len);
uint32_t tfb_crc32c_portable(uint32_t crc, const void *buf, size_t len)
{
    return ~crc32c_table(~crc, (const uint8_t *)buf, len);
}
