#!/usr/bin/env python3
"""Records what NVML's per-process utilization samples really are, and summarizes them.

wattlab's per-process split (docs/per-process.md) rests on how the driver keeps these samples: how
often a process gets one, whether a period without SM use has none, how long after its timestamp a
sample is published, and whether one process's sample can appear after a newer one of another. This
records every sample the driver hands back, with the wall time at which it was first seen, so that
those questions are answered from data, not assumed.

  record:    python3 nvml_process_trace.py record --out trace.csv --seconds 20 [--gpu 0] [--every-ms 100]
             needs pynvml (the GPU machine has it); every --every-ms it queries
             nvmlDeviceGetProcessUtilization three times: mode 0 with lastSeenTimeStamp 0 (everything
             the driver keeps), mode 1 with the newest timestamp the previous mode-1 query returned
             (the documented way to read "utilization since the previous query"), mode 2 with the
             query's own time less 1 s (one value per process over that second, or every sample in
             it?). Every row returned is written: query_us (CLOCK_REALTIME us of the query), mode,
             since_us (the lastSeenTimeStamp passed), pid, ts_us, sm, mem, enc, dec.
  summarize: python3 nvml_process_trace.py summarize trace.csv
             per mode and pid: rows, the most rows one query returned (one per process, or a
             history?), distinct timestamps and their spacing, publication lag (first seen minus
             timestamp), how many timestamps were first seen after a newer one of another pid, and
             SM-seconds under two readings of a row: over the time since the same pid's previous
             timestamp, and (modes 1 and 2) over the span it was asked for (since_us to its
             timestamp); and the mean SM value of its rows.

Exit 0 on success, 2 on bad input (a missing or malformed file, no pynvml for record).
"""
import argparse
import csv
import sys
import time

FIELDS = ["query_us", "mode", "since_us", "pid", "ts_us", "sm", "mem", "enc", "dec"]


def record(out, seconds, gpu, every_ms):
    try:
        import pynvml
    except ImportError:
        print("nvml_process_trace: record needs pynvml", file=sys.stderr)
        return 2
    pynvml.nvmlInit()
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(gpu)
        rows = 0
        since = {0: 0, 1: 0, 2: 0}  # per mode: the lastSeenTimeStamp passed
        end = time.monotonic() + seconds
        with open(out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            while time.monotonic() < end:
                # Mode 0 asks for everything the driver keeps (lastSeenTimeStamp 0); mode 1 for what
                # is newer than the newest timestamp the previous mode-1 query returned; mode 2 for
                # the last second.
                for mode in (0, 1, 2):
                    q_us = int(time.time() * 1e6)
                    if mode == 2:
                        since[2] = q_us - 1_000_000
                    try:
                        samples = pynvml.nvmlDeviceGetProcessUtilization(h, since[mode])
                    except pynvml.NVMLError as e:
                        if "Not Found" not in str(e):
                            print(f"nvml_process_trace: {e}", file=sys.stderr)
                        samples = []
                    for s in samples:
                        w.writerow([q_us, mode, since[mode], s.pid, s.timeStamp, s.smUtil, s.memUtil, s.encUtil,
                                    s.decUtil])
                        rows += 1
                    if mode == 1 and samples:
                        since[1] = max(s.timeStamp for s in samples)
                time.sleep(every_ms / 1000.0)
        print(f"nvml_process_trace: {rows} rows in {seconds} s -> {out}")
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
    for mode, what in ((0, "lastSeenTimeStamp 0 (everything the driver keeps)"),
                       (1, "lastSeenTimeStamp = the previous query's newest timestamp"),
                       (2, "lastSeenTimeStamp = the query's time less 1 s")):
        m = sorted((r for r in rows if r["mode"] == mode), key=lambda r: (r["query_us"], r["ts_us"]))
        if not m:
            continue
        queries = sorted({r["query_us"] for r in m})
        span_s = (queries[-1] - queries[0]) / 1e6
        print(f"mode {mode}, {what}: {len(m)} rows from {len(queries)} queries over {span_s:.2f} s")
        print("| pid | rows | most rows in one query | distinct timestamps | spacing ms (q25 / median / max) |"
              " lag ms (median / p95 / max) | first seen after another pid's newer | SM-s since previous |"
              " SM-s over the query's span | share of the span (since previous / query span) | mean SM % of rows |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for pid in sorted({r["pid"] for r in m}):
            mine = [r for r in m if r["pid"] == pid]
            per_query = {}
            for r in mine:
                per_query[r["query_us"]] = per_query.get(r["query_us"], 0) + 1
            first = {}
            for r in mine:
                first.setdefault(r["ts_us"], r)
            ts = sorted(first.values(), key=lambda r: r["ts_us"])
            sp = [(b["ts_us"] - a["ts_us"]) / 1e3 for a, b in zip(ts, ts[1:])]
            lag = [(r["query_us"] - r["ts_us"]) / 1e3 for r in ts]
            # First seen while another pid already had a newer timestamp seen.
            late = 0
            for r in ts:
                late += any(o["pid"] != pid and o["query_us"] < r["query_us"] and o["ts_us"] > r["ts_us"] for o in m)
            since_prev = sum(b["sm"] / 100.0 * s / 1e3 for b, s in zip(ts[1:], sp))
            over_span = sum(r["sm"] / 100.0 * max(0, r["ts_us"] - r["since_us"]) / 1e6 for r in ts[1:]) if mode else 0.0
            share = f"{since_prev / span_s:.3f} / {over_span / span_s:.3f}" if span_s > 0 else "n/a"
            print(f"| {pid} | {len(mine)} | {max(per_query.values())} | {len(ts)} |"
                  f" {quantile(sp, 0.25):.1f} / {quantile(sp, 0.5):.1f} / {max(sp) if sp else float('nan'):.1f} |"
                  f" {quantile(lag, 0.5):.1f} / {quantile(lag, 0.95):.1f} / {max(lag):.1f} | {late} |"
                  f" {since_prev:.3f} | {over_span:.3f} | {share} | {sum(r['sm'] for r in mine) / len(mine):.1f} |")
        print()
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
