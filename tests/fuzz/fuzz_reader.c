/*
 * fuzz_reader.c - libFuzzer target: any bytes as an event file. The reader
 * and every value accessor must neither crash nor leak, whatever the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tfboard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0)
        return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    tfb_reader *r;
    if (tfb_reader_open(&r, path) == 0) {
        tfb_event ev = {.size = sizeof ev};
        while (tfb_reader_next(r, &ev) == 1) {
            if (ev.kind != TFB_EVENT_SUMMARY)
                continue;
            size_t pos = 0;
            tfb_value v = {.size = sizeof v};
            while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
                tfb_bucket b[8] = {{.size = sizeof(tfb_bucket)}};
                double mn, mx, num, sum;
                tfb_value_histogram(&v, b, 8, &mn, &mx, &num, &sum);
                tfb_strview s;
                tfb_value_string(&v, 0, &s);
                double d;
                tfb_value_tensor_scalar(&v, &d);
                tfb_value_apply_plugin(&v, "histograms", 10);
                tfb_value_histogram(&v, b, 8, &mn, &mx, &num, &sum);
                tfb_value_apply_plugin(&v, TFB_NUMERICS_PLUGIN,
                                       sizeof TFB_NUMERICS_PLUGIN - 1);
            }
        }
        tfb_reader_stats st;
        tfb_reader_stats_init(&st);
        tfb_reader_get_stats(r, &st);
        tfb_reader_close(r);
    }
    close(fd);
    return 0;
}
