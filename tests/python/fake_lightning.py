"""A stand-in for PyTorch Lightning 2.x's fit loop, for testing callbacks where Lightning is not
installed: callback hooks called by name with (trainer, pl_module, *args) as
lightning.pytorch.trainer.call._call_callback_hooks does, pl_module._current_fx_name set to the hook
so that LightningModule.log accepts only the hooks Lightning allows it in, loggers with
log_metrics(metrics, step), and the hooks in the order fit() calls them:

    setup("fit"); on_fit_start; on_train_start; per epoch: on_train_epoch_start; per batch:
    (batch fetched) on_train_batch_start(batch, batch_idx), training_step, on_before_backward,
    on_after_backward, on the batch that completes an accumulation on_before_optimizer_step,
    optimizer step (global_step += 1), on_before_zero_grad; on_train_batch_end(outputs, batch,
    batch_idx); on_train_epoch_end; on_train_end; on_fit_end; teardown("fit").
    An exception in training calls on_exception(exception) and is raised again.

Time passes only where `advance(seconds)` is called: fetching a batch (`data_s`), its forward and
backward (`batch_s`), the optimizer step (`optimizer_s`), and the end-of-fit work between the last
on_train_epoch_end and on_train_end (`tail_s`: the last checkpoint, the loggers' save)."""

# Hooks from which LightningModule.log may be called (Lightning's _FxValidator), of those used here.
_LOG_ALLOWED = {"on_train_batch_start", "on_train_batch_end", "on_train_epoch_start", "on_train_epoch_end",
                "on_before_backward", "on_after_backward", "on_before_optimizer_step", "on_before_zero_grad"}


class MisconfigurationException(Exception):
    pass


class LightningModule:
    def __init__(self, fail_at_batch=None):
        self._current_fx_name = None
        self.logged = []  # (hook, name, value, options)
        self.fail_at_batch = fail_at_batch

    def log(self, name, value, **options):
        if self._current_fx_name not in _LOG_ALLOWED:
            raise MisconfigurationException(f"You can't `self.log()` inside `{self._current_fx_name}`")
        self.logged.append((self._current_fx_name, name, value, options))

    def training_step(self, batch, batch_idx):
        if batch_idx == self.fail_at_batch:
            raise RuntimeError("CUDA out of memory (test)")
        return {"loss": 1.0}


class CSVLogger:
    """Records what it is given: (step, metrics)."""

    def __init__(self):
        self.rows = []

    def log_metrics(self, metrics, step=None):
        self.rows.append((step, dict(metrics)))


class Trainer:
    def __init__(self, callbacks=(), loggers=(), max_epochs=1, batches_per_epoch=4, accumulate_grad_batches=1,
                 advance=lambda seconds: None, data_s=0.0, batch_s=0.1, optimizer_s=0.0, tail_s=0.0, local_rank=0):
        self.callbacks = list(callbacks)
        self.loggers = list(loggers)
        self.logger = self.loggers[0] if self.loggers else None
        self.max_epochs = max_epochs
        self.num_training_batches = batches_per_epoch
        self.accumulate_grad_batches = accumulate_grad_batches
        self.advance = advance
        self.times = dict(data_s=data_s, batch_s=batch_s, optimizer_s=optimizer_s, tail_s=tail_s)
        self.local_rank = local_rank
        self.global_rank = local_rank
        self.global_step = 0
        self.current_epoch = 0
        self.lightning_module = None

    def _call(self, hook, *args):
        pl_module = self.lightning_module
        previous, pl_module._current_fx_name = pl_module._current_fx_name, hook
        try:
            for cb in self.callbacks:
                fn = getattr(cb, hook)
                if callable(fn):
                    fn(self, pl_module, *args)
        finally:
            pl_module._current_fx_name = previous

    def fit(self, model):
        self.lightning_module = model
        self._call("setup", "fit")
        try:
            self._call("on_fit_start")
            self._call("on_train_start")
            for epoch in range(self.max_epochs):
                self.current_epoch = epoch
                self._call("on_train_epoch_start")
                for batch_idx in range(self.num_training_batches):
                    self._batch(model, batch_idx)
                self._call("on_train_epoch_end")
            self.advance(self.times["tail_s"])
            self._call("on_train_end")
        except Exception as e:
            self._call("on_exception", e)
            raise
        self._call("on_fit_end")
        self._call("teardown", "fit")

    def _batch(self, model, batch_idx):
        self.advance(self.times["data_s"])
        batch = [batch_idx] * 4
        self._call("on_train_batch_start", batch, batch_idx)
        self.advance(self.times["batch_s"])
        outputs = model.training_step(batch, batch_idx)
        self._call("on_before_backward", outputs["loss"])
        self._call("on_after_backward")
        last = batch_idx + 1 == self.num_training_batches
        if (batch_idx + 1) % self.accumulate_grad_batches == 0 or last:
            self._call("on_before_optimizer_step", "optimizer")
            self.advance(self.times["optimizer_s"])
            self.global_step += 1
            self._call("on_before_zero_grad", "optimizer")
        self._call("on_train_batch_end", outputs, batch, batch_idx)
