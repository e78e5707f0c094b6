#!/usr/bin/env python3
"""The Python module against its peers, in one run on one GPU: DLPack exchange per tensor each
way (cudakit <-> torch, beside torch <-> CuPy), torch.empty(1 MiB) + del under cudakit's allocator
and under torch's own (each in a process of its own: torch takes an allocator before its first
allocation), and the call overhead of bound functions. Prints one JSON line per case,
{"bench": "python", "impl": "cudakit", "case", "value", "unit", "peer", "peer_value"} (and the
peer's own line), then a table of cudakit against each peer; bench/report.py reads the lines.

    PYTHONPATH=build-python python3 bench/python_bench.py
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


def allocation_child(which):
    """Prints the time of torch.empty(1 MiB) + del with `which` allocator (cudakit or torch)."""
    if which == "cudakit":
        import cudakit.torch
        cudakit.torch.use_cudakit_allocator()
    import torch
    torch.empty(1, device="cuda")

    def step():
        x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
        del x

    print(per_op_us(step, 20000))


def allocation(which):
    out = subprocess.run([sys.executable, __file__, "--allocation", which], capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        return None
    return float(out.stdout.strip().splitlines()[-1])


def main():
    import cudakit
    import torch

    a = cudakit.zeros([1024])
    t = torch.zeros(1024, device="cuda")
    try:
        import cupy
        c = cupy.zeros(1024, dtype=cupy.float32)
    except ImportError:
        cupy = None
        print("python_bench: no CuPy: the DLPack rows have no peer", file=sys.stderr)

    # (case, cudakit's figure, the peer's name, the peer's figure): one exchange per call, the
    # capsule and the consumer's object made and dropped.
    cases = [
        ("DLPack into torch: torch.from_dlpack(x), x cudakit's (peer: CuPy's)",
         per_op_us(lambda: torch.from_dlpack(a), 20000),
         "cupy", per_op_us(lambda: torch.from_dlpack(c), 20000) if cupy else None),
        ("DLPack out of torch: from_dlpack(torch tensor) into cudakit (peer: into CuPy)",
         per_op_us(lambda: cudakit.from_dlpack(t), 20000),
         "cupy", per_op_us(lambda: cupy.from_dlpack(t), 20000) if cupy else None),
    ]
    if cupy:
        cases.append(("DLPack out of CuPy: from_dlpack(cupy array) into cudakit (peer: into torch)",
                      per_op_us(lambda: cudakit.from_dlpack(c), 20000),
                      "torch", per_op_us(lambda: torch.from_dlpack(c), 20000)))
    cases.append(("torch.empty(1 MiB) + del, cudakit's allocator in torch (peer: torch's own)",
                  allocation("cudakit"), "torch", allocation("torch")))
    cases.append(("a bound function that does nothing (peer: torch._C._cuda_isInBadFork)",
                  per_op_us(cudakit._cudakit._noop, 200000), "torch", per_op_us(torch._C._cuda_isInBadFork, 200000)))
    cases.append(("current_device()", per_op_us(cudakit.current_device, 200000),
                  "torch", per_op_us(torch.cuda.current_device, 200000)))

    for case, ours, peer, theirs in cases:
        if ours is None:
            continue
        print(json.dumps({"bench": "python", "impl": "cudakit", "case": case, "value": ours, "unit": "us",
                          "peer": peer if theirs is not None else None, "peer_value": theirs}), flush=True)
        if theirs is not None:
            print(json.dumps({"bench": "python", "impl": peer, "case": case, "value": theirs, "unit": "us"}),
                  flush=True)
    print()
    print("| case | cudakit | peer | peer's | cudakit vs peer |")
    print("| --- | --- | --- | --- | --- |")
    for case, ours, peer, theirs in cases:
        if ours is None:
            continue
        ratio = f"{theirs / ours:.2f}x" if theirs else ""
        print(f"| {case} | {ours:.3g} us | {peer} | {f'{theirs:.3g} us' if theirs else ''} | {ratio} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--allocation"]:
        allocation_child(sys.argv[2])
    else:
        main()
