"""Every public name of the module says what it does (a docstring beyond nanobind's signature
line), the package is marked typed (PEP 561) and the extension has its stubs, which name the
functions the package uses."""

import inspect
import pathlib
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
