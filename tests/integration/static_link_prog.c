/*
 * static_link_prog.c - a program built the way the README says to link
 * libtfboard statically (test_static_link.py): it writes an event file
 * into the directory given and reads its scalar back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tfboard.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: static_link_prog DIR\n");
        return 2;
    }
    tfb_writer *w;
    int rc = tfb_writer_open(&w, argv[1], NULL);
    if (rc < 0) {
        fprintf(stderr, "open: %s\n", tfb_strerror(rc));
        return 1;
    }
    char *path = strdup(tfb_writer_path(w));
    if (!path || tfb_scalar(w, "loss", 0.25, 3) < 0 ||
        tfb_writer_close(w) < 0) {
        fprintf(stderr, "write failed\n");
        return 1;
    }
    tfb_reader *r;
    if (tfb_reader_open(&r, path) < 0) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    tfb_event ev = {.size = sizeof ev};
    int found = 0;
    while (!found && tfb_reader_next(r, &ev) == 1) {
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (ev.kind == TFB_EVENT_SUMMARY &&
               tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1)
            found |= v.kind == TFB_VALUE_SCALAR && v.scalar == 0.25 &&
                     ev.step == 3;
    }
    tfb_reader_close(r);
    free(path);
    if (!found) {
        fprintf(stderr, "the scalar did not read back\n");
        return 1;
    }
    printf("ok %s\n", tfb_version());
    return 0;
}
