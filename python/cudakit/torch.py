"""cudakit's caching allocator inside PyTorch.

`use_cudakit_allocator()` hands torch's CUDA allocations to cudakit through
torch.cuda.memory.CUDAPluggableAllocator: torch dlopens this package's extension and calls its C
functions `cudakit_torch_malloc` / `cudakit_torch_free`. Do it before torch allocates any CUDA
memory (torch refuses to change allocators after that). torch.cuda.empty_cache(),
torch.cuda.set_per_process_memory_fraction() and Tensor.record_stream() then act on cudakit's
allocator, a CUDA graph's memory comes from a private pool of cudakit's as under torch's own
allocator (torch.cuda.graph, pool=, make_graphed_callables), and a failed allocation raises RuntimeError("CUDA out of memory. Tried to allocate
..."), as under torch's own. From then on cudakit's statistics,
snapshots and viewer describe torch's memory: `cudakit.memory_stats()`,
`cudakit.memory._snapshot()`, `cudakit.memory._dump_snapshot("snap.json")` then
`cudakit memviz snap.json -o memory.html`; torch's own torch.cuda.memory_stats() is empty under
any pluggable allocator.

From the environment, before the program starts (no change to its code):

    export CUDAKIT_TORCH_ALLOCATOR=1
    export PYTHONPATH="$(python -m cudakit.torch --startup-dir)${PYTHONPATH:+:$PYTHONPATH}"
    python train.py

The folder holds a sitecustomize.py that installs the allocator at interpreter start when
CUDAKIT_TORCH_ALLOCATOR=1 (it imports torch then; it replaces any other sitecustomize on the path).
"""

from __future__ import annotations

import os
import sys

from . import _cudakit

MALLOC_SYMBOL = "cudakit_torch_malloc"
FREE_SYMBOL = "cudakit_torch_free"

_installed = None


def allocator_library() -> str:
    """The shared object torch dlopens: this package's extension, which exports both functions."""
    return _cudakit.__file__


def use_cudakit_allocator():
    """Makes cudakit's caching allocator torch's CUDA allocator; returns the
    CUDAPluggableAllocator. Calling it again returns the one installed."""
    global _installed
    if _installed is not None:
        return _installed
    from torch.cuda.memory import CUDAPluggableAllocator, change_current_allocator

    allocator = CUDAPluggableAllocator(allocator_library(), MALLOC_SYMBOL, FREE_SYMBOL)
    # torch.cuda.empty_cache(), set_per_process_memory_fraction(), Tensor.record_stream() and the
    # graphs' private pools reach cudakit's allocator through these; a torch without one of the
    # setters keeps its no-op.
    native = allocator.allocator()
    for setter, address in _cudakit._torch_allocator_hooks().items():
        if hasattr(native, setter):
            getattr(native, setter)(address)
    change_current_allocator(allocator)
    _installed = allocator
    return allocator


# Note [Exchange with torch in a microsecond]
# torch.from_dlpack(x) spends most of its time in torch.cuda.current_stream(), which it asks for
# the stream argument, and torch.Tensor.__dlpack__ is Python too; underneath are
# torch._C._from_dlpack and _to_dlpack and torch._C._cuda_getCurrentRawStream, a small fraction of
# that each (the figures: notes/python.md). to_torch and from_torch use those
# and keep the protocol's ordering themselves, in C++ (_capsule_for_torch,
# _array_from_torch_capsule): torch's current stream is ordered after cudakit's before torch gets
# the capsule, cudakit's after torch's before cudakit takes torch's, by an event where they are two
# streams. Neither synchronizes the host.
_from_dlpack = _to_dlpack = _raw_stream = None


def _bind_torch():
    global _from_dlpack, _to_dlpack, _raw_stream
    import torch

    _from_dlpack, _to_dlpack = torch._C._from_dlpack, torch._C._to_dlpack
    _raw_stream = torch._C._cuda_getCurrentRawStream


def to_torch(array):
    """A torch.Tensor over `array`'s memory, as torch.from_dlpack(array) gives, in a fraction of
    its time (Note [Exchange with torch in a microsecond])."""
    if _from_dlpack is None:
        _bind_torch()
    return _from_dlpack(_cudakit._capsule_for_torch(array, _raw_stream))


def from_torch(tensor):
    """A cudakit Array over `tensor`'s memory, as cudakit.from_dlpack(tensor) gives, in a fraction
    of its time (Note [Exchange with torch in a microsecond])."""
    if _to_dlpack is None:
        _bind_torch()
    return _cudakit._array_from_torch_capsule(_to_dlpack(tensor), _raw_stream)


def is_installed() -> bool:
    """Whether use_cudakit_allocator() has made cudakit torch's allocator in this process."""
    return _installed is not None


def startup_dir() -> str:
    """The folder whose sitecustomize.py installs the allocator when CUDAKIT_TORCH_ALLOCATOR=1."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_startup")


if __name__ == "__main__":
    if sys.argv[1:] == ["--startup-dir"]:
        print(startup_dir())
    else:
        print(__doc__)
