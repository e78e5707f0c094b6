#!/usr/bin/env python3
"""On the GPU machine (PYTHONPATH=build-python): where a small forward through route_torch() spends
the time it spends beyond plain torch's. The model of bench/torch_model_forward_bench.py (GPT-2 or
Llama, 4 x 64 tokens by default), tuned once through the block as the bench tunes it; then ten
forwards of each variant under torch.profiler, in turn, the routed ones inside one block. Prints, per
variant, the wall time of a forward, and per ATen operation (self CPU time and its kernels' CUDA
time, per forward) the rows where the two variants differ most, then the routed products' GPU
kernels by name beside torch's.

    PYTHONPATH=build-python python3 probe/forward_profile.py [--model gpt2] [--batch 4] [--seq 64]
"""
import argparse
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import cudakit
from cudakit.matmul import route_torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from torch_model_forward_bench import build  # noqa: E402  (bench/ is not a package)

FORWARDS = 10


def profiled(forward):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for _ in range(FORWARDS):
            forward()
        torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - t0) * 1e3 / FORWARDS
    ops = {}
    for e in prof.key_averages():
        device_us = getattr(e, "self_device_time_total", None)
        if device_us is None:
            device_us = e.self_cuda_time_total
        ops[e.key] = (e.self_cpu_time_total / FORWARDS, device_us / FORWARDS, e.count / FORWARDS)
    return wall_ms, ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    args = ap.parse_args()
    model, vocab = build(args.model, args.layers)
    ids = torch.randint(0, vocab, (args.batch, args.seq), device="cuda")

    def forward():
        return model(input_ids=ids, use_cache=False).last_hidden_state

    cudakit.tunable.enable(True)
    cudakit.tunable.tuning_enable(True)
    with torch.no_grad():
        forward()
        with route_torch():
            forward()  # tunes each new shape
            cudakit.tunable.tuning_enable(False)
            forward()
        forward()
        results = {}
        for _ in range(2):  # the first pass warms the profiler; the second's figures are kept
            results["torch"] = profiled(forward)
            with route_torch():
                results["cudakit"] = profiled(forward)
    for name, (wall, _) in results.items():
        print(f"{name}: {wall:.3f} ms a forward (wall, profiled)")
    torch_ops, ours = results["torch"][1], results["cudakit"][1]
    keys = set(torch_ops) | set(ours)
    rows = []
    for k in keys:
        a, b = torch_ops.get(k, (0, 0, 0)), ours.get(k, (0, 0, 0))
        rows.append((abs(b[0] - a[0]) + abs(b[1] - a[1]), k, a, b))
    rows.sort(reverse=True)
    print(f"{'operation or kernel':70} {'torch cpu us':>12} {'cudakit cpu':>12} {'torch gpu us':>12} "
          f"{'cudakit gpu':>12} {'calls':>11}")
    for _, k, a, b in rows[:30]:
        print(f"{k[:70]:70} {a[0]:12.1f} {b[0]:12.1f} {a[1]:12.1f} {b[1]:12.1f} {a[2]:5.1f}/{b[2]:<5.1f}")


if __name__ == "__main__":
    main()
