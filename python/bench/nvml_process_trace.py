#!/usr/bin/env python3
"""Records what NVML's per-process utilization samples really are, and summarizes them.

wattlab's per-process split (docs/per-process.md) rests on how the driver keeps these samples: how
often a process gets one, whether a period without SM use has none, how long after its timestamp a
sample is published, and whether one process's sample can appear after a newer one of another. This
records every sample the driver hands back, with the wall time at which it was first seen, so that
those questions are answered from data, not assumed.

  record:    python3 nvml_process_trace.py record --out trace.csv --seconds 20 [--gpu 0] [--every-ms 100]
             needs pynvml (the GPU machine has it); queries nvmlDeviceGetProcessUtilization with
             lastSeenTimeStamp 0 (everything the driver keeps) every --every-ms and writes each
             (pid, timestamp) once: query_us (CLOCK_REALTIME us of the query that first returned
             it), pid, ts_us, sm, mem, enc, dec.
  summarize: python3 nvml_process_trace.py summarize trace.csv
             per pid: samples, spacing between successive samples (lower quartile, median, max),
             publication lag (first seen minus timestamp: median, 95th percentile, max), how many
             samples appeared after a newer sample of another pid had been seen, and SM-seconds
             under two readings of a sample: over one period (the lower-quartile spacing) and over
             the time since the same pid's previous sample.

Exit 0 on success, 2 on bad input (a missing or malformed file, no pynvml for record).
"""
import argparse
import csv
import sys
import time

FIELDS = ["query_us", "pid", "ts_us", "sm", "mem", "enc", "dec"]


def record(out, seconds, gpu, every_ms):
    try:
        import pynvml
    except ImportError:
        print("nvml_process_trace: record needs pynvml", file=sys.stderr)
        return 2
    pynvml.nvmlInit()
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(gpu)
        seen = set()
        rows = 0
        end = time.monotonic() + seconds
        with open(out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            while time.monotonic() < end:
                q_us = int(time.time() * 1e6)
                try:
                    samples = pynvml.nvmlDeviceGetProcessUtilization(h, 0)
                except pynvml.NVMLError as e:
                    if "Not Found" not in str(e):
                        print(f"nvml_process_trace: {e}", file=sys.stderr)
                    samples = []
                for s in samples:
                    key = (s.pid, s.timeStamp)
                    if key in seen:
                        continue
                    seen.add(key)
                    w.writerow([q_us, s.pid, s.timeStamp, s.smUtil, s.memUtil, s.encUtil, s.decUtil])
                    rows += 1
                time.sleep(every_ms / 1000.0)
        print(f"nvml_process_trace: {rows} samples in {seconds} s -> {out}")
    finally:
        pynvml.nvmlShutdown()
    return 0


def quantile(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))] if s else float("nan")


def summarize(path):
    try:
        with open(path, newline="") as f:
            rows = [{k: int(r[k]) for k in FIELDS} for r in csv.DictReader(f)]
    except (OSError, KeyError, ValueError, TypeError) as e:
        print(f"nvml_process_trace: cannot read {path}: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"nvml_process_trace: {path} holds no samples", file=sys.stderr)
        return 2
    rows.sort(key=lambda r: (r["query_us"], r["ts_us"]))
    # A sample that first appeared after a newer sample of another pid had been seen.
    newest_other = {}
    late = {}
    for r in rows:
        newer = [t for p, t in newest_other.items() if p != r["pid"] and t > r["ts_us"]]
        late[r["pid"]] = late.get(r["pid"], 0) + (1 if newer else 0)
        newest_other[r["pid"]] = max(newest_other.get(r["pid"], 0), r["ts_us"])
    span_s = (max(r["ts_us"] for r in rows) - min(r["ts_us"] for r in rows)) / 1e6
    print(f"{len(rows)} samples over {span_s:.2f} s of timestamps")
    print("| pid | samples | spacing ms (q25 / median / max) | lag ms (median / p95 / max) | late after another's newer |"
          " SM-s over one period | SM-s since previous | SM share of the span (one period / since previous) |")
    print("|---|---|---|---|---|---|---|---|")
    for pid in sorted({r["pid"] for r in rows}):
        ts = sorted((r for r in rows if r["pid"] == pid), key=lambda r: r["ts_us"])
        sp = [(b["ts_us"] - a["ts_us"]) / 1e3 for a, b in zip(ts, ts[1:])]
        lag = [(r["query_us"] - r["ts_us"]) / 1e3 for r in ts]
        period_ms = quantile(sp, 0.25) if sp else float("nan")
        one = sum(r["sm"] / 100.0 * period_ms / 1e3 for r in ts[1:]) if sp else 0.0
        since = sum(b["sm"] / 100.0 * s / 1e3 for b, s in zip(ts[1:], sp))
        share = (f"{one / span_s:.3f} / {since / span_s:.3f}" if span_s > 0 else "n/a")
        print(f"| {pid} | {len(ts)} | {period_ms:.1f} / {quantile(sp, 0.5):.1f} / {max(sp) if sp else float('nan'):.1f} |"
              f" {quantile(lag, 0.5):.1f} / {quantile(lag, 0.95):.1f} / {max(lag):.1f} | {late.get(pid, 0)} |"
              f" {one:.3f} | {since:.3f} | {share} |")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--out", required=True)
    r.add_argument("--seconds", type=float, default=20.0)
    r.add_argument("--gpu", type=int, default=0)
    r.add_argument("--every-ms", type=float, default=100.0)
    s = sub.add_parser("summarize")
    s.add_argument("trace")
    a = ap.parse_args(argv)
    if a.cmd == "record":
        if a.seconds <= 0 or a.every_ms <= 0:
            print("nvml_process_trace: --seconds and --every-ms must be positive", file=sys.stderr)
            return 2
        return record(a.out, a.seconds, a.gpu, a.every_ms)
    return summarize(a.trace)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
