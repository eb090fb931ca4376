#!/usr/bin/env python3
"""Fails when a reference to a Markdown document points at no file of the repository.

Usage: check_doc_links.py REPO_ROOT

Checked, in the text files under src/, include/, docs/, scripts/, python/, benchmarks/, tests/ and in
README.md:
  - every path to a .md file that goes through a docs/ folder (the form a citation of a project
    document takes): it must name a file from the repository root or from the mentioning file's
    folder (a path that starts with ./ or ../ only from that folder), and never a file outside the
    repository, such as a sibling checkout's documents;
  - in Markdown files, every link target [text](target) that is not a URL or an anchor: relative to
    the linking file's folder (a leading "/" means the repository root).
Prints one line per dangling reference (file:line: reference) and exits 1 if there is any.
"""
import os
import re
import sys

ROOTS = ["src", "include", "docs", "scripts", "python", "benchmarks", "tests"]
TOP_FILES = ["README.md"]
TEXT_EXT = {".md", ".cpp", ".h", ".hpp", ".cc", ".cu", ".cuh", ".py", ".sh", ".cmake", ".txt", ".html", ".in"}
SKIP_DIRS = {".git", "build", "__pycache__"}

# A path ending in .md with a docs/ folder in it; it may not start inside a longer path or URL.
DOCS_PATH = re.compile(r"(?<![\w./-])((?:\.{1,2}/)*(?:[\w.-]+/)*docs/(?:[\w.-]+/)*[\w.-]+\.md)(?![\w/-])")
# A Markdown inline link or image: [text](target "title").
MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def text_files(root):
    for top in TOP_FILES:
        p = os.path.join(root, top)
        if os.path.isfile(p):
            yield p
    for r in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, r)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for f in sorted(filenames):
                if os.path.splitext(f)[1] in TEXT_EXT or f == "CMakeLists.txt":
                    yield os.path.join(dirpath, f)


def inside(root, path):
    real = os.path.realpath(path)
    return os.path.commonpath([root, real]) == root


def resolves(root, folder, target, root_too):
    """Whether target names a file or folder of the repository: from the mentioning file's folder,
    from the root if it starts with "/", and (root_too, no ./ or ../) from the root as well."""
    if target.startswith("/"):
        candidates = [os.path.join(root, target.lstrip("/"))]
    else:
        candidates = [os.path.join(folder, target)]
        if root_too and not target.startswith("."):
            candidates.append(os.path.join(root, target))
    return any(os.path.exists(c) and inside(root, c) for c in candidates)


def dangling(root):
    out = []
    for path in text_files(root):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError:
            continue
        folder = os.path.dirname(path)
        rel = os.path.relpath(path, root)
        for n, line in enumerate(lines, 1):
            for m in DOCS_PATH.finditer(line):
                if not resolves(root, folder, m.group(1), root_too=True):
                    out.append(f"{rel}:{n}: {m.group(1)}")
            if path.endswith(".md"):
                for m in MD_LINK.finditer(line):
                    target = m.group(1).split("#", 1)[0]
                    if target and not URL.match(m.group(1)) and not resolves(root, folder, target, root_too=False):
                        out.append(f"{rel}:{n}: ({m.group(1)})")
    return out


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check_doc_links.py REPO_ROOT", file=sys.stderr)
        return 2
    bad = dangling(os.path.realpath(argv[1]))
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} reference(s) point at no file of the repository", file=sys.stderr)
        return 1
    print("docs links: every reference resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
