#!/usr/bin/env python3
"""No code comment carries one run's figures (the house rule of CONTRIBUTING.md: figures measured
on one machine on one date rot in code; they belong in notes/, and the comment points there).

A comment line that names a date (YYYY-MM-DD) is reported when it, or a comment line within two
lines of it, also holds a measured figure (a number with a unit of time, throughput or FLOP/s).
A date alone (when a behaviour changed) or a figure alone (a constant, a size, a limit) is fine.

    python3 tests/tools/dated_figures.py [ROOT]      checks the code files git tracks under ROOT
    python3 tests/tools/dated_figures.py --self-test  plants comments of each kind and checks that
                                                     only the dated figure is reported

Exit status 0 when no comment carries a dated figure; 1 otherwise, one line each:
`path:line: the comment`.
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from notes_references import tracked_files, tree_check_main  # noqa: E402  (the same notion of the tree's files)

CODE_SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".py", ".pyi", ".sh", ".cmake", ".in")
# Texts where dated figures belong, and recorded data.
EXEMPT_FOLDERS = ("docs/", "notes/", "tests/data/")
COMMENT = re.compile(r"^\s*(//|#|\*|/\*)")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
FIGURE = re.compile(r"\d(\.\d+)?\s?(ns|us|µs|ms|s|[KMGT]B/s|[KMGT]iB/s|TFLOP/s|M pairs/s)\b"
                    r"|\d(\.\d+)?x (torch|faster|slower)\b")
WINDOW = 2


def dated_figures(root, paths):
    """[(path, line number, text)] of comment lines with a date and a figure near it."""
    found = []
    for path in paths:
        if path.startswith(EXEMPT_FOLDERS):
            continue
        if not path.endswith(CODE_SUFFIXES) and os.path.basename(path) != "CMakeLists.txt":
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            continue
        comment = [COMMENT.match(line) is not None for line in lines]
        for i, line in enumerate(lines):
            if not comment[i] or not DATE.search(line):
                continue
            near = range(max(0, i - WINDOW), min(len(lines), i + WINDOW + 1))
            if any(comment[j] and FIGURE.search(lines[j]) for j in near):
                found.append((path, i + 1, line.strip()))
    return found


def self_test():
    planted = {
        "src/figure.cpp": "// On 2026-12-02 the pair took\n// 50.7 ns on the lent H200.\nint x;\n",
        "src/date_only.cpp": "// cudakit passed no flags until 2026-12-05 (notes/graphs.md).\nint y;\n",
        "src/figure_only.cpp": "// A pair costs tens of ns; 64 MiB is the largest chunk.\nint z;\n",
        "src/code.cpp": 'const char* when = "2026-12-02"; double us = 5.0;\n',
        "notes/run.md": "# 2026-12-02: 50.7 ns\n",
        "bench/run.py": "# measured on 2026-12-02: 774 TFLOP/s\nx = 1\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for name, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        found = sorted((path, line) for path, line, _ in dated_figures(root, tracked_files(root)))
    expected = [("bench/run.py", 1), ("src/figure.cpp", 1)]
    if found != expected:
        print(f"self-test: expected {expected} reported, got {found}")
        return 1
    return 0


def main(argv):
    return tree_check_main(argv, self_test, dated_figures,
                           lambda found: f"{found[0]}:{found[1]}: a comment with one run's figures "
                                         f"(move them to notes/): {found[2]}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
