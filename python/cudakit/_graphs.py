"""`with cudakit.graph(g):` — torch.cuda.graph: capture the block into a CUDAGraph.

Note [Torch's kernels in a cudakit capture]
A capture records the work queued on the capturing stream. When torch is imported and has CUDA,
`graph` makes that stream torch's current stream too (a torch.cuda.ExternalStream of its
handle), so torch operations inside the block land in cudakit's graph, and mark_kernels regions
annotate torch's kernels as they do cudakit's. torch's caching allocator must not hand memory
captured into the graph back to eager code, so, as torch.cuda.graph does with its private pool,
torch's allocations inside the block go to a torch.cuda.MemPool that the graph object keeps (one
per cudakit pool id, so captures sharing `pool=` share it). Under cudakit's allocator in torch
(cudakit.torch.use_cudakit_allocator) torch's allocations are cudakit's, which the capture already
routes to the graph's private pool. torch's random operations are not supported in such a
capture: torch only lets its generators run in a capture its own CUDAGraph began.
"""

from __future__ import annotations

import gc
import sys
import weakref
from typing import Any, Optional, Tuple, Union

from . import _cudakit
from ._streams import StreamContext

_PoolArg = Union[None, Tuple[int, int], Any]

# cudakit pool id -> the torch MemPool of the captures into it (See Note [Torch's kernels in a
# cudakit capture]); each graph holds its pool, so a pool lives while a graph using it does.
_torch_pools: "weakref.WeakValueDictionary[Tuple[int, int], Any]" = weakref.WeakValueDictionary()


def _torch_with_cuda():
    """torch, when the program imported it and it has a usable CUDA device; else None."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "cuda"):
        return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:  # a torch without CUDA support, or a broken one: nothing to bridge
        return None


def _pool_key(pool: _PoolArg) -> Optional[Tuple[int, int]]:
    """The cudakit pool id `pool=` names (None: a new private pool)."""
    if pool is None:
        return None
    if hasattr(pool, "id") and not isinstance(pool, tuple):  # a cudakit MemPool
        pool = pool.id
    first, second = pool
    return (int(first), int(second))


class _TorchBridge:
    """torch's side of a capture: its current stream and its allocations (See Note [Torch's
    kernels in a cudakit capture])."""

    def __init__(self, torch, stream: _cudakit.Stream):
        self.torch = torch
        self.external = torch.cuda.ExternalStream(stream.cuda_stream, device=stream.device_index)
        self.stream_context = None
        self.pool_context = None

    def enter_stream(self) -> None:
        self.stream_context = self.torch.cuda.stream(self.external)
        self.stream_context.__enter__()

    def enter_pool(self, cuda_graph: _cudakit.CUDAGraph, pool: _PoolArg) -> None:
        """Routes torch's allocations to the pool of captures into `pool` (a new one for a
        private pool); before capture_begin, so that torch makes no call inside the capture."""
        torch = self.torch
        if torch.cuda.get_allocator_backend() != "native":
            return  # cudakit's allocator (pluggable) or cudaMallocAsync: nothing of torch's to route
        key = _pool_key(pool)
        torch_pool = _torch_pools.get(key) if key is not None else None
        if torch_pool is None:
            torch_pool = torch.cuda.MemPool()
        cuda_graph._torch_mem_pool = torch_pool
        self.pool_context = torch.cuda.use_mem_pool(torch_pool)
        self.pool_context.__enter__()

    def register_pool(self, cuda_graph: _cudakit.CUDAGraph) -> None:
        """After capture_begin: later captures sharing this graph's pool find the torch pool."""
        torch_pool = getattr(cuda_graph, "_torch_mem_pool", None)
        if torch_pool is None:
            return
        try:
            _torch_pools[tuple(cuda_graph.pool())] = torch_pool
        except TypeError:  # a MemPool that takes no weak reference: the graph alone holds it
            pass

    def exit(self, exc_type, exc, tb) -> None:
        try:
            if self.pool_context is not None:
                self.pool_context.__exit__(exc_type, exc, tb)
        finally:
            self.pool_context = None
            if self.stream_context is not None:
                self.stream_context.__exit__(exc_type, exc, tb)
            self.stream_context = None


class graph:
    """``with cudakit.graph(g):`` captures the work queued inside the block into ``cuda_graph``.

    The capture runs on a side stream (``stream``, else one shared by all captures: a capture
    cannot use the legacy default stream), made current for cudakit and, when torch is imported,
    for torch (See Note [Torch's kernels in a cudakit capture]). As torch does, the device is
    synchronized and the cache emptied first, so that the capture starts from a quiet device.

    Args:
        cuda_graph: the CUDAGraph to capture into (empty, or reset).
        pool: a pool id (``graph_pool_handle()``, ``other_graph.pool()``) or a MemPool to share memory with other captures; None for a private pool.
        stream: the capturing stream.
        capture_error_mode: ``"global"``, ``"thread_local"`` or ``"relaxed"`` (cudaStreamCaptureMode).
        enable_annotations: record ``graph_annotations.mark_kernels`` regions for the captured kernels (torch.cuda.graph's argument of the same name).
    """

    default_capture_stream: Optional[_cudakit.Stream] = None

    def __init__(self, cuda_graph: _cudakit.CUDAGraph, pool: _PoolArg = None,
                 stream: Optional[_cudakit.Stream] = None, capture_error_mode: str = "global",
                 enable_annotations: bool = False):
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = _cudakit.Stream()
            stream = graph.default_capture_stream
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream
        self.capture_error_mode = capture_error_mode
        self.enable_annotations = bool(enable_annotations)
        self._context = StreamContext(stream)
        self._torch: Optional[_TorchBridge] = None

    def __enter__(self) -> "graph":
        _cudakit.synchronize()
        gc.collect()
        _cudakit.empty_cache()
        torch = _torch_with_cuda()
        self._torch = _TorchBridge(torch, self.capture_stream) if torch is not None else None
        self._context.__enter__()
        try:
            if self._torch is not None:
                self._torch.enter_stream()
                self._torch.enter_pool(self.cuda_graph, self.pool)
            self.cuda_graph.capture_begin(pool=self.pool, capture_error_mode=self.capture_error_mode,
                                          enable_annotations=self.enable_annotations)
            if self._torch is not None:
                self._torch.register_pool(self.cuda_graph)
        except BaseException:
            self._leave(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph._capture_abort()
        finally:
            self._leave(exc_type, exc, tb)
        return False

    def _leave(self, exc_type, exc, tb) -> None:
        try:
            if self._torch is not None:
                self._torch.exit(exc_type, exc, tb)
        finally:
            self._torch = None
            self._context.__exit__(exc_type, exc, tb)
