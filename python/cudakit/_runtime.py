"""torch.cuda's runtime names beyond devices and streams: initialization, capabilities, the
synchronization debug mode, NVML telemetry, IPC collection, error helpers and the facts torch
exposes as module attributes."""

from __future__ import annotations

import types
from typing import Any, Optional, Tuple

from . import _cudakit
from ._cudakit import (
    CudaError,
    Stream,
    clock_rate,
    current_blas_handle,
    device_memory_used,
    get_arch_list,
    get_gencode_flags,
    get_sync_debug_mode,
    init,
    is_bf16_supported,
    is_initialized,
    is_tf32_supported,
    memory_usage,
    power_draw,
    set_sync_debug_mode,
    temperature,
    utilization,
)
from ._device import device

__all__ = [
    "AcceleratorError", "DeferredCudaCallError", "check_error", "clock_rate", "cudaStatus", "cudart",
    "current_blas_handle", "device_memory_used", "device_of", "get_arch_list",
    "get_gencode_flags", "get_stream_from_external", "get_sync_debug_mode", "has_half", "has_magma", "init",
    "ipc_collect", "is_bf16_supported", "is_initialized", "is_tf32_supported", "memory_usage", "power_draw",
    "set_sync_debug_mode", "temperature", "utilization",
]

# torch.cuda.AcceleratorError: the error of a failed CUDA call; cudakit's is CudaError.
AcceleratorError = CudaError

#: torch.cuda.has_half: every CUDA device cudakit supports has float16.
has_half: bool = True
#: torch.cuda.has_magma: whether MAGMA (linear algebra) is built in; cudakit has none.
has_magma: bool = False


class DeferredCudaCallError(Exception):
    """torch.cuda.DeferredCudaCallError: a call queued before initialization failed when it ran.
    cudakit initializes on the first call that needs it and queues nothing, so it never raises
    this; the type exists for code that catches it."""


class cudaStatus:
    """torch.cuda.cudaStatus: the two cudaError_t values torch names."""

    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


def check_error(res: int) -> None:
    """torch.cuda.check_error: raises CudaError unless ``res`` (a cudaError_t) is success."""
    if int(res) != cudaStatus.SUCCESS:
        raise CudaError(f"CUDA error {int(res)}")


def cudart() -> Any:
    """torch.cuda.cudart(): the CUDA runtime calls torch exposes to Python, as a namespace:
    ``cudaProfilerStart()`` and ``cudaProfilerStop()`` (each returns 0, raising CudaError on
    failure) and ``cudaError.success``. torch's module binds a few more runtime calls (host
    registration), which cudakit leaves to its own APIs."""

    def start() -> int:
        _cudakit._cuda_profiler_start()
        return cudaStatus.SUCCESS

    def stop() -> int:
        _cudakit._cuda_profiler_stop()
        return cudaStatus.SUCCESS

    return types.SimpleNamespace(cudaProfilerStart=start, cudaProfilerStop=stop,
                                 cudaError=types.SimpleNamespace(success=cudaStatus.SUCCESS))


class device_of(device):
    """torch.cuda.device_of: ``with device_of(x):`` makes the device of ``x`` current (an
    Array, a torch tensor, anything with ``get_device()`` or ``device``); an object on the host
    leaves the device as it is."""

    def __init__(self, obj: Any):
        super().__init__(_device_index_of(obj))


def _device_index_of(obj: Any) -> Optional[int]:
    get_device = getattr(obj, "get_device", None)
    if callable(get_device):
        index = get_device()
        return index if isinstance(index, int) and index >= 0 else None
    where = getattr(obj, "device", None)
    if isinstance(where, str):
        return int(where[5:]) if where.startswith("cuda:") else (_cudakit.current_device() if where == "cuda" else None)
    if getattr(where, "type", None) == "cuda":
        return where.index if where.index is not None else _cudakit.current_device()
    return None


def ipc_collect() -> None:
    """torch.cuda.ipc_collect(): releases the exported IPC blocks no process holds any more."""
    _cudakit._ipc_collect()


def get_stream_from_external(data_ptr: int, device: Any = None) -> Stream:
    """torch.cuda.get_stream_from_external: a Stream for a cudaStream_t made elsewhere (cudakit
    does not own it; the other library must keep it alive)."""
    from ._streams import ExternalStream

    return ExternalStream(data_ptr, device)


def _default_generators() -> Tuple[Any, ...]:
    """torch.cuda.default_generators (a module attribute, read through cudakit's module
    __getattr__): the default generator of each device, as references (seeding one seeds the
    device's)."""
    return _cudakit._default_generators()
