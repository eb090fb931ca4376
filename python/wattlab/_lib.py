"""Finding and loading libwattlab.so, the C API's prototypes, and C errors as Python exceptions.

ctypes over the C ABI (include/wattlab/wattlab_c.h) rather than a compiled extension: one
libwattlab.so serves every Python version (Debian's 3.11 here, 3.12 on the GPU machine), and
ctypes releases the GIL during each call, so the sampler (a C++ thread) never waits on Python.
"""
import ctypes
import ctypes.util
import glob
import os
import threading

API_VERSION = 1  # WATTLAB_C_API_VERSION this package was written against

_SONAMES = ("libwattlab.so.1", "libwattlab.so")


class WattlabError(Exception):
    """A failed C API call: `status` is the C status name, the message is the C library's."""

    def __init__(self, message, status="WATTLAB_ERR_INTERNAL", code=99):
        super().__init__(message)
        self.status = status
        self.code = code


class InvalidArgumentError(WattlabError, ValueError):
    """WATTLAB_ERR_INVALID_ARGUMENT: a missing or out-of-range argument."""


class UnknownDeviceError(WattlabError, ValueError):
    """WATTLAB_ERR_UNKNOWN_DEVICE: a device selection that names no backend."""


class NoDeviceError(WattlabError, RuntimeError):
    """WATTLAB_ERR_NO_DEVICE: no backend loaded; the message lists why each did not."""


class UnknownWindowError(WattlabError, LookupError):
    """WATTLAB_ERR_UNKNOWN_WINDOW: a window id the meter never handed out, or whose result is gone."""


class StoreError(WattlabError, OSError):
    """WATTLAB_ERR_STORE: the SQLite store failed."""


class ForkedError(WattlabError, RuntimeError):
    """WATTLAB_ERR_FORKED: the meter belongs to the parent process; in a forked child it is inert."""


class NotVirtualError(WattlabError, RuntimeError):
    """WATTLAB_ERR_NOT_VIRTUAL: advance() on a meter that runs on real time."""


class EndedError(WattlabError, RuntimeError):
    """WATTLAB_ERR_ENDED: the meter was closed."""


class LibraryNotFoundError(ImportError):
    """libwattlab.so was not found; the message names every place looked at."""


_ERRORS = {1: InvalidArgumentError, 2: UnknownDeviceError, 3: NoDeviceError, 4: UnknownWindowError,
           5: StoreError, 6: ForkedError, 7: NotVirtualError, 8: EndedError}


def _candidates():
    """Where libwattlab.so may be, in the order looked at: (description, path or soname)."""
    out = []
    env = os.environ.get("WATTLAB_LIBRARY")
    if env:
        if os.path.isdir(env):
            out += [("WATTLAB_LIBRARY", os.path.join(env, n)) for n in _SONAMES]
        else:
            out.append(("WATTLAB_LIBRARY", env))
        return out  # an explicit choice is the only one tried
    here = os.path.dirname(os.path.abspath(__file__))
    out += [("next to the package", os.path.join(here, n)) for n in _SONAMES]
    # A source checkout: python/wattlab/ -> build/<preset>/src/capi/, the newest build first.
    root = os.path.dirname(os.path.dirname(here))
    built = glob.glob(os.path.join(root, "build", "*", "src", "capi", "libwattlab.so.1"))
    built.sort(key=lambda p: os.path.getmtime(p), reverse=True)
    out += [("build tree", p) for p in built]
    if not built:
        out.append(("build tree", os.path.join(root, "build", "*", "src", "capi", "libwattlab.so.1")))
    found = ctypes.util.find_library("wattlab")
    if found:
        out.append(("system (ldconfig)", found))
    out += [("system (dlopen search path)", n) for n in _SONAMES]
    return out


_lock = threading.Lock()
_lib = None
_path = None


def library_path():
    """The path of the libwattlab.so in use (loading it if needed)."""
    load()
    return _path


def load():
    """The loaded library, with prototypes set. Raises LibraryNotFoundError naming where it looked."""
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for where, path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(f"{where}: {path} (not there)")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{where}: {path} ({e})")
                continue
            _declare(lib)
            version = lib.wattlab_api_version()
            if version < API_VERSION:
                tried.append(f"{where}: {path} (C API version {version}, this package needs {API_VERSION})")
                continue
            _lib, _path = lib, path
            return lib
        raise LibraryNotFoundError(
            "libwattlab.so not found; set WATTLAB_LIBRARY to its path, or build it "
            "(cmake --preset release && cmake --build build/release --target wattlab_shared; a build with "
            "the sanitizers, such as the ci preset's, loads only with their runtime preloaded). Looked at:\n  "
            + "\n  ".join(tried))


def check(lib, status):
    """Raises the exception of a failed call, carrying the C library's message."""
    if status == 0:
        return
    message = lib.wattlab_last_error().decode("utf-8", "replace")
    name = lib.wattlab_status_name(status).decode()
    raise _ERRORS.get(status, WattlabError)(message, name, status)


def _declare(lib):
    c = ctypes
    P = c.c_void_p
    st = c.c_int
    sz = c.c_size_t
    u64 = c.c_uint64
    i64 = c.c_int64
    s = c.c_char_p
    protos = {
        "wattlab_api_version": (c.c_int, []),
        "wattlab_version": (s, []),
        "wattlab_last_error": (s, []),
        "wattlab_status_name": (s, [c.c_int]),
        "wattlab_issue_code_name": (s, [c.c_int]),
        "wattlab_telemetry_name": (s, [c.c_int]),
        "wattlab_telemetry_count": (c.c_int, []),
        "wattlab_options_new": (st, [c.POINTER(P)]),
        "wattlab_options_free": (None, [P]),
        "wattlab_options_set_devices": (st, [P, s]),
        "wattlab_options_set_gpus": (st, [P, s]),
        "wattlab_options_set_cpu": (st, [P, c.c_int]),
        "wattlab_options_set_sim_seed": (st, [P, u64]),
        "wattlab_options_set_sim_gpus": (st, [P, c.c_int]),
        "wattlab_options_set_sim_workload": (st, [P, s]),
        "wattlab_options_set_sim_gain_error": (st, [P, c.c_double]),
        "wattlab_options_set_db": (st, [P, s]),
        "wattlab_options_add_command_arg": (st, [P, s]),
        "wattlab_options_set_tag": (st, [P, s, s]),
        "wattlab_options_set_virtual_clock": (st, [P, i64]),
        "wattlab_meter_open": (st, [P, c.POINTER(P)]),
        "wattlab_meter_close": (st, [P, c.c_int]),
        "wattlab_meter_simulated": (c.c_int, [P]),
        "wattlab_meter_run_id": (st, [P, c.POINTER(i64)]),
        "wattlab_meter_domain_count": (sz, [P]),
        "wattlab_meter_domain_id": (s, [P, sz]),
        "wattlab_meter_domain_parent": (s, [P, sz]),
        "wattlab_meter_note_count": (sz, [P]),
        "wattlab_meter_note": (sz, [P, sz, c.c_char_p, sz]),
        "wattlab_meter_now_ns": (st, [P, c.POINTER(i64)]),
        "wattlab_meter_advance": (st, [P, i64]),
        "wattlab_window_open": (st, [P, s, c.POINTER(u64)]),
        "wattlab_window_close": (st, [P, u64]),
        "wattlab_window_count": (st, [P, u64, s, c.c_double]),
        "wattlab_window_label": (st, [P, u64, s, s]),
        "wattlab_window_result": (st, [P, u64, c.POINTER(P)]),
        "wattlab_window_wait": (st, [P, u64, i64, c.POINTER(P)]),
        "wattlab_result_free": (None, [P]),
        "wattlab_result_id": (u64, [P]),
        "wattlab_result_name": (s, [P]),
        "wattlab_result_t_begin_ns": (i64, [P]),
        "wattlab_result_t_end_ns": (i64, [P]),
        "wattlab_result_dur_s": (c.c_double, [P]),
        "wattlab_result_final": (c.c_int, [P]),
        "wattlab_result_simulated": (c.c_int, [P]),
        "wattlab_result_count_count": (sz, [P]),
        "wattlab_result_count_key": (s, [P, sz]),
        "wattlab_result_count_value": (c.c_double, [P, sz]),
        "wattlab_result_label_count": (sz, [P]),
        "wattlab_result_label_key": (s, [P, sz]),
        "wattlab_result_label_value": (s, [P, sz]),
        "wattlab_result_domain_count": (sz, [P]),
        "wattlab_result_domain_id": (s, [P, sz]),
        "wattlab_result_domain_simulated": (c.c_int, [P, sz]),
        "wattlab_result_available": (c.c_int, [P, sz]),
        "wattlab_result_energy_j": (c.c_double, [P, sz]),
        "wattlab_result_uncertainty_j": (c.c_double, [P, sz]),
        "wattlab_result_systematic_j": (c.c_double, [P, sz]),
        "wattlab_result_mean_power_w": (c.c_double, [P, sz]),
        "wattlab_result_peak_power_w": (c.c_double, [P, sz]),
        "wattlab_result_estimator": (s, [P, sz]),
        "wattlab_result_cross_check_j": (c.c_double, [P, sz]),
        "wattlab_result_readings_used": (sz, [P, sz]),
        "wattlab_result_issue_count": (sz, [P, sz]),
        "wattlab_result_issue_code": (c.c_int, [P, sz, sz]),
        "wattlab_result_issue_text": (s, [P, sz, sz]),
        "wattlab_result_telemetry": (c.c_int, [P, sz, c.c_int, c.POINTER(c.c_double)]),
    }
    for name, (restype, argtypes) in protos.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
