"""torch.cuda.memory's names over cudakit's caching allocator."""

from __future__ import annotations

import contextlib
import json
import sys

from . import _cudakit
from ._cudakit import (
    _dump_snapshot,
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)

__all__ = [
    "MemPool", "use_mem_pool", "memory_stats", "memory_stats_as_nested_dict", "memory_summary",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache", "mem_get_info",
    "set_per_process_memory_fraction", "get_per_process_memory_fraction", "get_allocator_backend",
    "caching_allocator_alloc", "caching_allocator_delete", "memory_snapshot",
]  # and torch's private _snapshot, _record_memory_history, _dump_snapshot, _set_allocator_settings


def memory_stats(device=None) -> dict[str, int]:
    """torch.cuda.memory_stats(): flat keys, sorted as torch's OrderedDict is."""
    return dict(sorted(_cudakit.memory_stats(device).items()))


def _snapshot(device=None) -> dict:
    """torch.cuda.memory._snapshot(): segments, their blocks and the recorded trace."""
    return json.loads(_cudakit._snapshot_json(device))


def memory_snapshot(device=None) -> list:
    """torch.cuda.memory_snapshot(): the segments of the snapshot."""
    return _snapshot(device)["segments"]


def _record_memory_history(enabled: str | None = "all", context: str | None = "all", stacks: str = "all",
                           max_entries: int = sys.maxsize, device=None, clear_history: bool = False,
                           skip_actions: list[str] | None = None) -> None:
    """torch.cuda.memory._record_memory_history; stacks are C++ frames (Python frames are not
    recorded)."""
    _cudakit._record_memory_history(enabled, context, stacks, max_entries, device, clear_history,
                                    list(skip_actions or []))


def _set_allocator_settings(settings: str) -> None:
    """torch.cuda.memory._set_allocator_settings: the keys a running program may change."""
    _cudakit._set_allocator_settings(settings)


class MemPool:
    """torch.cuda.MemPool: a private pool of the caching allocator. `allocator` (a custom one)
    is not supported; use_on_oom and no_split are torch 2.11's options."""

    def __init__(self, allocator=None, use_on_oom: bool = False, no_split: bool = False, device=None):
        if allocator is not None:
            raise NotImplementedError("MemPool(allocator=...): custom allocators are not supported")
        self._pool = _cudakit._MemPool(use_on_oom=use_on_oom, no_split=no_split, device=device)

    @property
    def id(self) -> tuple[int, int]:
        return self._pool.id

    @property
    def device(self) -> int:
        return self._pool.device_index

    def use_count(self) -> int:
        return self._pool.use_count()

    def reserved_bytes(self) -> int:
        return self._pool.reserved_bytes()

    def allocated_bytes(self) -> int:
        return self._pool.allocated_bytes()

    def snapshot(self) -> list:
        """The pool's segments (torch's MemPool.snapshot())."""
        return json.loads(self._pool._snapshot_json())["segments"]


@contextlib.contextmanager
def use_mem_pool(pool: MemPool, device=None):
    """`with cudakit.use_mem_pool(pool):` — this thread's allocations on the pool's device come
    from `pool` inside the block."""
    if device is not None:
        from ._device import _index

        if _index(device) != pool.device:
            raise ValueError(f"use_mem_pool: the pool is on cuda:{pool.device}, device {device!r} given")
    scope = _cudakit._MemPoolScope()
    scope.enter(pool._pool)
    try:
        yield
    finally:
        scope.exit()
