/*
 * test_reader_growth.c - the reader's buffer grows only as bytes arrive
 * (issue 10): a record header claiming 2^31-1 bytes must not reserve
 * gigabytes. With a correct length CRC the reader waits (partial record);
 * with a wrong one it resyncs and finds the valid records after it.
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
#include <unistd.h>

#include "test_util.h"
#include "tfboard.h"

#define HUGE_LEN 0x7fffffffull /* 2^31 - 1 */
/* Far below the 4 GiB the old growth reserved, far above one 1 MiB chunk
 * plus slack. */
#define SMALL_BUFFER (8u << 20)

static void le64(uint8_t *p, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

static void le32(uint8_t *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

/* Appends header (length, masked length CRC) to fd; crc_ok = 0 spoils the
 * CRC. */
static void put_header(int fd, uint64_t len, int crc_ok)
{
    uint8_t h[12];
    le64(h, len);
    le32(h + 8, tfb_masked_crc32c(h, 8) ^ (crc_ok ? 0u : 0x5a5a5a5au));
    assert_int_equal(write(fd, h, 12), 12);
}

static void put_bytes(int fd, const void *p, size_t n)
{
    assert_int_equal(write(fd, p, n), (ssize_t)n);
}

/* A whole valid record: Event{wall_time = wall, step = step,
 * file_version = "brain.Event:2"}. */
static void put_event(int fd, double wall, int64_t step)
{
    uint8_t pl[64];
    size_t n = 0;
    pl[n++] = 0x09; /* 1: wall_time, double */
    memcpy(pl + n, &wall, 8);
    n += 8;
    pl[n++] = 0x10; /* 2: step, varint (small, non-negative here) */
    pl[n++] = (uint8_t)step;
    static const char fv[] = "brain.Event:2";
    pl[n++] = 0x1a; /* 3: file_version */
    pl[n++] = (uint8_t)(sizeof fv - 1);
    memcpy(pl + n, fv, sizeof fv - 1);
    n += sizeof fv - 1;
    put_header(fd, n, 1);
    put_bytes(fd, pl, n);
    uint8_t c[4];
    le32(c, tfb_masked_crc32c(pl, n));
    put_bytes(fd, c, 4);
}

static char *new_file(char **dir, int *fd)
{
    *dir = tu_mkdtemp();
    size_t cap = strlen(*dir) + 64;
    char *path = malloc(cap);
    assert_non_null(path);
    snprintf(path, cap, "%s/events.out.tfevents.1.test", *dir);
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(*fd >= 0);
    return path;
}

static tfb_reader_stats stats_of(tfb_reader *r)
{
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    return st;
}

/* Correct CRC, length 2^31-1, a few bytes: a record still being written.
 * The reader waits at it with a small buffer, again and again, and as
 * bytes arrive the buffer stays within about twice what arrived. */
static void huge_length_with_good_crc_waits_small(void **state)
{
    (void)state;
    char *dir;
    int fd;
    char *path = new_file(&dir, &fd);
    put_event(fd, 1.0, 1);
    uint64_t huge_at = (uint64_t)lseek(fd, 0, SEEK_CUR);
    put_header(fd, HUGE_LEN, 1);
    put_bytes(fd, "a few bytes", 11);

    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    assert_int_equal(tfb_reader_next(r, &ev), 1);
    assert_int_equal(ev.step, 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tfb_reader_next(r, &ev), 0); /* waits */
        tfb_reader_stats st = stats_of(r);
        assert_int_equal(st.truncated_tail, 1);
        assert_int_equal(st.offset, huge_at);
        assert_int_equal(st.resyncs, 0);
        assert_true(st.buffer_bytes > 0);
        assert_true(st.buffer_bytes <= SMALL_BUFFER);
    }
    /* 24 MiB more of the record arrive: the buffer follows the data, not
     * the claimed 2 GiB. */
    size_t chunk = 1u << 20;
    char *junk = calloc(1, chunk);
    assert_non_null(junk);
    for (int i = 0; i < 24; i++)
        put_bytes(fd, junk, chunk);
    assert_int_equal(tfb_reader_next(r, &ev), 0);
    tfb_reader_stats st = stats_of(r);
    assert_int_equal(st.truncated_tail, 1);
    assert_int_equal(st.offset, huge_at);
    uint64_t arrived = st.file_size - huge_at;
    assert_true(arrived >= 24u * chunk);
    assert_true(st.buffer_bytes <= 2 * arrived + SMALL_BUFFER);
    free(junk);
    tfb_reader_close(r);
    close(fd);
    unlink(path);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* Wrong length CRC on the huge header: resync finds the records after
 * it, and the buffer stays small. */
static void huge_length_with_bad_crc_resyncs(void **state)
{
    (void)state;
    char *dir;
    int fd;
    char *path = new_file(&dir, &fd);
    put_event(fd, 1.0, 1);
    put_header(fd, HUGE_LEN, 0);
    put_bytes(fd, "xyz", 3);
    put_event(fd, 2.0, 2);
    put_event(fd, 3.0, 3);

    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int64_t steps[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tfb_reader_next(r, &ev), 1);
        steps[i] = ev.step;
        assert_true(stats_of(r).buffer_bytes <= SMALL_BUFFER);
    }
    assert_int_equal(steps[0], 1);
    assert_int_equal(steps[1], 2);
    assert_int_equal(steps[2], 3);
    assert_int_equal(tfb_reader_next(r, &ev), 0);
    tfb_reader_stats st = stats_of(r);
    assert_int_equal(st.resyncs, 1);
    assert_int_equal(st.records, 3);
    assert_int_equal(st.bytes_skipped, 12 + 3);
    assert_int_equal(st.truncated_tail, 0);
    tfb_reader_close(r);
    close(fd);
    unlink(path);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* A real large record (a 6 MiB text) that arrives in pieces is still read
 * whole once complete: growth by arrival does not cap record size. */
static void large_record_arriving_in_pieces(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    size_t n = 6u << 20;
    char *text = malloc(n + 1);
    assert_non_null(text);
    memset(text, 'q', n);
    text[n] = 0;
    assert_int_equal(tfb_text(w, "big", text, 7), 0);
    char *src = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    size_t len;
    uint8_t *all = tu_read_file(src, &len);
    assert_non_null(all);

    size_t cap = strlen(dir) + 64;
    char *path = malloc(cap);
    snprintf(path, cap, "%s/copy.tfevents", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int got = 0;
    size_t done = 0, piece = 700000;
    while (done < len) {
        size_t k = len - done < piece ? len - done : piece;
        put_bytes(fd, all + done, k);
        done += k;
        int rc;
        while ((rc = tfb_reader_next(r, &ev)) == 1) {
            if (ev.kind != TFB_EVENT_SUMMARY)
                continue;
            size_t pos = 0;
            tfb_value v = {.size = sizeof v};
            assert_int_equal(tfb_summary_next(ev.summary, ev.summary_len,
                                              &pos, &v), 1);
            if (tu_is_run_end(&v))
                continue;
            tfb_strview s;
            assert_int_equal(tfb_value_string(&v, 0, &s), 1);
            assert_int_equal(s.len, n);
            assert_int_equal(ev.step, 7);
            got++;
        }
        assert_int_equal(rc, 0);
        tfb_reader_stats st = stats_of(r);
        assert_true(st.buffer_bytes <= 2 * (st.file_size - st.offset) +
                                           SMALL_BUFFER);
    }
    assert_int_equal(got, 1);
    assert_int_equal(stats_of(r).corrupt_records, 0);
    tfb_reader_close(r);
    close(fd);
    free(all);
    free(text);
    free(src);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(huge_length_with_good_crc_waits_small),
        cmocka_unit_test(huge_length_with_bad_crc_resyncs),
        cmocka_unit_test(large_record_arriving_in_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
