#!/usr/bin/env python3
"""Spread of a GEMM sweep's reference points, three ways, from a wattlab store (SQLite).

For every reference point (label reference=1) of the given runs, per engine and M:
  - reported: the stored window energy (the meter's estimate) per GEMM, its CV over the points,
    and the mean of its 95% uncertainty;
  - samples: the stored driver sample-buffer readings integrated over the window, each sample
    held back to the previous one;
  - instant: the window's stored cross-check (power integrated, no counter).
The reference points repeat the same inputs, so their spread is what the measurement adds (plus
the GPU's own drift). Used for docs/results/gemm-h200.md ("Why the short windows scatter").
Exit 0, or 2 on bad input.
"""
import argparse
import sqlite3
import statistics
import sys

from store_power import hold_back, sample_buffer


def one(db, sql, args):
    row = db.execute(sql, args).fetchone()
    return row[0] if row else None


def cv_pct(xs):
    return statistics.pstdev(xs) / statistics.mean(xs) * 100 if len(xs) > 1 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", help="wattlab store (gemm.db)")
    ap.add_argument("--runs", default="", help="comma-separated run ids (default: all)")
    args = ap.parse_args()
    try:
        db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
        runs = [int(r) for r in args.runs.split(",") if r] or [r[0] for r in db.execute("select run_id from runs")]
    except (sqlite3.Error, ValueError) as e:
        print(f"gemm_reference_spread: {args.db}: {e}", file=sys.stderr)
        return 2
    groups = {}
    buffers = {run: sample_buffer(db, run) for run in runs}
    for row, run, a_ns, b_ns in db.execute(
            "select window_row, run_id, t_begin_ns, t_end_ns from windows order by t_begin_ns").fetchall():
        if run not in runs:
            continue
        label = lambda k: one(db, "select value from window_labels where window_row=? and key=?", (row, k))
        if label("reference") != "1":
            continue
        gemms = one(db, "select value from window_counts where window_row=? and key='gemms'", (row,))
        dom = db.execute("select energy_j, uncertainty_j, cross_check_j from window_domains"
                         " where window_row=? and position=0", (row,)).fetchone()
        if not gemms or not dom:
            continue
        mj = 1e3 / gemms
        groups.setdefault((label("engine"), label("M")), []).append(
            (dom[0] * mj, dom[1] / dom[0] * 100, hold_back(*buffers[run], a_ns, b_ns)[0] * mj,
             dom[2] * mj if dom[2] is not None else float("nan")))
    if not groups:
        print(f"gemm_reference_spread: no reference points in runs {runs} of {args.db}", file=sys.stderr)
        return 2
    print("engine     M      n  reported mJ/GEMM  CV %  mean U95 %  samples mJ/GEMM  CV %  instant mJ/GEMM  CV %")
    for (engine, m), v in groups.items():
        rep, u, smp, ins = ([x[i] for x in v] for i in range(4))
        print(f"{engine:<10} {m:<6} {len(v):>2}  {statistics.mean(rep):>16.4g}  {cv_pct(rep):>4.2f}"
              f"  {statistics.mean(u):>10.1f}  {statistics.mean(smp):>15.4g}  {cv_pct(smp):>4.2f}"
              f"  {statistics.mean(ins):>15.4g}  {cv_pct(ins):>4.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
