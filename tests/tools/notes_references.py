#!/usr/bin/env python3
"""Every `Note [Title]` reference in the tree has exactly one definition (See Note [Notes] in
notes/README.md).

    python3 tests/tools/notes_references.py [ROOT]      checks the files git tracks under ROOT
    python3 tests/tools/notes_references.py --self-test  plants each kind of fault and checks
                                                        that the check reports it

Exit status 0 when every reference resolves to one definition and every title is defined once;
1 otherwise, with one line per fault: `path:line: ...`.
"""
import os
import re
import subprocess
import sys
import tempfile

# What counts (notes/README.md has the rule for writers): a definition is a comment line that
# holds `Note [Title]` alone after the comment marker (`//`, `#`, `*`), or a Markdown heading of
# that form; anything else naming a Note is a reference, its title possibly wrapped onto the next
# comment line. A reference preceded by another project's name ("torch's Note [...]") points
# outside the tree and is not checked; neither is text that shows the syntax rather than uses it:
# a `code span`, a fenced block of Markdown, a title with a quote or a brace (code that builds
# such text), and this file.
DEFINITION = re.compile(r"^\s*(?://+|#+|/?\*+)?\s*Note \[([^\]\n]+)\]\s*$")
REFERENCE = re.compile(r"Note \[([^\]]*)\]")
OUTSIDE = re.compile(r"(?:torch|PyTorch|pytorch|CCCL|RMM|NCCL)'s\s+(?:(?://+|#+|\*)\s*)?$")
# The prefix of a continuation line inside a wrapped title: indentation and a comment marker.
CONTINUATION = re.compile(r"\s*\n\s*(?://+|#+|\*+)?\s*")
CODE_SPAN = re.compile(r"`[^`\n]*`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
SKIPPED_SUFFIXES = (".png", ".gz", ".json", ".csv", ".txt", ".bin", ".svg", ".ico")


def tracked_files(root):
    """The files git tracks under `root`; outside a git checkout (a source archive), every file
    but build folders and virtual environments."""
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, text=True)
    if listed.returncode == 0:
        paths = listed.stdout.split("\0")
    else:
        paths = []
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [d for d in subfolders if not d.startswith((".", "build", "gpu-bundle"))]
            paths += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return [p for p in paths if p and (not p.endswith(SKIPPED_SUFFIXES) or p.endswith("CMakeLists.txt"))]


def tree_check_main(argv, self_test, find, describe):
    """The command line of the tree checks beside this one (source_lengths.py, dated_figures.py):
    `--self-test`, or ROOT (default .) whose tracked files `find(root, paths)` searches; one line
    per finding (`describe(finding)`), exit status 1 when there is any."""
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else "."
    found = find(root, tracked_files(root))
    for finding in found:
        print(describe(finding))
    return 1 if found else 0


def scan(root, paths):
    """Returns ({title: [(path, line)]} of definitions, {title: [(path, line)]} of references)."""
    definitions, references = {}, {}
    for path in paths:
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        if "Note [" not in text or path == "tests/tools/notes_references.py":
            continue
        blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # keeps line numbers
        if path.endswith(".md"):
            text = FENCE.sub(blank, text)
        text = CODE_SPAN.sub(blank, text)
        lines = text.split("\n")
        for match in REFERENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            title = CONTINUATION.sub(" ", match.group(1)).strip()
            if '"' in title or "{" in title:
                continue
            defined = DEFINITION.match(lines[line - 1])
            if defined and "\n" not in match.group(1):
                definitions.setdefault(title, []).append((path, line))
                continue
            line_start = text.rfind("\n", 0, match.start()) + 1
            if OUTSIDE.search(text[max(line_start - 200, 0):match.start()].split("\n")[-1]):
                continue
            references.setdefault(title, []).append((path, line))
    return definitions, references


def faults(definitions, references):
    found = []
    for title, places in sorted(definitions.items()):
        if len(places) > 1:
            where = ", ".join(f"{p}:{n}" for p, n in places)
            found.append(f"{places[0][0]}:{places[0][1]}: Note [{title}] is defined {len(places)} times ({where})")
    for title, places in sorted(references.items()):
        if title not in definitions:
            near = [t for t in definitions if t.lower().startswith(title.lower()[:12])]
            hint = f" (defined: {', '.join(f'[{t}]' for t in sorted(near))})" if near else ""
            for path, line in places:
                found.append(f"{path}:{line}: Note [{title}] is referred to but defined nowhere{hint}")
    return found


def check(root):
    definitions, references = scan(root, tracked_files(root))
    found = faults(definitions, references)
    for f in found:
        print(f)
    print(f"notes: {len(definitions)} defined, {sum(map(len, references.values()))} references, {len(found)} faults")
    return 1 if found else 0


def self_test():
    """Plants a good tree, then a duplicate definition, a dangling reference and a wrapped one."""
    with tempfile.TemporaryDirectory() as root:
        def write(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
            subprocess.run(["git", "-C", root, "add", path], check=True)

        subprocess.run(["git", "init", "-q", root], check=True)
        write("a.cpp", "// Note [Two words]\n// Why.\nint x;  // See Note [Two\n// words].\n")
        write("notes/b.md", "# b\n\n## Note [Heading form]\n\nSee Note [Two words]. torch's Note [Theirs] is outside.\n")
        write("c.py", "# Note [Python form]\nx = 1  # See Note [Heading form], Note [Python form]\n")
        write("g.md", "Write `// Note [Title]`, then\n\n```cpp\n// Note [Two words]\n```\n")
        results = [("clean tree", check(root) == 0)]
        write("d.cpp", "// See Note [Nowhere].\n")
        results.append(("dangling reference", check(root) == 1))
        subprocess.run(["git", "-C", root, "rm", "-qf", "d.cpp"], check=True)
        write("e.sh", "# Note [Two words]\n")
        results.append(("duplicate definition", check(root) == 1))
        subprocess.run(["git", "-C", root, "rm", "-qf", "e.sh"], check=True)
        write("f.cpp", "// Note [Inline]: a definition must stand alone\n")
        results.append(("inline definition is a reference", check(root) == 1))
    failed = [name for name, ok in results if not ok]
    for name, ok in results:
        print(f"self-test: {name}: {'ok' if ok else 'NOT DETECTED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
