#!/usr/bin/env python3
"""Fixed-input checks of python/bench/meter_validate.py and validate_stats.py: the fits, the coverage
count, the bias and spread, the rolling means, and that the CSV columns are the ones that
benchmarks/device/window_log.cpp writes."""
import csv
import io
import math
import os
import re
import tempfile
import unittest

import meter_validate as mv
import validate_stats as st

HERE = os.path.dirname(os.path.abspath(__file__))
WINDOW_LOG_CPP = os.path.join(HERE, "..", "..", "benchmarks", "device", "window_log.cpp")


def cpp_columns():
    """The column names of kColumns in window_log.cpp, in order."""
    src = open(WINDOW_LOG_CPP).read()
    block = re.search(r"kColumns\[\] = \{(.*?)\};", src, re.S).group(1)
    return re.findall(r'"([a-z0-9_]+)"', block)


COLUMNS = cpp_columns()


def row(**kw):
    """One CSV row as the program writes it: every column, empty unless given."""
    r = {c: "" for c in COLUMNS}
    r.update({"half": "a", "role": "window", "repeat": 0, "wl_final": "final", "ref_kind": "", "mem_wl_status": "ok"})
    for k, v in kw.items():
        if k not in r:
            raise KeyError(k)
        r[k] = v
    return r


def parsed(rows):
    return [mv.parse_row({k: str(v) for k, v in r.items()}) for r in rows]


class Columns(unittest.TestCase):
    def test_the_reader_needs_only_columns_the_program_writes(self):
        self.assertGreater(len(COLUMNS), 40)
        self.assertEqual(len(COLUMNS), len(set(COLUMNS)))
        self.assertTrue(mv.REQUIRED_COLUMNS <= set(COLUMNS), mv.REQUIRED_COLUMNS - set(COLUMNS))
        self.assertTrue(mv.TEXT_COLUMNS <= set(COLUMNS), mv.TEXT_COLUMNS - set(COLUMNS))

    def test_a_missing_column_is_an_error_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "windows-a.csv")
            with open(p, "w", newline="") as f:
                w = csv.DictWriter(f, [c for c in COLUMNS if c != "wl_u95_j"])
                w.writeheader()
            with self.assertRaisesRegex(ValueError, "wl_u95_j"):
                mv.read_windows(p)


class Stats(unittest.TestCase):
    def test_t_quantiles_match_the_tables(self):
        for df, t in ((1, 12.7062), (2, 4.3027), (5, 2.5706), (10, 2.2281), (30, 2.0423)):
            self.assertAlmostEqual(st.t_quantile(0.975, df), t, places=3)
        self.assertAlmostEqual(st.t_quantile(0.975, 10 ** 7), 1.95996, places=4)
        self.assertAlmostEqual(st.t_quantile(0.025, 5), -2.5706, places=3)

    def test_ols_matches_the_closed_form_of_a_straight_line(self):
        x = [1.0, 2.0, 3.0, 4.0, 5.0, 7.0]
        y = [2.1, 3.9, 6.2, 7.8, 10.1, 14.3]
        f = st.ols([[1.0, xi] for xi in x], y)
        n, mx, my = len(x), sum(x) / len(x), sum(y) / len(y)
        sxx = sum((xi - mx) ** 2 for xi in x)
        b = sum((xi - mx) * (yi - my) for xi, yi in zip(x, y)) / sxx
        a = my - b * mx
        s = math.sqrt(sum((yi - a - b * xi) ** 2 for xi, yi in zip(x, y)) / (n - 2))
        self.assertAlmostEqual(f["coef"][0], a, places=10)
        self.assertAlmostEqual(f["coef"][1], b, places=10)
        self.assertAlmostEqual(f["se"][1], s / math.sqrt(sxx), places=10)
        self.assertAlmostEqual(f["se"][0], s * math.sqrt(1 / n + mx * mx / sxx), places=10)
        self.assertAlmostEqual(f["ci"][1], st.t_quantile(0.975, n - 2) * s / math.sqrt(sxx), places=10)
        self.assertAlmostEqual(sum(f["residuals"]), 0.0, places=10)

    def test_ols_without_intercept_recovers_two_rates(self):
        t = [1.0, 1.0, 2.0, 1.0, 2.0]
        w = [10.0, 40.0, 30.0, 70.0, 5.0]
        f = st.ols([[ti, wi] for ti, wi in zip(t, w)], [80.0 * ti + 0.5 * wi for ti, wi in zip(t, w)])
        self.assertAlmostEqual(f["coef"][0], 80.0, places=9)
        self.assertAlmostEqual(f["coef"][1], 0.5, places=9)

    def test_wilson_and_mean_ci(self):
        lo, hi = st.wilson(9, 10)
        self.assertAlmostEqual(lo, 0.5958, places=3)
        self.assertAlmostEqual(hi, 0.9821, places=3)
        m, h = st.mean_ci([1.0, 2.0, 3.0, 4.0])
        self.assertAlmostEqual(m, 2.5)
        self.assertAlmostEqual(h, 3.1824 * math.sqrt(5 / 3) / 2, places=3)
        self.assertEqual(st.mean_ci([5.0]), (5.0, None))

    def test_rolling_means_of_a_step(self):
        # 100 W for 1 s, then 300 W for 1 s, sampled every 10 ms: the 1 s mean peaks at 300 W once
        # the window holds only the second second, and the 0.5 s mean across the step is 200 W.
        pts = [(i * 10_000_000, 100.0 if i < 100 else 300.0) for i in range(201)]
        means = st.rolling_means(pts, 0, 2_000_000_000, 1.0)
        self.assertAlmostEqual(max(means), 300.0, places=6)
        self.assertAlmostEqual(min(means), 100.0, places=6)
        half = st.rolling_means(pts, 750_000_000, 1_250_000_000, 0.5)
        self.assertAlmostEqual(half[0], 200.0, delta=2.5)


class Coverage(unittest.TestCase):
    def test_inside_means_deviation_at_most_u95(self):
        devs = [0.5, -0.9, 1.0, -1.0, 1.1, -1.5, 0.0, 0.2, -0.3, 0.99]
        rows = parsed([row(part="short", level="cap", set="burst-0.1", planned_s=0.1, wl_energy_j=50 + d, wl_u95_j=1.0,
                           ref_j=50.0, dur_s=0.1) for d in devs])
        inside, n, u_rms = mv.coverage(rows)
        self.assertEqual((inside, n), (8, 10))  # 1.1 and -1.5 are outside; +-1.0 exactly on the bound are inside
        rms = math.sqrt(sum(d * d for d in devs) / len(devs))
        self.assertAlmostEqual(u_rms, 1.0 / rms)
        self.assertEqual(mv.verdict(8, 10), "below target, too few to tell")  # Wilson 49-94 %
        self.assertEqual(mv.verdict(80, 100), "under (U too small)")           # Wilson 71-87 %
        self.assertEqual(mv.verdict(19, 20), "in target")
        self.assertEqual(mv.verdict(100, 100), "above target, too few to tell")  # Wilson 96-100 %
        self.assertEqual(mv.verdict(1000, 1000), "over (U too wide)")

    def test_windows_without_an_estimate_are_not_counted(self):
        rows = parsed([row(wl_energy_j=10.0, wl_u95_j=1.0, ref_j=10.5), row(wl_energy_j="", wl_u95_j="", ref_j=10.0)])
        self.assertEqual(mv.coverage(rows)[:2], (1, 1))


class Sections(unittest.TestCase):
    def synthetic(self):
        rows = [row(part="levels", level="idle", set="rate", role="rate", dur_s=4.0, ref_j=320.0, work_units=0,
                    ref_kind="counter-updates", ref_u_j=0.5, wl_energy_j=321.6, wl_u95_j=2.0, poll_usage_j=318.0,
                    poll_instant_j=322.0),
                row(part="levels", level="cap", set="rate", role="rate", dur_s=20.0, ref_j=14000.0, work_units=13700,
                    ref_kind="counter-updates", ref_u_j=3.0, wl_energy_j=14020.0, wl_u95_j=15.0, poll_usage_j=14100.0,
                    poll_instant_j=13990.0)]
        # N bursts: E = 3 + 2 * work with residuals +-0.1 alternating (the fit's slope is exact).
        for n in range(1, 17):
            work = 10 * n
            e = 3.0 + 2.0 * work + (0.1 if n % 2 else -0.1)
            rows.append(row(part="linearity", level="cap", set="nbursts", repeat=n, dur_s=0.1 * n, work_units=work,
                            wl_energy_j=e, wl_u95_j=0.15 if n != 5 else 0.05, ctr_edges_j=e + 1, wl_estimator="samples*counter"))
        # Steady windows: wattlab exactly 1 % high, counter exactly 3 % low.
        for k in range(12):
            ref = 70.0 * (1 + 0.01 * k)
            rows.append(row(part="short", level="cap", set="steady-0.1", repeat=k, planned_s=0.1, dur_s=0.1, ref_j=ref,
                            ref_alt_j=ref, wl_energy_j=1.01 * ref, wl_u95_j=0.02 * ref, ctr_edges_j=0.97 * ref,
                            ref_kind="steady-rate"))
        return parsed(rows)

    def every_part(self):
        """The synthetic rows plus one of every edge, memory and phase row, for the whole report."""
        rows = [row(part="edges", level="cap", set=s, role=role, repeat=0, dur_s=d, wl_energy_j=e, wl_u95_j=5.0,
                    ctr_edges_j=e + 30 if role == "window" else "", poll_usage_j=e + 200, poll_instant_j=e + 5,
                    ref_j=ref, ref_kind=kind, ref_u_j=1.0 if kind else "", wl_estimator="counter+samples")
                for s, role, d, e, ref, kind in (
                    ("afterload-load", "window", 5.0, 3500.0, 3490.0, "steady-work"),
                    ("afterload-idle", "window", 3.0, 380.0, "", ""),
                    ("afterload-idle-exact", "exact", 3.0, 372.0, 370.0, "counter-updates"),
                    ("afterload-head", "part", 0.05, 9.0, "", ""),
                    ("afterload-tail", "part", 0.04, 3.0, "", ""),
                    ("split", "whole", 7.5, 3200.0, 3190.0, "counter-updates"))]
        rows += [row(part="edges", level="cap", set="split", role="part", repeat=i, dur_s=1.0, wl_energy_j=e,
                     wl_u95_j=3.0, ctr_edges_j=e, poll_usage_j=e, poll_instant_j=e) for i, e in enumerate((100.0, 1500.0, 1600.0))]
        for shift in (-10.0, 0.0, 10.0):
            for rep in range(3):
                rows.append(row(part="edges", level="cap", set="shift-up-end", role="scan", repeat=rep, shift_ms=shift,
                                dur_s=0.5, wl_energy_j=45.0 + shift + rep, wl_u95_j=6.0, poll_instant_j=44.0 + shift,
                                poll_usage_j=40.0, ref_j=40.0 + shift, ref_kind="step-model"))
            rows.append(row(part="edges", level="cap", set="shift-up-end", role="zeus", repeat=0, shift_ms=shift,
                            shift_actual_ms=shift - 2, dur_s=0.5, wl_energy_j=46.0, ctr_edges_j=70.0, ref_j=40.0))
        rows += [row(part="memory", level="hbm-copy", set="copy", role="rate", dur_s=4.0, ref_j=1600.0, mem_poll_instant_j=400.0,
                     mem_poll_average_j=396.0, mem_wl_status="unavailable: no energy reading covers the window",
                     ref_kind="counter-updates", wl_energy_j=1601.0, wl_u95_j=4.0),
                 row(part="levels", level="cap", set="steady-phase", role="phase", t_begin_ns=0, t_end_ns=2_900_000_000,
                     dur_s=2.9)]
        return self.synthetic() + parsed(rows)

    def test_linearity_fit_and_residual_count(self):
        rows = self.synthetic()
        g = [r for r in rows if r["set"] == "nbursts"]
        f = mv.fit_line(g, "wl_energy_j", lambda r: [1.0, r["work_units"]])
        self.assertAlmostEqual(f["coef"][1], 2.0, delta=2e-3)
        self.assertAlmostEqual(f["coef"][0], 3.0, delta=0.1)
        out = io.StringIO()
        mv.linearity_section(rows, {}, out)
        text = out.getvalue()
        self.assertIn("| a | cap | wattlab | 16 |", text)
        self.assertIn("| 15/16 |", text)  # N = 5 has U95 0.05 against a residual near 0.1

    def test_short_bias_and_spread(self):
        rows = self.synthetic()
        (key, g), = mv.short_groups(rows)
        self.assertEqual(key, ("cap", "steady", 0.1))
        n, bias, half, cv = mv.ratio_stats(g, "wl_energy_j")
        self.assertEqual(n, 12)
        self.assertAlmostEqual(bias, 1.0, places=9)
        self.assertAlmostEqual(half, 0.0, places=9)
        self.assertAlmostEqual(cv, 0.0, places=9)
        self.assertAlmostEqual(mv.ratio_stats(g, "ctr_edges_j")[1], -3.0, places=9)
        out = io.StringIO()
        mv.calibration_section(rows, out)
        # 1 % high with U95 = 2 %: all 12 inside against the reference and against the set's own rate.
        self.assertIn("| cap | steady | 0.1 | 12 | 12/12 | 100.0 |", out.getvalue())

    def test_exact_windows_diff(self):
        out = io.StringIO()
        mv.exact_section(self.synthetic(), out)
        text = out.getvalue()
        # idle: 321.6 / 320 - 1, off by 1.6 J against U95 2 J + 0.5 J; cap: 20 J off against 15 J + 3 J.
        self.assertIn("| levels | rate | idle | 1 | 4.00-4.00 | +0.500 | 0.500 | 1/1 |", text)
        self.assertIn("| levels | rate | cap | 1 | 20.00-20.00 | +0.143 | 0.143 | 0/1 |", text)

    def test_chained_windows_coverage_alone_and_with_the_truths_own_error(self):
        # 10 windows of 2 updates at 700 W: errors of 0.5 J (inside U95 = 1 J) in 8, 2.5 J in 2; the truth's
        # bracket bound ref_u = 4.9 J gives sd 2 J, so the combined bound is sqrt(1 + 3.92^2) = 4.05 J: all inside.
        rows = [row(part="calib", level="cap", set="calib-2", role="exact", repeat=k, dur_s=0.2, ref_j=140.0,
                    ref_u_j=2.0 * math.sqrt(6), ref_kind="counter-updates", wl_energy_j=140.0 + (2.5 if k < 2 else 0.5),
                    wl_u95_j=1.0, wl_estimator="samples*counter") for k in range(10)]
        out = io.StringIO()
        mv.chained_section(parsed(rows), out)
        text = out.getvalue()
        self.assertIn("| cap | 2 | 10 | 0.20 | 700.0 |", text)
        self.assertIn("| 8/10 | 10/10 |", text)
        # rms error sqrt((2 * 6.25 + 8 * 0.25) / 10) = 1.204 J is below the truth's sd 2 J: not resolved.
        self.assertIn("| 0.51 | 2.00 | n/a |", text)
        self.assertIn("All chained windows: 8/10 inside U95 alone, 10/10 inside the combined bound", text)
        # Other parts' exact windows stay out of this section, and chained ones out of the per-level summary.
        out = io.StringIO()
        mv.calibration_section(parsed(rows), out)
        self.assertNotIn("exact (counter updates)", out.getvalue())

    def test_main_reads_a_folder_and_rejects_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "windows-a.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, COLUMNS)
                w.writeheader()
                for r in self.every_part():
                    w.writerow({k: ("" if v is None else v) for k, v in r.items()})
            with open(os.path.join(d, "trace-a.csv"), "w") as f:
                f.write("t_ns,usage_w,instant_w,mem_instant_w,mem_average_w,sm_clock_mhz,clock_event_reasons\n")
                for i in range(300):
                    f.write(f"{i * 10_000_000},690,{650 + (i % 20) * 5},60,61,1500,4\n")
            out = io.StringIO()
            self.assertEqual(mv.main([d], out=out), 0)
            text = out.getvalue()
            for heading in ("## Levels", "## Exact windows", "## (1)", "### Load, then an idle window", "### One stretch",
                            "### Windows shifted", "## (3)", "## (4)", "## (5)", "rolling means"):
                self.assertIn(heading, text)
            # implied idle = exact 370 J + head - tail, by wattlab (9 - 3) and by the instant polls (14 - 8).
            self.assertIn("wattlab 376.0; poll instant 376.0", text)
            # the split: parts 100 + 1500 + 1600 = 3200 J by every method
            self.assertIn("| a | cap | 3 | 3190.00 | 3200.00 | 3200.00 |", text)
            self.assertIn("1 x 'unavailable: no energy reading covers the window'", text)
            with open(os.path.join(d, "windows-b.csv"), "w") as f:
                f.write("half,part\nb,levels\n")
            self.assertEqual(mv.main([d]), 2)
        self.assertEqual(mv.main(["/nonexistent/meter-validate"]), 2)


if __name__ == "__main__":
    unittest.main()
