#!/usr/bin/env python3
"""Share of clock-event-reason readings with the SW power cap bit set, per engine and shape, over the
windows of a stored GEMM sweep (reference points, or every point with --all).

Why: a window summary's capped fraction comes from the power-violation counter's slope over the
window, which needs two counter reads inside it. The counter is read about once a second or less
(its reads cost ~1 ms on an H200), so the 0.6 s windows of a short study have none; the clock-event
reasons, read several times a second, still say whether the GPU was held at its power limit.

Usage: gemm_cap_share.py STUDY.db [--sweep ID] [--all]
Prints: shape, engine, windows, reason readings inside them, the share with the SW power cap bit
(0x4), and the share with any hardware or thermal slowdown bit (0x8, 0x20, 0x40, 0x80).
"""
import argparse
import sqlite3
import sys

SW_POWER_CAP = 0x4
THERMAL_OR_HW = 0x8 | 0x20 | 0x40 | 0x80


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("--sweep", help="sweep id (default: the sweep with the most points)")
    ap.add_argument("--all", action="store_true", help="every point, not only reference points")
    a = ap.parse_args()
    try:
        c = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
        c.execute("select 1 from windows limit 1")
    except sqlite3.Error as e:
        print(f"gemm_cap_share: cannot read {a.db}: {e}", file=sys.stderr)
        return 2
    sweep = a.sweep or (c.execute("select value from window_labels where key='sweep' group by value "
                                  "order by count(*) desc limit 1").fetchone() or [None])[0]
    if not sweep:
        print(f"gemm_cap_share: no GEMM sweep in {a.db}", file=sys.stderr)
        return 2
    q = """
      with pts as (
        select w.window_row, w.run_id, w.t_begin_ns a, w.t_end_ns b,
               max(case when l.key='engine' then l.value end) engine,
               max(case when l.key='M' then l.value end) m,
               max(case when l.key='reference' then l.value end) ref,
               max(case when l.key='sweep' then l.value end) sweep
        from windows w join window_labels l using(window_row) group by w.window_row)
      select p.m, p.engine, count(distinct p.window_row), count(t.value),
             sum((cast(t.value as integer) & ?) != 0), sum((cast(t.value as integer) & ?) != 0)
      from pts p left join telemetry t
        on t.run_id = p.run_id and t.kind = 'clock_event_reasons' and t.t_ns between p.a and p.b
      where p.sweep = ? and (? or p.ref = '1')
      group by p.m, p.engine order by cast(p.m as integer), p.engine"""
    rows = c.execute(q, (SW_POWER_CAP, THERMAL_OR_HW, sweep, 1 if a.all else 0)).fetchall()
    if not rows:
        print(f"gemm_cap_share: sweep {sweep} has no matching windows", file=sys.stderr)
        return 2
    print(f"sweep {sweep}, {'every point' if a.all else 'reference points'}: clock-event reasons read inside the windows")
    print(f"{'shape':>6} {'engine':<10} {'windows':>7} {'readings':>8} {'SW power cap':>13} {'thermal/HW':>10}")
    for m, engine, n_win, n, cap, thermal in rows:
        share = f"{100.0 * cap / n:.1f} %" if n else "n/a"
        th = f"{100.0 * thermal / n:.1f} %" if n else "n/a"
        print(f"{m:>6} {engine:<10} {n_win:>7} {n:>8} {share:>13} {th:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
