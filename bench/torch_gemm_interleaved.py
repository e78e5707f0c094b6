#!/usr/bin/env python3
"""cudakit's GEMM beside torch's in one process, on the same operands, alternating per round.

For each shape of bench/tunable_shapes.json (and, with --extra, a few more): torch's operands (the
shape file's layouts; float8 with per-tensor float32 scales, bfloat16 output, no fast accumulation
on either side), handed to cudakit by pointer (cudakit.matmul.prepare: no copy), then rounds in
which each variant is timed once, in a rotated order, so that clock, power state and data are the
same for all of them:
  torch             torch.matmul (torch._scaled_mm for float8)
  torch_tunableop   the same with torch's TunableOp enabled (--torch-tunableop; tuned first)
  default           cudakit's GEMM with its TunableOp off (cuBLAS's default as cudakit calls it)
  tuned             cudakit's GEMM with its TunableOp on (tuned first)
A sample is replays of a CUDA graph of 16 products (torch's graph for torch, cudakit's for cudakit;
--no-graph: calls issued from the host) between two CUDA events, ~--sample-ms long, over rotating
operand copies that together exceed twice the L2 cache; every variant's samples run back to back
in the same rounds, so the GPU is in the same (sustained) power state for all of them. Prints one JSON line a shape
({"bench": "gemm_interleaved", ...}, read by bench/tunable_table.py) and a table with tuned/torch,
default/torch, tuned over the better of torch's two, and their geometric means.

float8 shapes: e4m3 x e4m3, one float32 scale a tensor (torch._scaled_mm's tensor-wise scaling),
bfloat16 output, no fast accumulation (use_fast_accum=False, cuBLASLt's FAST_ACCUM unset), against
torch._scaled_mm with exactly those; their rows say so ("fp8").

Time: --budget-s bounds the whole run. Each shape gets the budget left over the shapes left; its
rounds are cut (never under --min-rounds) to what fits after its tuning. A transformers model's
forward pass is bench/torch_model_forward_bench.py's.

    PYTHONPATH=build-python python3 bench/torch_gemm_interleaved.py --extra --torch-tunableop [--budget-s 300]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

import cudakit
from cudakit.matmul import prepare
from tunable_table import interleaved_table  # bench/ is the script's folder, first on sys.path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float8_e4m3": torch.float8_e4m3fn}
# Shapes beside the suite where torch led cudakit on 2026-12-04 (issue 36); not tuned for by name.
EXTRA = [
    {"name": "bf16_2048x5120x5120", "dtype": "bfloat16", "M": 2048, "N": 5120, "K": 5120, "layout": "nn", "batch": 1},
    {"name": "bf16_T_8192x2048x2048", "dtype": "bfloat16", "M": 8192, "N": 2048, "K": 2048, "layout": "tn", "batch": 1},
    {"name": "bf16_3072x768x3072", "dtype": "bfloat16", "M": 3072, "N": 768, "K": 3072, "layout": "nn", "batch": 1},
    {"name": "fp8_8192x8192x8192", "dtype": "float8_e4m3", "M": 8192, "N": 8192, "K": 8192, "layout": "linear",
     "batch": 1},
]


def operands(shape, copies):
    """out[M, N] = A[M, K] @ B[K, N] in the shape file's layouts (see bench/tunable_bench.cpp)."""
    M, N, K, batch = shape["M"], shape["N"], shape["K"], shape["batch"]
    dtype = DTYPES[shape["dtype"]]
    lead = (batch,) if batch > 1 else ()
    out = []
    for i in range(copies):
        g = torch.Generator(device="cuda").manual_seed(11 + i)
        rnd = lambda *s: torch.rand(*s, device="cuda", generator=g) * 2 - 1  # noqa: E731
        a = rnd(*lead, K, M).transpose(-1, -2) if shape["layout"] == "tn" else rnd(*lead, M, K)
        b = rnd(*lead, N, K).transpose(-1, -2) if shape["layout"] == "linear" else rnd(*lead, K, N)
        out.append((a.to(dtype), b.to(dtype)))
    return out


class Variants:
    """One shape's operands and, per variant, a callable that queues `calls` products on the
    rotating copies: a CUDA graph replay (torch's graph for torch, cudakit's for cudakit: the host's
    issue time is not timed, as bench/tunable_bench.cpp and torch_tunable_bench.py time), or, where
    capture fails or --no-graph, the calls issued from the host."""

    CALLS = 16  # products a graph holds

    def __init__(self, shape, args):
        M, N, K, batch = shape["M"], shape["N"], shape["K"], shape["batch"]
        self.fp8 = shape["dtype"] == "float8_e4m3"
        size = DTYPES[shape["dtype"]].itemsize
        out_size = 2 if self.fp8 else size
        per = batch * (M * K * size + K * N * size + M * N * out_size)
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.copies = max(1, min(32, math.ceil(2 * l2 / per)))
        self.pairs = operands(shape, self.copies)
        self.flops = 2.0 * M * N * K * batch
        self.scale_a = torch.ones((), device="cuda")
        self.scale_b = torch.ones((), device="cuda")
        self.kw = dict(scale_a=self.scale_a, scale_b=self.scale_b, out_dtype=torch.bfloat16) if self.fp8 else {}
        self.names = ["torch", "default", "tuned"] + (["torch_tunableop"] if args.torch_tunableop and not self.fp8
                                                      else [])
        self.graph = not args.no_graph
        self.graphed = {}
        self.runs = {}
        self.keep = []  # graphs' operands and outputs, alive while the graphs are

    def torch_call(self, k):
        a, b = self.pairs[k % self.copies]
        if self.fp8:
            return torch._scaled_mm(a, b, **self.kw)
        return torch.matmul(a, b)

    def set_state(self, name):
        """TunableOp's switches for `name` (both libraries)."""
        torch.cuda.tunable.enable(name == "torch_tunableop")
        cudakit.tunable.enable(name == "tuned")

    def build(self, name):
        """Tunes (first calls) and makes `name`'s runner; call once per variant, in its state."""
        self.set_state(name)
        calls = self.CALLS
        if name.startswith("torch"):
            for k in range(self.copies + 1):
                self.torch_call(k)  # tunes (torch's TunableOp) and warms
            torch.cuda.synchronize()

            def host():
                for k in range(calls):
                    self.torch_call(k)
            run = host
            if self.graph:
                try:
                    g = torch.cuda.CUDAGraph()
                    side = torch.cuda.Stream()
                    side.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(side):
                        for k in range(3):
                            self.torch_call(k)
                    torch.cuda.current_stream().wait_stream(side)
                    with torch.cuda.graph(g):
                        outs = [self.torch_call(k) for k in range(calls)]
                    self.keep.append((g, outs))
                    run = g.replay
                    self.graphed[name] = True
                except RuntimeError as e:
                    print(f"torch_gemm_interleaved: {name} not captured ({str(e)[:120]}): host-issued",
                          file=sys.stderr)
        else:
            outs = [prepare(a, b, **self.kw)[0] for a, b in self.pairs]
            preps = [prepare(a, b, out=o, **self.kw)[1] for (a, b), o in zip(self.pairs, outs)]
            for k in range(self.copies + 1):
                preps[k % self.copies]()  # tunes (cudakit's TunableOp) and warms
            torch.cuda.synchronize()

            def host():
                for k in range(calls):
                    preps[k % self.copies]()
            run = host
            if self.graph:
                try:
                    g = cudakit.CUDAGraph()
                    with cudakit.graph(g):
                        capture = cudakit.current_stream()
                        for k in range(calls):
                            a, b = self.pairs[k % self.copies]
                            prepare(a, b, out=outs[k % self.copies], stream=capture, **self.kw)[1]()
                    device = torch.cuda.current_device()

                    def replay(g=g, device=device):
                        g.replay(cudakit.Stream._wrap(torch.cuda.current_stream().cuda_stream, device))
                    run = replay
                    self.keep.append((g, outs))
                    self.graphed[name] = True
                except Exception as e:  # noqa: BLE001 - cudakit's errors are RuntimeError / ValueError
                    print(f"torch_gemm_interleaved: {name} not captured ({str(e)[:120]}): host-issued",
                          file=sys.stderr)
        self.runs[name] = run


def time_sample(fn, iters):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def bench_shape(shape, args, budget_s):
    """One shape's row; `budget_s`: the seconds it may take, tuning included."""
    t0 = time.time()
    known = set(cudakit.tunable.get_results())
    v = Variants(shape, args)
    for name in v.names:
        v.build(name)
    tuning_s = time.time() - t0
    # What the tuner chose for this shape's keys (Default, a cuBLASLt configuration, a GEMV, a CUTLASS
    # kernel): the table says which kinds of candidates win.
    chosen = sorted({value.split(",")[0] for key, value in cudakit.tunable.get_results().items() if key not in known})
    calls = Variants.CALLS
    est = min(time_sample(v.runs[n], 2) / calls for n in v.names)  # ms a product
    replays = max(1, min(5000, math.ceil(args.sample_ms / max(est * calls, 1e-4))))
    # A round: every variant's sample, plus ~1 ms of the host's each (events, switches).
    round_s = len(v.names) * (replays * calls * est + 1.0) / 1e3
    left = budget_s - (time.time() - t0)
    rounds = max(args.min_rounds, min(args.rounds, int(left / round_s)))
    samples = {n: [] for n in v.names}
    for r in range(rounds):
        k = r % len(v.names)
        for name in v.names[k:] + v.names[:k]:
            v.set_state(name)  # graphs replay what they captured; host-issued calls follow the switches
            samples[name].append(time_sample(v.runs[name], replays) / calls)
    torch.cuda.tunable.enable(False)
    cudakit.tunable.enable(False)
    med = {n: statistics.median(s) for n, s in samples.items()}
    row = {"bench": "gemm_interleaved", "shape": shape["name"], "dtype": shape["dtype"], "M": shape["M"],
           "N": shape["N"], "K": shape["K"], "batch": shape["batch"], "layout": shape["layout"],
           "calls_per_sample": replays * calls, "rounds": rounds, "copies": v.copies, "tuning_s": tuning_s,
           "graphed": sorted(v.graphed), "cudakit_chosen": chosen}
    if v.fp8:
        row["fp8"] = "e4m3 x e4m3, tensor-wise float32 scales, bfloat16 out, no fast accumulation; torch._scaled_mm"
    for n, ms in med.items():
        row[f"{n}_ms"] = ms
        row[f"{n}_tflops"] = v.flops / (ms * 1e-3) / 1e12
        row[f"{n}_spread"] = (max(samples[n]) - min(samples[n])) / ms
    best_torch = min(med["torch"], med.get("torch_tunableop", math.inf))
    row["tuned_vs_torch"] = med["torch"] / med["tuned"]
    row["default_vs_torch"] = med["torch"] / med["default"]
    row["tuned_vs_best_torch"] = best_torch / med["tuned"]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=os.path.join(ROOT, "bench", "tunable_shapes.json"))
    ap.add_argument("--extra", action="store_true", help="also the shapes of issue 36 (EXTRA)")
    ap.add_argument("--only", default="", help="comma-separated substrings of shape names")
    ap.add_argument("--rounds", type=int, default=15, help="rounds a shape at most")
    ap.add_argument("--min-rounds", type=int, default=5, help="rounds a shape at least, whatever the budget")
    ap.add_argument("--budget-s", type=float, default=330.0, help="seconds for the whole run, tuning included")
    ap.add_argument("--sample-ms", type=float, default=3.0)
    ap.add_argument("--no-graph", action="store_true", help="issue every call from the host (no CUDA graphs)")
    ap.add_argument("--torch-tunableop", action="store_true")
    ap.add_argument("--json", default="", help="also append the JSON lines to this file")
    args = ap.parse_args()
    deadline = time.time() + args.budget_s
    torch.cuda.tunable.tuning_enable(True)
    if hasattr(torch.cuda.tunable, "write_file_on_exit"):  # absent from some torch releases
        torch.cuda.tunable.write_file_on_exit(False)
    cudakit.tunable.tuning_enable(True)
    cudakit.tunable.write_file_on_exit(False)
    with open(args.shapes) as f:
        shapes = json.load(f) + (EXTRA if args.extra else [])
    if args.only:
        shapes = [s for s in shapes if any(o in s["name"] for o in args.only.split(","))]
    # Note [A warm GPU before the first shape] (bench/tunable_bench.cpp): a second of GEMMs first.
    w = torch.rand(4096, 4096, device="cuda", dtype=torch.bfloat16)
    t0 = time.time()
    while time.time() - t0 < 1.0:
        torch.matmul(w, w)
    torch.cuda.synchronize()
    rows = []
    sink = open(args.json, "a") if args.json else None
    for i, shape in enumerate(shapes):
        try:
            row = bench_shape(shape, args, (deadline - time.time()) / (len(shapes) - i))
        except Exception as e:  # noqa: BLE001 - one shape's failure is reported, the rest still run
            row = {"bench": "gemm_interleaved", "shape": shape["name"], "error": repr(e)[:500]}
        else:
            rows.append(row)
        print(json.dumps(row), flush=True)
        if sink:  # flushed a line at a time: a run cut short by its time limit keeps what it measured
            sink.write(json.dumps(row) + "\n")
            sink.flush()
    print()
    print(interleaved_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
