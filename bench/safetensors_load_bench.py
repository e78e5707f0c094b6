#!/usr/bin/env python3
"""safetensors checkpoints loaded onto the GPU by cudakit (cudakit.gds.load_safetensors) and by the
safetensors library (safetensors.torch.load_file), side by side in one process on one file, cold and
warm, with the disk's own O_DIRECT read figure beside them; then every tensor of both loads compared
byte for byte. One JSON line per measurement; bench/gds_table.py prints them as the "checkpoint"
rows (medians over the repetitions, the ratios and the identity check).

    safetensors_load_bench.py [--dir /tmp] [--gib 2] [--reps 3] [--keep]

The file: safetensors.torch.save_file of 64 bfloat16 tensors of random bytes (the bulk) and one
small tensor of every dtype safetensors.torch writes (random bytes, a 0-d and an empty one too).
Cold: the file is dropped from the page cache before each load (fsync, then
posix_fadvise(DONTNEED); the resident fraction after it, from mincore, is reported as
resident_before and must be ~0, which needs root or the file's owner); cudakit then reads with
O_DIRECT (the page cache is not used at all), safetensors through its mmap (page faults from the
disk). Warm: the file read once through the page cache first (resident_before ~1); cudakit reads
the resident chunks through the page cache (page_cache_check), safetensors through its mmap. The
two loaders alternate, the first one changing each repetition, so neither always runs first.
"""
import argparse
import ctypes
import json
import mmap
import os
import threading
import time

import torch

import cudakit


def emit(case, impl, nbytes, seconds, **extra):
    line = {"bench": "gds", "case": case, "impl": impl, "bytes": nbytes, "seconds": seconds,
            "gbps": nbytes / seconds / 1e9 if seconds > 0 else 0.0}
    line.update(extra)
    print(json.dumps(line), flush=True)


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]


def resident_fraction(path):
    """The fraction of the file's pages in the page cache (mincore over a read-only mapping)."""
    size = os.path.getsize(path)
    if size == 0:
        return 0.0
    fd = os.open(path, os.O_RDONLY)
    address = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    os.close(fd)
    if address in (None, ctypes.c_void_p(-1).value):
        return -1.0
    try:
        pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        vec = (ctypes.c_ubyte * pages)()
        if _libc.mincore(address, size, vec) != 0:
            return -1.0
        return sum(v & 1 for v in vec) / pages
    finally:
        _libc.munmap(address, size)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    return resident_fraction(path)


def warm_up(path):
    with open(path, "rb", buffering=0) as f:
        while f.read(64 << 20):
            pass
    return resident_fraction(path)


def disk_odirect_read(path, threads=8, chunk=8 << 20):
    """The disk's own O_DIRECT read bandwidth: `threads` threads of `chunk`-byte preads into
    page-aligned host buffers (no GPU in the way), as gds_bench measures it."""
    size = os.path.getsize(path)
    drop_cache(path)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    chunks = (size + chunk - 1) // chunk

    def work(t):
        buf = mmap.mmap(-1, chunk)  # page-aligned, as O_DIRECT needs
        for i in range(t, chunks, threads):
            os.preadv(fd, [buf], i * chunk)
        buf.close()

    start = time.perf_counter()
    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for p in pool:
        p.start()
    for p in pool:
        p.join()
    seconds = time.perf_counter() - start
    os.close(fd)
    return size, seconds


def checkpoint_tensors(st_torch, nbytes):
    """64 bfloat16 tensors of random bytes (the bulk), and one small tensor of every dtype
    safetensors.torch writes."""
    g = torch.Generator(device="cuda").manual_seed(37)

    def random_bytes(dtype, shape):
        itemsize = torch.empty((), dtype=dtype).element_size()
        count = 1
        for d in shape:
            count *= d
        raw = torch.randint(0, 256, (count * itemsize,), dtype=torch.uint8, device="cuda", generator=g)
        if dtype == torch.bool:
            raw &= 1
        return raw.view(dtype).reshape(shape)

    elements = nbytes // 64 // 2
    tensors = {f"layers.{i}.weight": random_bytes(torch.bfloat16, (elements,)) for i in range(64)}
    writes = set(getattr(st_torch, "_TYPES", {}).values()) | set(getattr(st_torch, "_SIZE", {}))
    if not writes:
        emit("setup", "error", 0, 0.0, error="safetensors.torch lists no dtypes (_TYPES, _SIZE)")
    for dtype in sorted(writes, key=str):
        name = str(dtype).removeprefix("torch.")
        try:
            tensors[f"every.{name}"] = random_bytes(dtype, (3, 10))
            tensors[f"every.{name}.empty"] = random_bytes(dtype, (0, 4))
            if "float4" not in name:  # F4's shape counts values, two a byte: a 0-d one has none
                tensors[f"every.{name}.scalar"] = random_bytes(dtype, ())
        except (RuntimeError, TypeError) as error:  # a dtype this torch cannot make
            emit("setup", "skipped_dtype", 0, 0.0, dtype=name, error=str(error))
    return {k: v.cpu() for k, v in tensors.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--gib", type=float, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    import safetensors  # noqa: PLC0415
    import safetensors.torch as st_torch  # noqa: PLC0415

    nbytes = int(args.gib * (1 << 30)) // 4096 * 4096
    path = os.path.join(args.dir, "safetensors_load_bench.safetensors")
    tensors = checkpoint_tensors(st_torch, nbytes)
    st_torch.save_file(tensors, path)
    size = os.path.getsize(path)
    del tensors
    emit("setup", "info", size, 0.0, dir=args.dir, root=os.geteuid() == 0, safetensors=safetensors.__version__,
         torch=torch.__version__, file=path)

    try:
        disk_bytes, disk_seconds = disk_odirect_read(path)
        emit("checkpoint_disk_odirect_read", "disk", disk_bytes, disk_seconds)
    except OSError as error:  # a file system without O_DIRECT (tmpfs): the row says so
        emit("checkpoint_disk_odirect_read", "disk", size, 0.0, error=f"{type(error).__name__}: {error}")

    def load_cudakit():
        start = time.perf_counter()
        # raw: the dtypes cudakit has no tensor dtype for (the FNUZ FP8 and F6 formats) load as their bytes.
        loaded = cudakit.gds.load_safetensors(path, "cuda:0", raw=True)
        cudakit.synchronize()
        raw_names.update(loaded.raw)
        return loaded.tensors, time.perf_counter() - start, {"path": str(loaded.report.path)}

    def load_safetensors():
        start = time.perf_counter()
        loaded = st_torch.load_file(path, device="cuda:0")
        torch.cuda.synchronize()
        return loaded, time.perf_counter() - start, {}

    raw_names = set()
    loaders = [("cudakit", load_cudakit), ("safetensors", load_safetensors)]
    last = {}
    for case, prepare in (("checkpoint_cold_load", drop_cache), ("checkpoint_warm_load", warm_up)):
        for rep in range(args.reps):
            order = loaders if rep % 2 == 0 else loaders[::-1]
            for impl, load in order:
                resident = prepare(path)
                tensors, seconds, extra = load()
                emit(case, impl, size, seconds, resident_before=resident, rep=rep, **extra)
                last[impl] = tensors
                del tensors

    # Byte identity: every tensor of cudakit's load against safetensors' own.
    ours, theirs = last["cudakit"], last["safetensors"]
    differ, compared = [], 0
    if set(ours) != set(theirs):
        differ.append(f"names differ: {sorted(set(ours) ^ set(theirs))}")
    for name in sorted(set(ours) & set(theirs)):
        t = theirs[name]
        try:
            mine = torch.from_dlpack(ours[name])
        except Exception as error:  # noqa: BLE001 - the failure is the result
            differ.append(f"{name}: not comparable through DLPack ({type(error).__name__}: {error})")
            continue
        if name in raw_names:  # its bytes, as one uint8 vector
            if not torch.equal(mine, t.reshape(-1).view(torch.uint8)):
                differ.append(f"{name}: raw bytes differ")
        elif mine.dtype != t.dtype or tuple(mine.shape) != tuple(t.shape):
            differ.append(f"{name}: {mine.dtype} {tuple(mine.shape)} against {t.dtype} {tuple(t.shape)}")
        elif not torch.equal(mine.reshape(-1).view(torch.uint8), t.reshape(-1).view(torch.uint8)):
            differ.append(f"{name}: bytes differ")
        compared += 1
    dtypes = sorted({str(t.dtype).removeprefix("torch.") for t in theirs.values()})
    emit("checkpoint_byte_identity", "cudakit", size, 0.0, tensors=compared, dtypes=dtypes, raw=sorted(raw_names),
         identical=not differ, differ=differ[:20])
    if not args.keep:
        os.remove(path)


if __name__ == "__main__":
    main()
