"""Sphinx configuration of cudakit's documentation site (built by scripts/docs.sh)."""
import importlib
import os
import sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(root, "python"))

project = "cudakit"
copyright = "the cudakit authors; Apache-2.0"
author = "the cudakit authors"
release = "0.1.0"

extensions = ["myst_parser", "breathe", "sphinx.ext.autodoc"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/perf/ holds the runs' files (reports, logs, plots), linked from the performance report.
exclude_patterns = ["perf/**", "Doxyfile", "doxygen_filter.py"]

html_theme = "furo"
html_title = "cudakit"

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The C++ API: Doxygen's XML of include/cudakit (docs/Doxyfile), written by scripts/docs.sh.
breathe_projects = {"cudakit": os.environ.get("CUDAKIT_DOXYGEN_XML", os.path.join(root, "build-docs", "doxygen", "xml"))}
breathe_default_project = "cudakit"
breathe_default_members = ("members",)
cpp_index_common_prefix = ["cudakit::"]

# The Python API: the package's Python modules, with the compiled extension mocked where it is
# not built (CI documents the pure-Python parts; a build with the extension documents it too).
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports = []
for optional in ("cudakit._cudakit", "torch", "numpy", "cupy"):
    try:
        importlib.import_module(optional)
    except Exception:
        autodoc_mock_imports.append(optional)

# The Markdown pages are also read on the repository's web view, where their links to files the
# site does not hold (README.md, notes/, the runs' folders under docs/perf/) work; the site keeps
# them as they are. performance-history.md's dated entries skip heading levels.
suppress_warnings = ["myst.xref_missing", "myst.header"]


def literal_examples(app, what, name, obj, options, lines):
    """The package's docstrings show examples as indented blocks after a paragraph, as Python's
    own help() reads them; reStructuredText wants `::` before such a block to keep it verbatim."""
    out = []
    for i, line in enumerate(lines):
        previous = out[-1] if out else ""
        starts_block = (not line.strip() and previous.strip() and not previous.startswith(" ")
                        and not previous.rstrip().endswith("::") and not previous.lstrip().startswith(":")
                        and i + 1 < len(lines) and lines[i + 1].startswith("    "))
        if starts_block:
            out.extend(["", "::"])
        out.append(line)
    lines[:] = out


def setup(app):
    app.connect("autodoc-process-docstring", literal_examples)
