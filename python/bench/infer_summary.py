#!/usr/bin/env python3
"""Summary table of batch-sweep runs from `wattlab run --json` files (stdlib only).

    python3 infer_summary.py llama.json mixtral.json [--markdown]

One row per marks window with a tokens count: GPU energy per token with its 95% uncertainty
(and the gain tolerance apart), mean power, throughput, measured SM / tensor / DRAM activity,
SM clock, power-capped share, host CPU cores kept busy, median ITL, and CPU energy per token
when the run had cpu domains. Numbers of a SIMULATED run are marked so.
"""
import json
import re
import sys


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def rows_of(run):
    sim = any(d.get("simulated") for d in run.get("domains", []))
    tags = run.get("tags", {})
    for w in run.get("windows", []):
        c = w.get("counts", {})
        if not c.get("tokens"):
            continue
        lab = w.get("labels", {})
        if "marks.unclosed" in lab or lab.get("phase", "steady") != "steady":
            continue  # left open at exit, or a warm-up: not a steady window
        gpus = [d for d in w["domains"] if re.fullmatch(r"gpu:\d+", d["domain_id"]) and d.get("available")]
        cpus = [d for d in w["domains"] if re.fullmatch(r"cpu:\d+/(package|dram)", d["domain_id"]) and d.get("available")]
        if not gpus:
            continue
        tok = c["tokens"]
        e = sum(d["energy_j"] for d in gpus)
        u = sum(d["uncertainty_j"] ** 2 for d in gpus) ** 0.5
        g = sum(d["systematic_j"] for d in gpus)

        def tel(key):
            v = [d["telemetry"].get(key) for d in gpus if d.get("telemetry", {}).get(key) is not None]
            return sum(v) / len(v) if v else None

        yield {
            "model": tags.get("nickname", tags.get("model", "?")) + (" SIMULATED" if sim else ""),
            "path": lab.get("path", "?"),
            "batch": int(float(lab.get("batch", tags.get("batch", 0)))),
            "dur_s": w["dur_s"],
            "tok_s": tok / w["dur_s"],
            "power_w": e / w["dur_s"],
            "j_tok": e / tok, "u": u / tok, "gain": g / tok,
            "sm": tel("mean_sm_activity_pct"), "tensor": tel("mean_tensor_activity_pct"),
            "dram": tel("mean_dram_bw_pct"), "util": tel("mean_utilization_gpu_pct"),
            "clock": tel("mean_sm_clock_mhz"), "capped": tel("power_capped_fraction"),
            "host": c.get("host_cpu_s", 0) / w["dur_s"] if "host_cpu_s" in c else None,
            "itl": float(lab["median_itl_ms"]) if "median_itl_ms" in lab else None,
            "cpu_j_tok": sum(d["energy_j"] for d in cpus) / tok if cpus else None,
        }


HEAD = ["model", "path", "batch", "window s", "tokens/s", "GPU W", "GPU J/token", "± 95%", "± gain", "SM act %",
        "tensor %", "DRAM %", "GPU util %", "SM MHz", "capped %", "host cores", "median ITL ms", "CPU J/token"]


def cells(r):
    return [r["model"], r["path"], str(r["batch"]), fmt(r["dur_s"], ".1f"), fmt(r["tok_s"], ".0f"),
            fmt(r["power_w"], ".0f"), fmt(r["j_tok"], ".4g"), fmt(r["u"], ".2g"), fmt(r["gain"], ".2g"),
            fmt(r["sm"], ".0f"), fmt(r["tensor"], ".0f"), fmt(r["dram"], ".0f"), fmt(r["util"], ".0f"),
            fmt(r["clock"], ".0f"), fmt(None if r["capped"] is None else 100 * r["capped"], ".0f"),
            fmt(r["host"], ".2f"), fmt(r["itl"], ".2f"), fmt(r["cpu_j_tok"], ".3g")]


def main():
    md = "--markdown" in sys.argv
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = []
    for f in files:
        with open(f) as fh:
            rows += list(rows_of(json.load(fh)))
    rows.sort(key=lambda r: (r["model"], r["path"], r["batch"]))
    table = [HEAD] + [cells(r) for r in rows]
    if md:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "---|" * len(HEAD))
        for c in table[1:]:
            print("| " + " | ".join(c) + " |")
    else:
        widths = [max(len(row[i]) for row in table) for i in range(len(HEAD))]
        for row in table:
            print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
    print("GPU energy from the gpu:N domains over each marks window; ± 95%: the window's own uncertainty; "
          "± gain: the board's gain tolerance. CPU J/token: '-' where the machine exposes no powercap.")
    # The batch-size effect: J/token and power from the smallest to the largest batch per path.
    by = {}
    for r in rows:
        by.setdefault((r["model"], r["path"]), []).append(r)
    for (m, p), rs in sorted(by.items()):
        if len(rs) >= 2:
            a, b = rs[0], rs[-1]
            print(f"{m} {p}: batch {a['batch']} -> {b['batch']}: J/token {a['j_tok']:.4g} -> {b['j_tok']:.4g} "
                  f"({a['j_tok'] / b['j_tok']:.1f}x lower), power {a['power_w']:.0f} -> {b['power_w']:.0f} W")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
