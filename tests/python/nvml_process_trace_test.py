#!/usr/bin/env python3
"""python/bench/nvml_process_trace.py's summary on a hand-built trace: spacing, publication lag,
samples that appeared after a newer one of another process, SM-seconds under both readings of a
sample, and exit 2 on a missing or malformed file."""
import contextlib
import io
import os
import tempfile
import unittest

import nvml_process_trace as npt


def trace(rows):
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    f.write(",".join(npt.FIELDS) + "\n")
    for r in rows:
        f.write(",".join(str(x) for x in r) + "\n")
    f.close()
    return f.name


def summary(path):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = npt.main(["summarize", path])
    return rc, out.getvalue(), err.getvalue()


class Summary(unittest.TestCase):
    def test_spacing_lag_late_and_sm_seconds(self):
        rows = []
        # pid 7: a sample every 100 ms at 50 %, seen 10 ms after its timestamp.
        for k in range(1, 11):
            rows.append([k * 100_000 + 10_000, 7, k * 100_000, 50, 0, 0, 0])
        # pid 8: a sample every other period (200 ms apart) at 100 %, seen 250 ms late: each one
        # but the last (pid 7's samples end at the same timestamp) appears after a newer one of pid 7.
        for k in range(2, 11, 2):
            rows.append([k * 100_000 + 250_000, 8, k * 100_000, 100, 0, 0, 0])
        path = trace(rows)
        try:
            rc, out, _ = summary(path)
        finally:
            os.unlink(path)
        self.assertEqual(rc, 0)
        lines = {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[2:-1]] for l in out.splitlines()
                 if l.startswith("| 7 ") or l.startswith("| 8 ")}
        self.assertEqual(lines["7"][0], "10")
        self.assertEqual(lines["7"][1], "100.0 / 100.0 / 100.0")
        self.assertEqual(lines["7"][2], "10.0 / 10.0 / 10.0")
        self.assertEqual(lines["7"][3], "0")
        self.assertEqual(lines["8"][0], "5")
        self.assertEqual(lines["8"][1], "200.0 / 200.0 / 200.0")
        self.assertEqual(lines["8"][2], "250.0 / 250.0 / 250.0")
        self.assertEqual(lines["8"][3], "4")
        # pid 7: 9 samples after the first, 0.5 x 0.1 s each under both readings.
        self.assertEqual(lines["7"][4], "0.450")
        self.assertEqual(lines["7"][5], "0.450")
        # pid 8: 4 samples after the first: 0.2 s each over one (200 ms) period; 0.2 s since the previous.
        self.assertEqual(lines["8"][4], "0.800")
        self.assertEqual(lines["8"][5], "0.800")

    def test_a_missing_or_malformed_file_exits_2(self):
        rc, _, err = summary("/nonexistent/trace.csv")
        self.assertEqual(rc, 2)
        self.assertIn("cannot read", err)
        path = trace([["x", 1, 2, 3, 4, 5, 6]])
        try:
            rc, _, err = summary(path)
        finally:
            os.unlink(path)
        self.assertEqual(rc, 2)
        empty = trace([])
        try:
            rc, _, err = summary(empty)
        finally:
            os.unlink(empty)
        self.assertEqual(rc, 2)
        self.assertIn("no samples", err)


if __name__ == "__main__":
    unittest.main()
