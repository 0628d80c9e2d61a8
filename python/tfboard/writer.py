"""tfboard.SummaryWriter: a drop-in for torch.utils.tensorboard's writer,
over libtfboard (ctypes). See README.md, "Python quick start"."""
import contextlib
import ctypes
import math
import os
import socket
import threading
import time
import warnings
from datetime import datetime
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping,
                    Optional, Sequence, Tuple, TypeVar)

from . import _lib
from . import embedding as _embedding
from . import media as _media
from ._lib import TfbError, check, lib

__all__ = ["SummaryWriter", "TfbError"]

_T = TypeVar("_T")
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

# torch.utils.tensorboard.SummaryWriter calls this package does not
# implement: they raise NotImplementedError naming the call rather than
# dropping the data.
_UNSUPPORTED = (
    "add_histogram_raw", "add_image_with_boxes",
    "add_onnx_graph",
    "add_pr_curve_raw",
    "add_custom_scalars_multilinechart",
    "add_custom_scalars_marginchart", "add_mesh",
)


def _env_int(*names):
    for n in names:
        v = os.environ.get(n)
        if v is not None:
            try:
                return int(v)
            except ValueError:
                pass
    return None


def _default_log_dir(comment, rank, world_size):
    # As PyTorch: runs/<Mon DD_HH-MM-SS>_<host><comment>. Ranks of one job
    # start at slightly different times, so each gets its own folder name;
    # the rank suffix keeps them apart and sorted.
    now = datetime.now().strftime("%b%d_%H-%M-%S")
    name = now + "_" + socket.gethostname() + comment
    if world_size is not None and world_size > 1 and rank is not None:
        name += "_rank%d" % rank
    return os.path.join("runs", name)


def _step(global_step: Any) -> int:
    """The step as an int64; a value outside int64 (2**64 + 5, 1e30, inf)
    raises ValueError naming it, as PyTorch does, instead of wrapping."""
    if global_step is None:
        return 0
    try:
        s = int(global_step)
    except OverflowError:
        s = None
    if s is None or not _I64_MIN <= s <= _I64_MAX:
        raise ValueError("global_step %r is outside the int64 range"
                         % (global_step,))
    return s


def _walltime(walltime: Any) -> Optional[float]:
    """walltime= as PyTorch takes it (seconds since the epoch, any real
    number type; None: the time of the call) as a float, or None."""
    if walltime is None:
        return None
    try:
        return float(walltime)
    except (TypeError, ValueError):
        raise TypeError("walltime must be a number of seconds, not %r"
                        % (walltime,)) from None


def _cstr(s: str, what: str) -> bytes:
    """s as UTF-8 for the C API, which takes NUL-terminated strings: an
    embedded NUL would cut the string there without a word, so it is
    refused."""
    if not isinstance(s, str):
        raise TypeError("%s must be a str, not %s" % (what, type(s).__name__))
    if "\0" in s:
        raise ValueError("%s %r holds a NUL character" % (what, s))
    return s.encode()


def _to_numpy(values):
    """values (torch tensor, NumPy array, sequence, number) as a contiguous
    float32 or float64 NumPy array, converted without a Python loop."""
    import numpy as np
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(values, torch.Tensor):
        t = values.detach()
        if t.is_complex():
            raise TypeError("complex tensors have no histogram or numerics")
        if t.dtype == torch.float32 or t.dtype == torch.float64:
            pass
        elif t.is_floating_point():
            # float16/bfloat16: widen (exact); NumPy has no bfloat16.
            t = t.to(torch.float32)
        else:
            t = t.to(torch.float64)
        values = t.cpu().numpy()
    a = np.asarray(values)
    if a.dtype == np.float32:
        return np.ascontiguousarray(a.reshape(-1))
    if a.dtype.kind not in "fiub":
        raise TypeError("add_histogram: values of dtype %s are not numbers"
                        % a.dtype)
    if a.dtype.kind == "f" and a.dtype.itemsize < 4:
        return np.ascontiguousarray(a.reshape(-1), dtype=np.float32)
    return np.ascontiguousarray(a.reshape(-1), dtype=np.float64)


def _hparams_array(hparam_dict: Mapping[str, Any],
                   metric_tags: Sequence[str]) -> Tuple[tuple, list]:
    """The arguments of tfb_hparams_with_metrics after the writer (the
    tfb_hparam array, its length, the metric tags and their count) and
    the bytes they point into (keep them alive until the call is done).
    Raises before anything is written: TypeError/ValueError for a value
    of another type, a name, string or tag with a NUL, an empty name or
    tag, or two hparam names equal after str()."""
    hps, keep = [], []
    seen = {}  # name -> the key it came from
    for k, v in hparam_dict.items():
        if v is None:
            continue  # as PyTorch
        name = _cstr(str(k), "hparam name")
        # What the library refuses (after add_hparams made the run
        # folder), refused here first: an empty name, and two keys with
        # one name (1 and "1": a map holds a name once).
        if not name:
            raise ValueError("an hparam name is empty")
        if name in seen:
            raise ValueError("hparams %r and %r have the same name %r"
                             % (seen[name], k, str(k)))
        seen[name] = k
        keep.append(name)
        if isinstance(v, bool):
            hps.append(_lib.Hparam(name, _lib.HPARAM_BOOL, None, 0.0,
                                   int(v)))
        elif isinstance(v, (int, float)):
            hps.append(_lib.Hparam(name, _lib.HPARAM_NUMBER, None,
                                   float(v), 0))
        elif isinstance(v, str):
            b = _cstr(v, "hparam %s's value" % k)
            keep.append(b)
            hps.append(_lib.Hparam(name, _lib.HPARAM_STRING, b, 0.0, 0))
        elif hasattr(v, "reshape") and hasattr(v, "tolist"):
            # a tensor or array: its first element, as PyTorch
            hps.append(_lib.Hparam(name, _lib.HPARAM_NUMBER, None,
                                   float(v.reshape(-1)[0]), 0))
        else:
            raise ValueError("value should be one of int, float, str, "
                             "bool, or torch.Tensor")
    arr = (_lib.Hparam * max(1, len(hps)))(*hps)
    tags = [_cstr(str(t), "metric tag") for t in metric_tags]
    if any(not t for t in tags):
        raise ValueError("a metric tag is empty")
    tarr = (ctypes.c_char_p * max(1, len(tags)))(*tags)
    keep += [tags, arr, tarr]
    return (arr, len(hps), tarr, len(tags)), keep


class SummaryWriter:
    """Writes TensorBoard event files through libtfboard.

    Same constructor and add_* signatures as
    torch.utils.tensorboard.SummaryWriter (add_scalar, add_scalars,
    add_histogram, add_text, add_hparams, flush, close, context manager).
    max_queue is accepted for compatibility: libtfboard's queue is sized in
    bytes and never blocks the caller on disk I/O. rank and world_size
    default to the launcher's environment (RANK/WORLD_SIZE, Open MPI,
    Slurm); they (and job) are kept as attributes and name the default
    log_dir (<...>_rank<r> when world_size > 1). The run's own distributed
    metadata is left to libtfboard, which reads the same environment in
    tfb_writer_opts_init, so Python and C runs agree.

    Thread-safe: any number of threads may log into one writer, and
    close() may run while other threads log (a logging thread at
    shutdown): close() waits for the calls already in the library, and
    every call that starts after it raises TfbError (writer is closed).
    """

    def __init__(self, log_dir: Optional[str] = None, comment: str = "",
                 purge_step: Optional[int] = None, max_queue: int = 10,
                 flush_secs: float = 120, filename_suffix: str = "", *,
                 rank: Optional[int] = None,
                 world_size: Optional[int] = None,
                 job: Optional[str] = None,
                 dtype: Optional[str] = None,
                 peak_tflops: Optional[float] = None) -> None:
        if purge_step is not None:
            raise NotImplementedError(
                "tfboard.SummaryWriter(purge_step=...) is not supported")
        if rank is None:
            rank = _env_int("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")
        if world_size is None:
            world_size = _env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
                                  "SLURM_NTASKS")
        self.rank, self.world_size, self.job = rank, world_size, job
        if not log_dir:
            log_dir = _default_log_dir(comment, rank, world_size)
        self.log_dir = str(log_dir)
        _cstr(self.log_dir, "log_dir")
        self._flush_ms = max(1, int(float(flush_secs) * 1000))
        self._suffix = filename_suffix or ""
        # Work per step (issue 29): the dtype picks the peak table's
        # column; peak_tflops overrides the table. Checked at open.
        self._dtype = dtype
        self._peak = float(peak_tflops) if peak_tflops else 0.0
        self._w = None
        self._tags: Dict[Any, bytes] = {}
        self._subs: Dict[str, _SubWriter] = {}  # add_scalars' writers
        self._subs_lock = threading.Lock()
        # The handle's guard: a call marks itself in flight (an entry of
        # _inflight: list.append/pop are atomic, so the hot path takes no
        # lock) before it reads the handle, and close() clears the handle
        # before it waits for _inflight to empty, so no call ever runs on
        # a freed handle: a call that read the handle was already counted
        # when close() looked.
        self._inflight: List[None] = []
        self._close_lock = threading.Lock()
        self._scalar = lib.tfb_scalar  # the hot call, bound once
        # add_embedding's files and projector_config.pbtxt (embedding.py)
        self._embeddings = _embedding.EmbeddingLog(self.log_dir)
        self._embeddings_lock = threading.Lock()
        self._w = self._open(self.log_dir)

    # -- plumbing ------------------------------------------------------
    def _open(self, run_dir: str) -> int:
        buf, opts = _lib.writer_opts()
        opts.flush_interval_ms = self._flush_ms
        suffix = self._suffix.encode() if self._suffix else None
        opts.filename_suffix = suffix  # copied by tfb_writer_open
        dtype = self._dtype.encode() if self._dtype else None
        opts.dtype = dtype  # parsed by tfb_writer_open, not kept
        opts.peak_tflops = self._peak
        out = ctypes.c_void_p()
        check(lib.tfb_writer_open(ctypes.byref(out), os.fsencode(run_dir),
                                  buf), "tfb_writer_open(%s)" % run_dir)
        return out.value

    def _handle(self) -> int:
        w = self._w
        if w is None:
            raise TfbError(_lib.ECLOSED, "SummaryWriter(%s)" % self.log_dir)
        return w

    def _enter(self) -> int:
        """The handle, counted as in flight until _leave: TfbError when
        the writer is closed (or closing)."""
        self._inflight.append(None)
        w = self._w
        if w is None:
            self._inflight.pop()
            raise TfbError(_lib.ECLOSED, "SummaryWriter(%s)" % self.log_dir)
        return w

    def _leave(self) -> None:
        self._inflight.pop()

    def _c(self, fn: Callable[..., _T], *args: Any) -> _T:
        """fn(handle, *args) with the handle guarded (see _enter)."""
        w = self._enter()
        try:
            return fn(w, *args)
        finally:
            self._leave()

    def _c_if_open(self, fn: Callable[..., int], *args: Any) -> None:
        """As _c for the end of a block (step end, input end, trace
        stop): nothing when the writer was closed inside the block."""
        try:
            w = self._enter()
        except TfbError:
            return
        try:
            check(fn(w, *args), fn.__name__)
        finally:
            self._leave()

    def _tag(self, tag: str) -> bytes:
        t = self._tags.get(tag)
        if t is None:
            t = _cstr(tag, "tag")
            if len(self._tags) < 65536:
                self._tags[tag] = t
        return t

    def get_logdir(self) -> str:
        return self.log_dir

    @property
    def path(self) -> str:
        """The event file's path."""
        return os.fsdecode(self._c(lib.tfb_writer_path))

    # -- PyTorch's calls -----------------------------------------------
    def add_scalar(self, tag: str, scalar_value: Any,
                   global_step: Optional[int] = None,
                   walltime: Optional[float] = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        if new_style or double_precision:
            raise NotImplementedError(
                "add_scalar(new_style=True/double_precision=True) is not "
                "supported: tfboard writes simple_value scalars")
        t = self._tags.get(tag) or self._tag(tag)
        step = global_step if global_step.__class__ is int and \
            _I64_MIN <= global_step <= _I64_MAX else _step(global_step)
        inflight = self._inflight  # _enter/_leave, inlined: the hot call
        inflight.append(None)
        try:
            w = self._w
            if w is None:
                self._handle()  # raises TfbError: closed
            if walltime is None:
                rc = self._scalar(w, t, scalar_value, step)
            else:
                rc = lib.tfb_scalar_at(w, t, scalar_value, step,
                                       float(walltime))
        except ctypes.ArgumentError:
            # A tensor, a NumPy number: convert once (one device sync for
            # a CUDA tensor, as PyTorch's .item()).
            v = float(scalar_value.item() if hasattr(scalar_value, "item")
                      else scalar_value)
            if walltime is None:
                rc = lib.tfb_scalar(w, t, v, step)
            else:
                rc = lib.tfb_scalar_at(w, t, v, step, float(walltime))
        finally:
            inflight.pop()
        if rc:
            check(rc, "add_scalar(%s)" % tag)

    def add_scalars(self, main_tag: str,
                    tag_scalar_dict: Mapping[str, Any],
                    global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        """As PyTorch: each key goes to its own run folder
        <log_dir>/<main_tag with / as _>_<key>, under the tag main_tag. A
        key whose folder would leave log_dir (a ".." part, as in
        "../../up") or that holds a NUL raises ValueError; every key is
        checked before anything is written."""
        self._handle()
        t = self._tag(main_tag)
        step = _step(global_step)
        runs = []
        for key, value in tag_scalar_dict.items():
            rel = main_tag.replace("/", "_") + "_" + _cstr(key, "key").decode()
            parts = rel.replace(os.sep, "/").split("/")
            if ".." in parts:
                raise ValueError("add_scalars key %r would write outside "
                                 "the writer's folder %s" % (key,
                                                             self.log_dir))
            runs.append((os.path.join(self.log_dir, rel), float(value)))
        w = self._enter()  # keeps close() out while the subs are used
        try:
            for run, v in runs:
                with self._subs_lock:
                    sub = self._subs.get(run)
                    if sub is None:
                        sub = self._subs[run] = _SubWriter(self._open(run))
                rc = (lib.tfb_scalar(sub.w, t, v, step)
                      if walltime is None else
                      lib.tfb_scalar_at(sub.w, t, v, step, float(walltime)))
                check(rc, "add_scalars(%s)" % main_tag)
        finally:
            self._leave()
        del w

    def add_histogram(self, tag: str, values: Any,
                      global_step: Optional[int] = None,
                      bins: str = "tensorflow",
                      walltime: Optional[float] = None,
                      max_bins: Optional[int] = None) -> None:
        self._handle()
        if not (isinstance(bins, str) and bins == "tensorflow"):
            raise NotImplementedError(
                "add_histogram(bins=%r) is not supported: tfboard uses "
                "TensorFlow's default buckets (bins='tensorflow')" % (bins,))
        if max_bins is not None:
            raise NotImplementedError(
                "add_histogram(max_bins=) is not supported")
        wall = _walltime(walltime)
        a = _to_numpy(values)
        if a.size == 0:
            raise ValueError("The input has no element.")  # as PyTorch
        t, step = self._tag(tag), _step(global_step)
        if wall is None:
            fn = lib.tfb_histogram if a.dtype.itemsize == 4 else \
                lib.tfb_histogram_f64
            rc = self._c(fn, t, a.ctypes.data, a.size, step)
        else:
            fn = lib.tfb_histogram_at if a.dtype.itemsize == 4 else \
                lib.tfb_histogram_f64_at
            rc = self._c(fn, t, a.ctypes.data, a.size, step, wall)
        check(rc, "add_histogram(%s)" % tag)

    def batch_id(self, batch_id: Any, global_step: Optional[int] = None
                 ) -> None:
        """Records which batch a step trains on (any value; written as its
        str() under the tag batch/id by tfb_step_batch): `tfboard` lists
        the ids around each loss spike, and `tfboard report` prints them as
        a skip list. The step is global_step when given, else the
        writer's current step as tfb_step_batch defines it: inside `with
        writer.step(s):` s, otherwise the highest step logged so far."""
        self._handle()
        text = _cstr(str(batch_id), "batch_id")
        if global_step is None:
            check(self._c(lib.tfb_step_batch, text), "batch_id")
        else:
            check(self._c(lib.tfb_step_batch_at, _step(global_step), text),
                  "batch_id")

    def add_text(self, tag: str, text_string: Any,
                 global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """As PyTorch. A text, tag or step the C API cannot carry whole
        (a NUL character, a step outside int64) raises ValueError."""
        self._handle()
        wall = _walltime(walltime)
        # PyTorch writes the text under <tag>/text_summary.
        t = self._tag(_cstr(tag, "tag").decode() + "/text_summary")
        text, step = _cstr(str(text_string), "text"), _step(global_step)
        rc = self._c(lib.tfb_text, t, text, step) if wall is None else \
            self._c(lib.tfb_text_at, t, text, step, wall)
        check(rc, "add_text(%s)" % tag)

    # Images, PR curves and custom scalars: conversions in media.py; PNG
    # encoding in libtfboard. Each goes through the handle guard (_c).
    def add_image(self, tag: str, img_tensor: Any,
                  global_step: Optional[int] = None,
                  walltime: Optional[float] = None,
                  dataformats: str = "CHW") -> None:
        self._c(_media.log_image, self._tag(tag), img_tensor,
                _step(global_step), dataformats, "add_image(%s)" % tag,
                _walltime(walltime))

    def add_images(self, tag: str, img_tensor: Any,
                   global_step: Optional[int] = None,
                   walltime: Optional[float] = None,
                   dataformats: str = "NCHW") -> None:
        self._c(_media.log_image, self._tag(tag), img_tensor,
                _step(global_step), dataformats, "add_images(%s)" % tag,
                _walltime(walltime))

    def add_figure(self, tag: str, figure: Any,
                   global_step: Optional[int] = None, close: bool = True,
                   walltime: Optional[float] = None) -> None:
        fmt = "NCHW" if isinstance(figure, (list, tuple)) else "CHW"
        self.add_image(tag, _media.figure_to_chw(figure, close), global_step,
                       walltime, dataformats=fmt)

    def add_audio(self, tag: str, snd_tensor: Any,
                  global_step: Optional[int] = None, sample_rate: int = 44100,
                  walltime: Optional[float] = None) -> None:
        """As PyTorch: a 1-D clip (after squeeze) in [-1, 1] (clipped past
        it), written as 16-bit PCM WAV in a Summary.Audio by tfb_audio."""
        self._c(_media.log_audio, self._tag(tag), snd_tensor,
                _step(global_step), sample_rate, "add_audio(%s)" % tag,
                _walltime(walltime))

    def add_video(self, tag: str, vid_tensor: Any,
                  global_step: Optional[int] = None, fps: float = 4,
                  walltime: Optional[float] = None) -> None:
        """As PyTorch: vid_tensor [N, T, C, H, W] (C 1, 3 or 4; uint8 as
        is, else times 255), the N videos tiled into one, written as an
        animated GIF image (tfboard/gif.py) at fps frames per second."""
        self._c(_media.log_video, self._tag(tag), vid_tensor,
                _step(global_step), fps, "add_video(%s)" % tag,
                _walltime(walltime))

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any,
                     global_step: Optional[int] = None,
                     num_thresholds: int = 127, weights: Any = None,
                     walltime: Optional[float] = None) -> None:
        self._c(_media.log_pr_curve, self._tag(tag), labels, predictions,
                _step(global_step), num_thresholds,
                "add_pr_curve(%s)" % tag, weights, _walltime(walltime))

    def add_embedding(self, mat: Any, metadata: Any = None,
                      label_img: Any = None,
                      global_step: Optional[int] = None,
                      tag: str = "default",
                      metadata_header: Any = None) -> None:
        """As PyTorch: mat [N, D] into <log_dir>/<step:05d>/<tag>/
        tensors.tsv, with metadata.tsv (one label a point, or columns
        under metadata_header), sprite.png from label_img [N, C, H, W],
        and projector_config.pbtxt listing every embedding of this writer
        (embedding.py). Files, not events: written at once, on the
        calling thread. ValueError for PyTorch's mismatches (labels or
        images not one a point, mat not 2-D); TfbError when closed."""
        self._handle()
        with self._embeddings_lock:
            self._embeddings.add(mat, metadata, label_img, global_step, tag,
                                 metadata_header)

    def add_custom_scalars(self, layout: Mapping[str, Any]) -> None:
        self._c(_media.log_custom_scalars, layout, "add_custom_scalars")

    def add_graph(self, model: Any, input_to_model: Any = None,
                  verbose: bool = False, use_strict_trace: bool = True) -> None:
        """As PyTorch: model traced with torch.jit.trace on input_to_model
        and logged as the run's GraphDef, with the RunMetadata PyTorch
        writes beside it (tag "step1"). The trace runs before the writer
        is touched, so a model that cannot be traced raises and logs
        nothing."""
        from . import graph as _graph
        gd, md = _graph.graph_def(model, input_to_model, verbose,
                                  use_strict_trace)
        self._c(_log_graph, gd, md)

    def add_hparams(self, hparam_dict: Mapping[str, Any],
                    metric_dict: Mapping[str, Any],
                    hparam_domain_discrete: Optional[Mapping[str, Any]] = None,
                    run_name: Optional[str] = None) -> None:
        """As PyTorch: a run folder <log_dir>/<run_name or time.time()>
        gets the experiment, session start and end (success) records and
        one scalar per metric. bool values are written as bools (PyTorch
        1.13 writes them as numbers, since bool is an int). Every argument
        is checked before the folder is made, so a call that raises leaves
        nothing behind."""
        self._handle()
        if not isinstance(hparam_dict, dict) or \
                not isinstance(metric_dict, dict):
            raise TypeError("hparam_dict and metric_dict must be dicts")
        if hparam_domain_discrete:
            raise NotImplementedError(
                "add_hparams(hparam_domain_discrete=) is not supported")
        hps, keep = _hparams_array(hparam_dict, list(metric_dict))
        metrics = [(self._tag(k), float(v)) for k, v in metric_dict.items()]
        name = run_name or str(time.time())
        _cstr(name, "run_name")
        run = os.path.join(self.log_dir, name)
        self._handle()
        w = self._open(run)
        try:
            # PyTorch's order: experiment, session start, session end,
            # then the metrics as scalars at step 0.
            check(lib.tfb_hparams_with_metrics(w, *hps), "add_hparams")
            del keep
            check(lib.tfb_hparams_end(w, _lib.HPARAMS_SUCCESS),
                  "tfb_hparams_end")
            for t, v in metrics:
                check(lib.tfb_scalar(w, t, v, 0),
                      "add_hparams metric %s" % t.decode())
        finally:
            rc = lib.tfb_writer_close(w)
        check(rc, "add_hparams close")

    def flush(self) -> None:
        w = self._enter()
        try:
            check(lib.tfb_flush(w), "flush")
            with self._subs_lock:
                subs = list(self._subs.values())
            for s in subs:
                check(lib.tfb_flush(s.w), "flush")
        finally:
            self._leave()

    def close(self) -> None:
        """Writes everything and closes the file; later calls raise
        TfbError (writer is closed). Closing twice is allowed. Safe while
        other threads log: the calls already in the library finish first,
        and those that start later raise TfbError."""
        with self._close_lock:
            w, self._w = self._w, None
        if w is None:
            return
        # The calls already in the library finish (microseconds each);
        # later ones see no handle and raise.
        while self._inflight:
            time.sleep(0.0001)
        with self._subs_lock:
            subs, self._subs = list(self._subs.values()), {}
        rcs = [lib.tfb_writer_close(s.w) for s in subs]
        rcs.append(lib.tfb_writer_close(w))
        for rc in rcs:
            check(rc, "close")

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.close()
        return False

    def __del__(self) -> None:
        try:
            if getattr(self, "_w", None) is not None:
                self.close()
        except Exception:
            pass

    # -- hyperparameters (the C API, for runs logged by this writer) ----
    def log_hparams(self, hparam_dict: Mapping[str, Any],
                    metric_tags: Iterable[str] = (),
                    status: Optional[str] = None) -> None:
        """tfb_hparams on this writer's own run (not a sub-run as
        add_hparams): the experiment and session start now; pass status
        ("success", "failure", ...) to end_hparams later."""
        hps, keep = _hparams_array(hparam_dict, list(metric_tags))
        check(self._c(lib.tfb_hparams_with_metrics, *hps), "add_hparams")
        del keep

    def end_hparams(self, status: str = "success") -> None:
        codes = {"unknown": _lib.HPARAMS_UNKNOWN,
                 "success": _lib.HPARAMS_SUCCESS,
                 "failure": _lib.HPARAMS_FAILURE,
                 "running": _lib.HPARAMS_RUNNING}
        if status not in codes:
            raise ValueError("status must be one of %s" % sorted(codes))
        check(self._c(lib.tfb_hparams_end, codes[status]), "end_hparams")

    # -- what PyTorch does not have --------------------------------------
    def grad_norms(self, model: Any, step: int) -> float:
        """Logs grad_norm/<name> for every parameter with a gradient and
        grad_norm/global (sqrt of the sum of squares); returns the global
        norm. model: an nn.Module, a dict name -> tensor, or an iterable of
        (name, tensor) (a parameter's .grad is used when it has one). The
        norms are computed where the tensors are (on the GPU for CUDA
        parameters) in float64, and fetched with one transfer (one sync)."""
        import torch
        self._handle()
        if hasattr(model, "named_parameters"):
            items = model.named_parameters()
        elif isinstance(model, dict):
            items = model.items()
        else:
            items = model
        names, norms = [], []
        for name, p in items:
            g = p.grad if getattr(p, "grad", None) is not None else p
            if g is p and isinstance(p, torch.nn.Parameter):
                continue  # a parameter without a gradient
            names.append(name)
            norms.append(torch.linalg.vector_norm(g.detach(),
                                                  dtype=torch.float64))
        if not norms:
            return 0.0
        by_dev = {}
        for i, n in enumerate(norms):
            by_dev.setdefault(n.device, []).append(i)
        vals = [0.0] * len(norms)
        for dev, idx in by_dev.items():
            stacked = torch.stack([norms[i] for i in idx]).cpu().tolist()
            for i, v in zip(idx, stacked):
                vals[i] = v
        s = _step(step)
        total = 0.0
        for name, v in zip(names, vals):
            check(self._c(lib.tfb_scalar, self._tag("grad_norm/" + name), v,
                          s), "grad_norms")
            total += v * v
        g = math.sqrt(total)
        check(self._c(lib.tfb_scalar, self._tag("grad_norm/global"), g, s),
              "grad_norms")
        return g

    def check_numerics(self, tensor_or_dict: Any, step: int,
                       tag: str = "numerics") -> int:
        """As tfb_check_numerics: counts NaN, +Inf and -Inf; only when some
        are found writes a numerics record (plugin tfboard_numerics) under
        the tag (for a dict: the key) and reports the tag once. Returns
        the number of non-finite values. CUDA tensors are counted on the
        GPU; only a tensor with non-finite values is copied to the host."""
        self._handle()
        items = tensor_or_dict.items() if isinstance(tensor_or_dict, dict) \
            else [(tag, tensor_or_dict)]
        s = _step(step)
        total = 0
        for name, t in items:
            total += self._check_one(name, t, s)
        return total

    def _check_one(self, name: str, t: Any, step: int) -> int:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None and isinstance(t, torch.Tensor):
            t = t.detach()
            if not t.is_floating_point():
                return 0
            if t.device.type != "cpu":
                if int(torch.count_nonzero(~torch.isfinite(t))) == 0:
                    return 0
        a = _to_numpy(t)
        fn = lib.tfb_check_numerics if a.dtype.itemsize == 4 else \
            lib.tfb_check_numerics_f64
        return check(self._c(fn, self._tag(name), a.ctypes.data, a.size,
                             step), "check_numerics(%s)" % name)

    @contextlib.contextmanager
    def step(self, step: int) -> Iterator[None]:
        """with writer.step(s): one training step (pipeline/step_ms)."""
        check(self._c(lib.tfb_step_begin, _step(step)), "step begin")
        try:
            yield
        finally:
            self._c_if_open(lib.tfb_step_end)

    def step_work(self, flops: Optional[float] = None,
                  samples: Optional[float] = None,
                  tokens: Optional[float] = None) -> None:
        """The work of the step that is open (inside `with
        writer.step(s)` or `writer.timed(...)`): floating-point operations,
        samples and tokens (None = not counted). The writer then logs
        perf/samples_per_s, perf/tokens_per_s, perf/tflops and, when the
        peak is known (peak_tflops=, or dtype= and a GPU the peak table
        knows, with gpu metrics on), perf/mfu. A decoder's training step
        is about 6 x parameters x tokens flops. TfbError outside a step or
        for a negative or non-finite amount."""
        def amount(v: Optional[float], name: str) -> float:
            if v is None:
                return 0.0
            f = float(v)
            if not math.isfinite(f) or f < 0:
                raise ValueError("step_work(%s=%r): not a finite amount "
                                 ">= 0" % (name, v))
            return f
        check(self._c(lib.tfb_step_work, amount(flops, "flops"),
                      amount(samples, "samples"), amount(tokens, "tokens")),
              "step_work")

    @contextlib.contextmanager
    def checkpoint(self) -> Iterator[None]:
        """with writer.checkpoint(): a checkpoint save, outside any step:
        goodput/checkpoint_ms at the last step begun, counted by tfboard
        as checkpoint time rather than a gap between steps."""
        check(self._c(lib.tfb_checkpoint_begin), "checkpoint begin")
        try:
            yield
        finally:
            self._c_if_open(lib.tfb_checkpoint_end)

    @contextlib.contextmanager
    def comm(self, name: Optional[str] = None,
             nbytes: Optional[int] = None) -> Iterator[None]:
        """with writer.comm("all_reduce", nbytes=n): a collective inside
        the open step (comm/ms). With nbytes (the larger of its input and
        output buffers) the span also enters the comm/collectives record,
        from which tfboard computes algorithm and bus bandwidth."""
        cname = name.encode() if name else None
        if nbytes is None:
            check(self._c(lib.tfb_comm_begin, cname), "comm begin")
        else:
            n = int(nbytes)
            if n < 0:
                raise ValueError("comm(nbytes=%r): must be >= 0" % nbytes)
            check(self._c(lib.tfb_comm_begin_bytes, cname, n), "comm begin")
        try:
            yield
        finally:
            self._c_if_open(lib.tfb_comm_end)

    @contextlib.contextmanager
    def input_wait(self) -> Iterator[None]:
        """with writer.input_wait(): time spent waiting for input inside
        the current step (pipeline/input_ms)."""
        check(self._c(lib.tfb_input_begin), "input begin")
        try:
            yield
        finally:
            self._c_if_open(lib.tfb_input_end)

    def timed(self, iterable: Iterable[_T],
              start_step: int = 0) -> Iterator[_T]:
        """for batch in writer.timed(loader): each iteration is one step
        (from fetching its batch to fetching the next), and fetching is
        timed as input wait. When the iterable has a len() (a DataLoader),
        exactly that many steps are logged; otherwise the fetch that finds
        the end is logged as one more, input-only step."""
        self._handle()
        try:
            remaining = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            remaining = -1
        it = iter(iterable)
        s = int(start_step)
        open_step = False
        try:
            while remaining != 0:
                if open_step:
                    open_step = False
                    check(self._c(lib.tfb_step_end), "step end")
                check(self._c(lib.tfb_step_begin, _step(s)), "step begin")
                open_step = True
                check(self._c(lib.tfb_input_begin), "input begin")
                try:
                    item = next(it)
                except StopIteration:
                    self._c_if_open(lib.tfb_input_end)
                    return
                check(self._c(lib.tfb_input_end), "input end")
                yield item
                s += 1
                if remaining > 0:
                    remaining -= 1
        finally:
            if open_step:
                self._c_if_open(lib.tfb_step_end)

    @contextlib.contextmanager
    def gpu_trace(self, strict: bool = False) -> Iterator[None]:
        """with writer.gpu_trace(): CUPTI tracing of the block
        (tfb_gpu_trace_start/stop). When tracing cannot run (no GPU, no
        CUPTI) a warning is issued and the block runs untraced; with
        strict=True TfbError is raised instead."""
        rc = self._c(lib.tfb_gpu_trace_start, None)
        if rc < 0:
            detail = (self._c(lib.tfb_gpu_trace_error) or b"").decode(
                errors="replace")
            err = TfbError(rc, "gpu_trace: " + detail if detail
                           else "gpu_trace")
            if strict:
                raise err
            warnings.warn(str(err), RuntimeWarning, stacklevel=3)
        try:
            yield
        finally:
            if rc >= 0:
                self._c_if_open(lib.tfb_gpu_trace_stop)


def _log_graph(w, gd: bytes, md: bytes) -> None:
    check(lib.tfb_graph_def(w, gd, len(gd)), "add_graph")
    check(lib.tfb_run_metadata(w, b"step1", md, len(md), 0), "add_graph")


class _SubWriter:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


def _unsupported(name):
    def call(self, *args, **kwargs):
        raise NotImplementedError(
            "tfboard.SummaryWriter.%s is not supported (yet); use "
            "torch.utils.tensorboard for it" % name)
    call.__name__ = name
    call.__doc__ = "Not supported: raises NotImplementedError."
    return call


for _n in _UNSUPPORTED:
    setattr(SummaryWriter, _n, _unsupported(_n))
del _n
