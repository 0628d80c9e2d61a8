/*
 * dir_links.c - symbolic links to directories in the logdir (see
 * dir_links.h).
 */
#include "store/dir_links.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* 1 when path is `root` or below it. */
static int is_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return 1;
    return strncmp(path, root, n) == 0 && (path[n] == '/' || !path[n]);
}

tfb_dirlink tfb_dirlink_classify(const char *logdir, const char *dir,
                                 const char *rel, const char *path)
{
    char *root = realpath(logdir, NULL);
    char *here = realpath(dir, NULL);
    char *target = realpath(path, NULL);
    tfb_dirlink k = TFB_DIRLINK_FOLLOW;
    if (!root || !here || !target) {
        k = TFB_DIRLINK_BROKEN;
    } else if (!is_under(target, root)) {
        k = TFB_DIRLINK_OUTSIDE;
    } else if (is_under(here, target)) {
        k = TFB_DIRLINK_LOOP; /* the target holds the link's directory */
    } else {
        /* `dir` reached through a link: its real path is not the logdir's
         * followed by rel. */
        size_t rn = strlen(root);
        int direct = strcmp(rel, ".") == 0
                         ? strcmp(here, root) == 0
                         : strncmp(here, root, rn) == 0 &&
                               here[rn] == '/' &&
                               strcmp(here + rn + 1, rel) == 0;
        if (rn == 1 && root[0] == '/' && strcmp(rel, ".") != 0)
            direct = here[0] == '/' && strcmp(here + 1, rel) == 0;
        if (!direct)
            k = TFB_DIRLINK_NESTED;
    }
    free(root);
    free(here);
    free(target);
    return k;
}

const char *tfb_dirlink_reason(tfb_dirlink k)
{
    switch (k) {
    case TFB_DIRLINK_FOLLOW: return "";
    case TFB_DIRLINK_OUTSIDE:
        return "is a symbolic link that leaves the logdir; not followed";
    case TFB_DIRLINK_LOOP:
        return "is a symbolic link to a directory above it (a loop); not "
               "followed";
    case TFB_DIRLINK_NESTED:
        return "is a symbolic link inside a linked directory; not followed";
    default:
        return "is a symbolic link that cannot be resolved; not followed";
    }
}
