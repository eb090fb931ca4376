"""A stand-in for the training loop of transformers 5.x's Trainer, for testing callbacks where
transformers is not installed: TrainerState and TrainerControl with their fields, the
CallbackHandler's dispatch (events by name, args/state/control positional, the Trainer's objects as
keywords, a returned control replacing the old one, its per-event resets), DefaultFlowCallback's
decisions to log and stop, Trainer.log (log_history gets a copy, then on_log gets the dict), and
the events in the order Trainer.train calls them:

    on_init_end; on_train_begin; per epoch: on_epoch_begin; per optimizer step: (batches fetched)
    on_step_begin, per batch but the last on_substep_end, on_pre_optimizer_step, on_optimizer_step,
    global_step += 1, on_step_end, log if should_log; on_epoch_end, log if should_log;
    then the training summary log; on_train_end.

Time passes only where `advance(seconds)` is called (a wattlab virtual clock, or time.sleep): fetching
each step's batches (`data_s`), each batch's forward and backward (`batch_s`), the optimizer step
(`optimizer_s`), and the end-of-training work before the summary log (`tail_s`)."""
import dataclasses


@dataclasses.dataclass
class TrainerState:
    epoch: float = None
    global_step: int = 0
    max_steps: int = 0
    logging_steps: int = 500
    num_train_epochs: int = 0
    log_history: list = dataclasses.field(default_factory=list)
    is_local_process_zero: bool = True
    is_world_process_zero: bool = True


@dataclasses.dataclass
class TrainerControl:
    should_training_stop: bool = False
    should_epoch_stop: bool = False
    should_save: bool = False
    should_evaluate: bool = False
    should_log: bool = False


@dataclasses.dataclass
class TrainingArguments:
    num_train_epochs: int = 1
    steps_per_epoch: int = 4  # optimizer steps in one pass over the data
    gradient_accumulation_steps: int = 1
    logging_steps: int = 500
    max_steps: int = -1


class TrainerCallback:
    """transformers.TrainerCallback: every event, doing nothing."""

    def _nothing(self, args, state, control, **kwargs):
        return None

    on_init_end = on_train_begin = on_train_end = on_epoch_begin = on_epoch_end = _nothing
    on_step_begin = on_substep_end = on_pre_optimizer_step = on_optimizer_step = on_step_end = _nothing
    on_evaluate = on_predict = on_save = on_log = on_prediction_step = on_push_begin = _nothing


class DefaultFlowCallback(TrainerCallback):
    """Logs every logging_steps steps (and the first), stops at max_steps."""

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 1 or (state.logging_steps > 0 and state.global_step % state.logging_steps == 0):
            control.should_log = True
        if state.global_step >= state.max_steps:
            control.should_training_stop = True
        return control


class ReportingCallback(TrainerCallback):
    """A reporting integration (as TensorBoardCallback): records a copy of every log it is given."""

    def __init__(self):
        self.seen = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.seen.append(dict(logs))


class CallbackHandler:
    def __init__(self, callbacks):
        self.callbacks = list(callbacks)

    def call_event(self, event, args, state, control, **kwargs):
        for cb in self.callbacks:
            result = getattr(cb, event)(args, state, control, model="model", processing_class="tokenizer",
                                        optimizer="optimizer", lr_scheduler="scheduler",
                                        train_dataloader="train_loader", eval_dataloader=None, **kwargs)
            if result is not None:
                control = result
        return control


class Trainer:
    """Trainer(args, callbacks) as transformers builds it: DefaultFlowCallback and the reporting
    integrations first, then the user's callbacks, then the progress callback."""

    def __init__(self, args, callbacks=(), advance=lambda seconds: None, data_s=0.0, batch_s=0.1, optimizer_s=0.0,
                 tail_s=0.0, is_local_process_zero=True):
        self.args = args
        self.reporter = ReportingCallback()
        self.progress = ReportingCallback()
        self.callback_handler = CallbackHandler([DefaultFlowCallback(), self.reporter, *callbacks])
        self.callback_handler.callbacks.append(self.progress)
        self.state = TrainerState(is_local_process_zero=is_local_process_zero,
                                  is_world_process_zero=is_local_process_zero)
        self.control = TrainerControl()
        self.advance = advance
        self._last_logged_step = 0
        self.times = dict(data_s=data_s, batch_s=batch_s, optimizer_s=optimizer_s, tail_s=tail_s)
        self.control = self._event("on_init_end")

    def add_callback(self, callback):
        self.callback_handler.callbacks.append(callback)

    def _event(self, event, **kwargs):
        c = self.control
        if event == "on_train_begin":
            c.should_training_stop = False
        elif event == "on_epoch_begin":
            c.should_epoch_stop = False
        elif event == "on_step_begin":
            c.should_log = c.should_evaluate = c.should_save = False
        return self.callback_handler.call_event(event, self.args, self.state, c, **kwargs)

    def log(self, logs):
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        self.state.log_history.append({**logs, "step": self.state.global_step})
        self.control = self._event("on_log", logs=logs)

    def _maybe_log(self, loss):
        if self.control.should_log and self.state.global_step > self._last_logged_step:
            self._last_logged_step = self.state.global_step
            self.log({"loss": loss, "learning_rate": 1e-4})

    def train(self):
        a, s = self.args, self.state
        s.max_steps = a.max_steps if a.max_steps > 0 else a.num_train_epochs * a.steps_per_epoch
        s.num_train_epochs = a.num_train_epochs
        s.logging_steps = a.logging_steps
        s.epoch = 0
        self.control = self._event("on_train_begin")
        for epoch in range(a.num_train_epochs):
            self.control = self._event("on_epoch_begin")
            for update_step in range(a.steps_per_epoch):
                self.advance(self.times["data_s"] * a.gradient_accumulation_steps)  # get_batch_samples
                for i in range(a.gradient_accumulation_steps):
                    if i == 0:
                        self.control = self._event("on_step_begin")
                    self.advance(self.times["batch_s"])  # training_step: forward and backward
                    if i < a.gradient_accumulation_steps - 1:
                        self.control = self._event("on_substep_end")
                self.control = self._event("on_pre_optimizer_step")
                self.advance(self.times["optimizer_s"])
                self.control = self._event("on_optimizer_step")
                s.global_step += 1
                s.epoch = epoch + (update_step + 1) / a.steps_per_epoch
                self.control = self._event("on_step_end")
                self._maybe_log(loss=1.0 / s.global_step)
                if self.control.should_epoch_stop or self.control.should_training_stop:
                    break
            self.control = self._event("on_epoch_end")
            self._maybe_log(loss=1.0 / s.global_step)
            if self.control.should_training_stop:
                break
        self.advance(self.times["tail_s"])  # the loss average, speed metrics, flos
        self.log({"train_runtime": 1.0, "train_loss": 0.5})
        self.control = self._event("on_train_end")
        return s
