"""Every torch.cuda name has a cudakit counterpart under the same path, or stands in
cudakit._names.EXCLUDED with the reason. The host test reads torch's names from the list kept in
data/torch_cuda_names.txt; the GPU test from the installed torch."""

import inspect
import pathlib
import types

import pytest

import cudakit
from cudakit import _names

from conftest import requires_gpu

DATA = pathlib.Path(__file__).parent / "data" / "torch_cuda_names.txt"

# torch.cuda's submodules whose public names count (as the checked-in list counts them).
SUBMODULES = ("memory", "graphs", "streams", "random", "nvtx", "profiler", "jiterator", "tunable", "nccl", "comm",
              "gds", "green_contexts", "graph_annotations")


def listed_names():
    names = []
    for line in DATA.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def missing(paths):
    """The paths with neither a cudakit counterpart nor an exclusion, each with what is missing."""
    out = []
    for path in paths:
        if _names.excluded(path) is not None:
            continue
        try:
            _names.resolve(path)
        except AttributeError as e:
            out.append(f"torch.cuda.{path}: {e}")
    return out


def test_the_list_of_torch_names_is_read_whole():
    names = listed_names()
    assert len(names) == len(set(names)), "a name is listed twice"
    # The list holds each kind the tests count: top-level names, submodules' and class members.
    assert "mark_kernels" in names and "memory.MemPool" in names and "Stream.priority_range" in names


def test_every_listed_torch_cuda_name_exists_in_cudakit_or_is_excluded_with_a_reason():
    assert missing(listed_names()) == []


def test_every_exclusion_names_a_listed_torch_name_and_gives_a_reason():
    names = set(listed_names())
    for path, reason in _names.EXCLUDED.items():
        assert reason and len(reason) > 10, path
        # An exclusion of a name torch does not have would hide nothing: keep the list exact.
        assert path in names or path.startswith("nccl.") or path == "current_solver_handle", path
        # An excluded name must not exist either: it would contradict its reason.
        with pytest.raises(AttributeError):
            _names.resolve(path)


def test_resolve_names_what_is_missing():
    with pytest.raises(AttributeError, match=r"torch.cuda.memory.no_such_name"):
        _names.resolve("memory.no_such_name")


def _torch_public_names(torch):
    """torch.cuda's public names as the installed torch has them: __all__ and dir() of
    torch.cuda and of each counted submodule, less what torch merely imports (other modules, typing
    helpers), and the public members of its classes that issue 38 counts."""
    paths = set()

    def public(module, prefix):
        names = set(getattr(module, "__all__", ()))
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType):
                if obj.__name__.startswith("torch.cuda."):
                    names.add(name)
                continue
            owner = getattr(obj, "__module__", None) or ""
            if owner.startswith("torch.cuda") or (prefix == "" and owner.startswith("torch._C") and inspect.isclass(obj)):
                names.add(name)
        return {prefix + n for n in names}

    paths |= public(torch.cuda, "")
    for sub in SUBMODULES:
        module = getattr(torch.cuda, sub, None)
        if isinstance(module, types.ModuleType):
            paths |= public(module, sub + ".")
    # The members issue 38 names, where this torch has them.
    for path in listed_names():
        head, _, member = path.rpartition(".")
        if member and head and head[0].isupper():
            owner = torch.cuda
            try:
                for part in head.split("."):
                    owner = getattr(owner, part)
                getattr(owner, member)
            except AttributeError:
                continue
            paths.add(path)
    return paths


@requires_gpu
def test_every_torch_cuda_name_of_the_installed_torch_exists_in_cudakit_or_is_excluded():
    torch = pytest.importorskip("torch")
    paths = _torch_public_names(torch)
    print(f"torch {torch.__version__}: {len(paths)} public torch.cuda names counted")
    assert missing(sorted(paths)) == []


def test_top_level_carries_the_seeds_names():
    for name in ("is_available", "mark_kernels", "get_kernel_annotations", "clear_kernel_annotations", "graph",
                 "graph_annotations"):
        assert hasattr(cudakit, name), name
    assert "enable_annotations" in inspect.signature(cudakit.graph).parameters
