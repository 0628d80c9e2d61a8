/* s3_writer_driver.c - a training loop for test_objstore_writer.py:
 * logs scalar "x" = step (and a 4 KiB text every `big` steps) to RUN_URL
 * with segments, printing each step once it is logged, then closes and
 * prints the close status and counters.
 *
 * usage: s3_writer_driver RUN_URL STEPS SLEEP_MS SEGMENT_S SPOOL_BYTES
 *                         CLOSE_TIMEOUT_MS SEGMENT_BYTES BIG [EXTRA]
 * EXTRA: a file of that name is written beside the event file (as a GPU
 * trace store is), to be uploaded at close. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfboard.h"

int main(int argc, char **argv)
{
    if (argc < 9) {
        fprintf(stderr, "usage: see the source\n");
        return 2;
    }
    int steps = atoi(argv[2]), sleep_ms = atoi(argv[3]), big = atoi(argv[8]);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.segment_seconds = (unsigned)atoi(argv[4]);
    o.spool_bytes = (size_t)atoll(argv[5]);
    o.close_timeout_ms = (unsigned)atoi(argv[6]);
    o.segment_bytes = (size_t)atoll(argv[7]);
    o.flush_interval_ms = 100;
    tfb_writer *w;
    int rc = tfb_writer_open(&w, argv[1], &o);
    if (rc) {
        fprintf(stderr, "open: %s\n", tfb_strerror(rc));
        return 1;
    }
    char text[4097];
    memset(text, 'a', 4096);
    text[4096] = 0;
    for (int i = 0; i < steps; i++) {
        rc = tfb_scalar(w, "x", (double)i, i);
        if (big > 0 && i % big == 0)
            tfb_text(w, "blob", text, i);
        printf("logged %d\n", i);
        fflush(stdout);
        if (sleep_ms) {
            struct timespec ts = {sleep_ms / 1000,
                                  (long)(sleep_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (argc > 9) {
        /* the run's local directory is the event file's */
        const char *ev = tfb_writer_path(w);
        const char *slash = strrchr(ev, '/');
        char path[4096];
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - ev), ev,
                 argv[9]);
        FILE *f = fopen(path, "wb");
        if (f) {
            fputs("SQLite format 3", f);
            fclose(f);
        }
    }
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    tfb_writer_get_stats(w, &st);
    rc = tfb_writer_close(w);
    printf("close %d %s dropped %llu\n", rc, tfb_strerror(rc),
           (unsigned long long)st.records_dropped);
    return 0;
}
