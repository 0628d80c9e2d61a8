/*
 * scalar_codec.h - the compact block encoding of scalar points that the
 * store keeps (see store.h, "Memory").
 *
 * A block holds 1..TFB_SCALAR_BLOCK points (step, wall time, value) and
 * describes itself, so blocks are decoded one after the other with no
 * index. Every point decodes to exactly the bits it was encoded from
 * (steps of any int64, walls and values of any double, NaN payloads and
 * -0.0 included): each column picks the narrowest of its forms that the
 * encoder has checked to round-trip, else the raw one.
 *
 * Layout (varint = LEB128 of a uint64; zz = zigzag of a two's complement
 * difference, so any int64 difference wraps exactly):
 *   varint n; varint length of the rest (so a reader skips the block
 *   without decoding it); u8 form (bit 0: steps, bits 1-2: walls, bit 3:
 *   values)
 *   steps  STRIDE: zz step0, zz stride            step_i = step0 + i*stride
 *          DELTA:  zz step0, n-1 x zz (step_i - step_i-1)
 *   values F32: n x 4 bytes (every value was a float widened exactly);
 *          F64: n x 8 bytes
 *   walls  TICK_STRIDE / TICK_DELTA: 8 bytes wall0, zz e, then as steps
 *          for the ticks k_i (k_0 = 0): wall_i = wall0 + k_i * 2^e;
 *          TICK_DOD: 8 bytes wall0, zz e, zz k_1, then n-2 x zz of each
 *          delta's difference from the one before ((k_i - k_i-1) -
 *          (k_i-1 - k_i-2)); the encoder writes it only when it is
 *          shorter than TICK_DELTA;
 *          RAW: n x 8 bytes
 * The columns are in the order of how often they are read: the steps by
 * the header (a stride's span is read in its cache line, to skip blocks
 * by step), the values right after them (the alert rules, precursors and
 * medians read nothing else, and never walk the walls' varints), the
 * walls last (only the charts read them; the values before them have a
 * fixed width to skip).
 * A regular series (constant step stride, evenly spaced walls, float32
 * values) costs 4 bytes a point plus a header of under 40 bytes a block;
 * walls written by a clock cost a 2-4 byte varint each (ticks of the
 * wall's own resolution, ~0.24 us at epoch seconds), or 1 byte when the
 * clock ticks at a steady rate that is no multiple of the tick (a writer
 * at 100 Hz: deltas of 41943 or 41944 ticks, their differences -1..1).
 *
 * Pure functions; thread-safe.
 */
#ifndef TFB_SERVER_SCALAR_CODEC_H
#define TFB_SERVER_SCALAR_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Points per block: the header is amortised over them, and the store's
 * raw tail (24 bytes a point) never holds more. */
#define TFB_SCALAR_BLOCK 256

/* Bytes one block of n points may take at most. */
#define TFB_SCALAR_BLOCK_MAX(n) (48 + (size_t)(n) * 28)

/* Encodes n (1..TFB_SCALAR_BLOCK) points into out, which has room for
 * TFB_SCALAR_BLOCK_MAX(n) bytes; returns the bytes written. */
size_t tfb_scalar_block_encode(uint8_t *out, const int64_t *step,
                               const double *wall, const double *value,
                               size_t n);

/* Points in the block at p. */
size_t tfb_scalar_block_count(const uint8_t *p);
/* The block after the one at p (without decoding it). */
const uint8_t *tfb_scalar_block_next(const uint8_t *p);

/* The smallest and largest step of the block at p from its header alone
 * (1), when its steps are a constant stride that does not wrap around
 * int64; else 0 (decode the steps to know). */
int tfb_scalar_block_step_span(const uint8_t *p, int64_t *lo, int64_t *hi);

/* The step of the first point of the block at p (from its header). */
int64_t tfb_scalar_block_first_step(const uint8_t *p);

/* Decodes only the steps of the block at p into step (room for its
 * count), not looking at its walls and values: a reader that picks points
 * by step skips the blocks outside its range for this. Returns the
 * count. */
size_t tfb_scalar_block_steps(const uint8_t *p, int64_t *step);

/* Values [from, from + n) of the block at p, rounded to float, into out
 * (the values sit at a known offset: nothing else is decoded). Returns
 * how many (fewer at the block's end; 0 past it). */
size_t tfb_scalar_block_values(const uint8_t *p, size_t from, size_t n,
                               float *out);

/* Decodes the block at p into the arrays (each with room for its count;
 * any of them may be NULL to skip that column; value32 gets each value
 * rounded to float, value64 the exact double). Returns the byte after
 * the block. */
const uint8_t *tfb_scalar_block_decode(const uint8_t *p, int64_t *step,
                                       double *wall, float *value32,
                                       double *value64);

#endif
