#!/usr/bin/env python3
"""Every GEMM point a wattlab store holds, as one CSV row each (docs/gemm-cli.md, "Points as CSV").

A point is a window labelled kind=gemm_point. A row holds its run, window id and edges, every label
(recipe, engine, shape, seed, experiment, order, warm-up state, ...) and count (GEMMs, TFLOP/s,
clock, temperature, capped share, warm-up and preparation times, ...) the point stored, and its
GPU domain's energy: energy_j, uncertainty_j (95 %), systematic_j, mean and peak power, the
estimator and the issues. Columns are the union over all points, sorted within each group, so two
exports of the same store are identical. Reads the SQLite file directly (Python's sqlite3), so it
needs no wattlab build.

usage: gemm_points_csv.py STORE.db [--out points.csv] [--domain gpu:0]
"""
import argparse
import csv
import sqlite3
import sys

DOMAIN_COLUMNS = ["energy_j", "uncertainty_j", "systematic_j", "mean_power_w", "peak_power_w",
                  "estimator", "available", "simulated", "readings_used", "issues_json"]


def fail(message):
    """Bad input: the message on stderr, exit 2."""
    print(f"gemm_points_csv: {message}", file=sys.stderr)
    sys.exit(2)


def points(db_path, domain_id):
    """Rows as dicts, ordered by run and window id."""
    try:
        con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    except sqlite3.Error as e:
        fail(f"cannot open {db_path}: {e}")
    try:
        rows = con.execute(
            "SELECT w.window_row, w.run_id, w.window_id, w.t_begin_ns, w.t_end_ns, w.final FROM windows w "
            "JOIN window_labels l ON l.window_row = w.window_row AND l.key = 'kind' AND l.value = 'gemm_point' "
            "ORDER BY w.run_id, w.window_id").fetchall()
    except sqlite3.Error as e:
        fail(f"{db_path} is not a wattlab store with windows: {e}")
    out = []
    for window_row, run_id, window_id, t_begin_ns, t_end_ns, final in rows:
        r = {"run_id": run_id, "window_id": window_id, "t_begin_ns": t_begin_ns, "t_end_ns": t_end_ns,
             "window_s": (t_end_ns - t_begin_ns) * 1e-9, "final": final}
        for k, v in con.execute("SELECT key, value FROM window_labels WHERE window_row = ?", (window_row,)):
            r["label." + k] = v
        for k, v in con.execute("SELECT key, value FROM window_counts WHERE window_row = ?", (window_row,)):
            r["count." + k] = v
        d = con.execute(f"SELECT {', '.join(DOMAIN_COLUMNS)} FROM window_domains WHERE window_row = ? AND domain_id = ?",
                        (window_row, domain_id)).fetchone()
        if d:
            for k, v in zip(DOMAIN_COLUMNS, d):
                r[k] = v
        out.append(r)
    con.close()
    return out


def columns(rows):
    fixed = ["run_id", "window_id", "t_begin_ns", "t_end_ns", "window_s", "final"]
    labels = sorted({k for r in rows for k in r if k.startswith("label.")})
    counts = sorted({k for r in rows for k in r if k.startswith("count.")})
    return fixed + labels + counts + DOMAIN_COLUMNS


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", help="a wattlab store (SQLite) holding gemm points")
    ap.add_argument("--out", help="CSV file to write (default: standard output)")
    ap.add_argument("--domain", default="gpu:0", help="the domain whose energy goes in the row (default gpu:0)")
    a = ap.parse_args(argv)
    rows = points(a.db, a.domain)
    f = open(a.out, "w", newline="") if a.out else sys.stdout
    w = csv.DictWriter(f, fieldnames=columns(rows), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    if a.out:
        f.close()
        print(f"gemm_points_csv: {len(rows)} points from {a.db} -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
