"""The windows of a training run, shared by the framework callbacks: one window per optimizer step and
one per epoch on a wattlab Meter (the caller's, or one opened at the start of training and closed at
its end), the sync at their edges, and their results as records once final."""
from ..meter import Meter
from ._framework import resolve_sync
from ._ledger import Ledger


class TrainingWindows:
    """Step and epoch windows of one training run. `meter`: a wattlab.Meter to measure on (left open
    at the end); None: one is opened with `meter_options` when training starts and closed when it
    ends. `sync` is called before each edge. `steps` and `epochs` are the records taken so far."""

    def __init__(self, meter, sync, meter_options, step_name="train/step", epoch_name="train/epoch"):
        self.meter = meter
        self._owned = meter is None
        self._meter_options = dict(meter_options)
        self._meter_options.setdefault("devices", "auto")
        self._sync = resolve_sync(sync)
        self._names = (step_name, epoch_name)
        self._ledger = None
        self._step = None  # the open step window and its epoch
        self._epoch = None  # the open epoch window and its index
        self.steps = []
        self.epochs = []

    @property
    def active(self):
        return self._ledger is not None

    def start(self):
        """Opens the meter if this run owns one; from here on windows are measured."""
        if self.meter is None:
            self.meter = Meter(**self._meter_options)
        self._ledger = Ledger()

    @property
    def step_open(self):
        return self._step is not None

    def open_step(self, epoch=None):
        """Opens a step window in `epoch` (None: the open epoch's)."""
        if not self.active:
            return
        if self._step is not None:
            raise RuntimeError(f"a step window is already open (epoch {self._step[1]}): the hooks came out of order")
        if epoch is None:
            epoch = self._epoch[1] if self._epoch is not None else 0
        self._step = (self.meter.open(self._names[0], self._sync), epoch)

    def close_step(self, step, **counts):
        """Closes the open step window, ending at global step `step`; counts go on the window."""
        if not self.active or self._step is None:
            return
        window, epoch = self._step
        self._step = None
        window.close()
        window.label(step=step, epoch=epoch)
        if counts:
            window.count(**counts)
        self._ledger.add(window, "step", step, epoch)

    def open_epoch(self, epoch):
        if not self.active:
            return
        if self._epoch is not None:
            raise RuntimeError(f"epoch {self._epoch[1]}'s window is still open: the hooks came out of order")
        self._epoch = (self.meter.open(self._names[1], self._sync), epoch)

    def close_epoch(self, step):
        """Closes the open epoch window (and a step window left open in it), ending at global step `step`."""
        if not self.active:
            return
        self.close_step(step)
        if self._epoch is None:
            return
        window, epoch = self._epoch
        self._epoch = None
        window.close()
        window.label(epoch=epoch)
        self._ledger.add(window, "epoch", step, epoch)

    def take(self, wait_s=None):
        """The step and epoch records final now (waiting up to wait_s for each; None: not at all),
        as two lists, also added to `steps` and `epochs`."""
        if not self.active:
            return [], []
        return self._file(self._ledger.take(wait_s))

    def finish(self, step, wait_s, status=0):
        """Ends the run's measuring: closes the windows still open (ending at global step `step`),
        takes every record (waiting up to wait_s for each; after that a provisional one), closes an
        owned meter with `status`. Returns the step and epoch records not taken before."""
        if not self.active:
            return [], []
        self.close_epoch(step)
        new = self._file(self._ledger.take_all(wait_s))
        self._ledger = None
        if self._owned and self.meter is not None:
            self.meter.close(status)
            self.meter = None
        return new

    def _file(self, records):
        steps = [r for r in records if r["kind"] == "step"]
        epochs = [r for r in records if r["kind"] == "epoch"]
        self.steps += steps
        self.epochs += epochs
        return steps, epochs
