#!/usr/bin/env python3
"""Fixed-input checks of python/bench/nvml_check.py: the arithmetic of the NVML check's tables."""
import io
import math
import unittest

import nvml_check as nc

UUID = "GPU-0000"


def run_json(windows, tags=None):
    return {"schema": "wattlab.run/1", "simulated": False, "tags": tags or {},
            "domains": [{"id": "gpu:0", "scope": "gpu", "uuid": UUID}, {"id": "gpu:0/memory", "scope": "memory", "uuid": UUID}],
            "windows": [{"name": n, "domains": [{"domain_id": "gpu:0/memory", "available": True, "energy_j": 1.0,
                                                 "uncertainty_j": 0.1, "systematic_j": 0.1},
                                                {"domain_id": "gpu:0", "available": e is not None, "energy_j": e,
                                                 "uncertainty_j": u, "systematic_j": 300.0}]} for n, e, u in windows]}


def load_json(steady=(), step=()):
    return {"device_name": "H200", "device_uuid": UUID, "nvml_uuid": UUID,
            "gemm": {"n": 8192, "dtype": "bf16", "mean_ms": 1.6, "tflops": 687.2},
            "steady": {"windows": [{"name": n, "direct_j": d, "t_begin_ns": 0, "t_end_ns": 10_000_000_000} for n, d in steady]},
            "step": {"busy_ms": 50, "window_ms": 100, "windows": [{"name": n, "gemms": 30} for n in step]}}


CPU_TAGS = {"wattlab.sampler_cpu_pct": "0.5", "wattlab.sampler_cpu_s": "0.3", "wattlab.sampler_span_s": "60",
            "wattlab.process_cpu_pct": "0.7"}


class Steady(unittest.TestCase):
    def test_diff_is_relative_to_the_direct_counter_and_the_limit_is_one_percent(self):
        run = run_json([("steady 1", 7070.0, 20.0), ("steady 2", 6929.0, 80.0), ("steady 3", None, None)])
        load = load_json(steady=[("steady 1", 7000.0), ("steady 2", 7000.0), ("steady 3", 7000.0)])
        rows = nc.steady_rows(run, load)
        self.assertAlmostEqual(rows[0]["diff_pct"], 1.0)
        self.assertTrue(rows[0]["ok"])          # exactly 1% passes
        self.assertFalse(rows[0]["within_u"])   # 70 J off with ±20 J claimed
        self.assertAlmostEqual(rows[1]["diff_pct"], -71 / 70)
        self.assertFalse(rows[1]["ok"])
        self.assertTrue(rows[1]["within_u"])
        self.assertFalse(rows[2]["ok"])         # unavailable never passes
        self.assertIsNone(rows[2]["diff_pct"])
        self.assertEqual(rows[0]["gain_j"], 300.0)  # the GPU domain, not gpu:0/memory

    def test_report_fails_on_one_bad_window_or_a_busy_sampler(self):
        good = run_json([("steady 1", 7010.0, 20.0), ("step 01", 30.0, 2.0), ("step 02", 32.0, 2.0)], CPU_TAGS)
        load = load_json(steady=[("steady 1", 7000.0)], step=["step 01", "step 02"])
        self.assertTrue(nc.report(good, load, out=io.StringIO()))
        busy = run_json([("steady 1", 7010.0, 20.0), ("step 01", 30.0, 2.0), ("step 02", 32.0, 2.0)],
                        dict(CPU_TAGS, **{"wattlab.sampler_cpu_pct": "1.2"}))
        self.assertFalse(nc.report(busy, load, out=io.StringIO()))
        bad = run_json([("steady 1", 7100.0, 20.0), ("step 01", 30.0, 2.0), ("step 02", 32.0, 2.0)], CPU_TAGS)
        out = io.StringIO()
        self.assertFalse(nc.report(bad, load, out=out))
        self.assertIn("+1.429", out.getvalue())
        self.assertIn("overall: FAIL", out.getvalue())

    def test_missing_window_is_an_error(self):
        with self.assertRaises(ValueError):
            nc.steady_rows(run_json([]), load_json(steady=[("steady 1", 1.0)]))


class Cost(unittest.TestCase):
    def test_percentiles_and_ratio(self):
        self.assertEqual(nc.percentile([5, 1, 3], 50), 3)
        self.assertAlmostEqual(nc.percentile(list(range(101)), 99), 99.0)
        self.assertAlmostEqual(nc.percentile([0, 10], 99), 9.9)
        c = nc.cost_stats({"marks_pair_ns": [2000, 4000, 3000], "counter_pair_ns": [8_400_000] * 3,
                           "counter_read_ns": [4_200_000] * 6, "meter_pair_ns": None})
        self.assertAlmostEqual(c["marks_pair_ns"]["median_us"], 3.0)
        self.assertAlmostEqual(c["marks_pair_ns"]["p99_us"], 3.98)
        self.assertAlmostEqual(c["marks_pair_ns"]["counter_over_this"], 2800.0)
        self.assertNotIn("meter_pair_ns", c)


class Step(unittest.TestCase):
    def test_spread_against_reported_uncertainty(self):
        run = run_json([("step 01", 30.0, 2.0), ("step 02", 32.0, 4.0), ("step 03", 34.0, 1.0)])
        s = nc.step_stats(run, load_json(step=["step 01", "step 02", "step 03"]))
        self.assertAlmostEqual(s["mean_j"], 32.0)
        self.assertAlmostEqual(s["std_j"], 2.0)   # sample std (n - 1)
        self.assertAlmostEqual(s["mean_u_j"], 7 / 3)
        self.assertAlmostEqual(s["u_over_2std"], 7 / 12)
        self.assertEqual(s["covered"], 2)         # 30±2 and 32±4 reach 32; 34±1 does not

    def test_sampler_cpu_from_tags(self):
        self.assertIsNone(nc.sampler_cpu(run_json([])))
        self.assertTrue(math.isclose(nc.sampler_cpu(run_json([], CPU_TAGS))["sampler_cpu_pct"], 0.5))


if __name__ == "__main__":
    unittest.main()
