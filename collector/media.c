/*
 * media.c - images: tfb_image (pixels, PNG-encoded off the caller's
 * thread) and tfb_image_encoded, written in TensorFlow 2's image format
 * (see tfboard.h, "Images").
 *
 * The caller's cost is one copy of the pixels into a job buffer; a
 * background thread per writer (started at the first image, stopped by
 * the writer's close hook) encodes the PNG with libpng and enqueues the
 * record with tfb_writer_log_event. The jobs wait in a FIFO bounded by
 * TFB_IMAGE_QUEUE_BYTES: past it an image is refused at once
 * (TFB_EDROPPED), so a training loop never waits on encoding.
 *
 * Buffer pool. A fresh 192 KB buffer costs the caller more than the copy
 * itself (the kernel zeroes and maps its pages; a burst of images far
 * ahead of the encoder paid that on every call). So the encoder does not
 * free a job it has encoded: it puts the buffer in the writer's pool, and
 * the next tfb_image of a similar size takes it back, warm. The pool and
 * the queue together stay within TFB_IMAGE_QUEUE_BYTES (the pool gives way
 * first), so a writer never holds more image memory than the queue limit
 * allowed before; the pool is freed at close.
 *
 * Thread-safety: the queue, the pool and their byte counts are shared by
 * the caller threads (any number, tfb_image is thread-safe on one writer)
 * and the encoder thread, and are only touched under tfb_media.mu. A job
 * belongs to exactly one place at a time: the pool, the queue, the
 * encoder, or the one caller that took it (filled outside the lock). The
 * buffers freed to keep within the bound are unlinked under the lock and
 * unmapped after it is released.
 */
#include <png.h>
#include <pthread.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "collector/event.h"
#include "collector/media_internal.h"
#include "collector/pb.h"
#include "tfboard.h"
#include "collector/writer_internal.h"

typedef struct img_job {
    struct img_job *next;
    int64_t step;
    double wall;
    int height, width, channels;
    size_t tag_len, bytes;
    size_t cap;      /* bytes of data (a reused job may hold more) */
    char *tag;       /* points into data */
    uint8_t data[];  /* tag (NUL-terminated), then the pixels */
} img_job;

/* The pool keeps buffers by capacity, a few capacities at once (a program
 * logs images of a handful of sizes); a class holds buffers of one cap,
 * last returned first (the warmest). */
#define POOL_CLASSES 4
typedef struct pool_class {
    size_t cap;    /* of every buffer in it */
    img_job *head; /* LIFO */
    uint64_t used; /* tick of its last take or put: the least recently
                    * used class gives way first */
} pool_class;

struct tfb_media {
    tfb_writer *w;
    pthread_mutex_t mu; /* guards everything below (see the top) */
    pthread_cond_t cv_work, cv_idle;
    img_job *head, *tail;
    size_t queued_bytes; /* pixel bytes in the queue and being encoded */
    pool_class pool[POOL_CLASSES];
    size_t pool_bytes;   /* sum of the caps of the pooled buffers */
    uint64_t tick;
    uint64_t fresh, reused; /* buffers allocated / taken from the pool */
    int busy;  /* the thread holds a job being encoded */
    int stop;
    pthread_t thread;
    tfb_buf png; /* the encoder thread's own (no lock): the PNG being made */
};

/* A job's memory. Large jobs are mapped with MAP_POPULATE: the kernel
 * fills the pages in one go instead of faulting them in one by one while
 * the caller copies (half the caller's cost for a fresh 192 KB job). Caps
 * are rounded (pages for mapped jobs) so images of one size whose tags
 * differ a little share a pool class. */
#define MAP_MIN ((size_t)64 << 10)
#define PAGE ((size_t)4096)

static img_job *job_alloc(size_t need)
{
    size_t total = sizeof(img_job) + need;
    img_job *j;
    /* Rounded first, so that job_free tells the two kinds apart by the
     * same test (MAP_MIN is a multiple of both roundings). */
    if (total < MAP_MIN)
        total = (total + 63) & ~(size_t)63;
    if (total >= MAP_MIN) {
        total = (total + PAGE - 1) & ~(PAGE - 1);
        void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        j = m == MAP_FAILED ? NULL : m;
    } else {
        j = malloc(total);
    }
    if (j)
        j->cap = total - sizeof(img_job);
    return j;
}

static void job_free(img_job *j)
{
    if (!j)
        return;
    size_t total = sizeof(img_job) + j->cap;
    if (total >= MAP_MIN)
        munmap(j, total);
    else
        free(j);
}

static void job_free_list(img_job *j)
{
    while (j) {
        img_job *next = j->next;
        job_free(j);
        j = next;
    }
}

/* ---- the pool (every function here: md->mu held) ---- */

/* A pooled buffer for `need` bytes, or NULL: the smallest class that
 * holds it without wasting more than a quarter (and a page). */
static img_job *pool_take(struct tfb_media *md, size_t need)
{
    pool_class *best = NULL;
    for (int i = 0; i < POOL_CLASSES; i++) {
        pool_class *c = &md->pool[i];
        if (c->head && c->cap >= need && c->cap - need <= need / 4 + PAGE &&
            (!best || c->cap < best->cap))
            best = c;
    }
    if (!best)
        return NULL;
    img_job *j = best->head;
    best->head = j->next;
    best->used = ++md->tick;
    md->pool_bytes -= j->cap;
    md->reused++;
    return j;
}

/* Unlinks one buffer of the least recently used non-empty class onto
 * *out; 0 when the pool is empty. */
static int pool_evict_one(struct tfb_media *md, img_job **out)
{
    pool_class *lru = NULL;
    for (int i = 0; i < POOL_CLASSES; i++) {
        pool_class *c = &md->pool[i];
        if (c->head && (!lru || c->used < lru->used))
            lru = c;
    }
    if (!lru)
        return 0;
    img_job *j = lru->head;
    lru->head = j->next;
    md->pool_bytes -= j->cap;
    j->next = *out;
    *out = j;
    return 1;
}

/* Gives way until the pool and the queue fit in TFB_IMAGE_QUEUE_BYTES
 * together; what is unlinked goes onto *out, to be freed unlocked. */
static void pool_shrink(struct tfb_media *md, img_job **out)
{
    while (md->pool_bytes + md->queued_bytes > TFB_IMAGE_QUEUE_BYTES &&
           pool_evict_one(md, out))
        ;
}

/* Keeps an encoded job's buffer, or puts it on *out when it does not fit
 * the bound (or a class of its cap cannot be had: then the least recently
 * used class is emptied for it). */
static void pool_put(struct tfb_media *md, img_job *j, img_job **out)
{
    if (md->pool_bytes + md->queued_bytes + j->cap > TFB_IMAGE_QUEUE_BYTES) {
        j->next = *out;
        *out = j;
        return;
    }
    pool_class *slot = NULL;
    for (int i = 0; i < POOL_CLASSES && !slot; i++)
        if (md->pool[i].cap == j->cap)
            slot = &md->pool[i];
    for (int i = 0; i < POOL_CLASSES && !slot; i++)
        if (!md->pool[i].head)
            slot = &md->pool[i];
    if (!slot) {
        slot = &md->pool[0];
        for (int i = 1; i < POOL_CLASSES; i++)
            if (md->pool[i].used < slot->used)
                slot = &md->pool[i];
        while (slot->head) {
            img_job *o = slot->head;
            slot->head = o->next;
            md->pool_bytes -= o->cap;
            o->next = *out;
            *out = o;
        }
    }
    slot->cap = j->cap;
    j->next = slot->head;
    slot->head = j;
    slot->used = ++md->tick;
    md->pool_bytes += j->cap;
}

/* Creation of a writer's media state: rare, so one lock for all writers. */
static pthread_mutex_t g_create = PTHREAD_MUTEX_INITIALIZER;

/* ---- the record ---- */

/* Serialises Event{wall_time, step, summary{value{tag, metadata{plugin
 * "images"}, tensor DT_STRING [3] = width, height, image}}}; malloc'd. */
static uint8_t *image_event(double wall, int64_t step, const char *tag,
                            size_t tag_len, int width, int height,
                            const uint8_t *img, size_t img_len, size_t *out)
{
    char ws[16], hs[16];
    size_t wl = (size_t)snprintf(ws, sizeof ws, "%d", width);
    size_t hl = (size_t)snprintf(hs, sizeof hs, "%d", height);
    /* TensorShapeProto{dim{size: 3}} */
    size_t dim = 2;                              /* size = 3 */
    size_t shape = pb_len_field_size(dim);       /* dim */
    size_t tensor = 2 /* dtype = DT_STRING */ + pb_len_field_size(shape) +
                    pb_len_field_size(wl) + pb_len_field_size(hl) +
                    pb_len_field_size(img_len);
    uint8_t *p, *buf = tfb_ev_plugin_event(wall, step, tag, tag_len, "images",
                                           NULL, 0, tensor, &p, out);
    if (!buf)
        return NULL;
    *p++ = 0x08; /* 1: dtype */
    *p++ = 7;    /* DT_STRING */
    p = pb_put_len(p, 2, shape);
    p = pb_put_len(p, 2, dim);
    *p++ = 0x08; /* 1: size */
    *p++ = 3;
    p = pb_put_bytes(p, 8, ws, wl);
    p = pb_put_bytes(p, 8, hs, hl);
    pb_put_bytes(p, 8, img, img_len);
    return buf;
}

static int log_image(tfb_writer *w, double wall, int64_t step,
                     const char *tag, size_t tag_len, int width, int height,
                     const uint8_t *img, size_t img_len)
{
    size_t n;
    uint8_t *ev = image_event(wall, step, tag, tag_len, width, height, img,
                              img_len, &n);
    if (!ev)
        return TFB_ENOMEM;
    int rc = tfb_writer_log_event(w, ev, n);
    free(ev);
    return rc;
}

/* ---- PNG encoding (background thread) ---- */

/* libpng's output goes into the thread's one PNG buffer (base/buf.h),
 * emptied for each image and kept at its size: a burst of images of one
 * size grows it once. */
static void mem_write(png_structp png, png_bytep data, png_size_t n)
{
    tfb_buf_put(png_get_io_ptr(png), data, n);
}

static void mem_flush(png_structp png)
{
    (void)png;
}

/* libpng reports errors by longjmp; nothing it touches is a local that
 * changes after setjmp, so no volatile is needed. */
int tfb_png_encode(const uint8_t *px, int height, int width, int channels,
                   tfb_buf *m)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL,
                                              NULL, NULL);
    if (!png)
        return TFB_ENOMEM;
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return TFB_ENOMEM;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return TFB_ENOMEM;
    }
    static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, 0,
                                 PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA};
    png_set_write_fn(png, m, mem_write, mem_flush);
    /* Level 3: close to zlib's default size at about twice its speed;
     * the PNG filters' per-row choice is kept (it matters for photos). */
    png_set_compression_level(png, 3);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height,
                 8, types[channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t stride = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++)
        png_write_row(png, (png_const_bytep)(px + (size_t)y * stride));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return m->failed ? TFB_ENOMEM : 0;
}

static int encode_png(const img_job *j, tfb_buf *m)
{
    return tfb_png_encode(j->data + j->tag_len + 1, j->height, j->width,
                          j->channels, m);
}

static void *media_thread(void *arg)
{
    struct tfb_media *md = arg;
    pthread_mutex_lock(&md->mu);
    for (;;) {
        img_job *j = md->head;
        if (!j) {
            if (md->stop)
                break;
            pthread_cond_wait(&md->cv_work, &md->mu);
            continue;
        }
        md->head = j->next;
        if (!md->head)
            md->tail = NULL;
        md->busy = 1;
        pthread_mutex_unlock(&md->mu);

        tfb_buf *m = &md->png;
        m->n = 0;
        m->failed = 0;
        int rc = encode_png(j, m);
        if (rc == 0)
            rc = log_image(md->w, j->wall, j->step, j->tag, j->tag_len,
                           j->width, j->height, (const uint8_t *)m->v, m->n);
        if (rc == TFB_ENOMEM)
            tfb_writer_count_dropped(md->w);

        pthread_mutex_lock(&md->mu);
        md->queued_bytes -= j->bytes;
        md->busy = 0;
        img_job *unused = NULL;
        pool_put(md, j, &unused);
        if (!md->head)
            pthread_cond_broadcast(&md->cv_idle);
        if (unused) {
            pthread_mutex_unlock(&md->mu);
            job_free_list(unused);
            pthread_mutex_lock(&md->mu);
        }
    }
    pthread_mutex_unlock(&md->mu);
    tfb_buf_free(&md->png);
    return NULL;
}

/* Waits until every image queued before the call is in the writer's
 * queue (tfb_flush's hook). */
static void media_on_flush(tfb_writer *w)
{
    struct tfb_media *md = __atomic_load_n(tfb_writer_media_slot(w),
                                           __ATOMIC_ACQUIRE);
    if (!md)
        return;
    pthread_mutex_lock(&md->mu);
    while (md->head || md->busy)
        pthread_cond_wait(&md->cv_idle, &md->mu);
    pthread_mutex_unlock(&md->mu);
}

/* Encodes what is left, stops the thread, frees the state. */
static void media_on_close(tfb_writer *w)
{
    struct tfb_media **slot = tfb_writer_media_slot(w);
    struct tfb_media *md = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!md)
        return;
    if (tfb_writer_forked(w)) {
        /* The thread is the parent's; its queue is the parent's too. */
        return;
    }
    pthread_mutex_lock(&md->mu);
    md->stop = 1;
    pthread_cond_signal(&md->cv_work);
    pthread_mutex_unlock(&md->mu);
    pthread_join(md->thread, NULL);
    for (int i = 0; i < POOL_CLASSES; i++)
        job_free_list(md->pool[i].head);
    pthread_mutex_destroy(&md->mu);
    pthread_cond_destroy(&md->cv_work);
    pthread_cond_destroy(&md->cv_idle);
    __atomic_store_n(slot, NULL, __ATOMIC_RELEASE);
    free(md);
}

static struct tfb_media *media_get(tfb_writer *w, int *rc)
{
    struct tfb_media **slot = tfb_writer_media_slot(w);
    struct tfb_media *md = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (md)
        return md;
    pthread_mutex_lock(&g_create);
    md = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!md) {
        md = calloc(1, sizeof *md);
        if (md) {
            md->w = w;
            pthread_mutex_init(&md->mu, NULL);
            pthread_cond_init(&md->cv_work, NULL);
            pthread_cond_init(&md->cv_idle, NULL);
            /* The encoder takes no signals: they are the program's. */
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);
            int e = pthread_create(&md->thread, NULL, media_thread, md);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            if (e) {
                pthread_mutex_destroy(&md->mu);
                pthread_cond_destroy(&md->cv_work);
                pthread_cond_destroy(&md->cv_idle);
                free(md);
                md = NULL;
            } else {
                __atomic_store_n(slot, md, __ATOMIC_RELEASE);
                tfb_writer_set_hooks(w, TFB_WRITER_MOD_MEDIA, media_on_flush,
                                     media_on_close);
            }
        }
    }
    pthread_mutex_unlock(&g_create);
    if (!md)
        *rc = TFB_ENOMEM;
    return md;
}

/* The writer's own state: a closed or failed writer answers its error. */
static int writer_error(tfb_writer *w)
{
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    if (tfb_writer_get_stats(w, &st) == 0 && st.sticky_error)
        return st.sticky_error;
    return 0;
}

static int log_pixels(tfb_writer *w, const char *tag, const uint8_t *pixels,
                      int height, int width, int channels, int64_t step,
                      const double *wall_time)
{
    if (!w || !tag || !*tag || !pixels || height <= 0 || width <= 0 ||
        (channels != 1 && channels != 3 && channels != 4))
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    if (height > TFB_IMAGE_MAX_SIDE || width > TFB_IMAGE_MAX_SIDE ||
        (uint64_t)height * (uint64_t)width > TFB_IMAGE_MAX_PIXELS)
        return TFB_ETOOBIG;
    int rc = writer_error(w);
    if (rc)
        return rc;
    struct tfb_media *md = media_get(w, &rc);
    if (!md)
        return rc;
    size_t tag_len = strlen(tag);
    size_t bytes = (size_t)height * (size_t)width * (size_t)channels;
    size_t need = tag_len + 1 + bytes;
    img_job *j = NULL;
    pthread_mutex_lock(&md->mu);
    int full = (md->head || md->busy) &&
               md->queued_bytes + bytes > TFB_IMAGE_QUEUE_BYTES;
    if (!full)
        j = pool_take(md, need);
    pthread_mutex_unlock(&md->mu);
    if (full) {
        tfb_writer_count_dropped(w);
        return TFB_EDROPPED;
    }
    int fresh = !j;
    if (fresh) {
        j = job_alloc(need);
        if (!j)
            return TFB_ENOMEM;
    }
    j->next = NULL;
    j->step = step;
    j->wall = wall_time ? *wall_time : tfb_now_wall();
    j->height = height;
    j->width = width;
    j->channels = channels;
    j->tag_len = tag_len;
    j->bytes = bytes;
    j->tag = (char *)j->data;
    memcpy(j->data, tag, tag_len + 1);
    memcpy(j->data + tag_len + 1, pixels, bytes); /* the one copy */
    pthread_mutex_lock(&md->mu);
    if (md->tail)
        md->tail->next = j;
    else
        md->head = j;
    md->tail = j;
    md->queued_bytes += bytes;
    md->fresh += (uint64_t)fresh;
    img_job *unused = NULL;
    pool_shrink(md, &unused);
    pthread_cond_signal(&md->cv_work);
    pthread_mutex_unlock(&md->mu);
    job_free_list(unused); /* only when images of a new size displace it */
    return 0;
}

int tfb_image(tfb_writer *w, const char *tag, const uint8_t *pixels,
              int height, int width, int channels, int64_t step)
{
    return log_pixels(w, tag, pixels, height, width, channels, step, NULL);
}

int tfb_image_at(tfb_writer *w, const char *tag, const uint8_t *pixels,
                 int height, int width, int channels, int64_t step,
                 double wall_time)
{
    return log_pixels(w, tag, pixels, height, width, channels, step,
                      &wall_time);
}

int tfb_media_pool_stats(tfb_writer *w, tfb_media_pool_info *out)
{
    if (!w || !out)
        return TFB_EINVAL;
    struct tfb_media *md = __atomic_load_n(tfb_writer_media_slot(w),
                                           __ATOMIC_ACQUIRE);
    memset(out, 0, sizeof *out);
    if (!md)
        return 0;
    pthread_mutex_lock(&md->mu);
    out->fresh = md->fresh;
    out->reused = md->reused;
    out->pool_bytes = md->pool_bytes;
    out->queued_bytes = md->queued_bytes;
    for (int i = 0; i < POOL_CLASSES; i++)
        for (img_job *j = md->pool[i].head; j; j = j->next)
            out->pooled++;
    pthread_mutex_unlock(&md->mu);
    return 0;
}

/* ---- already encoded images ---- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

/* Width and height from the header of a PNG, JPEG, GIF or WebP; -1 when
 * the bytes are none of these or their header cannot be read. */
static int image_size(const uint8_t *p, size_t n, uint32_t *w, uint32_t *h)
{
    if (n >= 24 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0 &&
        memcmp(p + 12, "IHDR", 4) == 0) {
        *w = be32(p + 16);
        *h = be32(p + 20);
        return 0;
    }
    if (n >= 10 && (memcmp(p, "GIF87a", 6) == 0 ||
                    memcmp(p, "GIF89a", 6) == 0)) {
        *w = (uint32_t)(p[6] | p[7] << 8);
        *h = (uint32_t)(p[8] | p[9] << 8);
        return 0;
    }
    if (n >= 30 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0) {
        const uint8_t *c = p + 12;
        if (memcmp(c, "VP8X", 4) == 0) {
            *w = 1 + (uint32_t)(c[12] | c[13] << 8 | c[14] << 16);
            *h = 1 + (uint32_t)(c[15] | c[16] << 8 | c[17] << 16);
            return 0;
        }
        if (memcmp(c, "VP8L", 4) == 0 && c[8] == 0x2f) {
            uint32_t b = (uint32_t)(c[9] | c[10] << 8 | c[11] << 16 |
                                    (uint32_t)c[12] << 24);
            *w = 1 + (b & 0x3fff);
            *h = 1 + ((b >> 14) & 0x3fff);
            return 0;
        }
        if (memcmp(c, "VP8 ", 4) == 0 && c[11] == 0x9d && c[12] == 0x01 &&
            c[13] == 0x2a) {
            *w = (uint32_t)(c[14] | c[15] << 8) & 0x3fff;
            *h = (uint32_t)(c[16] | c[17] << 8) & 0x3fff;
            return 0;
        }
        return -1;
    }
    if (n >= 4 && p[0] == 0xff && p[1] == 0xd8) {
        /* Walk the JPEG markers to the first start-of-frame. */
        size_t i = 2;
        while (i + 4 <= n) {
            if (p[i] != 0xff)
                return -1;
            uint8_t mk = p[i + 1];
            if (mk == 0xff) {
                i++;
                continue;
            }
            size_t seg = (size_t)(p[i + 2] << 8 | p[i + 3]);
            if (seg < 2)
                return -1;
            if (mk >= 0xc0 && mk <= 0xcf && mk != 0xc4 && mk != 0xc8 &&
                mk != 0xcc) {
                if (i + 9 > n)
                    return -1;
                *h = (uint32_t)(p[i + 5] << 8 | p[i + 6]);
                *w = (uint32_t)(p[i + 7] << 8 | p[i + 8]);
                return 0;
            }
            i += 2 + seg;
        }
    }
    return -1;
}

static int log_encoded(tfb_writer *w, const char *tag, const void *bytes,
                       size_t len, int64_t step, double wall)
{
    if (!w || !tag || !*tag || !bytes)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    if (len > ((size_t)1 << 30))
        return TFB_ETOOBIG;
    uint32_t width, height;
    if (image_size(bytes, len, &width, &height) < 0 || !width || !height)
        return TFB_EINVAL;
    if (width > TFB_IMAGE_MAX_SIDE || height > TFB_IMAGE_MAX_SIDE ||
        (uint64_t)width * height > TFB_IMAGE_MAX_PIXELS)
        return TFB_ETOOBIG;
    /* After the images of tfb_image already queued would be nicer for
     * order, but waiting for the encoder is what the caller must not do:
     * records of different calls may reach the file in another order
     * than the calls (readers order by step, not by place in the file). */
    return log_image(w, wall, step, tag, strlen(tag), (int)width,
                     (int)height, bytes, len);
}

int tfb_image_encoded(tfb_writer *w, const char *tag, const void *bytes,
                      size_t len, int64_t step)
{
    return log_encoded(w, tag, bytes, len, step, tfb_now_wall());
}

int tfb_image_encoded_at(tfb_writer *w, const char *tag, const void *bytes,
                         size_t len, int64_t step, double wall_time)
{
    return log_encoded(w, tag, bytes, len, step, wall_time);
}
