"""Devices: torch.cuda.get_device_properties and the `device` context manager."""

from __future__ import annotations

from dataclasses import dataclass, fields

from . import _cudakit


@dataclass(frozen=True)
class DeviceProperties:
    """torch.cuda.get_device_properties()'s fields (torch's names)."""

    index: int
    name: str
    major: int
    minor: int
    multi_processor_count: int
    total_memory: int
    L2_cache_size: int
    max_threads_per_multi_processor: int
    warp_size: int
    regs_per_multiprocessor: int
    shared_memory_per_multiprocessor: int
    shared_memory_per_block_optin: int
    shared_memory_per_block: int
    max_threads_per_block: int
    memory_bus_width: int
    clock_rate: int
    memory_clock_rate: int
    is_integrated: bool
    is_multi_gpu_board: bool
    uuid: str
    pci_bus_id: str
    pci_device_id: int
    pci_domain_id: int


_FIELDS = tuple(f.name for f in fields(DeviceProperties))


def get_device_properties(device=None) -> DeviceProperties:
    """torch.cuda.get_device_properties: the device's properties under torch's field names."""
    raw = _cudakit._get_device_properties(device)
    return DeviceProperties(**{name: raw[name] for name in _FIELDS})


class device:
    """`with cudakit.device(1):` makes a device current and restores the previous one on exit."""

    def __init__(self, device):
        self.index = -1 if device is None else _index(device)
        self.previous = -1

    def __enter__(self):
        if self.index >= 0:
            self.previous = _cudakit.current_device()
            if self.previous != self.index:
                _cudakit.set_device(self.index)
        return self

    def __exit__(self, *exc):
        if self.index >= 0 and self.previous != self.index:
            _cudakit.set_device(self.previous)
        return False


def _index(device) -> int:
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        if device == "cuda":
            return _cudakit.current_device()
        if device.startswith("cuda:"):
            return int(device[5:])
    index = getattr(device, "index", None)
    if getattr(device, "type", None) == "cuda":
        return _cudakit.current_device() if index is None else index
    raise ValueError(f"device: expected an int, 'cuda', 'cuda:N' or a CUDA torch.device, got {device!r}")
