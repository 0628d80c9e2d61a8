/*
 * test_shared_lib.c - a program that links only the shared libtfboard and
 * its public header, as a user's does: everything it needs is exported,
 * and nothing internal is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tfboard.h"

static void write_and_read(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_scalar(w, "loss", 2.5, 1), 0);
    float v[3] = {1, 2, 3};
    assert_int_equal(tfb_histogram(w, "h", v, 3, 1), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int n = 0;
    while (tfb_reader_next(r, &ev) == 1)
        n++;
    assert_int_equal(n, 4); /* + the end-of-run record */
    tfb_reader_close(r);
    assert_string_equal(tfb_version(), TFB_VERSION_STRING);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void internals_hidden(void **state)
{
    (void)state;
    void *self = dlopen(NULL, RTLD_NOW);
    assert_non_null(self);
    assert_non_null(dlsym(self, "tfb_scalar"));
    /* Internal functions of the library must not be visible. */
    assert_null(dlsym(self, "tfb_tag_table_get"));
    assert_null(dlsym(self, "tfb_ev_record_write"));
    assert_null(dlsym(self, "tfb_histo_build_f32"));
    assert_null(dlsym(self, "tfb_writer_numerics_record"));
    /* Nor the shared base (base/), linked in with hidden visibility. */
    assert_null(dlsym(self, "tfb_hash_bytes"));
    assert_null(dlsym(self, "tfb_strtab_put"));
    assert_null(dlsym(self, "tfb_idxtab_reserve"));
    assert_null(dlsym(self, "tfb_vec__setcap"));
    assert_null(dlsym(self, "tfb_buf_put"));
    assert_null(dlsym(self, "tfb_strndup"));
    assert_null(dlsym(self, "tfb_json_str_decode"));
    assert_null(dlsym(self, "tfb_cond_init_monotonic"));
    assert_null(dlsym(self, "tfb_deadline_after_ms"));
    dlclose(self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(write_and_read),
        cmocka_unit_test(internals_hidden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
