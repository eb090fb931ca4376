"""wattlab.integrations.transformers.WattlabTrainerCallback driven by a stand-in of transformers 5.x's
training loop (fake_hf_trainer.py: the real events, order and argument names) on the simulated GPU:
the energies it logs against its windows' results and against the simulator's known power, every
step logged once, an epoch against the sum of its steps, the keys reaching the reporting callbacks
when attached first, the stored run of a meter it owns, and importing it without transformers."""
import math
import os
import sqlite3
import subprocess
import sys
import time

import pytest

import fake_hf_trainer as hf
import wattlab
from wattlab.integrations.transformers import WattlabTrainerCallback

T0_NS = 1000 * 10**9
SIM = dict(devices="sim", sim_workload="step 400W 600s", sim_gain_error=0.0, sim_seed=5, virtual_clock=T0_NS)
PY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


@pytest.fixture
def vm():
    m = wattlab.Meter(**SIM)
    m.advance(3)
    yield m
    m.close()


def energy_logs(trainer):
    return [h for h in trainer.state.log_history if "energy_steps" in h]


def run(vm, callback, attach=True, **times):
    args = hf.TrainingArguments(num_train_epochs=2, steps_per_epoch=6, gradient_accumulation_steps=2, logging_steps=4)
    trainer = hf.Trainer(args, callbacks=() if attach else (callback,), advance=vm.advance, **times)
    if attach:
        callback.attach(trainer)
    trainer.train()
    return trainer


def test_steps_and_epochs_are_logged_with_their_uncertainty(vm):
    edges = []
    cb = WattlabTrainerCallback(vm, sync=lambda: edges.append(vm.now_ns()), final_wait_s=0.1)
    # A step window holds 2 batches of 0.2 s and a 0.1 s optimizer step; fetching its batches (0.1 s)
    # comes before on_step_begin, inside the epoch but outside the step.
    trainer = run(vm, cb, data_s=0.05, batch_s=0.2, optimizer_s=0.1, tail_s=3.0)
    assert len(edges) == 2 * (12 + 2)  # sync before both edges of every window
    assert [r["step"] for r in cb.steps] == list(range(1, 13))
    assert [r["epoch"] for r in cb.steps] == [0] * 6 + [1] * 6
    for r in cb.steps:
        assert r["final"] and r["simulated"] and r["name"] == "train/step"
        assert r["dur_s"] == pytest.approx(0.5)
        assert abs(r["energy_j"] - 200.0) <= r["energy_u95_j"] + 1.0  # 400 W for 0.5 s
        res = vm.result(r["window_id"])
        assert res.energy_j == r["energy_j"] and res.uncertainty_j == r["energy_u95_j"]
        assert res.labels == {"step": str(r["step"]), "epoch": str(r["epoch"])}
    assert [(r["epoch"], r["step"]) for r in cb.epochs] == [(0, 6), (1, 12)]
    for e in cb.epochs:
        assert e["final"] and e["dur_s"] == pytest.approx(3.6)
        assert abs(e["energy_j"] - 1440.0) <= e["energy_u95_j"] + 1.0
        steps = [r for r in cb.steps if r["epoch"] == e["epoch"]]
        gaps_j = e["energy_j"] - sum(r["energy_j"] for r in steps)  # 6 fetches of 0.1 s at 400 W
        bound = math.sqrt(e["energy_u95_j"] ** 2 + sum(r["energy_u95_j"] ** 2 for r in steps))
        assert abs(gaps_j - 240.0) <= bound + 1.0

    logs = energy_logs(trainer)
    assert sum(h["energy_steps"] for h in logs) == 12  # every step logged once
    last = 0
    for h in logs:
        covered = [r for r in cb.steps if last < r["step"] <= h["energy_last_step"]]
        assert h["energy_steps"] == len(covered) > 0
        assert h["energy_j"] == pytest.approx(sum(r["energy_j"] for r in covered), rel=1e-12)
        assert h["energy_u95_j"] == pytest.approx(math.sqrt(sum(r["energy_u95_j"] ** 2 for r in covered)), rel=1e-12)
        assert h["energy_per_step_j"] == pytest.approx(h["energy_j"] / h["energy_steps"])
        assert h["energy_simulated"] is True
        last = h["energy_last_step"]
    epoch_logs = [h for h in trainer.state.log_history if "energy_epoch" in h]
    assert [h["energy_epoch"] for h in epoch_logs] == [1, 2]
    assert [h["energy_epoch_j"] for h in epoch_logs] == [e["energy_j"] for e in cb.epochs]
    assert [h["energy_epoch_u95_j"] for h in epoch_logs] == [e["energy_u95_j"] for e in cb.epochs]
    # The summary log at the end waited for the last step and the last epoch.
    assert trainer.state.log_history[-1]["train_runtime"] and trainer.state.log_history[-1]["energy_epoch"] == 2
    # Attached first: the reporting integration and the progress printer saw the same keys.
    assert [h for h in trainer.reporter.seen if "energy_j" in h] == [
        {k: v for k, v in h.items() if k != "step"} for h in trainer.state.log_history if "energy_j" in h]
    assert trainer.progress.seen == trainer.reporter.seen


def test_an_epoch_split_into_steps_adds_up_to_the_epoch():
    with wattlab.Meter(**dict(SIM, sim_workload="periodic 690W 120W period=80ms duty=0.5 600s")) as m:
        m.advance(3)
        cb = WattlabTrainerCallback(m, sync=None, final_wait_s=0.1)
        run(m, cb, data_s=0.0, batch_s=0.13, optimizer_s=0.07, tail_s=3.0)  # steps tile each epoch
        assert len(cb.steps) == 12 and len(cb.epochs) == 2
        for e in cb.epochs:
            steps = [r for r in cb.steps if r["epoch"] == e["epoch"]]
            bound = math.sqrt(e["energy_u95_j"] ** 2 + sum(r["energy_u95_j"] ** 2 for r in steps))
            assert abs(e["energy_j"] - sum(r["energy_j"] for r in steps)) <= bound
            assert 120 * e["dur_s"] < e["energy_j"] < 690 * e["dur_s"]


def test_added_after_the_reporters_the_keys_still_reach_log_history(vm):
    cb = WattlabTrainerCallback(vm, sync=None, final_wait_s=0.1)
    trainer = run(vm, cb, attach=False, tail_s=3.0)
    assert sum(h["energy_steps"] for h in energy_logs(trainer)) == 12
    assert not any("energy_j" in h for h in trainer.reporter.seen)  # it ran before the callback
    assert [h for h in trainer.progress.seen if "energy_j" in h]  # after it: sees them


def test_only_the_local_main_process_measures(vm):
    cb = WattlabTrainerCallback(vm, sync=None)
    args = hf.TrainingArguments(num_train_epochs=1, steps_per_epoch=3, logging_steps=1)
    trainer = hf.Trainer(args, advance=vm.advance, is_local_process_zero=False)
    cb.attach(trainer)
    trainer.train()
    assert cb.steps == [] and cb.epochs == [] and vm.windows() == []
    assert not energy_logs(trainer)


def test_a_meter_it_owns_is_stored_and_closed(tmp_path):
    db = tmp_path / "runs.db"
    cb = WattlabTrainerCallback(sync=None, db=db, final_wait_s=0.1, **SIM)
    args = hf.TrainingArguments(num_train_epochs=1, steps_per_epoch=4, logging_steps=2)
    trainer = hf.Trainer(args, advance=lambda s: cb.meter.advance(s), batch_s=0.5, tail_s=3.0)
    cb.attach(trainer)
    trainer.train()
    assert cb.meter is None  # closed at on_train_end
    con = sqlite3.connect(db)
    assert con.execute("SELECT exit_status, simulated FROM runs").fetchall() == [(0, 1)]
    names = [n for (n,) in con.execute("SELECT name FROM windows WHERE final = 1 ORDER BY window_id")]
    assert names == ["train/epoch"] + ["train/step"] * 4 and len(cb.steps) == 4
    labels = con.execute("SELECT l.value FROM window_labels l JOIN windows w ON w.window_row = l.window_row "
                         "WHERE w.name = 'train/step' AND l.key = 'step' ORDER BY w.window_id").fetchall()
    assert labels == [("1",), ("2",), ("3",), ("4",)]


def test_on_real_time_every_step_is_logged_once_training_ends():
    with wattlab.Meter(devices="sim") as m:
        cb = WattlabTrainerCallback(m, sync=None)
        args = hf.TrainingArguments(num_train_epochs=2, steps_per_epoch=5, logging_steps=3)
        trainer = hf.Trainer(args, advance=time.sleep, batch_s=0.01)
        cb.attach(trainer)
        trainer.train()
        assert [r["step"] for r in cb.steps] == list(range(1, 11))
        assert all(r["final"] and r["energy_j"] > 0 for r in cb.steps + cb.epochs)
        assert sum(h["energy_steps"] for h in energy_logs(trainer)) == 10
        assert len(cb.epochs) == 2


def test_hooks_out_of_order_say_so(vm):
    cb = WattlabTrainerCallback(vm, sync=None)
    state, control = hf.TrainerState(), hf.TrainerControl()
    cb.on_train_begin(None, state, control)
    cb.on_step_begin(None, state, control)
    with pytest.raises(RuntimeError, match="already open"):
        cb.on_step_begin(None, state, control)


def _python(code, extra_path=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (extra_path, PY) if p))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_imports_without_transformers_and_subclasses_it_where_it_is(tmp_path):
    code = ("import sys, wattlab.integrations as i\n"
            "assert 'transformers' not in sys.modules and 'wattlab.integrations.transformers' not in sys.modules\n"
            "cb = i.WattlabTrainerCallback\n"
            "print(cb.__mro__[1].__module__ + '.' + cb.__mro__[1].__name__)\n")
    out = _python(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "wattlab.integrations._framework.NoopHooks"
    fake = tmp_path / "transformers"
    fake.mkdir()
    (fake / "__init__.py").write_text("class TrainerCallback:\n    pass\n")
    out = _python(code, extra_path=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "transformers.TrainerCallback"
