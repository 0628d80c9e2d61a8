"""tfboard: TensorBoard event files from Python through libtfboard.

    from tfboard import SummaryWriter
    with SummaryWriter("runs/exp1") as w:
        w.add_scalar("loss", 0.5, 1)

Importing the package does not load libtfboard.so: the first writer does
(or reading __version__ or lib_path). __version__ is the loaded library's
version (tfb_version), so the package and the library never disagree.
"""
from typing import Any

from . import _lib
from ._lib import TfbError
from .writer import SummaryWriter

__all__ = ["SummaryWriter", "TfbError", "lib_path", "library_version",
           "library_version_number"]


def library_version() -> str:
    """The loaded libtfboard's version string (tfb_version)."""
    return _lib.version()


def library_version_number() -> int:
    """The loaded libtfboard's major * 1000000 + minor * 1000 + patch."""
    return _lib.version_number()


def __getattr__(name: str) -> Any:  # PEP 562: loaded on first read
    if name == "__version__":
        return _lib.version()
    if name == "lib_path":  # the path the library was loaded from
        _lib.load()
        return _lib._path
    raise AttributeError("module 'tfboard' has no attribute %r" % name)
