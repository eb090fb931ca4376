"""What the integrations need from the frameworks without depending on them: the sync that waits for
queued GPU work at a window's edges, and a callback base for when a framework is not installed."""
import importlib

# The `sync` argument's default: torch.cuda.synchronize where torch imports and sees CUDA.
DEFAULT_SYNC = object()


def default_sync():
    """torch.cuda.synchronize if torch imports and CUDA is available, else None (nothing to wait for).
    It waits for the current device's queued work, the device a training process drives."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    try:
        if torch.cuda.is_available():
            return torch.cuda.synchronize
    except (AttributeError, RuntimeError):
        pass  # a torch without CUDA support, or a driver that does not answer: nothing queued on a GPU
    return None


def resolve_sync(sync):
    """The sync to call at each edge: default_sync() for DEFAULT_SYNC, else `sync` (None: no sync)."""
    if sync is DEFAULT_SYNC:
        return default_sync()
    if sync is not None and not callable(sync):
        raise TypeError(f"sync must be callable or None, not {type(sync).__name__}")
    return sync


def _ignore(*args, **kwargs):
    return None


class NoopHooks:
    """The base of a callback whose framework is not installed: every hook the caller asks for
    (`on_*`, and Lightning's `setup` and `teardown`) exists and does nothing, so a caller that invokes
    hooks by name, as both Trainers do, works with the hooks a subclass defines and any others."""

    def __getattr__(self, name):
        if name.startswith("on_") or name in ("setup", "teardown"):
            return _ignore
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def first_importable(*candidates):
    """The first attribute that imports, each candidate a (module, attribute) pair; None if none do."""
    for module, attribute in candidates:
        try:
            return getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError):
            continue
    return None
