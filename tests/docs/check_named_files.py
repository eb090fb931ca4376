#!/usr/bin/env python3
"""Fails when a document names a source file that the repository does not have.

Usage: check_named_files.py REPO_ROOT DOC.md [DOC.md ...]

In each document, every `code span` that is a repository path (it starts with src/, include/,
tests/, benchmarks/, python/, scripts/, docs/ or cmake/) must exist from the root, and every code
span that is a bare file name with a source extension (meter.cpp, read_budget.h, gpu_load.cu) must
be the name of some file under src/, include/, benchmarks/ or python/. Prints one line per missing
name (doc:line: name) and exits 1 if there is any.
"""
import os
import re
import sys

CODE = re.compile(r"`([^`\s]+)`")
PATH_ROOTS = ("src/", "include/", "tests/", "benchmarks/", "python/", "scripts/", "docs/", "cmake/")
SOURCE_EXT = (".cpp", ".h", ".cu", ".py", ".c")
NAME_ROOTS = ("src", "include", "benchmarks", "python")


def file_names(root):
    names = set()
    for r in NAME_ROOTS:
        for _, dirnames, filenames in os.walk(os.path.join(root, r)):
            dirnames[:] = [d for d in dirnames if d not in {"build", "__pycache__", ".git"}]
            names.update(filenames)
    return names


def missing(root, doc):
    names = file_names(root)
    out = []
    with open(doc, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            for m in CODE.finditer(line):
                token = m.group(1).rstrip(".,;:")
                if token.startswith(PATH_ROOTS):
                    if not os.path.exists(os.path.join(root, token)):
                        out.append(f"{os.path.relpath(doc, root)}:{n}: {token}")
                elif "/" not in token and token.endswith(SOURCE_EXT) and not token.startswith("."):
                    if token not in names:
                        out.append(f"{os.path.relpath(doc, root)}:{n}: {token}")
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = os.path.realpath(argv[0])
    bad = []
    for doc in argv[1:]:
        bad += missing(root, os.path.join(root, doc))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
