"""The wattlab Python package (python/wattlab) over the built libwattlab.so, on the simulated GPU:
windows and their results (SIMULATED), counts, the decorator, windows() rows, the Zeus face, C
errors as Python exceptions with the C message, the stored run, Python threads, and a forked child
whose copy of the parent's meter is inert (also when it exits as Python does) and which can measure
on a meter of its own. Numbers come from the virtual clock (400 W for 2 s, exact gain); the
real-time tests check only what the sampler thread must deliver (a final result)."""
import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

import wattlab
from wattlab.zeus import ZeusMonitor

T0_NS = 1000 * 10**9
SIM = dict(devices="sim", sim_workload="step 400W 600s", sim_gain_error=0.0, sim_seed=3, virtual_clock=T0_NS)


@pytest.fixture
def vm():
    m = wattlab.Meter(**SIM)
    m.advance(3)  # readings before the first window
    yield m
    m.close()


def test_library_is_found_and_versioned():
    assert os.path.exists(wattlab.library_path())
    assert wattlab.library_version()
    assert wattlab.API_VERSION == 1


def test_window_result_on_the_simulated_gpu(vm):
    with vm.window("step") as w:
        vm.advance(2)
        w.count(tokens=5)
        w.count(tokens=3, requests=1)
        w.label(phase="decode")
    vm.advance(3)
    r = w.result
    assert r.final and r.simulated
    assert r.name == "step" and r.id == w.id
    assert r.dur_s == pytest.approx(2.0)
    assert r.energy_j == pytest.approx(800.0, rel=0.05)
    assert abs(r.energy_j - 800.0) <= r.uncertainty_j + 1.0
    assert r.uncertainty_j > 0
    assert r.systematic_j >= 0
    assert r.mean_power_w == pytest.approx(400.0, rel=0.05)
    assert r.peak_power_w >= r.mean_power_w * 0.9
    assert r.estimator
    assert r.counts == {"tokens": 8.0, "requests": 1.0}
    assert r.labels == {"phase": "decode"}
    [d] = r.domains
    assert d.domain == "gpu:0" and d.simulated and d.available
    assert d.telemetry["power_limit_w"] > 0
    assert all(isinstance(i, wattlab.Issue) and i.code and i.text for i in r.issues)
    assert "SIMULATED" in repr(r) and " J ± " in repr(r)
    json.dumps(r.to_dict())  # plain data
    assert r.to_dict()["domains"][0]["energy_j"] == d.energy_j


def test_provisional_before_the_timeline_covers_the_end(vm):
    w = vm.open("short")
    vm.advance(0.5)
    w.close()
    p = w.provisional()
    assert not p.final and "PROVISIONAL" in repr(p)
    vm.advance(3)
    assert w.wait(0).final


def test_sync_runs_at_both_edges(vm):
    calls = []
    with vm.window("synced", sync=lambda: calls.append(vm.now_ns())):
        vm.advance(1)
    assert calls == [T0_NS + 3 * 10**9, T0_NS + 4 * 10**9]


def test_decorator_and_windows_rows(vm):
    @vm.measure("work")
    def work(x):
        vm.advance(1)
        return x * 2

    @vm.measure
    def other():
        vm.advance(1)

    assert work(21) == 42
    other()
    vm.advance(3)
    rows = vm.windows()
    assert [r["name"] for r in rows] == ["work", "test_decorator_and_windows_rows.<locals>.other"]
    for row in rows:
        assert row["final"] and row["simulated"] and row["domain"] == "gpu:0"
        assert all(isinstance(v, (int, float, str, bool, type(None))) for v in row.values())
        assert row["energy_j"] == pytest.approx(400.0, rel=0.05)


def test_windows_from_python_threads_on_virtual_time(vm):
    barrier = threading.Barrier(4)
    windows = {}

    def worker(name):
        w = vm.open(name)
        barrier.wait()  # all open
        barrier.wait()  # time moved 2 s
        w.count(tokens=1)
        w.close()
        windows[name] = w

    threads = [threading.Thread(target=worker, args=(f"t{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    barrier.wait()
    vm.advance(2)
    barrier.wait()
    for t in threads:
        t.join()
    vm.advance(3)
    assert len({w.id for w in windows.values()}) == 3
    for w in windows.values():
        assert w.result.energy_j == pytest.approx(800.0, rel=0.05)
        assert w.result.counts == {"tokens": 1.0}


def test_windows_from_python_threads_on_real_time():
    with wattlab.Meter(devices="sim") as m:
        ids = []
        lock = threading.Lock()

        def worker():
            mine = []
            for _ in range(500):
                with m.window("spin") as w:
                    pass
                mine.append(w.id)
            with lock:
                ids.extend(mine)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(ids)) == 2000
        r = m.result(max(ids), timeout_s=30)
        assert r.final and r.simulated


def test_c_errors_are_python_exceptions_with_the_c_message(vm):
    with pytest.raises(wattlab.UnknownDeviceError, match="gpu9000") as e:
        wattlab.Meter(devices="gpu9000")
    assert isinstance(e.value, ValueError) and e.value.status == "WATTLAB_ERR_UNKNOWN_DEVICE"
    with pytest.raises(wattlab.InvalidArgumentError, match="wattlab_meter_open"):
        wattlab.Meter(devices="sim", sim_workload="this is not a workload")
    with pytest.raises(wattlab.UnknownWindowError, match="window 12345 is not known"):
        vm.result(12345)
    w = vm.open("w")
    with pytest.raises(wattlab.InvalidArgumentError, match="not a finite number"):
        w.count(tokens=-1)
    with pytest.raises(TypeError):
        vm.open(42)
    with wattlab.Meter(devices="sim") as real:
        with pytest.raises(wattlab.NotVirtualError, match="real time"):
            real.advance(1)


def test_a_closed_meter_says_so():
    m = wattlab.Meter(**SIM)
    m.close()
    m.close()  # again: nothing
    with pytest.raises(wattlab.EndedError, match="closed"):
        m.open("late")


def test_the_run_is_stored_and_ended_with_its_status(tmp_path):
    db = tmp_path / "runs.db"
    m = wattlab.Meter(db=db, tags={"model": "py-test"}, command=["train.py", "--fast"], **SIM)
    m.advance(3)
    with m.window("step") as w:
        m.advance(2)
        w.count(tokens=512)
    m.close(status=3)
    con = sqlite3.connect(db)
    status, simulated, command = con.execute(
        "SELECT exit_status, simulated, command_json FROM runs WHERE run_id = ?", (m.run_id,)).fetchone()
    assert (status, simulated, json.loads(command)) == (3, 1, ["train.py", "--fast"])
    assert con.execute("SELECT value FROM run_tags WHERE run_id = ? AND key = 'model'", (m.run_id,)).fetchone() == ("py-test",)
    rows = con.execute("SELECT w.name, w.final, c.value FROM windows w JOIN window_counts c ON c.window_row = w.window_row "
                       "WHERE w.run_id = ? AND c.key = 'tokens'", (m.run_id,)).fetchall()
    assert rows == [("step", 1, 512.0)]


def test_zeus_face(tmp_path):
    log = tmp_path / "zeus.csv"
    z = ZeusMonitor(log_file=str(log), **SIM)
    z.meter.advance(3)
    z.begin_window("epoch")
    z.begin_window("step", sync_execution=False)
    with pytest.raises(ValueError, match="already exists"):
        z.begin_window("step")
    z.meter.advance(2)
    step = z.end_window("step")
    with pytest.raises(ValueError, match="does not exist"):
        z.end_window("step")
    z.meter.advance(1)
    epoch = z.end_window("epoch", sync_execution=False)
    assert z.gpu_indices == [0]
    z.meter.advance(3)
    assert step.time == pytest.approx(2.0)
    assert set(step.gpu_energy) == {0}
    assert step.gpu_energy[0] == pytest.approx(800.0, rel=0.05)
    assert step.total_energy == step.gpu_energy[0]
    assert step.cpu_energy is None and step.dram_energy is None
    assert epoch.total_energy == pytest.approx(1200.0, rel=0.05)
    assert step.result.simulated and "SIMULATED" in repr(step)
    z.begin_window("gone")
    assert z.end_window("gone", cancel=True).total_energy == 0.0
    z.close()
    lines = log.read_text().splitlines()
    assert lines[0] == "start_time,window_name,elapsed_time,gpu0_energy"
    assert [ln.split(",")[1] for ln in lines[1:]] == ["step", "epoch"]


def test_a_forked_child_neither_crashes_nor_double_counts(tmp_path):
    db = tmp_path / "runs.db"
    m = wattlab.Meter(db=db, **SIM)
    m.advance(3)
    parent = m.open("parent")
    r, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child, like a DataLoader worker
        os.close(r)
        out = []
        try:
            m.open("child")
            out.append("opened")
        except wattlab.ForkedError as e:
            out.append("forked:" + ("parent process" in str(e)) * "says-so")
        try:
            parent.close()
        except wattlab.ForkedError:
            out.append("close-refused")
        wattlab.meter._close_at_exit()  # what atexit does when the child exits: nothing here
        os.write(wfd, ",".join(out).encode())
        os._exit(0)
    os.close(wfd)
    _, status = os.waitpid(pid, 0)
    said = os.read(r, 4096).decode()
    os.close(r)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert said == "forked:says-so,close-refused"
    m.advance(2)
    parent.close()
    m.advance(3)
    assert parent.result.energy_j == pytest.approx(800.0, rel=0.05)
    m.close()
    con = sqlite3.connect(db)
    assert con.execute("SELECT name FROM windows WHERE run_id = ?", (m.run_id,)).fetchall() == [("parent",)]
    assert con.execute("SELECT exit_status FROM runs WHERE run_id = ?", (m.run_id,)).fetchone() == (0,)


def test_a_missing_library_names_where_it_looked():
    env = dict(os.environ, WATTLAB_LIBRARY="/nonexistent/libwattlab.so.1")
    code = "import wattlab\ntry:\n    wattlab.Meter(devices='sim')\nexcept wattlab.LibraryNotFoundError as e:\n    print(e)\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "libwattlab.so not found" in out.stdout
    assert "WATTLAB_LIBRARY: /nonexistent/libwattlab.so.1 (not there)" in out.stdout


_FORKING_PROGRAM = """
import os, sys, wattlab
sim = dict(devices="sim", sim_gain_error=0.0, virtual_clock=10**12)
m = wattlab.Meter(db=sys.argv[1], sim_workload="step 400W 600s", **sim)
m.advance(3)
w = m.open("parent")
pid = os.fork()
if pid == 0:  # a worker that measures on a meter of its own, then exits as Python does
    own = wattlab.Meter(sim_workload="step 100W 600s", **sim)
    own.advance(3)
    with own.window("child") as cw:
        own.advance(1)
    own.advance(3)
    print("child", round(cw.result.energy_j), cw.result.final, flush=True)
    sys.exit(0)  # atexit closes both meters it can see: its own, and the parent's (which must refuse)
_, status = os.waitpid(pid, 0)
m.advance(2)
w.close()
m.advance(3)
print("parent", os.WIFEXITED(status) and os.WEXITSTATUS(status), round(w.result.energy_j), flush=True)
m.close()
"""


def test_a_forked_child_exits_normally_and_measures_on_its_own_meter(tmp_path):
    db = tmp_path / "runs.db"
    out = subprocess.run([sys.executable, "-c", _FORKING_PROGRAM, str(db)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr
    assert out.stdout.splitlines() == ["child 100 True", "parent 0 800"]
    con = sqlite3.connect(db)
    assert con.execute("SELECT exit_status FROM runs").fetchall() == [(0,)]  # the parent's run, ended once
    assert con.execute("SELECT name, final FROM windows").fetchall() == [("parent", 1)]
