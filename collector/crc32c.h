/*
 * crc32c.h - a TFRecord's two CRC checks, for the readers' hot path
 * (internal; tfboard.h's tfb_masked_crc32c is the public form). Each is
 * one call to the implementation chosen at load time (SSE4.2 or the
 * table), where the public form is a call into another through a
 * pointer. Pure; thread-safe.
 */
#ifndef TFB_COLLECTOR_CRC32C_H
#define TFB_COLLECTOR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* A record's header: the masked CRC-32C of head[0..8) (the length) equals
 * the little-endian head[8..12). 1 or 0. */
int tfb_tfrecord_len_ok(const uint8_t *head);
/* A record's payload: the masked CRC-32C of p[0..n) equals the
 * little-endian p[n..n+4) (4 readable bytes there). 1 or 0. */
int tfb_tfrecord_data_ok(const uint8_t *p, size_t n);

#endif
