"""wattlab.Meter: measure the energy of code regions from inside a Python program (docs/python.md).

    m = wattlab.Meter(devices="auto", db="runs.db")
    with m.window("step", sync=torch.cuda.synchronize) as w:
        train_step()
        w.count(tokens=4096)
    print(w.result)                     # waits (at most ~1 s) for the final result

Opening and closing a window record a timestamp in C++ and return; the sampler is a C++ thread that
runs outside the GIL. A meter opened before os.fork() is inert in the child (ForkedError).
"""
import atexit
import collections
import ctypes
import functools
import sys
import threading
import weakref

from . import _lib
from .result import Result

_DEFAULT_TIMEOUT_S = 10.0
# Windows whose results Meter.windows() can list: the meter keeps this many finished results.
_KEPT_WINDOWS = 1 << 16

_open_meters = weakref.WeakSet()


@atexit.register
def _close_at_exit():
    for m in list(_open_meters):
        m._close_quietly(0)


def _device_options(lib, o, devices, gpus):
    """Applies `devices` ("auto", "sim", "nvml", "rapl", GPU indices as ints or "0,1") and `gpus`."""
    if isinstance(devices, int) and not isinstance(devices, bool):
        devices = [devices]
    if isinstance(devices, (list, tuple)):
        gpus = [str(g) for g in devices]
        devices = "nvml"
    elif isinstance(devices, str) and devices and all(p.strip().isdigit() for p in devices.split(",")):
        gpus = [p.strip() for p in devices.split(",")]
        devices = "nvml"
    if not isinstance(devices, str):
        raise TypeError(f"devices must be a string or GPU indices, not {type(devices).__name__}")
    _lib.check(lib, lib.wattlab_options_set_devices(o, devices.encode()))
    if gpus is not None:
        if isinstance(gpus, (str, int)):
            gpus = [gpus]
        _lib.check(lib, lib.wattlab_options_set_gpus(o, ",".join(str(g) for g in gpus).encode()))


class Window:
    """A named window of a Meter. `with m.window("step") as w:` opens it on entry and closes it on exit;
    `w.count(tokens=n)` adds counts, `w.label(phase="decode")` sets labels, `w.result` is its result."""

    __slots__ = ("_meter", "name", "id", "_sync", "_result", "__weakref__")

    def __init__(self, meter, name, sync=None):
        self._meter = meter
        self.name = name
        self.id = None
        self._sync = sync
        self._result = None

    def open(self):
        if self.id is not None:
            raise RuntimeError(f"window {self.name!r} is already open (id {self.id})")
        self.id = self._meter._open(self.name, self._sync)
        return self

    def close(self):
        if self.id is None:
            raise RuntimeError(f"window {self.name!r} was never opened")
        self._meter._close(self.id, self._sync)
        return self

    def __enter__(self):
        return self.open()

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def count(self, **counts):
        """Adds each count ("tokens", "requests", "images"...) to the window's counts."""
        for key, n in counts.items():
            self._meter._count(self._id(), key, n)

    def label(self, **labels):
        """Sets labels of the window (their values as text)."""
        for key, value in labels.items():
            self._meter._label(self._id(), key, value)

    def _id(self):
        if self.id is None:
            raise RuntimeError(f"window {self.name!r} was never opened")
        return self.id

    def wait(self, timeout_s=_DEFAULT_TIMEOUT_S):
        """The result, waiting up to timeout_s for the final one (else the provisional one: final False)."""
        r = self._meter.result(self._id(), timeout_s)
        if r.final:
            self._result = r
        return r

    @property
    def result(self):
        """The final result (waits up to 10 s; a provisional one, final False, after that)."""
        if self._result is not None:
            return self._result
        return self.wait()

    def provisional(self):
        """The result now, final or not, without waiting."""
        return self._meter.result(self._id(), None)

    def __repr__(self):
        return f"<wattlab.Window {self.name!r} id={self.id}>"


class Meter:
    """A meter over libwattlab.so: devices="auto" | "sim" | "nvml" | "rapl" | GPU indices ([0, 1]);
    db: a SQLite file the run is stored in (None: store nothing). virtual_clock (tests): a start time
    in ns; time then moves only with advance(). Close it (or use `with Meter() as m:`) to end the run
    with a status; one still open at interpreter exit ends with status 0."""

    def __init__(self, devices="auto", db=None, *, gpus=None, cpu=True, sim_seed=None, sim_gpus=None,
                 sim_workload=None, sim_gain_error=None, command=None, tags=None, virtual_clock=None):
        lib = _lib.load()
        self._lib = lib
        self._h = None
        o = ctypes.c_void_p()
        _lib.check(lib, lib.wattlab_options_new(ctypes.byref(o)))
        try:
            _device_options(lib, o, devices, gpus)
            _lib.check(lib, lib.wattlab_options_set_cpu(o, 1 if cpu else 0))
            if sim_seed is not None:
                _lib.check(lib, lib.wattlab_options_set_sim_seed(o, int(sim_seed)))
            if sim_gpus is not None:
                _lib.check(lib, lib.wattlab_options_set_sim_gpus(o, int(sim_gpus)))
            if sim_workload is not None:
                _lib.check(lib, lib.wattlab_options_set_sim_workload(o, sim_workload.encode()))
            if sim_gain_error is not None:
                _lib.check(lib, lib.wattlab_options_set_sim_gain_error(o, float(sim_gain_error)))
            if db is not None:
                _lib.check(lib, lib.wattlab_options_set_db(o, str(db).encode()))
            for arg in (command if command is not None else [sys.executable] + sys.argv):
                _lib.check(lib, lib.wattlab_options_add_command_arg(o, str(arg).encode()))
            for k, v in (tags or {}).items():
                _lib.check(lib, lib.wattlab_options_set_tag(o, str(k).encode(), str(v).encode()))
            if virtual_clock is not None:
                _lib.check(lib, lib.wattlab_options_set_virtual_clock(o, int(virtual_clock)))
            h = ctypes.c_void_p()
            _lib.check(lib, lib.wattlab_meter_open(o, ctypes.byref(h)))
        finally:
            lib.wattlab_options_free(o)
        self._h = h
        self._closed = False
        self._lock = threading.Lock()
        self._names = {}  # name -> bytes, so a window's name is encoded once
        self._ids = collections.deque(maxlen=_KEPT_WINDOWS)  # windows opened here, for windows()
        self._wid = threading.local()
        n = lib.wattlab_meter_domain_count(h)
        self.domains = [lib.wattlab_meter_domain_id(h, i).decode() for i in range(n)]
        self._parents = {d: lib.wattlab_meter_domain_parent(h, i).decode() for i, d in enumerate(self.domains)}
        self.simulated = bool(lib.wattlab_meter_simulated(h))
        rid = ctypes.c_int64()
        _lib.check(lib, lib.wattlab_meter_run_id(h, ctypes.byref(rid)))
        self.run_id = rid.value or None
        # Bound C functions of the hot path.
        self._c_open = lib.wattlab_window_open
        self._c_close = lib.wattlab_window_close
        _open_meters.add(self)

    # ---- windows ----
    def window(self, name, sync=None):
        """A window to use with `with`: opened on entry, closed on exit. `sync` (for example
        torch.cuda.synchronize) is called before each edge so that queued GPU work is inside."""
        return Window(self, name, sync)

    def open(self, name, sync=None):
        """Opens a window now and returns it; close it with w.close() (from any thread)."""
        return Window(self, name, sync).open()

    def measure(self, name=None, sync=None):
        """A decorator: each call of the function is one window (named after it unless `name`)."""
        def wrap(fn):
            label = name or getattr(fn, "__qualname__", getattr(fn, "__name__", "call"))

            @functools.wraps(fn)
            def measured(*args, **kwargs):
                with self.window(label, sync):
                    return fn(*args, **kwargs)
            return measured
        if callable(name):  # @m.measure without parentheses
            fn, name = name, None
            return wrap(fn)
        return wrap

    def _open(self, name, sync):
        b = self._names.get(name)
        if b is None:
            if not isinstance(name, str):
                raise TypeError(f"a window name is a string, not {type(name).__name__}")
            if len(self._names) >= 4096:  # names made per call ("step 17") must not pile up
                self._names.clear()
            b = self._names[name] = name.encode()
        if sync is not None:
            sync()
        wid = getattr(self._wid, "v", None)
        if wid is None:
            wid = self._wid.v = ctypes.c_uint64()
        st = self._c_open(self._h, b, ctypes.byref(wid))
        if st:
            self._fail(st)
        self._ids.append(wid.value)
        return wid.value

    def _close(self, wid, sync):
        if sync is not None:
            sync()
        st = self._c_close(self._h, wid)
        if st:
            self._fail(st)

    def _fail(self, status):
        if self._closed:
            raise _lib.EndedError("the meter is closed", "WATTLAB_ERR_ENDED", 8)
        _lib.check(self._lib, status)

    def _count(self, wid, key, n):
        st = self._lib.wattlab_window_count(self._h, wid, str(key).encode(), float(n))
        if st:
            self._fail(st)

    def _label(self, wid, key, value):
        st = self._lib.wattlab_window_label(self._h, wid, str(key).encode(), str(value).encode())
        if st:
            self._fail(st)

    def result(self, window_id, timeout_s=_DEFAULT_TIMEOUT_S):
        """The result of a window by id: waits up to timeout_s for the final one; None: now, no wait."""
        lib = self._lib
        h = ctypes.c_void_p()
        if timeout_s is None:
            st = lib.wattlab_window_result(self._h, window_id, ctypes.byref(h))
        else:
            st = lib.wattlab_window_wait(self._h, window_id, max(0, int(timeout_s * 1000)), ctypes.byref(h))
        if st:
            self._fail(st)
        try:
            return Result._from_handle(lib, h, self._parents)
        finally:
            lib.wattlab_result_free(h)

    def windows(self, timeout_s=None):
        """Every window opened through this meter (the newest 65536), one flat dict per window and
        domain: `pandas.DataFrame(m.windows())` as it is. timeout_s: wait that long for each final
        result (None: take each as it is now; `final` says which)."""
        rows = []
        for wid in list(self._ids):
            try:
                rows += self.result(wid, timeout_s).rows()
            except _lib.UnknownWindowError:
                continue  # its result was dropped (older than the meter keeps)
        return rows

    # ---- the meter ----
    @property
    def notes(self):
        """What the meter noted: backends that did not load, a sensor slow to answer, store errors."""
        lib = self._lib
        out = []
        for i in range(lib.wattlab_meter_note_count(self._h)):
            n = lib.wattlab_meter_note(self._h, i, None, 0)
            buf = ctypes.create_string_buffer(n + 1)
            lib.wattlab_meter_note(self._h, i, buf, n + 1)
            out.append(buf.value.decode("utf-8", "replace"))
        return out

    def now_ns(self):
        """The meter's clock (CLOCK_MONOTONIC ns on real time, as time.monotonic_ns())."""
        t = ctypes.c_int64()
        st = self._lib.wattlab_meter_now_ns(self._h, ctypes.byref(t))
        if st:
            self._fail(st)
        return t.value

    def advance(self, seconds):
        """Virtual clock only (tests): move time forward, sampling on the way."""
        st = self._lib.wattlab_meter_advance(self._h, int(round(seconds * 1e9)))
        if st:
            self._fail(st)

    def close(self, status=0):
        """Ends the run with `status` (windows still open end now; each final result is stored) and
        stops the sampler. Closing again does nothing. In a forked child: ForkedError."""
        with self._lock:
            if self._closed:
                return
            st = self._lib.wattlab_meter_close(self._h, int(status))
            if st == 6:  # WATTLAB_ERR_FORKED: the parent's meter stays the parent's
                _lib.check(self._lib, st)
            self._closed = True
            self._h = ctypes.c_void_p()  # NULL: a call after close fails instead of touching freed memory
            _open_meters.discard(self)
            _lib.check(self._lib, st)

    def _close_quietly(self, status):
        try:
            self.close(status)
        except _lib.WattlabError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(0 if exc_type is None else 1)
        return False

    def __del__(self):
        if getattr(self, "_h", None) is not None and not getattr(self, "_closed", True):
            self._close_quietly(0)

    def __repr__(self):
        tag = " SIMULATED" if self.simulated else ""
        return f"<wattlab.Meter {', '.join(self.domains)}{tag}>"
