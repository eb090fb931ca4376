#!/usr/bin/env python3
"""Tests of check_doc_links.py on small made-up repositories: it passes on references that resolve
and fails, naming them, on each kind of dangling one."""
import os
import subprocess
import sys
import tempfile
import unittest

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_doc_links.py")
# Paths are joined at run time so that this file mentions no document path itself.
DOC = os.path.join("docs", "guide.md")
MISSING = os.path.join("docs", "missing.md")


def run_check(root):
    r = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return r.returncode, r.stdout


class CheckDocLinksTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        # The repository sits one level down so that a sibling folder can exist beside it.
        self.root = os.path.join(self.tmp.name, "repo")
        self.write(DOC, "# Guide\n\nSee [the sensors](sensors.md#gain) and [home](https://example.org/x.md).\n")
        self.write(os.path.join("docs", "sensors.md"), "# Sensors\n")
        self.write(os.path.join("src", "a.cpp"), f"// Background: {DOC}, section 2.\n")
        self.write("README.md", f"Read `{DOC}` first, or [the guide]({DOC}).\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text, base=None):
        p = os.path.join(base or self.root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)

    def test_resolving_references_pass(self):
        rc, out = run_check(self.root)
        self.assertEqual(rc, 0, out)

    def test_missing_doc_in_source_fails(self):
        self.write(os.path.join("include", "b.h"), f"// See {MISSING}.\n")
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1)
        self.assertIn(os.path.join("include", "b.h") + ":1: " + MISSING, out)

    def test_doc_of_a_folder_outside_the_repository_fails(self):
        outside = os.path.join("shared", DOC)
        self.write(os.path.join("src", "c.h"), f"// From {outside}.\n")
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1)
        self.assertIn(outside, out)

    def test_relative_path_leaving_the_repository_fails_even_if_the_file_exists(self):
        self.write(DOC, "# A sibling checkout's guide\n", base=os.path.join(self.tmp.name, "shared"))
        sibling = os.path.join("..", "shared", DOC)
        self.write(os.path.join("scripts", "d.sh"), f"# reads {sibling}\n")
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1)
        self.assertIn(sibling, out)

    def test_broken_markdown_link_fails(self):
        self.write(os.path.join("docs", "e.md"), "[gone](results/none.md) and [ok](guide.md)\n")
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1)
        self.assertIn("(results/none.md)", out)
        self.assertNotIn("(guide.md)", out)

    def test_usage_error(self):
        rc, _ = run_check(os.path.join(self.root, "nowhere"))
        self.assertEqual(rc, 2)


if __name__ == "__main__":
    unittest.main()
