/*
 * ranks_driver.c - reads a job directory written by ranks
 * (<job>/rank-NNNNN/events.out.tfevents.*) with libtfboard's reader and
 * runs the ranks analysis on it; prints the figures as key=value lines for
 * test_ranks_example.py. A stand-in for the ranks plugin's loader until
 * the plugin is part of the server.
 *
 * usage: ranks_driver JOB_DIR
 * Output (one line each):
 *   ranks=N world_size=W stragglers=K others_comm_share=X skew_p50_ms=X
 *   rank=R dir=D records=1 step_values=S comm_values=C own_p50=X
 *        compute_p50=X step_p50=X comm_share=X slowdown=X slower_share=X
 *        straggler=0|1
 *   straggler=R slowdown=X            (worst first)
 *   note=TEXT
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "base/vec.h"
#include "../../server/analysis/ranks_analysis.h"

#define MAX_RANK_DIRS 1024

typedef struct rank_file {
    char dir[512];
    int rank_records;
    tfb_ranks_input in;
    TFB_VEC(tfb_ranks_step) steps;
    size_t step_values, comm_values;
} rank_file;

static int tag_is(const tfb_value *v, const char *t)
{
    return v->tag.len == strlen(t) && memcmp(v->tag.ptr, t, v->tag.len) == 0;
}

/* The entry for `step` (steps arrive in order: look at the last few). */
static tfb_ranks_step *slot(rank_file *f, int64_t step)
{
    for (size_t i = f->steps.n; i > 0 && i + 8 > f->steps.n; i--)
        if (f->steps.v[i - 1].step == step)
            return &f->steps.v[i - 1];
    tfb_ranks_step s = {step, NAN, NAN, NAN, NAN};
    if (tfb_vec_push(&f->steps, s) < 0)
        return NULL;
    return &f->steps.v[f->steps.n - 1];
}

static int read_event_file(const char *path, rank_file *f)
{
    tfb_reader *r;
    int rc = tfb_reader_open(&r, path);
    if (rc < 0)
        return rc;
    tfb_event ev = {.size = sizeof ev};
    while ((rc = tfb_reader_next(r, &ev)) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            tfb_rank_info ri = {.size = sizeof ri};
            if (tfb_value_rank_info(&v, &ri) == 0) {
                f->rank_records++;
                f->in.rank = ri.rank;
                f->in.world_size = ri.world_size;
                continue;
            }
            if (v.kind != TFB_VALUE_SCALAR)
                continue;
            int which = tag_is(&v, "pipeline/step_ms")    ? 0
                        : tag_is(&v, "pipeline/input_ms") ? 1
                        : tag_is(&v, TFB_TAG_COMM_MS)      ? 2
                                                           : -1;
            if (which < 0)
                continue;
            tfb_ranks_step *s = slot(f, ev.step);
            if (!s) {
                tfb_reader_close(r);
                return TFB_ENOMEM;
            }
            if (which == 0) {
                s->step_ms = v.scalar;
                s->wall_end = ev.wall_time;
                f->step_values++;
            } else if (which == 1) {
                s->input_ms = v.scalar;
            } else {
                s->comm_ms = v.scalar;
                f->comm_values++;
            }
        }
    }
    tfb_reader_close(r);
    return rc;
}

static void pr(const char *k, double x)
{
    if (isnan(x))
        printf(" %s=nan", k);
    else
        printf(" %s=%.6g", k, x);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ranks_driver JOB_DIR\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    static rank_file files[MAX_RANK_DIRS];
    size_t nf = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && nf < MAX_RANK_DIRS) {
        if (strncmp(de->d_name, "rank-", 5) != 0)
            continue;
        rank_file *f = &files[nf];
        snprintf(f->dir, sizeof f->dir, "%s/%s", argv[1], de->d_name);
        f->in.rank = -1;
        f->in.label = f->dir;
        DIR *rd = opendir(f->dir);
        if (!rd)
            continue;
        struct dirent *fe;
        while ((fe = readdir(rd)) != NULL) {
            if (!strstr(fe->d_name, "tfevents"))
                continue;
            char path[1024];
            int pn = snprintf(path, sizeof path, "%s/%s", f->dir, fe->d_name);
            if (pn < 0 || (size_t)pn >= sizeof path)
                continue; /* a path this long is no test file of ours */
            int rc = read_event_file(path, f);
            if (rc < 0) {
                fprintf(stderr, "%s: %s\n", path, tfb_strerror(rc));
                closedir(rd);
                closedir(d);
                return 1;
            }
        }
        closedir(rd);
        f->in.steps = f->steps.v;
        f->in.n_steps = f->steps.n;
        nf++;
    }
    closedir(d);
    tfb_ranks_input in[MAX_RANK_DIRS];
    for (size_t i = 0; i < nf; i++)
        in[i] = files[i].in;
    tfb_ranks_result *res;
    int rc = tfb_ranks_analyze(in, nf, NULL, &res);
    if (rc < 0) {
        fprintf(stderr, "analyze: %s\n", tfb_strerror(rc));
        return 1;
    }
    printf("ranks=%zu world_size=%d stragglers=%zu", res->n_ranks,
           (int)res->world_size, res->n_stragglers);
    pr("others_comm_share", res->others_comm_share);
    pr("skew_p50_ms", res->skew.p50);
    printf("\n");
    for (size_t i = 0; i < res->n_ranks; i++) {
        const tfb_ranks_rank *k = &res->ranks[i];
        const rank_file *f = &files[k->input_index];
        printf("rank=%d dir=%s records=%d step_values=%zu comm_values=%zu",
               (int)k->rank, f->dir, f->rank_records, f->step_values,
               f->comm_values);
        pr("own_p50", k->own_ms.p50);
        pr("compute_p50", k->compute_ms.p50);
        pr("step_p50", k->step_ms.p50);
        pr("comm_share", k->comm_share);
        pr("slowdown", k->slowdown);
        pr("slower_share", k->slower_share);
        printf(" straggler=%d\n", k->straggler);
    }
    for (size_t i = 0; i < res->n_stragglers; i++) {
        const tfb_ranks_rank *k = &res->ranks[res->stragglers[i]];
        printf("straggler=%d", (int)k->rank);
        pr("slowdown", k->slowdown);
        printf("\n");
    }
    for (size_t i = 0; i < res->n_notes; i++)
        printf("note=%s\n", res->notes[i].text);
    tfb_ranks_result_free(res);
    for (size_t i = 0; i < nf; i++)
        tfb_vec_free(&files[i].steps);
    return 0;
}
