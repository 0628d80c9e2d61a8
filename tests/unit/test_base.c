/* test_base.c - the shared base (base/): hash, string table, vec, byte
 * string, string copy, JSON string literals, monotonic deadlines, UTF-8
 * cuts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/deadline.h"
#include "base/hash.h"
#include "base/idxtab.h"
#include "base/json_str.h"
#include "base/natural.h"
#include "base/select.h"
#include "base/str.h"
#include "base/strtab.h"
#include "base/utf8.h"
#include "base/vec.h"

static void hash_basics(void **state)
{
    (void)state;
    assert_true(tfb_hash_bytes("abc", 3) == tfb_hash_str("abc"));
    assert_true(tfb_hash_bytes("", 0) == tfb_hash_str(""));
    assert_true(tfb_hash_bytes(NULL, 0) != 0);
    assert_true(tfb_hash_bytes("abc", 3) != tfb_hash_bytes("abd", 3));
    assert_true(tfb_hash_bytes("a\0b", 3) != tfb_hash_bytes("a\0c", 3));
    /* The low bits index the tables: keys that differ only in a high bit
     * of one byte still spread over the low bits. */
    unsigned seen = 0;
    for (int c = 0; c < 8; c++) {
        char k[2] = {'x', (char)(c << 5)};
        seen |= 1u << (tfb_hash_bytes(k, 2) & 15);
    }
    assert_true(__builtin_popcount(seen) >= 4);
    /* FNV-1a 64 with its published constants: the published vectors
     * FNV1a("a") = 0xaf63dc4c8601ec8c and FNV1a("foobar") =
     * 0x85944171f73967e8, each through fmix64. (The offset basis once
     * lacked its last digit: the hash still worked, but was not FNV.) */
    assert_true(tfb_hash_str("a") == 0x82a2a958a9bece5bull);
    assert_true(tfb_hash_str("foobar") == 0x2c22194922d1672bull);
}

static void strtab_many(void **state)
{
    (void)state;
    enum { N = 100000 };
    char (*keys)[16] = malloc(N * sizeof *keys);
    assert_non_null(keys);
    tfb_strtab t = {0};
    assert_null(tfb_strtab_get(&t, "x", 1)); /* empty table */
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        assert_int_equal(tfb_strtab_put(&t, keys[i], strlen(keys[i]),
                                        &keys[i]), 0);
    }
    assert_int_equal(t.count, N);
    assert_true(t.count * 10 <= t.cap * 7); /* load factor kept */
    for (int i = 0; i < N; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i); /* another buffer, same bytes */
        assert_ptr_equal(tfb_strtab_get(&t, k, strlen(k)), &keys[i]);
    }
    assert_null(tfb_strtab_get(&t, "k", 1));
    assert_null(tfb_strtab_get(&t, "k1", 1 + 1 + 1)); /* "k1\0" */
    /* a prefix of a key is another key */
    assert_ptr_equal(tfb_strtab_get(&t, "k12345", 2), &keys[1]);
    /* put on an existing key replaces its value, count unchanged */
    int other;
    assert_int_equal(tfb_strtab_put(&t, "k7", 2, &other), 0);
    assert_ptr_equal(tfb_strtab_get(&t, "k7", 2), &other);
    assert_int_equal(t.count, N);
    assert_int_equal(tfb_strtab_put(&t, "k8", 2, NULL), -1);
    tfb_strtab_free(&t);
    assert_int_equal(t.count, 0);
    assert_null(tfb_strtab_get(&t, "k1", 2));
    free(keys);
}

static void strtab_odd_keys(void **state)
{
    (void)state;
    tfb_strtab t = {0};
    int a, b, c;
    assert_int_equal(tfb_strtab_put(&t, "", 0, &a), 0);
    assert_int_equal(tfb_strtab_put(&t, "x\0y", 3, &b), 0);
    assert_int_equal(tfb_strtab_put(&t, "x", 1, &c), 0);
    assert_ptr_equal(tfb_strtab_get(&t, "", 0), &a);
    assert_ptr_equal(tfb_strtab_get(&t, "x\0y", 3), &b);
    assert_ptr_equal(tfb_strtab_get(&t, "x", 1), &c);
    assert_null(tfb_strtab_get(&t, "x\0z", 3));
    /* reserve: room for 1000 keys, then inserting them does not grow */
    assert_int_equal(tfb_strtab_reserve(&t, 1000), 0);
    size_t cap = t.cap;
    static char keys[997][8];
    for (int i = 0; i < 997; i++) {
        snprintf(keys[i], sizeof keys[i], "%d", i);
        assert_int_equal(tfb_strtab_put(&t, keys[i], strlen(keys[i]), &a), 0);
    }
    assert_int_equal(t.count, 1000);
    assert_int_equal(t.cap, cap);
    tfb_strtab_free(&t);
}

typedef struct { double x; int tag; } vec_item;

static void vec_typed(void **state)
{
    (void)state;
    TFB_VEC(vec_item) a = {0};
    size_t grows = 0;
    for (int i = 0; i < 50000; i++) {
        size_t before = a.cap;
        vec_item it = {i * 0.5, i};
        assert_int_equal(tfb_vec_push(&a, it), 0);
        grows += a.cap != before;
    }
    assert_int_equal(a.n, 50000);
    assert_true(grows <= 13); /* doubling from 16 */
    for (int i = 0; i < 50000; i++)
        assert_int_equal(a.v[i].tag, i);
    vec_item *z = tfb_vec_add(&a);
    assert_non_null(z);
    assert_int_equal(z->tag, 0); /* zeroed */
    assert_int_equal(a.n, 50001);
    /* overflow of need * sizeof: refused, vector unchanged */
    vec_item *keep = a.v;
    size_t kc = a.cap, kn = a.n;
    assert_int_equal(tfb_vec_need(&a, SIZE_MAX / 4), -1);
    assert_ptr_equal(a.v, keep);
    assert_int_equal(a.cap, kc);
    assert_int_equal(a.n, kn);
    tfb_vec_trim(&a);
    assert_int_equal(a.cap, a.n);
    assert_int_equal(a.v[50000 - 1].tag, 49999);
    tfb_vec_free(&a);
    assert_null(a.v);
    assert_int_equal(a.n + a.cap, 0);
}

static void vec_growth(void **state)
{
    (void)state;
    TFB_VEC(int) a = {0};
    size_t grows = 0;
    for (size_t n = 0; n < 100000; n++) {
        size_t before = a.cap;
        assert_int_equal(tfb_vec_need(&a, n + 1), 0);
        grows += a.cap != before;
        a.v[a.n++] = (int)n;
    }
    assert_true(grows <= 14); /* doubling from 16: log2(100000/16) + 1 */
    for (size_t n = 0; n < 100000; n++)
        assert_int_equal(a.v[n], (int)n);
    /* overflow of need * elem: refused, array untouched */
    typedef struct { char b[16]; } sixteen;
    TFB_VEC(sixteen) big = {0};
    assert_int_equal(tfb_vec_need(&big, 4), 0);
    void *keep = big.v;
    size_t kc = big.cap;
    assert_int_equal(tfb_vec_need(&big, SIZE_MAX / 8), -1);
    assert_ptr_equal(big.v, keep);
    assert_int_equal(big.cap, kc);
    assert_int_equal(tfb_vec_need(&big, 10), 0);
    assert_int_equal(big.cap, kc); /* already enough */
    tfb_vec_free(&big);
    tfb_vec_free(&a);
    /* large elements: the first block is at most 4 KiB (at least one),
     * then doubling as for any other */
    typedef struct { char b[1200]; } record;
    TFB_VEC(record) rec = {0};
    assert_int_equal(tfb_vec_need(&rec, 1), 0);
    assert_int_equal(rec.cap, 3);
    assert_int_equal(tfb_vec_need(&rec, 4), 0);
    assert_int_equal(rec.cap, 6);
    tfb_vec_free(&rec);
    typedef struct { char b[5000]; } huge;
    TFB_VEC(huge) h = {0};
    assert_int_equal(tfb_vec_need(&h, 1), 0);
    assert_int_equal(h.cap, 1);
    assert_int_equal(tfb_vec_need(&h, 2), 0);
    assert_int_equal(h.cap, 2);
    tfb_vec_free(&h);
}

static void vec_setcap(void **state)
{
    (void)state;
    TFB_VEC(int) a = {0};
    assert_int_equal(tfb_vec_setcap(&a, 1000), 0);
    assert_int_equal(a.cap, 1000); /* exactly, not the next power of two */
    for (int i = 0; i < 1000; i++)
        a.v[a.n++] = i;
    assert_int_equal(tfb_vec_need(&a, 1000), 0);
    assert_int_equal(a.cap, 1000); /* room enough: unchanged */
    assert_int_equal(tfb_vec_setcap(&a, 1500), 0);
    assert_int_equal(a.cap, 1500);
    a.n = 10;
    assert_int_equal(tfb_vec_setcap(&a, 10), 0); /* shrinks */
    assert_int_equal(a.cap, 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(a.v[i], i);
    /* count * sizeof overflowing: refused, vector unchanged */
    int *keep = a.v;
    assert_int_equal(tfb_vec_setcap(&a, SIZE_MAX / 2), -1);
    assert_ptr_equal(a.v, keep);
    assert_int_equal(a.cap, 10);
    assert_int_equal(a.n, 10);
    a.n = 0;
    assert_int_equal(tfb_vec_setcap(&a, 0), 0); /* one kept, not freed */
    assert_non_null(a.v);
    assert_int_equal(a.cap, 1);
    tfb_vec_free(&a);
}

static void array_resize(void **state)
{
    (void)state;
    /* Two columns sharing one capacity, as a store series keeps them. */
    int64_t *step = NULL;
    double *wall = NULL;
    size_t cap = 0;
    for (size_t n = 0; n < 5000; n++) {
        if (n == cap) {
            size_t nc = cap ? cap + cap / 2 : 4;
            assert_int_equal(tfb_array_resize(&step, nc), 0);
            assert_int_equal(tfb_array_resize(&wall, nc), 0);
            cap = nc;
        }
        step[n] = (int64_t)n;
        wall[n] = (double)n / 2;
    }
    assert_int_equal(tfb_array_resize(&step, 5000), 0); /* trim */
    for (size_t n = 0; n < 5000; n++) {
        assert_int_equal(step[n], (int64_t)n);
        assert_true(wall[n] == (double)n / 2);
    }
    int64_t *keep = step;
    assert_int_equal(tfb_array_resize(&step, SIZE_MAX / 4), -1);
    assert_ptr_equal(step, keep); /* refused: unchanged */
    assert_int_equal(step[4999], 4999);
    free(step);
    free(wall);
}

static void buf_strings(void **state)
{
    (void)state;
    tfb_buf b = {0};
    tfb_buf_puts(&b, "GET ");
    tfb_buf_put(&b, "/a\0b", 2);
    tfb_buf_put(&b, NULL, 0);
    assert_false(b.failed);
    assert_int_equal(b.n, 6);
    assert_string_equal(b.v, "GET /a"); /* a NUL after the bytes */
    tfb_buf_put(&b, "x\0y", 3);         /* NUL bytes inside are kept */
    assert_int_equal(b.n, 9);
    assert_memory_equal(b.v + 6, "x\0y\0", 4);
    for (int i = 0; i < 10000; i++)
        tfb_buf_puts(&b, "0123456789");
    assert_int_equal(b.n, 9 + 100000);
    assert_int_equal(b.v[b.n], 0);
    assert_memory_equal(b.v + b.n - 10, "0123456789", 10);
    size_t n = b.n;
    char *s = tfb_buf_take(&b);
    assert_non_null(s);
    assert_int_equal(strlen(s), 7); /* "GET /ax", up to the NUL of "x\0y" */
    assert_memory_equal(s + n - 10, "0123456789", 10);
    free(s);
    assert_null(b.v); /* taken: empty and reusable */
    assert_int_equal(b.n + b.cap, 0);

    /* Nothing appended: "" rather than NULL. */
    s = tfb_buf_take(&b);
    assert_string_equal(s, "");
    free(s);

    /* An append that cannot fit (its size overflows) fails the buffer:
     * later appends do nothing, take gives NULL and frees the bytes. */
    tfb_buf_puts(&b, "kept");
    tfb_buf_put(&b, "x", SIZE_MAX - 2);
    assert_true(b.failed);
    assert_int_equal(b.n, 4);
    assert_string_equal(b.v, "kept"); /* the bytes before stay */
    tfb_buf_puts(&b, "more");
    assert_int_equal(b.n, 4);
    assert_null(tfb_buf_take(&b));
    assert_false(b.failed);
    assert_null(b.v);
    tfb_buf_puts(&b, "again");
    assert_string_equal(b.v, "again");
    tfb_buf_free(&b);
    assert_null(b.v);
}

/* Keys that are the bytes of a pointer held in the value (how run_status
 * and the CUPTI name table key by address): found by a copy of the
 * pointer, never confused with another's. */
static void strtab_pointer_keys(void **state)
{
    (void)state;
    typedef struct entry {
        const void *key;
        int n;
    } entry;
    enum { N = 5000 };
    static int objects[N];
    entry *e = calloc(N, sizeof *e);
    assert_non_null(e);
    tfb_strtab t = {0};
    for (int i = 0; i < N; i++) {
        e[i].key = &objects[i];
        e[i].n = i;
        assert_int_equal(
            tfb_strtab_put(&t, (const char *)&e[i].key, sizeof e[i].key,
                           &e[i]),
            0);
    }
    for (int i = N; i-- > 0;) {
        const void *p = &objects[i]; /* a copy, at another address */
        entry *hit = tfb_strtab_get(&t, (const char *)&p, sizeof p);
        assert_non_null(hit);
        assert_int_equal(hit->n, i);
    }
    int other;
    const void *q = &other;
    assert_null(tfb_strtab_get(&t, (const char *)&q, sizeof q));
    tfb_strtab_free(&t);
    free(e);
}

static void str_copies(void **state)
{
    (void)state;
    char *a = tfb_strndup("hello world", 5);
    assert_string_equal(a, "hello");
    free(a);
    char *b = tfb_strndup(NULL, 0);
    assert_string_equal(b, "");
    free(b);
    char *c = tfb_strndup("a\0b", 3);
    assert_memory_equal(c, "a\0b\0", 4);
    free(c);
    char *d = tfb_strdup("tag/x");
    assert_string_equal(d, "tag/x");
    free(d);
}

/* A text cut to a byte bound keeps whole characters: a message about a
 * key of non-ASCII names never ends in half a character. */
static void utf8_cut_and_copy(void **state)
{
    (void)state;
    const char *snow = "ab\xe2\x98\x83"; /* "ab" U+2603: 5 bytes */
    assert_int_equal(tfb_utf8_cut(snow, 5), 5);
    assert_int_equal(tfb_utf8_cut(snow, 4), 2); /* inside the snowman */
    assert_int_equal(tfb_utf8_cut(snow, 3), 2);
    assert_int_equal(tfb_utf8_cut(snow, 2), 2);
    assert_int_equal(tfb_utf8_cut(snow, 0), 0);
    const char *four = "\xf0\x9f\x98\x80"; /* U+1F600 */
    for (size_t n = 1; n < 4; n++)
        assert_int_equal(tfb_utf8_cut(four, n), 0);
    assert_int_equal(tfb_utf8_cut(four, 4), 4);
    assert_int_equal(tfb_utf8_cut("\xc3\xa9", 1), 0); /* U+00E9 */
    /* other invalid bytes stay, for the writer's U+FFFD rule */
    assert_int_equal(tfb_utf8_cut("a\xff", 2), 2);
    assert_int_equal(tfb_utf8_cut("a\x80\x80", 3), 3);

    char buf[6];
    assert_int_equal(
        tfb_utf8_copy(buf, sizeof buf, "ab\xe2\x98\x83" "cd"), 5);
    assert_string_equal(buf, "ab\xe2\x98\x83");
    assert_int_equal(tfb_utf8_copy(buf, 5, "ab\xe2\x98\x83" "cd"), 2);
    assert_string_equal(buf, "ab");
    /* a source already cut in half a character loses that half */
    assert_int_equal(tfb_utf8_copy(buf, sizeof buf, "x\xe2\x98"), 1);
    assert_string_equal(buf, "x");
    assert_int_equal(tfb_utf8_copy(buf, 1, "abc"), 0);
    assert_string_equal(buf, "");
}

static void str_format(void **state)
{
    (void)state;
    char *a = tfb_strfmt("%s/%s.%06u", "spool", "events", 7u);
    assert_string_equal(a, "spool/events.000007");
    free(a);
    char *b = tfb_strfmt("%s", "");
    assert_string_equal(b, "");
    free(b);
    /* Longer than any fixed guess: the size is measured. */
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    char *c = tfb_strfmt("%s/%s", big, big);
    assert_int_equal(strlen(c), 2 * (sizeof big - 1) + 1);
    assert_int_equal(c[sizeof big - 1], '/');
    free(c);
}

static void json_decode(const char *lit, const char *want, size_t want_len)
{
    const char *end = lit + strlen(lit), *s;
    size_t len;
    int esc;
    const char *next = tfb_json_str_scan(lit, end, &s, &len, &esc);
    assert_non_null(next);
    assert_ptr_equal(next, end);
    char out[64];
    assert_true(len <= sizeof out);
    size_t n = tfb_json_str_decode(s, len, out);
    assert_true(n <= len);
    assert_int_equal(n, want_len);
    assert_memory_equal(out, want, want_len);
}

static void json_strings(void **state)
{
    (void)state;
    json_decode("\"plain\"", "plain", 5);
    json_decode("\"a\\\"b\\\\c\\/d\"", "a\"b\\c/d", 7);
    json_decode("\"\\n\\t\\r\\b\\f\"", "\n\t\r\b\f", 5);
    json_decode("\"\\u0041\\u00e9\\u20ac\"", "A\xc3\xa9\xe2\x82\xac", 6);
    /* U+1F600 as a surrogate pair */
    json_decode("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4);
    /* lone surrogates become U+FFFD; a bad \u escape '?' */
    json_decode("\"\\ud83dx\"", "\xef\xbf\xbdx", 4);
    json_decode("\"\\ude00\"", "\xef\xbf\xbd", 3);
    json_decode("\"\\u12G4\"", "?12G4", 5);
    json_decode("\"\\u12\"", "?12", 3);
    /* scan: has_esc, the end of the literal, unterminated literals */
    const char *lit = "\"ab\" , 1", *s;
    size_t len;
    int esc = 7;
    const char *next = tfb_json_str_scan(lit, lit + strlen(lit), &s, &len, &esc);
    assert_ptr_equal(next, lit + 4);
    assert_int_equal(len, 2);
    assert_int_equal(esc, 0);
    const char *open = "\"abc\\\"";
    assert_null(tfb_json_str_scan(open, open + strlen(open), &s, &len, &esc));
    assert_null(tfb_json_str_scan("x\"\"", lit + 3, &s, &len, &esc));
    assert_null(tfb_json_str_scan(lit, lit, &s, &len, &esc));
}

static void deadlines(void **state)
{
    (void)state;
    pthread_cond_t cv;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    assert_int_equal(tfb_cond_init_monotonic(&cv), 0);
    struct timespec ts, now;
    tfb_deadline_after_ms(&ts, 1500);
    clock_gettime(CLOCK_MONOTONIC, &now);
    assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
    long long diff = (ts.tv_sec - now.tv_sec) * 1000000000LL +
                     (ts.tv_nsec - now.tv_nsec);
    assert_true(diff > 1000000000LL && diff <= 1500000000LL);
    assert_false(tfb_deadline_passed(&ts));
    /* a wait on a monotonic deadline ends with ETIMEDOUT after it */
    tfb_deadline_after_ms(&ts, 10);
    pthread_mutex_lock(&mu);
    int rc;
    while ((rc = pthread_cond_timedwait(&cv, &mu, &ts)) == 0)
        ;
    pthread_mutex_unlock(&mu);
    assert_int_equal(rc, ETIMEDOUT);
    assert_true(tfb_deadline_passed(&ts));
    assert_true(tfb_mono_now_ns() > 0);
    pthread_cond_destroy(&cv);
}

/* Natural order: numbers by value (with a fraction), then spelling;
 * letters without case; strcmp breaks the last ties. */
static int nat_sorted(const char **v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (tfb_natural_cmp(v[i - 1], v[i]) >= 0 ||
            tfb_natural_cmp(v[i], v[i - 1]) <= 0)
            return (int)i;
    return 0;
}

static void natural_order(void **state)
{
    (void)state;
    const char *ranks[] = {"rank-1", "rank-2", "rank-3", "rank-10"};
    assert_int_equal(nat_sorted(ranks, 4), 0);
    const char *sweep[] = {"sweep/lr0.03_seed1", "sweep/lr0.03_seed2",
                           "sweep/lr0.1_seed1", "sweep/lr0.3_seed1",
                           "sweep/lr5_seed1"};
    assert_int_equal(nat_sorted(sweep, 5), 0);
    const char *mixed[] = {"a", "a0.5", "a1", "a01", "b", "B2", "b10"};
    assert_int_equal(nat_sorted(mixed, 7), 0);
    const char *cases[] = {"Run2", "run2", "run10"};
    assert_int_equal(nat_sorted(cases, 3), 0);
    assert_int_equal(tfb_natural_cmp("x", "x"), 0);
    assert_true(tfb_natural_cmp(NULL, "a") < 0);
    assert_int_equal(tfb_natural_cmp(NULL, ""), 0);
    /* "1.2.3": the number is 1.2, then ".3" is text; "1.10" is 1.1, so
     * version numbers are not special (1.2.3 after 1.10). */
    assert_true(tfb_natural_cmp("v1.2.3", "v1.10") > 0);
}

/* base/idxtab: keys (here uint64) in the caller's array, found through
 * the table; deletion keeps every other key findable (backward shift),
 * with colliding hashes forced by a hash of few bits. */
typedef struct {
    uint64_t keys[4096];
    int bits; /* hash = key & ((1 << bits) - 1): many collisions */
} idx_ctx;

static uint64_t idx_hash(const void *ctx, int32_t i)
{
    const idx_ctx *c = ctx;
    return c->keys[i] & (((uint64_t)1 << c->bits) - 1);
}

static size_t idx_probe(const tfb_idxtab *t, const idx_ctx *c, uint64_t key)
{
    size_t p = tfb_idxtab_first(t, key & (((uint64_t)1 << c->bits) - 1));
    for (int32_t i; (i = t->slot[p]) >= 0; p = tfb_idxtab_next(t, p))
        if (c->keys[i] == key)
            break;
    return p;
}

static void idxtab_find_add_remove(void **state)
{
    (void)state;
    static idx_ctx c;
    c.bits = 5;
    tfb_idxtab t = {0};
    int32_t n = 0;
    for (; n < 3000; n++) {
        c.keys[n] = (uint64_t)n * 7919u + 3;
        assert_int_equal(tfb_idxtab_reserve(&t, (size_t)n + 1, idx_hash, &c), 0);
        size_t p = idx_probe(&t, &c, c.keys[n]);
        assert_true(t.slot[p] < 0);
        tfb_idxtab_set(&t, p, n);
    }
    assert_int_equal(t.n, 3000);
    assert_true(t.cap >= 6000);
    /* remove every third key; the rest stay findable, the removed not */
    for (int32_t i = 0; i < n; i += 3) {
        size_t p = idx_probe(&t, &c, c.keys[i]);
        assert_int_equal(t.slot[p], i);
        tfb_idxtab_remove(&t, p, idx_hash, &c);
    }
    assert_int_equal(t.n, 2000);
    for (int32_t i = 0; i < n; i++) {
        int32_t got = t.slot[idx_probe(&t, &c, c.keys[i])];
        assert_int_equal(got, i % 3 ? i : -1);
    }
    tfb_idxtab_free(&t);
    assert_null(t.slot);
}

/* base/select: every k of random, duplicate-heavy, sorted and reversed
 * arrays against a sort; the median of odd and even sizes. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void select_and_median(void **state)
{
    (void)state;
    double v[257], sorted[257], w[257];
    unsigned r = 12345;
    for (int shape = 0; shape < 4; shape++) {
        for (size_t n = 1; n <= 257; n += (n < 20 ? 1 : 37)) {
            for (size_t i = 0; i < n; i++) {
                r = r * 1103515245u + 12345u;
                v[i] = shape == 0 ? (double)(r >> 8)
                     : shape == 1 ? (double)((r >> 8) % 5)
                     : shape == 2 ? (double)i : (double)(n - i);
            }
            memcpy(sorted, v, n * sizeof *v);
            qsort(sorted, n, sizeof *sorted, cmp_double);
            for (size_t k = 0; k < n; k++) {
                memcpy(w, v, n * sizeof *v);
                assert_true(tfb_select_kth(w, n, k) == sorted[k]);
                for (size_t j = 0; j < k; j++)
                    assert_true(w[j] <= w[k]);
                for (size_t j = k + 1; j < n; j++)
                    assert_true(w[j] >= w[k]);
            }
            memcpy(w, v, n * sizeof *v);
            double want = n % 2 ? sorted[n / 2]
                                : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
            assert_true(tfb_median(w, n) == want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hash_basics),
        cmocka_unit_test(strtab_many),
        cmocka_unit_test(strtab_odd_keys),
        cmocka_unit_test(vec_growth),
        cmocka_unit_test(vec_typed),
        cmocka_unit_test(vec_setcap),
        cmocka_unit_test(array_resize),
        cmocka_unit_test(buf_strings),
        cmocka_unit_test(strtab_pointer_keys),
        cmocka_unit_test(str_copies),
        cmocka_unit_test(str_format),
        cmocka_unit_test(utf8_cut_and_copy),
        cmocka_unit_test(json_strings),
        cmocka_unit_test(deadlines),
        cmocka_unit_test(natural_order),
        cmocka_unit_test(idxtab_find_add_remove),
        cmocka_unit_test(select_and_median),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
