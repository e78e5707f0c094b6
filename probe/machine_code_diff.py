#!/usr/bin/env python3
"""Which functions two builds compiled differently: objdump of each binary, function by function,
with addresses, immediates and objdump's symbol comments taken out, so that moved code and
renumbered constants compare equal and only a changed instruction counts. A function whose machine
code is identical in both cannot time differently except by where it lands in memory.
    probe/machine_code_diff.py OLD.so NEW.so [REGEX]
REGEX (default: every function) picks functions by their demangled name; prints those that differ
and a count of the same, the differing, and those only in one binary."""
import re
import subprocess
import sys

FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")


def functions(path):
    """{demangled name: [normalised instructions]}."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", path], capture_output=True,
                             text=True, check=True).stdout
    found, current = {}, None
    for line in listing.splitlines():
        start = FUNCTION.match(line)
        if start:
            current = found.setdefault(start.group(1), [])
            continue
        if current is None or not line.strip():
            continue
        instruction = line.split("\t", 1)[-1].split("#")[0]
        instruction = re.sub(r"0x[0-9a-f]+", "IMM", instruction)
        instruction = re.sub(r"\b[0-9a-f]{4,}\b", "ADDR", instruction)
        instruction = re.sub(r"<[^>]*>", "<SYM>", instruction)
        current.append(instruction.strip())
    return found


def main(old_path, new_path, pattern="."):
    picked = re.compile(pattern)
    old = {name: code for name, code in functions(old_path).items() if picked.search(name)}
    new = {name: code for name, code in functions(new_path).items() if picked.search(name)}
    both = sorted(set(old) & set(new))
    differ = [name for name in both if old[name] != new[name]]
    for name in differ:
        print(f"differs: {name} ({len(old[name])} -> {len(new[name])} instructions)")
    print(f"same {len(both) - len(differ)}, differ {len(differ)}, only old {len(set(old) - set(new))}, "
          f"only new {len(set(new) - set(old))}")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
