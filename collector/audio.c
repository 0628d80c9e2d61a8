/*
 * audio.c - tfb_audio: a clip as 16-bit PCM WAV in TensorFlow 1's
 * Summary.Audio, the value PyTorch's add_audio writes and TensorBoard's
 * audio dashboard reads (see tfboard.h, "Audio").
 *
 * The clip is converted and framed on the caller's thread: one pass over
 * the samples into a buffer of the record's exact size, then the record
 * joins the writer's queue like any other (tfb_writer_log_event). No
 * I/O, no wait beyond the writer's own queue rule; the size is bounded by
 * TFB_AUDIO_MAX_BYTES, so the pass is too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector/pb.h"
#include "collector/writer_internal.h"
#include "tfboard.h"

/* RIFF header of a PCM WAV: "RIFF" size "WAVE", the 16-byte fmt chunk,
 * then "data" size. */
#define WAV_HEADER 44

static uint8_t *put_le16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *put_le32(uint8_t *p, uint32_t v)
{
    p = put_le16(p, v & 0xffff);
    return put_le16(p, v >> 16);
}

/* The sample as PyTorch writes it: clipped to [-1, 1], times 32767,
 * truncated toward zero (numpy's astype). NaN is written as silence. */
static int16_t pcm16(float x)
{
    if (!(x == x))
        return 0;
    if (x > 1.0f)
        x = 1.0f;
    if (x < -1.0f)
        x = -1.0f;
    return (int16_t)(x * 32767.0f);
}

/* Writes the WAV (header and samples) at p; returns its end. */
static uint8_t *put_wav(uint8_t *p, const float *samples, size_t frames,
                        int channels, uint32_t rate)
{
    uint32_t data = (uint32_t)(frames * (size_t)channels * 2);
    memcpy(p, "RIFF", 4);
    p = put_le32(p + 4, 36 + data);
    memcpy(p, "WAVEfmt ", 8);
    p = put_le32(p + 8, 16);           /* fmt chunk size */
    p = put_le16(p, 1);                /* PCM */
    p = put_le16(p, (uint32_t)channels);
    p = put_le32(p, rate);
    p = put_le32(p, rate * (uint32_t)channels * 2); /* bytes per second */
    p = put_le16(p, (uint32_t)channels * 2);        /* block align */
    p = put_le16(p, 16);                            /* bits per sample */
    memcpy(p, "data", 4);
    p = put_le32(p + 4, data);
    size_t n = frames * (size_t)channels;
    for (size_t i = 0; i < n; i++)
        p = put_le16(p, (uint16_t)pcm16(samples[i]));
    return p;
}

static const char content_type[] = "audio/wav";

/* Event{wall_time, step, summary{value{tag, audio{sample_rate,
 * num_channels, length_frames, encoded_audio_string, content_type}}}}
 * (Summary.Value field 6; Summary.Audio fields 1-5); malloc'd. */
static uint8_t *audio_event(double wall, int64_t step, const char *tag,
                            size_t tag_len, const float *samples,
                            size_t frames, int channels, uint32_t rate,
                            size_t *len)
{
    size_t wav = WAV_HEADER + frames * (size_t)channels * 2;
    size_t ct = sizeof content_type - 1;
    size_t audio = 5 /* sample_rate: key + float */ +
                   1 + pb_varint_size((uint64_t)channels) +
                   1 + pb_varint_size((uint64_t)frames) +
                   pb_len_field_size(wav) + pb_len_field_size(ct);
    size_t value = pb_len_field_size(tag_len) + pb_len_field_size(audio);
    size_t summary = pb_len_field_size(value);
    *len = 9 + 1 + pb_varint_size((uint64_t)step) +
           pb_len_field_size(summary);
    uint8_t *buf = malloc(*len), *p = buf;
    if (!buf)
        return NULL;
    p = pb_put_key(p, 1, PB_I64); /* wall_time */
    p = pb_put_double(p, wall);
    p = pb_put_key(p, 2, PB_VARINT); /* step, even when 0 */
    p = pb_put_varint(p, (uint64_t)step);
    p = pb_put_len(p, 5, summary); /* Event.summary */
    p = pb_put_len(p, 1, value);   /* Summary.value */
    p = pb_put_bytes(p, 1, tag, tag_len);
    p = pb_put_len(p, 6, audio); /* Value.audio */
    p = pb_put_key(p, 1, PB_I32);
    p = pb_put_float(p, (float)rate);
    p = pb_put_key(p, 2, PB_VARINT);
    p = pb_put_varint(p, (uint64_t)channels);
    p = pb_put_key(p, 3, PB_VARINT);
    p = pb_put_varint(p, (uint64_t)frames);
    p = pb_put_len(p, 4, wav);
    p = put_wav(p, samples, frames, channels, rate);
    pb_put_bytes(p, 5, content_type, ct);
    return buf;
}

static int log_audio(tfb_writer *w, const char *tag, const float *samples,
                     size_t frames, int channels, double sample_rate,
                     int64_t step, double wall)
{
    if (!w || !tag || !*tag || (!samples && frames))
        return TFB_EINVAL;
    if (channels < 1 || channels > TFB_AUDIO_MAX_CHANNELS ||
        !(sample_rate >= 1.0 && sample_rate <= TFB_AUDIO_MAX_RATE) ||
        sample_rate != floor(sample_rate))
        return TFB_EINVAL;
    if (frames > TFB_AUDIO_MAX_BYTES / 2 / (size_t)channels)
        return TFB_ETOOBIG;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    size_t n;
    uint8_t *ev = audio_event(wall, step, tag, strlen(tag), samples, frames,
                              channels, (uint32_t)sample_rate, &n);
    if (!ev)
        return TFB_ENOMEM;
    int rc = tfb_writer_log_event(w, ev, n);
    free(ev);
    return rc;
}

int tfb_audio(tfb_writer *w, const char *tag, const float *samples,
              size_t frames, int channels, double sample_rate, int64_t step)
{
    return log_audio(w, tag, samples, frames, channels, sample_rate, step,
                     tfb_now_wall());
}

int tfb_audio_at(tfb_writer *w, const char *tag, const float *samples,
                 size_t frames, int channels, double sample_rate,
                 int64_t step, double wall_time)
{
    return log_audio(w, tag, samples, frames, channels, sample_rate, step,
                     wall_time);
}
