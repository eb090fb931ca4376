"""A PyTorch Lightning callback: a wattlab window per optimizer step (from on_train_batch_start to the
on_train_batch_end after which trainer.global_step moved: one batch, or the batches of one gradient
accumulation) and per training epoch, whose energies with their 95 % uncertainty go to the
Trainer's loggers at the step Lightning logs that step's own metrics at (docs/python.md,
"PyTorch Lightning").

    from wattlab.integrations.lightning import WattlabLightningCallback
    trainer = L.Trainer(max_epochs=2, callbacks=[WattlabLightningCallback(devices="auto")])
    trainer.fit(model, loader)

Importing this module does not need Lightning: the callback subclasses lightning.pytorch.Callback
(or pytorch_lightning.Callback, whichever of the two is already imported, else whichever imports)
where one is there, else a base whose every hook does nothing.
"""
import sys

from ._framework import DEFAULT_SYNC, NoopHooks, first_importable
from ._ledger import total
from ._training import TrainingWindows

__all__ = ["WattlabLightningCallback"]


def _callback_base():
    candidates = [("lightning.pytorch", "Callback"), ("pytorch_lightning", "Callback")]
    # A program that drives pytorch_lightning.Trainer needs a pytorch_lightning.Callback, and the
    # other way round; the package it imported first is the one it uses.
    if "pytorch_lightning" in sys.modules and "lightning.pytorch" not in sys.modules:
        candidates.reverse()
    return first_importable(*candidates) or NoopHooks


_Base = _callback_base()


class WattlabLightningCallback(_Base):
    """Sends per-step and per-epoch energy to the Trainer's loggers (trainer.loggers), each at the step
    Lightning logs that step's or epoch's own metrics at: `energy_step_j` and `energy_step_u95_j` (its
    95 % uncertainty) of the n-th optimizer step at step n-1, as the step's loss; `energy_epoch_j`,
    `energy_epoch_u95_j` and `epoch` at the epoch's end (step = the optimizer steps done by then);
    `energy_simulated` 1.0 on the simulated GPU. A result is final a second or two after its window
    closed, so each batch end sends the results that became final since the previous one; at
    on_train_end it waits for the rest (`final_wait_s` each). With prog_bar=True the newest step's
    energy is also logged with pl_module.log (progress bar and callback_metrics only).

    meter: a wattlab.Meter to measure on (left open); None: one is opened at on_train_start with
    `meter_options` (devices="auto", db=...) and closed at on_train_end. sync: called before each
    window edge (default: torch.cuda.synchronize where CUDA is available). Only local rank 0
    measures: one meter per machine sees all its GPUs. `steps` and `epochs` hold every window's
    record (plain dicts) whatever was logged."""

    def __init__(self, meter=None, *, sync=DEFAULT_SYNC, prog_bar=False, log_wait_s=0.0, final_wait_s=10.0,
                 **meter_options):
        self._windows = TrainingWindows(meter, sync, meter_options)
        self.prog_bar = prog_bar
        self.log_wait_s = log_wait_s
        self.final_wait_s = final_wait_s
        self._step_at_open = None  # trainer.global_step when the open step window opened
        self._batches = 0  # batches in the open step window

    @property
    def meter(self):
        return self._windows.meter

    @property
    def steps(self):
        return self._windows.steps

    @property
    def epochs(self):
        return self._windows.epochs

    # ---- the Trainer's hooks ----
    def on_train_start(self, trainer, pl_module):
        if getattr(trainer, "local_rank", 0) == 0:
            self._windows.start()

    def on_train_epoch_start(self, trainer, pl_module):
        self._windows.open_epoch(trainer.current_epoch)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self._windows.active and not self._windows.step_open:
            self._windows.open_step(trainer.current_epoch)
            self._step_at_open = trainer.global_step
            self._batches = 0

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if not self._windows.active:
            return
        self._batches += 1
        if trainer.global_step != self._step_at_open:  # the optimizer stepped: the step is done
            self._windows.close_step(trainer.global_step, batches=self._batches)
        steps, epochs = self._windows.take(self.log_wait_s or None)
        self._send(trainer, steps, epochs)
        if self.prog_bar and steps and steps[-1]["energy_j"] is not None:
            pl_module.log("energy_step_j", steps[-1]["energy_j"], on_step=True, on_epoch=False,
                          prog_bar=True, logger=False)

    def on_train_epoch_end(self, trainer, pl_module):
        if not self._windows.active:
            return
        if self._windows.step_open:  # batches that never stepped the optimizer: their own step window
            self._windows.close_step(trainer.global_step, batches=self._batches)
        self._windows.close_epoch(trainer.global_step)
        self._send(trainer, *self._windows.take(self.log_wait_s or None))

    def on_train_end(self, trainer, pl_module):
        self._send(trainer, *self._windows.finish(trainer.global_step, self.final_wait_s))

    def on_exception(self, trainer, pl_module, exception):
        """Training failed: the open windows end now and their records are kept, without waiting."""
        self._windows.finish(trainer.global_step, 0, status=1)

    # ---- loggers ----
    @staticmethod
    def _send(trainer, steps, epochs):
        """Each final record to every logger at the step Lightning logs that step's (epoch's) own
        metrics at: the n-th optimizer step's at n-1 (the steps done before it), an epoch's at the
        steps done by its end."""
        loggers = list(getattr(trainer, "loggers", None) or [])
        if not loggers:
            return
        for r in steps + epochs:
            energy_j, u95_j, n = total([r])
            if not n or not r["final"]:  # a provisional energy stays in the records, marked so
                continue
            if r["kind"] == "step":
                metrics = {"energy_step_j": energy_j, "energy_step_u95_j": u95_j}
                at = max(r["step"] - 1, 0)
            else:
                metrics = {"energy_epoch_j": energy_j, "energy_epoch_u95_j": u95_j, "epoch": r["epoch"]}
                at = r["step"]
            if r["simulated"]:
                metrics["energy_simulated"] = 1.0
            for logger in loggers:
                logger.log_metrics(metrics, step=at)
