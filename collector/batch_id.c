/*
 * batch_id.c - tfb_step_batch: the batch a step trained on, as text under
 * batch/id, so that a loss spike can be traced to its batches (issue 23).
 * Text rather than a scalar: ids are often strings, and a float32 scalar
 * would round integer ids above 2^24.
 */
#include <string.h>

#include "collector/writer_internal.h"
#include "tfboard.h"

int tfb_step_batch_at(tfb_writer *w, int64_t step, const char *id)
{
    if (!w || !id)
        return TFB_EINVAL;
    return tfb_text(w, TFB_TAG_BATCH_ID, id, step);
}

int tfb_step_batch(tfb_writer *w, const char *id)
{
    if (!w || !id)
        return TFB_EINVAL;
    /* The step being trained: the open pipeline step when there is one
     * (the batch is fetched inside it), else the newest step logged. */
    int64_t step;
    if (!tfb_pipeline_open_step(w, &step))
        (void)tfb_writer_max_step(w, &step);
    return tfb_step_batch_at(w, step, id);
}
