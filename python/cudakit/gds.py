"""GPUDirect Storage (torch.cuda.gds) and safetensors checkpoints (safetensors' names).

GdsFile loads into and saves from cudakit.Arrays on the GPU or the host by the fastest path the
machine has: cuFile with nvidia-fs (real GDS: storage DMAs into GPU memory), else cudakit's
parallel O_DIRECT engine through pinned buffers, or the page cache where O_DIRECT is refused.
Every call returns an IoReport naming the path it took (report.path).

    f = cudakit.gds.GdsFile("weights.bin", "w")
    f.save(array)                                   # -> IoReport
    cudakit.gds.save_file({"w": w, "b": b}, "model.safetensors")
    tensors = cudakit.gds.load_file("model.safetensors", device="cuda:0")

Keyword options are CUDAKIT_GDS_* settings by lower-case name: io_threads=4, chunk_bytes="8M",
o_direct=False, cufile="never" | "auto" | "required" (see notes/gds.md).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from . import _cudakit
from ._cudakit import CuFileError, GdsFile, IoError, IoReport, IoTicket

__all__ = ["CuFileError", "GdsFile", "IoError", "IoReport", "IoTicket", "SafetensorsLoad",
           "gds_register_buffer", "gds_deregister_buffer", "is_gds_available", "support",
           "load_file", "load_safetensors", "save_file", "read_safetensors_header"]

# torch.cuda.gds.GdsFile's names for a storage's load and save.
GdsFile.load_storage = GdsFile.load
GdsFile.save_storage = GdsFile.save


def support() -> dict:
    """Whether cuFile can be used here ('cufile': libcufile loads and a GPU is present) and
    whether nvidia-fs is loaded ('nvidia_fs'; without it there is no DMA between storage and
    the GPU and GdsFile uses cudakit's engine), each with its 'detail'; and nvidia_fs_version."""
    return _cudakit._gds_support()


def is_gds_available() -> bool:
    """Whether real GPUDirect Storage (cuFile over nvidia-fs) can serve a GdsFile on this
    machine; when False, GdsFile still works, through cudakit's O_DIRECT engine."""
    s = support()
    return s["cufile"]["supported"] and s["nvidia_fs"]["supported"]


def gds_register_buffer(file: GdsFile, array) -> bool:
    """cuFileBufRegister for an array cuFile transfers of `file` use again and again."""
    return file.register_buffer(array)


def gds_deregister_buffer(file: GdsFile, array) -> None:
    """Undoes gds_register_buffer for `array` (torch.cuda.gds.gds_deregister_buffer)."""
    file.deregister_buffer(array)


class SafetensorsLoad(NamedTuple):
    tensors: dict
    metadata: dict
    report: IoReport  # the tensors' batched load (not the header's read)
    raw: dict = {}  # with raw=True: {name: header entry} of the tensors loaded as their bytes


def load_safetensors(filename: str | os.PathLike, device="cpu", *, dtype=None, dtypes: dict | None = None,
                     raw: bool = False, map_cached: bool = True, stream=None, **options) -> SafetensorsLoad:
    """Every tensor of a safetensors file on `device` ("cpu", "cuda", "cuda:N"), each read
    straight into its array by one batched GdsFile load; with the file's metadata and the
    load's IoReport. A malformed file raises ValueError naming what is wrong and where.

    Every dtype safetensors writes loads (F8_E4M3 as float8_e4m3fn, F8_E8M0 as float8_e8m0fnu,
    C64 as complex64, F4 as float4_e2m1fn_x2 with the last dimension halved, ...). A path that
    ends in ".index.json" (model.safetensors.index.json) loads its shards as one checkpoint.
    dtype: float16/bfloat16/float32/float64 tensors are converted to it (FP8, integer, bool and
    complex ones keep theirs); dtypes: {name: dtype} converts single tensors. raw: tensors of a
    dtype cudakit lacks (F6_*, the FNUZ FP8 formats) load as 1-D uint8 arrays of their bytes,
    listed in .raw, instead of refusing the file. map_cached: on the host, a file whose tensor bytes
    the page cache holds whole is mapped (copy-on-write) instead of copied, as safetensors' own
    loader does; the report's path is then "mapped". The file must not be truncated while such
    arrays live (cudakit's saves replace it instead)."""
    path = os.fspath(filename)
    tensors, metadata, report, raw_entries = _cudakit._gds_load_safetensors(
        path, device, stream, dtype, dtypes, raw, path.endswith(".index.json"), map_cached, **options)
    return SafetensorsLoad(tensors, metadata, report, raw_entries)


def load_file(filename: str | os.PathLike, device="cpu", **options) -> dict:
    """safetensors.load_file: {name: Array} on `device` (options as load_safetensors)."""
    return load_safetensors(filename, device, **options).tensors


def save_file(tensors: dict, filename: str | os.PathLike, metadata: dict | None = None, *,
              atomic: bool = False, fsync: bool = False, stream=None, **options) -> IoReport:
    """safetensors.save_file: `tensors` ({name: Array}, contiguous, on any device) written in
    name order, with `metadata` ({str: str}). atomic: a temporary file, synced, renamed over
    `filename`, so that a failed save leaves the old file as it was. Returns the IoReport."""
    return _cudakit._gds_save_safetensors(tensors, os.fspath(filename), metadata or {}, atomic, fsync, stream,
                                          **options)


def read_safetensors_header(filename: str | os.PathLike) -> dict:
    """The header of a safetensors file, without its data: header_bytes, data_offset,
    data_bytes, tensors (name, dtype, shape, data_offsets, ...) and metadata."""
    with open(filename, "rb") as f:
        first = f.read(8)
        length = int.from_bytes(first, "little") if len(first) == 8 else 0
        # The C++ parser refuses lengths past safetensors' limit before anything is read.
        head = first + f.read(min(length, 100_000_000))
        size = os.fstat(f.fileno()).st_size
    return _cudakit._gds_parse_safetensors_header(head, size)
