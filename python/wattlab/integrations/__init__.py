"""wattlab in the frameworks' own loops (docs/python.md): a Hugging Face Trainer callback
(`wattlab.integrations.transformers.WattlabTrainerCallback`), a PyTorch Lightning callback
(`wattlab.integrations.lightning.WattlabLightningCallback`) and `measure_generate`, the energy per
token of a generate() call. None of them needs its framework to import: each module looks for it
only when it is imported itself, and this package imports neither until one of the callbacks is
asked for."""
from ._framework import default_sync
from .generate import Generation, count_new_tokens, measure_generate

__all__ = ["measure_generate", "count_new_tokens", "Generation", "default_sync", "WattlabTrainerCallback",
           "WattlabLightningCallback"]

_LAZY = {"WattlabTrainerCallback": ".transformers", "WattlabLightningCallback": ".lightning"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
