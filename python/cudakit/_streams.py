"""Streams: `with cudakit.stream(s):`, ExternalStream."""

from __future__ import annotations

from . import _cudakit
from ._cudakit import Stream


def ExternalStream(stream_ptr: int, device=None) -> Stream:
    """A Stream for a cudaStream_t another library made (torch.cuda.ExternalStream). cudakit does
    not own it: the other library must keep it alive while cudakit uses it."""
    if device is None:
        return Stream._wrap_any(stream_ptr)
    from ._device import _index

    return Stream._wrap(stream_ptr, _index(device))


class StreamContext:
    """torch.cuda.StreamContext: the stream (and its device) current inside the block; None does
    nothing."""

    def __init__(self, stream: Stream | None):
        self.stream = stream
        self._scopes = []  # one per __enter__, so that the same context nests

    def __enter__(self):
        scope = None
        if self.stream is not None:
            scope = _cudakit._StreamScope()
            scope.enter(self.stream)
        self._scopes.append(scope)
        return self.stream

    def __exit__(self, *exc):
        scope = self._scopes.pop()
        if scope is not None:
            scope.exit()
        return False


def stream(stream: Stream | None) -> StreamContext:
    """`with cudakit.stream(s):` — torch.cuda.stream."""
    return StreamContext(stream)
