"""Loading libtfboard.so and declaring the C functions (ctypes).

The library is loaded on first use (the first writer, or reading
tfboard.__version__ / tfboard.lib_path), not at import, so importing the
package never fails or costs anything on a machine without it. It is
looked up in this order: $TFBOARD_LIB; next to this package; the meson
build tree when the package runs from the source tree;
ctypes.util.find_library("tfboard") and the system loader path.

Struct sizes come from the library: every options and stats struct of
tfboard.h starts with `size_t size`, written by its _init function, and
the buffers handed to the library are that size (see struct_size), so a
newer library with fields added at the end is never written past.

ctypes.CDLL releases the GIL around every call, and the library is
thread-safe on one writer, so threads logging into one writer run the
encoding in parallel.
"""
import ctypes
import ctypes.util
import glob
import os
import threading
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

__all__ = ["lib", "TfbError", "check", "load", "struct_size",
           "new_struct"]

_S = TypeVar("_S", bound=ctypes.Structure)


def _candidates() -> Tuple[List[str], bool]:
    env = os.environ.get("TFBOARD_LIB")
    if env:
        # An explicit path is the only one tried: a wrong one is an error,
        # not a reason to load some other copy.
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    out = sorted(glob.glob(os.path.join(here, "libtfboard.so*")))
    src_root = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(src_root, "collector", "meson.build")):
        for d in sorted(glob.glob(os.path.join(src_root, "build*"))):
            out += sorted(glob.glob(os.path.join(d, "collector",
                                                 "libtfboard.so")))
    found = ctypes.util.find_library("tfboard")
    if found:
        out.append(found)
    out += ["libtfboard.so.0", "libtfboard.so"]
    return out, False


def _open_cdll() -> Tuple[ctypes.CDLL, str]:
    names, explicit = _candidates()
    errors = []
    for name in names:
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            errors.append("%s: %s" % (name, e))
            if explicit:
                break
    raise ImportError("tfboard: cannot load libtfboard.so (set TFBOARD_LIB "
                      "to its path). Tried:\n  " + "\n  ".join(errors))


_cdll: Optional[ctypes.CDLL] = None
_path: Optional[str] = None
_load_lock = threading.Lock()


def load() -> ctypes.CDLL:
    """The library, loaded and declared on the first call (thread-safe).
    Raises ImportError when it cannot be found."""
    global _cdll, _path
    if _cdll is not None:
        return _cdll
    with _load_lock:
        if _cdll is None:
            cdll, path = _open_cdll()
            _declare(cdll)
            _path = path
            _cdll = cdll
    return _cdll


class _Lib:
    """`lib`: the CDLL, loaded on the first attribute read. Each function
    read is then kept on this object, so later reads cost what a plain
    attribute read costs."""

    def __getattr__(self, name: str) -> Any:
        f = getattr(load(), name)
        setattr(self, name, f)
        return f


lib: Any = _Lib()


def __getattr__(name: str) -> Any:  # PEP 562: lib_path loads the library
    if name == "lib_path":
        load()
        return _path
    raise AttributeError(name)


c_int, c_int64, c_double, c_size_t, c_char_p, c_void_p = (
    ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_size_t,
    ctypes.c_char_p, ctypes.c_void_p)


class TfbError(RuntimeError):
    """A libtfboard error; .code is the negative TFB_E* code and the
    message is tfb_strerror's text."""

    def __init__(self, code: int, what: str = "") -> None:
        self.code = code
        msg = lib.tfb_strerror(code).decode()
        super().__init__("%s: %s" % (what, msg) if what else msg)


def check(rc: int, what: str = "") -> int:
    if rc < 0:
        raise TfbError(rc, what)
    return rc


# Codes used on the Python side (from tfboard.h's TFB_ERRNO_MAP).
EINVAL = -1
ECLOSED = -8

# ---- struct sizes, from the library ---------------------------------------

# Room for the first call of an _init function, before its size is known.
_PROBE_BYTES = 4096
_sizes: Dict[str, int] = {}


def struct_size(init: Optional[str] = None,
                query: Optional[str] = None) -> int:
    """sizeof a tfboard.h struct as the loaded library knows it: from its
    _init function (`init`, e.g. "tfb_writer_opts_init"), which writes
    the struct's size into its leading `size_t size`, or from a function
    that returns it (`query`, a size_t f(void)). Cached per name."""
    name = init or query
    if name is None:
        raise TypeError("struct_size needs init= or query=")
    size = _sizes.get(name)
    if size is not None:
        return size
    fn = getattr(load(), name)
    if init:
        fn.restype = None
        fn.argtypes = [c_void_p]
        probe = ctypes.create_string_buffer(_PROBE_BYTES)
        fn(probe)
        size = c_size_t.from_buffer(probe).value
    else:
        fn.restype = c_size_t
        fn.argtypes = []
        size = fn()
    if not ctypes.sizeof(c_size_t) <= size <= _PROBE_BYTES:
        raise ImportError("tfboard: %s gives a struct size of %d, which no "
                          "tfboard.h struct has" % (name, size))
    _sizes[name] = size
    return size


def new_struct(cls: Type[_S], init: str) -> Tuple[ctypes.Array, _S]:
    """(buffer, view): a struct of the library's own size, filled by its
    _init function, and a ctypes view (cls: the leading fields this
    package knows, `size` first). Fields the library added at the end
    keep their defaults. Raises ImportError when the library's struct is
    smaller than the fields this package sets (an older library)."""
    size = struct_size(init=init)
    if size < ctypes.sizeof(cls):
        raise ImportError("tfboard: %s's struct (%d bytes) lacks fields this "
                          "package sets (%d bytes); the library is older "
                          "than the package" % (init, size,
                                                ctypes.sizeof(cls)))
    buf = ctypes.create_string_buffer(size)
    getattr(load(), init)(buf)
    return buf, cls.from_buffer(buf)


class WriterOpts(ctypes.Structure):
    """The leading fields of tfb_writer_opts, as tfboard.h declares them."""
    _fields_ = [
        ("size", c_size_t),
        ("queue_bytes", c_size_t),
        ("drop_when_full", c_int),
        ("flush_interval_ms", ctypes.c_uint),
        ("filename_suffix", c_char_p),
        ("on_nonfinite", c_void_p),
        ("on_nonfinite_user", c_void_p),
        ("rank", c_int),
        ("world_size", c_int),
        ("local_rank", c_int),
        ("job", c_char_p),
        ("host", c_char_p),
        ("segment_seconds", ctypes.c_uint),
        ("segment_bytes", c_size_t),
        ("spool_bytes", c_size_t),
        ("spool_dir", c_char_p),
        ("close_timeout_ms", ctypes.c_uint),
        # Work per step (issue 29): read at open; dtype is not kept.
        ("flops_per_step", c_double),
        ("samples_per_step", c_double),
        ("tokens_per_step", c_double),
        ("dtype", c_char_p),
        ("peak_tflops", c_double),
        ("device", c_char_p),
    ]


def writer_opts() -> Tuple[ctypes.Array, WriterOpts]:
    """(buffer, view): tfb_writer_opts of the library's size, filled by
    tfb_writer_opts_init, and a view of the fields this package sets."""
    return new_struct(WriterOpts, "tfb_writer_opts_init")


class Hparam(ctypes.Structure):
    """tfb_hparam. Its first field is its size (tfboard.h's convention):
    set here, so Hparam(name, type, str, number, boolean) fills the rest
    in order."""
    _fields_ = [
        ("size", c_size_t),
        ("name", c_char_p),
        ("type", c_int),
        ("str", c_char_p),
        ("number", c_double),
        ("boolean", c_int),
    ]

    def __init__(self, *args, **kwargs):
        super().__init__(ctypes.sizeof(Hparam), *args, **kwargs)


HPARAM_STRING, HPARAM_BOOL, HPARAM_NUMBER = 1, 2, 3
HPARAMS_UNKNOWN, HPARAMS_SUCCESS, HPARAMS_FAILURE, HPARAMS_RUNNING = 0, 1, 2, 3


def _declare(cdll: ctypes.CDLL) -> None:
    def fn(name: str, restype: Any, *argtypes: Any) -> None:
        f = getattr(cdll, name)
        f.restype = restype
        f.argtypes = list(argtypes)

    P = c_void_p  # tfb_writer *
    fn("tfb_strerror", c_char_p, c_int)
    fn("tfb_version", c_char_p)
    fn("tfb_version_number", c_int)
    fn("tfb_writer_opts_init", None, c_void_p)
    fn("tfb_writer_open", c_int, ctypes.POINTER(c_void_p), c_char_p,
       c_void_p)
    fn("tfb_writer_close", c_int, P)
    fn("tfb_flush", c_int, P)
    fn("tfb_scalar", c_int, P, c_char_p, c_double, c_int64)
    fn("tfb_scalar_at", c_int, P, c_char_p, c_double, c_int64, c_double)
    fn("tfb_histogram", c_int, P, c_char_p, c_void_p, c_size_t, c_int64)
    fn("tfb_histogram_f64", c_int, P, c_char_p, c_void_p, c_size_t, c_int64)
    fn("tfb_text", c_int, P, c_char_p, c_char_p, c_int64)
    fn("tfb_text_at", c_int, P, c_char_p, c_char_p, c_int64, c_double)
    fn("tfb_histogram_at", c_int, P, c_char_p, c_void_p, c_size_t, c_int64,
       c_double)
    fn("tfb_histogram_f64_at", c_int, P, c_char_p, c_void_p, c_size_t,
       c_int64, c_double)
    fn("tfb_step_batch", c_int, P, c_char_p)
    fn("tfb_step_batch_at", c_int, P, c_int64, c_char_p)
    fn("tfb_writer_path", c_char_p, P)
    fn("tfb_check_numerics", c_int64, P, c_char_p, c_void_p, c_size_t,
       c_int64)
    fn("tfb_check_numerics_f64", c_int64, P, c_char_p, c_void_p, c_size_t,
       c_int64)
    fn("tfb_step_begin", c_int, P, c_int64)
    fn("tfb_step_end", c_int, P)
    fn("tfb_input_begin", c_int, P)
    fn("tfb_input_end", c_int, P)
    fn("tfb_step_work", c_int, P, c_double, c_double, c_double)
    fn("tfb_checkpoint_begin", c_int, P)
    fn("tfb_checkpoint_end", c_int, P)
    fn("tfb_comm_begin", c_int, P, c_char_p)
    fn("tfb_comm_begin_bytes", c_int, P, c_char_p, ctypes.c_uint64)
    fn("tfb_comm_end", c_int, P)
    fn("tfb_gpu_trace_start", c_int, P, c_void_p)
    fn("tfb_gpu_trace_stop", c_int, P)
    fn("tfb_gpu_trace_error", c_char_p, P)
    fn("tfb_hparams_with_metrics", c_int, P, ctypes.POINTER(Hparam),
       c_size_t, ctypes.POINTER(c_char_p), c_size_t)
    fn("tfb_hparams_end", c_int, P, c_int)
    # Media (python/tfboard/media.py).
    fn("tfb_image", c_int, P, c_char_p, c_void_p, c_int, c_int, c_int,
       c_int64)
    fn("tfb_image_at", c_int, P, c_char_p, c_void_p, c_int, c_int, c_int,
       c_int64, c_double)
    fn("tfb_image_encoded", c_int, P, c_char_p, c_void_p, c_size_t, c_int64)
    fn("tfb_image_encoded_at", c_int, P, c_char_p, c_void_p, c_size_t,
       c_int64, c_double)
    fn("tfb_audio", c_int, P, c_char_p, c_void_p, c_size_t, c_int, c_double,
       c_int64)
    fn("tfb_audio_at", c_int, P, c_char_p, c_void_p, c_size_t, c_int,
       c_double, c_int64, c_double)
    fn("tfb_custom_scalars_layout", c_int, P, c_char_p, c_size_t)
    # Graphs (python/tfboard/graph.py).
    fn("tfb_graph_def", c_int, P, c_char_p, c_size_t)
    fn("tfb_run_metadata", c_int, P, c_char_p, c_char_p, c_size_t, c_int64)
    for name in ("tfb_pr_curve", "tfb_pr_curve_f64"):
        fn(name, c_int, P, c_char_p, c_void_p, c_void_p, c_size_t, c_int,
           c_int64)
    for name in ("tfb_pr_curve_at", "tfb_pr_curve_f64_at"):
        fn(name, c_int, P, c_char_p, c_void_p, c_void_p, c_void_p, c_size_t,
           c_int, c_int64, c_double)


def version() -> str:
    """The loaded library's version string (tfb_version)."""
    return lib.tfb_version().decode()


def version_number() -> int:
    """major * 1000000 + minor * 1000 + patch (tfb_version_number)."""
    return int(lib.tfb_version_number())
