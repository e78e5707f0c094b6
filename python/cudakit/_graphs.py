"""`with cudakit.graph(g):` — torch.cuda.graph: capture the block into a CUDAGraph."""

from __future__ import annotations

import gc

from . import _cudakit
from ._streams import StreamContext


class graph:
    """Captures the work queued inside the block into `cuda_graph`, on a side stream (capture
    cannot use the legacy default stream). As torch does, the device is synchronized and the cache
    emptied first, so that the capture starts from a quiet device."""

    default_capture_stream: _cudakit.Stream | None = None

    def __init__(self, cuda_graph: _cudakit.CUDAGraph, pool=None, stream: _cudakit.Stream | None = None,
                 capture_error_mode: str = "global"):
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = _cudakit.Stream()
            stream = graph.default_capture_stream
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream
        self.capture_error_mode = capture_error_mode
        self._context = StreamContext(stream)

    def __enter__(self):
        _cudakit.synchronize()
        gc.collect()
        _cudakit.empty_cache()
        self._context.__enter__()
        try:
            self.cuda_graph.capture_begin(pool=self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._context.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph._capture_abort()
        finally:
            self._context.__exit__(exc_type, exc, tb)
        return False
