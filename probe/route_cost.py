#!/usr/bin/env python3
"""On the GPU machine (PYTHONPATH=build-python): the host time of one small product, bf16 [256, 4096]
x [4096, 4096]^T, by path: torch.mm; cudakit.matmul on torch tensors (TunableOp off, then on with
a tuned result); torch.mm under cudakit.route_torch() (TunableOp off, then on); and the pieces of
a routed product (_plan, the bound _gemm call with the arguments ready). Each: median over 5 rounds
of 2,000 calls, a synchronize between rounds only, so the host time per call is what the loop
measures while the GPU lags behind."""
import os
import sys

import torch

import cudakit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from python_bench import per_op_us  # noqa: E402  (bench/ is not a package)

M = sys.modules["cudakit.matmul"]


def per_call_us(fn):
    return per_op_us(fn, 2000, rounds=5, between_rounds=torch.cuda.synchronize)


x = torch.randn(256, 4096, device="cuda", dtype=torch.bfloat16)
w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
wt = w.t()
rows = {}
rows["torch.mm"] = per_call_us(lambda: torch.mm(x, wt))
cudakit.tunable.enable(False)
rows["cudakit.matmul, TunableOp off"] = per_call_us(lambda: cudakit.matmul(x, wt))
with cudakit.route_torch():
    rows["routed torch.mm, TunableOp off"] = per_call_us(lambda: torch.mm(x, wt))
out, args = M._plan(x, wt, None, None, None, None, None, None)
rows["_plan alone"] = per_call_us(lambda: M._plan(x, wt, None, None, None, None, None, None))
rows["_cudakit._gemm alone, TunableOp off"] = per_call_us(lambda: M._cudakit._gemm(*args))
cudakit.tunable.enable(True)
cudakit.tunable.tuning_enable(True)
cudakit.matmul(x, wt)
torch.cuda.synchronize()
cudakit.tunable.tuning_enable(False)
rows["cudakit.matmul, TunableOp on (tuned)"] = per_call_us(lambda: cudakit.matmul(x, wt))
rows["_cudakit._gemm alone, TunableOp on (tuned)"] = per_call_us(lambda: M._cudakit._gemm(*args))
with cudakit.route_torch():
    rows["routed torch.mm, TunableOp on (tuned)"] = per_call_us(lambda: torch.mm(x, wt))
cudakit.tunable.enable(False)
for k, v in rows.items():
    print(f"{k:45s} {v:8.2f} us a call")
