#!/usr/bin/env python3
"""How old NVML's instant and average power values are when read, from a wattlab store (SQLite).

For each stored power_instant_w (and power_average_w) reading of a run, the driver sample buffer
(power_sample_w, each sample held back to the previous one) is averaged over the reading's
averaging window ending `lag` before the read, for lags of -20..150 ms in 10 ms steps; prints the
lag with the smallest rms difference (docs/results/gemm-h200.md; the meter shifts the instant
shape by refresh/2 + window/2). Exit 0, or 2 on bad input.
"""
import argparse
import bisect
import sqlite3
import sys


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
        samples = rows("power_sample_w")
    except sqlite3.Error as e:
        print(f"instant_lag: {args.db}: {e}", file=sys.stderr)
        return 2
    if len(samples) < 2:
        print(f"instant_lag: run {args.run} of {args.db} has no sample-buffer readings", file=sys.stderr)
        return 2
    st = [t for t, _ in samples]
    sv = [v for _, v in samples]

    def sample_mean_w(a_ns, b_ns):
        i = max(bisect.bisect_right(st, a_ns), 1)
        energy = covered = 0.0
        while i < len(st) and st[i - 1] < b_ns:
            lo, hi = max(st[i - 1], a_ns), min(st[i], b_ns)
            if hi > lo:
                energy += sv[i] * (hi - lo)
                covered += hi - lo
            i += 1
        return energy / covered if covered else None

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
