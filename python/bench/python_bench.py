#!/usr/bin/env python3
"""The Python module against its peers, in one run on one GPU: DLPack exchange per tensor each
way (cudakit <-> torch, beside torch <-> CuPy), torch.empty(1 MiB) + del under cudakit's allocator
and under torch's own (each in a process of its own: an allocator is chosen before torch's first
allocation), and the call overhead of bound functions. Prints JSON lines
{"bench": "python", "impl", "case", "value", "unit"}, then a table of cudakit against each peer.

    PYTHONPATH=build-python python3 python/bench/python_bench.py
"""

import json
import statistics
import subprocess
import sys
import time

ROUNDS = 7


def per_op_us(fn, n):
    """The median over ROUNDS of the mean time of `n` calls, in microseconds."""
    fn()
    samples = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(samples)


def emit(impl, case, value, unit="us"):
    print(json.dumps({"bench": "python", "impl": impl, "case": case, "value": value, "unit": unit}), flush=True)


def allocation_child(which):
    import cudakit
    if which == "cudakit":
        import cudakit.torch
        cudakit.torch.use_cudakit_allocator()
    import torch
    torch.empty(1, device="cuda")

    def step():
        x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
        del x

    emit(which, "torch.empty(1 MiB) + del", per_op_us(step, 20000))


def main():
    import cudakit
    import torch

    # DLPack: one exchange per call, the capsule and the consumer's object made and dropped.
    a = cudakit.zeros([1024])
    t = torch.zeros(1024, device="cuda")
    emit("cudakit", "torch.from_dlpack(x)", per_op_us(lambda: torch.from_dlpack(a), 20000))
    emit("cudakit", "from_dlpack(torch tensor)", per_op_us(lambda: cudakit.from_dlpack(t), 20000))
    try:
        import cupy
        c = cupy.zeros(1024, dtype=cupy.float32)
        emit("cupy", "torch.from_dlpack(x)", per_op_us(lambda: torch.from_dlpack(c), 20000))
        emit("cupy", "from_dlpack(torch tensor)", per_op_us(lambda: cupy.from_dlpack(t), 20000))
        emit("cudakit", "from_dlpack(cupy array)", per_op_us(lambda: cudakit.from_dlpack(c), 20000))
        emit("torch", "from_dlpack(cupy array)", per_op_us(lambda: torch.from_dlpack(c), 20000))
    except ImportError:
        print("python_bench: no CuPy, its rows are left out", file=sys.stderr)

    # The allocator inside torch, each in a fresh process.
    for which in ("cudakit", "torch"):
        out = subprocess.run([sys.executable, __file__, "--allocation", which], capture_output=True, text=True,
                             timeout=300)
        sys.stdout.write(out.stdout)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)

    # Call overhead: a bound function that does nothing, and one that asks the runtime.
    emit("cudakit", "bound no-op call", per_op_us(cudakit._cudakit._noop, 200000))
    emit("torch", "bound no-op call", per_op_us(torch._C._cuda_isInBadFork, 200000))
    emit("cudakit", "current_device()", per_op_us(cudakit.current_device, 200000))
    emit("torch", "current_device()", per_op_us(torch.cuda.current_device, 200000))


def table(lines):
    rows, impls = {}, []
    for line in lines:
        r = json.loads(line)
        rows.setdefault(r["case"], {})[r["impl"]] = r["value"]
        if r["impl"] not in impls:
            impls.append(r["impl"])
    peers = [i for i in impls if i != "cudakit"]
    print("| case | " + " | ".join(impls) + " | " + " | ".join(f"cudakit vs {p}" for p in peers) + " |")
    print("| --- |" + " --- |" * (len(impls) + len(peers)))
    for case, by in rows.items():
        cells = [f"{by[i]:.3g} us" if i in by else "" for i in impls]
        ratios = [f"{by[p] / by['cudakit']:.2f}x" if "cudakit" in by and p in by else "" for p in peers]
        print(f"| {case} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--allocation"]:
        allocation_child(sys.argv[2])
    elif sys.argv[1:2] == ["--table"]:
        table([l for l in open(sys.argv[2]) if l.startswith("{")])
    else:
        main()
