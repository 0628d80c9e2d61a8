/*
 * loader.h - scans the logdir for runs and event/trace files and loads
 * them into the store, in parallel, then again every reload interval.
 *
 *
 * Thread-safety: start/stop from one thread (main). The loader's own
 * threads are the only writers of the store.
 *
 * Files: a run is a directory (relative to the logdir; "." is the logdir)
 * holding event files (name contains "tfevents") or trace files (*.sqlite,
 * *.pt.trace.json, *.pt.trace.json.gz), found in one flat listing of the
 * logdir per pass through the storage interface (storage.h), which every
 * stat and read goes through too. Symlinked directories are not
 * followed (no loops). Each run's event files are read in name order by
 * one thread at a time; runs load in parallel. Threads beyond one a run,
 * and threads that ran out of runs, help the runs' threads: each appends
 * one run's scalar points while its thread reads on (loader_split.h). A
 * file that shrank or was
 * replaced (other inode) resets its run, which is read again from the
 * start. A deleted file keeps the data it gave; if it comes back it counts
 * as replaced. An unreadable file is reported on stderr once and in the
 * run's file infos (and a note on the run); everything else goes on.
 * For storage other than local files (a bucket), reloads that find
 * nothing new come less often (up to 8 intervals apart), and a reload
 * asked for through tfb_store_request_reload comes at once, unless the
 * last one asked for began less than 5 s (or one reload interval, when
 * shorter) ago: then at the end of that spacing, once for every request
 * made meanwhile (loader.c, RELOAD_SPACING_S).
 */
#ifndef TFB_SERVER_LOADER_H
#define TFB_SERVER_LOADER_H

#include <stdio.h>

#include "store/storage.h"
#include "store/store.h"

typedef struct tfb_loader tfb_loader;

typedef struct tfb_loader_opts {
    double reload_interval; /* seconds between passes; 0 = one pass only */
    int threads;            /* parallel run loaders (and their helpers
                             * when runs are fewer); 0 = one per CPU */
    FILE *log;              /* messages (unreadable files); NULL = quiet */
} tfb_loader_opts;

/* Starts the background loading thread; returns at once. */
int tfb_loader_start(tfb_loader **out, tfb_store *store,
                     const tfb_loader_opts *opts);
/* Loads the logdir on the calling thread (scan + read, as many passes as
 * big files need: each pass reads at most 256 MiB of a file); for tests
 * and `tfboard report`. */
int tfb_loader_pass(tfb_loader *l);
/* Creates a loader without a thread (use tfb_loader_pass). */
int tfb_loader_create(tfb_loader **out, tfb_store *store,
                      const tfb_loader_opts *opts);
/* As tfb_loader_start / tfb_loader_create, listing, stat'ing and reading
 * the logdir through storage (storage.h; not owned: it must outlive the
 * loader). The plain ones use local files. */
int tfb_loader_start_on(tfb_loader **out, tfb_store *store,
                        const tfb_loader_opts *opts, tfb_storage *storage);
int tfb_loader_create_on(tfb_loader **out, tfb_store *store,
                         const tfb_loader_opts *opts, tfb_storage *storage);
/* Stops the thread (if any) within about one file chunk and frees the
 * loader. NULL-safe. The store stays valid. */
void tfb_loader_stop(tfb_loader *l);

#endif
