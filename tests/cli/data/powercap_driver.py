#!/usr/bin/env python3
"""Drives a fake powercap tree the way a CPU would: the command that `wattlab run` measures.

Usage: powercap_driver.py ROOT TRUTH_JSON

Holds every counter still for a lead-in, then adds energy at a scripted power (package: a step
from 40 W to 95 W; dram: 12 W) with the counters wrapping at max_energy_range_uj, then holds
still again before exiting. Because the counters are flat at both ends, the true energy of the
command is exactly what was added; it is written to TRUTH_JSON in joules. Each write replaces the
file atomically (rename), as sysfs never shows a half-written value.
"""
import json
import os
import sys
import time

ZONES = {  # sysfs name -> (list of (duration_s, power_w))
    "intel-rapl:0": [(0.6, 40.0), (0.9, 95.0)],
    "intel-rapl:0:0": [(1.5, 12.0)],
}
LEAD_S = 0.4
TICK_S = 0.004


def read_uj(root, zone, f):
    with open(os.path.join(root, zone, f)) as fh:
        return int(fh.read().strip())


def write_uj(root, zone, value):
    path = os.path.join(root, zone, "energy_uj")
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(f"{value}\n")
    os.replace(tmp, path)


def main():
    root, truth_path = sys.argv[1], sys.argv[2]
    state = {}
    for z in ZONES:
        state[z] = {"uj": read_uj(root, z, "energy_uj"), "range": read_uj(root, z, "max_energy_range_uj"),
                    "added_uj": 0, "wraps": 0}
    time.sleep(LEAD_S)
    t0 = time.monotonic()
    last = t0
    total_s = max(sum(d for d, _ in steps) for steps in ZONES.values())
    while True:
        now = time.monotonic()
        el = min(now - t0, total_s)
        for z, steps in ZONES.items():
            # Energy added in (last, now]: integrate the step profile over that span exactly.
            def energy_until(t):
                e, start = 0.0, 0.0
                for dur, p in steps:
                    e += p * max(0.0, min(t, start + dur) - start)
                    start += dur
                return e
            target_uj = int(round(energy_until(el) * 1e6))
            s = state[z]
            step_uj = target_uj - s["added_uj"]
            if step_uj > 0:
                s["added_uj"] = target_uj
                new = s["uj"] + step_uj
                if new >= s["range"]:
                    s["wraps"] += new // s["range"]
                    new %= s["range"]
                s["uj"] = new
                write_uj(root, z, new)
        if el >= total_s:
            break
        last = now
        time.sleep(TICK_S)
    time.sleep(LEAD_S)
    with open(truth_path, "w") as fh:
        json.dump({z: {"energy_j": s["added_uj"] * 1e-6, "wraps": s["wraps"]} for z, s in state.items()}, fh)


if __name__ == "__main__":
    main()
