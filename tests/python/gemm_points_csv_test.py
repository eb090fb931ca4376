"""python/bench/gemm_points_csv.py: every stored GEMM point is one row with its labels, counts and
the GPU domain's energy, the same store gives the same bytes, and a file that is no store is a
clear error. The points come from a SIMULATED sweep made by the wattlab binary (WATTLAB_BIN)."""
import csv
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "python", "bench", "gemm_points_csv.py")
WATTLAB = os.environ.get("WATTLAB_BIN", "")


def export(db, out=None):
    cmd = [sys.executable, SCRIPT, db] + (["--out", out] if out else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@unittest.skipUnless(WATTLAB and os.access(WATTLAB, os.X_OK), "WATTLAB_BIN names no wattlab binary")
class GemmPointsCsv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.db = os.path.join(cls.tmp.name, "sweep.db")
        r = subprocess.run([WATTLAB, "gemm", "sweep", "--device", "sim", "--experiment", "E3", "--engines", "bf16",
                            "--shapes", "2048", "--seeds", "1,2", "--max-values", "3", "--window-s", "2",
                            "--db", cls.db], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise AssertionError(f"the sim sweep failed ({r.returncode}): {r.stderr[-2000:]}")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_one_row_per_point_with_its_energy(self):
        out = os.path.join(self.tmp.name, "points.csv")
        r = export(self.db, out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        con = sqlite3.connect(self.db)
        stored = con.execute("SELECT w.run_id, w.window_id, d.energy_j FROM windows w "
                             "JOIN window_labels l ON l.window_row = w.window_row AND l.key = 'kind' AND l.value = 'gemm_point' "
                             "JOIN window_domains d ON d.window_row = w.window_row AND d.domain_id = 'gpu:0' "
                             "ORDER BY w.run_id, w.window_id").fetchall()
        con.close()
        self.assertGreater(len(stored), 4)
        self.assertEqual(len(rows), len(stored))
        for row, (run_id, window_id, energy_j) in zip(rows, stored):
            self.assertEqual((int(row["run_id"]), int(row["window_id"])), (run_id, window_id))
            self.assertAlmostEqual(float(row["energy_j"]), energy_j, places=6)
            self.assertGreater(float(row["uncertainty_j"]), 0)
            self.assertEqual(row["label.engine"], "bf16")
            self.assertIn(row["label.seed"], ("1", "2"))
            self.assertEqual(row["simulated"], "1")
            self.assertGreater(float(row["count.energy_per_gemm_j"]), 0)
        self.assertEqual({r["label.experiment"] for r in rows}, {"E3", "ref"})

    def test_same_store_same_bytes(self):
        a, b = export(self.db), export(self.db)
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)

    def test_not_a_store_is_an_error(self):
        bad = os.path.join(self.tmp.name, "not-a-store.db")
        with open(bad, "w") as f:
            f.write("plain text")
        r = export(bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not-a-store.db", r.stderr)


if __name__ == "__main__":
    unittest.main()
