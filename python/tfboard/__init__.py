"""tfboard: TensorBoard event files from Python through libtfboard.

    from tfboard import SummaryWriter
    with SummaryWriter("runs/exp1") as w:
        w.add_scalar("loss", 0.5, 1)
"""
from ._lib import TfbError, lib_path
from ._lib import lib as _cdll
from .writer import SummaryWriter

__all__ = ["SummaryWriter", "TfbError", "lib_path", "library_version"]
__version__ = "0.1.0"


def library_version():
    """The loaded libtfboard's version string."""
    return _cdll.tfb_version().decode()
