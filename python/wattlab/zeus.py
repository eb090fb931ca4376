"""A Zeus-compatible face: `from wattlab.zeus import ZeusMonitor` in place of
`from zeus.monitor import ZeusMonitor`, and begin_window / end_window measure with wattlab.

    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("step")
    train_step()
    m = monitor.end_window("step")
    print(m.time, m.total_energy, m.gpu_energy[0], m.cpu_energy)

end_window returns at once; the energies of its Measurement become known once the window's result
is final (wattlab reads the energy off its sampler's timeline, not at the window's edges), so the
first read of an energy field waits for it, at most about one counter update. `m.result` is the
full wattlab result (uncertainty, estimator, issues). GPU indices are the framework's (positions
in CUDA_VISIBLE_DEVICES), CPU indices the packages'.
"""
import re
import sys

from .meter import Meter

__all__ = ["ZeusMonitor", "Measurement"]

_GPU = re.compile(r"^gpu:(\d+)$")
_CPU = re.compile(r"^cpu:(\d+)/(package|dram)$")


def _sync(framework):
    """Waits for the GPU work the framework queued, where that framework is loaded; else nothing to wait for."""
    if framework == "torch":
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.synchronize()
    elif framework == "jax":
        jax = sys.modules.get("jax")
        if jax is not None:
            (jax.device_put(0.0) + 0).block_until_ready()


class Measurement:
    """Zeus's measurement of one window: time (s), gpu_energy (J by GPU index), cpu_energy and
    dram_energy (J by CPU package index, or None), total_energy (the GPUs' sum, as in Zeus)."""

    def __init__(self, monitor, window_id, name):
        self._monitor = monitor
        self._id = window_id
        self.name = name
        self._result = None

    @property
    def result(self):
        """The wattlab result behind this measurement (waits for the final one)."""
        if self._result is None:
            r = self._monitor._meter.result(self._id)
            if not r.final:
                return r
            self._result = r
        return self._result

    @property
    def time(self):
        return self.result.dur_s

    @property
    def gpu_energy(self):
        return {i: self.result.domain(d).energy_j for i, d in self._monitor._gpus.items()}

    @property
    def cpu_energy(self):
        if not self._monitor._cpus:
            return None
        return {i: self.result.domain(d).energy_j for i, d in self._monitor._cpus.items()}

    @property
    def dram_energy(self):
        if not self._monitor._drams:
            return None
        return {i: self.result.domain(d).energy_j for i, d in self._monitor._drams.items()}

    @property
    def total_energy(self):
        return sum(e for e in self.gpu_energy.values() if e is not None)

    def __repr__(self):
        return (f"Measurement(time={self.time!r}, gpu_energy={self.gpu_energy!r}, cpu_energy={self.cpu_energy!r}, "
                f"dram_energy={self.dram_energy!r}){' SIMULATED' if self.result.simulated else ''}")


class _Cancelled:
    """What end_window(cancel=True) returns, as in Zeus: an empty measurement."""

    time = 0.0
    gpu_energy = {}
    cpu_energy = None
    dram_energy = None
    total_energy = 0.0


class ZeusMonitor:
    """zeus.monitor.ZeusMonitor's interface over a wattlab Meter. gpu_indices / cpu_indices choose
    which GPUs and CPU packages a Measurement reports (None: all). approx_instant_energy is accepted
    and needs nothing: a window shorter than the counter's update is still estimated, with its
    uncertainty. log_file writes Zeus's CSV (start_time, window_name, elapsed_time, gpuN_energy).
    `devices` and `db` go to wattlab.Meter (devices="sim" measures the simulated GPU)."""

    def __init__(self, gpu_indices=None, cpu_indices=None, approx_instant_energy=False, log_file=None,
                 sync_execution_with="torch", *, devices="auto", db=None, **meter_options):
        self._meter = Meter(devices=devices, db=db, cpu=cpu_indices != [], **meter_options)
        self.sync_with = sync_execution_with
        self.approx_instant_energy = approx_instant_energy
        self._open = {}
        gpus = [d for d in self._meter.domains if _GPU.match(d)]  # in CUDA_VISIBLE_DEVICES order
        self._gpus = {i: d for i, d in enumerate(gpus) if gpu_indices is None or i in gpu_indices}
        self._cpus, self._drams = {}, {}
        for d in self._meter.domains:
            m = _CPU.match(d)
            if m and (cpu_indices is None or int(m.group(1)) in cpu_indices):
                (self._cpus if m.group(2) == "package" else self._drams)[int(m.group(1))] = d
        self.gpu_indices = list(self._gpus)
        self.cpu_indices = list(self._cpus)
        self._log = None
        if log_file is not None:
            self._log = open(log_file, "w")
            self._log.write("start_time,window_name,elapsed_time," +
                            ",".join(f"gpu{i}_energy" for i in self.gpu_indices) + "\n")
            self._log.flush()

    @property
    def meter(self):
        """The wattlab Meter underneath."""
        return self._meter

    def begin_window(self, key, sync_execution=True):
        if key in self._open:
            raise ValueError(f"Measurement window '{key}' already exists")
        if sync_execution:
            _sync(self.sync_with)
        self._open[key] = self._meter._open(key, None)

    def end_window(self, key, sync_execution=True, cancel=False):
        try:
            wid = self._open.pop(key)
        except KeyError:
            raise ValueError(f"Measurement window '{key}' does not exist") from None
        if sync_execution:
            _sync(self.sync_with)
        self._meter._close(wid, None)
        if cancel:
            return _Cancelled()
        m = Measurement(self, wid, key)
        if self._log is not None:
            r = m.result
            self._log.write(f"{r.t_begin_ns / 1e9},{key},{m.time}," +
                            ",".join(str(m.gpu_energy[i]) for i in self.gpu_indices) + "\n")
            self._log.flush()
        return m

    def close(self, status=0):
        if self._log is not None:
            self._log.close()
            self._log = None
        self._meter.close(status)
