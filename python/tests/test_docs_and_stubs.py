"""Every public name of the module says what it does (a docstring beyond nanobind's signature
line), the package is marked typed (PEP 561) and the extension has its stubs, which name the
functions the package uses."""

import enum
import inspect
import pathlib
import re
import types

import cudakit

MODULES = ("", "memory", "graphs", "streams", "random", "nvtx", "profiler", "jiterator", "tunable", "nccl", "comm",
           "gds", "green_contexts", "graph_annotations", "sanitizer", "torch")

PACKAGE = pathlib.Path(cudakit.__file__).parent


def _own_doc(obj):
    """The docstring, less the signature lines nanobind puts first."""
    doc = inspect.getdoc(obj) or ""
    if type(obj).__name__ in ("nb_func", "nb_method"):
        # nanobind: "name(args) -> ret" (one per overload), then a blank line, then the docstring.
        head, _, rest = doc.partition("\n\n")
        return rest.strip() if "(" in head.split("\n")[0] else doc
    return doc.strip()


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in names:
        if name.startswith("_") or name == "annotations":
            continue
        obj = getattr(module, name, None)
        if obj is None or isinstance(obj, (types.ModuleType, bool, int, float, str, tuple)):
            continue
        if callable(obj):
            yield name, obj


def test_every_public_function_and_class_has_a_docstring():
    undocumented = []
    for sub in MODULES:
        module = cudakit if not sub else getattr(cudakit, sub, None) or __import__(f"cudakit.{sub}", fromlist=["_"])
        for name, obj in _public(module):
            if not _own_doc(obj):
                undocumented.append(f"cudakit.{sub + '.' if sub else ''}{name}")
    assert sorted(set(undocumented)) == []


def test_the_package_is_typed_and_the_extension_has_stubs():
    assert (PACKAGE / "py.typed").exists()
    stub = PACKAGE / "_cudakit.pyi"
    assert stub.exists()
    text = stub.read_text()
    # stubgen writes the public names (the package's own modules are typed inline).
    for name in ("class CUDAGraph", "def raw_cuda_graph", "def priority_range", "def ipc_handle",
                 "def get_sync_debug_mode", "def is_tf32_supported", "def current_blas_handle"):
        assert name in text, name


def _stub_names(text):
    """(scope, name) for every definition in a stub: ("", f) at module level, ("C", m) in class C."""
    names, scope = set(), ""
    for line in text.splitlines():
        match = re.match(r"^( *)(?:async )?(?:def|class) (\w+)|^( *)(\w+)\s*[:=]", line)
        if not match:
            continue
        indent, name = (match.group(1), match.group(2)) if match.group(2) else (match.group(3), match.group(4))
        if indent == "":
            names.add(("", name))
            scope = name if line.startswith("class ") else ""
        elif indent == "    " and scope:
            names.add((scope, name))
    return names


def test_the_stubs_name_every_function_class_and_member_of_the_extension():
    from cudakit import _cudakit

    names = _stub_names((PACKAGE / "_cudakit.pyi").read_text())
    missing = []
    for name, obj in vars(_cudakit).items():
        if name.startswith("__"):
            continue
        if ("", name) not in names:
            missing.append(name)
        if isinstance(obj, type) and not issubclass(obj, enum.Enum):
            for member, value in vars(obj).items():
                # The extension's own methods and properties (nanobind's), DLPack's dunders included.
                own = type(value).__name__ in ("nb_method", "nb_func", "property", "nb_static_property")
                if own and (not member.startswith("__") or member.startswith("__dlpack")) \
                        and (name, member) not in names:
                    missing.append(f"{name}.{member}")
    assert missing == []
