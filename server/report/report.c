/*
 * report.c - `tfboard report`: parses its options, loads the logdir once
 * (no HTTP server, no reload), builds the report model and writes it in
 * the chosen format. Exit status: 0, 1 when --fail_on nan finds an alert
 * (or the output cannot be written), 2 on bad usage, an unreadable
 * logdir, a logdir with no runs, or event files that could not be read.
 */
#include "report/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/regex_bound.h"
#include "core/options.h"
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

static int parse_format(void *user, const char *const *v, char *why,
                        size_t why_len)
{
    static const char *const names[] = {"text", "markdown", "json", "html",
                                        "md"};
    static const report_format fmts[] = {FMT_TEXT, FMT_MARKDOWN, FMT_JSON,
                                         FMT_HTML, FMT_MARKDOWN};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(v[0], names[i])) {
            *(report_format *)user = fmts[i];
            return 0;
        }
    snprintf(why, why_len, "must be text, markdown, json or html, not '%s'",
             v[0]);
    return TFB_EINVAL;
}

static int parse_fail_on(void *user, const char *const *v, char *why,
                         size_t why_len)
{
    report_args *a = user;
    if (!strcmp(v[0], "nan")) {
        a->fail_on_nan = 1;
        return 0;
    }
    if (strncmp(v[0], "regress:", 8) != 0) {
        snprintf(why, why_len, "knows 'nan' and 'regress:METRIC>LIMIT', "
                               "not '%s'", v[0]);
        return TFB_EINVAL;
    }
    if (a->n_gates == TFB_REPORT_MAX_GATES) {
        snprintf(why, why_len, "at most %d regress gates",
                 TFB_REPORT_MAX_GATES);
        return TFB_EINVAL;
    }
    if (tfb_compare_gate_parse(v[0] + 8, &a->gates[a->n_gates], why,
                               why_len) < 0)
        return TFB_EINVAL;
    a->n_gates++;
    return 0;
}

static int parse_compare(void *user, const char *const *v, char *why,
                         size_t why_len)
{
    report_args *a = user;
    /* "--compare --logdir runs": the runs were left out, and the next
     * option would be taken for run A. */
    for (int i = 0; i < 2; i++)
        if (v[i] && !strncmp(v[i], "--", 2)) {
            snprintf(why, why_len, "needs the two runs first: --compare A "
                     "B (got '%.60s' where %s goes)", v[i], i ? "B" : "A");
            return TFB_EINVAL;
        }
    if (!v[1]) {
        snprintf(why, why_len, "needs two runs or directories: --compare "
                               "A B");
        return TFB_EINVAL;
    }
    a->compare_a = v[0];
    a->compare_b = v[1];
    return 0;
}

/* Returns 0 to go on, 1 after --help, -1 on bad usage (message printed). */
static int parse_args(int argc, char **argv, report_args *a)
{
    memset(a, 0, sizeof *a);
    const tfb_option opts[] = {
        {"logdir", "DIR", "the runs to report on (a directory or a "
         "bucket); with\n--compare, where A and B are run names",
         TFB_OPT_STRING, .dest = &a->logdir},
        {"run", "REGEX", "only runs whose name matches (POSIX extended)",
         TFB_OPT_STRING, .dest = &a->opts.run_regex},
        {"where", "EXPR", "only runs where EXPR holds: SQL over runs_wide,\n"
         "e.g. \"lr > 0.01 AND status = 'finished'\" (the web UI's\n"
         "filter box takes the same text)",
         TFB_OPT_STRING, .dest = &a->opts.where},
        {"format", "F", "text, markdown, json, or html (one self-contained\n"
         "page with charts)", TFB_OPT_CALL, "text",
         .dest = &(tfb_opt_call){parse_format, &a->format, 1}},
        {"output", "FILE", "write there instead of standard output",
         TFB_OPT_STRING, .dest = &a->output},
        {"quiet", NULL, "no progress lines on standard error", TFB_OPT_FLAG,
         .dest = &a->quiet},
        {"compare", "A B", "compare run B with the baseline A: for every "
         "scalar\ntag both runs have, the final value and the minimum\n"
         "and their change; mean step time, input wait and\ninput share; "
         "GPU kernel time by kernel (slower ones\nmarked); the hparams that "
         "differ. Changes are\n(B - A) / |A|. With --logdir DIR, A and B "
         "are run\nnames in DIR (as the runs table shows them). Without\n"
         "--logdir, A and B are directories: each a run's own\ndirectory, "
         "or a logdir that holds exactly one run.", TFB_OPT_CALL,
         .dest = &(tfb_opt_call){parse_compare, a, 2}},
        {"fail_on", "WHEN", "(repeatable) exit 1 when WHEN holds:\n"
         "nan: some run (with --compare: B) has a NaN/Inf alert;\n"
         "'regress:METRIC>LIMIT' (with --compare): B is worse\nthan A by "
         "more than LIMIT, the reason on standard\nerror. '>' means higher "
         "is worse (loss, step_ms);\n'<' means higher is better "
         "(regress:accuracy<1%).\nLIMIT with '%' is a share of A's value, "
         "without an\nabsolute difference. METRIC: step_ms, input_ms,\n"
         "input_share, kernel_ms, mfu (mean MFU %),\ntokens_per_s, "
         "j_per_token (e.g. regress:mfu<2%,\nregress:j_per_token>5%), or a "
         "scalar tag (its final\nvalue; "
         "tag:NAME for a tag spelled like one of those).\nA metric missing "
         "from either run, or NaN/Inf in B,\nfails the gate.", TFB_OPT_CALL,
         .dest = &(tfb_opt_call){parse_fail_on, a, 1}},
    };
    const tfb_command cmd = {
        .prog = "tfboard report",
        .synopsis =
            "usage: tfboard report --logdir DIR [--run REGEX] [--where EXPR]\n"
            "         [--format text|markdown|json|html] [--fail_on nan]\n"
            "         [--output FILE] [--quiet] [dashboard options]\n"
            "       tfboard report --compare A B [--logdir DIR]\n"
            "         [--format ...] [--fail_on 'regress:METRIC>LIMIT' ...]\n"
            "\n"
            "A post-mortem of each run in DIR: steps and duration, "
            "last/min/max\nof each scalar, NaN/Inf alerts (first one first), "
            "gradient flags,\nthe input-pipeline verdict, and GPU figures "
            "when traced.\n",
        .opts = opts, .n_opts = sizeof opts / sizeof *opts,
        .epilogue = "Exit status: 0; 1 when --fail_on holds or the output "
                    "cannot be written;\n2 on bad usage (bad --fail_on "
                    "syntax too), an unreadable logdir,\nno runs found under "
                    "it, or event files that could not be read.\n"};
    int rc = tfb_options_parse(&cmd, argc, argv, stdout, stderr);
    if (rc != 0)
        return rc < 0 ? -1 : 1;
    if (a->n_gates && !a->compare_a) {
        fprintf(stderr, "tfboard report: --fail_on regress:... needs "
                        "--compare A B\n");
        return -1;
    }
    if (a->compare_a && a->opts.where) {
        fprintf(stderr, "tfboard report: --where does not apply to "
                        "--compare (it names its two runs)\n");
        return -1;
    }
    if (a->compare_a && a->opts.run_regex) {
        fprintf(stderr, "tfboard report: --run does not apply to "
                        "--compare\n");
        return -1;
    }
    if (!a->logdir && !a->compare_a) {
        fprintf(stderr, "tfboard report: --logdir is required (see tfboard "
                        "report --help)\n");
        return -1;
    }
    /* Refused before the logdir is read (report_model.c compiles it with
     * the same bound). */
    char why[300];
    if (a->opts.run_regex &&
        tfb_regex_check(a->opts.run_regex, why, sizeof why) < 0) {
        fprintf(stderr, "tfboard report: bad --run regex '%s': %s\n",
                a->opts.run_regex, why);
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
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (a.compare_a) {
        tfb_report_compare_args ca = {
            .logdir = a.logdir, .a = a.compare_a, .b = a.compare_b,
            .output = a.output, .format = a.format,
            .fail_on_nan = a.fail_on_nan, .quiet = a.quiet,
            .gates = a.gates, .n_gates = a.n_gates};
        return tfb_report_compare_main(&ca);
    }
    tfb_store *store;
    if (tfb_report_open(a.logdir, a.quiet, &store) < 0)
        return 2;
    /* An empty or event-less directory (a typo, a wrong mount) must not
     * pass a CI check as "no run diverged". */
    tfb_run **all;
    size_t n_all = 0;
    if (tfb_store_runs(store, &all, &n_all) == 0)
        free(all);
    if (n_all == 0) {
        fprintf(stderr, "tfboard report: no runs found under %s\n",
                a.logdir);
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
        /* In a bucket, the request's own line says why (403 AccessDenied,
         * 503 SlowDown after 5 attempts...), where the error code alone
         * would say "permission denied" or "input/output error". */
        tfb_storage_status sst;
        int has = tfb_store_storage_info(store, &sst) == 0 &&
                  sst.last_error[0];
        fprintf(stderr, "tfboard report: %zu event file%s could not be read "
                        "(%s%s%s); the report is incomplete\n",
                bad, bad == 1 ? "" : "s", first_bad,
                has ? "; the last failed request: " : "",
                has ? sst.last_error : "");
        status = 2;
    }
    if (status == 0 && a.fail_on_nan && rep.total_alerts > 0) {
        fprintf(stderr, "tfboard report: %zu NaN/Inf alert%s (--fail_on "
                        "nan)\n",
                rep.total_alerts, rep.total_alerts == 1 ? "" : "s");
        status = 1;
    }
    tfb_report_free(&rep);
    tfb_store_destroy(store);
    return status;
}
