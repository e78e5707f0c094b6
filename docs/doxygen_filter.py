#!/usr/bin/env python3
"""Doxygen's INPUT_FILTER for cudakit's headers (docs/Doxyfile): the headers document themselves
in plain `//` comments, so this turns them into Doxygen comments on the way in, leaving the files
as they are.

- A header's first comment block (after `#pragma once`) becomes the file's description.
- A block of `//` lines directly above a declaration becomes its documentation (`///`).
- A trailing `//` comment after a member becomes `///<`.
- `@throws` naming one exception class stays a Doxygen `@throws`; any other form is shown as a
  bold "Throws:" (Sphinx's :throws: field takes a single name).
- Using-declarations of a base's members, and anonymous unions, are left out of the API pages.
- `// Note [Title]` blocks, blocks inside function bodies and lines already in Doxygen's form
  (`///`, `//!`, `/** */`) are left alone.
"""
import re
import sys

LINE = re.compile(r"^(\s*)//(?![/!])\s?(.*)$")
TRAILING = re.compile(r"^(\s*[^/\s].*?[;,{])(\s+)//(?![/!<])\s?(.*)$")


COMMANDS = {"brief", "param", "tparam", "return", "returns", "throws", "note", "see", "file", "code",
            "endcode", "pre", "post", "warning", "deprecated", "details"}
SPAN = re.compile(r"(`[^`]*`)")


def escaped(text):
    """Comment prose as Doxygen should show it: outside `code` spans, `<word>` is text, not an
    HTML tag; `\\x`, `#word` and `@word` (other than the commands the headers use) are text, not
    commands or links."""
    parts = SPAN.split(text)
    for k in range(0, len(parts), 2):
        part = parts[k]
        part = re.sub(r"\\", r"\\\\", part)
        part = re.sub(r"<(/?[A-Za-z_][\w]*)>", r"\\<\1\\>", part)
        part = re.sub(r"(?<![\w&])#(?=[A-Za-z_])", r"\\#", part)
        part = re.sub(r"@(\w+)", lambda m: m.group(0) if m.group(1) in COMMANDS else "\\@" + m.group(1), part)
        # `@throws Name ...` with one exception class becomes Sphinx's "Throws" field (a period
        # right after the name would be read as part of it); the headers' other forms ("@throws
        # as f()", "@throws A, B") a bold "Throws:" in the text, since that field takes one name.
        part = re.sub(r"@throws\s+((?:\w+::)*[A-Z]\w*Error)[.;]?(?=\s|$)(?!\s*,)", r"@throws \1", part)
        part = re.sub(r"@throws\b(?!\s+(?:\w+::)*[A-Z]\w*Error(?:\s|$))(?!\s*,):?", "@b Throws:", part)
        parts[k] = part
    return "".join(parts)


USING_MEMBER = re.compile(r"^\s*using\s+[\w:]+::\w+\s*;")
ANONYMOUS_UNION = re.compile(r"^\s*union\s*\{")
ALIGNMENT = re.compile(r"\b(alignas|__align__)\s*\([^()]*\)")
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b")


def convert(text):
    """`text` with its documenting comments in Doxygen's form; every line stays on its line."""
    out, stack, pending, seen_code, first_block_done = [], [], "", False, False
    hidden_union_depth = 0
    in_directive = False
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        in_body = "body" in stack
        if LINE.match(line):
            block = []
            while i < len(lines) and LINE.match(lines[i]):
                block.append(LINE.match(lines[i]))
                i += 1
            if not first_block_done and not seen_code:
                first_block_done = True
                out.extend(f"{b.group(1)}/// {escaped(b.group(2))}".rstrip() for b in block)
                out[-1] += " @file"  # the block describes the file (@file at a line's end: this one)
            elif block[0].group(2).startswith("Note [") or in_body:
                out.extend(lines[i - len(block):i])
            else:
                out.extend(f"{b.group(1)}/// {escaped(b.group(2))}".rstrip() for b in block)
            continue
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            seen_code = True
            first_block_done = True
        if USING_MEMBER.match(line) and stack and stack[-1] == "scope":
            # `using Base::f;` unhides a base's overloads: the base documents them already, and
            # Breathe would declare them twice.
            line = ""
        if ANONYMOUS_UNION.match(line) and not in_body:
            # Sphinx's C++ domain cannot declare a member of an anonymous union: left out.
            line = "/** @cond */ " + line
            hidden_union_depth = len(stack) + 1
        t = TRAILING.match(line)
        if t and not in_body:
            line = f"{t.group(1)}{t.group(2)}///< {escaped(t.group(3))}"
        code = re.sub(r'"(?:\\.|[^"\\])*"', '""', line.split("//")[0])
        # A preprocessor directive and its continued lines are not declarations: their
        # parentheses must not make the next brace look like a function's body.
        if stripped.startswith("#") or in_directive:
            in_directive = line.rstrip().endswith("\\")
            out.append(line)
            i += 1
            continue
        pending += " " + code
        for ch in code:
            if ch == "{":
                # `struct alignas(8) x {` opens a scope: an attribute's parentheses are not a
                # parameter list.
                head = ALIGNMENT.sub("", pending.split("{")[0])
                stack.append("scope" if SCOPE.search(pending) and "(" not in head[-60:] else "body")
                pending = ""
            elif ch == "}":
                if stack:
                    stack.pop()
                if hidden_union_depth and len(stack) < hidden_union_depth:
                    line += " /** @endcond */"
                    hidden_union_depth = 0
                pending = ""
            elif ch == ";":
                pending = ""
        out.append(line)
        i += 1
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(convert(f.read()))
