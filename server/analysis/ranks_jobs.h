/*
 * ranks_jobs.h - a distributed job between the store and the analysis
 * (ranks_analysis.h): which runs form a job, each rank run's step series
 * as the analysis's input, the job analysis and its straggler sentence.
 * Below the plugins (server/analysis/) so that the Ranks dashboard, the
 * report and the straggler alert name the same straggler by the same
 * rule; the GPU side and the JSON stay in the ranks plugin
 * (plugins/ranks/ranks_job.h).
 *
 * Ownership: area "ranks".
 *
 * Jobs. A run belongs to a job when
 *  - it holds a rank record (plugin "tfboard_rank", kept per run by the
 *    store, see tfb_run_records): the job is the record's job name, the
 *    rank and world size are the record's; or
 *  - it has no rank record but its directory is called rank-<digits>: it
 *    joins the job of a sibling run (same parent directory) that has a
 *    record, else the job named by its parent directory (relative to the
 *    logdir; "." for the logdir itself); the rank is the number in the
 *    name, the world size unknown.
 * Runs of one job may sit in different directories (the job name is what
 * joins them). rank-<digits> directories next to a job's rank runs that
 * hold no event file (so they are no run of the store) are listed as the
 * job's empty rank directories (a note on the page and in the report).
 *
 * Thread-safety: every function is reentrant and reads the store through
 * its thread-safe read side (series pinned one at a time, briefly).
 */
#ifndef TFB_SERVER_RANKS_JOBS_H
#define TFB_SERVER_RANKS_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ranks_analysis.h"
#include "store/store.h"

typedef struct tfb_ranks_member {
    tfb_run *run;
    const char *run_name;  /* the store's (stable) */
    int32_t rank;          /* -1: unknown */
    int32_t world_size;    /* 0: unknown */
    int has_record;
    char host[64];         /* from the record; "" when none */
} tfb_ranks_member;

typedef struct tfb_ranks_job {
    char *name;                /* name_len bytes (a NUL a writer put in
                                  is kept) and a NUL after them */
    size_t name_len;
    tfb_ranks_member *members; /* by rank, then run name */
    size_t n_members;
    char **empty_dirs;         /* relative to the logdir */
    size_t n_empty_dirs;
    /* Per empty dir: a tfb_dirlink (dir_links.h) when it is a symbolic
     * link that was not followed, else 0. */
    unsigned char *empty_link;
} tfb_ranks_job;

/* The run's membership, without scanning other runs (the cheap test of
 * the plugin's has_data): 1 when the run holds a rank record or its
 * directory is rank-<digits>. */
int tfb_ranks_run_is_rank(tfb_run *r);

/* Every job of the store, sorted by name. Returns 0 or TFB_ENOMEM. Free
 * with tfb_ranks_jobs_free (NULL-safe). */
int tfb_ranks_find_jobs(tfb_store *s, tfb_ranks_job **out, size_t *n);
void tfb_ranks_jobs_free(tfb_ranks_job *v, size_t n);

/* The job of that name in v, or NULL. */
const tfb_ranks_job *tfb_ranks_job_find(const tfb_ranks_job *v, size_t n,
                                        const char *name);

/* The job run r belongs to, or NULL. */
const tfb_ranks_job *tfb_ranks_job_of_run(const tfb_ranks_job *v, size_t n,
                                          const tfb_run *r);

/* One rank run's steps from its pipeline/step_ms (step time and wall end
 * time), pipeline/input_ms and comm/ms scalars, joined by step; one entry
 * per step_ms point, in file order (the analysis notes repeated steps).
 * input/comm: the last value logged for the step, NaN when none. O(n)
 * when the series are in step order (as the writer logs them), else
 * O(n log n). *out is malloc'd (NULL when n == 0). */
int tfb_ranks_collect(tfb_run *r, tfb_ranks_step **out, size_t *n);

/* Runs the analysis on the job's event-file data (no traces). */
int tfb_ranks_job_analyze(const tfb_ranks_job *job, const tfb_ranks_opts *o,
                          tfb_ranks_result **out);

/* The sentence for straggler k of res (index into res->stragglers):
 * "rank 3 is 23 % slower than the median rank; the other ranks spend 18 %
 * of each step waiting in communication". */
void tfb_ranks_straggler_sentence(const tfb_ranks_result *res, size_t k,
                                  char *buf, size_t len);

/* The note for the job's empty rank directory i. */
void tfb_ranks_empty_dir_note(const tfb_ranks_job *job, size_t i, char *buf,
                              size_t len);

#endif
