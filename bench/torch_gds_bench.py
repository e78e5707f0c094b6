#!/usr/bin/env python3
"""PyTorch's peer of gds_bench: torch.cuda.gds.GdsFile on the same kind of file (and its failure
where cuFile cannot take it), a single-threaded read into pinned memory + .cuda(), and a
safetensors checkpoint loaded with safetensors.torch.load_file where the package is installed.
One JSON line per measurement, as gds_bench prints them.

    torch_gds_bench.py [--dir /tmp] [--gib 4] [--keep]
"""
import argparse
import json
import os
import time

import torch


def emit(case, impl, nbytes, seconds, **extra):
    line = {"bench": "gds", "case": case, "impl": impl, "bytes": nbytes, "seconds": seconds,
            "gbps": nbytes / seconds / 1e9 if seconds > 0 else 0.0}
    line.update(extra)
    print(json.dumps(line), flush=True)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--gib", type=float, default=4)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nbytes = int(args.gib * (1 << 30)) // 4096 * 4096
    path = os.path.join(args.dir, "torch_gds_bench.bin")
    with open(path, "wb") as f:
        block = os.urandom(1 << 20) * 64
        left = nbytes
        while left:
            f.write(block[: min(left, len(block))])
            left -= min(left, len(block))
    device = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

    # torch.cuda.gds.GdsFile: cuFile, which needs nvidia-fs and a supported file system.
    try:
        from torch.cuda.gds import GdsFile  # noqa: PLC0415
        drop_cache(path)
        start = time.perf_counter()
        f = GdsFile(path, os.O_RDONLY)
        f.load_storage(device.untyped_storage(), 0)
        torch.cuda.synchronize()
        emit("cold_load", "torch_gds", nbytes, time.perf_counter() - start)
    except Exception as error:  # the failure is the result on machines without nvidia-fs
        emit("cold_load", "torch_gds", nbytes, 0.0, error=f"{type(error).__name__}: {error}")

    # The usual way: read into pinned memory on one thread, then copy.
    pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    for case in ("cold_load", "warm_load"):
        if case == "cold_load":
            drop_cache(path)
        start = time.perf_counter()
        with open(path, "rb", buffering=0) as f:
            view = memoryview(pinned.numpy())
            done = 0
            while done < nbytes:
                done += f.readinto(view[done:])
        device.copy_(pinned, non_blocking=True)
        torch.cuda.synchronize()
        emit(case, "torch_read_pinned_copy", nbytes, time.perf_counter() - start)

    # A safetensors checkpoint of 64 bf16 tensors.
    try:
        from safetensors.torch import load_file, save_file  # noqa: PLC0415
        checkpoint = os.path.join(args.dir, "torch_gds_bench.safetensors")
        elements = nbytes // 64 // 2
        tensors = {f"layers.{i}.weight": torch.full((elements,), i, dtype=torch.bfloat16, device="cuda")
                   for i in range(64)}
        start = time.perf_counter()
        save_file(tensors, checkpoint)
        emit("safetensors_save", "torch_safetensors", nbytes, time.perf_counter() - start)
        del tensors
        drop_cache(checkpoint)
        start = time.perf_counter()
        loaded = load_file(checkpoint, device="cuda")
        torch.cuda.synchronize()
        emit("safetensors_cold_load_total", "torch_safetensors", nbytes, time.perf_counter() - start,
             tensors=len(loaded))
        if not args.keep:
            os.remove(checkpoint)
    except ImportError as error:
        emit("safetensors_cold_load_total", "torch_safetensors", nbytes, 0.0, error=str(error))
    if not args.keep:
        os.remove(path)


if __name__ == "__main__":
    main()
