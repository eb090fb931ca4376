"""A Hugging Face transformers Trainer callback: a wattlab window per optimizer step (on_step_begin to
on_step_end, gradient-accumulation substeps included) and per epoch, whose energies with their 95 %
uncertainty go into the Trainer's logs (docs/python.md, "Hugging Face Trainer").

    from wattlab.integrations.transformers import WattlabTrainerCallback
    trainer = Trainer(model=model, args=args, train_dataset=data)
    cb = WattlabTrainerCallback(devices="auto").attach(trainer)   # first, so reporters see its keys
    trainer.train()
    print(cb.steps[-1], cb.epochs[-1])

Importing this module does not need transformers: the callback subclasses transformers.TrainerCallback
where transformers imports, else a base whose every hook does nothing (the Trainer calls hooks by name).
"""
import math

from ._framework import DEFAULT_SYNC, NoopHooks, first_importable
from ._ledger import total
from ._training import TrainingWindows

__all__ = ["WattlabTrainerCallback"]

_Base = first_importable(("transformers", "TrainerCallback")) or NoopHooks


def _epoch_index(state):
    """The 0-based index of the epoch starting now (state.epoch counts the epochs done, as a float)."""
    return int(math.floor((getattr(state, "epoch", None) or 0.0) + 1e-9))


class WattlabTrainerCallback(_Base):
    """Puts per-step and per-epoch energy into the Trainer's logs.

    At each log (`on_log`) it adds, over the steps whose results became final since the previous log:
    `energy_j` (their energy, J), `energy_u95_j` (its 95 % uncertainty, the steps' added in quadrature),
    `energy_steps` (how many steps), `energy_per_step_j` and `energy_last_step` (the newest global step
    included); and for the newest epoch final since then `energy_epoch_j`, `energy_epoch_u95_j` and
    `energy_epoch` (that epoch's number, 1 for the first). On the simulated GPU `energy_simulated` is
    True. A result is final a second or two after its window closed, so a log covers the steps up to
    a second or two before it; once training is over (the last step, or a stop) a log waits for every
    result (`final_wait_s` each), and so does `on_train_end`. The Trainer has no event for an
    exception out of train(): a meter the callback owns then ends its run when the process exits.

    meter: a wattlab.Meter to measure on (left open); None: one is opened at on_train_begin with
    `meter_options` (devices="auto", db=...) and closed at on_train_end. sync: called before each
    window edge (default: torch.cuda.synchronize where CUDA is available). log_wait_s: how long a log
    during training waits for each pending result (0: only what is final already). Only the local
    main process (state.is_local_process_zero) measures: one meter per machine sees all its GPUs.
    `steps` and `epochs` are every window's record (plain dicts, `final` False for a result that
    never became final), whatever was logged."""

    def __init__(self, meter=None, *, sync=DEFAULT_SYNC, log_wait_s=0.0, final_wait_s=10.0, **meter_options):
        self._windows = TrainingWindows(meter, sync, meter_options)
        self.log_wait_s = log_wait_s
        self.final_wait_s = final_wait_s
        self._unlogged_steps = []
        self._unlogged_epochs = []

    @property
    def meter(self):
        return self._windows.meter

    @property
    def steps(self):
        return self._windows.steps

    @property
    def epochs(self):
        return self._windows.epochs

    def attach(self, trainer):
        """Adds this callback to `trainer` ahead of its other callbacks, so that the reporting
        integrations (TensorBoard, W&B, ...) and the progress printer, which the Trainer adds before
        any callback of the user's, see the energy keys in the same log. Returns self."""
        callbacks = getattr(getattr(trainer, "callback_handler", None), "callbacks", None)
        if isinstance(callbacks, list):
            callbacks.insert(0, self)
        else:  # a Trainer that keeps its callbacks otherwise: after the others, the keys still reach log_history
            trainer.add_callback(self)
        return self

    # ---- the Trainer's events ----
    def on_train_begin(self, args, state, control, **kwargs):
        if getattr(state, "is_local_process_zero", True):
            self._windows.start()

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._windows.open_epoch(_epoch_index(state))

    def on_step_begin(self, args, state, control, **kwargs):
        self._windows.open_step()

    def on_step_end(self, args, state, control, **kwargs):
        self._windows.close_step(state.global_step)

    def on_epoch_end(self, args, state, control, **kwargs):
        self._windows.close_epoch(state.global_step)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not self._windows.active:
            return
        over = control.should_training_stop or (state.max_steps > 0 and state.global_step >= state.max_steps)
        steps, epochs = self._windows.take(self.final_wait_s if over else (self.log_wait_s or None))
        self._unlogged_steps += steps
        self._unlogged_epochs += epochs
        keys = self._log_keys()
        if logs is None or not keys:
            return
        # The Trainer appended its copy of these logs to log_history just before this event.
        history = getattr(state, "log_history", None)
        if history and history[-1].get("step") == state.global_step and all(
                history[-1].get(k) == v for k, v in logs.items()):
            history[-1].update(keys)
        logs.update(keys)

    def on_train_end(self, args, state, control, **kwargs):
        steps, epochs = self._windows.finish(state.global_step, self.final_wait_s)
        self._unlogged_steps += steps
        self._unlogged_epochs += epochs

    # ---- logs ----
    def _log_keys(self):
        """The energy keys of the records not logged yet (emptied once used)."""
        keys = {}
        energy_j, u95_j, n = total(self._unlogged_steps)
        if n:
            keys.update(energy_j=energy_j, energy_u95_j=u95_j, energy_steps=n, energy_per_step_j=energy_j / n,
                        energy_last_step=max(r["step"] for r in self._unlogged_steps if r["energy_j"] is not None))
        measured = [r for r in self._unlogged_epochs if r["energy_j"] is not None]
        if measured:
            newest = measured[-1]
            keys.update(energy_epoch_j=newest["energy_j"], energy_epoch_u95_j=newest["energy_u95_j"],
                        energy_epoch=newest["epoch"] + 1)
        if any(r["simulated"] for r in self._unlogged_steps + self._unlogged_epochs):
            keys["energy_simulated"] = True
        self._unlogged_steps, self._unlogged_epochs = [], []
        return keys
