/*
 * ranks_jobs.c - jobs from the store (rank records, rank-N directories),
 * each rank run's steps as the analysis's input, and the job analysis.
 * The rules are in ranks_jobs.h.
 */
#include "analysis/ranks_jobs.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/str.h"
#include "base/vec.h"
#include "store/dir_links.h"
#include "tfboard.h"

/* ---- membership ---------------------------------------------------------- */

/* The number in a final path component rank-<digits>, or -1. */
static int32_t rank_of_dirname(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "rank-", 5) != 0 || !base[5])
        return -1;
    int64_t v = 0;
    for (const char *p = base + 5; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > INT32_MAX)
            return -1;
    }
    return (int32_t)v;
}

/* The run's rank record, decoded: 1 (m filled, job_out malloc'd), 0 when
 * none or undecodable, TFB_ENOMEM. */
static int read_record(tfb_run *r, tfb_ranks_member *m, char **job_out,
                       size_t *job_len)
{
    tfb_plugin_record *recs;
    size_t n;
    int rc = tfb_run_records(r, TFB_RANK_PLUGIN, &recs, &n);
    if (rc < 0)
        return rc;
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        tfb_value v = {.size = sizeof v};
        v.kind = TFB_VALUE_TENSOR;
        v.plugin_name.ptr = recs[i].plugin;
        v.plugin_name.len = strlen(recs[i].plugin);
        v.tensor = recs[i].tensor;
        v.tensor_len = recs[i].tensor_len;
        tfb_rank_info ri = {.size = sizeof ri};
        if (tfb_value_rank_info(&v, &ri) != 0)
            continue;
        char *job = tfb_strndup(ri.job, ri.job_len);
        if (!job) {
            tfb_plugin_records_free(recs, n);
            return TFB_ENOMEM;
        }
        m->rank = ri.rank;
        m->world_size = ri.world_size;
        m->has_record = 1;
        size_t hl = ri.host_len < sizeof m->host - 1 ? ri.host_len
                                                     : sizeof m->host - 1;
        memcpy(m->host, ri.host, hl);
        m->host[hl] = 0;
        *job_out = job;
        *job_len = ri.job_len;
        found = 1;
    }
    tfb_plugin_records_free(recs, n);
    return found;
}

int tfb_ranks_run_is_rank(tfb_run *r)
{
    if (rank_of_dirname(tfb_run_name(r)) >= 0)
        return 1;
    tfb_plugin_record *recs;
    size_t n;
    if (tfb_run_records(r, TFB_RANK_PLUGIN, &recs, &n) < 0)
        return 0;
    tfb_plugin_records_free(recs, n);
    return n > 0;
}

/* Job names are byte strings with a length: a NUL a writer put in the
 * record is part of the name, never its end. 0 when equal, else the
 * order. */
static int same_name(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

/* The parent directory of a run name ("." for a top-level run), malloc'd. */
static char *parent_of(const char *name)
{
    const char *slash = strrchr(name, '/');
    return slash ? tfb_strndup(name, (size_t)(slash - name)) : strdup(".");
}

typedef struct cand {
    tfb_ranks_member m;
    char *job;    /* NULL until assigned; job_len bytes (NULs kept) */
    size_t job_len;
    char *parent;
    size_t job_at; /* its job's index, once grouped */
} cand;

static int cmp_member(const void *a, const void *b)
{
    const tfb_ranks_member *x = a, *y = b;
    /* Unknown ranks last. */
    uint32_t rx = (uint32_t)x->rank, ry = (uint32_t)y->rank;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x->run_name, y->run_name);
}

static int cmp_job(const void *a, const void *b)
{
    const tfb_ranks_job *x = a, *y = b;
    return same_name(x->name, x->name_len, y->name, y->name_len);
}

void tfb_ranks_jobs_free(tfb_ranks_job *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].members);
        for (size_t k = 0; k < v[i].n_empty_dirs; k++)
            free(v[i].empty_dirs[k]);
        free(v[i].empty_dirs);
        free(v[i].empty_link);
    }
    free(v);
}

/* rank-N directories in the parents of the job's members that are no run
 * of the store (no event file in them). */
static int scan_empty_dirs(tfb_store *s, tfb_ranks_job *job, cand *cs,
                           size_t nc)
{
    const char *logdir = tfb_store_logdir(s);
    TFB_VEC(char *) dirs = {0};
    TFB_VEC(unsigned char) links = {0};
    int rc = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!cs[i].job || same_name(cs[i].job, cs[i].job_len, job->name,
                                    job->name_len) != 0)
            continue;
        /* Each parent once. */
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = cs[k].job &&
                   same_name(cs[k].job, cs[k].job_len, job->name,
                             job->name_len) == 0 &&
                   strcmp(cs[k].parent, cs[i].parent) == 0;
        if (seen)
            continue;
        char path[4096];
        int pl = strcmp(cs[i].parent, ".") == 0
                     ? snprintf(path, sizeof path, "%s", logdir)
                     : snprintf(path, sizeof path, "%s/%s", logdir,
                                cs[i].parent);
        if (pl < 0 || (size_t)pl >= sizeof path)
            continue;
        DIR *d = opendir(path);
        if (!d)
            continue;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (rank_of_dirname(de->d_name) < 0)
                continue;
            char rel[4096], full[8192];
            int rl = strcmp(cs[i].parent, ".") == 0
                         ? snprintf(rel, sizeof rel, "%s", de->d_name)
                         : snprintf(rel, sizeof rel, "%s/%s", cs[i].parent,
                                    de->d_name);
            if (rl < 0 || (size_t)rl >= sizeof rel)
                continue;
            snprintf(full, sizeof full, "%s/%s", path, de->d_name);
            struct stat st;
            if (stat(full, &st) != 0 || !S_ISDIR(st.st_mode))
                continue;
            if (tfb_store_find_run(s, rel))
                continue;
            /* A link the loader did not follow (it leaves the logdir,
             * loops): the note says so rather than "no event file". */
            tfb_dirlink lk = TFB_DIRLINK_FOLLOW;
            if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode))
                lk = tfb_dirlink_classify(logdir, path, cs[i].parent, full);
            char *c = strdup(rel);
            if (!c || tfb_vec_push(&links, (unsigned char)lk) < 0 ||
                tfb_vec_push(&dirs, c) < 0) {
                free(c);
                links.n = dirs.n;
                rc = TFB_ENOMEM;
                break;
            }
        }
        closedir(d);
        if (rc < 0)
            break;
    }
    /* The job owns the arrays from here, even a partial list on
     * failure (tfb_ranks_jobs_free frees it). */
    job->empty_dirs = dirs.v;
    job->empty_link = links.v;
    job->n_empty_dirs = dirs.n;
    if (rc < 0)
        return rc;
    /* readdir order is the file system's: sort for stable output. */
    for (size_t a = 1; a < job->n_empty_dirs; a++)
        for (size_t b = a; b > 0 && strcmp(job->empty_dirs[b - 1],
                                           job->empty_dirs[b]) > 0; b--) {
            char *t = job->empty_dirs[b];
            job->empty_dirs[b] = job->empty_dirs[b - 1];
            job->empty_dirs[b - 1] = t;
            unsigned char k = job->empty_link[b];
            job->empty_link[b] = job->empty_link[b - 1];
            job->empty_link[b - 1] = k;
        }
    return 0;
}

int tfb_ranks_find_jobs(tfb_store *s, tfb_ranks_job **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    tfb_run **runs;
    size_t nr;
    int rc = tfb_store_runs(s, &runs, &nr);
    if (rc < 0)
        return rc;
    cand *cs = calloc(nr ? nr : 1, sizeof *cs);
    TFB_VEC(tfb_ranks_job) jobs = {0};
    size_t nc = 0;
    if (!cs) {
        free(runs);
        return TFB_ENOMEM;
    }
    /* 1. Runs with a record, and rank-N runs. */
    for (size_t i = 0; i < nr; i++) {
        cand c;
        memset(&c, 0, sizeof c);
        c.m.run = runs[i];
        c.m.run_name = tfb_run_name(runs[i]);
        c.m.rank = -1;
        rc = read_record(runs[i], &c.m, &c.job, &c.job_len);
        if (rc < 0)
            goto fail;
        if (rc == 0) {
            c.m.rank = rank_of_dirname(c.m.run_name);
            if (c.m.rank < 0)
                continue;
        }
        c.parent = parent_of(c.m.run_name);
        if (!c.parent) {
            free(c.job);
            rc = TFB_ENOMEM;
            goto fail;
        }
        cs[nc++] = c;
    }
    /* 2. rank-N runs without a record: a sibling's job, else the parent. */
    for (size_t i = 0; i < nc; i++) {
        if (cs[i].job)
            continue;
        const char *name = NULL;
        size_t nl = 0;
        for (size_t k = 0; k < nc && !name; k++)
            if (cs[k].m.has_record && strcmp(cs[k].parent, cs[i].parent) == 0)
                name = cs[k].job, nl = cs[k].job_len;
        if (!name)
            name = cs[i].parent, nl = strlen(cs[i].parent);
        cs[i].job = tfb_strndup(name, nl);
        cs[i].job_len = nl;
        if (!cs[i].job) {
            rc = TFB_ENOMEM;
            goto fail;
        }
    }
    /* 3. Group by job name: the jobs, then each job's members. */
    for (size_t i = 0; i < nc; i++) {
        size_t j = 0;
        while (j < jobs.n && same_name(jobs.v[j].name, jobs.v[j].name_len,
                                       cs[i].job, cs[i].job_len) != 0)
            j++;
        cs[i].job_at = j;
        if (j < jobs.n)
            continue;
        tfb_ranks_job *jb = tfb_vec_add(&jobs);
        if (!jb || !(jb->name = tfb_strndup(cs[i].job, cs[i].job_len))) {
            rc = TFB_ENOMEM;
            goto fail;
        }
        jb->name_len = cs[i].job_len;
    }
    for (size_t j = 0; j < jobs.n; j++) {
        TFB_VEC(tfb_ranks_member) mv = {0};
        for (size_t i = 0; i < nc; i++)
            if (cs[i].job_at == j && tfb_vec_push(&mv, cs[i].m) < 0) {
                tfb_vec_free(&mv);
                rc = TFB_ENOMEM;
                goto fail;
            }
        jobs.v[j].members = mv.v;
        jobs.v[j].n_members = mv.n;
        qsort(mv.v, mv.n, sizeof *mv.v, cmp_member);
        if ((rc = scan_empty_dirs(s, &jobs.v[j], cs, nc)) < 0)
            goto fail;
    }
    if (jobs.n > 1)
        qsort(jobs.v, jobs.n, sizeof *jobs.v, cmp_job);
    rc = 0;
    *out = jobs.v;
    *n_out = jobs.n;
    jobs.v = NULL;
    jobs.n = 0;
fail:
    for (size_t i = 0; i < nc; i++) {
        free(cs[i].job);
        free(cs[i].parent);
    }
    free(cs);
    free(runs);
    tfb_ranks_jobs_free(jobs.v, jobs.n);
    return rc;
}

const tfb_ranks_job *tfb_ranks_job_find(const tfb_ranks_job *v, size_t n,
                                        const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (same_name(v[i].name, v[i].name_len, name, strlen(name)) == 0)
            return &v[i];
    return NULL;
}

const tfb_ranks_job *tfb_ranks_job_of_run(const tfb_ranks_job *v, size_t n,
                                          const tfb_run *r)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < v[i].n_members; k++)
            if (v[i].members[k].run == r)
                return &v[i];
    return NULL;
}

/* ---- steps from the store ------------------------------------------------ */

/* a[*cur].v when a[*cur].step == step (cur advances with ascending
 * lookups), else by binary search; NaN when absent. */
static double lookup(const tfb_step_value *a, size_t n, size_t *cur,
                     int64_t step)
{
    size_t c = *cur;
    for (int k = 0; k < 4 && c < n && a[c].step < step; k++)
        c++;
    if (c < n && a[c].step == step) {
        *cur = c + 1;
        return a[c].v;
    }
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && a[lo].step == step) {
        *cur = lo + 1;
        return a[lo].v;
    }
    *cur = lo;
    return NAN;
}

int tfb_ranks_collect(tfb_run *r, tfb_ranks_step **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    tfb_series *st = tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                         TFB_TAG_STEP_MS);
    if (!st)
        return 0;
    tfb_step_value *in = NULL, *cm = NULL;
    size_t ni = 0, ncm = 0;
    int rc = tfb_series_by_step(
        tfb_run_find_series(r, TFB_SERIES_SCALAR, TFB_TAG_INPUT_MS), &in, &ni);
    if (rc == 0)
        rc = tfb_series_by_step(
            tfb_run_find_series(r, TFB_SERIES_SCALAR, TFB_TAG_COMM_MS), &cm,
            &ncm);
    if (rc < 0) {
        free(in);
        return rc;
    }
    tfb_series_view v;
    tfb_series_read_begin(st, &v);
    tfb_ranks_step *a = v.count ? malloc(v.count * sizeof *a) : NULL;
    if (v.count && !a) {
        tfb_series_read_end(st);
        free(in);
        free(cm);
        return TFB_ENOMEM;
    }
    size_t ci = 0, cc = 0;
    for (size_t i = 0; i < v.count; i++) {
        int64_t step = v.step[i];
        a[i] = (tfb_ranks_step){
            .step = step,
            .step_ms = (double)v.value[i],
            .input_ms = lookup(in, ni, &ci, step),
            .comm_ms = lookup(cm, ncm, &cc, step),
            .wall_end = v.wall[i],
        };
    }
    size_t n = v.count;
    tfb_series_read_end(st);
    free(in);
    free(cm);
    *out = a;
    *n_out = n;
    return 0;
}

int tfb_ranks_job_analyze(const tfb_ranks_job *job, const tfb_ranks_opts *o,
                          tfb_ranks_result **out)
{
    size_t n = job->n_members;
    tfb_ranks_input *in = calloc(n ? n : 1, sizeof *in);
    if (!in)
        return TFB_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const tfb_ranks_member *m = &job->members[i];
        tfb_ranks_step *steps;
        size_t ns;
        rc = tfb_ranks_collect(m->run, &steps, &ns);
        if (rc < 0)
            break;
        in[i] = (tfb_ranks_input){.rank = m->rank,
                                  .world_size = m->world_size,
                                  .label = m->run_name,
                                  .steps = steps,
                                  .n_steps = ns};
    }
    if (rc == 0)
        rc = tfb_ranks_analyze(in, n, o, out);
    for (size_t i = 0; i < n; i++)
        free((void *)in[i].steps);
    free(in);
    return rc;
}

void tfb_ranks_straggler_sentence(const tfb_ranks_result *res, size_t k,
                                  char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = 0;
    if (k >= res->n_stragglers)
        return;
    const tfb_ranks_rank *rk = &res->ranks[res->stragglers[k]];
    int w = snprintf(buf, len,
                     "rank %d is %.0f %% slower than the median rank",
                     (int)rk->rank, 100.0 * rk->slowdown);
    if (w < 0 || (size_t)w >= len)
        return;
    if (isfinite(res->others_comm_share))
        snprintf(buf + w, len - (size_t)w,
                 "; the other ranks spend %.0f %% of each step waiting in "
                 "communication", 100.0 * res->others_comm_share);
}

void tfb_ranks_empty_dir_note(const tfb_ranks_job *job, size_t i, char *buf,
                              size_t len)
{
    tfb_dirlink lk = i < job->n_empty_dirs && job->empty_link
                         ? (tfb_dirlink)job->empty_link[i]
                         : TFB_DIRLINK_FOLLOW;
    if (lk != TFB_DIRLINK_FOLLOW)
        snprintf(buf, len, "%s %s; that rank is missing from the job",
                 job->empty_dirs[i], tfb_dirlink_reason(lk));
    else
        snprintf(buf, len, "%s holds no event file; that rank is missing "
                           "from the job",
                 i < job->n_empty_dirs ? job->empty_dirs[i] : "?");
}
