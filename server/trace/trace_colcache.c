/*
 * trace_colcache.c - the columnar trace cache file (trace_colcache.h):
 * writing a built trace as one checksummed file, atomically, and mapping
 * it back after checking every byte of it.
 */
#include "trace/trace_colcache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/errors.h"
#include "trace/trace_filecopy.h"
#include "trace/trace_internal.h"
#include "tfboard.h"

/* ------------------------------------------------------------------------
 * The file layout
 * ---------------------------------------------------------------------- */
#define MAGIC "TFBTRCC\n"
#define ENDIAN_MARK 0x01020304u
#define ALIGN 64

enum {
    C_SIG,      /* the source signature text (no NUL) */
    C_SPANS,    /* tfb_trace_span[nspans] */
    C_LANES,    /* disk_lane[nlanes] */
    C_TREE,     /* int64_t: every lane's max-end tree, lane after lane */
    C_KINFO,    /* tfb_trace_kinfo[] */
    C_VALUES,   /* int64_t[] */
    C_CALLS,    /* tfb_trace_call[] */
    C_CBC,      /* uint32_t[ncalls]: calls by correlation */
    C_DEVICES,  /* tfb_trace_device[] */
    C_STROFF,   /* uint64_t[nstrings + 1]: offsets into C_STRDATA */
    C_STRDATA,  /* the strings, each NUL-terminated */
    C_DEVSUM,   /* tfb_trace_device_summary[ndevices], name NULL */
    C_BUSYN,    /* uint64_t[ndevices]: busy pairs per device */
    C_BUSY,     /* int64_t pairs, device after device */
    C_KSTATS,   /* tfb_trace_kernel_stat[], name NULL */
    C_KNAME,    /* int32_t per kernel stat: its string, -1 "<unknown>" */
    C_NOTES,    /* tfb_trace_note[]: categories not understood */
    C_PGS,      /* tfb_trace_pg[]: distributedInfo's process groups */
    C_STREAMS,  /* tfb_trace_stream_idle[]: HTA's breakdown per stream */
    C_COLLS,    /* tfb_trace_collective[]: NCCL collectives by start */
    NCOL
};

/* The struct sizes the file stores raw: a build whose structs differ
 * (another compiler, a new field) reads it as not ours. */
enum {
    L_SPAN,
    L_KINFO,
    L_CALL,
    L_DEVICE,
    L_DEVSUM,
    L_KSTAT,
    L_LANE,
    L_NOTE,
    L_PG,
    L_STREAM,
    L_DIST,
    L_COLL,
    NLAYOUT
};

typedef struct disk_lane {
    int32_t device, stream;
    uint32_t host, levels;
    uint64_t off, n;
    uint64_t tree_at; /* first entry of its tree in C_TREE */
    uint64_t tree_off[TFB_TRACE_TREE_LEVELS], tree_n[TFB_TRACE_TREE_LEVELS];
} disk_lane;

typedef struct col {
    uint64_t off, len;
} col;

typedef struct header {
    char magic[8];
    uint32_t version, endian;
    uint64_t file_size;
    uint32_t crc;       /* CRC-32C of the whole file, this field as 0 */
    uint32_t ncols;
    uint32_t layout[NLAYOUT];
    uint32_t has_agg;
    uint64_t rows, files_read, files_skipped, spans_dropped;
    int64_t start_ns, end_ns, first_ns, ktotal;
    int64_t notes_more_events;
    uint64_t colls_dropped, colls_unmatched;
    tfb_trace_dist dist;
    col cols[NCOL];
} header;

static const char *const UNKNOWN_KERNEL = "<unknown>";

static void layout_of(uint32_t *l)
{
    l[L_SPAN] = sizeof(tfb_trace_span);
    l[L_KINFO] = sizeof(tfb_trace_kinfo);
    l[L_CALL] = sizeof(tfb_trace_call);
    l[L_DEVICE] = sizeof(tfb_trace_device);
    l[L_DEVSUM] = sizeof(tfb_trace_device_summary);
    l[L_KSTAT] = sizeof(tfb_trace_kernel_stat);
    l[L_LANE] = sizeof(disk_lane);
    l[L_NOTE] = sizeof(tfb_trace_note);
    l[L_PG] = sizeof(tfb_trace_pg);
    l[L_STREAM] = sizeof(tfb_trace_stream_idle);
    l[L_DIST] = sizeof(tfb_trace_dist);
    l[L_COLL] = sizeof(tfb_trace_collective);
}

static uint64_t align_up(uint64_t v)
{
    return (v + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */
typedef struct writer {
    int fd;
    uint32_t crc;
    uint64_t at;
    int err;
} writer;

static int errno_code(int e)
{
    switch (e) {
    case ENOSPC:
    case EDQUOT:
        return TFB_ENOSPC;
    case EFBIG:
        return TFB_ETOOBIG;
    case EACCES:
    case EPERM:
    case EROFS:
        return TFB_EACCES;
    case ENOMEM:
        return TFB_ENOMEM;
    default:
        return TFB_EIO;
    }
}

static void put(writer *w, const void *p, uint64_t len)
{
    if (w->err || len == 0)
        return;
    w->crc = tfb_crc32c(w->crc, p, (size_t)len);
    const char *c = p;
    while (len) {
        size_t chunk = len > ((uint64_t)1 << 30) ? (size_t)1 << 30 : len;
        ssize_t r = write(w->fd, c, chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            w->err = errno_code(r < 0 ? errno : ENOSPC);
            return;
        }
        c += r;
        len -= (uint64_t)r;
        w->at += (uint64_t)r;
    }
}

static void pad_to(writer *w, uint64_t off)
{
    static const char zeros[ALIGN];
    if (off > w->at)
        put(w, zeros, off - w->at);
}

typedef struct strref {
    const char *p;
    int32_t idx;
} strref;

static int cmp_strref(const void *a, const void *b)
{
    const strref *x = a, *y = b;
    return (x->p > y->p) - (x->p < y->p);
}

/* The string index of a kernel stat's name (a pointer into t->strings),
 * -1 for the "<unknown>" fallback. */
static int32_t name_index(const strref *refs, size_t n, const char *p)
{
    strref key = {p, 0};
    const strref *f = bsearch(&key, refs, n, sizeof *refs, cmp_strref);
    return f ? f->idx : -1;
}

static int write_body(writer *w, const char *sig, const tfb_trace *t,
                      uint64_t rows)
{
    const tfb_trace_aggregates *a = t->agg;
    header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MAGIC, 8);
    h.version = TFB_TRACE_COLCACHE_VERSION;
    h.endian = ENDIAN_MARK;
    h.ncols = NCOL;
    layout_of(h.layout);
    h.has_agg = a != NULL;
    h.rows = rows;
    h.files_read = t->files_read;
    h.files_skipped = t->files_skipped;
    h.spans_dropped = t->spans_dropped;
    h.start_ns = t->start_ns;
    h.end_ns = t->end_ns;
    h.first_ns = t->first_ns;
    h.ktotal = a ? a->ktotal : 0;
    h.notes_more_events = t->notes_more_events;
    h.colls_dropped = t->colls_dropped;
    h.colls_unmatched = t->colls_unmatched;
    h.dist = t->dist;

    uint64_t ntree = 0, strbytes = 0, nbusy = 0;
    for (size_t i = 0; i < t->nlanes; i++)
        for (size_t k = 0; k < t->lanes[i].levels; k++)
            ntree += t->lanes[i].tree_n[k];
    for (size_t i = 0; i < t->nstrings; i++)
        strbytes += strlen(t->strings[i]) + 1;
    size_t ndev = a ? a->ndev : 0;
    for (size_t d = 0; d < ndev; d++)
        nbusy += a->nbusy[d];
    size_t nks = a ? a->nkstats : 0;
    uint64_t len[NCOL] = {
        [C_SIG] = strlen(sig),
        [C_SPANS] = t->nspans * sizeof(tfb_trace_span),
        [C_LANES] = t->nlanes * sizeof(disk_lane),
        [C_TREE] = ntree * sizeof(int64_t),
        [C_KINFO] = t->nkinfo * sizeof(tfb_trace_kinfo),
        [C_VALUES] = t->nvalues * sizeof(int64_t),
        [C_CALLS] = t->ncalls * sizeof(tfb_trace_call),
        [C_CBC] = t->calls_by_corr ? t->ncalls * sizeof(uint32_t) : 0,
        [C_DEVICES] = t->ndevices * sizeof(tfb_trace_device),
        [C_STROFF] = (t->nstrings + 1) * sizeof(uint64_t),
        [C_STRDATA] = strbytes,
        [C_DEVSUM] = ndev * sizeof(tfb_trace_device_summary),
        [C_BUSYN] = ndev * sizeof(uint64_t),
        [C_BUSY] = nbusy * 2 * sizeof(int64_t),
        [C_KSTATS] = nks * sizeof(tfb_trace_kernel_stat),
        [C_KNAME] = nks * sizeof(int32_t),
        [C_NOTES] = t->nnotes * sizeof(tfb_trace_note),
        [C_PGS] = t->npgs * sizeof(tfb_trace_pg),
        [C_STREAMS] = (a ? a->nstreams : 0) * sizeof(tfb_trace_stream_idle),
        [C_COLLS] = t->ncolls * sizeof(tfb_trace_collective),
    };
    uint64_t off = align_up(sizeof h);
    for (int c = 0; c < NCOL; c++) {
        h.cols[c].off = off;
        h.cols[c].len = len[c];
        off = align_up(off + len[c]);
    }
    h.file_size = off;

    put(w, &h, sizeof h);
    pad_to(w, h.cols[C_SIG].off);
    put(w, sig, len[C_SIG]);
    pad_to(w, h.cols[C_SPANS].off);
    put(w, t->spans, len[C_SPANS]);
    pad_to(w, h.cols[C_LANES].off);
    uint64_t tree_at = 0;
    for (size_t i = 0; i < t->nlanes; i++) {
        const tfb_trace_lane *l = &t->lanes[i];
        disk_lane d;
        memset(&d, 0, sizeof d);
        d.device = l->device;
        d.stream = l->stream;
        d.host = l->host;
        d.levels = (uint32_t)l->levels;
        d.off = l->off;
        d.n = l->n;
        d.tree_at = tree_at;
        for (size_t k = 0; k < TFB_TRACE_TREE_LEVELS; k++) {
            d.tree_off[k] = l->tree_off[k];
            d.tree_n[k] = l->tree_n[k];
        }
        for (size_t k = 0; k < l->levels; k++)
            tree_at += l->tree_n[k];
        put(w, &d, sizeof d);
    }
    pad_to(w, h.cols[C_TREE].off);
    for (size_t i = 0; i < t->nlanes; i++) {
        const tfb_trace_lane *l = &t->lanes[i];
        uint64_t m = 0;
        for (size_t k = 0; k < l->levels; k++)
            m += l->tree_n[k];
        put(w, l->tree, m * sizeof(int64_t));
    }
    pad_to(w, h.cols[C_KINFO].off);
    put(w, t->kinfo, len[C_KINFO]);
    pad_to(w, h.cols[C_VALUES].off);
    put(w, t->values, len[C_VALUES]);
    pad_to(w, h.cols[C_CALLS].off);
    put(w, t->calls, len[C_CALLS]);
    pad_to(w, h.cols[C_CBC].off);
    put(w, t->calls_by_corr, len[C_CBC]);
    pad_to(w, h.cols[C_DEVICES].off);
    put(w, t->devices, len[C_DEVICES]);
    pad_to(w, h.cols[C_STROFF].off);
    uint64_t so = 0;
    for (size_t i = 0; i <= t->nstrings; i++) {
        put(w, &so, sizeof so);
        if (i < t->nstrings)
            so += strlen(t->strings[i]) + 1;
    }
    pad_to(w, h.cols[C_STRDATA].off);
    for (size_t i = 0; i < t->nstrings; i++)
        put(w, t->strings[i], strlen(t->strings[i]) + 1);
    pad_to(w, h.cols[C_DEVSUM].off);
    for (size_t d = 0; d < ndev; d++) {
        tfb_trace_device_summary s = a->dev[d];
        s.name = NULL; /* restored from the device's string on load */
        s.streams = NULL; /* and from C_STREAMS */
        put(w, &s, sizeof s);
    }
    pad_to(w, h.cols[C_BUSYN].off);
    for (size_t d = 0; d < ndev; d++) {
        uint64_t v = a->nbusy[d];
        put(w, &v, sizeof v);
    }
    pad_to(w, h.cols[C_BUSY].off);
    for (size_t d = 0; d < ndev; d++)
        put(w, a->busy[d], a->nbusy[d] * 2 * sizeof(int64_t));
    pad_to(w, h.cols[C_KSTATS].off);
    strref *refs = NULL;
    if (nks) {
        refs = malloc((t->nstrings ? t->nstrings : 1) * sizeof *refs);
        if (!refs)
            return TFB_ENOMEM;
        for (size_t i = 0; i < t->nstrings; i++)
            refs[i] = (strref){t->strings[i], (int32_t)i};
        qsort(refs, t->nstrings, sizeof *refs, cmp_strref);
    }
    for (size_t i = 0; i < nks; i++) {
        tfb_trace_kernel_stat s = a->kstats[i];
        s.name = NULL;
        put(w, &s, sizeof s);
    }
    pad_to(w, h.cols[C_KNAME].off);
    for (size_t i = 0; i < nks; i++) {
        int32_t v = name_index(refs, t->nstrings, a->kstats[i].name);
        put(w, &v, sizeof v);
    }
    free(refs);
    pad_to(w, h.cols[C_NOTES].off);
    put(w, t->notes, len[C_NOTES]);
    pad_to(w, h.cols[C_PGS].off);
    put(w, t->pgs, len[C_PGS]);
    pad_to(w, h.cols[C_STREAMS].off);
    put(w, a ? a->streams : NULL, len[C_STREAMS]);
    pad_to(w, h.cols[C_COLLS].off);
    put(w, t->colls, len[C_COLLS]);
    pad_to(w, h.file_size);
    if (w->err)
        return w->err;
    if (w->at != h.file_size)
        return TFB_EIO;
    /* The CRC covered the header with crc = 0; now store it. */
    uint32_t crc = w->crc;
    if (pwrite(w->fd, &crc, sizeof crc, offsetof(header, crc)) !=
        (ssize_t)sizeof crc)
        return errno_code(errno);
    return 0;
}

/* Temp files being written: a server that exits in the middle (a write
 * of a big trace takes seconds) removes them at exit instead of leaving
 * them for the day-old sweep. */
#define MAX_PENDING 64
static pthread_mutex_t g_pending_mu = PTHREAD_MUTEX_INITIALIZER;
static char *g_pending[MAX_PENDING];
static pthread_once_t g_pending_once = PTHREAD_ONCE_INIT;

static void pending_at_exit(void)
{
    pthread_mutex_lock(&g_pending_mu);
    for (size_t i = 0; i < MAX_PENDING; i++)
        if (g_pending[i])
            unlink(g_pending[i]);
    pthread_mutex_unlock(&g_pending_mu);
}

static void pending_init(void)
{
    atexit(pending_at_exit);
}

/* Registers (on) or forgets (off) a temp file; the slot's string is the
 * caller's. */
static void pending(char *tmp, int on)
{
    pthread_once(&g_pending_once, pending_init);
    pthread_mutex_lock(&g_pending_mu);
    for (size_t i = 0; i < MAX_PENDING; i++)
        if (on ? !g_pending[i] : g_pending[i] == tmp) {
            g_pending[i] = on ? tmp : NULL;
            break;
        }
    pthread_mutex_unlock(&g_pending_mu);
}

int tfb_trace_colcache_write_file(const char *path, const char *sig,
                                  const tfb_trace *t, uint64_t rows)
{
    if (!path || !sig || !t)
        return TFB_EINVAL;
    /* The temp file lives beside the target (same file system: rename is
     * atomic), with a name the loader never takes for a trace. */
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    char *tmp = malloc(dl + sizeof ".tmp-tfbc-XXXXXX");
    if (!tmp)
        return TFB_ENOMEM;
    memcpy(tmp, path, dl);
    memcpy(tmp + dl, ".tmp-tfbc-XXXXXX", sizeof ".tmp-tfbc-XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno_code(errno);
        free(tmp);
        return e;
    }
    pending(tmp, 1);
    writer w = {fd, 0, 0, 0};
    int err = write_body(&w, sig, t, rows);
    if (!err && fsync(fd) != 0)
        err = errno_code(errno);
    if (close(fd) != 0 && !err)
        err = errno_code(errno);
    if (!err && rename(tmp, path) != 0)
        err = errno_code(errno);
    if (err)
        unlink(tmp);
    pending(tmp, 0);
    free(tmp);
    return err;
}

/* ------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------- */
typedef struct mapped {
    tfb_trace t; /* first: the trace's address is the mapping's */
    void *base;
    size_t len;
} mapped;

static void mapped_release(tfb_trace *t)
{
    mapped *m = (mapped *)t;
    if (t->agg) {
        free(t->agg->dev);
        free(t->agg->busy);
        free(t->agg->nbusy);
        free(t->agg->kstats);
        free(t->agg->streams);
        free(t->agg);
    }
    free(t->lanes);
    free(t->strings);
    if (m->base)
        munmap(m->base, m->len);
    free(m);
}

/* CRC of the whole file (the header's crc field as 0), read with pread:
 * the pages go through the page cache without being mapped into this
 * process, so checking them costs no resident memory. */
static int file_crc(int fd, const header *h, uint64_t size, uint32_t *out)
{
    header z = *h;
    z.crc = 0;
    uint32_t crc = tfb_crc32c(0, &z, sizeof z);
    size_t cap = (size_t)4 << 20;
    char *buf = malloc(cap);
    if (!buf)
        return TFB_ENOMEM;
    uint64_t at = sizeof z;
    posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_SEQUENTIAL);
    while (at < size) {
        size_t want = size - at < cap ? (size_t)(size - at) : cap;
        ssize_t r = pread(fd, buf, want, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            return TFB_ECORRUPT;
        }
        crc = tfb_crc32c(crc, buf, (size_t)r);
        at += (uint64_t)r;
    }
    free(buf);
    *out = crc;
    return 0;
}

static int check_header(const header *h, uint64_t size)
{
    uint32_t l[NLAYOUT];
    layout_of(l);
    if (memcmp(h->magic, MAGIC, 8) != 0 || h->endian != ENDIAN_MARK ||
        h->version != TFB_TRACE_COLCACHE_VERSION || h->ncols != NCOL ||
        memcmp(h->layout, l, sizeof l) != 0 || h->file_size != size)
        return TFB_ECORRUPT;
    static const uint64_t elem[NCOL] = {
        [C_SIG] = 1,
        [C_SPANS] = sizeof(tfb_trace_span),
        [C_LANES] = sizeof(disk_lane),
        [C_TREE] = sizeof(int64_t),
        [C_KINFO] = sizeof(tfb_trace_kinfo),
        [C_VALUES] = sizeof(int64_t),
        [C_CALLS] = sizeof(tfb_trace_call),
        [C_CBC] = sizeof(uint32_t),
        [C_DEVICES] = sizeof(tfb_trace_device),
        [C_STROFF] = sizeof(uint64_t),
        [C_STRDATA] = 1,
        [C_DEVSUM] = sizeof(tfb_trace_device_summary),
        [C_BUSYN] = sizeof(uint64_t),
        [C_BUSY] = 2 * sizeof(int64_t),
        [C_KSTATS] = sizeof(tfb_trace_kernel_stat),
        [C_KNAME] = sizeof(int32_t),
        [C_NOTES] = sizeof(tfb_trace_note),
        [C_PGS] = sizeof(tfb_trace_pg),
        [C_STREAMS] = sizeof(tfb_trace_stream_idle),
        [C_COLLS] = sizeof(tfb_trace_collective),
    };
    uint64_t prev = sizeof *h;
    for (int c = 0; c < NCOL; c++) {
        const col *k = &h->cols[c];
        if (k->off % ALIGN || k->off < prev || k->off > size ||
            k->len > size - k->off || k->len % elem[c])
            return TFB_ECORRUPT;
        prev = k->off + k->len;
    }
    return 0;
}

/* Builds the trace over the mapping; checks every index the trace's
 * readers follow without a bound of their own (lanes into spans and
 * trees, string offsets, per-device tables). */
static int attach(mapped *m, const header *h)
{
    tfb_trace *t = &m->t;
    const char *base = m->base;
#define COL(c) ((const void *)(base + h->cols[c].off))
#define CNT(c, T) (h->cols[c].len / sizeof(T))
    t->spans = (tfb_trace_span *)COL(C_SPANS);
    t->nspans = CNT(C_SPANS, tfb_trace_span);
    t->kinfo = (tfb_trace_kinfo *)COL(C_KINFO);
    t->nkinfo = CNT(C_KINFO, tfb_trace_kinfo);
    t->values = (int64_t *)COL(C_VALUES);
    t->nvalues = CNT(C_VALUES, int64_t);
    t->calls = (tfb_trace_call *)COL(C_CALLS);
    t->ncalls = CNT(C_CALLS, tfb_trace_call);
    t->calls_by_corr = h->cols[C_CBC].len ? (uint32_t *)COL(C_CBC) : NULL;
    if (t->calls_by_corr && CNT(C_CBC, uint32_t) != t->ncalls)
        return TFB_ECORRUPT;
    t->devices = (tfb_trace_device *)COL(C_DEVICES);
    t->ndevices = CNT(C_DEVICES, tfb_trace_device);
    if (!t->nspans)
        t->spans = NULL;
    if (!t->nkinfo)
        t->kinfo = NULL;
    if (!t->nvalues)
        t->values = NULL;
    if (!t->ncalls)
        t->calls = NULL;
    if (!t->ndevices)
        t->devices = NULL;
    t->start_ns = h->start_ns;
    t->end_ns = h->end_ns;
    t->first_ns = h->first_ns;
    t->files_read = h->files_read;
    t->files_skipped = h->files_skipped;
    t->spans_dropped = h->spans_dropped;

    /* Lanes: ranges inside the spans and trees. */
    size_t nl = CNT(C_LANES, disk_lane);
    uint64_t ntree = CNT(C_TREE, int64_t);
    int64_t *tree = (int64_t *)COL(C_TREE);
    const disk_lane *dl = COL(C_LANES);
    t->lanes = calloc(nl ? nl : 1, sizeof *t->lanes);
    if (!t->lanes)
        return TFB_ENOMEM;
    t->nlanes = nl;
    uint64_t spans_seen = 0;
    for (size_t i = 0; i < nl; i++) {
        const disk_lane *d = &dl[i];
        tfb_trace_lane *l = &t->lanes[i];
        if (d->off != spans_seen || d->n > t->nspans - d->off ||
            d->levels > TFB_TRACE_TREE_LEVELS || d->tree_at > ntree)
            return TFB_ECORRUPT;
        spans_seen += d->n;
        /* The tree's shape follows from the lane's length (as
         * gpu_builder.c builds it): the readers walk it by that shape. */
        uint64_t total = 0, w = d->n;
        uint32_t lv = 0;
        while (w > TFB_TRACE_TREE_FANOUT && lv < TFB_TRACE_TREE_LEVELS) {
            w = (w + TFB_TRACE_TREE_FANOUT - 1) / TFB_TRACE_TREE_FANOUT;
            if (d->tree_off[lv] != total || d->tree_n[lv] != w)
                return TFB_ECORRUPT;
            total += w;
            lv++;
        }
        if (lv != d->levels || total > ntree - d->tree_at)
            return TFB_ECORRUPT;
        l->device = d->device;
        l->stream = d->stream;
        l->host = (uint8_t)d->host;
        l->off = d->off;
        l->n = d->n;
        l->levels = d->levels;
        for (size_t k = 0; k < TFB_TRACE_TREE_LEVELS; k++) {
            l->tree_off[k] = k < d->levels ? d->tree_off[k] : 0;
            l->tree_n[k] = k < d->levels ? d->tree_n[k] : 0;
        }
        l->tree = total ? tree + d->tree_at : NULL;
    }
    if (spans_seen != t->nspans)
        return TFB_ECORRUPT;

    /* Strings: offsets rising, each ending in a NUL. */
    size_t ns = CNT(C_STROFF, uint64_t);
    if (ns == 0)
        return TFB_ECORRUPT;
    ns--;
    const uint64_t *so = COL(C_STROFF);
    const char *sd = COL(C_STRDATA);
    uint64_t sdl = h->cols[C_STRDATA].len;
    if (so[0] != 0 || so[ns] != sdl)
        return TFB_ECORRUPT;
    t->strings = malloc((ns ? ns : 1) * sizeof *t->strings);
    if (!t->strings)
        return TFB_ENOMEM;
    for (size_t i = 0; i < ns; i++) {
        if (so[i + 1] <= so[i] || so[i + 1] > sdl || sd[so[i + 1] - 1])
            return TFB_ECORRUPT;
        t->strings[i] = (char *)sd + so[i];
    }
    t->nstrings = ns;

    /* Notes and process groups in place, their strings in bounds. */
#define STR_OK(i) ((i) >= -1 && ((i) < 0 || (size_t)(i) < ns))
    t->notes = (tfb_trace_note *)COL(C_NOTES);
    t->nnotes = CNT(C_NOTES, tfb_trace_note);
    for (size_t i = 0; i < t->nnotes; i++)
        if (t->notes[i].category < 0 || !STR_OK(t->notes[i].category))
            return TFB_ECORRUPT;
    t->pgs = (tfb_trace_pg *)COL(C_PGS);
    t->npgs = CNT(C_PGS, tfb_trace_pg);
    for (size_t i = 0; i < t->npgs; i++) {
        const tfb_trace_pg *g = &t->pgs[i];
        if (!STR_OK(g->name) || !STR_OK(g->desc) || !STR_OK(g->backend) ||
            !STR_OK(g->ranks))
            return TFB_ECORRUPT;
    }
    t->colls = (tfb_trace_collective *)COL(C_COLLS);
    t->ncolls = CNT(C_COLLS, tfb_trace_collective);
    for (size_t i = 0; i < t->ncolls; i++) {
        const tfb_trace_collective *c = &t->colls[i];
        if (c->name < 0 || !STR_OK(c->name) || c->end < c->start ||
            (i && c->start < t->colls[i - 1].start))
            return TFB_ECORRUPT;
    }
    if (!t->ncolls)
        t->colls = NULL;
    t->colls_dropped = h->colls_dropped;
    t->colls_unmatched = h->colls_unmatched;
    if (!t->nnotes)
        t->notes = NULL;
    if (!t->npgs)
        t->pgs = NULL;
    t->notes_more_events = h->notes_more_events;
    t->dist = h->dist;
    if (t->dist.present && !STR_OK(t->dist.backend))
        return TFB_ECORRUPT;
    for (size_t d = 0; d < t->ndevices; d++)
        if (!STR_OK(t->devices[d].name))
            return TFB_ECORRUPT;
#undef STR_OK

    /* The aggregates: small tables copied, busy intervals in place. */
    if (!h->has_agg)
        return 0;
    size_t nd = CNT(C_DEVSUM, tfb_trace_device_summary);
    size_t nks = CNT(C_KSTATS, tfb_trace_kernel_stat);
    if (nd != t->ndevices || CNT(C_BUSYN, uint64_t) != nd ||
        CNT(C_KNAME, int32_t) != nks)
        return TFB_ECORRUPT;
    tfb_trace_aggregates *a = calloc(1, sizeof *a);
    if (!a)
        return TFB_ENOMEM;
    t->agg = a;
    a->ndev = nd;
    a->dev = calloc(nd ? nd : 1, sizeof *a->dev);
    a->busy = calloc(nd ? nd : 1, sizeof *a->busy);
    a->nbusy = calloc(nd ? nd : 1, sizeof *a->nbusy);
    a->kstats = nks ? calloc(nks, sizeof *a->kstats) : NULL;
    if (!a->dev || !a->busy || !a->nbusy || (nks && !a->kstats))
        return TFB_ENOMEM;
    if (nd)
        memcpy(a->dev, COL(C_DEVSUM), nd * sizeof *a->dev);
    const uint64_t *bn = COL(C_BUSYN);
    int64_t *busy = (int64_t *)COL(C_BUSY);
    uint64_t nb = CNT(C_BUSY, int64_t[2]), at = 0;
    for (size_t d = 0; d < nd; d++) {
        const tfb_trace_device *dv = &t->devices[d];
        a->dev[d].name = dv->name >= 0 && (size_t)dv->name < ns
                             ? t->strings[dv->name]
                             : NULL;
        if (bn[d] > nb - at)
            return TFB_ECORRUPT;
        a->nbusy[d] = bn[d];
        a->busy[d] = bn[d] ? busy + 2 * at : NULL;
        at += bn[d];
    }
    if (at != nb)
        return TFB_ECORRUPT;
    if (nks)
        memcpy(a->kstats, COL(C_KSTATS), nks * sizeof *a->kstats);
    const int32_t *kn = COL(C_KNAME);
    for (size_t i = 0; i < nks; i++) {
        if (kn[i] >= 0 && (size_t)kn[i] >= ns)
            return TFB_ECORRUPT;
        a->kstats[i].name = kn[i] >= 0 ? t->strings[kn[i]] : UNKNOWN_KERNEL;
    }
    a->nkstats = nks;
    a->ktotal = h->ktotal;
    /* Streams: copied, in lane order (each device's consecutive). */
    size_t nst = CNT(C_STREAMS, tfb_trace_stream_idle);
    a->streams = calloc(nst ? nst : 1, sizeof *a->streams);
    if (!a->streams)
        return TFB_ENOMEM;
    if (nst)
        memcpy(a->streams, COL(C_STREAMS), nst * sizeof *a->streams);
    a->nstreams = nst;
    for (size_t i = 1; i < nst; i++)
        if (a->streams[i].device < a->streams[i - 1].device)
            return TFB_ECORRUPT;
    tfb_trace_aggregate_link_streams(a);
#undef COL
#undef CNT
    return 0;
}

/* What a file must be before anything of it is read further: our own
 * regular file (a cache directory others can write to must not feed us
 * their bytes), with a sound header for its size, the signature sig (a
 * file of other sources is not read further: it is replaced after the
 * load) and at most max_rows rows (0: no limit). Fills *h and *size. */
static int check_file(int fd, const char *sig, uint64_t max_rows, header *h,
                      uint64_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid() || (uint64_t)st.st_size < sizeof *h ||
        pread(fd, h, sizeof *h, 0) != (ssize_t)sizeof *h)
        return TFB_ECORRUPT;
    *size = (uint64_t)st.st_size;
    int err = check_header(h, *size);
    if (!err) {
        size_t sl = (size_t)h->cols[C_SIG].len;
        char *s = malloc(sl + 1);
        if (!s)
            err = TFB_ENOMEM;
        else if (pread(fd, s, sl, (off_t)h->cols[C_SIG].off) != (ssize_t)sl)
            err = TFB_ECORRUPT;
        else if (sl != strlen(sig) || memcmp(s, sig, sl) != 0)
            err = TFB_ESTATE;
        free(s);
    }
    if (!err && max_rows && h->rows > max_rows)
        err = TFB_ESTATE;
    return err;
}

/* A private copy of the cache file open as fd, made beside it and
 * unlinked at once; its fd, or a negative code. What is mapped is this
 * copy, which nothing outside this process can open, so a cache cleaner,
 * `truncate` or `rsync --inplace` on the cache file while a trace is
 * mapped from it changes nothing the trace's readers see (a mapping of the
 * file itself dies of SIGBUS at its next read past a new end, and shows
 * other bytes than the checked ones after an in-place rewrite). The copy
 * is a clone where the file system can (copy_file_range), bounded by the
 * room trace_filecopy.h leaves; its name while it has one is
 * .tmp-tfbc-<file>-XXXXXX (swept when a crash leaves one), and mappings
 * show it as "<that name> (deleted)". */
static int private_copy(const char *path, int fd)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + sizeof ".tmp-tfbc--XXXXXX";
    char *tmp = malloc(n);
    if (!tmp)
        return TFB_ENOMEM;
    snprintf(tmp, n, "%.*s.tmp-tfbc-%s-XXXXXX", (int)dl, path, path + dl);
    int cfd = mkostemp(tmp, O_CLOEXEC);
    if (cfd < 0 && errno == EROFS) {
        /* A read-only file system (a cache made elsewhere, mounted): no
         * copy can be made, and none is needed - nothing can truncate or
         * rewrite the file there. */
        free(tmp);
        cfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        return cfd >= 0 ? cfd : tfb_err_from_errno(errno);
    }
    int err = cfd < 0 ? tfb_err_from_errno(errno) : 0;
    if (cfd >= 0)
        unlink(tmp);
    free(tmp);
    uint64_t used = 0;
    if (!err)
        err = tfb_trace_copy_fd(fd, cfd, UINT64_MAX, &used);
    if (err) {
        if (cfd >= 0)
            close(cfd);
        return err;
    }
    return cfd;
}

int tfb_trace_colcache_read_file(const char *path, const char *sig,
                                 uint64_t max_rows, tfb_trace **out,
                                 uint64_t *rows)
{
    if (!path || !sig || !out)
        return TFB_EINVAL;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? TFB_ENOENT : TFB_ECORRUPT;
    header h;
    uint64_t size = 0;
    /* Checked where it is (a file of other sources is not copied), then
     * copied, and the copy checked whole: the file may change between. */
    int err = check_file(fd, sig, max_rows, &h, &size);
    int cfd = -1;
    if (!err) {
        cfd = private_copy(path, fd);
        if (cfd < 0)
            err = cfd;
    }
    close(fd);
    if (!err)
        err = check_file(cfd, sig, max_rows, &h, &size);
    uint32_t crc = 0;
    if (!err)
        err = file_crc(cfd, &h, size, &crc);
    if (!err && crc != h.crc)
        err = TFB_ECORRUPT;
    mapped *m = NULL;
    if (!err) {
        m = calloc(1, sizeof *m);
        if (!m)
            err = TFB_ENOMEM;
    }
    if (!err) {
        m->base = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, cfd, 0);
        if (m->base == MAP_FAILED) {
            m->base = NULL;
            err = TFB_ENOMEM;
        } else {
            m->len = (size_t)size;
        }
    }
    if (cfd >= 0)
        close(cfd); /* the mapping keeps the copy; its blocks go with it */
    if (!err)
        err = attach(m, &h);
    if (err) {
        if (m)
            mapped_release(&m->t);
        return err;
    }
    m->t.release = mapped_release;
    m->t.refs = 1;
    if (rows)
        *rows = h.rows;
    *out = &m->t;
    return 0;
}

int tfb_trace_colcache_file_sig(const char *path, char **sig)
{
    *sig = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? TFB_ENOENT : TFB_EIO;
    header h;
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof h ||
        pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
        check_header(&h, (uint64_t)st.st_size) != 0 ||
        h.cols[C_SIG].len > ((uint64_t)1 << 20))
        err = TFB_ECORRUPT;
    size_t n = err ? 0 : (size_t)h.cols[C_SIG].len;
    char *s = err ? NULL : malloc(n + 1);
    if (!err && !s)
        err = TFB_ENOMEM;
    if (!err && pread(fd, s, n, (off_t)h.cols[C_SIG].off) != (ssize_t)n)
        err = TFB_ECORRUPT;
    close(fd);
    if (err) {
        free(s);
        return err;
    }
    s[n] = '\0';
    *sig = s;
    return 0;
}

void tfb_trace_colcache_sig_begin(struct tfb_buf *b)
{
    char line[64];
    int k = snprintf(line, sizeof line, "tfboard trace cache v%d\n",
                     TFB_TRACE_COLCACHE_VERSION);
    tfb_buf_put(b, line, (size_t)k);
}
