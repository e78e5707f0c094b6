"""The stream sanitizer (torch.cuda._sanitizer's role, over byte ranges): finds cross-stream
races, frees of memory another stream still uses, uses after free and reads of memory nothing
wrote, in everything cudakit issues (array operations, copies, collectives, graph replays, the
jiterator's and TunableOp's kernels). Work queued with raw CUDA calls is not seen.

    cudakit.sanitizer.enable("log")      # or "throw" (the default), "abort"
    ...
    for r in cudakit.sanitizer.reports():
        print(r["text"])

In mode "throw" the racy operation is refused before it is queued with SanitizerError, whose
`report` is the report as a dict. CUDAKIT_SANITIZER=1|throw|log|abort enables it at start.
"""

from __future__ import annotations

import contextlib

from . import _cudakit
from ._cudakit import SanitizerError

__all__ = ["SanitizerError", "enable", "disable", "is_enabled", "stats", "reports", "report_strings",
           "enable_cuda_sanitizer", "sanitize"]


def enable(mode: str = "throw", *, stacks: str = "fp", stack_depth: int = 24,
           uninitialized_reads: bool = True) -> None:
    """Starts the sanitizer with a fresh model; enabling again changes the mode and keeps it.

    mode: "throw" (refuse the operation with SanitizerError), "log" (log and keep each report)
    or "abort". stacks: how each operation's C++ stack is kept, "fp" (frame pointers, about
    0.1 us an operation), "unwind" (every frame, about 1.5 us) or "off".
    uninitialized_reads: report reads of allocated memory nothing tracked wrote (turn off for
    programs that write memory with raw CUDA calls)."""
    _cudakit._sanitizer_enable(mode, stacks, stack_depth, uninitialized_reads)


def disable() -> None:
    """Stops the sanitizer; its reports are kept until the next enable()."""
    _cudakit._sanitizer_disable()


def is_enabled() -> bool:
    """Whether the stream sanitizer is checking now."""
    return _cudakit._sanitizer_is_enabled()


def stats() -> dict:
    """operations, unchecked_launches, replayed_operations, hazards, streams, shadow_ranges and
    stacks of the model since enable() (zeros when disabled)."""
    return _cudakit._sanitizer_stats()


def reports() -> list[dict]:
    """Every report since enable(), in order: kind ('read_after_write', 'write_after_read',
    'write_after_write', 'free_while_in_use', 'use_after_free', 'uninitialized_read'),
    description, current and previous (the two accesses: operation, stream, byte range, mode,
    stack), overlap_begin, overlap_bytes, allocation, and text (the report as printed)."""
    return _cudakit._sanitizer_reports()


def report_strings() -> list[str]:
    """The reports as printed."""
    return [r["text"] for r in reports()]


def enable_cuda_sanitizer() -> None:
    """torch.cuda._sanitizer.enable_cuda_sanitizer: the sanitizer in mode "throw"."""
    enable("throw")


@contextlib.contextmanager
def sanitize(mode: str = "log", **options):
    """`with cudakit.sanitizer.sanitize() as found:` — the sanitizer on inside the block; `found`
    (a list) holds the block's reports once the block ends. The sanitizer must be off before
    the block (it is off after it)."""
    if is_enabled():
        raise RuntimeError("sanitize: the sanitizer is already enabled; disable() it first or read reports()")
    found: list[dict] = []
    enable(mode, **options)
    try:
        yield found
    finally:
        found.extend(reports())
        disable()
