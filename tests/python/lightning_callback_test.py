"""wattlab.integrations.lightning.WattlabLightningCallback driven by a stand-in of Lightning 2.x's fit
loop (fake_lightning.py: the real hooks, order and arguments) on the simulated GPU: a window per
optimizer step across gradient accumulation, the energies each logger gets at their steps against
the windows' results and the simulator's known power, an epoch against its steps, provisional
results kept out of the logs, a failed fit's windows stored with status 1, and importing it without
Lightning (or with either of its two packages)."""
import math
import os
import sqlite3
import subprocess
import sys

import pytest

import fake_lightning as fl
import wattlab
from wattlab.integrations.lightning import WattlabLightningCallback

T0_NS = 1000 * 10**9
SIM = dict(devices="sim", sim_workload="step 400W 600s", sim_gain_error=0.0, sim_seed=7, virtual_clock=T0_NS)
PY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


@pytest.fixture
def vm():
    m = wattlab.Meter(**SIM)
    m.advance(3)
    yield m
    m.close()


def fit(vm, cb, logger=None, model=None, **options):
    kw = dict(max_epochs=2, batches_per_epoch=6, accumulate_grad_batches=2, data_s=0.05, batch_s=0.2,
              optimizer_s=0.1, tail_s=3.0)
    kw.update(options)
    trainer = fl.Trainer(callbacks=[cb], loggers=[logger] if logger else [], advance=vm.advance, **kw)
    trainer.fit(model or fl.LightningModule())
    return trainer


def test_steps_and_epochs_go_to_the_loggers_at_their_steps(vm):
    edges = []
    cb = WattlabLightningCallback(vm, sync=lambda: edges.append(vm.now_ns()), final_wait_s=0.1)
    logger = fl.CSVLogger()
    fit(vm, cb, logger)
    assert len(edges) == 2 * (6 + 2)
    # A step window: from its first batch's start to its second batch's end (0.2 + 0.05 + 0.2 + 0.1 s).
    assert [(r["step"], r["epoch"], r["counts"]) for r in cb.steps] == [
        (s, (s - 1) // 3, {"batches": 2.0}) for s in range(1, 7)]
    for r in cb.steps:
        assert r["final"] and r["simulated"] and r["dur_s"] == pytest.approx(0.55)
        assert abs(r["energy_j"] - 220.0) <= r["energy_u95_j"] + 1.0
        assert vm.result(r["window_id"]).energy_j == r["energy_j"]
    step_rows = sorted((step, m) for step, m in logger.rows if "energy_step_j" in m)
    assert [step for step, _ in step_rows] == [0, 1, 2, 3, 4, 5]  # the n-th step at n-1, once each
    for (step, m), r in zip(step_rows, cb.steps):
        assert m == {"energy_step_j": r["energy_j"], "energy_step_u95_j": r["energy_u95_j"], "energy_simulated": 1.0}
    epoch_rows = [(step, m) for step, m in logger.rows if "energy_epoch_j" in m]
    assert [(step, m["epoch"]) for step, m in epoch_rows] == [(3, 0), (6, 1)]
    for (_, m), e in zip(epoch_rows, cb.epochs):
        assert e["final"] and e["dur_s"] == pytest.approx(1.8)  # 6 fetches and batches, 3 optimizer steps
        assert (m["energy_epoch_j"], m["energy_epoch_u95_j"]) == (e["energy_j"], e["energy_u95_j"])
        steps = [r for r in cb.steps if r["epoch"] == e["epoch"]]
        outside_j = e["energy_j"] - sum(r["energy_j"] for r in steps)  # each step's first fetch, 0.05 s
        bound = math.sqrt(e["energy_u95_j"] ** 2 + sum(r["energy_u95_j"] ** 2 for r in steps))
        assert abs(outside_j - 3 * 0.05 * 400.0) <= bound + 1.0


def test_one_batch_per_step_and_the_progress_bar(vm):
    cb = WattlabLightningCallback(vm, sync=None, prog_bar=True, final_wait_s=0.1)
    model = fl.LightningModule()
    fit(vm, cb, fl.CSVLogger(), model, accumulate_grad_batches=1, data_s=0.0)
    assert [r["step"] for r in cb.steps] == list(range(1, 13))
    assert all(r["counts"] == {"batches": 1.0} and r["dur_s"] == pytest.approx(0.3) for r in cb.steps)
    assert model.logged  # the newest final step, from on_train_batch_end only, not to the loggers
    energies = {r["energy_j"] for r in cb.steps}
    for hook, name, value, options in model.logged:
        assert (hook, name) == ("on_train_batch_end", "energy_step_j") and value in energies
        assert options == {"on_step": True, "on_epoch": False, "prog_bar": True, "logger": False}


def test_results_not_final_at_the_end_stay_out_of_the_logs(vm):
    cb = WattlabLightningCallback(vm, sync=None, final_wait_s=0.05)
    logger = fl.CSVLogger()
    fit(vm, cb, logger, tail_s=0.0)  # on virtual time nothing moves while it waits
    assert len(cb.steps) == 6 and len(cb.epochs) == 2
    late = [r for r in cb.steps + cb.epochs if not r["final"]]
    assert late and late[-1]["kind"] == "epoch"
    logged = {(step, "energy_step_j" in m) for step, m in logger.rows}
    for r in late:
        assert (r["step"] - 1 if r["kind"] == "step" else r["step"], r["kind"] == "step") not in logged
    assert len(logger.rows) == len(cb.steps) + len(cb.epochs) - len(late)


def test_a_failed_fit_keeps_its_windows_and_ends_the_run_with_status_1(tmp_path):
    db = tmp_path / "runs.db"
    cb = WattlabLightningCallback(sync=None, db=db, **SIM)
    trainer = fl.Trainer(callbacks=[cb], max_epochs=1, batches_per_epoch=6, accumulate_grad_batches=2,
                         advance=lambda s: cb.meter.advance(s), batch_s=0.5)
    with pytest.raises(RuntimeError, match="out of memory"):
        trainer.fit(fl.LightningModule(fail_at_batch=3))
    assert cb.meter is None
    assert [(r["kind"], r["step"]) for r in cb.steps + cb.epochs] == [("step", 1), ("step", 1), ("epoch", 1)]
    con = sqlite3.connect(db)
    assert con.execute("SELECT exit_status FROM runs").fetchall() == [(1,)]
    assert con.execute("SELECT name, final FROM windows ORDER BY window_id").fetchall() == [
        ("train/epoch", 1), ("train/step", 1), ("train/step", 1)]


def test_only_local_rank_0_measures(vm):
    cb = WattlabLightningCallback(vm, sync=None)
    logger = fl.CSVLogger()
    fit(vm, cb, logger, local_rank=1)
    assert cb.steps == [] and logger.rows == [] and vm.windows() == []


def _base_of(extra_path, preload=""):
    code = (f"import sys\n{preload}\n"
            "from wattlab.integrations.lightning import WattlabLightningCallback as C\n"
            "print(C.__mro__[1].__module__ + '.' + C.__mro__[1].__name__)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (extra_path, PY) if p))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_imports_without_lightning_and_subclasses_the_package_in_use(tmp_path):
    assert _base_of(None) == "wattlab.integrations._framework.NoopHooks"
    (tmp_path / "lightning" / "pytorch").mkdir(parents=True)
    (tmp_path / "lightning" / "__init__.py").write_text("")
    (tmp_path / "lightning" / "pytorch" / "__init__.py").write_text("class Callback:\n    pass\n")
    (tmp_path / "pytorch_lightning").mkdir()
    (tmp_path / "pytorch_lightning" / "__init__.py").write_text("class Callback:\n    pass\n")
    assert _base_of(str(tmp_path)) == "lightning.pytorch.Callback"
    assert _base_of(str(tmp_path), preload="import pytorch_lightning") == "pytorch_lightning.Callback"
