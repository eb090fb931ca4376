"""check_named_files.py finds a named path or file name that does not exist, and passes a document
whose names all exist."""
import os
import subprocess
import sys
import tempfile
import unittest

DOC = os.path.join("docs", "a.md")  # joined: the link check reads this file too
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_named_files.py")


def run(root, *docs):
    return subprocess.run([sys.executable, SCRIPT, root, *docs], capture_output=True, text=True, timeout=60)


class NamedFiles(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        os.makedirs(os.path.join(root, "src", "meter"))
        os.makedirs(os.path.join(root, "docs"))
        open(os.path.join(root, "src", "meter", "meter.cpp"), "w").close()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        with open(os.path.join(self.tmp.name, DOC), "w") as f:
            f.write(text)

    def test_existing_names_pass(self):
        self.write("the wiring: `src/meter/meter.cpp`, or `meter.cpp`; `--format` is no file\n")
        r = run(self.tmp.name, DOC)
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_missing_path_fails(self):
        self.write("see `src/meter/gone.cpp`\n")
        r = run(self.tmp.name, DOC)
        self.assertEqual(r.returncode, 1)
        self.assertIn(DOC + ":1: src/meter/gone.cpp", r.stdout)

    def test_missing_bare_name_fails(self):
        self.write("ok `meter.cpp`\nthen `scheduler.cpp`\n")
        r = run(self.tmp.name, DOC)
        self.assertEqual(r.returncode, 1)
        self.assertIn(DOC + ":2: scheduler.cpp", r.stdout)


if __name__ == "__main__":
    unittest.main()
