/*
 * report_compare_cli.c - `tfboard report --compare A B`: finds the two
 * runs (run names under --logdir, or two directories), compares them
 * (plugins/compare/compare_analysis.c), writes the comparison in the chosen format and
 * judges the regress gates.
 */
#include "report/report_compare_cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/health/health_analysis.h"
#include "report/report_load.h"

typedef struct side {
    tfb_store *store;
    tfb_run *run;
} side;

/* Lists up to 8 run names of the store into buf. */
static void run_list(tfb_store *s, char *buf, size_t cap)
{
    buf[0] = 0;
    tfb_run **runs;
    size_t n;
    if (tfb_store_runs(s, &runs, &n) < 0)
        return;
    size_t used = 0;
    for (size_t i = 0; i < n && i < 8 && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s'%s'",
                                 i ? ", " : "", tfb_run_name(runs[i]));
    if (n > 8 && used < cap)
        snprintf(buf + used, cap - used, ", ... (%zu runs)", n);
    free(runs);
}

/* Run name `name` in the shared store. */
static int find_run(tfb_store *s, const char *name, const char *logdir,
                    tfb_run **out)
{
    *out = tfb_store_find_run(s, name);
    if (*out)
        return 0;
    char list[512];
    run_list(s, list, sizeof list);
    fprintf(stderr, "tfboard report: no run '%s' in %s (runs: %s)\n", name,
            logdir, list[0] ? list : "none");
    return -1;
}

/* The one run of a directory given without --logdir. */
static int dir_run(const char *dir, side *sd, int quiet)
{
    if (tfb_report_open(dir, quiet, &sd->store) < 0)
        return -1;
    tfb_run **runs;
    size_t n;
    if (tfb_store_runs(sd->store, &runs, &n) < 0) {
        fprintf(stderr, "tfboard report: out of memory\n");
        return -1;
    }
    if (n == 1) {
        sd->run = runs[0];
        free(runs);
        return 0;
    }
    free(runs);
    if (n == 0) {
        fprintf(stderr, "tfboard report: %s holds no event files\n", dir);
        return -1;
    }
    char list[512];
    run_list(sd->store, list, sizeof list);
    fprintf(stderr, "tfboard report: %s holds %zu runs (%s): give the "
                    "run's own directory, or use --logdir %s --compare RUN "
                    "RUN\n",
            dir, n, list, dir);
    return -1;
}

/* The run's first non-finite value, as the compare dashboard finds it
 * (its page.js divergence()): the earliest alert, a loss-like tag first
 * at the same step. */
static void diverged(tfb_store *s, tfb_run *r, tfb_compare_diverged *d)
{
    memset(d, 0, sizeof *d);
    tfb_health_alert *al = NULL;
    size_t n = 0;
    if (tfb_health_alerts(s, r, &al, &n) < 0)
        return;
    const tfb_health_alert *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const tfb_health_alert *a = &al[i];
        int loss = strcasestr(a->tag, "loss") != NULL;
        if (!best || a->first_step < best->first_step ||
            (a->first_step == best->first_step && loss &&
             !strcasestr(best->tag, "loss")))
            best = a;
    }
    if (best) {
        d->diverged = 1;
        d->step = (long long)best->first_step;
        d->tag = best->tag; /* owned by the store */
        d->kind = best->nan ? "NaN" : best->pos_inf ? "+Inf" : "-Inf";
    }
    free(al);
}

static int write_out(FILE *f, const tfb_compare *c,
                     const tfb_compare_diverged *div, report_format fmt)
{
    switch (fmt) {
    case FMT_TEXT:
        return tfb_compare_text(f, c, div, 0);
    case FMT_MARKDOWN:
        return tfb_compare_text(f, c, div, 1);
    case FMT_HTML:
        return tfb_compare_html(f, c);
    case FMT_JSON: {
        tfb_json j;
        tfb_json_init(&j);
        tfb_compare_json(&j, c);
        size_t len;
        char *txt = tfb_json_take(&j, &len);
        if (!txt)
            return TFB_ENOMEM;
        fwrite(txt, 1, len, f);
        fputc('\n', f);
        free(txt);
        return ferror(f) ? TFB_EIO : 0;
    }
    }
    return TFB_EINVAL;
}

int tfb_report_compare_main(const tfb_report_compare_args *a)
{
    side sa = {0}, sb = {0};
    int status = 2;
    if (a->logdir) {
        if (tfb_report_open(a->logdir, a->quiet, &sa.store) < 0)
            return 2;
        sb.store = sa.store;
        if (find_run(sa.store, a->a, a->logdir, &sa.run) < 0 ||
            find_run(sa.store, a->b, a->logdir, &sb.run) < 0)
            goto out;
    } else {
        if (dir_run(a->a, &sa, a->quiet) < 0 ||
            dir_run(a->b, &sb, a->quiet) < 0)
            goto out;
    }

    tfb_compare c;
    int rc = tfb_compare_runs(sa.store, sa.run, a->a, sb.store, sb.run, a->b,
                              -1, &c);
    if (rc < 0) {
        fprintf(stderr, "tfboard report: %s\n", tfb_strerror(rc));
        status = 1;
        goto out;
    }
    status = 0;
    FILE *f = stdout;
    if (a->output && !(f = fopen(a->output, "w"))) {
        fprintf(stderr, "tfboard report: cannot write %s: %s\n", a->output,
                strerror(errno));
        status = 1;
    }
    if (status == 0) {
        tfb_compare_diverged div[2];
        diverged(sa.store, sa.run, &div[0]);
        diverged(sb.store, sb.run, &div[1]);
        rc = write_out(f, &c, div, a->format);
        if (rc < 0) {
            fprintf(stderr, "tfboard report: %s\n", tfb_strerror(rc));
            status = 1;
        }
        if (fflush(f) != 0 || ferror(f)) {
            fprintf(stderr, "tfboard report: write error: %s\n",
                    strerror(errno));
            status = 1;
        }
        if (f != stdout)
            fclose(f);
    }
    /* The gates: every failing one is named, not just the first. An
     * output that could not be written (status 1) is failure enough. */
    int out_failed = status;
    for (size_t i = 0; i < a->n_gates && !out_failed; i++) {
        char why[512];
        if (tfb_compare_gate_check(&c, &a->gates[i], why, sizeof why)) {
            fprintf(stderr, "tfboard report: %s\n", why);
            for (size_t k = i + 1; k < a->n_gates; k++)
                if (tfb_compare_gate_check(&c, &a->gates[k], why,
                                           sizeof why))
                    fprintf(stderr, "tfboard report: %s\n", why);
            status = 1;
            break;
        } else if (!a->quiet) {
            fprintf(stderr, "tfboard report: %s\n", why);
        }
    }
    if (!out_failed && a->fail_on_nan) {
        tfb_health_alert *al;
        size_t n = 0;
        if (tfb_health_alerts(sb.store, sb.run, &al, &n) == 0)
            free(al);
        if (n > 0) {
            fprintf(stderr, "tfboard report: B has %zu NaN/Inf alert%s "
                            "(--fail_on nan)\n", n, n == 1 ? "" : "s");
            status = 1;
        }
    }
    tfb_compare_free(&c);
out:
    if (sb.store && sb.store != sa.store)
        tfb_store_destroy(sb.store);
    if (sa.store)
        tfb_store_destroy(sa.store);
    return status;
}
