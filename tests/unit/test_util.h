/* test_util.h - helpers shared by the unit tests. */
#ifndef TFB_TEST_UTIL_H
#define TFB_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A fresh empty directory under $TMPDIR (or /tmp); the caller frees the
 * string and may remove the tree with tu_rmtree(). Aborts the test run on
 * failure (a test cannot go on without it). */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);

/* Reads a whole file; *len gets its size. Caller frees. NULL on error. */
uint8_t *tu_read_file(const char *path, size_t *len);
int tu_write_file(const char *path, const void *data, size_t len);

/* The single file in dir whose name contains "tfevents" (caller frees),
 * or NULL. */
char *tu_find_event_file(const char *dir);

/* $TFB_TESTDATA/<rel>, or NULL when the corpus is absent (then the test
 * should exit 77). Caller frees. */
char *tu_testdata(const char *rel);

/* A small deterministic generator (xorshift64*, one state per test
 * program, always the same seed): uniform in [0, 1). Tests that count
 * what they find on noisy data (the spike detector's false positives)
 * depend on the sequence staying the same. */
double tu_uniform(void);

/* 1 when v is the end-of-run record tfb_writer_close writes last
 * (collector/run_end.h): tests that read a file back value by value skip
 * it. A macro: tfb_value is declared by tfboard.h, which may come
 * after this header. */
#define tu_is_run_end(v)                                                \
    ((v)->plugin_name.len == 15 &&                                       \
     memcmp((v)->plugin_name.ptr, "tfboard_run_end", 15) == 0)

#endif
