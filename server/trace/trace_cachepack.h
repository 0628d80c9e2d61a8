/*
 * trace_cachepack.h - the form a columnar trace cache (trace_colcache.h)
 * takes in a bucket: the file cut into chunks of TFB_TRACE_PACK_CHUNK
 * bytes, each an independent zstd frame that records its content size and
 * a checksum of it, the frames one after the other. docs/trace-cache.md
 * ("Caches in a bucket").
 *
 * Why packed: a cache is ~85 bytes a kernel, mostly sorted timestamps and
 * small ids, which zstd's fastest level cuts ~4.4 times (851 MB -> 194 MB
 * for 10 M kernels). A replica then downloads (and a cloud bills) a
 * quarter of the bytes, and unpacking costs less than the download it
 * saves: ~0.5 s of two cores for 851 MB, against 3.3 s for the raw file
 * from moto here. Independent frames let unpacking use every core and
 * write each chunk where it belongs.
 *
 * Hostile input: the object comes from a bucket anyone with write access
 * fills. Unpacking walks the frames first and refuses (TFB_ECORRUPT) a
 * frame that does not parse, lacks its content size, or holds other than
 * a whole chunk (the last: one chunk at most), so the frame table is
 * bounded too; the declared sizes must sum within max_raw (TFB_ETOOBIG)
 * before a byte is written, and every frame must decode to exactly its
 * declared size with its checksum. So what an object can make the server
 * spend is bounded by max_raw: disk, and decoding CPU linear in it. What
 * unpacks is still only a candidate: the caller checks the file whole
 * (tfb_trace_colcache_read_file) before it maps anything.
 *
 * Thread-safety: both calls are reentrant; each runs its own worker
 * threads (at most TFB_TRACE_PACK_THREADS) and joins them before it
 * returns.
 */
#ifndef TFB_SERVER_TRACE_CACHEPACK_H
#define TFB_SERVER_TRACE_CACHEPACK_H

#include <stdint.h>

/* Raw bytes a frame holds (the last one may hold fewer): large enough
 * that zstd finds its matches, small enough that each worker's buffers
 * (about two chunks) stay small and two cores share a file evenly. */
#define TFB_TRACE_PACK_CHUNK ((uint64_t)16 << 20)
/* Worker threads of one pack or unpack (fewer on fewer cores). */
#define TFB_TRACE_PACK_THREADS 4

/* Packs the file src into a new file dst (created, mode 0600; removed on
 * error). 0; TFB_ENOMEM, TFB_EIO, TFB_ENOSPC... from reading src or
 * writing dst. *packed (may be NULL): dst's bytes. */
int tfb_trace_cachepack_pack(const char *src, const char *dst,
                             uint64_t *packed);

/* Unpacks the packed file at src (as a bucket gave it) into the open,
 * empty file descriptor dst_fd (written with pwrite; not closed). 0;
 * TFB_ECORRUPT (not a sound pack: a frame that does not parse or check,
 * of other than a chunk's size, no content size, trailing bytes); TFB_ETOOBIG
 * (it declares more than max_raw bytes: nothing written); TFB_ENOSPC,
 * TFB_EIO, TFB_ENOMEM. *raw (may be NULL): the bytes written. */
int tfb_trace_cachepack_unpack(const char *src, int dst_fd, uint64_t max_raw,
                               uint64_t *raw);

/* The walk of unpack alone (no decoding, no writing): what src unpacks
 * to, so that room is made before. 0 and *raw; TFB_ECORRUPT,
 * TFB_ETOOBIG as unpack; TFB_EIO... reading src. */
int tfb_trace_cachepack_size(const char *src, uint64_t max_raw,
                             uint64_t *raw);

#endif
