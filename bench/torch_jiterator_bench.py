#!/usr/bin/env python3
"""The peers of bench/jiterator_bench.cpp, same cases and sizes, one JSON line per figure:
torch's jiterator (torch.cuda.jiterator._create_jit_fn), torch's own ops (broadcast, strided,
mixed-dtype, sum of squares) and CuPy's ElementwiseKernel / ReductionKernel. GPU times from CUDA
events around 10 back-to-back calls, median of 15 samples after 3 untimed ones; host times from
perf_counter. Disk-warm first calls run in child processes (this script with --child) after
the parent filled each library's cache; the child times the first call only, after its CUDA
context and tensors exist.
    python3 bench/torch_jiterator_bench.py > torch.jsonl"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

AXPY = "template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }"


def emit(impl, case, value, unit):
    print(json.dumps({"bench": "jiterator", "impl": impl, "case": case, "value": value, "unit": unit}), flush=True)


def gpu_ms(calls, fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(15):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / calls)
    return statistics.median(samples)


def first_call_ms(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def host_us(fn, calls=50, batches=200):
    fn()
    samples = []
    for _ in range(batches):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) * 1e6 / calls)
    return statistics.median(samples)


def unique(code, name):
    """The code with its entry renamed, so that no cache knows it."""
    return code.replace("axpy(", f"{name}(", 1)


def child(impl):
    x = torch.ones(1 << 20, device="cuda")
    y = torch.ones(1 << 20, device="cuda")
    torch.cuda.synchronize()
    if impl == "torch_jiterator":
        fn = torch.cuda.jiterator._create_jit_fn(unique(AXPY, "axpy_disk"), alpha=2.0)
        emit(impl, "disk_warm_first_call_ms_one", first_call_ms(lambda: fn(x, y)), "ms")
    else:
        import cupy
        cx, cy = cupy.asarray(x), cupy.asarray(y)
        k = cupy.ElementwiseKernel("T x, T y, T alpha", "T z", "z = alpha * x + y", "axpy_disk")
        emit(impl, "disk_warm_first_call_ms_one", first_call_ms(lambda: k(cx, cy, cupy.float32(2.0))), "ms")


def cold_child(impl):
    """One cold first call in this new process (a fresh cache), then a second kernel's with the
    compiler loaded: Note [What a cold first call measures] in bench/jiterator_bench.cpp."""
    x = torch.ones(1 << 20, device="cuda")
    y = torch.ones(1 << 20, device="cuda")
    torch.cuda.synchronize()
    if impl == "torch_jiterator":
        jit = torch.cuda.jiterator._create_jit_fn
        fn, fn2 = jit(unique(AXPY, "axpy_cold"), alpha=2.0), jit(unique(AXPY, "axpy_cold2"), alpha=2.0)
        emit(impl, "cold_first_call_ms_one", first_call_ms(lambda: fn(x, y)), "ms")
        emit(impl, "cold_first_call_nvrtc_loaded_ms_one", first_call_ms(lambda: fn2(x, y)), "ms")
    else:
        import cupy
        cx, cy, alpha = cupy.asarray(x), cupy.asarray(y), cupy.float32(2.0)
        k = cupy.ElementwiseKernel("T x, T y, T alpha", "T z", "z = alpha * x + y", "axpy_cold")
        k2 = cupy.ElementwiseKernel("T x, T y, T alpha", "T z", "z = alpha * x + y", "axpy_cold2")
        emit(impl, "cold_first_call_ms_one", first_call_ms(lambda: k(cx, cy, alpha)), "ms")
        emit(impl, "cold_first_call_nvrtc_loaded_ms_one", first_call_ms(lambda: k2(cx, cy, alpha)), "ms")


def run_child(args, env):
    """The figures a child process prints, by case with "_one" taken off."""
    out = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True, text=True)
    figures = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            figures.setdefault(row["case"].removesuffix("_one"), []).append(row["value"])
    return figures


def cold(impl, env):
    """Four new processes, each with a fresh cache: the first's figures apart, the median of the rest."""
    runs = []
    for i in range(4):
        fresh = tempfile.mkdtemp(prefix="jiterator_cold_")
        runs.append(run_child(["--cold-child", impl], dict(env, PYTORCH_KERNEL_CACHE_PATH=fresh, CUPY_CACHE_DIR=fresh)))
    for case, values in runs[0].items():
        emit(impl, case + "_first_process", values[0], "ms")
    for case in runs[0]:
        values = [v for r in runs[1:] for v in r.get(case, [])]
        if values:
            emit(impl, case, statistics.median(values), "ms")


def disk_warm(impl, env):
    samples = []
    for _ in range(5):
        samples += run_child(["--child", impl], env).get("disk_warm_first_call_ms", [])
    if samples:
        emit(impl, "disk_warm_first_call_ms", statistics.median(samples), "ms")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--cold-child":
        return cold_child(sys.argv[2])
    cache = tempfile.mkdtemp(prefix="jiterator_peers_")
    env = dict(os.environ, PYTORCH_KERNEL_CACHE_PATH=os.path.join(cache, "torch"), CUPY_CACHE_DIR=os.path.join(cache, "cupy"))
    # torch's jiterator does not make a missing PYTORCH_KERNEL_CACHE_PATH folder: it warns once and
    # caches nothing, so its "disk-warm" call would compile (as it did in the early runs:
    # notes/jiterator.md).
    os.makedirs(env["PYTORCH_KERNEL_CACHE_PATH"], exist_ok=True)
    os.makedirs(env["CUPY_CACHE_DIR"], exist_ok=True)
    os.environ.update(env)
    small_x = torch.ones(1 << 20, device="cuda")
    small_y = torch.ones(1 << 20, device="cuda")
    torch.cuda.synchronize()

    # torch's jiterator
    jit = torch.cuda.jiterator._create_jit_fn
    cold("torch_jiterator", env)
    fn = jit(unique(AXPY, "axpy_cached"), alpha=2.0)
    disk_fn = jit(unique(AXPY, "axpy_disk"), alpha=2.0)
    disk_fn(small_x, small_y)
    torch.cuda.synchronize()
    disk_warm("torch_jiterator", env)
    tx, ty = torch.ones(1024, device="cuda"), torch.ones(1024, device="cuda")
    emit("torch_jiterator", "cached_call_host_us", host_us(lambda: fn(tx, ty)), "us")
    emit("torch_native", "cached_call_host_us", host_us(lambda: torch.add(ty, tx, alpha=2.0)), "us")

    n = 1 << 28
    nbytes = n * 4
    x = torch.ones(n, device="cuda")
    y = torch.ones(n, device="cuda")
    out = torch.empty(n, device="cuda")
    copy_ms = gpu_ms(10, lambda: out.copy_(x))
    copy_gbps = 2 * nbytes / copy_ms / 1e6
    emit("torch_native", "copy_2^28_float32_GBps", copy_gbps, "GB/s")
    ms = gpu_ms(10, lambda: fn(x, y))
    emit("torch_jiterator", "axpy_2^28_float32_GBps", 3 * nbytes / ms / 1e6, "GB/s")
    emit("torch_jiterator", "axpy_2^28_float32_of_copy", 3 * nbytes / ms / 1e6 / copy_gbps, "ratio")
    ms = gpu_ms(10, lambda: torch.add(y, x, alpha=2.0, out=out))
    emit("torch_native", "axpy_2^28_float32_GBps", 3 * nbytes / ms / 1e6, "GB/s")
    emit("torch_native", "axpy_2^28_float32_of_copy", 3 * nbytes / ms / 1e6 / copy_gbps, "ratio")

    m = x.view(16384, 16384)
    row = torch.ones(16384, device="cuda")
    mout = out.view(16384, 16384)
    add = jit("template <typename T> T add(T a, T b) { return a + b; }")
    for impl, f in (("torch_native", lambda: torch.add(m, row, out=mout)), ("torch_jiterator", lambda: add(m, row))):
        emit(impl, "broadcast_add_16384x16384_GBps", 2 * nbytes / gpu_ms(10, f) / 1e6, "GB/s")
    for impl, f in (("torch_native", lambda: torch.add(m.t(), m, out=mout)), ("torch_jiterator", lambda: add(m.t(), m))):
        emit(impl, "transposed_add_16384x16384_GBps", 3 * nbytes / gpu_ms(10, f) / 1e6, "GB/s")
    h = torch.ones(n, dtype=torch.float16, device="cuda")
    emit("torch_native", "mixed_half_float_add_2^28_GBps", 10 * n / gpu_ms(10, lambda: torch.add(h, y, out=out)) / 1e6, "GB/s")
    # torch's jiterator refuses inputs of different dtypes: no figure.
    emit("torch_native", "sum_of_squares_2^28_float32_GBps",
         nbytes / gpu_ms(10, lambda: torch.linalg.vector_norm(x) ** 2) / 1e6, "GB/s")
    emit("torch_native", "sum_of_squares_2^28_float32_of_copy",
         nbytes / gpu_ms(10, lambda: torch.linalg.vector_norm(x) ** 2) / 1e6 / copy_gbps, "ratio")
    # axpy against size (2^16 to 2^28 float32), for the performance report's plot.
    sweep_fn = jit(unique(AXPY, "axpy_sweep"), alpha=2.0)
    sizes = [1 << k for k in range(16, 29, 2)]
    for size in sizes:
        sx, sy, so = torch.ones(size, device="cuda"), torch.ones(size, device="cuda"), torch.empty(size, device="cuda")
        for impl, f in (("torch_jiterator", lambda: sweep_fn(sx, sy)),
                        ("torch_native", lambda: torch.add(sy, sx, alpha=2.0, out=so))):
            print(json.dumps({"bench": "jiterator", "impl": impl, "case": "axpy_sweep_GBps", "elements": size,
                              "value": 3 * size * 4 / gpu_ms(20, f) / 1e6, "unit": "GB/s"}), flush=True)
    del fn

    try:
        import cupy
    except ImportError:
        print("cupy is not installed: CuPy's figures skipped", file=sys.stderr)
        return
    cx, cy = cupy.asarray(small_x), cupy.asarray(small_y)
    alpha = cupy.float32(2.0)
    cold("cupy", env)
    k = cupy.ElementwiseKernel("T x, T y, T alpha", "T z", "z = alpha * x + y", "axpy_cached")
    kd = cupy.ElementwiseKernel("T x, T y, T alpha", "T z", "z = alpha * x + y", "axpy_disk")
    kd(cx, cy, alpha)
    torch.cuda.synchronize()
    disk_warm("cupy", env)
    sx, sy = cupy.ones(1024, dtype=cupy.float32), cupy.ones(1024, dtype=cupy.float32)
    emit("cupy", "cached_call_host_us", host_us(lambda: k(sx, sy, alpha)), "us")
    bx, by, bout = cupy.asarray(x), cupy.asarray(y), cupy.asarray(out)
    ms = gpu_ms(10, lambda: k(bx, by, alpha, bout))
    emit("cupy", "axpy_2^28_float32_GBps", 3 * nbytes / ms / 1e6, "GB/s")
    emit("cupy", "axpy_2^28_float32_of_copy", 3 * nbytes / ms / 1e6 / copy_gbps, "ratio")
    ssq = cupy.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "ssq")
    ms = gpu_ms(10, lambda: ssq(bx))
    emit("cupy", "sum_of_squares_2^28_float32_GBps", nbytes / ms / 1e6, "GB/s")
    emit("cupy", "sum_of_squares_2^28_float32_of_copy", nbytes / ms / 1e6 / copy_gbps, "ratio")
    for size in sizes:
        sx, sy, so = cupy.ones(size, dtype=cupy.float32), cupy.ones(size, dtype=cupy.float32), cupy.empty(size, dtype=cupy.float32)
        print(json.dumps({"bench": "jiterator", "impl": "cupy", "case": "axpy_sweep_GBps", "elements": size,
                          "value": 3 * size * 4 / gpu_ms(20, lambda: k(sx, sy, alpha, so)) / 1e6, "unit": "GB/s"}),
              flush=True)


if __name__ == "__main__":
    main()
