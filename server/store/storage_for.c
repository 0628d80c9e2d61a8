/*
 * storage_for.c - which storage backend a logdir names (storage.h): a
 * bucket for s3:// and gs:// URLs, else local files. Apart from storage.c
 * (the helpers every backend uses), so that the backends and their
 * helpers never call each other.
 */
#include <stdio.h>
#include <string.h>

#include "store/storage.h"

int tfb_storage_for(const char *logdir, tfb_storage **out, char *err,
                    size_t errlen, FILE *log)
{
    if (strncmp(logdir, "s3://", 5) == 0 || strncmp(logdir, "gs://", 5) == 0)
        return tfb_storage_s3_create(out, logdir, err, errlen);
    return tfb_storage_local_create(out, log);
}
