"""torch.cuda.graphs: CUDAGraph, the `graph` context manager, pool handles and whether the
current stream captures (also at cudakit's top level). make_graphed_callables is autograd's and
is not here (cudakit._names.EXCLUDED says why)."""

from __future__ import annotations

from ._cudakit import CUDAGraph, graph_pool_handle, is_current_stream_capturing
from ._graphs import graph

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing"]
