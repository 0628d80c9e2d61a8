"""Loading libtfboard.so and declaring the C functions (ctypes).

The library is looked up in this order: $TFBOARD_LIB; next to this
package; the meson build tree when the package runs from the source tree;
ctypes.util.find_library("tfboard") and the system loader path.

ctypes.CDLL releases the GIL around every call, and the library is
thread-safe on one writer, so threads logging into one writer run the
encoding in parallel.
"""
import ctypes
import ctypes.util
import glob
import os

__all__ = ["lib", "TfbError", "check", "lib_path"]


def _candidates():
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


def _load():
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


lib, lib_path = _load()

c_int, c_int64, c_double, c_size_t, c_char_p, c_void_p = (
    ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_size_t,
    ctypes.c_char_p, ctypes.c_void_p)


class TfbError(RuntimeError):
    """A libtfboard error; .code is the negative TFB_E* code and the
    message is tfb_strerror's text."""

    def __init__(self, code, what=""):
        self.code = code
        msg = lib.tfb_strerror(code).decode()
        super().__init__("%s: %s" % (what, msg) if what else msg)


def check(rc, what=""):
    if rc < 0:
        raise TfbError(rc, what)
    return rc


# Codes used on the Python side (from tfboard.h's TFB_ERRNO_MAP).
EINVAL = -1
ECLOSED = -8


_OPTS_FIELDS = [
    ("queue_bytes", c_size_t),
    ("drop_when_full", c_int),
    ("flush_interval_ms", ctypes.c_uint),
    ("filename_suffix", c_char_p),
    ("on_nonfinite", c_void_p),
    ("on_nonfinite_user", c_void_p),
]


class WriterOpts(ctypes.Structure):
    """The leading fields of tfb_writer_opts, as tfboard.h declares them.
    Only these are set by name; the struct itself is always filled by
    tfb_writer_opts_init in a larger buffer (see writer_opts), so fields
    the library adds at the end keep their defaults."""
    _fields_ = _OPTS_FIELDS


class SizedWriterOpts(ctypes.Structure):
    """The same, for a library whose opts structs start with
    `size_t size` (set by the _init function)."""
    _fields_ = [("size", c_size_t)] + _OPTS_FIELDS


OPTS_BYTES = 1024  # room for fields added to tfb_writer_opts later
_DEFAULT_QUEUE = 8 << 20   # tfboard.h: queue_bytes default, 8 MiB
_DEFAULT_FLUSH_MS = 2000   # tfboard.h: flush_interval_ms default


def writer_opts():
    """(buffer, view): tfb_writer_opts filled by tfb_writer_opts_init, and
    a ctypes view of its known fields. The layout is checked against the
    documented defaults, so a header change fails loudly here instead of
    writing to the wrong field."""
    buf = ctypes.create_string_buffer(OPTS_BYTES)
    lib.tfb_writer_opts_init(buf)
    for cls in (WriterOpts, SizedWriterOpts):
        view = cls.from_buffer(buf)
        if view.queue_bytes == _DEFAULT_QUEUE and \
                view.flush_interval_ms == _DEFAULT_FLUSH_MS:
            if cls is SizedWriterOpts and not \
                    ctypes.sizeof(WriterOpts) < view.size <= OPTS_BYTES:
                continue
            return buf, view
    raise ImportError("tfboard: %s has a tfb_writer_opts layout this "
                      "package does not know" % lib_path)


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


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_P = c_void_p  # tfb_writer *
lib.tfb_strerror.restype = c_char_p
lib.tfb_strerror.argtypes = [c_int]
_fn("tfb_version", c_char_p)
_fn("tfb_writer_opts_init", None, c_void_p)
_fn("tfb_writer_open", c_int, ctypes.POINTER(c_void_p), c_char_p, c_void_p)
_fn("tfb_writer_close", c_int, _P)
_fn("tfb_flush", c_int, _P)
_fn("tfb_scalar", c_int, _P, c_char_p, c_double, c_int64)
_fn("tfb_scalar_at", c_int, _P, c_char_p, c_double, c_int64, c_double)
_fn("tfb_histogram", c_int, _P, c_char_p, c_void_p, c_size_t, c_int64)
_fn("tfb_histogram_f64", c_int, _P, c_char_p, c_void_p, c_size_t, c_int64)
_fn("tfb_text", c_int, _P, c_char_p, c_char_p, c_int64)
_fn("tfb_writer_path", c_char_p, _P)
_fn("tfb_check_numerics", c_int64, _P, c_char_p, c_void_p, c_size_t, c_int64)
_fn("tfb_check_numerics_f64", c_int64, _P, c_char_p, c_void_p, c_size_t,
    c_int64)
_fn("tfb_step_begin", c_int, _P, c_int64)
_fn("tfb_step_end", c_int, _P)
_fn("tfb_input_begin", c_int, _P)
_fn("tfb_input_end", c_int, _P)
_fn("tfb_gpu_trace_start", c_int, _P, c_void_p)
_fn("tfb_gpu_trace_stop", c_int, _P)
_fn("tfb_gpu_trace_error", c_char_p, _P)
_fn("tfb_hparams_with_metrics", c_int, _P, ctypes.POINTER(Hparam), c_size_t,
    ctypes.POINTER(c_char_p), c_size_t)
_fn("tfb_hparams_end", c_int, _P, c_int)
