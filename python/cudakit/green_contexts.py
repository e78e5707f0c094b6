"""torch.cuda.green_contexts: GreenContext, a partition of a GPU's SMs. Work queued on its
streams runs on its SMs only; the streams are cudakit.Streams (`with cudakit.stream(s):`).

    ctx = cudakit.green_contexts.GreenContext.create(16)     # at least 16 SMs (ctx.sm_count)
    with cudakit.stream(ctx.stream()):                       # or: with ctx:
        y = f(x)
    decode, prefill = GreenContext.split([16, 112])          # disjoint SMs
"""

from __future__ import annotations

from . import _cudakit
from ._cudakit import GreenContext

__all__ = ["GreenContext", "sm_count_of"]

# torch's name: `ctx.Stream()` is a new stream of the context (owned by it; it keeps it alive).
GreenContext.Stream = GreenContext.create_stream


def sm_count_of(stream) -> int:
    """The SMs work on `stream` can use: its green context's count, or the whole device's."""
    return _cudakit._sm_count_of(stream)
