"""wattlab: the energy of code regions, measured from inside a Python program (docs/python.md).

    import wattlab
    m = wattlab.Meter(devices="auto", db="runs.db")
    with m.window("step", sync=torch.cuda.synchronize) as w:
        train_step()
        w.count(tokens=4096)
    print(w.result)              # energy ± 95 % uncertainty, estimator, issues; SIMULATED when it is

The package loads libwattlab.so (the C API, include/wattlab/wattlab_c.h) with ctypes: found through
WATTLAB_LIBRARY, next to the package, in a build tree, or on the system's library path.
"""
from ._lib import (API_VERSION, EndedError, ForkedError, InvalidArgumentError, LibraryNotFoundError,
                   NoDeviceError, NotVirtualError, StoreError, UnknownDeviceError, UnknownWindowError,
                   WattlabError, library_path)
from .meter import Meter, Window
from .result import DomainResult, Issue, Result

__version__ = "0.1.0"

__all__ = ["Meter", "Window", "Result", "DomainResult", "Issue", "WattlabError", "InvalidArgumentError",
           "UnknownDeviceError", "NoDeviceError", "UnknownWindowError", "StoreError", "ForkedError",
           "NotVirtualError", "EndedError", "LibraryNotFoundError", "library_path", "library_version",
           "API_VERSION"]


def library_version():
    """The version of the loaded libwattlab.so ("0.1.0")."""
    from . import _lib
    return _lib.load().wattlab_version().decode()
