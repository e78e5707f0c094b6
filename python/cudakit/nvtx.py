"""torch.cuda.nvtx: ranges and marks, in cudakit's NVTX domain."""

from __future__ import annotations

import contextlib

from . import _cudakit

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def range_push(msg: str) -> None:
    """Opens a nested NVTX range named `msg` on this thread."""
    _cudakit._nvtx_range_push(msg)


def range_pop() -> None:
    """Closes the innermost range range_push opened on this thread."""
    _cudakit._nvtx_range_pop()


def range_start(msg: str) -> int:
    """Starts a range that may end on any thread; returns its id for range_end."""
    return _cudakit._nvtx_range_start(msg)


def range_end(range_id: int) -> None:
    """Ends the range range_start returned."""
    _cudakit._nvtx_range_end(range_id)


def mark(msg: str) -> None:
    """An instantaneous NVTX marker named `msg`."""
    _cudakit._nvtx_mark(msg)


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):
    """`with cudakit.nvtx.range("step {}", i):` — msg formatted with args as torch does."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
