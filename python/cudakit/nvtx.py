"""torch.cuda.nvtx: ranges and marks, in cudakit's NVTX domain."""

from __future__ import annotations

import contextlib

from . import _cudakit

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def range_push(msg: str) -> None:
    _cudakit._nvtx_range_push(msg)


def range_pop() -> None:
    _cudakit._nvtx_range_pop()


def range_start(msg: str) -> int:
    return _cudakit._nvtx_range_start(msg)


def range_end(range_id: int) -> None:
    _cudakit._nvtx_range_end(range_id)


def mark(msg: str) -> None:
    _cudakit._nvtx_mark(msg)


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):
    """`with cudakit.nvtx.range("step {}", i):` — msg formatted with args as torch does."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
