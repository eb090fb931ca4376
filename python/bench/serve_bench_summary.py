#!/usr/bin/env python3
"""One table over serve-bench series (JSON of `wattlab infer serve-bench --json`, schema
wattlab.serve-bench/2): per model and batch cap, the request count, the pilots, J/token over the
stable repeats with its 95 % t-interval, and the repeats' means of throughput, power, running
requests and median ITL. Every number comes from the files; a missing one prints as "-".

  python3 serve_bench_summary.py out/*.json [--markdown]
"""
import argparse
import json
import statistics
import sys


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def mean_of(runs, get):
    vals = [v for v in (get(r) for r in runs) if v is not None]
    return statistics.mean(vals) if vals else None


def itl_ms(run):
    q = (run.get("latency_s") or {}).get("itl_median")
    return q["value"] * 1e3 if q else None


def row(doc):
    """The summary of one series; raises ValueError for a file that is not one."""
    if doc.get("schema") != "wattlab.serve-bench/2":
        raise ValueError(f"schema {doc.get('schema')!r}, expected wattlab.serve-bench/2")
    rep = doc["repeats"]
    included = set(rep.get("included", []))
    runs = [r for r in doc["runs"] if r["role"] == "repeat" and r["index"] in included]
    ept = rep.get("energy_per_token_j") or {}
    st = lambda r: r["steady_state"]  # noqa: E731
    return {
        "model": doc.get("server", {}).get("model", "?"),
        "batch_cap": doc.get("batch_cap"),
        "requests_per_run": doc.get("requests_per_run"),
        "pilots": sum(1 for r in doc["runs"] if r["role"] == "pilot"),
        "repeats": f"{rep.get('n', 0)}/{sum(1 for r in doc['runs'] if r['role'] == 'repeat')}",
        "ept_mean": ept.get("mean"),
        "ept_low": ept.get("ci95_low"),
        "ept_high": ept.get("ci95_high"),
        "u95": rep.get("mean_measurement_u95_j"),
        "tok_s": mean_of(runs, lambda r: st(r).get("throughput_tokens_per_s")),
        "power_w": mean_of(runs, lambda r: (st(r).get("avg_power_w") or {}).get("value")),
        "window_s": mean_of(runs, lambda r: st(r).get("dur_s")),
        "running": mean_of(runs, lambda r: st(r).get("avg_running_server") or st(r).get("avg_running_client")),
        "itl_ms": mean_of(runs, itl_ms),
        "failure": doc.get("failure", ""),
    }


COLUMNS = [("model", "model", "s"), ("B", "batch_cap", "d"), ("requests/run", "requests_per_run", "d"),
           ("pilots", "pilots", "d"), ("stable repeats", "repeats", "s"), ("J/token", "ept_mean", ".4g"),
           ("95% CI (t)", None, None), ("mean U95 J", "u95", ".2g"), ("tok/s", "tok_s", ".0f"),
           ("W", "power_w", ".0f"), ("window s", "window_s", ".1f"), ("running", "running", ".1f"),
           ("median ITL ms", "itl_ms", ".2f")]


def cells(r):
    out = []
    for _, key, spec in COLUMNS:
        if key is None:
            out.append("-" if r["ept_low"] is None else f"{r['ept_low']:.4g}..{r['ept_high']:.4g}")
        else:
            out.append(fmt(r[key], spec))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    rows = []
    for path in a.files:
        try:
            with open(path) as f:
                rows.append(row(json.load(f)))
        except (OSError, ValueError, KeyError) as e:
            print(f"serve_bench_summary: {path}: {e}", file=sys.stderr)
            return 2
    rows.sort(key=lambda r: (r["model"], r["batch_cap"] or 0))
    head = [c[0] for c in COLUMNS]
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(cells(r)) + " |")
    else:
        print("\t".join(head))
        for r in rows:
            print("\t".join(cells(r)))
    for r in rows:
        if r["failure"]:
            print(f"{r['model']} B={r['batch_cap']}: SERIES FAILED: {r['failure']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
