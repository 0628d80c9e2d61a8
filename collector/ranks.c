/*
 * ranks.c - distributed jobs: which rank a writer is (from the options or
 * the launcher's environment), the rank record written after file_version,
 * and its decoder for readers.
 *
 * The rank record is a rank-0 DT_STRING tensor under tag TFB_RANK_TAG with
 * plugin TFB_RANK_PLUGIN; its one string is "key=value" lines (see the
 * "Distributed jobs" section of tfboard.h). Text lines keep the record
 * readable with any protobuf dump and let later versions add keys that old
 * readers skip.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/event.h"
#include "tfboard.h"
#include "collector/abi.h"
#include "collector/writer_internal.h"

/* Launcher variables, tried family by family: rank, world size and local
 * rank of one family are used together so two launchers' values never
 * mix. torchrun (and most launchers) first, then Open MPI, then Slurm. */
static const char *const k_families[][3] = {
    {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

/* Job name variables, first one set and non-empty wins. TFB_JOB first so
 * a user can override what the launcher says. */
static const char *const k_job_vars[] = {"TFB_JOB", "TORCHELASTIC_RUN_ID",
                                         "SLURM_JOB_ID"};

/* A whole non-negative decimal int, or -1. */
static int parse_nonneg(const char *s)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > INT_MAX || end == s)
        return -1;
    return (int)v;
}

/* Copies s keeping [A-Za-z0-9._-] and turning every other byte into '_',
 * at most 128 bytes: the result is safe as one path component and as one
 * line of the rank record. "", "." and ".." become "_". */
static char *clean_name(const char *s)
{
    size_t n = strlen(s);
    if (n > 128)
        n = 128;
    char *c = malloc(n + 2);
    if (!c)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                 (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
                 ch == '-';
        c[i] = ok ? ch : '_';
    }
    c[n] = 0;
    if (n == 0 || strcmp(c, ".") == 0 || strcmp(c, "..") == 0)
        strcpy(c, "_");
    return c;
}

void tfb_rank_owned_free(tfb_rank_owned *r)
{
    if (!r)
        return;
    free(r->job);
    free(r->host);
    r->job = r->host = NULL;
}

int tfb_rank_resolve(const tfb_writer_opts *opts, tfb_rank_owned *out)
{
    /* Read through the caller's size: an older caller's struct has no
     * rank fields, and they are then "unset". */
    tfb_writer_opts full;
    tfb_writer_opts_init(&full);
    if (opts && tfb_abi_read(&full, sizeof full, opts) < 0)
        return TFB_EINVAL;
    opts = &full;
    tfb_rank_owned r = {.rank = -1, .world_size = 0, .local_rank = -1};
    if (opts->world_size > 0) {
        /* The caller names the rank: all three come from opts. */
        if (opts->rank < 0 || opts->rank >= opts->world_size)
            return TFB_EINVAL;
        r.rank = opts->rank;
        r.world_size = opts->world_size;
        r.local_rank = opts->local_rank >= 0 ? opts->local_rank : -1;
    } else {
        for (size_t f = 0; f < sizeof k_families / sizeof k_families[0];
             f++) {
            int rank = parse_nonneg(getenv(k_families[f][0]));
            if (rank < 0)
                continue;
            int ws = parse_nonneg(getenv(k_families[f][1]));
            r.rank = rank;
            /* A world size that cannot hold the rank is not trusted. */
            r.world_size = ws > rank ? ws : 0;
            r.local_rank = parse_nonneg(getenv(k_families[f][2]));
            break;
        }
    }
    const char *job = opts->job && *opts->job ? opts->job : NULL;
    for (size_t i = 0; !job && i < sizeof k_job_vars / sizeof k_job_vars[0];
         i++) {
        const char *v = getenv(k_job_vars[i]);
        if (v && *v)
            job = v;
    }
    char host[256] = "localhost";
    if (opts->host && *opts->host) {
        snprintf(host, sizeof host, "%s", opts->host);
    } else if (gethostname(host, sizeof host - 1) < 0) {
        strcpy(host, "localhost");
    }
    host[sizeof host - 1] = 0;
    r.job = clean_name(job ? job : TFB_RANK_DEFAULT_JOB);
    r.host = clean_name(host);
    if (!r.job || !r.host) {
        tfb_rank_owned_free(&r);
        return TFB_ENOMEM;
    }
    *out = r;
    return 0;
}

/* The record's text; returns its length (excluding the NUL) or -1. */
static int rank_text(const tfb_rank_owned *r, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "version=1\njob=%s\nrank=%d\nworld_size=%d\n"
                     "local_rank=%d\nhost=%s\n",
                     r->job, r->rank, r->world_size, r->local_rank, r->host);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int tfb_rank_record(const tfb_rank_owned *r, double wall, uint8_t **rec,
                    size_t *len)
{
    char text[512];
    int n = rank_text(r, text, sizeof text);
    if (n < 0)
        return TFB_EINVAL;
    tfb_ev_value v = {.kind = TFB_EV_STRING,
                      .tag = TFB_RANK_TAG,
                      .tag_len = sizeof TFB_RANK_TAG - 1,
                      .plugin = TFB_RANK_PLUGIN,
                      .plugin_len = sizeof TFB_RANK_PLUGIN - 1,
                      .str = text,
                      .str_len = (size_t)n};
    size_t need = tfb_ev_record_size(0, &v);
    uint8_t *buf = malloc(need);
    if (!buf)
        return TFB_ENOMEM;
    size_t k = tfb_ev_record_write(buf, wall, 0, &v);
    tfb_seal_records(buf, k);
    *rec = buf;
    *len = k;
    return 0;
}

int tfb_writer_open_rank(tfb_writer **out, const char *logdir,
                         const tfb_writer_opts *opts)
{
    if (!out || !logdir || !*logdir)
        return TFB_EINVAL;
    tfb_rank_owned r;
    int rc = tfb_rank_resolve(opts, &r);
    if (rc)
        return rc;
    if (r.rank < 0) {
        /* No launcher: a job of one. */
        r.rank = 0;
        r.world_size = 1;
        r.local_rank = 0;
    }
    size_t cap = strlen(logdir) + strlen(r.job) + 32;
    char *dir = malloc(cap);
    if (!dir) {
        tfb_rank_owned_free(&r);
        return TFB_ENOMEM;
    }
    snprintf(dir, cap, "%s/%s/rank-%05d", logdir, r.job, r.rank);
    rc = tfb_writer_open_resolved(out, dir, opts, &r); /* takes r's strings */
    free(dir);
    return rc;
}

/* Parses a decimal int from a view; returns 0 on success. */
static int view_int(const char *p, size_t n, int32_t *out)
{
    if (n == 0 || n > 11)
        return -1;
    char tmp[12];
    memcpy(tmp, p, n);
    tmp[n] = 0;
    errno = 0;
    char *end;
    long v = strtol(tmp, &end, 10);
    if (errno || *end || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

int tfb_value_rank_info(const tfb_value *v, tfb_rank_info *out)
{
    if (!v || !out || v->plugin_name.len != sizeof TFB_RANK_PLUGIN - 1 ||
        memcmp(v->plugin_name.ptr, TFB_RANK_PLUGIN,
               sizeof TFB_RANK_PLUGIN - 1) != 0)
        return TFB_EINVAL;
    tfb_strview s;
    if (tfb_value_string(v, 0, &s) != 1)
        return TFB_ECORRUPT;
    tfb_rank_info r = {.rank = -1, .world_size = 0, .local_rank = -1,
                       .job = "", .job_len = 0, .host = "", .host_len = 0};
    int have_version = 0;
    const char *p = s.ptr, *end = s.ptr + s.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *eq = memchr(p, '=', (size_t)(le - p));
        if (eq) {
            size_t kl = (size_t)(eq - p);
            const char *val = eq + 1;
            size_t vl = (size_t)(le - val);
            int bad = 0;
            int32_t tmp;
            if (kl == 7 && memcmp(p, "version", 7) == 0) {
                bad = view_int(val, vl, &tmp) || tmp < 1;
                have_version = !bad;
            } else if (kl == 3 && memcmp(p, "job", 3) == 0) {
                r.job = val;
                r.job_len = vl;
            } else if (kl == 4 && memcmp(p, "host", 4) == 0) {
                r.host = val;
                r.host_len = vl;
            } else if (kl == 4 && memcmp(p, "rank", 4) == 0) {
                bad = view_int(val, vl, &r.rank);
            } else if (kl == 10 && memcmp(p, "world_size", 10) == 0) {
                bad = view_int(val, vl, &r.world_size);
            } else if (kl == 10 && memcmp(p, "local_rank", 10) == 0) {
                bad = view_int(val, vl, &r.local_rank);
            } /* other keys: later versions; skipped */
            if (bad)
                return TFB_ECORRUPT;
        }
        p = nl ? nl + 1 : end;
    }
    if (!have_version || r.rank < 0 || r.world_size < 0 ||
        (r.world_size > 0 && r.rank >= r.world_size))
        return TFB_ECORRUPT;
    *out = r;
    return 0;
}

int tfb_writer_get_rank(const tfb_writer *w, tfb_rank_info *out)
{
    if (!w || !out)
        return TFB_EINVAL;
    const tfb_rank_owned *r = tfb_writer_rank(w);
    if (r->rank < 0)
        return TFB_ENOENT;
    out->rank = r->rank;
    out->world_size = r->world_size;
    out->local_rank = r->local_rank;
    out->job = r->job;
    out->job_len = strlen(r->job);
    out->host = r->host;
    out->host_len = strlen(r->host);
    return 0;
}
