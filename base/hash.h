/*
 * hash.h - the one string/bytes hash of tfboard (collector and server).
 *
 * FNV-1a 64 over the bytes, then a 64-bit mix (murmur3's fmix64). Why this
 * one: keys are short (tags, kernel names: 5-100 bytes), where FNV-1a's
 * byte loop beats block hashes with their set-up and tail handling, it
 * needs no alignment or endianness care, and it is what the copies it
 * replaces used. Plain FNV-1a's low bits depend only on the low bits of
 * the input bytes, and the tables index by the low bits (power-of-two
 * capacity), so the final mix spreads every input bit into them. Not
 * keyed: the tables hash names from local files and the program itself,
 * not from untrusted network peers.
 *
 * Thread-safety: pure functions, any thread.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_HASH_H
#define TFB_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Hash of n bytes at p (p may be NULL when n is 0). Never returns 0, so
 * tables may use 0 as "no hash". */
uint64_t tfb_hash_bytes(const void *p, size_t n);

/* Hash of a NUL-terminated string; equal to tfb_hash_bytes(s, strlen(s)). */
uint64_t tfb_hash_str(const char *s);

#endif
