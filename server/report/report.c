/*
 * report.c - `tfboard report`: parses its options, loads the logdir once
 * (no HTTP server, no reload), builds the report model and writes it in
 * the chosen format. Exit status: 0, 1 when --fail-on nan finds an alert
 * (or the output cannot be written), 2 on bad usage, an unreadable
 * logdir, or event files that could not be read.
 */
#include "report/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store/loader.h"
#include "report/report_compare_cli.h"
#include "report/report_load.h"
#include "report/report_html.h"
#include "report/report_model.h"
#include "report/report_text.h"
#include "store/storage.h"
#include "store/store.h"

typedef struct report_args {
    const char *logdir;
    const char *output; /* NULL = stdout */
    report_format format;
    int fail_on_nan;
    int quiet;
    tfb_report_opts opts;
    /* --compare A B and its regress gates (report_compare_cli.c) */
    const char *compare_a, *compare_b;
    tfb_compare_gate gates[TFB_REPORT_MAX_GATES];
    size_t n_gates;
} report_args;

static void usage(FILE *f)
{
    fputs("usage: tfboard report --logdir DIR [--run REGEX]\n"
          "         [--format text|markdown|json|html] [--fail-on nan]\n"
          "         [--output FILE] [--quiet] [dashboard options]\n"
          "       tfboard report --compare A B [--logdir DIR]\n"
          "         [--format ...] [--fail-on 'regress:METRIC>LIMIT' ...]\n"
          "\n"
          "A post-mortem of each run in DIR: steps and duration, last/min/max\n"
          "of each scalar, NaN/Inf alerts (first one first), gradient flags,\n"
          "the input-pipeline verdict, and GPU figures when traced.\n"
          "\n"
          "  --run REGEX        only runs whose name matches (POSIX extended)\n"
          "  --format F         text (default), markdown, json, or html (one\n"
          "                     self-contained page with charts)\n"
          "  --fail-on nan      exit 1 when any run has a NaN/Inf alert (CI)\n"
          "  --output FILE      write there instead of standard output\n"
          "  --quiet            no progress lines on standard error\n",
          f);
    tfb_plugin_options_usage(f);
    tfb_report_compare_usage(f);
}

/* Returns 0 to go on, 1 after --help, -1 on bad usage (message printed). */
static int parse_args(int argc, char **argv, report_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(arg, "--quiet")) {
            a->quiet = 1;
            continue;
        }
        if (!strcmp(arg, "--compare")) {
            if (i + 2 >= argc) {
                fprintf(stderr, "tfboard report: --compare needs two runs "
                                "or directories: --compare A B\n");
                return -1;
            }
            a->compare_a = argv[++i];
            a->compare_b = argv[++i];
            continue;
        }
        /* --opt=value and --opt value both work. */
        const char *val = NULL;
        char name[64];
        const char *eq = strchr(arg, '=');
        if (eq && (size_t)(eq - arg) < sizeof name) {
            memcpy(name, arg, (size_t)(eq - arg));
            name[eq - arg] = 0;
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", arg);
        }
        static const char *const with_value[] = {
            "--logdir", "--run", "--format", "--fail-on", "--output"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
            known |= !strcmp(name, with_value[k]);
        /* A dashboard's own option (plugin.h), as in serve mode. */
        const tfb_plugin_option *po =
            known || strncmp(name, "--", 2)
                ? NULL
                : tfb_plugin_option_find(name + 2, strlen(name + 2));
        if (po && po->type == TFB_OPT_FLAG && !val) {
            tfb_plugin_option_set(po, NULL);
            continue;
        }
        if (!known && !po) {
            fprintf(stderr, "tfboard report: unknown option '%s'\n", arg);
            return -1;
        }
        if (!val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tfboard report: %s needs a value\n", name);
                return -1;
            }
            val = argv[++i];
        }
        if (po) {
            if (po->type == TFB_OPT_FLAG || tfb_plugin_option_set(po, val) < 0) {
                fprintf(stderr, "tfboard report: bad value '%s' for %s\n",
                        val, name);
                return -1;
            }
        } else if (!strcmp(name, "--logdir")) {
            a->logdir = val;
        } else if (!strcmp(name, "--run")) {
            a->opts.run_regex = val;
        } else if (!strcmp(name, "--output")) {
            a->output = val;
        } else if (!strcmp(name, "--format")) {
            if (!strcmp(val, "text"))
                a->format = FMT_TEXT;
            else if (!strcmp(val, "markdown") || !strcmp(val, "md"))
                a->format = FMT_MARKDOWN;
            else if (!strcmp(val, "json"))
                a->format = FMT_JSON;
            else if (!strcmp(val, "html"))
                a->format = FMT_HTML;
            else {
                fprintf(stderr, "tfboard report: --format must be text, "
                                "markdown, json or html, not '%s'\n", val);
                return -1;
            }
        } else if (!strcmp(name, "--fail-on") &&
                   !strncmp(val, "regress:", 8)) {
            char err[512];
            if (a->n_gates == TFB_REPORT_MAX_GATES) {
                fprintf(stderr, "tfboard report: at most %d regress "
                                "gates\n", TFB_REPORT_MAX_GATES);
                return -1;
            }
            if (tfb_compare_gate_parse(val + 8, &a->gates[a->n_gates], err,
                                       sizeof err) < 0) {
                fprintf(stderr, "tfboard report: --fail-on %s\n", err);
                return -1;
            }
            a->n_gates++;
        } else if (!strcmp(name, "--fail-on")) {
            if (strcmp(val, "nan")) {
                fprintf(stderr, "tfboard report: --fail-on knows 'nan' "
                                "and 'regress:METRIC>LIMIT', not '%s'\n",
                        val);
                return -1;
            }
            a->fail_on_nan = 1;
        }
    }
    char why[256] = "";
    if (tfb_plugin_options_check(why, sizeof why) < 0) {
        fprintf(stderr, "tfboard report: %s\n", why);
        return -1;
    }
    if (a->n_gates && !a->compare_a) {
        fprintf(stderr, "tfboard report: --fail-on regress:... needs "
                        "--compare A B\n");
        return -1;
    }
    if (a->compare_a && a->opts.run_regex) {
        fprintf(stderr, "tfboard report: --run does not apply to "
                        "--compare\n");
        return -1;
    }
    if (!a->logdir && !a->compare_a) {
        fprintf(stderr, "tfboard report: --logdir is required\n");
        return -1;
    }
    return 0;
}

/* Event files whose last read failed, and the first of them as
 * "path: reason". */
static void count_unreadable(tfb_store *store, size_t *n, char *first,
                             size_t first_len)
{
    tfb_run **runs;
    size_t nr;
    *n = 0;
    if (tfb_store_runs(store, &runs, &nr) < 0)
        return;
    for (size_t i = 0; i < nr; i++) {
        tfb_file_info *fi;
        size_t nf;
        if (tfb_run_files(runs[i], &fi, &nf) < 0)
            continue;
        for (size_t k = 0; k < nf; k++)
            if (fi[k].error < 0) {
                if (*n == 0)
                    snprintf(first, first_len, "%s: %s", fi[k].path,
                             tfb_strerror(fi[k].error));
                (*n)++;
            }
        tfb_file_infos_free(fi, nf);
    }
    free(runs);
}

static int write_report(FILE *f, const tfb_report *rep, report_format fmt)
{
    switch (fmt) {
    case FMT_TEXT:
        return tfb_report_text(f, rep, 0);
    case FMT_MARKDOWN:
        return tfb_report_text(f, rep, 1);
    case FMT_HTML:
        return tfb_report_html(f, rep);
    case FMT_JSON: {
        tfb_json j;
        tfb_json_init(&j);
        int rc = tfb_report_json(&j, rep);
        if (rc < 0) {
            tfb_json_free(&j);
            return rc;
        }
        size_t len;
        char *txt = tfb_json_take(&j, &len);
        if (!txt)
            return TFB_ENOMEM;
        fwrite(txt, 1, len, f);
        fputc('\n', f);
        free(txt);
        return 0;
    }
    }
    return TFB_EINVAL;
}

int tfb_report_main(int argc, char **argv)
{
    report_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) {
        if (rc < 0)
            usage(stderr);
        return rc > 0 ? 0 : 2;
    }
    if (a.compare_a) {
        tfb_report_compare_args ca = {
            .logdir = a.logdir, .a = a.compare_a, .b = a.compare_b,
            .output = a.output, .format = a.format,
            .fail_on_nan = a.fail_on_nan, .quiet = a.quiet,
            .gates = a.gates, .n_gates = a.n_gates};
        return tfb_report_compare_main(&ca);
    }
    struct stat st;
    if (!tfb_report_is_url(a.logdir) &&
        (stat(a.logdir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "tfboard report: %s: not a readable directory\n",
                a.logdir);
        return 2;
    }

    tfb_store *store;
    rc = tfb_store_create(&store, a.logdir);
    if (rc < 0) {
        fprintf(stderr, "tfboard report: %s\n", tfb_strerror(rc));
        return 2;
    }
    rc = tfb_report_load_once(store, a.quiet);
    if (rc < 0) {
        fprintf(stderr, "tfboard report: loading %s: %s\n", a.logdir,
                tfb_strerror(rc));
        tfb_store_destroy(store);
        return 2;
    }

    tfb_report rep;
    char err[512] = "";
    rc = tfb_report_build(&rep, store, &a.opts, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "tfboard report: %s\n", err[0] ? err
                                                       : tfb_strerror(rc));
        tfb_store_destroy(store);
        return rc == TFB_EINVAL ? 2 : 1;
    }

    FILE *out = stdout;
    if (a.output && !(out = fopen(a.output, "w"))) {
        fprintf(stderr, "tfboard report: cannot write %s: %s\n", a.output,
                strerror(errno));
        tfb_report_free(&rep);
        tfb_store_destroy(store);
        return 1;
    }
    int status = 0;
    rc = write_report(out, &rep, a.format);
    if (rc < 0) {
        fprintf(stderr, "tfboard report: %s\n", tfb_strerror(rc));
        status = 1;
    }
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "tfboard report: write error: %s\n", strerror(errno));
        status = 1;
    }
    if (out != stdout)
        fclose(out);
    /* A report over files it could not read would look complete and be
     * wrong (thousands of empty runs when descriptors ran out): say so and
     * fail. */
    size_t bad = 0;
    char first_bad[600] = "";
    count_unreadable(store, &bad, first_bad, sizeof first_bad);
    if (bad > 0) {
        fprintf(stderr, "tfboard report: %zu event file%s could not be read "
                        "(%s); the report is incomplete\n",
                bad, bad == 1 ? "" : "s", first_bad);
        status = 2;
    }
    if (status == 0 && a.fail_on_nan && rep.total_alerts > 0) {
        fprintf(stderr, "tfboard report: %zu NaN/Inf alert%s (--fail-on "
                        "nan)\n",
                rep.total_alerts, rep.total_alerts == 1 ? "" : "s");
        status = 1;
    }
    tfb_report_free(&rep);
    tfb_store_destroy(store);
    return status;
}
