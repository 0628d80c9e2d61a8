/* test_crc32c.c - CRC-32C against the standard vectors, both paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector/crc32c.h"
#include "tfboard.h"

uint32_t tfb_crc32c_portable(uint32_t crc, const void *buf, size_t len);

static void check_value(void **state)
{
    (void)state;
    assert_int_equal(tfb_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(tfb_crc32c_portable(0, "123456789", 9), 0xE3069283u);
    uint8_t zeros[32] = {0};
    assert_int_equal(tfb_crc32c(0, zeros, 32), 0x8A9136AAu);
    assert_int_equal(tfb_crc32c_portable(0, zeros, 32), 0x8A9136AAu);
    uint8_t ones[32];
    memset(ones, 0xff, sizeof ones);
    assert_int_equal(tfb_crc32c(0, ones, 32), 0x62A8AB43u); /* RFC 3720 */
}

static void masked_vectors(void **state)
{
    (void)state;
    static const char s[] = "\x1a\x11" "CRC test, one two";
    assert_int_equal(tfb_masked_crc32c(s, sizeof s - 1), 0x5794d08au);
    uint8_t len24[8] = {24, 0, 0, 0, 0, 0, 0, 0};
    uint8_t len50[8] = {50, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(tfb_masked_crc32c(len24, 8), 0x224b7fa3u);
    assert_int_equal(tfb_masked_crc32c(len50, 8), 0xec561924u);
}

/* Every length and alignment: the fast path must agree with the table. */
static void paths_agree(void **state)
{
    (void)state;
    uint8_t buf[300];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n + off <= sizeof buf; n++)
            assert_int_equal(tfb_crc32c(0, buf + off, n),
                             tfb_crc32c_portable(0, buf + off, n));
}

static void incremental(void **state)
{
    (void)state;
    uint32_t c = tfb_crc32c(0, "1234", 4);
    c = tfb_crc32c(c, "56789", 5);
    assert_int_equal(c, 0xE3069283u);
}

/* The reader's record checks (crc32c.h) say what tfb_masked_crc32c says,
 * at every length around the 8- and 32-byte steps, and catch one flipped
 * bit anywhere. */
static void record_checks(void **state)
{
    (void)state;
    uint8_t b[300];
    srand(3720);
    for (size_t n = 0; n + 4 <= sizeof b; n++) {
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)rand();
        uint32_t c = tfb_masked_crc32c(b, n);
        memcpy(b + n, &c, 4); /* little-endian, as TFRecord stores it */
        assert_true(tfb_tfrecord_data_ok(b, n));
        size_t k = (size_t)rand() % (n + 4);
        b[k] ^= (uint8_t)(1u << (rand() % 8));
        assert_false(tfb_tfrecord_data_ok(b, n));
    }
    for (int i = 0; i < 1000; i++) { /* headers: an 8-byte length */
        for (size_t k = 0; k < 8; k++)
            b[k] = (uint8_t)rand();
        uint32_t c = tfb_masked_crc32c(b, 8);
        memcpy(b + 8, &c, 4);
        assert_true(tfb_tfrecord_len_ok(b));
        b[(size_t)rand() % 12] ^= (uint8_t)(1u << (rand() % 8));
        assert_false(tfb_tfrecord_len_ok(b));
    }
}

static void strerror_table(void **state)
{
    (void)state;
    assert_string_equal(tfb_strerror(0), "success");
    assert_string_equal(tfb_strerror(TFB_ENOSPC), "no space left on device");
    assert_string_equal(tfb_strerror(-12345), "unknown error");
    for (int c = -1; c >= TFB_ERRNO_MIN_; c--)
        assert_string_not_equal(tfb_strerror(c), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_value),
        cmocka_unit_test(masked_vectors),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(incremental),
        cmocka_unit_test(record_checks),
        cmocka_unit_test(strerror_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
