"""cudakit from Python: torch.cuda's runtime without libtorch.

The names follow torch.cuda: devices, streams and events, the caching allocator (memory_stats,
memory_summary, snapshots, MemPool, use_mem_pool), Philox generators, CUDA graphs, NVTX ranges,
the profiler, the jiterator and TunableOp; the stream sanitizer (cudakit.sanitizer), NCCL
collectives (cudakit.nccl, cudakit.comm), GPUDirect Storage and safetensors (cudakit.gds) and
green contexts (cudakit.green_contexts); a small device array (`Array`) that trades memory with
PyTorch, CuPy, JAX and NumPy through DLPack; and `cudakit.torch.use_cudakit_allocator()`, which
puts cudakit's caching allocator under PyTorch.

The seed's graph-annotation workflow runs as written, with torch's kernels captured into a
cudakit graph (cudakit.graph(g, enable_annotations=True), cudakit.graph_annotations.mark_kernels,
cudakit.profiler.profile, get_kernel_annotations; docs/python-graph-annotations.md).
cudakit._names lists torch.cuda's names cudakit leaves out, each with the reason.
"""

from __future__ import annotations

from . import _cudakit
from ._cudakit import (
    Array,
    CudaError,
    CUDAGraph,
    Event,
    Generator,
    GreenContext,
    NcclError,
    NvrtcError,
    OutOfMemoryError,
    Profiler,
    SanitizerError,
    StateError,
    Stream,
    allclose,
    arange,
    can_device_access_peer,
    current_device,
    current_stream,
    default_stream,
    device_count,
    empty,
    equal,
    full,
    get_device_capability,
    get_device_name,
    get_rng_state,
    get_rng_state_all,
    graph_pool_handle,
    initial_seed,
    is_available,
    is_current_stream_capturing,
    manual_seed,
    manual_seed_all,
    ones,
    rand,
    randint,
    randn,
    randperm,
    seed,
    seed_all,
    set_device,
    set_rng_state,
    set_rng_state_all,
    set_stream,
    synchronize,
    zeros,
)
from ._device import DeviceProperties, get_device_properties, device
from ._dlpack import from_dlpack
from .matmul import matmul, linear, route_torch  # cudakit.matmul: the function (the module stays importable)
from ._graphs import graph
from ._streams import ExternalStream, StreamContext, stream
from . import memory, nvtx, jiterator, tunable, profiler
from . import sanitizer, nccl, comm, gds, green_contexts
from . import graph_annotations, graphs, streams, random
from .memory import *  # noqa: F403 (torch.cuda re-exports torch.cuda.memory the same way)
from ._runtime import *  # noqa: F403
from .gds import GdsFile, is_gds_available
from .graph_annotations import clear_kernel_annotations, get_kernel_annotations, mark_kernels


def __getattr__(name: str):
    # torch.cuda.default_generators, made when first read (a generator per device).
    if name == "default_generators":
        from ._runtime import _default_generators

        return _default_generators()
    raise AttributeError(f"module 'cudakit' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")] + ["default_generators"]
