/*
 * dir_links.h - the one rule for a symbolic link to a directory met while
 * scanning the logdir (run directories, a job's rank directories).
 *
 * A link is followed, as a directory of the logdir, when its target is
 * inside the logdir, is neither the directory holding the link nor one
 * above it (a loop), and the link is not itself inside a directory that
 * was reached through a link (so chains of links can never loop). Other
 * links are not followed and are reported as what they are.
 *
 * Thread-safety: pure functions over the file system, any thread.
 */
#ifndef TFB_DIR_LINKS_H
#define TFB_DIR_LINKS_H

typedef enum {
    TFB_DIRLINK_FOLLOW = 0,  /* follow it */
    TFB_DIRLINK_OUTSIDE,     /* its target is outside the logdir */
    TFB_DIRLINK_LOOP,        /* its target holds the link itself */
    TFB_DIRLINK_NESTED,      /* inside a directory reached through a link */
    TFB_DIRLINK_BROKEN       /* cannot be resolved */
} tfb_dirlink;

/* Classifies the link at `path` (to a directory), found in `dir`, which
 * is the logdir-relative directory `rel` ("." for the logdir) of logdir
 * `logdir`. */
tfb_dirlink tfb_dirlink_classify(const char *logdir, const char *dir,
                                 const char *rel, const char *path);

/* Why a link is not followed, as a phrase ("is a symbolic link that
 * leaves the logdir"); "" for TFB_DIRLINK_FOLLOW. */
const char *tfb_dirlink_reason(tfb_dirlink k);

#endif
