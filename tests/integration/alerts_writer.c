/*
 * alerts_writer.c - a training loop the alerts tests control from outside:
 *
 *   alerts_writer RUN_DIR N MS MODE [REASON]
 *
 * logs "loss" (a slowly falling curve) for steps 1..N, one every MS
 * milliseconds, flushes, prints "ready <pid>" on stdout, then
 *   hang:   sleeps until killed (a stalled writer, or SIGKILLed: crashed);
 *   close:  closes the writer with REASON (finished);
 *   exit:   exits without closing (the process is gone: crashed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tfboard.h"

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: alerts_writer RUN_DIR N MS hang|close|exit "
                        "[REASON]\n");
        return 2;
    }
    long n = atol(argv[2]), ms = atol(argv[3]);
    const char *mode = argv[4];
    tfb_writer *w;
    int rc = tfb_writer_open(&w, argv[1], NULL);
    if (rc < 0) {
        fprintf(stderr, "alerts_writer: %s\n", tfb_strerror(rc));
        return 1;
    }
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    for (long s = 1; s <= n; s++) {
        tfb_scalar(w, "loss", 2.0 / (1.0 + 0.01 * (double)s), s);
        if (ms > 0)
            nanosleep(&d, NULL);
    }
    tfb_flush(w);
    printf("ready %ld\n", (long)getpid());
    fflush(stdout);
    if (!strcmp(mode, "close"))
        return tfb_writer_close_reason(w, argc > 5 ? argv[5] : NULL) < 0;
    if (!strcmp(mode, "exit"))
        _exit(0);
    for (;;)
        pause();
}
