/*
 * tfboard.h - the public API of libtfboard.
 *
 * libtfboard writes TensorBoard event files (scalars, histograms, text,
 * gradient norms, NaN/Inf checks, input-pipeline step timings) and CUPTI GPU
 * traces, and reads event files written by any TensorBoard-compatible tool.
 *
 * Conventions, for every function below:
 *  - Return value: 0 (or a documented non-negative count) on success, a
 *    negative TFB_E* code on failure. tfb_strerror() names the code.
 *  - Out-parameters are written only on success.
 *  - Every open/close pair: close accepts NULL.
 *  - Strings are NUL-terminated UTF-8 unless a length is given.
 *  - The library never aborts, never prints, and never raises a signal.
 *
 *  - Every options and stats struct begins with `size_t size`, set by its
 *    _init function (call it before filling fields): fields are only ever
 *    added at the end, so a program built against an older header keeps
 *    working with a newer library, and the library fills or reads only
 *    the fields the caller's struct has.
 *  - So does every struct the library fills for the caller or reads from
 *    it (tfb_event, tfb_value, tfb_rank_info, tfb_hparam, tfb_tensor,
 *    tfb_tensor_f64, tfb_nonfinite_counts, tfb_bucket): set `.size =
 *    sizeof(T)` before the call (e.g. `tfb_event ev = {.size = sizeof ev};`;
 *    the library keeps it). A size of 0 gives TFB_EINVAL; fields past the
 *    caller's size are neither written nor read (read as unset/zero). An
 *    array of them is walked with its first element's size: in an array
 *    the library reads (tfb_hparam, tfb_tensor) every element's size must
 *    equal the first's (else TFB_EINVAL); in an array it fills
 *    (tfb_bucket) only the first element's size is read, and each element
 *    it fills gets that size.
 *
 * Thread-safety is stated per function. "Thread-safe on one writer" means
 * any number of threads may call it concurrently on the same tfb_writer.
 * After fork() see "Hardening" below.
 */
#ifndef TFBOARD_H
#define TFBOARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TFB_BUILDING_LIBRARY) && defined(__GNUC__)
#define TFB_API __attribute__((visibility("default")))
#else
#define TFB_API
#endif

#define TFB_VERSION_MAJOR 0
#define TFB_VERSION_MINOR 3
#define TFB_VERSION_PATCH 0
#define TFB_VERSION_STRING "0.3.0"
/* major * 1000000 + minor * 1000 + patch, as tfb_version_number() says. */
#define TFB_VERSION_NUMBER                                                    \
    (TFB_VERSION_MAJOR * 1000000 + TFB_VERSION_MINOR * 1000 +                 \
     TFB_VERSION_PATCH)

/* ------------------------------------------------------------------------
 * Errors. One table: the enum and tfb_strerror() are generated from it.
 * ---------------------------------------------------------------------- */
#define TFB_ERRNO_MAP(XX)                                                     \
    XX(EINVAL, -1, "invalid argument")                                        \
    XX(ENOMEM, -2, "out of memory")                                           \
    XX(EIO, -3, "input/output error")                                         \
    XX(ENOSPC, -4, "no space left on device")                                 \
    XX(ENOENT, -5, "no such file or directory")                               \
    XX(EACCES, -6, "permission denied")                                       \
    XX(EEXIST, -7, "file exists")                                             \
    XX(ECLOSED, -8, "writer is closed or failed")                             \
    XX(EDROPPED, -9, "queue full: record dropped")                            \
    XX(ECORRUPT, -10, "corrupt data")                                         \
    XX(ENOTSUP, -11, "not supported in this build")                           \
    XX(ENOCUPTI, -12, "CUPTI library could not be loaded")                    \
    XX(ENOGPU, -13, "no GPU or CUDA driver available")                        \
    XX(EBUSY, -14, "CUPTI is held by another profiler")                       \
    XX(ECUPTIVERSION, -15, "CUPTI version too old for this library")          \
    XX(ETOOBIG, -16, "value too large")                                       \
    XX(ESTATE, -17, "call out of order")                                      \
    XX(ETRACE, -18, "trace store error")                                      \
    XX(EFORKED, -19,                                                          \
       "writer was inherited across fork(); open a new one in the child")    \
    XX(ENONVML, -20, "NVML library could not be loaded")                      \
    XX(ENOTFILE, -21, "not a regular file")                                   \
    XX(EMFILE, -22, "too many open files")                                    \
    XX(ETIMEDOUT, -23, "time limit exceeded")

typedef enum {
#define TFB_ERR_ENUM_(name, code, msg) TFB_##name = (code),
    TFB_ERRNO_MAP(TFB_ERR_ENUM_)
#undef TFB_ERR_ENUM_
    TFB_ERRNO_MIN_ = -23
} tfb_errno;

/* A static string naming `code` (0 gives "success", unknown codes
 * "unknown error"). Thread-safe; the string is never freed. */
TFB_API const char *tfb_strerror(int code);

/* The library's version string, e.g. "0.3.0". Thread-safe. */
TFB_API const char *tfb_version(void);

/* The loaded library's TFB_VERSION_NUMBER. A program checks that the
 * library it loaded is at least as new as the header it was built with:
 *   if (tfb_version_number() < TFB_VERSION_NUMBER) ...
 * Thread-safe. */
TFB_API int tfb_version_number(void);

/* ------------------------------------------------------------------------
 * Tag names that the library writes and the server reads (any writer may
 * use them; the dashboards recognise runs by them).
 * ---------------------------------------------------------------------- */
/* grad_norm/<layer> per layer and grad_norm/global (tfb_grad_norms). */
#define TFB_TAG_GRAD_NORM_PREFIX "grad_norm/"
#define TFB_TAG_GRAD_NORM_GLOBAL "grad_norm/global"
/* Per step: the whole step and the time it waited for input, in ms
 * (tfb_step_begin .. tfb_step_end). */
#define TFB_TAG_STEP_MS "pipeline/step_ms"
#define TFB_TAG_INPUT_MS "pipeline/input_ms"
/* The id of the batch a step trained on, as text (tfb_step_batch). */
#define TFB_TAG_BATCH_ID "batch/id"
/* Per-device GPU scalars are gpu/<device>/<metric>. */
#define TFB_TAG_GPU_PREFIX "gpu/"
#define TFB_TAG_GPU_UTILIZATION "utilization" /* traced kernel busy share */
/* More in their sections: TFB_TAG_COMM_MS (distributed jobs) and the NVML
 * metrics TFB_TAG_GPU_SM_UTIL ... (always-on GPU metrics). */

/* ========================================================================
 * Writer
 * ====================================================================== */

typedef struct tfb_writer tfb_writer;

/* Called on the logging thread the first time a tag holds a non-finite
 * value (see tfb_writer_opts.on_nonfinite). counts: NaN, +Inf, -Inf found in
 * that call. Must not call back into the same writer's close. */
typedef void (*tfb_nonfinite_fn)(void *user, const char *tag, int64_t step,
                                 uint64_t nan, uint64_t pos_inf,
                                 uint64_t neg_inf);

typedef struct tfb_writer_opts {
    size_t size; /* sizeof(tfb_writer_opts), set by tfb_writer_opts_init */
    /* Bytes of encoded records the queue holds before the caller waits (or
     * drops). 0 = default, 8 MiB. */
    size_t queue_bytes;
    /* 0 (default): a caller waits while the queue is full; nothing is lost.
     * 1: the record is dropped, counted, and TFB_EDROPPED returned. */
    int drop_when_full;
    /* Background flush period in ms; 0 = default 2000. The file is written
     * at least this often even when the queue is not full. */
    unsigned flush_interval_ms;
    /* Appended to the event file name after the standard parts, e.g. ".v2".
     * NULL = none. */
    const char *filename_suffix;
    /* See tfb_nonfinite_fn. NULL = no callback. */
    tfb_nonfinite_fn on_nonfinite;
    void *on_nonfinite_user;

    /* Distributed jobs: which rank of which job this writer is. All are
     * resolved at open (tfb_writer_opts_init leaves them "unset"); see the
     * "Distributed jobs" section below for the environment variables.
     * world_size > 0: rank (0 <= rank < world_size, else TFB_EINVAL),
     * world_size and local_rank (-1 = unknown) are taken from here;
     * world_size <= 0 (the default; also a zeroed struct): all three come
     * from the launcher's environment. */
    int rank;          /* default -1 */
    int world_size;    /* default 0 = from the environment */
    int local_rank;    /* default -1 */
    /* Job name; NULL or "" = from the environment. Copied at open. */
    const char *job;
    /* Host name for the rank record; NULL = gethostname(). Copied. */
    const char *host;

    /* Object storage: run_dir "s3://bucket/prefix/run" (or gs://...).
     * Object stores cannot append, so the event file is closed every
     * segment_seconds or segment_bytes, whichever comes first (the queue
     * is then flushed at least every segment_seconds), and each
     * closed segment is uploaded by a thread of the writer's own as one
     * object, events.out.tfevents.<time>.<host>.<pid>.<n>.<seq 6 digits>,
     * names that sort in write order (TensorBoard's and tfboard's reader
     * order). Segments wait in a local spool, a new directory
     * tfboard-spool-XXXXXX under spool_dir (NULL: $TMPDIR, else /tmp),
     * until uploaded; failed uploads are retried (backoff) without
     * holding back the training thread. When the spool holds more than
     * spool_bytes, records are dropped and counted (records_dropped) and
     * TFB_EDROPPED becomes the writer's sticky error, returned by
     * tfb_writer_close and shown in tfb_writer_stats. tfb_writer_close
     * uploads the last segment and any other file of the run (GPU trace
     * stores), waiting up to close_timeout_ms (not at all once the store
     * refuses with 403 or 404: no bucket, no permission); what could not
     * be sent stays in the spool (named on stderr) and close returns
     * TFB_EIO.
     * Segments of more than 8 MiB go as multipart uploads. Credentials,
     * region and endpoint come from the AWS environment (README.md).
     * Ignored for local run_dirs. 0 / NULL = the defaults. */
    unsigned segment_seconds; /* default 30 */
    size_t segment_bytes;     /* default 64 MiB */
    size_t spool_bytes;       /* default 1 GiB */
    const char *spool_dir;    /* copied at open */
    unsigned close_timeout_ms; /* default 60000 */

    /* Work per step, when it is the same every step (see "Work per step,
     * throughput and MFU" below; tfb_step_work overrides them for one
     * step). 0 = not given. A negative or non-finite value gives
     * TFB_EINVAL at open. */
    double flops_per_step;   /* floating-point operations of one step */
    double samples_per_step; /* samples (sequences, images) of one step */
    double tokens_per_step;  /* tokens of one step */
    /* The dtype the matrix math runs in: "bf16", "fp16", "tf32", "fp8"
     * (and PyTorch's spellings: "torch.bfloat16", "float16", "half",
     * "float8_e4m3fn"...); NULL or "" = unknown. It picks the column of the
     * peak table; any other name gives TFB_EINVAL at open. Read at open,
     * not kept. */
    const char *dtype;
    /* The device's dense peak for that dtype in TFLOP/s, when the table
     * does not know it or is to be overridden; 0 = from the table. */
    double peak_tflops;
    /* The device's name as NVML reports it ("NVIDIA H100 80GB HBM3"), for
     * the peak table when no NVML sampler runs on this writer (the
     * sampler's first device wins when one does); NULL = none. Copied at
     * open (at most 95 bytes kept). */
    const char *device;
} tfb_writer_opts;

/* Fills `opts` with the defaults and its size. Thread-safe. */
TFB_API void tfb_writer_opts_init(tfb_writer_opts *opts);

/* Creates run_dir (and its parents) if needed and a new event file in it,
 * named events.out.tfevents.<unix s>.<host>.<pid>.<seq>, created with O_EXCL
 * (two writers never collide), and starts the background writer thread.
 * The first record is Event{wall_time, file_version="brain.Event:2"}.
 * opts may be NULL (defaults); it is copied, the caller keeps ownership;
 * opts->size of 0 (not initialised) gives TFB_EINVAL.
 * On success *out owns the writer; release it with tfb_writer_close().
 * Thread-safe. */
TFB_API int tfb_writer_open(tfb_writer **out, const char *run_dir,
                            const tfb_writer_opts *opts);

/* Writes everything queued, closes the file, joins the thread and frees w.
 * Returns the writer's sticky error if one happened (the data queued before
 * it may be lost), else 0 (TFB_EFORKED in a child of fork(), see
 * "Hardening" below). NULL-safe. Not to be called concurrently with any
 * other call on w. Closing the same pointer twice, or any call on w after close, is
 * undefined (w is freed): use tfb_writer_closep to make that impossible. */
TFB_API int tfb_writer_close(tfb_writer *w);

/* tfb_writer_close, with an exit reason. Both write an end-of-run record
 * last (a summary value of plugin "tfboard_run_end", tag
 * "tfboard/run_end", holding the reason; other readers skip it), which is
 * how `tfboard` tells a run that finished from one that crashed or
 * stalled. reason: UTF-8 text such as "completed" or "early stop: no
 * improvement" (NULL = none; cut at 256 bytes), copied. A child of fork()
 * writes no record (see tfb_writer_close). */
TFB_API int tfb_writer_close_reason(tfb_writer *w, const char *reason);

/* Returns when everything logged before the call is in the file (write()
 * done; fsync is not implied). Returns the sticky error if one is set.
 * Thread-safe on one writer. */
TFB_API int tfb_flush(tfb_writer *w);

/* Logs one scalar as Summary.Value.simple_value (plugin "scalars" metadata
 * on a tag's first value). The value is stored as float32, as TensorBoard
 * does. The calling thread encodes and enqueues only; no disk I/O.
 * Non-finite values are logged as they are and reported to on_nonfinite.
 * Thread-safe on one writer. tag is copied. */
TFB_API int tfb_scalar(tfb_writer *w, const char *tag, double value,
                       int64_t step);

/* As tfb_scalar with an explicit wall time (seconds since the Unix epoch). */
TFB_API int tfb_scalar_at(tfb_writer *w, const char *tag, double value,
                          int64_t step, double wall_time);

/* Logs a histogram of n values as HistogramProto with TensorBoard's default
 * exponential bucket edges (±1e-12 · 1.1^k, and 0). NaN and ±Inf values are
 * counted apart (not put in a bucket, not in min/max/sum) and reported to
 * on_nonfinite; they also produce a numerics record (see
 * tfb_check_numerics). values is read during the call only.
 * Thread-safe on one writer. */
TFB_API int tfb_histogram(tfb_writer *w, const char *tag, const float *values,
                          size_t n, int64_t step);
TFB_API int tfb_histogram_f64(tfb_writer *w, const char *tag,
                              const double *values, size_t n, int64_t step);
/* The same with an explicit wall time (seconds since the Unix epoch), as
 * PyTorch's add_histogram(walltime=). */
TFB_API int tfb_histogram_at(tfb_writer *w, const char *tag,
                             const float *values, size_t n, int64_t step,
                             double wall_time);
TFB_API int tfb_histogram_f64_at(tfb_writer *w, const char *tag,
                                 const double *values, size_t n, int64_t step,
                                 double wall_time);

/* Logs UTF-8 text as a string tensor with plugin "text".
 * Thread-safe on one writer. */
TFB_API int tfb_text(tfb_writer *w, const char *tag, const char *utf8,
                     int64_t step);
/* As tfb_text with an explicit wall time (seconds since the Unix epoch). */
TFB_API int tfb_text_at(tfb_writer *w, const char *tag, const char *utf8,
                        int64_t step, double wall_time);

/* Records which batch the current step trains on: id (UTF-8, e.g.
 * "shard3:81920"; copied) as text under TFB_TAG_BATCH_ID. `tfboard` lists
 * the ids of the steps around each loss spike, and `tfboard report`
 * prints them as a skip list.
 *
 * The current step is the writer's:
 *  - between tfb_step_begin(w, s) and tfb_step_end(w): s, so the natural
 *    place is right after the batch is fetched:
 *      tfb_step_begin(w, s); tfb_input_begin(w); b = next_batch();
 *      tfb_input_end(w); tfb_step_batch(w, b.id); train(b); ...
 *  - otherwise: the highest step of any value logged through w so far
 *    (0 before the first), so call it after the step's first value
 *    (tfb_scalar(w, "loss", loss, s); tfb_step_batch(w, id);).
 * For any other order, name the step: tfb_step_batch_at.
 * Thread-safe on one writer (the pipeline's step is read as the pipeline
 * calls are: from the training thread). */
TFB_API int tfb_step_batch(tfb_writer *w, const char *id);
/* As tfb_step_batch, at an explicit step. */
TFB_API int tfb_step_batch_at(tfb_writer *w, int64_t step, const char *id);

typedef struct tfb_writer_stats {
    size_t size;              /* set by tfb_writer_stats_init */
    uint64_t records_logged;  /* records accepted into the queue */
    uint64_t records_dropped; /* dropped (drop_when_full) */
    uint64_t bytes_written;   /* bytes in the file so far */
    int sticky_error;         /* 0 or the first disk error */
} tfb_writer_stats;

/* Zeroes *out and sets its size. */
TFB_API void tfb_writer_stats_init(tfb_writer_stats *out);

/* Copies the writer's counters into *out, which tfb_writer_stats_init
 * prepared (out->size 0 gives TFB_EINVAL). Thread-safe on one writer. */
TFB_API int tfb_writer_get_stats(tfb_writer *w, tfb_writer_stats *out);

/* The event file's path; owned by w, valid until close. Thread-safe. For a
 * run_dir in a bucket: the first segment's file in the local spool (gone
 * once uploaded). */
TFB_API const char *tfb_writer_path(const tfb_writer *w);

/* The run directory given to open; owned by w, valid until close. */
TFB_API const char *tfb_writer_run_dir(const tfb_writer *w);

/* ========================================================================
 * Audio
 *
 * A clip as 16-bit PCM WAV in TensorFlow 1's Summary.Audio (its sample
 * rate, channels, frames and "audio/wav"), the value PyTorch's add_audio
 * writes; TensorBoard's and tfboard's Audio tab play it.
 *
 *   float tone[16000];                 // 1 s at 16 kHz, in [-1, 1]
 *   tfb_audio(w, "sound/tone", tone, 16000, 1, 16000.0, step);
 *
 * The samples are converted as PyTorch does (clipped to [-1, 1], times
 * 32767, truncated) into the record on the caller's thread, which then
 * joins the writer's queue as any record: no I/O and no encoder thread;
 * the work is one pass over at most TFB_AUDIO_MAX_BYTES of PCM.
 * ====================================================================== */

/* PCM bytes of one clip, at most (64 MiB: 35 minutes of 16 kHz mono, 6
 * of 44.1 kHz stereo); the record is built in memory and a browser
 * fetches the clip whole. */
#define TFB_AUDIO_MAX_BYTES ((size_t)64 << 20)
/* Channels of one clip, at most (7.1 sound, the most a browser plays). */
#define TFB_AUDIO_MAX_CHANNELS 8
/* The highest sample rate (Hz): studio converters' 384 kHz. */
#define TFB_AUDIO_MAX_RATE 384000.0

/* Logs frames x channels float samples (interleaved by frame; NaN is
 * written as 0) at sample_rate frames per second, a whole number in
 * [1, TFB_AUDIO_MAX_RATE]. samples is read during the call only; tag is
 * copied. Returns 0, TFB_EINVAL (NULL writer, tag or samples with frames
 * > 0, empty tag, channels outside 1..TFB_AUDIO_MAX_CHANNELS, a rate not
 * a whole number in range), TFB_ETOOBIG (more than TFB_AUDIO_MAX_BYTES of
 * PCM), TFB_ENOMEM, TFB_EFORKED, or what the writer's queue returns
 * (TFB_EDROPPED with drop_when_full, the sticky error). Thread-safe on
 * one writer. */
TFB_API int tfb_audio(tfb_writer *w, const char *tag, const float *samples,
                      size_t frames, int channels, double sample_rate,
                      int64_t step);
/* As tfb_audio with an explicit wall time (seconds since the Unix epoch). */
TFB_API int tfb_audio_at(tfb_writer *w, const char *tag, const float *samples,
                         size_t frames, int channels, double sample_rate,
                         int64_t step, double wall_time);

/* ========================================================================
 * Images
 *
 * Images in TensorFlow 2's format, which TensorBoard and tfboard show in
 * their Images tab: a Summary value whose tensor is a DT_STRING vector
 * [width, height, encoded image] (width and height as decimal strings)
 * with plugin name "images".
 *
 *   uint8_t px[64 * 64 * 3];           // 8-bit, row-major HWC
 *   ... fill px ...
 *   tfb_image(w, "samples/gen", px, 64, 64, 3, step);
 *
 * tfb_image copies the pixels once and returns; the PNG is encoded (with
 * libpng) by a background thread of the writer, started at the first
 * image, and its record then joins the writer's queue. tfb_flush and
 * tfb_writer_close wait for the images logged before them. So an image's
 * record may follow records logged after it in the file (readers order
 * by step, not by place in the file).
 *
 * Memory: the buffer a copy went into is kept once its image is encoded,
 * and reused by a later call of a similar size, so bursts after the first
 * copy into warm memory instead of fresh pages. The kept buffers and the
 * images waiting to be encoded hold at most TFB_IMAGE_QUEUE_BYTES together
 * (the kept ones are freed first); all are freed by tfb_writer_close.
 * ====================================================================== */

/* The most pixels one image may have (height * width), and the longest
 * side (PNG allows more; browsers and TensorBoard do not cope). */
#define TFB_IMAGE_MAX_PIXELS (1u << 26)
#define TFB_IMAGE_MAX_SIDE 65535
/* Pixel bytes waiting to be encoded, at most (one image larger than this
 * is still taken when nothing waits). */
#define TFB_IMAGE_QUEUE_BYTES (256u << 20)

/* Logs one 8-bit image of height x width pixels of `channels` channels
 * (1 gray, 3 RGB, 4 RGBA), row-major HWC, as a PNG. pixels is read during
 * the call only (one copy); tag is copied. Returns 0, TFB_EINVAL (NULL
 * argument, empty tag, channels not 1/3/4, a side <= 0), TFB_ETOOBIG (past
 * TFB_IMAGE_MAX_PIXELS or TFB_IMAGE_MAX_SIDE), TFB_EDROPPED (encoding is
 * TFB_IMAGE_QUEUE_BYTES behind: the image is not logged, never waited
 * for), TFB_ENOMEM, TFB_EFORKED, or the writer's sticky error. An image
 * that fails to encode later (out of memory) is counted in the writer's
 * records_dropped. Thread-safe on one writer. */
TFB_API int tfb_image(tfb_writer *w, const char *tag, const uint8_t *pixels,
                      int height, int width, int channels, int64_t step);
/* As tfb_image with an explicit wall time (seconds since the Unix epoch)
 * for the image's event instead of the time of the call. */
TFB_API int tfb_image_at(tfb_writer *w, const char *tag,
                         const uint8_t *pixels, int height, int width,
                         int channels, int64_t step, double wall_time);

/* Logs an image the caller has already encoded (PNG, JPEG, GIF or WebP;
 * its width and height are read from its header). bytes is copied into
 * the writer's queue during the call. TFB_EINVAL for other bytes or a
 * header that cannot be read, TFB_ETOOBIG past 1 GiB or past the limits
 * above. Thread-safe on one writer. */
TFB_API int tfb_image_encoded(tfb_writer *w, const char *tag,
                              const void *bytes, size_t len, int64_t step);
/* As tfb_image_encoded with an explicit wall time. */
TFB_API int tfb_image_encoded_at(tfb_writer *w, const char *tag,
                                 const void *bytes, size_t len, int64_t step,
                                 double wall_time);

/* ========================================================================
 * Embeddings, for TensorBoard's projector
 *
 * The files PyTorch's add_embedding writes, in the writer's run
 * directory (TensorBoard's projector and tfboard's read them):
 *
 *   <run_dir>/<step, 5 digits>/<tag, '%' '/' '\' as %25 %2f %5c>/
 *       tensors.tsv    rows lines of cols values ("%.9g": every float
 *                      reads back exactly; NaN as "nan")
 *       metadata.tsv   one label a line, or a header line and columns
 *       sprite.png     the images tiled ceil(sqrt(rows)) a row into a
 *                      square canvas, RGB
 *   <run_dir>/projector_config.pbtxt   the embedding appended (an entry
 *                      for the same tag and step is not repeated)
 *
 *   const char *labels[] = {"cat", "dog", ...};     // one a point
 *   tfb_embedding_opts o;
 *   tfb_embedding_opts_init(&o);
 *   o.labels = labels;
 *   o.label_columns = 1;
 *   tfb_embedding(w, "features", mat, rows, cols, step, &o);
 *
 * These are files, not events: written at once on the calling thread
 * (each to a temporary name, then renamed, so a reader never sees half
 * of one), O(rows x cols). Not for a writer whose run_dir is a bucket
 * (TFB_ENOTSUP).
 * ====================================================================== */

/* The most values (rows x cols) of one embedding: tfboard's projector
 * keeps at most 256 Mi values (1 GiB of float32; server/plugins/projector/
 * API.md), past what a browser holds. */
#define TFB_EMBEDDING_MAX_VALUES ((uint64_t)1 << 28)
/* The longest side of the sprite image: TensorBoard's projector takes
 * sprites up to 8192 x 8192 pixels (one WebGL texture). */
#define TFB_EMBEDDING_SPRITE_MAX_SIDE 8192

typedef struct tfb_embedding_opts {
    size_t size; /* sizeof(tfb_embedding_opts), set by _init */
    /* Labels: rows x label_columns strings, row-major, written to
     * metadata.tsv; NULL: no metadata. No label may hold a tab or line
     * break (it would shift the rows after it). */
    const char *const *labels;
    /* 1: one label a line, no header (header must be NULL: TensorBoard
     * would read a one-column header as a label); 2 or more: header
     * names them (required), written first, as metadata_header. */
    size_t label_columns;
    const char *const *header;
    /* Images: rows images of image_height x image_width x image_channels
     * (1 or 3) 8-bit samples, row-major HWC, one after another; NULL: no
     * sprite. */
    const uint8_t *images;
    int image_height, image_width, image_channels;
} tfb_embedding_opts;

TFB_API void tfb_embedding_opts_init(tfb_embedding_opts *opts);

/* Writes the embedding mat (rows x cols float32, row-major) of tag at
 * step, with opts' labels and images (opts NULL: neither). Everything is
 * read during the call only. Returns 0, TFB_EINVAL (NULL w, mat or tag,
 * empty tag, a tag "." or "..", rows or cols 0, step < 0, opts->size 0, labels without
 * label_columns, a header missing or given for one column, a NULL label
 * or one with a tab or line break, images with a side <= 0 or channels
 * not 1 or 3), TFB_ETOOBIG (past TFB_EMBEDDING_MAX_VALUES, or a sprite
 * side past TFB_EMBEDDING_SPRITE_MAX_SIDE), TFB_ENOTSUP (run_dir in a
 * bucket), TFB_EIO (a file could not be written: the ones already
 * written stay), TFB_ENOMEM, TFB_EFORKED. Nothing is written when the
 * arguments are refused. Thread-safe on one writer and across writers
 * (projector_config.pbtxt is updated under a process-wide lock). */
TFB_API int tfb_embedding(tfb_writer *w, const char *tag, const float *mat,
                          size_t rows, size_t cols, int64_t step,
                          const tfb_embedding_opts *opts);

/* ========================================================================
 * PR curves
 *
 * TensorBoard's pr_curves plugin format, as PyTorch's add_pr_curve writes
 * it: a DT_FLOAT tensor [6, num_thresholds] whose rows are TP, FP, TN, FN,
 * precision and recall at thresholds i / (num_thresholds - 1), with plugin
 * "pr_curves" and PrCurvePluginData{num_thresholds} as content. Counts as
 * TensorBoard computes them: prediction p falls in bucket
 * floor(p * (num_thresholds - 1)) (outside [0, 1]: counted nowhere); TP at
 * threshold i = positives in buckets >= i; precision = TP / max(1e-7,
 * TP + FP), recall = TP / max(1e-7, TP + FN).
 * ====================================================================== */

/* The most thresholds (PyTorch's cap). */
#define TFB_PR_MAX_THRESHOLDS 127

/* Logs one PR curve of n (label, prediction) pairs: labels are 0 (negative)
 * or non-zero (positive), predictions in [0, 1]. num_thresholds 2..127
 * (larger is capped at 127, as PyTorch). Arrays are read during the call
 * only; the record is built on the calling thread (O(n)). TFB_EINVAL for a
 * NULL array with n > 0, an empty tag or num_thresholds < 2.
 * Thread-safe on one writer. */
TFB_API int tfb_pr_curve(tfb_writer *w, const char *tag, const float *labels,
                         const float *predictions, size_t n,
                         int num_thresholds, int64_t step);
/* The same for double predictions (bucketed in double, as NumPy does for
 * float64 arrays). */
TFB_API int tfb_pr_curve_f64(tfb_writer *w, const char *tag,
                             const double *labels, const double *predictions,
                             size_t n, int num_thresholds, int64_t step);
/* Weighted curves with an explicit wall time (seconds since the Unix
 * epoch), as PyTorch's add_pr_curve(weights=, walltime=): pair i counts
 * weights[i] instead of 1 in TP (positive label) or FP (negative label),
 * so the counts are sums of weights. weights may be NULL (every pair
 * counts 1); otherwise it has n values, read during the call only. */
TFB_API int tfb_pr_curve_at(tfb_writer *w, const char *tag,
                            const float *labels, const float *predictions,
                            const double *weights, size_t n,
                            int num_thresholds, int64_t step,
                            double wall_time);
TFB_API int tfb_pr_curve_f64_at(tfb_writer *w, const char *tag,
                                const double *labels,
                                const double *predictions,
                                const double *weights, size_t n,
                                int num_thresholds, int64_t step,
                                double wall_time);

/* Logs a custom scalars layout (TensorBoard's custom_scalars plugin, as
 * PyTorch's add_custom_scalars): layout_pb is a serialized
 * tensorboard.Layout message (categories of multiline and margin charts
 * naming scalar tags), copied into a DT_STRING scalar tensor under the tag
 * "custom_scalars__config__" at step 0. tfboard opens it as multi-tag
 * charts on the Scalars page. TFB_EINVAL for NULL or empty bytes.
 * Thread-safe on one writer. */
TFB_API int tfb_custom_scalars_layout(tfb_writer *w, const void *layout_pb,
                                      size_t len);

/* ========================================================================
 * Graphs
 *
 * The model graph as TensorBoard's graphs plugin reads it: an Event whose
 * graph_def is a serialized tensorflow.GraphDef (what TensorFlow's
 * FileWriter.add_graph and PyTorch's add_graph write), and a
 * tagged_run_metadata (a serialized tensorflow.RunMetadata: step stats,
 * the per-node compute time and memory the Graphs tab colours by).
 * ======================================================================== */

/* The most bytes one graph or run metadata may have: TensorBoard's
 * readers (protobuf) refuse a message over 2 GiB, and tfboard serves a
 * graph of up to 256 MiB. */
#define TFB_GRAPH_DEF_MAX ((size_t)256 << 20)

/* Logs graph_pb, a serialized GraphDef of len bytes, as the run's graph
 * (Event.graph_def, step 0, the call's wall time). The bytes are copied
 * during the call and are not parsed (tfboard checks a graph when it
 * serves it). TFB_EINVAL for NULL or empty bytes, TFB_ETOOBIG past
 * TFB_GRAPH_DEF_MAX. A later graph replaces an earlier one for the
 * readers. Thread-safe on one writer. */
TFB_API int tfb_graph_def(tfb_writer *w, const void *graph_pb, size_t len);

/* Logs run_metadata_pb, a serialized RunMetadata of len bytes, under tag
 * (Event.tagged_run_metadata, at step): PyTorch's add_graph writes one
 * tagged "step1" beside its graph. TFB_EINVAL for a NULL or empty tag,
 * NULL bytes with len > 0; TFB_ETOOBIG past TFB_GRAPH_DEF_MAX.
 * Thread-safe on one writer. */
TFB_API int tfb_run_metadata(tfb_writer *w, const char *tag,
                             const void *run_metadata_pb, size_t len,
                             int64_t step);

/* ========================================================================
 * Hyperparameters
 *
 * The run's hyperparameters in the format of TensorBoard's hparams plugin,
 * as PyTorch's SummaryWriter.add_hparams writes them, so TensorBoard (and
 * tfboard) can compare runs by them:
 *
 *   tfb_hparam hp[] = {
 *       {.name = "lr", .type = TFB_HPARAM_NUMBER, .number = 1e-3},
 *       {.name = "optimizer", .type = TFB_HPARAM_STRING, .str = "adam"},
 *   };
 *   const char *metrics[] = {"hparam/final_loss"};
 *   tfb_hparams_with_metrics(w, hp, 2, metrics, 1);   // at the start
 *   ... train, tfb_scalar(w, "hparam/final_loss", loss, step) ...
 *   tfb_hparams_end(w, TFB_HPARAMS_SUCCESS);          // at the end
 *
 * Records: summary values _hparams_/experiment (the names and types of the
 * hyperparameters and the metric tags), _hparams_/session_start_info (the
 * values) and _hparams_/session_end_info (the status), each an empty
 * DT_FLOAT tensor with plugin "hparams" and an HParamsPluginData as
 * content. Log them once per writer (one writer = one session); the
 * metrics are ordinary scalars under the named tags.
 * ====================================================================== */

/* The values are those of the proto's DataType (1 string, 2 bool,
 * 3 float64), so they go to the file unchanged. */
typedef enum {
    TFB_HPARAM_STRING = 1,
    TFB_HPARAM_BOOL = 2,
    TFB_HPARAM_NUMBER = 3 /* a double; integers are numbers too */
} tfb_hparam_type;

/* One hyperparameter. Only the field named by `type` is read, so the
 * struct can be filled with designated initializers:
 *     {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER,
 *      .number = 0.1} */
typedef struct tfb_hparam {
    size_t size;          /* sizeof(tfb_hparam): see the convention above */
    const char *name;     /* non-empty, unique within one call */
    tfb_hparam_type type;
    const char *str;      /* TFB_HPARAM_STRING: UTF-8, non-NULL */
    double number;        /* TFB_HPARAM_NUMBER (NaN/Inf are kept) */
    int boolean;          /* TFB_HPARAM_BOOL: 0 false, else true */
} tfb_hparam;

/* SessionEndInfo.status, the proto's Status values. */
typedef enum {
    TFB_HPARAMS_UNKNOWN = 0,
    TFB_HPARAMS_SUCCESS = 1,
    TFB_HPARAMS_FAILURE = 2,
    TFB_HPARAMS_RUNNING = 3
} tfb_hparams_status;

/* Logs the experiment (hparam infos; metric infos for metric_tags, which
 * may be NULL with n_metrics 0) and the session start (the values and the
 * start time), as two records at step 0. The metric tags name scalars the
 * caller logs itself. kv and the tags are read during the call only.
 * TFB_EINVAL for a NULL or empty name, a NULL string value, an unknown
 * type, a name given twice, or a kv[0].size of 0 or one that differs
 * between elements (nothing is written then).
 * Thread-safe on one writer. */
TFB_API int tfb_hparams_with_metrics(tfb_writer *w, const tfb_hparam *kv,
                                     size_t n,
                                     const char *const *metric_tags,
                                     size_t n_metrics);

/* tfb_hparams_with_metrics without metrics. */
TFB_API int tfb_hparams(tfb_writer *w, const tfb_hparam *kv, size_t n);

/* Logs the session end: status and end time. Call once, after the last
 * metric; TFB_EINVAL for a status outside the enum. Thread-safe on one
 * writer. */
TFB_API int tfb_hparams_end(tfb_writer *w, tfb_hparams_status status);

/* ========================================================================
 * Training health: gradient norms and NaN/Inf checks
 * ====================================================================== */

/* One layer's gradient: {.size = sizeof(tfb_tensor), .name = "dense1",
 * .data = g, .len = n}. */
typedef struct tfb_tensor {
    size_t size;      /* sizeof(tfb_tensor): see the convention above */
    const char *name; /* layer name; logged as grad_norm/<name> */
    const float *data;
    size_t len;
} tfb_tensor;

typedef struct tfb_tensor_f64 {
    size_t size;      /* sizeof(tfb_tensor_f64) */
    const char *name;
    const double *data;
    size_t len;
} tfb_tensor_f64;

typedef struct tfb_nonfinite_counts {
    size_t size;      /* sizeof(tfb_nonfinite_counts), set by the caller */
    uint64_t nan;
    uint64_t pos_inf;
    uint64_t neg_inf;
} tfb_nonfinite_counts;

/* Per-tensor L2 norms (computed without overflow or underflow) and the
 * global norm sqrt(Σ norm_i²); logs grad_norm/<name> for each tensor and
 * grad_norm/global at `step`. w may be NULL to compute without logging.
 * global_norm may be NULL. A tensor holding NaN/Inf gives a NaN/Inf norm,
 * logged as such. grads is walked with grads[0].size (the convention
 * above): TFB_EINVAL for a size of 0 or one that differs between
 * elements. Thread-safe on one writer. */
TFB_API int tfb_grad_norms(tfb_writer *w, const tfb_tensor *grads, size_t n,
                           int64_t step, double *global_norm);
TFB_API int tfb_grad_norms_f64(tfb_writer *w, const tfb_tensor_f64 *grads,
                               size_t n, int64_t step, double *global_norm);

/* The L2 norm of one array, scaled so that no finite input overflows or
 * underflows. Pure function; thread-safe. */
TFB_API double tfb_l2_norm(const float *data, size_t len);
TFB_API double tfb_l2_norm_f64(const double *data, size_t len);

/* Counts NaN, +Inf and -Inf in data into *out (out->size set by the
 * caller; NULL data counts nothing). Returns 0, or TFB_EINVAL for a NULL
 * out or an out->size of 0. Pure function; thread-safe. */
TFB_API int tfb_count_nonfinite(const float *data, size_t len,
                                tfb_nonfinite_counts *out);
TFB_API int tfb_count_nonfinite_f64(const double *data, size_t len,
                                    tfb_nonfinite_counts *out);

/* Counts non-finite values in data and returns their number (>= 0). Only
 * when it is > 0, writes a numerics record under `tag` (plugin
 * "tfboard_numerics": an int64 tensor of shape [3] = {nan, +inf, -inf}) and
 * calls on_nonfinite the first time the tag goes non-finite. A healthy call
 * writes nothing. w may be NULL to count only. Thread-safe on one writer. */
TFB_API int64_t tfb_check_numerics(tfb_writer *w, const char *tag,
                                   const float *data, size_t len, int64_t step);
TFB_API int64_t tfb_check_numerics_f64(tfb_writer *w, const char *tag,
                                       const double *data, size_t len,
                                       int64_t step);

/* Plugin name of the numerics records. */
#define TFB_NUMERICS_PLUGIN "tfboard_numerics"

/* ========================================================================
 * Input-pipeline step timing
 *
 * for (;;) { tfb_step_begin(w, s); tfb_input_begin(w); next_batch();
 *            tfb_input_end(w); train(); tfb_step_end(w); }
 *
 * Each step logs pipeline/step_ms and pipeline/input_ms (the summed input
 * waits inside the step) at the step's own wall time. While GPU tracing is
 * on, the spans also go into the trace store (from at most 100 ms after
 * the trace starts), and when CUDA's NVTX is loaded they are emitted as
 * NVTX ranges (domain "tfboard", ranges "step" and "input", payload = step).
 * The four calls are meant for one training thread per writer; they are
 * cheap (<= 100 ns each: no I/O, no allocation after the first
 * tfb_step_begin, which also starts a helper thread) and return TFB_ESTATE
 * when out of order (the call is then ignored) or TFB_EINVAL for w NULL.
 * So that tfb_step_end stays cheap, the two scalars reach the writer from
 * that helper thread within about 10 ms (at once when it falls behind);
 * tfb_flush and tfb_writer_close wait for them.
 * ====================================================================== */
TFB_API int tfb_step_begin(tfb_writer *w, int64_t step);
TFB_API int tfb_input_begin(tfb_writer *w);
TFB_API int tfb_input_end(tfb_writer *w);
TFB_API int tfb_step_end(tfb_writer *w);

/* ------------------------------------------------------------------------
 * Work per step, throughput and MFU
 *
 * tfb_step_work(w, flops, samples, tokens) tells the writer the work of
 * the step that is open: call it between tfb_step_begin and tfb_step_end
 * (inside an input wait or a comm span too), once per step; a second call
 * in the same step replaces the first. Each value is >= 0 and finite
 * (else TFB_EINVAL, the call ignored); 0 = that work is not counted. A
 * step without the call takes opts.flops_per_step / samples_per_step /
 * tokens_per_step. Outside a step: TFB_ESTATE (ignored). Same rules as
 * the step calls: the training thread, <= 100 ns, no I/O, no allocation.
 *
 * For each step with work, the pipeline's helper thread logs, at the
 * step's own wall time and step (as pipeline/step_ms), with step time t =
 * the tfb_step_begin .. tfb_step_end span:
 *   perf/samples_per_s = samples / t, perf/tokens_per_s = tokens / t,
 *   perf/tflops = flops / t / 1e12 (achieved TFLOP/s), each only when
 *   that work is > 0;
 *   perf/mfu = perf/tflops / peak x 100 (percent, 0..100), only when the
 *   peak is known: opts.peak_tflops, else the peak table's entry (dense
 *   tensor-core TFLOP/s, vendor datasheets) for the first sampled NVML
 *   device's name (tfb_gpu_metrics_start) and opts.dtype. An unknown
 *   device or dtype gives no perf/mfu, never a guess; the server then says
 *   "peak unknown" (or computes MFU from its --peak_tflops).
 * A common estimate of a decoder's training step is flops = 6 x parameters
 * x tokens (forward and backward, attention left out).
 *
 * The work record: plugin TFB_PERF_PLUGIN, tag TFB_PERF_WORK_TAG, step 0,
 * a rank-0 DT_STRING tensor of UTF-8 "key=value\n" lines:
 *   version=1
 *   flops_per_step=<num|varies|0>  samples_per_step=...  tokens_per_step=...
 *     (the value every step had so far; "varies" once two steps differed;
 *     0 = none given)
 *   dtype=<bf16|fp16|tf32|fp8|unknown>
 *   peak_tflops=<num|unknown>  peak_source=<opts|table|unknown>
 *   device=<the first sampled NVML device's name, or empty>
 * It is written at the first step with work and again when a value
 * changes, at most once per TFB_PERF_RECORD_PERIOD_MS (a change inside
 * the period is written when it ends, or at tfb_flush / close): a record
 * costs a few hundred bytes, and a run whose work varies every step would
 * otherwise write one per step. Readers keep the latest and skip keys they
 * do not know.
 *
 * Checkpoints: tfb_checkpoint_begin(w) .. tfb_checkpoint_end(w) around a
 * save, outside any step (else TFB_ESTATE, ignored), log
 * goodput/checkpoint_ms (the span) at the end's wall time, with step =
 * the last step begun (0 before any), so the server counts it as
 * checkpoint time and not as a gap. Same cost rules as the step calls.
 * ---------------------------------------------------------------------- */
#define TFB_PERF_PLUGIN "tfboard_perf"
#define TFB_PERF_WORK_TAG "perf/work"
#define TFB_PERF_RECORD_PERIOD_MS 10000
#define TFB_TAG_PERF_SAMPLES_PER_S "perf/samples_per_s"
#define TFB_TAG_PERF_TOKENS_PER_S "perf/tokens_per_s"
#define TFB_TAG_PERF_TFLOPS "perf/tflops"
#define TFB_TAG_PERF_MFU "perf/mfu"
/* Per step, with NVML metrics running (see "Always-on GPU metrics"). */
#define TFB_TAG_PERF_ENERGY_J "perf/energy_j"
#define TFB_TAG_PERF_J_PER_SAMPLE "perf/j_per_sample"
#define TFB_TAG_PERF_J_PER_TOKEN "perf/j_per_token"
#define TFB_TAG_CHECKPOINT_MS "goodput/checkpoint_ms"

TFB_API int tfb_step_work(tfb_writer *w, double flops, double samples,
                          double tokens);
TFB_API int tfb_checkpoint_begin(tfb_writer *w);
TFB_API int tfb_checkpoint_end(tfb_writer *w);

/* ========================================================================
 * Distributed jobs: many ranks, one view
 *
 * Each process (rank) of a job has its own writer. Which rank it is comes
 * from tfb_writer_opts (rank, world_size, local_rank, job, host), or, when
 * opts.world_size <= 0 (the default), from the launcher's environment at
 * open time, the first family whose rank variable is a whole number >= 0:
 *   1. RANK, WORLD_SIZE, LOCAL_RANK            (torchrun and most launchers)
 *   2. OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK (Open MPI's mpirun)
 *   3. SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (srun)
 * The three values of one family are used together; a world size that
 * does not exceed the rank counts as unknown (0). The job name is
 * opts.job, else the first non-empty of $TFB_JOB, $TORCHELASTIC_RUN_ID,
 * $SLURM_JOB_ID, else TFB_RANK_DEFAULT_JOB. Job and host names are cleaned
 * to [A-Za-z0-9._-] (any other byte becomes '_', at most 128 bytes), so a
 * job name is always one safe path component.
 *
 * When the rank is known (from opts or the environment) the event file's
 * second record, right after file_version, is the rank record: step 0,
 * tag TFB_RANK_TAG, plugin TFB_RANK_PLUGIN (other TensorBoard readers skip
 * unknown plugins), a rank-0 DT_STRING tensor whose one string is UTF-8
 * "key=value" lines, each ended by '\n', in this order:
 *   version=1  job=<job>  rank=<int>  world_size=<int, 0 = unknown>
 *   local_rank=<int, -1 = unknown>  host=<host>
 * Readers must skip keys they do not know (later versions may add some).
 * tfb_summary_next gives it as kind TFB_VALUE_TENSOR with that plugin
 * name; tfb_value_rank_info decodes it. No rank known: no record, as
 * before.
 * ====================================================================== */

#define TFB_RANK_PLUGIN "tfboard_rank"
#define TFB_RANK_TAG "tfboard/rank"
#define TFB_RANK_DEFAULT_JOB "default"
/* The communication time per step (see tfb_comm_begin). */
#define TFB_TAG_COMM_MS "comm/ms"

/* tfb_writer_open keeps meaning "this exact directory". tfb_writer_open_rank
 * opens the writer of one rank under a shared log directory:
 *     <logdir>/<job>/rank-<NNNNN>/   (rank as 5 digits, zero-padded)
 * with rank and job resolved as above; with no rank known (no launcher)
 * it is rank 0 of a job of 1. Everything else as tfb_writer_open (opts may
 * be NULL). TFB_EINVAL for inconsistent opts. Thread-safe. */
TFB_API int tfb_writer_open_rank(tfb_writer **out, const char *logdir,
                                 const tfb_writer_opts *opts);

/* A rank: in a writer (tfb_writer_get_rank) or decoded from a rank record
 * (tfb_value_rank_info). */
typedef struct tfb_rank_info {
    size_t size;         /* sizeof(tfb_rank_info), set by the caller */
    int32_t rank;        /* >= 0 */
    int32_t world_size;  /* > rank, or 0 when unknown */
    int32_t local_rank;  /* -1 when unknown */
    /* Not NUL-terminated in a decoded record (use the lengths); never
     * NULL; may be empty in a foreign record. */
    const char *job;
    size_t job_len;
    const char *host;
    size_t host_len;
} tfb_rank_info;

/* The rank w resolved at open. Strings owned by w (NUL-terminated), valid
 * until close. TFB_ENOENT when w is not a known rank, TFB_EINVAL when
 * out->size is 0. Thread-safe. */
TFB_API int tfb_writer_get_rank(const tfb_writer *w, tfb_rank_info *out);

/* Decodes a rank record read with tfb_summary_next (plugin_name must be
 * TFB_RANK_PLUGIN, else TFB_EINVAL). The views point into the value's
 * buffer (valid as long as the value's own views). TFB_ECORRUPT when the
 * text lacks version or rank, or holds a bad number. Thread-safe. */
struct tfb_value;
TFB_API int tfb_value_rank_info(const struct tfb_value *v, tfb_rank_info *out);

/* Communication spans: time the host side of a collective (all-reduce,
 * barrier, ...) inside a step:
 *     tfb_step_begin(w, s); ... tfb_comm_begin(w, "allreduce");
 *     nccl_all_reduce(...); tfb_comm_end(w); ... tfb_step_end(w);
 * The spans of a step are summed and logged as TFB_TAG_COMM_MS at the
 * step's wall time, next to pipeline/step_ms and pipeline/input_ms; once a
 * writer has seen a span, every later step logs comm/ms (0 when it had
 * none). While GPU tracing runs the spans go into the trace store
 * (TFB_HOST_SPANS kind "comm"); with NVTX they are ranges in domain
 * "tfboard" named `name` (NULL = "comm"; the name is not copied and is
 * used during the call only). Same rules as the step calls: one training
 * thread per writer, <= 100 ns, no I/O; a span must lie inside a step and
 * not inside an input wait, else TFB_ESTATE (the call is ignored);
 * TFB_EINVAL for w NULL. */
TFB_API int tfb_comm_begin(tfb_writer *w, const char *name);
TFB_API int tfb_comm_end(tfb_writer *w);

/* tfb_comm_begin with the collective's message size in bytes (the larger
 * of its input and output buffers, as nccl-tests counts them), ended by
 * tfb_comm_end. Same rules and cost as tfb_comm_begin; name (NULL =
 * "comm") is copied into a table of the writer the first time it is seen
 * (no allocation: TFB_COMM_NAMES_MAX names of up to TFB_COMM_NAME_MAX - 1
 * bytes; longer names are cut, names past the table are counted as
 * "other"; control bytes such as a tab or newline become '_'), so it need
 * not outlive the call.
 * The helper thread keeps, since open, per (name, size bucket): count,
 * bytes, and summed host span time, and writes that cumulative table as
 * the record plugin TFB_COMM_PLUGIN, tag TFB_COMM_COLLECTIVES_TAG, step 0,
 * a rank-0 DT_STRING tensor: the line "version=1", then one line per
 * (name, bucket)
 *     <name>\t<bucket_lo_bytes>\t<count>\t<bytes>\t<ns>\n
 * (bucket_lo = the largest power of two <= bytes, 0 for 0 bytes), at most
 * every TFB_COMM_RECORD_PERIOD_MS when it changed, and at tfb_flush and
 * close. Readers keep the latest (it is cumulative); with the world size
 * of the rank record they give algorithm and bus bandwidth. */
#define TFB_COMM_PLUGIN "tfboard_comm"
#define TFB_COMM_COLLECTIVES_TAG "comm/collectives"
#define TFB_COMM_RECORD_PERIOD_MS 10000
/* 64 names: a job uses a handful of collectives (all_reduce, all_gather,
 * reduce_scatter, broadcast, barrier, send/recv, per process group);
 * 48 bytes holds "nccl:reduce_scatter_tensor_coalesced". */
#define TFB_COMM_NAMES_MAX 64
#define TFB_COMM_NAME_MAX 48
TFB_API int tfb_comm_begin_bytes(tfb_writer *w, const char *name,
                                 uint64_t bytes);

/* ========================================================================
 * GPU tracing (CUPTI, loaded at run time)
 * ====================================================================== */

typedef struct tfb_gpu_opts {
    size_t size; /* sizeof(tfb_gpu_opts), set by tfb_gpu_opts_init */
    /* Path of libcupti; NULL = $TFB_CUPTI_PATH, then libcupti.so.13, then
     * libcupti.so. */
    const char *cupti_path;
    /* Size of one activity buffer; 0 = default 8 MiB. */
    size_t buffer_bytes;
    /* Most buffers in flight; past it records are dropped and counted.
     * 0 = default 32. */
    unsigned max_buffers;
    /* Period of cuptiActivityFlushAll and of trace store commits, in ms;
     * 0 = default 1000. */
    unsigned flush_interval_ms;
    /* Period of the gpu/<device>/utilization scalars, in ms; 0 = default
     * 1000. */
    unsigned utilization_interval_ms;
    /* Record CUDA runtime API calls (launches and copies). 1 = yes. */
    int record_runtime;
} tfb_gpu_opts;

/* Fills opts with defaults. Thread-safe. */
TFB_API void tfb_gpu_opts_init(tfb_gpu_opts *opts);

/* Starts CUPTI activity tracing for the process, writing the trace store
 * <run_dir>/<host>.<pid>.trace.sqlite. Returns TFB_ENOCUPTI, TFB_ENOGPU,
 * TFB_EBUSY, TFB_ECUPTIVERSION or TFB_ENOTSUP (built without CUDA headers) when
 * tracing cannot run; logging goes on either way. One tracing writer per
 * process. opts may be NULL. Not thread-safe against stop on the same w. */
TFB_API int tfb_gpu_trace_start(tfb_writer *w, const tfb_gpu_opts *opts);

/* Flushes CUPTI, writes the remaining records, finalizes CUPTI. Called by
 * tfb_writer_close too. Idempotent. */
TFB_API int tfb_gpu_trace_stop(tfb_writer *w);

typedef struct tfb_gpu_stats {
    size_t size; /* set by tfb_gpu_stats_init */
    uint64_t kernels, memcpys, memsets, syncs, api_calls, markers, overheads;
    uint64_t records_dropped; /* by CUPTI or by our buffer cap */
    uint64_t buffers_completed;
    int sticky_error;
    /* GPU memory (issue 13): CUDA_GPU_MEMORY_USAGE_EVENTS rows (allocations
     * and releases) and CUDA_GPU_MEMORY_POOL_EVENTS rows written. */
    uint64_t memory_events, memory_pool_events;
} tfb_gpu_stats;

/* Zeroes *out and sets its size. */
TFB_API void tfb_gpu_stats_init(tfb_gpu_stats *out);

/* Copies the tracer's counters into *out (prepared by tfb_gpu_stats_init;
 * out->size 0 gives TFB_EINVAL). */
TFB_API int tfb_gpu_trace_get_stats(tfb_writer *w, tfb_gpu_stats *out);

/* Detailed message for the last tracing failure on w (e.g. the dlopen or
 * CUPTI error text). Owned by w; never NULL. */
TFB_API const char *tfb_gpu_trace_error(const tfb_writer *w);

/* ========================================================================
 * Always-on GPU metrics (NVML)
 *
 * A background thread samples NVML (libnvidia-ml.so.1, loaded at run time
 * with dlopen, never linked) every interval_ms and logs, per device, the
 * scalars gpu/<dev>/<metric> through the writer, where <dev> is NVML's
 * device index (nvidia-smi's numbering; it can differ from CUDA's ordinal
 * under CUDA_VISIBLE_DEVICES). Each sample's scalars carry the sample's
 * wall time and, as step, the sample number (0, 1, 2...). The device's name
 * is logged once as text gpu/<dev>/name. The training thread pays nothing:
 * no call, no lock, no I/O. Unlike GPU tracing it needs no CUPTI and can
 * stay on for a whole run (a sample costs about a dozen NVML calls).
 *
 * Values are stored as float32, as every TensorBoard scalar: byte counts
 * keep about 7 significant digits (8 KiB steps near 80 GB).
 *
 * Fork: the sampler thread does not exist in a child process, and a child
 * must not use the parent's sampler: in the child, tfb_gpu_metrics_stop
 * only forgets it (no join, no NVML call: NVML state does not survive
 * fork), tfb_gpu_metrics_get_stats reports zeros, and a new
 * tfb_gpu_metrics_start may start the child's own.
 * ====================================================================== */

/* Tag = TFB_TAG_GPU_PREFIX "<dev>/" metric, e.g. "gpu/0/sm_util". */
#define TFB_TAG_GPU_SM_UTIL "sm_util"               /* % of the period a kernel ran */
#define TFB_TAG_GPU_MEM_UTIL "mem_util"             /* % of the period memory was read or written */
#define TFB_TAG_GPU_MEM_USED "mem_used_bytes"       /* device memory in use (all processes) */
#define TFB_TAG_GPU_MEM_TOTAL "mem_total_bytes"     /* device memory size */
#define TFB_TAG_GPU_POWER "power_w"                 /* board power draw, W */
#define TFB_TAG_GPU_TEMP "temp_c"                   /* GPU die temperature, deg C */
#define TFB_TAG_GPU_SM_CLOCK "sm_clock_mhz"         /* current SM clock, MHz */
#define TFB_TAG_GPU_NAME "name"                     /* text, logged once */
/* Per step, with the pipeline's step calls (see below): joules the device
 * used during the step. */
#define TFB_TAG_GPU_ENERGY "energy_j"
/* Text, logged once: "counter" (NVML's total-energy counter) or
 * "power_x_time" (no counter: mean power x step time). */
#define TFB_TAG_GPU_ENERGY_SOURCE "energy_source"
/* Text, logged once: which physical device this logical one is,
 * "cuda=<ordinal> nvml=<index> uuid=<GPU-...>[ mig=<MIG-...>]". */
#define TFB_TAG_GPU_PHYSICAL "physical"


typedef struct tfb_gpu_metrics_opts {
    size_t size; /* set by tfb_gpu_metrics_opts_init */
    /* Path of the NVML library; NULL = $TFB_NVML_PATH, then
     * libnvidia-ml.so.1. */
    const char *nvml_path;
    /* Sample period in ms; 0 = default 500. */
    unsigned interval_ms;
} tfb_gpu_metrics_opts;

/* Fills opts with defaults. Thread-safe. */
TFB_API void tfb_gpu_metrics_opts_init(tfb_gpu_metrics_opts *opts);

/* Loads NVML, initializes it, finds the devices, logs the first sample
 * before it returns (so even a short run has one) and starts the sampler
 * thread.
 * Devices: only the job's. With CUDA_VISIBLE_DEVICES set, the devices it
 * names, in its order, as CUDA reads it: comma-separated device indices,
 * GPU UUIDs ("GPU-8932f937-..." or a unique prefix of one) and MIG
 * instance UUIDs ("MIG-..."), the list ending at the first entry that
 * names no device (the old "MIG-GPU-<uuid>/<gi>/<ci>" form included);
 * gpu/<n>/ is then CUDA device n. Indices are NVML's (PCI bus order), which
 * are CUDA's with CUDA_DEVICE_ORDER=PCI_BUS_ID, as job launchers set it.
 * A list that names no device gives TFB_ENOGPU (tfb_gpu_metrics_error
 * says so). Unset: every device, gpu/<n>/ = NVML index n. Each device's
 * gpu/<n>/physical text says which physical device it is (parent GPU's
 * NVML index and UUID, and the MIG instance's UUID). On a MIG instance
 * NVML reports memory but not utilization, power or energy: those are
 * left out (counted in read_errors), never the whole GPU's figures.
 * Energy: each pipeline step (tfb_step_begin .. tfb_step_end on the same
 * writer) gets gpu/<n>/energy_j, from the pipeline's helper thread (the
 * training thread makes no NVML call): with NVML's total-energy counter
 * (nvmlDeviceGetTotalEnergyConsumption, Volta and newer; read at most
 * every 20 ms, its unit being 1 mJ) the counter's mean power between its
 * reads around the step x the step time (the step's counter difference
 * when steps run back to back); without it (missing, or NOT_SUPPORTED)
 * the power at the step's end x the step time. gpu/<n>/energy_source
 * says which ("counter" or "power_x_time"). perf/energy_j is the sum over
 * the devices, perf/j_per_sample and perf/j_per_token divide it by the
 * step's work (tfb_step_work) when given. A step logged on the training
 * thread because the helper fell 4096 steps behind gets no energy.
 * Returns TFB_ENONVML when the library cannot be loaded or lacks a
 * function, TFB_ENOGPU when nvmlInit fails or finds no device, TFB_EACCES
 * when NVML denies access, TFB_ESTATE when metrics already run on w,
 * TFB_EINVAL, TFB_ENOMEM. On failure nothing changes (logging goes on, see
 * tfb_gpu_metrics_error). A device call that fails in a sample (e.g. power
 * not supported) only leaves that scalar out and is counted. opts may be
 * NULL (copied). Thread-safe. */
TFB_API int tfb_gpu_metrics_start(tfb_writer *w,
                                  const tfb_gpu_metrics_opts *opts);

/* Stops and joins the sampler, shuts NVML down. Called by
 * tfb_writer_close too. Returns 0 also when metrics were not running.
 * Thread-safe; must not run concurrently with tfb_writer_close on w. */
TFB_API int tfb_gpu_metrics_stop(tfb_writer *w);

typedef struct tfb_gpu_metrics_stats {
    size_t size;           /* set by tfb_gpu_metrics_stats_init */
    uint64_t samples;      /* samples taken (all devices each time) */
    uint64_t devices;      /* devices sampled */
    uint64_t read_errors;  /* NVML device calls that failed */
    uint64_t log_errors;   /* scalars the writer refused (dropped, closed) */
} tfb_gpu_metrics_stats;

/* Zeroes *out and sets its size. */
TFB_API void tfb_gpu_metrics_stats_init(tfb_gpu_metrics_stats *out);

/* Copies the counters of the sampler running on w (zeros when none) into
 * *out, prepared by tfb_gpu_metrics_stats_init. Thread-safe. */
TFB_API int tfb_gpu_metrics_get_stats(tfb_writer *w,
                                      tfb_gpu_metrics_stats *out);

/* Message for the last tfb_gpu_metrics_start failure in this process
 * (dlopen text, NVML's error string), "" when none. A static buffer of the
 * library: read it right after the failing call. Thread-safe. */
TFB_API const char *tfb_gpu_metrics_error(void);

/* ========================================================================
 * Reader
 *
 * Incremental, zero-copy reader of one event file. Views (pointers into the
 * reader's buffer) stay valid until the next tfb_reader_next() or close.
 * One reader is used by one thread at a time.
 * ====================================================================== */

typedef struct tfb_reader tfb_reader;

typedef struct tfb_strview {
    const char *ptr; /* not NUL-terminated */
    size_t len;
} tfb_strview;

typedef enum {
    TFB_EVENT_OTHER = 0,      /* log_message, session_log, unknown */
    TFB_EVENT_FILE_VERSION,   /* file_version set */
    TFB_EVENT_SUMMARY,        /* summary set */
    TFB_EVENT_GRAPH,          /* graph_def or meta_graph_def */
    TFB_EVENT_RUN_METADATA    /* tagged_run_metadata */
} tfb_event_kind;

typedef struct tfb_event {
    size_t size;  /* sizeof(tfb_event), set by the caller; kept */
    double wall_time;
    int64_t step;
    tfb_event_kind kind;
    tfb_strview file_version; /* kind == FILE_VERSION */
    /* The serialized Summary message (kind == SUMMARY): iterate its values
     * with tfb_summary_next(). */
    const uint8_t *summary;
    size_t summary_len;
    uint64_t offset; /* byte offset of the record in the file */
    /* kind == GRAPH or RUN_METADATA: the field's serialized bytes and its
     * Event field number: 4 graph_def (a GraphDef), 9 meta_graph_def (a
     * MetaGraphDef), 8 tagged_run_metadata (a TaggedRunMetadata); NULL /
     * 0 otherwise. Views into the reader's buffer, valid as summary is.
     * Added at the end: a caller built with a smaller tfb_event gets the
     * fields before them only. */
    const uint8_t *blob;
    size_t blob_len;
    int blob_field;
} tfb_event;

typedef enum {
    TFB_VALUE_UNKNOWN = 0, /* a tensor whose meaning needs its tag's plugin */
    TFB_VALUE_SCALAR,      /* simple_value, or rank-0 numeric tensor */
    TFB_VALUE_HISTOGRAM,   /* HistogramProto, or [k,3] tensor */
    TFB_VALUE_TEXT,        /* string tensor, plugin "text" */
    TFB_VALUE_IMAGE,       /* Summary.Image */
    TFB_VALUE_NUMERICS,    /* plugin tfboard_numerics */
    TFB_VALUE_TENSOR,      /* other tensor (e.g. string tensor of another plugin) */
    TFB_VALUE_AUDIO        /* Summary.Audio (TF1; PyTorch's add_audio) */
} tfb_value_kind;

typedef struct tfb_value {
    size_t size;             /* sizeof(tfb_value), set by the caller; kept */
    tfb_strview tag;         /* tag, or node_name when tag is empty */
    tfb_strview plugin_name; /* empty when the value carries no metadata */
    tfb_strview display_name;
    tfb_strview description;
    tfb_value_kind kind;
    /* kind == SCALAR: the value as double. */
    double scalar;
    /* kind == NUMERICS: the counts (numerics.size is set by the library:
     * the struct is part of tfb_value, whose own size governs it). */
    tfb_nonfinite_counts numerics;
    /* kind == IMAGE */
    int32_t image_height, image_width, image_colorspace;
    tfb_strview image_data; /* encoded PNG/JPEG bytes */
    /* Raw sub-messages for the accessors below (NULL when absent). */
    const uint8_t *histo; size_t histo_len;   /* HistogramProto */
    const uint8_t *tensor; size_t tensor_len; /* TensorProto */
    /* SummaryMetadata.plugin_data.content: the plugin's own bytes (e.g.
     * the HParamsPluginData of hparams records); empty when absent. */
    tfb_strview plugin_content;
    /* kind == AUDIO: the Summary.Audio message (sample_rate, num_channels,
     * length_frames, encoded_audio_string, content_type), undecoded. */
    const uint8_t *audio; size_t audio_len;
} tfb_value;

/* Opens path for reading. Nothing is read until tfb_reader_next. Only
 * regular files are read: a FIFO, a device or a directory gives
 * TFB_ENOTFILE (the open never blocks, O_NONBLOCK). */
TFB_API int tfb_reader_open(tfb_reader **out, const char *path);
/* NULL-safe. */
TFB_API void tfb_reader_close(tfb_reader *r);

/* Reads the next event. Returns 1 and fills *ev when an event is
 * available; 0 when the file holds nothing more yet (end of file, or a
 * partial record at the end: call again later, reading resumes at the same
 * offset once the file grows); a negative code on an I/O error.
 * Corrupt records are skipped and counted (see tfb_reader_get_stats): a bad
 * payload CRC skips that one record; a bad length CRC scans forward for the
 * next valid record header. A payload that is not a valid Event is counted
 * as corrupt and skipped. */
TFB_API int tfb_reader_next(tfb_reader *r, tfb_event *ev);

/* Bounds the work of the next calls: once `bytes` more bytes have been
 * consumed (records read, or garbage scanned over), tfb_reader_next
 * returns 0 as at the end of the file, keeping its place, until the next
 * tfb_reader_set_limit. A caller tells the two apart with
 * tfb_reader_get_stats (offset < file_size). 0 = no limit (the default).
 * So one huge or sparse file cannot hold a caller that serves others. */
TFB_API void tfb_reader_set_limit(tfb_reader *r, uint64_t bytes);

/* Closes the reader's file descriptor but keeps its place: the next
 * tfb_reader_next opens the file again (if it was replaced meanwhile,
 * reading restarts from offset 0 as after any replacement). For callers
 * that keep thousands of readers between reads. Returns 0. */
TFB_API int tfb_reader_release_fd(tfb_reader *r);

#define TFB_READER_MAX_CORRUPTIONS 16
typedef struct tfb_reader_stats {
    size_t size;                /* set by tfb_reader_stats_init */
    uint64_t records;           /* good records read */
    uint64_t offset;            /* bytes consumed: where reading resumes */
    uint64_t file_size;         /* size seen at the last read */
    uint64_t corrupt_records;   /* payload CRC or proto errors */
    uint64_t resyncs;           /* length CRC errors (scanned forward) */
    uint64_t bytes_skipped;     /* bytes passed over by resyncs and skips */
    /* Offsets of the first corruptions (n_offsets of them). */
    uint64_t corruption_offsets[TFB_READER_MAX_CORRUPTIONS];
    unsigned n_offsets;
    int truncated_tail;         /* 1 when a partial record waits at the end */
    int replaced;               /* 1 if the file shrank or was replaced and
                                   reading restarted from offset 0 */
    /* --- hardening (issue 10) --- */
    /* Bytes of read buffer the reader holds now. It grows only as bytes
     * arrive (at most about twice what was read past the offset), never to
     * the length a record header claims. */
    uint64_t buffer_bytes;
} tfb_reader_stats;

/* Zeroes *out and sets its size. */
TFB_API void tfb_reader_stats_init(tfb_reader_stats *out);

/* Copies the reader's statistics into *out (prepared by
 * tfb_reader_stats_init; out->size 0 gives TFB_EINVAL). */
TFB_API int tfb_reader_get_stats(const tfb_reader *r, tfb_reader_stats *out);

/* Iterates the values of a Summary message: *pos starts at 0. Returns 1 and
 * fills *v, 0 at the end, TFB_ECORRUPT on a malformed message. The kind is
 * decided from the value's own content and its plugin metadata. */
TFB_API int tfb_summary_next(const uint8_t *summary, size_t len, size_t *pos,
                             tfb_value *v);

/* Re-decides v->kind as if its plugin were `plugin` (writers put metadata on
 * a tag's first value only; callers remember it per tag). */
TFB_API void tfb_value_apply_plugin(tfb_value *v, const char *plugin,
                                    size_t plugin_len);

/* Histogram buckets exactly as TensorBoard 2.21 shows them. From a
 * HistogramProto: first the empty buckets at both ends are dropped (empty
 * buckets between non-empty ones stay), then for the kept buckets
 * a..b: lefts = [min] + limits[a..b-1], rights = limits[a..b-1] + [max],
 * counts = bucket[a..b]. So one non-empty bucket gives [min, max]; all
 * empty (or no buckets) gives 0 buckets; with consistent min/max no bucket
 * runs backwards (left > right). From a [k,3] tensor: its rows as they
 * are. Writes at most cap buckets to out (may be NULL with cap 0 to count)
 * and returns the total number of buckets, or a negative code. out is
 * walked with out[0].size (set it: `out[0].size = sizeof(tfb_bucket)`;
 * TFB_EINVAL when it is 0 and cap > 0); each bucket written keeps that
 * size. min/max/num/sum (the proto's fields, all buckets' for a tensor)
 * may each be NULL. Pure function; thread-safe. */
typedef struct tfb_bucket {
    size_t size; /* sizeof(tfb_bucket): see the convention above */
    double left, right, count;
} tfb_bucket;
TFB_API int64_t tfb_value_histogram(const tfb_value *v, tfb_bucket *out,
                                    size_t cap, double *min, double *max,
                                    double *num, double *sum);

/* The i-th string of a string tensor (the text of a text summary is string
 * 0). Returns 1 and sets *out (a view), 0 when there is no such string. */
TFB_API int tfb_value_string(const tfb_value *v, size_t i, tfb_strview *out);

/* Decodes a rank-0 numeric tensor (float, double, half, int32, int64, bool;
 * tensor_content or typed field) to double. Returns 0 or TFB_EINVAL. */
TFB_API int tfb_value_tensor_scalar(const tfb_value *v, double *out);

/* ========================================================================
 * Hardening (issue 10): fork() and close
 *
 * fork(): a writer belongs to the process that opened it. In a child of
 * fork() (e.g. a PyTorch DataLoader worker) the writer's thread does not
 * exist, so every call on an inherited writer - logging, tfb_flush, stats,
 * pipeline timers, GPU tracing - returns TFB_EFORKED at once, never blocks,
 * never writes to the parent's file and never touches the parent's
 * threads (tfb_writer_path/run_dir return NULL). tfb_writer_close on it in
 * the child frees what it safely can, drops the queued bytes (they are the
 * parent's to write) and returns TFB_EFORKED. The child may open writers
 * of its own and use them normally; the parent's writer is unaffected.
 * Only fork() is detected (pthread_atfork), not a raw clone() system call.
 * ====================================================================== */

/* tfb_writer_close(*pw), then *pw = NULL, so a second tfb_writer_closep
 * (or a later check of the pointer) is harmless. pw NULL or *pw NULL: a
 * no-op returning 0. The pointer is cleared before the close starts.
 * Same thread rules as tfb_writer_close; only the pointer at *pw is
 * cleared, not other copies of it. */
TFB_API int tfb_writer_closep(tfb_writer **pw);

/* ========================================================================
 * Low-level format helpers (exported for tools and tests)
 * ====================================================================== */

/* CRC-32C (Castagnoli) of buf, continuing from crc (start with 0). */
TFB_API uint32_t tfb_crc32c(uint32_t crc, const void *buf, size_t len);
/* TFRecord's masked CRC-32C of buf. */
TFB_API uint32_t tfb_masked_crc32c(const void *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TFBOARD_H */
