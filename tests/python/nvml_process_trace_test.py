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
        # Mode 0 (lastSeenTimeStamp 0): pid 7 has a sample every 100 ms at 50 %, seen 10 ms after
        # its timestamp, one per query; pid 8 one every 200 ms at 100 %, seen 250 ms late, so each
        # but the last (pid 7's samples end at the same timestamp) appears after a newer one of pid 7.
        for k in range(1, 11):
            rows.append([k * 100_000 + 10_000, 0, 0, 7, k * 100_000, 50, 0, 0, 0])
        for k in range(2, 11, 2):
            rows.append([k * 100_000 + 250_000, 0, 0, 8, k * 100_000, 100, 0, 0, 0])
        # Mode 1: pid 7 asked from its previous timestamp, and the same sample returned twice by two
        # queries (one row each, one distinct timestamp).
        for k in range(1, 6):
            rows.append([k * 200_000 + 20_000, 1, (k - 1) * 200_000, 7, k * 200_000, 40, 0, 0, 0])
        rows.append([1_100_000, 1, 1_000_000, 7, 1_000_000, 40, 0, 0, 0])
        path = trace(rows)
        try:
            rc, out, _ = summary(path)
        finally:
            os.unlink(path)
        self.assertEqual(rc, 0)
        modes = out.split("mode 1,")
        self.assertEqual(len(modes), 2, out)

        def table(text):
            return {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[2:-1]] for l in text.splitlines()
                    if l.startswith("| 7 ") or l.startswith("| 8 ")}
        m0, m1 = table(modes[0]), table(modes[1])
        self.assertEqual(m0["7"][:4], ["10", "1", "10", "100.0 / 100.0 / 100.0"])
        self.assertEqual(m0["7"][4], "10.0 / 10.0 / 10.0")
        self.assertEqual(m0["7"][5], "0")
        self.assertEqual(m0["8"][:4], ["5", "1", "5", "200.0 / 200.0 / 200.0"])
        self.assertEqual(m0["8"][4], "250.0 / 250.0 / 250.0")
        self.assertEqual(m0["8"][5], "4")
        # Since the previous timestamp: pid 7, 9 x 0.5 x 0.1 s; pid 8, 4 x 1.0 x 0.2 s.
        self.assertEqual(m0["7"][6], "0.450")
        self.assertEqual(m0["8"][6], "0.800")
        # Mode 1: 6 rows, 5 distinct timestamps; over the asked span, 4 x 0.4 x 0.2 s.
        self.assertEqual(m1["7"][:3], ["6", "1", "5"])
        self.assertEqual((m0["7"][9], m0["8"][9], m1["7"][9]), ("50.0", "100.0", "40.0"))  # mean SM % of rows
        self.assertEqual(m1["7"][7], "0.320")

    def test_a_missing_or_malformed_file_exits_2(self):
        rc, _, err = summary("/nonexistent/trace.csv")
        self.assertEqual(rc, 2)
        self.assertIn("cannot read", err)
        path = trace([["x", 0, 0, 1, 2, 3, 4, 5, 6]])
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
