/*
 * wav_check.h - whether the bytes of an audio clip are a WAV file a
 * browser can be handed: the RIFF header read with every size checked
 * against the bytes there are (a header may lie about its sizes, its
 * rate or its channels; the clip comes from a file anyone may have
 * written).
 *
 * Pure; thread-safe.
 */
#ifndef TFB_PLUGIN_AUDIO_WAV_CHECK_H
#define TFB_PLUGIN_AUDIO_WAV_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* The most channels a clip may claim: 8 is 7.1 sound, the most a
 * browser's <audio> element plays. */
#define TFB_WAV_MAX_CHANNELS 8
/* The highest sample rate a clip may claim (Hz): 384 kHz is the highest
 * rate of studio converters; a claimed 4 GHz is a lie, not a recording. */
#define TFB_WAV_MAX_RATE 384000u
/* Chunks walked before "data" at most (fmt, LIST, fact, ...): real files
 * have a handful; a file of millions of empty chunks is refused. */
#define TFB_WAV_MAX_CHUNKS 64

typedef struct tfb_wav_info {
    uint32_t format;   /* 1 PCM, 3 IEEE float, 0xFFFE extensible */
    uint32_t channels;
    uint32_t rate;     /* frames per second */
    uint32_t bits;     /* per sample */
    uint64_t frames;   /* in the data chunk */
} tfb_wav_info;

/* 0 and *out filled when p[0..n) is a WAV whose header holds: RIFF/WAVE,
 * a "fmt " chunk of at least 16 bytes with 1..TFB_WAV_MAX_CHANNELS
 * channels, a rate of 1..TFB_WAV_MAX_RATE, 8/16/24/32 bits, a block
 * align and byte rate that agree with them, and a "data" chunk whose
 * size is within the bytes there are and a whole number of frames.
 * Else -1 with the reason, in words, in why (cap bytes). */
int tfb_wav_check(const uint8_t *p, size_t n, tfb_wav_info *out, char *why,
                  size_t cap);

#endif
