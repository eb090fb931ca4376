#!/usr/bin/env python3
"""Tables of the meter's validation on a GPU (docs/results/meter-validation-h200.md).

Reads what benchmarks/device/meter_validate wrote: windows-<half>.csv (one row per window: wattlab's
estimate, the energy counter read at the window's edges, 10 ms power polls integrated, the memory
domain, a reference), optionally state-<half>.json (GPU state, levels, power limit) and
trace-<half>.csv (every 10 ms poll). Arguments are files or folders holding them. Prints Markdown:
levels; exact windows (between counter updates); (1) linearity fits with residuals; (2) edges;
(3) short windows: bias and spread per method; (4) calibration: coverage of wattlab's U95;
(5) the memory domain and power at the cap. Means come with 95 % t intervals.
Exit 0 on success, 2 on bad input (a message names it).
"""
import argparse
import bisect
import csv
import glob
import gzip
import json
import math
import os
import re
import sys
from collections import Counter, defaultdict

import validate_stats as st

LEVELS = ("idle", "below", "near", "cap", "hbm-copy")
# (label, column) of the three ways each window is measured; the polls come twice (two fields).
METHODS = (("wattlab", "wl_energy_j"), ("counter at edges", "ctr_edges_j"),
           ("poll PowerUsage", "poll_usage_j"), ("poll instant", "poll_instant_j"))
TEXT_COLUMNS = {"half", "part", "level", "set", "role", "name", "wl_api", "wl_final", "wl_estimator",
                "wl_cross_check_estimator", "wl_issues", "mem_wl_status", "mem_wl_estimator", "ref_kind"}
REQUIRED_COLUMNS = {"half", "part", "level", "set", "role", "repeat", "t_begin_ns", "t_end_ns", "dur_s", "planned_s",
                    "shift_ms", "work_units", "wl_final", "wl_energy_j", "wl_u95_j", "wl_estimator", "ctr_edges_j",
                    "poll_usage_j", "poll_instant_j", "poll_capped_share", "poll_sm_clock_mhz", "mem_wl_status",
                    "mem_poll_instant_j", "mem_poll_average_j", "ref_j", "ref_u_j", "ref_kind", "ref_alt_j"}
COVERAGE_TARGET = (0.90, 0.99)


# ---- reading -----------------------------------------------------------------------------------

def parse_row(raw):
    row = {}
    for k, v in raw.items():
        if k in TEXT_COLUMNS:
            row[k] = v
        elif v is None or v == "":
            row[k] = None
        else:
            try:
                row[k] = float(v)
            except ValueError:
                raise ValueError(f"column {k}: {v!r} is not a number")
    return row


def read_windows(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = REQUIRED_COLUMNS - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: columns missing: {', '.join(sorted(missing))}")
        return [parse_row(r) for r in reader]


def read_trace(path):
    """[(t_ns, usage_w, instant_w, mem_instant_w, mem_average_w, sm_clock_mhz, reasons)] in time order."""
    out = []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            g = lambda k: float(r[k]) if r.get(k) not in (None, "") else None
            out.append((int(r["t_ns"]), g("usage_w"), g("instant_w"), g("mem_instant_w"), g("mem_average_w"),
                        g("sm_clock_mhz"), int(r["clock_event_reasons"]) if r.get("clock_event_reasons") else None))
    out.sort(key=lambda x: x[0])
    return out


def gather(paths):
    """Expands folders; returns (window rows, {half: state}, {half: trace})."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "windows-*.csv")) + glob.glob(os.path.join(p, "state-*.json")) +
                            glob.glob(os.path.join(p, "trace-*.csv")) + glob.glob(os.path.join(p, "trace-*.csv.gz")))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise ValueError(f"{p}: no such file or folder")
    rows, states, traces = [], {}, {}
    for f in files:
        base = os.path.basename(f)
        m = re.match(r"(windows|state|trace)-(.+?)\.(csv|json|csv\.gz)$", base)
        if not m:
            raise ValueError(f"{f}: expected windows-<half>.csv, state-<half>.json or trace-<half>.csv[.gz]")
        kind, half = m.group(1), m.group(2)
        if kind == "windows":
            rows += read_windows(f)
        elif kind == "state":
            with open(f) as fh:
                states[half] = json.load(fh)
        else:
            traces[half] = read_trace(f)
    if not rows:
        raise ValueError("no windows-<half>.csv among the inputs")
    return rows, states, traces


# ---- helpers -----------------------------------------------------------------------------------

def fin(v):
    return v is not None and math.isfinite(v)


def fmt(v, spec=".2f"):
    return "n/a" if not fin(v) else format(v, spec)


def fmt_ci(m, h, spec=".2f"):
    if not fin(m):
        return "n/a"
    return format(m, spec) if not fin(h) else f"{format(m, spec)} ± {format(h, spec.lstrip('+'))}"


def level_key(level):
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def table(out, header, rows):
    if not rows:
        out.write("(no windows of this kind)\n\n")
        return
    out.write("| " + " | ".join(header) + " |\n")
    out.write("|" + "|".join("---" for _ in header) + "|\n")
    for r in rows:
        out.write("| " + " | ".join(str(c) for c in r) + " |\n")
    out.write("\n")


def dur(r):
    return r["dur_s"]


def ratio_stats(rows, col, ref="ref_j"):
    """(n, bias % mean, its CI half-width, CV %) of E/ref over rows where both are finite."""
    rs = [r[col] / r[ref] for r in rows if fin(r.get(col)) and fin(r.get(ref)) and r[ref] > 0]
    if not rs:
        return 0, None, None, None
    m, h = st.mean_ci(rs)
    cv = 100 * st.sd(rs) / m if len(rs) > 1 and m != 0 else None
    return len(rs), 100 * (m - 1), (100 * h if h is not None else None), cv


def coverage(rows, ref_of=lambda r: r["ref_j"], extra_u=lambda r: 0.0):
    """(inside, n, mean U / rms deviation): wattlab windows whose |E - ref| <= U95 (+ the reference's own)."""
    inside, n, us, devs = 0, 0, [], []
    for r in rows:
        ref = ref_of(r)
        if not (fin(r.get("wl_energy_j")) and fin(r.get("wl_u95_j")) and fin(ref)):
            continue
        u = r["wl_u95_j"] + extra_u(r)
        dev = r["wl_energy_j"] - ref
        n += 1
        inside += abs(dev) <= u
        us.append(u)
        devs.append(dev)
    rms = math.sqrt(sum(d * d for d in devs) / len(devs)) if devs else None
    return inside, n, (st.mean(us) / rms if rms else None)


def verdict(inside, n):
    """Coverage against the target: in it, or outside it by the point estimate only (the Wilson interval
    still reaches the target: too few windows to tell), or outside it with the whole interval."""
    if n == 0:
        return "n/a"
    c = inside / n
    lo, hi = st.wilson(inside, n)
    if COVERAGE_TARGET[0] <= c <= COVERAGE_TARGET[1]:
        return "in target"
    if c < COVERAGE_TARGET[0]:
        return "under (U too small)" if hi < COVERAGE_TARGET[0] else "below target, too few to tell"
    return "over (U too wide)" if lo > COVERAGE_TARGET[1] else "above target, too few to tell"


def state_value(states, key):
    for s in states.values():
        if s.get(key) is not None:
            return s[key]
    return None


# ---- sections ----------------------------------------------------------------------------------

def levels_section(rows, states, out):
    out.write("## Levels: steady power by the energy counter between updates\n\n")
    body = []
    for r in sorted((r for r in rows if r["part"] == "levels" and r["set"] == "rate"), key=lambda r: (r["half"], level_key(r["level"]))):
        load = ""
        st_half = states.get(r["half"], {})
        if r["level"] in st_half.get("levels", {}):
            load = st_half["levels"][r["level"]].get("load", "")
        halves = [x for x in rows if x["half"] == r["half"] and x["level"] == r["level"] and x["set"] in ("rate-first", "rate-second")]
        hp = " / ".join(fmt(x["ref_j"] / dur(x), ".1f") for x in sorted(halves, key=lambda x: x["set"]))
        w = r.get("work_units")
        body.append([r["half"], r["level"], load, fmt(r["ref_j"] / dur(r), ".1f"), hp or "n/a", fmt(dur(r), ".1f"),
                     fmt(r["ref_j"] / w, ".4f") if fin(w) and w > 0 else "n/a",
                     fmt(1e3 * dur(r) / w, ".3f") if fin(w) and w > 0 else "n/a",
                     fmt(100 * r["poll_capped_share"], ".0f") if fin(r.get("poll_capped_share")) else "n/a",
                     fmt(r.get("poll_sm_clock_mhz"), ".0f")])
    table(out, ["half", "level", "load", "power W", "halves W (1st / 2nd)", "span s", "J per unit", "ms per unit",
                "power-capped % of polls", "SM MHz"], body)
    probes = [r for r in rows if r["part"] == "levels" and r["set"].startswith("probe-")]
    if probes:
        out.write("Probes for the near level (about 1 s each, counter between updates): " +
                  "; ".join(f"{r['half']} {r['set'][6:]}: {fmt(r['ref_j'] / dur(r), '.1f')} W, capped "
                            f"{fmt(100 * r['poll_capped_share'] if fin(r.get('poll_capped_share')) else None, '.0f')} %"
                            for r in probes) + "\n\n")


def exact_section(rows, out):
    out.write("## Exact windows: edges on counter updates, the counter's delta is the truth\n\n"
              "diff = (estimate - counter) / counter; inside U = |wattlab - counter| <= wattlab's U95 + the "
              "reference's own half-bracket bound.\n\n")
    groups = defaultdict(list)
    for r in rows:
        if r["ref_kind"] == "counter-updates" and fin(r["ref_j"]) and r["ref_j"] > 0:
            set_name = "probe" if r["set"].startswith("probe-") else r["set"]
            groups[(r["part"], set_name, r["level"])].append(r)
    body = []
    for (part, set_name, level), g in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], level_key(kv[0][2]))):
        d = [100 * (r["wl_energy_j"] / r["ref_j"] - 1) for r in g if fin(r["wl_energy_j"])]
        m, h = st.mean_ci(d)
        inside, n, _ = coverage(g, extra_u=lambda r: r["ref_u_j"] if fin(r["ref_u_j"]) else 0.0)
        pu = [100 * (r["poll_usage_j"] / r["ref_j"] - 1) for r in g if fin(r["poll_usage_j"])]
        pi = [100 * (r["poll_instant_j"] / r["ref_j"] - 1) for r in g if fin(r["poll_instant_j"])]
        body.append([part, set_name, level, len(g),
                     f"{fmt(min(dur(r) for r in g), '.2f')}-{fmt(max(dur(r) for r in g), '.2f')}",
                     fmt_ci(m, h, "+.3f"), fmt(max(abs(x) for x in d), ".3f") if d else "n/a", f"{inside}/{n}",
                     fmt_ci(*st.mean_ci(pu), "+.2f"), fmt_ci(*st.mean_ci(pi), "+.2f")])
    table(out, ["part", "set", "level", "n", "dur s", "wattlab diff %", "max abs %", "inside U", "poll PowerUsage diff %",
                "poll instant diff %"], body)


def fit_line(g, col, regressors):
    """Least-squares fit of column `col` on regressors(row) over the rows where it is finite; None if too few."""
    pts = [(regressors(r), r[col]) for r in g if fin(r.get(col))]
    if not pts or len(pts) <= len(pts[0][0]):
        return None
    return st.ols([p[0] for p in pts], [p[1] for p in pts])


def linearity_section(rows, states, out):
    out.write("## (1) Known-load linearity\n\n")
    lin = [r for r in rows if r["part"] == "linearity"]
    rates = {(r["half"], r["level"]): r for r in rows if r["part"] == "levels" and r["set"] == "rate"}
    for kind, title, regs, names in (
            ("nbursts", "N identical bursts in one window: E = a + b * work", lambda r: [1.0, r["work_units"]], ("a J", "b J/unit")),
            ("duty", "duty cycles: E = p * T + e * work (no intercept)", lambda r: [dur(r), r["work_units"]], ("p W", "e J/unit"))):
        out.write(f"### {title}\n\n")
        body, resid = [], []
        for (half, level) in sorted({(r["half"], r["level"]) for r in lin}, key=lambda x: (x[0], level_key(x[1]))):
            g = [r for r in lin if r["half"] == half and r["level"] == level and r["set"].startswith(kind)]
            if len(g) < 3:
                continue
            for label, col in METHODS:
                f = fit_line(g, col, regs)
                if f is None:
                    continue
                ci = f["ci"] or [None, None]
                inside = ""
                if col == "wl_energy_j":
                    used = [r for r in g if fin(r.get(col))]
                    k = sum(abs(e) <= r["wl_u95_j"] for e, r in zip(f["residuals"], used) if fin(r.get("wl_u95_j")))
                    inside = f"{k}/{len(used)}"
                    for e, r, fv in zip(f["residuals"], used, f["fitted"]):
                        resid.append([half, level, r["set"], int(r["repeat"]) if kind == "nbursts" else "",
                                      fmt(dur(r), ".3f"), int(r["work_units"]), fmt(r[col], ".2f"), fmt(fv, ".2f"),
                                      fmt(e, "+.2f"), fmt(r.get("wl_u95_j"), ".2f"), r["wl_estimator"]])
                body.append([half, level, label, len([r for r in g if fin(r.get(col))]), fmt_ci(f["coef"][0], ci[0], ".3f"),
                             fmt_ci(f["coef"][1], ci[1], ".5f"), fmt(f["s"], ".3f"),
                             fmt(max(abs(e) for e in f["residuals"]), ".3f"), inside])
            rate = rates.get((half, level))
            if kind == "duty" and rate and fin(rate.get("work_units")) and rate["work_units"] > 0:
                idle = rates.get((half, "idle"))
                p_idle = idle["ref_j"] / dur(idle) if idle else None
                e_gross = rate["ref_j"] / rate["work_units"]
                t_unit = dur(rate) / rate["work_units"]
                e_net = e_gross - p_idle * t_unit if fin(p_idle) else None
                body.append([half, level, "expected (steady phase)", "", fmt(p_idle, ".3f") + " (idle W)",
                             fmt(e_net, ".5f") + " (net J/unit)", "", "", ""])
        table(out, ["half", "level", "method", "n", names[0] + " ± 95%", names[1] + " ± 95%", "residual sd J",
                    "max abs residual J", "wattlab residual inside U95"], body)
        if resid:
            out.write(f"wattlab's residuals ({kind}):\n\n")
            table(out, ["half", "level", "set", "N", "dur s", "work units", "E J", "fit J", "residual J", "U95 J",
                        "estimator"], resid)


def afterload_table(rows, out):
    al = [r for r in rows if r["part"] == "edges" and r["set"].startswith("afterload")]
    if not al:
        return
    out.write("### Load, then an idle window opened at the stop\n\n"
              "idle = the window opened the moment the load stopped; exact = the same idle stretch between the next "
              "counter updates (its delta is the truth); head = stop to that first update, tail = window end to the "
              "last update; implied idle = exact + head - tail (head and tail from the named method).\n\n")
    body = []
    for (half, level, rep) in sorted({(r["half"], r["level"], int(r["repeat"])) for r in al}):
        g = {r["set"]: r for r in al if r["half"] == half and r["level"] == level and int(r["repeat"]) == rep}
        idle, exact, head, tail = (g.get(k) for k in ("afterload-idle", "afterload-idle-exact", "afterload-head", "afterload-tail"))
        load = g.get("afterload-load")
        if load:
            body.append([half, level, rep, "load", fmt(dur(load), ".3f"), fmt(load["wl_energy_j"], ".1f"),
                         fmt(load["wl_u95_j"], ".1f"), load["wl_estimator"], fmt(load["ctr_edges_j"], ".1f"),
                         fmt(load["poll_usage_j"], ".1f"), fmt(load["poll_instant_j"], ".1f"), fmt(load["ref_j"], ".1f") + " (steady work)"])
        if idle:
            implied = ""
            if exact and head and tail:
                parts = []
                for label, col in (("wattlab", "wl_energy_j"), ("poll instant", "poll_instant_j")):
                    if fin(head.get(col)) and fin(tail.get(col)):
                        parts.append(f"{label} {fmt(exact['ref_j'] + head[col] - tail[col], '.1f')}")
                implied = "; ".join(parts)
            body.append([half, level, rep, "idle", fmt(dur(idle), ".3f"), fmt(idle["wl_energy_j"], ".1f"),
                         fmt(idle["wl_u95_j"], ".1f"), idle["wl_estimator"], fmt(idle["ctr_edges_j"], ".1f"),
                         fmt(idle["poll_usage_j"], ".1f"), fmt(idle["poll_instant_j"], ".1f"), implied or "n/a"])
        if exact:
            body.append([half, level, rep, "exact", fmt(dur(exact), ".3f"), fmt(exact["wl_energy_j"], ".1f"),
                         fmt(exact["wl_u95_j"], ".1f"), exact["wl_estimator"], fmt(exact["ref_j"], ".1f") + " (truth)",
                         fmt(exact["poll_usage_j"], ".1f"), fmt(exact["poll_instant_j"], ".1f"), ""])
        for label, r in (("head", head), ("tail", tail)):
            if r:
                body.append([half, level, rep, label, fmt(dur(r), ".3f"), fmt(r["wl_energy_j"], ".2f"), fmt(r["wl_u95_j"], ".2f"),
                             r["wl_estimator"], "", fmt(r["poll_usage_j"], ".2f"), fmt(r["poll_instant_j"], ".2f"), ""])
    table(out, ["half", "level", "rep", "window", "dur s", "wattlab J", "U95 J", "estimator", "counter at edges J",
                "poll PowerUsage J", "poll instant J", "reference / implied J"], body)


def split_table(rows, out):
    sp = [r for r in rows if r["part"] == "edges" and r["set"] == "split"]
    if not sp:
        return
    out.write("### One stretch (idle, load, idle) split into parts at the transitions and at random cuts\n\n")
    body = []
    for (half, level) in sorted({(r["half"], r["level"]) for r in sp}, key=lambda x: (x[0], level_key(x[1]))):
        whole = [r for r in sp if r["half"] == half and r["level"] == level and r["role"] == "whole"]
        parts = [r for r in sp if r["half"] == half and r["level"] == level and r["role"] == "part"]
        if not whole or not parts:
            continue
        w = whole[0]
        cells = [half, level, len(parts), fmt(w["ref_j"], ".2f")]
        for _, col in METHODS:
            s = sum(r[col] for r in parts) if all(fin(r.get(col)) for r in parts) else None
            cells += [fmt(w.get(col), ".2f"), fmt(s, ".2f")]
        cells.append(fmt(math.sqrt(sum(r["wl_u95_j"] ** 2 for r in parts)) if all(fin(r.get("wl_u95_j")) for r in parts) else None, ".2f"))
        body.append(cells)
    hdr = ["half", "level", "parts", "truth J"]
    for label, _ in METHODS:
        hdr += [f"{label} whole J", f"{label} sum of parts J"]
    table(out, hdr + ["wattlab parts' U95 (quadrature) J"], body)


def shift_table(rows, out):
    sh = [r for r in rows if r["part"] == "edges" and r["set"].startswith("shift-") and r["role"] in ("scan", "zeus")]
    if not sh:
        return
    out.write("### Windows shifted across a transition (0.5 s windows; shift = window edge - transition)\n\n"
              "scan: wattlab and the polls for every shift in every repeat (mean ± 95 % over repeats); zeus: the counter "
              "read at the window's edges, one repeat per shift (its wattlab estimate beside it). step model: idle "
              "power before an idle->load transition and the steady power after it (or the reverse).\n\n")
    body = []
    keys = sorted({(r["half"], r["level"], r["set"], r["shift_ms"]) for r in sh}, key=lambda k: (k[0], level_key(k[1]), k[2], k[3]))
    for half, level, set_name, shift in keys:
        g = [r for r in sh if (r["half"], r["level"], r["set"], r["shift_ms"]) == (half, level, set_name, shift)]
        scan = [r for r in g if r["role"] == "scan"]
        zeus = [r for r in g if r["role"] == "zeus"]
        cell = lambda rs, col: fmt_ci(*st.mean_ci([r[col] for r in rs if fin(r.get(col))]), ".1f")
        z = zeus[0] if zeus else None
        body.append([half, level, set_name[6:], fmt(shift, "+.0f"), len(scan), cell(scan, "wl_energy_j"),
                     fmt(st.mean([r["wl_u95_j"] for r in scan if fin(r.get("wl_u95_j"))]) if scan else None, ".1f"),
                     cell(scan, "poll_instant_j"), cell(scan, "poll_usage_j"), cell(scan, "ref_j"),
                     fmt(z["ctr_edges_j"], ".1f") if z else "n/a", fmt(z["wl_energy_j"], ".1f") if z else "n/a",
                     fmt(z["shift_actual_ms"], "+.1f") if z else "n/a"])
    table(out, ["half", "level", "window", "shift ms", "n", "wattlab J", "U95 J", "poll instant J", "poll PowerUsage J",
                "step model J", "zeus: counter at edges J", "zeus: wattlab J", "zeus: actual shift ms"], body)


def edges_section(rows, out):
    out.write("## (2) Edges\n\n")
    afterload_table(rows, out)
    split_table(rows, out)
    shift_table(rows, out)


def short_groups(rows):
    groups = defaultdict(list)
    for r in rows:
        if r["part"] == "short" and r["role"] == "window" and fin(r.get("planned_s")):
            groups[(r["level"], r["set"].split("-")[0], r["planned_s"])].append(r)
    return sorted(groups.items(), key=lambda kv: (level_key(kv[0][0]), kv[0][1] != "steady", kv[0][2]))


def short_section(rows, out):
    out.write("## (3) Short windows: bias against the long-run rate and spread\n\n"
              "bias = mean(E / reference) - 1 (± 95 %), CV = sd / mean of E / reference. Reference: steady windows, the "
              "level's power over the steady phase (drift between its halves followed linearly) times the window; "
              "bursts, the steady phase's energy per unit times the units in the burst. Both halves pooled.\n\n")
    body = []
    for (level, kind, length), g in short_groups(rows):
        cells = [level, kind, fmt(length, "g")]
        n_any = 0
        for _, col in METHODS:
            n, b, h, cv = ratio_stats(g, col)
            n_any = max(n_any, n)
            cells += [fmt_ci(b, h, "+.2f"), fmt(cv, ".2f")]
        us = [r["wl_u95_j"] / r["ref_j"] for r in g if fin(r.get("wl_u95_j")) and fin(r.get("ref_j")) and r["ref_j"] > 0]
        _, b_alt, h_alt, _ = ratio_stats(g, "wl_energy_j", ref="ref_alt_j")
        cells += [fmt(100 * st.mean(us), ".2f") if us else "n/a", fmt_ci(b_alt, h_alt, "+.2f")]
        body.append(cells[:3] + [n_any] + cells[3:])
    hdr = ["level", "windows", "length s", "n"]
    for label, _ in METHODS:
        hdr += [f"{label} bias %", f"{label} CV %"]
    table(out, hdr + ["wattlab mean U95 %", "wattlab bias vs the other rate %"], body)


def calibration_section(rows, out):
    out.write("## (4) Calibration: wattlab's windows inside their own U95\n\n"
              f"Target {100 * COVERAGE_TARGET[0]:.0f}-{100 * COVERAGE_TARGET[1]:.0f} % of windows. vs reference: "
              "|E - reference| <= U95; vs set rate: the reference scaled by the set's own mean E/reference (bias removed, "
              "spread only). U / rms: mean U95 over the rms deviation from the reference (about 2 for a calibrated "
              "95 % bound on normal errors). Interval: Wilson 95 %.\n\n")
    body = []
    for (level, kind, length), g in short_groups(rows):
        inside, n, u_rms = coverage(g)
        rs = [r["wl_energy_j"] / r["ref_j"] for r in g if fin(r.get("wl_energy_j")) and fin(r.get("ref_j")) and r["ref_j"] > 0]
        k = st.mean(rs) if rs else None
        s_in, s_n, _ = coverage(g, ref_of=lambda r: r["ref_j"] * k if fin(k) and fin(r.get("ref_j")) else None)
        lo, hi = st.wilson(inside, n)
        body.append([level, kind, fmt(length, "g"), n, f"{inside}/{n}", fmt(100 * inside / n if n else None, ".1f"),
                     f"{fmt(100 * lo if lo is not None else None, '.0f')}-{fmt(100 * hi if hi is not None else None, '.0f')}",
                     verdict(inside, n), f"{s_in}/{s_n}", fmt(u_rms, ".2f")])
    exact = defaultdict(list)
    for r in rows:
        if r["ref_kind"] == "counter-updates" and fin(r["ref_j"]) and r["part"] != "calib":
            exact[r["level"]].append(r)
    for level, g in sorted(exact.items(), key=lambda kv: level_key(kv[0])):
        inside, n, u_rms = coverage(g, extra_u=lambda r: r["ref_u_j"] if fin(r["ref_u_j"]) else 0.0)
        lo, hi = st.wilson(inside, n)
        body.append([level, "exact (counter updates)", "various", n, f"{inside}/{n}", fmt(100 * inside / n if n else None, ".1f"),
                     f"{fmt(100 * lo if lo is not None else None, '.0f')}-{fmt(100 * hi if hi is not None else None, '.0f')}",
                     verdict(inside, n), "", fmt(u_rms, ".2f")])
    table(out, ["level", "windows", "length s", "n", "inside vs reference", "coverage %", "95 % interval %", "verdict",
                "inside vs set rate", "U / rms"], body)


def chained_section(rows, out):
    """Calibration on the chained windows of part calib: edges on counter updates, the counter's delta the truth."""
    calib = [r for r in rows if r["part"] == "calib" and r["ref_kind"] == "counter-updates" and fin(r.get("ref_j"))
             and fin(r.get("wl_energy_j")) and fin(r.get("wl_u95_j"))]
    if not calib:
        return
    out.write("## (4b) Calibration on chained windows: every edge on a counter update\n\n"
              "Windows of n counter updates chained through a steady phase; the counter's delta between the two updates "
              "is the truth, independent of the meter, which reads the counter on its own 1 s grid. The truth's own "
              "error is where each update lies in its edge's bracket: uniform over the bracket, so its sd is "
              "ref_u / sqrt(6) (ref_u: the two half-brackets at the window's mean power). Columns: wattlab's mean "
              "difference from the truth (% of the truth, 95 % t interval); windows inside U95 alone (a lower bound "
              "on coverage: the truth's error counts against the meter) and inside sqrt(U95^2 + (1.96 sd_truth)^2) "
              "(Wilson 95 % interval); wattlab's stated sd (U95 / 1.96) beside its error sd estimated as "
              "sqrt(var(E - truth) - mean sd_truth^2) (\"n/a\" where the truth's variance is the larger: wattlab's error "
              "is not resolved).\n\n")
    groups = defaultdict(list)
    for r in calib:
        groups[(r["level"], int(r["set"].split("-")[1]))].append(r)
    body = []
    tot_alone = tot_comb = tot_n = 0
    for (level, n_upd), g in sorted(groups.items(), key=lambda kv: (level_key(kv[0][0]), kv[0][1])):
        devs = [r["wl_energy_j"] - r["ref_j"] for r in g]
        rel = [100 * d / r["ref_j"] for d, r in zip(devs, g) if r["ref_j"] > 0]
        sd_t = [(r["ref_u_j"] if fin(r.get("ref_u_j")) else 0.0) / math.sqrt(6) for r in g]
        alone = sum(abs(d) <= r["wl_u95_j"] for d, r in zip(devs, g))
        comb = sum(abs(d) <= math.sqrt(r["wl_u95_j"] ** 2 + (1.96 * t) ** 2) for d, r, t in zip(devs, g, sd_t))
        tot_alone, tot_comb, tot_n = tot_alone + alone, tot_comb + comb, tot_n + len(g)
        stated = st.mean([r["wl_u95_j"] / 1.96 for r in g])
        mean_sq = st.mean([d * d for d in devs])  # wattlab's bias counts as error here
        resid = mean_sq - st.mean([t * t for t in sd_t])
        lo, hi = st.wilson(comb, len(g))
        ests = Counter(r["wl_estimator"] for r in g).most_common(1)[0][0]
        body.append([level, n_upd, len(g), fmt(st.median([dur(r) for r in g]), ".2f"),
                     fmt(st.mean([r["ref_j"] / dur(r) for r in g]), ".1f"), fmt_ci(*st.mean_ci(rel), "+.2f"),
                     fmt(st.mean([abs(d) for d in devs]), ".2f"), fmt(stated, ".2f"), fmt(st.mean(sd_t), ".2f"),
                     fmt(math.sqrt(resid) if resid > 0 else None, ".2f"),
                     f"{alone}/{len(g)}", f"{comb}/{len(g)}",
                     f"{fmt(100 * lo if lo is not None else None, '.0f')}-{fmt(100 * hi if hi is not None else None, '.0f')}",
                     verdict(comb, len(g)), ests])
    table(out, ["level", "updates", "n", "median s", "power W", "wattlab diff %", "mean abs(E - truth) J",
                "stated sd J", "truth sd J", "wattlab error sd J", "inside U95 alone", "inside combined", "95 % interval %",
                "verdict", "estimator (most)"], body)
    lo, hi = st.wilson(tot_comb, tot_n)
    out.write(f"All chained windows: {tot_alone}/{tot_n} inside U95 alone, {tot_comb}/{tot_n} inside the combined "
              f"bound ({fmt(100 * tot_comb / tot_n, '.1f')} %, Wilson {fmt(100 * lo, '.1f')}-{fmt(100 * hi, '.1f')} %): "
              f"{verdict(tot_comb, tot_n)}.\n\n")


def memory_section(rows, states, traces, out):
    out.write("## (5) The memory domain and power at the cap\n\n")
    status = Counter(r["mem_wl_status"] for r in rows)
    out.write("wattlab's `gpu:N/memory` result over all windows: " +
              "; ".join(f"{n} x {s!r}" for s, n in status.most_common()) + "\n\n")
    body = []
    for r in rows:
        if r["role"] in ("rate",) and fin(r.get("mem_poll_average_j")) and r["level"] in LEVELS and not r["set"].startswith("probe"):
            body.append([r["half"], r["part"], r["level"], r["set"], fmt(dur(r), ".2f"),
                         fmt(r["mem_poll_instant_j"] / dur(r) if fin(r.get("mem_poll_instant_j")) else None, ".2f"),
                         fmt(r["mem_poll_average_j"] / dur(r), ".2f"),
                         fmt(r["mem_wl_energy_j"] / dur(r) if fin(r.get("mem_wl_energy_j")) else None, ".2f"),
                         fmt(r["ref_j"] / dur(r), ".1f")])
    if body:
        out.write("Memory-scope power polled every 10 ms (field 186 instant, field 185 average, scope 2) against "
                  "wattlab's memory domain, over the windows between counter updates:\n\n")
        table(out, ["half", "part", "level", "set", "dur s", "HBM instant W", "HBM average W", "wattlab memory W",
                    "board W (counter)"], body)
    limit = state_value(states, "power_limit_w")
    out.write(f"Power limit (enforced, NVML): {fmt(limit, '.1f')} W.\n\n")
    cap_rows = [r for r in rows if r["level"] == "cap" and r["part"] == "short" and r["role"] == "window" and fin(r.get("wl_energy_j"))]
    body = []
    for (kind, length) in sorted({(r["set"].split("-")[0], r["planned_s"]) for r in cap_rows}):
        g = [r["wl_energy_j"] / dur(r) for r in cap_rows if (r["set"].split("-")[0], r["planned_s"]) == (kind, length)]
        above = sum(p > limit for p in g) if fin(limit) else None
        body.append([kind, fmt(length, "g"), len(g), fmt(st.mean(g), ".1f"), fmt(max(g), ".1f"),
                     f"{above}/{len(g)}" if above is not None else "n/a"])
    if body:
        out.write("Mean power of wattlab's windows at the cap level:\n\n")
        table(out, ["windows", "length s", "n", "mean W", "max W", "above the limit"], body)
    body = []
    for half, tr in sorted(traces.items()):
        times = [t[0] for t in tr]
        phases = [r for r in rows if r["half"] == half and r["level"] == "cap" and r["role"] == "phase"]
        for ph in phases:
            a, b = ph["t_begin_ns"], ph["t_end_ns"]
            span = tr[max(0, bisect.bisect_left(times, a) - 2):bisect.bisect_right(times, b) + 2]
            for label, idx in (("instant", 2), ("PowerUsage", 1)):
                pts = [(t[0], t[idx]) for t in span]
                for width in (0.1, 0.6, 1.0, 2.0):
                    means = st.rolling_means(pts, a, b, width)
                    if not means:
                        continue
                    above = sum(m > limit for m in means) / len(means) if fin(limit) else None
                    body.append([half, ph["part"], ph["set"], int(ph["repeat"]), fmt((b - a) * 1e-9, ".1f"), label, fmt(width, "g"),
                                 fmt(max(means), ".1f"), fmt(st.mean(means), ".1f"),
                                 fmt(100 * above if above is not None else None, ".1f")])
    if body:
        out.write("10 ms polls over each load phase at the cap level: rolling means of the instant field and of "
                  "nvmlDeviceGetPowerUsage over windows of 0.1-2 s (max, mean, share of windows above the limit):\n\n")
        table(out, ["half", "part", "phase", "rep", "phase s", "field", "window s", "max W", "mean W", "above limit %"], body)


def report(rows, states, traces, out):
    for half, s in sorted(states.items()):
        g0, g1 = s.get("gpu_start", {}), s.get("gpu_end", {})
        out.write(f"half {half}: {g0.get('name')} {g0.get('uuid')}, driver {g0.get('driver_version')}, "
                  f"limit {g0.get('power_limit_enforced_w')} W, commit {s.get('build_commit')}; start "
                  f"{g0.get('temperature_c')} C {g0.get('sm_clock_mhz')} MHz {g0.get('power_usage_w')} W; end "
                  f"{g1.get('temperature_c')} C {g1.get('sm_clock_mhz')} MHz {g1.get('power_usage_w')} W; "
                  f"{s.get('rows')} rows ({s.get('provisional_rows')} provisional), wall {fmt(s.get('wall_s'), '.1f')} s\n")
        for sk in s.get("notes", {}).get("skipped", []):
            out.write(f"half {half}: left out: {sk.get('what')} ({sk.get('why')})\n")
    out.write("\n")
    levels_section(rows, states, out)
    exact_section(rows, out)
    linearity_section(rows, states, out)
    edges_section(rows, out)
    short_section(rows, out)
    calibration_section(rows, out)
    chained_section(rows, out)
    memory_section(rows, states, traces, out)


def main(argv=None, out=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+", help="windows-<half>.csv, state-<half>.json, trace-<half>.csv, or folders")
    a = ap.parse_args(argv)
    try:
        rows, states, traces = gather(a.inputs)
        report(rows, states, traces, out or sys.stdout)
        return 0
    except (OSError, ValueError, KeyError) as e:
        print(f"meter_validate: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
