/*
 * hparams.c - hyperparameters in the format of TensorBoard's hparams
 * plugin, record for record as PyTorch's SummaryWriter.add_hparams writes
 * them: three summary values (_hparams_/experiment,
 * _hparams_/session_start_info, _hparams_/session_end_info), each an empty
 * DT_FLOAT tensor whose metadata carries plugin "hparams" and an
 * HParamsPluginData message as content.
 *
 * These records are rare (once per run), so the nested messages are built
 * inside out in small heap buffers instead of the size-first, no-allocation
 * scheme of the scalar path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/abi.h"
#include "collector/pb.h"
#include "tfboard.h"
#include "base/vec.h"
#include "collector/writer_internal.h"

#define TAG_EXPERIMENT "_hparams_/experiment"
#define TAG_SESSION_START "_hparams_/session_start_info"
#define TAG_SESSION_END "_hparams_/session_end_info"

enum { DT_FLOAT = 1 };

/* HParamsPluginData fields. version = 0 (PLUGIN_DATA_VERSION) is left out
 * as proto3 does. */
enum { HP_EXPERIMENT = 2, HP_SESSION_START = 3, HP_SESSION_END = 4 };

typedef struct mbuf {
    TFB_VEC(uint8_t) buf;
    int err; /* sticky: later appends do nothing */
} mbuf;

static uint8_t *mb_room(mbuf *b, size_t n)
{
    if (b->err)
        return NULL;
    if (tfb_vec_need(&b->buf, b->buf.n + n) < 0) {
        b->err = TFB_ENOMEM;
        return NULL;
    }
    return b->buf.v + b->buf.n;
}

static void mb_varint_field(mbuf *b, unsigned field, uint64_t v)
{
    uint8_t *d = mb_room(b, 20);
    if (!d)
        return;
    d = pb_put_key(d, field, PB_VARINT);
    d = pb_put_varint(d, v);
    b->buf.n = (size_t)(d - b->buf.v);
}

static void mb_double_field(mbuf *b, unsigned field, double v)
{
    uint8_t *d = mb_room(b, 18);
    if (!d)
        return;
    d = pb_put_key(d, field, PB_I64);
    d = pb_put_double(d, v);
    b->buf.n = (size_t)(d - b->buf.v);
}

static void mb_bytes_field(mbuf *b, unsigned field, const void *data,
                           size_t len)
{
    uint8_t *d = mb_room(b, 20 + len);
    if (!d)
        return;
    d = pb_put_bytes(d, field, data, len);
    b->buf.n = (size_t)(d - b->buf.v);
}

static void mb_free(mbuf *b)
{
    tfb_vec_free(&b->buf);
    memset(b, 0, sizeof *b);
}

/* Appends sub (a finished message) as field `field` of b, then frees it. */
static void mb_message_field(mbuf *b, unsigned field, mbuf *sub)
{
    if (sub->err && !b->err)
        b->err = sub->err;
    else
        mb_bytes_field(b, field, sub->buf.v, sub->buf.n);
    mb_free(sub);
}

/* Wraps an HParamsPluginData (content) into a whole Event and enqueues it:
 * Event{wall_time, summary{value{tag, tensor{dtype: DT_FLOAT},
 * metadata{plugin_data{plugin_name: "hparams", content}}}}}. Consumes
 * content. */
static int log_plugin_data(tfb_writer *w, const char *tag, mbuf *content)
{
    mbuf plugin = {0}, meta = {0}, tensor = {0}, value = {0}, summary = {0},
         event = {0};
    mb_bytes_field(&plugin, 1, "hparams", 7);
    mb_message_field(&plugin, 2, content);
    mb_message_field(&meta, 1, &plugin);
    mb_varint_field(&tensor, 1, DT_FLOAT);
    /* Field order as protobuf serializes it: tag 1, tensor 8, metadata 9. */
    mb_bytes_field(&value, 1, tag, strlen(tag));
    mb_message_field(&value, 8, &tensor);
    mb_message_field(&value, 9, &meta);
    mb_message_field(&summary, 1, &value);
    mb_double_field(&event, 1, tfb_now_wall());
    mb_message_field(&event, 5, &summary);
    int rc = event.err ? event.err
                       : tfb_writer_log_event(w, event.buf.v, event.buf.n);
    mb_free(&event);
    return rc;
}

static int check_hparams(const tfb_hparam *kv, size_t n)
{
    if (!kv && n)
        return TFB_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!kv[i].name || !kv[i].name[0])
            return TFB_EINVAL;
        switch (kv[i].type) {
        case TFB_HPARAM_STRING:
            if (!kv[i].str)
                return TFB_EINVAL;
            break;
        case TFB_HPARAM_BOOL:
        case TFB_HPARAM_NUMBER:
            break;
        default:
            return TFB_EINVAL;
        }
        /* A map cannot hold a name twice; a quadratic scan is fine for
         * the few hyperparameters a run has. */
        for (size_t j = 0; j < i; j++)
            if (!strcmp(kv[i].name, kv[j].name))
                return TFB_EINVAL;
    }
    return 0;
}

/* google.protobuf.Value of one hyperparameter. */
static void put_value(mbuf *b, unsigned field, const tfb_hparam *h)
{
    mbuf v = {0};
    switch (h->type) {
    case TFB_HPARAM_STRING:
        mb_bytes_field(&v, 3, h->str, strlen(h->str));
        break;
    case TFB_HPARAM_BOOL:
        /* bool_value is written even when false: it is the oneof's
         * member, and protobuf keeps a set oneof member of any value. */
        mb_varint_field(&v, 4, h->boolean ? 1 : 0);
        break;
    case TFB_HPARAM_NUMBER:
        mb_double_field(&v, 2, h->number);
        break;
    }
    mb_message_field(b, field, &v);
}

/* The caller's array as whole tfb_hparams of ours (malloc'd; NULL for
 * n 0): walked with kv[0].size as the stride, each element read through
 * its size (an older caller's smaller struct: later fields read as 0).
 * TFB_EINVAL when a size is 0 or differs from kv[0]'s. */
static int read_hparams(const tfb_hparam *kv, size_t n, tfb_hparam **out)
{
    *out = NULL;
    if (!n)
        return 0;
    if (!kv)
        return TFB_EINVAL;
    size_t stride = tfb_abi_size(kv);
    if (stride < sizeof(size_t) || n > SIZE_MAX / sizeof(tfb_hparam))
        return TFB_EINVAL;
    tfb_hparam *whole = malloc(n * sizeof *whole);
    if (!whole)
        return TFB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const void *src = (const char *)kv + i * stride;
        if (tfb_abi_size(src) != stride) {
            free(whole);
            return TFB_EINVAL;
        }
        tfb_hparam tmp;
        memcpy(&whole[i], tfb_abi_view(&tmp, sizeof tmp, src),
               sizeof whole[i]);
    }
    *out = whole;
    return 0;
}

static int log_hparams(tfb_writer *w, const tfb_hparam *kv, size_t n,
                       const char *const *metric_tags, size_t n_metrics);

int tfb_hparams_with_metrics(tfb_writer *w, const tfb_hparam *kv, size_t n,
                             const char *const *metric_tags,
                             size_t n_metrics)
{
    if (!w || (!metric_tags && n_metrics))
        return TFB_EINVAL;
    tfb_hparam *whole;
    int rc = read_hparams(kv, n, &whole);
    if (rc)
        return rc;
    rc = log_hparams(w, whole, n, metric_tags, n_metrics);
    free(whole);
    return rc;
}

static int log_hparams(tfb_writer *w, const tfb_hparam *kv, size_t n,
                       const char *const *metric_tags, size_t n_metrics)
{
    int rc = check_hparams(kv, n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n_metrics; i++)
        if (!metric_tags[i] || !metric_tags[i][0])
            return TFB_EINVAL;

    /* Experiment{hparam_infos=4{name=1, type=4}, metric_infos=5{name=1
     * {tag=2}}} */
    mbuf exp = {0};
    for (size_t i = 0; i < n; i++) {
        mbuf info = {0};
        mb_bytes_field(&info, 1, kv[i].name, strlen(kv[i].name));
        /* tfb_hparam_type's values are the proto's DataType values. */
        mb_varint_field(&info, 4, (uint64_t)kv[i].type);
        mb_message_field(&exp, 4, &info);
    }
    for (size_t i = 0; i < n_metrics; i++) {
        mbuf name = {0}, info = {0};
        mb_bytes_field(&name, 2, metric_tags[i], strlen(metric_tags[i]));
        mb_message_field(&info, 1, &name);
        mb_message_field(&exp, 5, &info);
    }
    mbuf content = {0};
    mb_message_field(&content, HP_EXPERIMENT, &exp);
    rc = log_plugin_data(w, TAG_EXPERIMENT, &content);
    if (rc)
        return rc;

    /* SessionStartInfo{hparams=1 map<string, Value>, start_time_secs=5} */
    mbuf ssi = {0};
    for (size_t i = 0; i < n; i++) {
        mbuf entry = {0};
        mb_bytes_field(&entry, 1, kv[i].name, strlen(kv[i].name));
        put_value(&entry, 2, &kv[i]);
        mb_message_field(&ssi, 1, &entry);
    }
    /* PyTorch leaves the start time out; TensorBoard's own hparams API
     * writes it, and its dashboard shows it. */
    mb_double_field(&ssi, 5, tfb_now_wall());
    mb_message_field(&content, HP_SESSION_START, &ssi);
    return log_plugin_data(w, TAG_SESSION_START, &content);
}

int tfb_hparams(tfb_writer *w, const tfb_hparam *kv, size_t n)
{
    return tfb_hparams_with_metrics(w, kv, n, NULL, 0);
}

int tfb_hparams_end(tfb_writer *w, tfb_hparams_status status)
{
    if (!w || status < TFB_HPARAMS_UNKNOWN || status > TFB_HPARAMS_RUNNING)
        return TFB_EINVAL;
    /* SessionEndInfo{status=1, end_time_secs=2} */
    mbuf sei = {0}, content = {0};
    if (status != TFB_HPARAMS_UNKNOWN)
        mb_varint_field(&sei, 1, (uint64_t)status);
    mb_double_field(&sei, 2, tfb_now_wall());
    mb_message_field(&content, HP_SESSION_END, &sei);
    return log_plugin_data(w, TAG_SESSION_END, &content);
}
