"""The windows a training callback closed, until their results are final, then as records of plain
data; and the sum of several records.

A window's result is final once the meter's timeline covers its end (a second or two after it
closed), so a callback cannot know a step's energy at the step's end without
stalling training. It files the closed window here and takes the results that are final whenever
it logs; windows close in time order, so the first one not yet final ends a take.
"""
import collections
import math


def record(kind, step, epoch, result):
    """A closed window's result as plain data: kind ("step" or "epoch"), the global step it ends at,
    its epoch (0-based), the energy and its 95 % uncertainty (None where no domain had an estimate)."""
    return {"kind": kind, "step": step, "epoch": epoch, "window_id": result.id, "name": result.name,
            "dur_s": result.dur_s, "energy_j": result.energy_j, "energy_u95_j": result.uncertainty_j,
            "systematic_j": result.systematic_j, "mean_power_w": result.mean_power_w,
            "estimator": result.estimator, "final": result.final, "simulated": result.simulated,
            "counts": dict(result.counts), "issues": [i.code for i in result.issues]}


def total(records):
    """(energy_j, energy_u95_j, n) over the records with an estimate: energies add, their 95 %
    uncertainties add in quadrature (each window's comes from its own edges and readings). The gain
    systematic, shared by every window of a board, is not part of it (records keep it)."""
    measured = [r for r in records if r["energy_j"] is not None]
    if not measured:
        return None, None, 0
    energy_j = sum(r["energy_j"] for r in measured)
    u95_j = math.sqrt(sum(r["energy_u95_j"] ** 2 for r in measured))
    return energy_j, u95_j, len(measured)


class Ledger:
    """Closed windows, waiting for their final results, in the order they closed."""

    def __init__(self):
        self._pending = collections.deque()  # (window, kind, step, epoch)

    def __len__(self):
        return len(self._pending)

    def add(self, window, kind, step, epoch):
        self._pending.append((window, kind, step, epoch))

    def take(self, wait_s=None):
        """Records of the windows now final, oldest first. wait_s: how long to wait for each one's
        final result (None: not at all); the first one still not final ends the take."""
        out = []
        while self._pending:
            window, kind, step, epoch = self._pending[0]
            r = window.provisional() if wait_s is None else window.wait(wait_s)
            if not r.final:
                break
            self._pending.popleft()
            out.append(record(kind, step, epoch, r))
        return out

    def take_all(self, wait_s):
        """Every record: those final within wait_s each, then the rest as they are now (`final`
        False, their provisional energy), so that nothing measured is dropped."""
        out = self.take(wait_s)
        while self._pending:
            window, kind, step, epoch = self._pending.popleft()
            out.append(record(kind, step, epoch, window.provisional()))
        return out
