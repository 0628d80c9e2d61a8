/*
 * writer_rank.c - the rank-aware side of the writer API: opening a rank's
 * writer under <logdir>/<job>/rank-NNNNN and asking a writer its rank.
 *
 * It sits above both writer.c and ranks.c (it calls the two of them, and
 * neither calls it), so the writer can resolve a rank through ranks.c
 * without ranks.c calling back into the writer.
 */
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "tfboard.h"
#include "collector/abi.h"
#include "collector/writer_internal.h"

int tfb_writer_open_rank(tfb_writer **out, const char *logdir,
                         const tfb_writer_opts *opts)
{
    if (!out || !logdir || !*logdir)
        return TFB_EINVAL;
    tfb_rank_owned r;
    int rc = tfb_writer_resolve_rank(opts, &r);
    if (rc)
        return rc;
    if (r.rank < 0) {
        /* No launcher: a job of one. */
        r.rank = 0;
        r.world_size = 1;
        r.local_rank = 0;
    }
    char *dir = tfb_strfmt("%s/%s/rank-%05d", logdir, r.job, r.rank);
    if (!dir) {
        tfb_rank_owned_free(&r);
        return TFB_ENOMEM;
    }
    rc = tfb_writer_open_resolved(out, dir, opts, &r); /* takes r's strings */
    free(dir);
    return rc;
}

int tfb_writer_get_rank(const tfb_writer *w, tfb_rank_info *out)
{
    if (!w || !out || tfb_abi_size(out) < sizeof(size_t))
        return TFB_EINVAL;
    const tfb_rank_owned *r = tfb_writer_rank(w);
    if (r->rank < 0)
        return TFB_ENOENT;
    tfb_rank_info info = {.size = sizeof info,
                          .rank = r->rank,
                          .world_size = r->world_size,
                          .local_rank = r->local_rank,
                          .job = r->job,
                          .job_len = strlen(r->job),
                          .host = r->host,
                          .host_len = strlen(r->host)};
    /* Only as far as the caller's size reaches. */
    return tfb_abi_write(out, &info, sizeof info);
}
