"""wattlab marks client (stdlib only): windows and counts for `wattlab run --marks -- CMD`.

Under `wattlab run --marks` each call writes one JSON line to the pipe named by the
WATTLAB_MARKS_FD environment variable (protocol: docs/marks.md); without it, every call is a
no-op, so a script can keep its marks when it runs on its own.

    import wattlab_marks as marks
    marks.tag(model="llama-8b", batch=8)
    with marks.window("decode b8") as w:
        ...generate...
        w.count(tokens=8 * 128, requests=8)
"""
import json
import os
import select
import signal
import threading
import time

__all__ = ["enabled", "open", "close", "count", "tag", "window", "Window", "dropped"]

_lock = threading.Lock()
WAIT_S = 0.1  # longest wait for room in a full pipe (a slow or stopped reader), then the mark is dropped
_dropped = 0  # marks not sent (reader gone, stopped or too slow)
_dropping = False  # the last mark was dropped: the next one does not wait (one wait per stall, not per mark)


def _fd():
    s = os.environ.get("WATTLAB_MARKS_FD", "")
    try:
        fd = int(s)
    except ValueError:
        return None
    return fd if fd >= 0 else None


_FD = _fd()


def enabled():
    """True when this process runs under `wattlab run --marks`."""
    return _FD is not None


def dropped():
    """How many marks of this process were not sent (the reader gone, stopped or too slow)."""
    return _dropped


def _write_line(fd, line, wait_s=WAIT_S):
    """Writes one line without hurting the caller: never raises SIGPIPE (blocked on this thread for
    the write, a pending one taken back) and waits at most WAIT_S for room. False if not sent."""
    pipe_only = {signal.SIGPIPE}
    was_pending = signal.SIGPIPE in signal.sigpending()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, pipe_only)
    ok = True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        view = memoryview(line)
        while view:
            events = poller.poll(wait_s * 1000)
            if not events or events[0][1] & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                ok = False
                break
            n = os.write(fd, view)
            view = view[n:]
    except OSError:
        ok = False  # marks are best effort: a closed channel never breaks the workload
    finally:
        if not ok and not was_pending:
            while signal.sigtimedwait(pipe_only, 0) is not None:
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return ok


def _send(obj):
    if _FD is None:
        return False
    obj.setdefault("t_ns", time.monotonic_ns())  # CLOCK_MONOTONIC on Linux: wattlab's clock
    line = (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode()
    global _dropped, _dropping
    with _lock:  # one os.write per line: lines of <= 4096 bytes never interleave in a pipe
        ok = _write_line(_FD, line, 0 if _dropping else WAIT_S)
        _dropping = not ok
        if not ok:
            _dropped += 1
        return ok


def _num(counts):
    return {k: float(v) for k, v in counts.items()}


def _text(d):
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in d.items()}


def open(name, **labels):  # noqa: A001 - the protocol's verb
    """Opens window `name` now; keyword arguments become its labels."""
    obj = {"op": "open", "name": name}
    if labels:
        obj["labels"] = _text(labels)
    return _send(obj)


def close(name, **counts):
    """Closes the innermost open window `name`, adding the given counts."""
    obj = {"op": "close", "name": name}
    if counts:
        obj["counts"] = _num(counts)
    return _send(obj)


def count(name=None, **counts):
    """Adds counts to the open window `name` (to every open window when name is None)."""
    obj = {"op": "count", "counts": _num(counts)}
    if name is not None:
        obj["name"] = name
    return _send(obj)


def tag(name=None, **tags):
    """Run tags (model=..., batch=...), or labels of the open window `name`."""
    obj = {"op": "tag", "tags": _text(tags)}
    if name is not None:
        obj["name"] = name
    return _send(obj)


class Window:
    """Context manager: opens on enter, closes with the gathered counts on exit."""

    def __init__(self, name, **labels):
        self.name = name
        self.labels = labels
        self.counts = {}

    def count(self, **counts):
        for k, v in counts.items():
            self.counts[k] = self.counts.get(k, 0.0) + float(v)

    def __enter__(self):
        open(self.name, **self.labels)
        return self

    def __exit__(self, *exc):
        close(self.name, **self.counts)
        return False


def window(name, **labels):
    return Window(name, **labels)
