#!/usr/bin/env python3
"""No source file in the tree is longer than 1,000 lines (the house rule of CONTRIBUTING.md: a
file that long holds more than one object; split it along its seams).

    python3 tests/tools/source_lengths.py [ROOT]      checks the files git tracks under ROOT
    python3 tests/tools/source_lengths.py --self-test  plants a file one line over the limit and
                                                      one at it, and checks that only the first is reported

Exit status 0 when every source file is within the limit; 1 otherwise, one line per file:
`path: N lines (at most 1000)`.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from notes_references import tracked_files, tree_check_main  # noqa: E402  (the same notion of the tree's files)

LIMIT = 1000
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".py", ".pyi", ".sh", ".js", ".cmake")


def too_long(root, paths):
    """[(path, lines)] of the source files among `paths` over the limit."""
    out = []
    for path in paths:
        if not path.endswith(SOURCE_SUFFIXES) and os.path.basename(path) != "CMakeLists.txt":
            continue
        try:
            with open(os.path.join(root, path), "rb") as f:
                lines = f.read().count(b"\n")
        except (FileNotFoundError, IsADirectoryError):
            continue
        if lines > LIMIT:
            out.append((path, lines))
    return out


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "src"))
        for name, lines in (("src/over.cpp", LIMIT + 1), ("src/at.cpp", LIMIT), ("notes/long.md", 5000)):
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write("x\n" * lines)
        found = too_long(root, tracked_files(root))
    if found != [("src/over.cpp", LIMIT + 1)]:
        print(f"self-test: expected only src/over.cpp ({LIMIT + 1} lines) reported, got {found}")
        return 1
    return 0


def main(argv):
    return tree_check_main(argv, self_test, too_long,
                           lambda found: f"{found[0]}: {found[1]} lines (at most {LIMIT})")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
