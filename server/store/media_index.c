/*
 * media_index.c - where each image lies (see media_index.h).
 */
#include "store/media_index.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/event_decode.h"
#include "collector/pb.h"
#include "base/str.h"
#include "base/strtab.h"
#include "base/utf8.h"
#include "base/vec.h"

/* Entries live in blocks of this many that never move: appending never
 * copies, and memory is the entries plus one pointer per block. */
#define BLOCK 1024

typedef struct media_tag {
    tfb_media_kind kind;
    char *tag, *display, *desc;
    size_t tag_len;
    TFB_VEC(tfb_media_entry *) blocks;
    size_t n;
    uint32_t samples; /* 1 + the largest sample number seen */
    uint64_t dropped;
} media_tag;

struct tfb_media_index {
    pthread_mutex_t lock;
    TFB_VEC(media_tag *) tags;
    /* per kind: tag -> media_tag (keys: the tag's own copy) */
    tfb_strtab tag_idx[TFB_MEDIA_KIND_COUNT];
    TFB_VEC(char *) paths;
    uint64_t total[TFB_MEDIA_KIND_COUNT];
    /* Loader-side cache: the path given last and its number. */
    const char *last_path;
    uint32_t last_file;
};

int tfb_media_index_create(tfb_media_index **out)
{
    tfb_media_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return TFB_ENOMEM;
    pthread_mutex_init(&ix->lock, NULL);
    *out = ix;
    return 0;
}

/* The index of every run without images: nothing is ever added to it
 * (store.h, tfb_run_media). */
static tfb_media_index g_empty = {.lock = PTHREAD_MUTEX_INITIALIZER};

tfb_media_index *tfb_media_index_empty(void)
{
    return &g_empty;
}

static void tag_free(media_tag *t)
{
    for (size_t i = 0; i < t->blocks.n; i++)
        free(t->blocks.v[i]);
    tfb_vec_free(&t->blocks);
    free(t->tag);
    free(t->display);
    free(t->desc);
    free(t);
}

void tfb_media_index_destroy(tfb_media_index *ix)
{
    if (!ix)
        return;
    for (size_t i = 0; i < ix->tags.n; i++)
        tag_free(ix->tags.v[i]);
    tfb_vec_free(&ix->tags);
    for (int k = 0; k < TFB_MEDIA_KIND_COUNT; k++)
        tfb_strtab_free(&ix->tag_idx[k]);
    for (size_t i = 0; i < ix->paths.n; i++)
        free(ix->paths.v[i]);
    tfb_vec_free(&ix->paths);
    pthread_mutex_destroy(&ix->lock);
    free(ix);
}

void tfb_media_index_reset(tfb_media_index *ix)
{
    if (!ix)
        return;
    pthread_mutex_lock(&ix->lock);
    for (size_t i = 0; i < ix->tags.n; i++) {
        media_tag *t = ix->tags.v[i];
        for (size_t b = 0; b < t->blocks.n; b++)
            free(t->blocks.v[b]);
        t->blocks.n = 0;
        t->n = 0;
        t->samples = 0;
        t->dropped = 0;
    }
    memset(ix->total, 0, sizeof ix->total);
    pthread_mutex_unlock(&ix->lock);
}

static int plugin_is(const char *plugin, size_t len, const char *name)
{
    return plugin && len == strlen(name) && memcmp(plugin, name, len) == 0;
}

/* The kind of value v, or -1 when the index does not take it. */
static int value_kind(const tfb_value *v, const char *plugin,
                      size_t plugin_len)
{
    if (v->kind == TFB_VALUE_IMAGE)
        return TFB_MEDIA_IMAGE;
    if (v->kind == TFB_VALUE_AUDIO)
        return TFB_MEDIA_AUDIO;
    if (!v->tensor)
        return -1;
    if (v->plugin_name.len) {
        plugin = v->plugin_name.ptr;
        plugin_len = v->plugin_name.len;
    }
    if (plugin_is(plugin, plugin_len, "images"))
        return TFB_MEDIA_IMAGE;
    if (plugin_is(plugin, plugin_len, "pr_curves"))
        return TFB_MEDIA_PR_CURVE;
    if (plugin_is(plugin, plugin_len, "audio"))
        return TFB_MEDIA_AUDIO;
    return -1;
}

int tfb_media_is_image(const tfb_value *v, const char *plugin,
                       size_t plugin_len)
{
    return value_kind(v, plugin, plugin_len) >= 0;
}

/* ---- writer side (under the lock) ---- */

static int file_number(tfb_media_index *ix, const char *path, uint32_t *out)
{
    if (ix->last_path == path) {
        *out = ix->last_file;
        return 0;
    }
    for (size_t i = ix->paths.n; i-- > 0;)
        if (strcmp(ix->paths.v[i], path) == 0) {
            ix->last_path = path;
            ix->last_file = (uint32_t)i;
            *out = (uint32_t)i;
            return 0;
        }
    if (ix->paths.n >= UINT32_MAX ||
        tfb_vec_need(&ix->paths, ix->paths.n + 1) < 0)
        return TFB_ENOMEM;
    char *c = tfb_strndup(path, strlen(path));
    if (!c)
        return TFB_ENOMEM;
    ix->paths.v[ix->paths.n] = c;
    ix->last_path = path;
    ix->last_file = (uint32_t)ix->paths.n;
    *out = ix->last_file;
    ix->paths.n++;
    return 0;
}

static char *dup_view(const tfb_strview *s)
{
    return tfb_strndup(s->ptr ? s->ptr : "", s->ptr ? s->len : 0);
}

static media_tag *tag_get(tfb_media_index *ix, tfb_media_kind kind,
                          const tfb_value *v)
{
    const char *tag = v->tag.ptr;
    size_t len = v->tag.len;
    char *clean = NULL;
    /* The U+FFFD rule of utf8.h, as for series: the tag listed is the tag
     * queried. */
    if (!tfb_utf8_valid(tag, len)) {
        clean = tfb_utf8_clean(tag, len, &len);
        if (!clean)
            return NULL;
        tag = clean;
    }
    media_tag *t = tfb_strtab_get(&ix->tag_idx[kind], tag, len);
    if (t) {
        free(clean);
        return t;
    }
    t = calloc(1, sizeof *t);
    if (!t || tfb_vec_need(&ix->tags, ix->tags.n + 1) < 0) {
        free(t);
        free(clean);
        return NULL;
    }
    t->kind = kind;
    t->tag = clean ? clean : tfb_strndup(tag, len);
    t->tag_len = len;
    t->display = dup_view(&v->display_name);
    t->desc = dup_view(&v->description);
    if (!t->tag || !t->display || !t->desc ||
        tfb_strtab_put(&ix->tag_idx[kind], t->tag, len, t) < 0) {
        tag_free(t);
        return NULL;
    }
    ix->tags.v[ix->tags.n++] = t;
    return t;
}

static int push(media_tag *t, const tfb_media_entry *e)
{
    if (t->n >= TFB_MEDIA_MAX_PER_TAG) {
        t->dropped++;
        return 0;
    }
    size_t b = t->n / BLOCK;
    if (b == t->blocks.n) {
        if (tfb_vec_need(&t->blocks, t->blocks.n + 1) < 0)
            return TFB_ENOMEM;
        t->blocks.v[b] = malloc(BLOCK * sizeof *t->blocks.v[b]);
        if (!t->blocks.v[b])
            return TFB_ENOMEM;
        t->blocks.n++;
    }
    t->blocks.v[b][t->n % BLOCK] = *e;
    t->n++;
    if ((uint32_t)e->sample + 1 > t->samples)
        t->samples = (uint32_t)e->sample + 1;
    return 1;
}

static uint16_t dim16(int64_t x)
{
    return x > 0 && x <= 65535 ? (uint16_t)x : 0;
}

/* A decimal dimension string of a TF2 image tensor ("28"). */
static int64_t parse_dim(const uint8_t *p, size_t n)
{
    int64_t x = 0;
    if (n == 0 || n > 9)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        x = x * 10 + (p[i] - '0');
    }
    return x;
}

static int add_one(tfb_media_index *ix, media_tag *t, uint32_t file,
                   const tfb_event *ev, const uint8_t *bytes, size_t len,
                   uint16_t sample, int64_t w, int64_t h)
{
    if (bytes < ev->summary || len > UINT32_MAX ||
        (size_t)(bytes - ev->summary) > UINT32_MAX)
        return 0; /* not inside the Summary: nothing to find it by */
    tfb_media_entry e = {
        .step = ev->step,
        .wall = ev->wall_time,
        .record_off = ev->offset,
        .delta = (uint32_t)(bytes - ev->summary),
        .len = (uint32_t)len,
        .file = file,
        .sample = sample,
        .width = dim16(w),
        .height = dim16(h),
    };
    int rc = push(t, &e);
    if (rc > 0)
        ix->total[t->kind]++;
    return rc;
}

/* Audio: TF1's Summary.Audio (its encoded_audio_string, field 4), or a
 * TF2 string tensor whose string_val (field 8) holds clip, label, clip,
 * label... (shape [k, 2]); each clip is an entry, its label's length in
 * `width`. Returns the clips indexed or TFB_ENOMEM. */
static int add_audio(tfb_media_index *ix, media_tag *t, uint32_t file,
                     const tfb_event *ev, const tfb_value *v)
{
    const uint8_t *p, *end;
    pb_field f;
    int r, rc = 0, added = 0;
    if (v->kind == TFB_VALUE_AUDIO) {
        p = v->audio;
        end = p + v->audio_len;
        while ((r = pb_next(&p, end, &f)) > 0)
            if (f.num == 4 && f.wt == PB_LEN)
                return add_one(ix, t, file, ev, f.p, f.len, 0, 0, 0);
        return 0;
    }
    p = v->tensor;
    end = p + v->tensor_len;
    const uint8_t *clip = NULL;
    size_t clip_len = 0, k = 0;
    while ((r = pb_next(&p, end, &f)) > 0) {
        if (f.num != 8 || f.wt != PB_LEN)
            continue;
        if (k % 2 == 0) {
            clip = f.p;
            clip_len = f.len;
        } else if (k / 2 <= TFB_MEDIA_MAX_SAMPLES) {
            /* The audio route reads a label right after its clip's bytes
             * (one key byte, its length); a label elsewhere (another
             * field written between them) is not shown, never misread. */
            int next = f.p == clip + clip_len + 1 + pb_varint_size(f.len);
            rc = add_one(ix, t, file, ev, clip, clip_len, (uint16_t)(k / 2),
                         next ? (int64_t)f.len : 0, 0);
            if (rc < 0)
                return rc;
            added += rc;
            clip = NULL;
        }
        k++;
    }
    /* A last clip without its label. */
    if (clip && k / 2 <= TFB_MEDIA_MAX_SAMPLES) {
        rc = add_one(ix, t, file, ev, clip, clip_len, (uint16_t)(k / 2), 0, 0);
        if (rc < 0)
            return rc;
        added += rc;
    }
    return added;
}

int tfb_media_index_add(tfb_media_index *ix, const char *path,
                        const tfb_event *ev, const tfb_value *v,
                        const char *plugin, size_t plugin_len)
{
    int kind = v ? value_kind(v, plugin, plugin_len) : -1;
    if (!ix || !path || !ev || kind < 0 || !ev->summary)
        return 0;
    int added = 0, rc = 0;
    pthread_mutex_lock(&ix->lock);
    uint32_t file;
    media_tag *t = NULL;
    if (file_number(ix, path, &file) < 0 ||
        !(t = tag_get(ix, (tfb_media_kind)kind, v))) {
        rc = TFB_ENOMEM;
        goto out;
    }
    if (kind == TFB_MEDIA_PR_CURVE) {
        /* The whole TensorProto; its plugin decodes it when asked. */
        rc = add_one(ix, t, file, ev, v->tensor, v->tensor_len, 0, 0, 0);
        added += rc > 0;
        goto out;
    }
    if (kind == TFB_MEDIA_AUDIO) {
        rc = add_audio(ix, t, file, ev, v);
        added += rc > 0 ? rc : 0;
        goto out;
    }
    if (v->kind == TFB_VALUE_IMAGE) {
        if (v->image_data.ptr) {
            rc = add_one(ix, t, file, ev, (const uint8_t *)v->image_data.ptr,
                         v->image_data.len, 0, v->image_width,
                         v->image_height);
            added += rc > 0;
        }
        goto out;
    }
    /* TF2: string_val (TensorProto field 8) holds width, height, then
     * the encoded images. Walked once here (tfb_value_string would make
     * many images per tensor quadratic). */
    const uint8_t *p = v->tensor, *end = p + v->tensor_len;
    int64_t w = 0, h = 0;
    size_t k = 0;
    pb_field f;
    int r;
    while ((r = pb_next(&p, end, &f)) > 0) {
        if (f.num != 8 || f.wt != PB_LEN)
            continue;
        if (k == 0)
            w = parse_dim(f.p, f.len);
        else if (k == 1)
            h = parse_dim(f.p, f.len);
        else if (k - 2 <= TFB_MEDIA_MAX_SAMPLES) {
            rc = add_one(ix, t, file, ev, f.p, f.len, (uint16_t)(k - 2), w,
                         h);
            if (rc < 0)
                break;
            added += rc > 0;
        }
        k++;
    }
out:
    pthread_mutex_unlock(&ix->lock);
    return rc < 0 ? rc : added;
}

/* ---- read side ---- */

static const tfb_media_entry *entry_at(const media_tag *t, size_t i)
{
    return &t->blocks.v[i / BLOCK][i % BLOCK];
}

int tfb_media_tags(tfb_media_index *ix, tfb_media_kind kind,
                   tfb_media_tag_info **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!ix)
        return 0;
    pthread_mutex_lock(&ix->lock);
    tfb_media_tag_info *v = calloc(ix->tags.n ? ix->tags.n : 1, sizeof *v);
    size_t k = 0;
    if (v)
        for (size_t i = 0; i < ix->tags.n; i++) {
            const media_tag *t = ix->tags.v[i];
            if (t->kind != kind)
                continue;
            v[k].tag = tfb_strndup(t->tag, t->tag_len);
            v[k].display = tfb_strndup(t->display, strlen(t->display));
            v[k].desc = tfb_strndup(t->desc, strlen(t->desc));
            v[k].samples = t->samples;
            v[k].count = t->n;
            v[k].dropped = t->dropped;
            if (t->n)
                v[k].last = *entry_at(t, t->n - 1);
            k++;
            if (!v[k - 1].tag || !v[k - 1].display || !v[k - 1].desc) {
                tfb_media_tag_infos_free(v, k);
                v = NULL;
                break;
            }
        }
    pthread_mutex_unlock(&ix->lock);
    if (!v)
        return TFB_ENOMEM;
    *out = v;
    *n = k;
    return 0;
}

void tfb_media_tag_infos_free(tfb_media_tag_info *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++) {
        free(v[i].tag);
        free(v[i].display);
        free(v[i].desc);
    }
    free(v);
}

uint64_t tfb_media_count(tfb_media_index *ix, tfb_media_kind kind)
{
    if (!ix)
        return 0;
    pthread_mutex_lock(&ix->lock);
    uint64_t n = ix->total[kind];
    pthread_mutex_unlock(&ix->lock);
    return n;
}

int tfb_media_entries(tfb_media_index *ix, tfb_media_kind kind,
                      const char *tag, int sample, tfb_media_entry **out,
                      size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!ix || !tag)
        return TFB_EINVAL;
    int rc = 0;
    pthread_mutex_lock(&ix->lock);
    const media_tag *t = tfb_strtab_get(&ix->tag_idx[kind], tag, strlen(tag));
    if (!t) {
        rc = TFB_ENOENT;
    } else {
        tfb_media_entry *v = malloc((t->n ? t->n : 1) * sizeof *v);
        if (!v) {
            rc = TFB_ENOMEM;
        } else {
            size_t k = 0;
            for (size_t i = 0; i < t->n; i++) {
                const tfb_media_entry *e = entry_at(t, i);
                if (sample < 0 || e->sample == sample)
                    v[k++] = *e;
            }
            *out = v;
            *n = k;
        }
    }
    pthread_mutex_unlock(&ix->lock);
    return rc;
}

int tfb_media_find(tfb_media_index *ix, tfb_media_kind kind, const char *tag,
                   int sample, uint64_t index, tfb_media_entry *out)
{
    if (!ix || !tag || !out)
        return TFB_EINVAL;
    int rc = TFB_ENOENT;
    pthread_mutex_lock(&ix->lock);
    const media_tag *t = tfb_strtab_get(&ix->tag_idx[kind], tag, strlen(tag));
    if (t) {
        uint64_t k = 0;
        if (sample == 0 && t->samples <= 1) {
            /* One image per step (every TF1 tag): all are sample 0, so
             * the index is the position, found without a walk. */
            if (index < t->n) {
                *out = *entry_at(t, (size_t)index);
                rc = 0;
            }
        } else {
            for (size_t i = 0; i < t->n; i++) {
                const tfb_media_entry *e = entry_at(t, i);
                if (sample >= 0 && e->sample != sample)
                    continue;
                if (k++ == index) {
                    *out = *e;
                    rc = 0;
                    break;
                }
            }
        }
    }
    pthread_mutex_unlock(&ix->lock);
    return rc;
}

/* Records larger than this are not read back for one image. */
#define MAX_READ_RECORD ((uint64_t)1 << 30)

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return TFB_EIO;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int tfb_media_read(tfb_media_index *ix, const tfb_media_entry *e,
                   uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!ix || !e)
        return TFB_EINVAL;
    char *path = NULL;
    pthread_mutex_lock(&ix->lock);
    if (e->file < ix->paths.n)
        path = tfb_strdup(ix->paths.v[e->file]);
    pthread_mutex_unlock(&ix->lock);
    if (!path)
        return TFB_ENOENT;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return errno == EMFILE || errno == ENFILE ? TFB_EMFILE : TFB_EIO;
    uint8_t head[12];
    uint8_t *rec = NULL;
    int rc = pread_all(fd, head, sizeof head, e->record_off);
    uint64_t n = 0;
    if (rc == 0) {
        n = pb_le64(head);
        if (tfb_masked_crc32c(head, 8) != pb_le32(head + 8) ||
            n > MAX_READ_RECORD)
            rc = TFB_ECORRUPT;
    }
    if (rc == 0 && !(rec = malloc((size_t)n + 4)))
        rc = TFB_ENOMEM;
    if (rc == 0)
        rc = pread_all(fd, rec, (size_t)n + 4, e->record_off + 12);
    close(fd);
    tfb_event ev = {.size = sizeof ev};
    if (rc == 0 &&
        (tfb_masked_crc32c(rec, (size_t)n) != pb_le32(rec + n) ||
         tfb_event_decode(rec, (size_t)n, &ev) < 0 || !ev.summary ||
         ev.step != e->step || (uint64_t)e->delta + e->len > ev.summary_len))
        rc = TFB_ECORRUPT;
    if (rc == 0) {
        /* The image moves to the front of the record's buffer, which is
         * then the answer (one allocation, one copy). */
        memmove(rec, ev.summary + e->delta, e->len);
        *out = rec;
        *len = e->len;
        return 0;
    }
    free(rec);
    return rc;
}

const char *tfb_media_sniff(const uint8_t *p, size_t n)
{
    if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0)
        return "image/png";
    if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
        return "image/jpeg";
    if (n >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0))
        return "image/gif";
    if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0)
        return "image/webp";
    return NULL;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

static const char *check_size(const char *type, uint64_t w, uint64_t h,
                              char *why, size_t cap)
{
    if (w == 0 || h == 0) {
        snprintf(why, cap, "damaged image: its header claims %llu x %llu "
                 "pixels", (unsigned long long)w, (unsigned long long)h);
        return NULL;
    }
    if (w * h > TFB_MEDIA_MAX_PIXELS) {
        snprintf(why, cap, "image not served: its header claims %llu x %llu "
                 "pixels, more than the %llu a browser is asked to decode",
                 (unsigned long long)w, (unsigned long long)h,
                 (unsigned long long)TFB_MEDIA_MAX_PIXELS);
        return NULL;
    }
    return type;
}

const char *tfb_media_check(const uint8_t *p, size_t n, char *why,
                            size_t cap)
{
    const char *type = tfb_media_sniff(p, n);
    if (!type) {
        snprintf(why, cap, "not served: the bytes are not a PNG, JPEG, GIF "
                 "or WebP image");
        return NULL;
    }
    if (type[6] == 'p') { /* image/png */
        if (n < 8 + 25 || memcmp(p + 12, "IHDR", 4) != 0) {
            snprintf(why, cap, "damaged PNG: no IHDR header");
            return NULL;
        }
        if (n < 8 + 25 + 12 || memcmp(p + n - 8, "IEND", 4) != 0) {
            snprintf(why, cap, "damaged PNG: cut short (no IEND chunk at its "
                     "end, %zu bytes)", n);
            return NULL;
        }
        return check_size(type, be32(p + 16), be32(p + 20), why, cap);
    }
    if (type[6] == 'g') { /* image/gif: logical screen size, LE16 */
        if (n < 10) {
            snprintf(why, cap, "damaged GIF: cut short");
            return NULL;
        }
        return check_size(type, (uint64_t)(p[6] | p[7] << 8),
                          (uint64_t)(p[8] | p[9] << 8), why, cap);
    }
    return type;
}
