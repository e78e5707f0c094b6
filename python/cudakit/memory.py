"""torch.cuda.memory's names over cudakit's caching allocator."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import sys
import warnings
from typing import Any, Dict, List, Optional, Tuple

from . import _cudakit
from ._cudakit import (
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    is_initialized,  # torch.cuda.memory has it in its namespace too
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
    "caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_enable", "memory_snapshot",
    "host_memory_stats", "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats",
    "reset_peak_host_memory_stats", "list_gpu_processes", "CUDAPluggableAllocator",
    "change_current_allocator", "memory_cached", "max_memory_cached", "reset_max_memory_allocated",
    "reset_max_memory_cached",
]  # and torch's private _snapshot, _record_memory_history, _dump_snapshot, _set_allocator_settings


def memory_stats(device=None) -> dict[str, int]:
    """torch.cuda.memory_stats(): flat keys, sorted as torch's OrderedDict is."""
    return dict(sorted(_cudakit.memory_stats(device).items()))


def _snapshot(device=None) -> Dict[str, Any]:
    """torch.cuda.memory._snapshot(): segments, their blocks and the recorded trace (torch's
    keys; ``device_stats``, ``device`` and ``cudakit_version`` are cudakit's additions)."""
    return json.loads(_cudakit._snapshot_json(device))


def memory_snapshot(mempool_id: Optional[Tuple[int, int]] = None, include_traces: bool = True,
                    device=None) -> List[Dict[str, Any]]:
    """torch.cuda.memory_snapshot(): the segments of the snapshot; with ``mempool_id`` (a pool's
    ``id``), only that pool's. ``include_traces`` is accepted for torch's signature: segments
    never carry the trace. ``device`` (cudakit's) picks the device, the current one by default."""
    segments = _snapshot(device)["segments"]
    if mempool_id is None:
        return segments
    wanted = [int(mempool_id[0]), int(mempool_id[1])]
    return [s for s in segments if list(s.get("segment_pool_id", ())) == wanted]


def _torch_snapshot(device=None) -> Dict[str, Any]:
    """The snapshot as torch's _snapshot() gives it: plain dicts, lists, ints and str, pool ids as
    tuples; what torch's pickle readers (pytorch.org/memory_viz, torch.cuda._memory_viz) take."""
    snap = _snapshot(device)
    for segment in snap["segments"]:
        segment["segment_pool_id"] = tuple(segment.get("segment_pool_id", (0, 0)))
        segment.setdefault("frames", [])
    snap["allocator_settings"] = dict(snap.get("allocator_settings", {}))
    return snap


def _dump_snapshot(filename: str = "dump_snapshot.pickle", device=None, format: Optional[str] = None) -> None:
    """torch.cuda.memory._dump_snapshot: writes the snapshot to ``filename``.

    ``format="pickle"`` writes torch's format (Python's pickle of the dict ``_snapshot()``
    returns), which pytorch.org/memory_viz and ``python -m torch.cuda._memory_viz`` read;
    ``format="json"`` writes cudakit's JSON, which ``cudakit memviz FILE -o memory.html`` draws.
    Left out, a name ending in ``.json`` gets JSON and any other name (torch's default
    ``dump_snapshot.pickle`` among them) the pickle.
    """
    if format is None:
        format = "json" if os.fspath(filename).endswith(".json") else "pickle"
    if format == "json":
        _cudakit._dump_snapshot(os.fspath(filename), device)
        return
    if format != "pickle":
        raise ValueError(f"_dump_snapshot: format is 'pickle' or 'json', got {format!r}")
    snap = _torch_snapshot(device)
    with open(filename, "wb") as f:
        pickle.dump(snap, f)


def _record_memory_history(enabled: Optional[str] = "all", context: Optional[str] = "all", stacks: str = "all",
                           max_entries: int = sys.maxsize, device=None, clear_history: bool = False,
                           skip_actions: Optional[List[str]] = None) -> None:
    """torch.cuda.memory._record_memory_history: records allocations, frees and segment changes
    with the frames that made them. ``stacks="python"`` records the Python frames, ``"all"`` the
    C++ frames then the Python frames, ``"cpp"`` the C++ frames (See Note [Python frames in
    memory history]). ``enabled=None`` stops recording."""
    _cudakit._record_memory_history(enabled, context, stacks, max_entries, device, clear_history,
                                    list(skip_actions or []))


def _set_allocator_settings(settings: str) -> None:
    """torch.cuda.memory._set_allocator_settings: the keys a running program may change."""
    _cudakit._set_allocator_settings(settings)


class CUDAPluggableAllocator:
    """torch.cuda.memory.CUDAPluggableAllocator: allocation functions of a shared library.

    ``alloc_fn_name`` and ``free_fn_name`` are C functions with torch's signatures,
    ``void* alloc(ssize_t size, int device, cudaStream_t stream)`` and
    ``void free(void* ptr, ssize_t size, int device, cudaStream_t stream)``. Install it for every
    allocation with ``change_current_allocator``, or give it to ``MemPool(allocator=...)`` for one
    pool. The library stays loaded for the rest of the process.
    """

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str):
        self.path = os.fspath(path_to_so_file)
        self.alloc_fn_name = alloc_fn_name
        self.free_fn_name = free_fn_name
        self._allocator = _cudakit._PluggableAllocator(self.path, alloc_fn_name, free_fn_name)

    def allocator(self) -> "CUDAPluggableAllocator":
        """torch returns its C++ allocator here; cudakit's functions take this object itself."""
        return self


def change_current_allocator(allocator: CUDAPluggableAllocator) -> None:
    """torch.cuda.memory.change_current_allocator: ``allocator`` serves every later allocation of
    every device. Raises cudakit.StateError once the current allocator has served one."""
    _cudakit._change_current_allocator(allocator._allocator)


def caching_allocator_enable(value: bool = True) -> None:
    """torch.cuda.memory.caching_allocator_enable: whether freed memory is cached for reuse.

    Differs from torch: cudakit chooses its allocator backend once, at the process's first memory
    call, so this sets CUDAKIT_NO_CUDA_MEMORY_CACHING (False: cudaMalloc/cudaFree per allocation)
    for that choice and has no effect once it is made; a change of state warns saying so."""
    value = bool(value)
    current = os.environ.get("CUDAKIT_NO_CUDA_MEMORY_CACHING", "0").strip().lower() in ("", "0", "false")
    if value == current:
        return
    os.environ["CUDAKIT_NO_CUDA_MEMORY_CACHING"] = "0" if value else "1"
    warnings.warn(f"caching_allocator_enable({value}): takes effect only if no cudakit memory function has run "
                  "in this process yet (the allocator backend is chosen once)", RuntimeWarning, stacklevel=2)


def host_memory_stats() -> Dict[str, Any]:
    """torch.cuda.host_memory_stats(): the pinned host allocator's statistics, flat keys sorted.

    torch's keys where cudakit has the quantity: ``allocated_bytes.{current,peak}``,
    ``reserved_bytes.{current,peak}``, ``allocation.{current,allocated}``, ``num_host_alloc``,
    ``num_host_free``, ``host_alloc_time.*`` and ``host_free_time.*`` (``total``, ``max``,
    ``min``, ``count``, ``avg``; microseconds). cudakit's own beside them: ``cached_*``,
    ``pending_*``, ``num_cache_hits``, ``num_events_*``, ``num_ooms``. torch's ``segment.*`` and
    ``active_*`` keys are not given."""
    return dict(sorted(_cudakit._host_memory_stats().items()))


def host_memory_stats_as_nested_dict() -> Dict[str, Any]:
    """torch.cuda.host_memory_stats_as_nested_dict(): host_memory_stats split at each '.'."""
    nested: Dict[str, Any] = {}
    for key, value in host_memory_stats().items():
        node = nested
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def reset_accumulated_host_memory_stats() -> None:
    """Zeroes the pinned host allocator's counters and durations."""
    _cudakit._reset_accumulated_host_memory_stats()


def reset_peak_host_memory_stats() -> None:
    """Sets the pinned host allocator's peaks to their current values."""
    _cudakit._reset_peak_host_memory_stats()


def list_gpu_processes(device=None) -> str:
    """torch.cuda.list_gpu_processes(): the processes on the device as text, one line each
    (``process <pid> uses <MB> MB GPU memory``), as torch writes it; NVML's facts."""
    from ._device import _index

    index = _cudakit.current_device() if device is None else _index(device)
    processes = _cudakit._list_gpu_processes(index)
    lines = [f"GPU:{index}"]
    if not processes:
        lines.append("no processes are running")
    for p in processes:
        used = p["used_memory"]
        mem = "an unknown amount of" if used is None else f"{used / 1024 / 1024:8.2f} MB"
        lines.append(f"process {p['pid']:>10d} uses {mem} GPU memory")
    return "\n".join(lines)


def _deprecated(old: str, new, note: str):
    def alias(device=None):
        warnings.warn(f"torch.cuda.{old} has been renamed to torch.cuda.{new.__name__}", FutureWarning,
                      stacklevel=2)
        return new(device)

    alias.__name__ = old
    alias.__qualname__ = old
    alias.__doc__ = f"Deprecated: {note} (torch's alias; warns FutureWarning)."
    return alias


memory_cached = _deprecated("memory_cached", memory_reserved, "memory_reserved()")
max_memory_cached = _deprecated("max_memory_cached", max_memory_reserved, "max_memory_reserved()")
reset_max_memory_allocated = _deprecated("reset_max_memory_allocated", reset_peak_memory_stats,
                                         "reset_peak_memory_stats()")
reset_max_memory_cached = _deprecated("reset_max_memory_cached", reset_peak_memory_stats,
                                      "reset_peak_memory_stats()")


class MemPool:
    """torch.cuda.MemPool: a private pool of the caching allocator.

    ``allocator``: a CUDAPluggableAllocator (or its ``allocator()``) whose functions provide the
    pool's segments; None draws from the device. ``use_on_oom`` and ``no_split`` are torch
    2.11's options."""

    def __init__(self, allocator=None, use_on_oom: bool = False, no_split: bool = False, device=None):
        if allocator is None:
            self._pool = _cudakit._MemPool(use_on_oom=use_on_oom, no_split=no_split, device=device)
            return
        if not isinstance(allocator, CUDAPluggableAllocator):
            raise TypeError(f"MemPool(allocator=...): expected a CUDAPluggableAllocator, got {type(allocator).__name__}")
        self._pool = _cudakit._MemPool(allocator.path, allocator.alloc_fn_name, allocator.free_fn_name,
                                       use_on_oom=use_on_oom, no_split=no_split, device=device)

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
