#!/usr/bin/env python3
"""Compares wattlab's windows with the direct NVML energy counter (docs/results/nvml-h200.md).

Inputs: the run JSON of `wattlab run --json` (docs/json-output.md) and the results JSON of
benchmarks/device/nvml_check_load (steady and step phases), optionally a second results JSON
with its cost phase and that run's JSON. Prints the tables of the results doc and PASS/FAIL lines.
Exit 0 when every check passes, 1 when one fails, 2 on bad input.
"""
import argparse
import json
import math
import sys

TOLERANCE_PCT = 1.0      # wattlab vs the direct counter, per steady window
SAMPLER_CPU_MAX_PCT = 1.0  # sampler CPU, % of one core


def gpu_domain_id(run, uuid):
    """The run's GPU domain of the load's device (by UUID; the only GPU domain otherwise)."""
    gpus = [d for d in run["domains"] if d["scope"] == "gpu"]
    for d in gpus:
        if uuid and d.get("uuid") == uuid:
            return d["id"]
    if len(gpus) == 1:
        return gpus[0]["id"]
    raise ValueError(f"no GPU domain with uuid {uuid!r} among {[d['id'] for d in gpus]}")


def window_energy(run, name, domain_id):
    """(energy_j, uncertainty_j, systematic_j) of the window `name` on `domain_id`; None if unavailable."""
    for w in run["windows"]:
        if w["name"] == name:
            for d in w["domains"]:
                if d["domain_id"] == domain_id:
                    if not d["available"]:
                        return None
                    return d["energy_j"], d["uncertainty_j"], d["systematic_j"]
    raise ValueError(f"window {name!r} is not in the run JSON")


def steady_rows(run, load):
    """Per steady window: name, wattlab J, ± J, direct J, diff %, pass."""
    dom = gpu_domain_id(run, load.get("nvml_uuid"))
    rows = []
    for w in load["steady"]["windows"]:
        e = window_energy(run, w["name"], dom)
        direct = w["direct_j"]
        if e is None:
            rows.append({"name": w["name"], "wattlab_j": None, "u_j": None, "direct_j": direct, "diff_pct": None, "ok": False})
            continue
        diff = 100.0 * (e[0] - direct) / direct
        rows.append({"name": w["name"], "wattlab_j": e[0], "u_j": e[1], "gain_j": e[2], "direct_j": direct,
                     "dur_s": (w["t_end_ns"] - w["t_begin_ns"]) * 1e-9, "diff_pct": diff,
                     "within_u": abs(e[0] - direct) <= e[1], "ok": abs(diff) <= TOLERANCE_PCT})
    return rows


def percentile(values, q):
    """Linear-interpolation percentile (q in 0..100), as numpy's default."""
    v = sorted(values)
    if not v:
        raise ValueError("no values")
    pos = (len(v) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def cost_stats(cost):
    """Median and p99 in µs of each method's window pair, and the ratio of medians counter/other."""
    out = {}
    for key in ("marks_pair_ns", "meter_pair_ns", "counter_pair_ns", "counter_read_ns"):
        v = cost.get(key)
        if v:
            out[key] = {"median_us": percentile(v, 50) / 1e3, "p99_us": percentile(v, 99) / 1e3, "n": len(v)}
    c = out["counter_pair_ns"]["median_us"]
    for key in ("marks_pair_ns", "meter_pair_ns"):
        if key in out:
            out[key]["counter_over_this"] = c / out[key]["median_us"]
    return out


def step_stats(run, load):
    """Per step window energy ± U, and mean U against the spread across repeats."""
    dom = gpu_domain_id(run, load.get("nvml_uuid"))
    rows = []
    for w in load["step"]["windows"]:
        e = window_energy(run, w["name"], dom)
        rows.append({"name": w["name"], "energy_j": None if e is None else e[0], "u_j": None if e is None else e[1],
                     "gemms": w["gemms"]})
    es = [r["energy_j"] for r in rows if r["energy_j"] is not None]
    us = [r["u_j"] for r in rows if r["u_j"] is not None]
    if len(es) < 2:
        raise ValueError("fewer than 2 step windows with an energy")
    mean = sum(es) / len(es)
    std = math.sqrt(sum((e - mean) ** 2 for e in es) / (len(es) - 1))
    mean_u = sum(us) / len(us)
    covered = sum(1 for r in rows if r["energy_j"] is not None and abs(r["energy_j"] - mean) <= r["u_j"])
    return {"rows": rows, "n": len(es), "mean_j": mean, "std_j": std, "mean_u_j": mean_u,
            "u_over_2std": mean_u / (2 * std) if std > 0 else math.inf, "covered": covered}


def sampler_cpu(run):
    t = run.get("tags", {})
    if "wattlab.sampler_cpu_pct" not in t:
        return None
    return {k: float(t["wattlab." + k]) for k in ("sampler_cpu_pct", "sampler_cpu_s", "sampler_span_s", "process_cpu_pct")}


def fmt(v, spec=".3f"):
    return "n/a" if v is None else format(v, spec)


def report(run, load, cost_load=None, cost_run=None, out=sys.stdout):
    """Prints every table; returns True when every check passes."""
    ok = True
    p = lambda s="": print(s, file=out)
    p(f"device: {load['device_name']} {load['device_uuid']}; GEMM {load['gemm']['n']}^3 {load['gemm']['dtype']}: "
      f"{load['gemm']['mean_ms']:.3f} ms each, {load['gemm']['tflops']:.1f} TFLOP/s")
    if run.get("simulated"):
        p("SIMULATED: this run measured wattlab's simulated GPU")
    if "steady" in load:
        p("\n(a) steady BF16 GEMM windows: wattlab vs the direct NVML energy counter (edges on counter updates)")
        p(f"{'window':<10} {'dur s':>8} {'wattlab J':>12} {'± (95%) J':>10} {'± gain J':>10} {'direct J':>12} {'diff %':>8}  check")
        for r in steady_rows(run, load):
            p(f"{r['name']:<10} {fmt(r.get('dur_s')):>8} {fmt(r['wattlab_j']):>12} {fmt(r['u_j']):>10} {fmt(r.get('gain_j')):>10} "
              f"{fmt(r['direct_j']):>12} {fmt(r['diff_pct'], '+.3f'):>8}  {'PASS' if r['ok'] else 'FAIL'} (|diff| <= {TOLERANCE_PCT}%)"
              f"{'' if r['wattlab_j'] is None else ('; diff within ±U' if r['within_u'] else '; diff outside ±U')}")
            ok = ok and r["ok"]
    for label, rr in (("(a) run", run), ("(b) cost run", cost_run)):
        if rr is None:
            continue
        s = sampler_cpu(rr)
        if s is None:
            p(f"{label}: sampler CPU not in the run JSON (wattlab too old?): FAIL")
            ok = False
            continue
        good = s["sampler_cpu_pct"] <= SAMPLER_CPU_MAX_PCT
        if rr is run:
            ok = ok and good
        p(f"{label}: sampler CPU {s['sampler_cpu_s']:.3f} s over {s['sampler_span_s']:.1f} s = {s['sampler_cpu_pct']:.3f}% of one core"
          f" ({('PASS' if good else 'FAIL') + f', target <= {SAMPLER_CPU_MAX_PCT}%' if rr is run else 'not checked: this run adds the cost windows'})"
          f"; whole wattlab process {s['process_cpu_pct']:.3f}%")
    if cost_load is not None and "cost" in cost_load:
        c = cost_stats(cost_load["cost"])
        p(f"\n(b) window cost on the caller's thread, {c['counter_pair_ns']['n']} pairs each (under the GEMM load)")
        p(f"{'method':<44} {'median us':>10} {'p99 us':>10} {'counter/this':>13}")
        names = {"marks_pair_ns": "wattlab marks open+close (pipe write x2)", "meter_pair_ns": "in-process wattlab::Meter open+close",
                 "counter_pair_ns": "energy counter read at both edges", "counter_read_ns": "one energy counter read"}
        for key, name in names.items():
            if key in c:
                ratio = c[key].get("counter_over_this")
                p(f"{name:<44} {c[key]['median_us']:>10.3f} {c[key]['p99_us']:>10.3f} {fmt(ratio, '.0f') if ratio else '':>13}")
        if cost_load["cost"].get("meter_error"):
            p(f"in-process meter not timed: {cost_load['cost']['meter_error']}")
    if "step" in load:
        s = step_stats(run, load)
        p(f"\n(c) {load['step']['window_ms']:.0f} ms windows over a step ({load['step']['busy_ms']:.0f} ms GEMM burst, then idle), {s['n']} repeats")
        p(f"{'window':<10} {'energy J':>10} {'± (95%) J':>10} {'gemms':>6}")
        for r in s["rows"]:
            p(f"{r['name']:<10} {fmt(r['energy_j']):>10} {fmt(r['u_j']):>10} {r['gemms']:>6}")
        p(f"mean {s['mean_j']:.3f} J; spread across repeats (std) {s['std_j']:.3f} J; mean reported ± (95%) {s['mean_u_j']:.3f} J; "
          f"mean U / (2 std) = {s['u_over_2std']:.2f} (1: U matches a 95% spread; > 1 conservative; < 1 optimistic); "
          f"{s['covered']}/{s['n']} windows within their ±U of the mean")
    p(f"\noverall: {'PASS' if ok else 'FAIL'}")
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_json")
    ap.add_argument("load_json")
    ap.add_argument("--cost-load", help="results JSON of the cost phase")
    ap.add_argument("--cost-run", help="run JSON of the cost phase's run")
    a = ap.parse_args(argv)
    try:
        docs = [json.load(open(f)) if f else None for f in (a.run_json, a.load_json, a.cost_load, a.cost_run)]
        if docs[0].get("schema") != "wattlab.run/1":
            raise ValueError(f"{a.run_json}: schema {docs[0].get('schema')!r}, expected 'wattlab.run/1'")
        return 0 if report(*docs) else 1
    except (OSError, ValueError, KeyError) as e:
        print(f"nvml_check: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
