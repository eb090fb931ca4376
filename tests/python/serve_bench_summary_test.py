#!/usr/bin/env python3
"""python/bench/serve_bench_summary.py on hand-built series: the interval and the means come from
the stable repeats only, pilots are counted, a missing number prints "-", a wrong file exits 2."""
import contextlib
import io
import json
import os
import tempfile
import unittest

import serve_bench_summary as sbs


def run(role, index, ept, tok_s, power, itl_s=0.02):
    return {"role": role, "index": index, "latency_s": {"itl_median": {"value": itl_s}},
            "steady_state": {"throughput_tokens_per_s": tok_s, "avg_power_w": {"value": power}, "dur_s": 25.0,
                             "avg_running_server": 60.0, "energy_per_token_j": {"value": ept}}}


def series(**kw):
    doc = {"schema": "wattlab.serve-bench/2", "server": {"model": "random/Llama-3.1-8B-shape"}, "batch_cap": 64,
           "requests_per_run": 700,
           "repeats": {"n": 2, "included": [1, 3], "energy_per_token_j": {"mean": 0.11, "ci95_low": 0.05, "ci95_high": 0.17},
                       "mean_measurement_u95_j": 0.001},
           "runs": [run("pilot", 1, 0.5, 100, 300), run("repeat", 1, 0.10, 6000, 600), run("repeat", 2, 0.9, 10, 9),
                    run("repeat", 3, 0.12, 5000, 600, itl_s=0.03)]}
    doc.update(kw)
    return doc


class Summary(unittest.TestCase):
    def test_stable_repeats_only(self):
        r = sbs.row(series())
        self.assertEqual(r["pilots"], 1)
        self.assertEqual(r["repeats"], "2/3")
        self.assertAlmostEqual(r["tok_s"], 5500)  # repeat 2 is not in the interval: not in the means
        self.assertAlmostEqual(r["power_w"], 600)
        self.assertAlmostEqual(r["itl_ms"], 25)
        cells = sbs.cells(r)
        self.assertEqual(cells[5], "0.11")
        self.assertEqual(cells[6], "0.05..0.17")

    def test_no_stable_repeat_prints_dashes(self):
        doc = series(repeats={"n": 0, "included": [], "excluded": [{"repeat": 1, "why": "unstable"}]})
        cells = sbs.cells(sbs.row(doc))
        self.assertEqual(cells[5], "-")
        self.assertEqual(cells[6], "-")
        self.assertEqual(cells[8], "-")

    def test_files_and_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            good, bad = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            json.dump(series(), open(good, "w"))
            json.dump({"schema": "wattlab.serve-bench/1"}, open(bad, "w"))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(sbs.main([good, "--markdown"]), 0)
            self.assertIn("| random/Llama-3.1-8B-shape | 64 | 700 | 1 | 2/3 | 0.11 | 0.05..0.17 |", out.getvalue())
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(sbs.main([bad]), 2)
            self.assertIn("expected wattlab.serve-bench/2", err.getvalue())


if __name__ == "__main__":
    unittest.main()
