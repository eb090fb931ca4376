"""wattlab report --gemm --points: the report rebuilt from the points CSV (python/bench/gemm_points_csv.py)
equals the report from the store it was exported from: the same tables as text and Markdown, the same
SVG plots, the same run selection; a CSV with a missing column or a malformed row exits 2 naming it.
The store comes from a SIMULATED sweep made by the wattlab binary (WATTLAB_BIN) in two runs."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTER = os.path.join(HERE, "..", "..", "python", "bench", "gemm_points_csv.py")
WATTLAB = os.environ.get("WATTLAB_BIN", "")
SWEEP = ["gemm", "sweep", "--device", "sim", "--experiment", "E3,E11", "--engines", "bf16", "--shapes", "256",
         "--seeds", "1,2", "--max-values", "3", "--window-s", "1", "--warmup-s", "1", "--first-warmup-s", "1",
         "--warmup-max-s", "2"]


def wattlab(*args):
    return subprocess.run([WATTLAB, *args], capture_output=True, text=True, timeout=300)


@unittest.skipUnless(WATTLAB and os.access(WATTLAB, os.X_OK), "WATTLAB_BIN names no wattlab binary")
class ReportFromPoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.db = os.path.join(cls.tmp.name, "study.db")
        cls.csv = os.path.join(cls.tmp.name, "points.csv")
        # Stopped after 7 points and resumed: two runs of one sweep.
        for extra in (["--max-points", "7"], []):
            r = wattlab(*SWEEP, "--db", cls.db, *extra)
            if r.returncode != 0:
                raise AssertionError(f"the sim sweep failed ({r.returncode}): {r.stderr[-2000:]}")
        r = subprocess.run([sys.executable, EXPORTER, cls.db, "--out", cls.csv], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError(f"the export failed: {r.stderr}")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def both(self, *args):
        from_db = wattlab("report", "--gemm", *args, "--db", self.db)
        from_csv = wattlab("report", "--gemm", *args, "--points", self.csv)
        self.assertEqual(from_db.returncode, 0, from_db.stderr)
        self.assertEqual(from_csv.returncode, 0, from_csv.stderr)
        return from_db.stdout, from_csv.stdout

    def test_text_tables_are_identical(self):
        db, csv = self.both()
        self.assertIn("(SIMULATED)", db)
        self.assertIn("ΔE [95 % CI]", db)
        self.assertIn("from runs 1, 2", db)
        self.assertEqual(db, csv)

    def test_markdown_differs_only_in_the_source_it_names(self):
        db, csv = self.both("--format", "md")
        db_lines, csv_lines = db.splitlines(), csv.splitlines()
        self.assertIn("all runs of " + self.db, db_lines[0])
        self.assertIn("all runs of " + self.csv, csv_lines[0])
        self.assertEqual(db_lines[1:], csv_lines[1:])

    def test_run_selection_is_the_same(self):
        for sel in ("latest", "1", "2"):
            db, csv = self.both(sel)
            self.assertEqual(db, csv, sel)
        missing = wattlab("report", "--gemm", "9", "--points", self.csv)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("no run 9 in " + self.csv, missing.stderr)

    @unittest.skipUnless(shutil.which("gnuplot"), "gnuplot is not installed")
    def test_plots_are_identical(self):
        a, b = os.path.join(self.tmp.name, "plots_db"), os.path.join(self.tmp.name, "plots_csv")
        self.both("--plots-dir", a)
        self.both("--plots-dir", b)
        names = sorted(os.listdir(a))
        self.assertGreater(len(names), 0)
        self.assertEqual(names, sorted(os.listdir(b)))
        for n in names:
            with open(os.path.join(a, n), "rb") as fa, open(os.path.join(b, n), "rb") as fb:
                self.assertEqual(fa.read(), fb.read(), n)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", newline="") as f:
            f.write(text)
        return path

    def test_a_missing_column_or_a_bad_row_exits_2_naming_it(self):
        with open(self.csv, newline="") as f:
            lines = f.read().split("\n")
        header = lines[0].split(",")
        no_seed = self.write("no_seed.csv", "\n".join([",".join(h if h != "label.seed" else "label.sed" for h in header)] + lines[1:]))
        r = wattlab("report", "--gemm", "--points", no_seed)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no column 'label.seed'", r.stderr)
        short = self.write("short.csv", "\n".join(lines[:3] + [lines[3].split(",", 1)[1]] + lines[4:]))
        r = wattlab("report", "--gemm", "--points", short)
        self.assertEqual(r.returncode, 2)
        self.assertIn(short + " line 4: ", r.stderr)
        self.assertIn("fields, the header has", r.stderr)
        r = wattlab("report", "--gemm", "--points", os.path.join(self.tmp.name, "nothing.csv"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read the points CSV", r.stderr)

    def test_a_sweep_resumes_from_the_csv_without_the_store(self):
        fresh = os.path.join(self.tmp.name, "fresh.db")
        dry = wattlab(*SWEEP, "--db", fresh, "--resume-from", self.csv, "--dry-run")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        self.assertNotIn("planned", dry.stdout)  # every point is in the CSV
        # A CSV of the first run only: the second run's points are measured again, into the fresh store.
        with open(self.csv, newline="") as f:
            lines = f.read().split("\n")
        first = self.write("first_run.csv", "\n".join([lines[0]] + [l for l in lines[1:] if l.startswith("1,")]) + "\n")
        r = wattlab(*SWEEP, "--db", fresh, "--resume-from", first)
        self.assertEqual(r.returncode, 0, r.stderr)
        import sqlite3
        con = sqlite3.connect(fresh)
        n_fresh = con.execute("SELECT COUNT(*) FROM window_labels WHERE key = 'kind' AND value = 'gemm_point'").fetchone()[0]
        con.close()
        self.assertEqual(n_fresh, len(lines) - 2 - 7)  # all points but the 7 of the first run
        bad = wattlab(*SWEEP, "--db", fresh, "--resume-from", os.path.join(self.tmp.name, "nothing.csv"))
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--resume-from: cannot read the points CSV", bad.stderr)
        both = wattlab(*SWEEP, "--db", fresh, "--resume-from", self.csv, "--no-resume")
        self.assertEqual(both.returncode, 2)
        self.assertIn("give one of them", both.stderr)

    def test_usage_errors(self):
        r = wattlab("report", "--points", self.csv)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--points go with --gemm", r.stderr)
        r = wattlab("report", "--gemm", "--points", self.csv, "--db", self.db)
        self.assertEqual(r.returncode, 2)
        self.assertIn("give --points or --db, not both", r.stderr)


if __name__ == "__main__":
    unittest.main()
