/*
 * wav_check.c - the WAV header check of the audio dashboard (see
 * wav_check.h).
 */
#include "plugins/audio/wav_check.h"

#include <stdio.h>
#include <string.h>

static uint32_t le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | le16(p + 2) << 16;
}

/* A chunk's four-letter id, printable ('?' for other bytes), for a
 * message. */
static void chunk_id(const uint8_t *c, char id[5])
{
    for (int i = 0; i < 4; i++)
        id[i] = c[i] >= 0x20 && c[i] < 0x7f && c[i] != '\\' ? (char)c[i]
                                                            : '?';
    id[4] = 0;
}

/* The fmt chunk's fields, checked against each other. */
static int check_fmt(const uint8_t *c, uint32_t len, tfb_wav_info *w,
                     char *why, size_t cap)
{
    if (len < 16) {
        snprintf(why, cap, "damaged WAV: fmt chunk of %u bytes (16 at "
                 "least)", (unsigned)len);
        return -1;
    }
    w->format = le16(c);
    w->channels = le16(c + 2);
    w->rate = le32(c + 4);
    uint32_t byte_rate = le32(c + 8), align = le16(c + 12);
    w->bits = le16(c + 14);
    if (w->format != 1 && w->format != 3 && w->format != 0xFFFE) {
        snprintf(why, cap, "not served: WAV format %u is not PCM or float",
                 (unsigned)w->format);
        return -1;
    }
    if (w->channels < 1 || w->channels > TFB_WAV_MAX_CHANNELS) {
        snprintf(why, cap, "not served: the WAV header claims %u channels "
                 "(1 to %d)", (unsigned)w->channels, TFB_WAV_MAX_CHANNELS);
        return -1;
    }
    if (w->rate < 1 || w->rate > TFB_WAV_MAX_RATE) {
        snprintf(why, cap, "not served: the WAV header claims a rate of %u "
                 "Hz (1 to %u)", (unsigned)w->rate, TFB_WAV_MAX_RATE);
        return -1;
    }
    if (w->bits != 8 && w->bits != 16 && w->bits != 24 && w->bits != 32) {
        snprintf(why, cap, "not served: %u bits per sample (8, 16, 24 or "
                 "32)", (unsigned)w->bits);
        return -1;
    }
    uint32_t want_align = w->channels * (w->bits / 8);
    if (align != want_align || byte_rate != w->rate * want_align) {
        snprintf(why, cap, "damaged WAV: block align %u and byte rate %u do "
                 "not match %u channels of %u bits at %u Hz", (unsigned)align,
                 (unsigned)byte_rate, (unsigned)w->channels,
                 (unsigned)w->bits, (unsigned)w->rate);
        return -1;
    }
    return 0;
}

int tfb_wav_check(const uint8_t *p, size_t n, tfb_wav_info *out, char *why,
                  size_t cap)
{
    tfb_wav_info w = {0};
    if (n < 12 || memcmp(p, "RIFF", 4) != 0 || memcmp(p + 8, "WAVE", 4)) {
        snprintf(why, cap, "not served: the clip is not a WAV file (no "
                 "RIFF/WAVE header)");
        return -1;
    }
    uint64_t riff = le32(p + 4);
    if (riff + 8 > n) {
        snprintf(why, cap, "damaged WAV: the RIFF header claims %llu bytes, "
                 "the clip holds %zu", (unsigned long long)riff + 8, n);
        return -1;
    }
    size_t off = 12;
    int have_fmt = 0;
    for (int k = 0; k < TFB_WAV_MAX_CHUNKS; k++) {
        if (off + 8 > n) {
            snprintf(why, cap, "damaged WAV: no data chunk");
            return -1;
        }
        const uint8_t *c = p + off;
        uint64_t len = le32(c + 4);
        if (len > n - off - 8) {
            char id[5];
            chunk_id(c, id);
            snprintf(why, cap, "damaged WAV: chunk '%s' claims %llu bytes, "
                     "%zu follow it", id, (unsigned long long)len,
                     n - off - 8);
            return -1;
        }
        if (memcmp(c, "fmt ", 4) == 0) {
            if (check_fmt(c + 8, (uint32_t)len, &w, why, cap) < 0)
                return -1;
            have_fmt = 1;
        } else if (memcmp(c, "data", 4) == 0) {
            if (!have_fmt) {
                snprintf(why, cap, "damaged WAV: data before its fmt chunk");
                return -1;
            }
            uint32_t align = w.channels * (w.bits / 8);
            if (len % align) {
                snprintf(why, cap, "damaged WAV: %llu data bytes are not a "
                         "whole number of %u-byte frames",
                         (unsigned long long)len, (unsigned)align);
                return -1;
            }
            w.frames = len / align;
            *out = w;
            return 0;
        }
        off += 8 + (size_t)len + (len & 1); /* chunks are word-aligned */
    }
    snprintf(why, cap, "damaged WAV: no data chunk within the first %d "
             "chunks", TFB_WAV_MAX_CHUNKS);
    return -1;
}
