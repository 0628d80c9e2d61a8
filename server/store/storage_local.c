/*
 * storage_local.c - the local file system as a tfb_storage (storage.h):
 * a directory walk gives the flat listing; files are opened through the
 * collector's file_source (regular files only, O_NONBLOCK) and read with
 * pread.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/vec.h"
#include "store/dir_links.h"
#include "base/errors.h"
#include "collector/file_source.h"
#include "store/storage.h"

struct tfb_storage_file {
    int fd;
};

static void fill_stat(const struct stat *st, tfb_storage_stat *out)
{
    memset(out, 0, sizeof *out);
    out->size = (uint64_t)st->st_size;
    out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 +
                    st->st_mtim.tv_nsec;
    snprintf(out->etag, sizeof out->etag, "%llx-%llx",
             (unsigned long long)st->st_dev, (unsigned long long)st->st_ino);
    out->regular = S_ISREG(st->st_mode) != 0;
}

/* ---- listing -------------------------------------------------------- */

/* Threads that walk the logdir's subdirectories when it has at least
 * LIST_PARALLEL_MIN of them (walk_parallel): 4, twice this machine's
 * cores, because a walk waits in the kernel (directory blocks, inode
 * lookups) as much as it computes; below 64 directories a thread costs
 * more than it saves (server/API.md, "Loading and reloading"). */
#define LIST_THREADS 4
#define LIST_PARALLEL_MIN 64

/* The local backend: where to say which directory links are not
 * followed (the first listing only, so each is said once). */
typedef struct local_storage {
    tfb_storage base;
    FILE *log;
    atomic_int listed;
} local_storage;

typedef struct lister {
    TFB_VEC(tfb_storage_entry) out;
    const char *prefix;
    FILE *log;         /* NULL: say nothing */
    size_t prefix_len; /* of the listed prefix, to point rel into path */
    int max_depth, too_deep;
    tfb_storage_keep_fn keep;
    void *keep_arg;
} lister;

static int add_entry(lister *ls, char *path, const struct stat *st)
{
    tfb_storage_entry *e = tfb_vec_add(&ls->out);
    if (!e)
        return TFB_ENOMEM;
    e->path = path;
    e->rel = path + ls->prefix_len + 1;
    fill_stat(st, &e->st);
    return 0;
}

/* A symbolic link to a directory (a run or rank directory kept
 * elsewhere in the logdir) is walked as a directory when dir_links.h's
 * rule allows; one that leaves the logdir or loops is said once. */
static int follow_dir_link(lister *ls, const char *dir, const char *name)
{
    char *path = tfb_storage_join(dir, name);
    if (!path)
        return 0;
    const char *rel = strlen(dir) > ls->prefix_len
                          ? dir + ls->prefix_len + 1 : ".";
    tfb_dirlink k = tfb_dirlink_classify(ls->prefix, dir, rel, path);
    if (k != TFB_DIRLINK_FOLLOW && ls->log)
        fprintf(ls->log, "tfboard: %s %s\n", path, tfb_dirlink_reason(k));
    free(path);
    return k == TFB_DIRLINK_FOLLOW;
}

static int walk_parallel(lister *ls, char **dirs, size_t n);

/* Every non-directory under dir: regular files and links to them as
 * objects to read; anything else (a FIFO, a device, a link to one or to
 * nothing) listed with regular = 0, so the loader can say why it is not
 * read. Links to directories are followed by dir_links.h's rule only
 * (inside the logdir, no loops). */
static int walk(lister *ls, const char *dir, int depth)
{
    if (depth > ls->max_depth) {
        ls->too_deep = 1;
        return 0;
    }
    DIR *d = opendir(dir);
    if (!d)
        return depth == 0 ? TFB_ENOENT : 0;
    int dfd = dirfd(d), rc = 0;
    TFB_VEC(char *) subdirs = {0};
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        /* A name not wanted needs no stat, unless it is a directory (or
         * may be: some file systems do not fill d_type). */
        if (ls->keep && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN &&
            de->d_type != DT_LNK && !ls->keep(n, ls->keep_arg))
            continue;
        struct stat st;
        if (de->d_type == DT_DIR) {
            /* Known a directory: no stat (the walk opens it anyway; a
             * sweep's 100,000 run directories were 100,000 stats in the
             * scan, which runs before any file is read). */
            memset(&st, 0, sizeof st);
            st.st_mode = S_IFDIR;
        } else if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            /* relative to the open directory: no path walk per entry */
            continue; /* gone meanwhile */
        }
        if (S_ISLNK(st.st_mode)) {
            struct stat t;
            int ok = fstatat(dfd, n, &t, 0) == 0;
            if (ok && S_ISREG(t.st_mode))
                st = t; /* a link to a file reads as the file */
            else if (ok && S_ISDIR(t.st_mode)) {
                if (!follow_dir_link(ls, dir, n))
                    continue;
                st = t; /* walked as the directory it names */
            }
        }
        char *p = tfb_storage_join(dir, n);
        if (!p) {
            rc = TFB_ENOMEM;
            break;
        }
        if (S_ISDIR(st.st_mode)) {
            if (tfb_vec_push(&subdirs, p) < 0) {
                free(p);
                rc = TFB_ENOMEM;
                break;
            }
            continue;
        }
        if (ls->keep && !ls->keep(n, ls->keep_arg)) {
            free(p);
            continue;
        }
        if (add_entry(ls, p, &st) < 0) {
            free(p);
            rc = TFB_ENOMEM;
        }
    }
    closedir(d); /* before descending: one descriptor per level at most */
    if (rc == 0 && depth == 0 && subdirs.n >= LIST_PARALLEL_MIN)
        rc = walk_parallel(ls, subdirs.v, subdirs.n);
    else
        for (size_t i = 0; i < subdirs.n; i++)
            if (rc == 0)
                rc = walk(ls, subdirs.v[i], depth + 1);
    for (size_t i = 0; i < subdirs.n; i++)
        free(subdirs.v[i]);
    tfb_vec_free(&subdirs);
    return rc;
}

/* The logdir's subdirectories walked by LIST_THREADS threads, each
 * taking the next directory in turn into its own listing, joined after:
 * the walk is system calls (open, read and close each directory, stat each
 * file), about 100 us a directory on a busy machine, and it comes before
 * any file is read, so 100,000 run directories walked one by one were
 * seconds of one core with the other idle. The loader sorts the listing,
 * so the order they come in does not matter. */
typedef struct walk_share {
    lister ls; /* this thread's listing */
    char **dirs;
    size_t n;
    atomic_size_t *next;
    int rc;
} walk_share;

static void *walk_thread(void *arg)
{
    walk_share *w = arg;
    for (;;) {
        size_t i = atomic_fetch_add(w->next, 1);
        if (i >= w->n || w->rc < 0)
            break;
        w->rc = walk(&w->ls, w->dirs[i], 1);
    }
    return NULL;
}

static int walk_parallel(lister *ls, char **dirs, size_t n)
{
    atomic_size_t next = 0;
    walk_share sh[LIST_THREADS];
    pthread_t th[LIST_THREADS];
    int started[LIST_THREADS] = {0};
    for (int t = 0; t < LIST_THREADS; t++) {
        sh[t] = (walk_share){.ls = *ls, .dirs = dirs, .n = n, .next = &next};
        sh[t].ls.out.v = NULL;
        sh[t].ls.out.n = sh[t].ls.out.cap = 0;
        sh[t].ls.too_deep = 0;
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, walk_thread, &sh[t]) == 0;
    }
    walk_thread(&sh[0]); /* this thread too; and all of it if none started */
    int rc = 0;
    for (int t = 0; t < LIST_THREADS; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        if (sh[t].rc < 0)
            rc = sh[t].rc;
        ls->too_deep |= sh[t].ls.too_deep;
        if (rc == 0 && tfb_vec_need(&ls->out, ls->out.n + sh[t].ls.out.n) < 0)
            rc = TFB_ENOMEM;
        if (rc == 0) {
            if (sh[t].ls.out.n)
                memcpy(ls->out.v + ls->out.n, sh[t].ls.out.v,
                       sh[t].ls.out.n * sizeof *ls->out.v);
            ls->out.n += sh[t].ls.out.n;
            free(sh[t].ls.out.v);
        } else {
            tfb_storage_entries_free(sh[t].ls.out.v, sh[t].ls.out.n);
        }
    }
    return rc;
}

static int local_list(tfb_storage *s, const char *prefix, int max_depth,
                      tfb_storage_keep_fn keep, void *keep_arg,
                      tfb_storage_entry **out, size_t *n, int *too_deep)
{
    local_storage *ls_ = (local_storage *)s;
    FILE *log = atomic_exchange(&ls_->listed, 1) ? NULL : ls_->log;
    lister ls = {.prefix = prefix,
                 .log = log,
                 .prefix_len = strlen(prefix),
                 .max_depth = max_depth,
                 .keep = keep,
                 .keep_arg = keep_arg};
    int rc = walk(&ls, prefix, 0);
    if (rc < 0) {
        tfb_storage_entries_free(ls.out.v, ls.out.n);
        return rc;
    }
    *out = ls.out.v;
    *n = ls.out.n;
    if (too_deep)
        *too_deep = ls.too_deep;
    return 0;
}

/* ---- files ---------------------------------------------------------- */

static int local_stat(tfb_storage *s, const char *path, tfb_storage_stat *out)
{
    (void)s;
    struct stat st;
    if (stat(path, &st) != 0)
        return tfb_err_from_errno(errno);
    fill_stat(&st, out);
    return 0;
}

static int local_open(tfb_storage *s, const char *path,
                      tfb_storage_file **out, tfb_storage_stat *st_out)
{
    (void)s;
    tfb_storage_file *f = malloc(sizeof *f);
    if (!f)
        return TFB_ENOMEM;
    struct stat st;
    int rc = tfb_file_open_regular(path, &f->fd, &st);
    if (rc < 0) {
        free(f);
        return rc;
    }
    fill_stat(&st, st_out);
    *out = f;
    return 0;
}

static long local_read(tfb_storage_file *f, uint64_t off, void *buf,
                       size_t len)
{
    return tfb_file_pread(f->fd, off, buf, len);
}

static void local_close(tfb_storage_file *f)
{
    if (!f)
        return;
    close(f->fd);
    free(f);
}

static void local_destroy(tfb_storage *s)
{
    free((local_storage *)s);
}

static const tfb_storage_ops local_ops = {
    "local",     local_list,  local_stat,    local_open,
    local_read,  local_close, local_destroy, NULL /* cancel */,
    NULL /* info */, NULL /* local_copy */, NULL /* copy_fetch */,
    0 /* not immutable: a file may be written in place at the same size */,
};

int tfb_storage_local_create(tfb_storage **out, FILE *log)
{
    local_storage *s = calloc(1, sizeof *s);
    if (!s)
        return TFB_ENOMEM;
    s->base.ops = &local_ops;
    s->log = log;
    atomic_init(&s->listed, 0);
    *out = &s->base;
    return 0;
}
