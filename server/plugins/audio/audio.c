/*
 * audio.c - the audio dashboard: TensorBoard's /data/plugin/audio/
 * {tags, audio, individualAudio}, over the run's media index
 * (store/media_index.h, kind TFB_MEDIA_AUDIO: TF1 Summary.Audio as
 * PyTorch's add_audio and tfb_audio write it, and TF2 audio tensors).
 * The clip's bytes are read from the event file when asked for, and
 * served only when their WAV header holds (wav_check.h): a header that
 * lies about its sizes, rate or channels gets a clear error instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/media_route.h"
#include "core/plugin.h"
#include "plugins/audio/wav_check.h"
#include "store/media_index.h"

/* Every clip of the dashboard is WAV (TensorBoard's only audio encoding:
 * its data_compat turns TF1 audio into WAV tensors). */
static const char wav_type[] = "audio/wav";

/* {run: {tag: {displayName, description, samples, count, dropped}}}:
 * TensorBoard's shape (runs without audio left out) and the images
 * dashboard's counts. */
static int route_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_media_route_tags(req, resp, TFB_MEDIA_AUDIO, 1);
}

/* text HTML-escaped, malloc'd: TensorBoard's label is HTML, and a label
 * is the writer's text, shown as text. */
static char *html_escaped(const char *s, size_t n)
{
    char *out = malloc(n * 6 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *r = NULL;
        switch (s[i]) {
        case '&': r = "&amp;"; break;
        case '<': r = "&lt;"; break;
        case '>': r = "&gt;"; break;
        case '"': r = "&quot;"; break;
        case '\'': r = "&#39;"; break;
        default: *o++ = s[i]; continue;
        }
        size_t k = strlen(r);
        memcpy(o, r, k);
        o += k;
    }
    *o = 0;
    return out;
}

/* One clip of the audio route's answer. */
typedef struct audio_row {
    double wall_time;
    int64_t step;
    const char *label;      /* HTML, as TensorBoard */
    const char *label_text; /* ours: the label as written */
    const char *contentType;
    uint64_t bytes;
    const char *query;
} audio_row;

static const tfb_json_field audio_row_fields[] = {
    TFB_JSON_FIELD(audio_row, wall_time, DOUBLE),
    TFB_JSON_FIELD(audio_row, step, I64),
    TFB_JSON_FIELD(audio_row, label, STR),
    TFB_JSON_FIELD(audio_row, label_text, STR),
    TFB_JSON_FIELD(audio_row, contentType, STR),
    TFB_JSON_FIELD(audio_row, bytes, U64),
    TFB_JSON_FIELD(audio_row, query, STR),
};

/* The label of a TF2 clip: the string that follows the clip in its
 * tensor (media_index.h: label_len in the entry's width), read from the
 * record; "" when there is none or it cannot be read. malloc'd. */
static char *read_label(tfb_media_index *ix, const tfb_media_entry *e)
{
    if (!e->width)
        return calloc(1, 1);
    tfb_media_entry l = *e;
    size_t key_len = 1 + (e->width < 128 ? 1 : e->width < 16384 ? 2 : 3);
    l.delta = e->delta + e->len + (uint32_t)key_len;
    l.len = e->width;
    uint8_t *bytes;
    size_t n;
    if (tfb_media_read(ix, &l, &bytes, &n) < 0)
        return calloc(1, 1);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, bytes, n);
        s[n] = 0;
        /* A NUL inside ends the text shown. */
    }
    free(bytes);
    return s;
}

static const tfb_media_nouns nouns = {TFB_MEDIA_AUDIO, "audio", "clip", 0};

/* [{wall_time, step, label, contentType, query}] for one sample of a tag
 * (TensorBoard's), every clip of every step, in file order; ours:
 * label_text, bytes. */
static int route_audio(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_media_list l;
    if (!tfb_media_list_begin(req, resp, &nouns, &l))
        return 0;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < l.n; i++) {
        char *text = read_label(l.ix, &l.e[i]);
        char *html = text ? html_escaped(text, strlen(text)) : NULL;
        audio_row row = {
            .wall_time = l.e[i].wall,
            .step = l.e[i].step,
            .label = html ? html : "",
            .label_text = text ? text : "",
            .contentType = wav_type,
            .bytes = l.e[i].len,
            .query = tfb_media_list_query(&l, i),
        };
        TFB_JSON_STRUCT(&j, &row, audio_row_fields);
        free(text);
        free(html);
    }
    tfb_json_array_end(&j);
    tfb_media_list_end(&l);
    return tfb_http_json(resp, &j);
}

/* The bytes of one clip as audio/wav, when its WAV header holds. */
static int route_individual(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_media_entry e;
    uint8_t *bytes;
    size_t len;
    if (!tfb_media_item_read(req, resp, &nouns, &e, &bytes, &len))
        return 0;
    char why[256];
    tfb_wav_info info;
    if (tfb_wav_check(bytes, len, &info, why, sizeof why) < 0) {
        free(bytes);
        return tfb_http_error(resp, 422, "%s", why);
    }
    tfb_http_body_take(resp, 200, wav_type, (char *)bytes, len);
    tfb_media_item_cache(req, resp);
    return 0;
}

static int has_audio(tfb_store *s, tfb_run *r)
{
    (void)s;
    return tfb_media_count(tfb_run_media(r), TFB_MEDIA_AUDIO) > 0;
}

static const tfb_plugin_route routes[] = {
    {"tags", route_tags},
    {"audio", route_audio},
    {"individualAudio", route_individual},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_audio_assets[];

const tfb_plugin tfb_plugin_audio = {
    TFB_PLUGIN_ABI,
    .name = "audio",
    .title = "Audio",
    .module = "js/pages/audio.js",
    .assets = tfb_audio_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_audio,
};
