#!/usr/bin/env python3
"""How old NVML's instant and average power values are when read, from a wattlab store (SQLite).

For each stored power_instant_w (and power_average_w) reading of a run, the driver sample buffer
(power_sample_w, each sample held back to the previous one) is averaged over the reading's
averaging window ending `lag` before the read, for lags of -20..150 ms in 10 ms steps; prints the
lag with the smallest rms difference (docs/results/gemm-h200.md; the meter shifts the instant
shape by refresh/2 + window/2). Exit 0, or 2 on bad input.
"""
import argparse
import sqlite3
import sys

from store_power import hold_back, sample_buffer


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", help="wattlab store")
    ap.add_argument("--run", type=int, required=True, help="run id")
    ap.add_argument("--every", type=int, default=3, help="use every Nth reading (speed)")
    args = ap.parse_args()
    try:
        db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
        rows = lambda kind: db.execute(
            "select t_ns, value from readings where run_id=? and domain_index=0 and kind=? order by t_ns",
            (args.run, kind)).fetchall()
        st, sv = sample_buffer(db, args.run)
    except sqlite3.Error as e:
        print(f"instant_lag: {args.db}: {e}", file=sys.stderr)
        return 2
    if len(st) < 2:
        print(f"instant_lag: run {args.run} of {args.db} has no sample-buffer readings", file=sys.stderr)
        return 2
    def sample_mean_w(a_ns, b_ns):
        energy_j, covered_ns = hold_back(st, sv, int(a_ns), int(b_ns))
        return energy_j / (covered_ns * 1e-9) if covered_ns else None

    def rms_w(readings, lag_ms, window_ms):
        err, n = 0.0, 0
        for t, v in readings[::args.every]:
            p = sample_mean_w(t - (lag_ms + window_ms) * 1e6, t - lag_ms * 1e6)
            if p is not None:
                err += (v - p) ** 2
                n += 1
        return (err / n) ** 0.5 if n else float("inf")

    for kind, window_ms in (("power_instant_w", 25), ("power_average_w", 1000)):
        readings = rows(kind)
        if not readings:
            continue
        scores = [(rms_w(readings, lag, window_ms), lag) for lag in range(-20, 160, 10)]
        best_rms, best_lag = min(scores)
        print(f"{kind} (window {window_ms} ms, {len(readings)} readings): best lag {best_lag} ms, "
              f"rms {best_rms:.1f} W; at lag 0: {rms_w(readings, 0, window_ms):.1f} W")
    return 0


if __name__ == "__main__":
    sys.exit(main())
