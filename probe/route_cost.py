#!/usr/bin/env python3
"""On the GPU machine (PYTHONPATH=build-python): the host time of one small product by path, for two
shapes (bf16 [256, 4096] x [4096, 4096]^T, whose GPU time is about torch's host time, and [16, 1024]
x [1024, 1024]^T, whose GPU time is a few microseconds, so the loop measures the host): torch.mm;
cudakit.matmul on torch tensors (TunableOp off, then on with a tuned result); torch.mm under
cudakit.route_torch() with its C++ kernels (libcudakit_torch) and with its Python kernels (TunableOp
off, then on); and the pieces of a Python-routed product (_plan, the bound _gemm call with the
arguments ready). Each: median over 5 rounds of 2,000 calls, a synchronize between rounds only, so
the time per call is the host's while the GPU lags behind."""
import os
import sys

import torch

import cudakit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from python_bench import per_op_us  # noqa: E402  (bench/ is not a package)

M = sys.modules["cudakit.matmul"]


def per_call_us(fn):
    return per_op_us(fn, 2000, rounds=5, between_rounds=torch.cuda.synchronize)


def rows_for(m, k, n):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    wt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
    rows = {"torch.mm": per_call_us(lambda: torch.mm(x, wt))}

    def routed(label):
        for in_cpp in (True, False):
            M._ROUTE_IN_CPP = in_cpp
            if in_cpp and M._native_route() is None:
                continue
            with cudakit.route_torch():
                rows[f"routed torch.mm, {'C++' if in_cpp else 'Python'} kernels, {label}"] = \
                    per_call_us(lambda: torch.mm(x, wt))
        M._ROUTE_IN_CPP = True

    cudakit.tunable.enable(False)
    rows["cudakit.matmul, TunableOp off"] = per_call_us(lambda: cudakit.matmul(x, wt))
    routed("TunableOp off")
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
    routed("TunableOp on (tuned)")
    cudakit.tunable.enable(False)
    return rows


for shape in ((256, 4096, 4096), (16, 1024, 1024)):
    print("bf16 [%d, %d] x [%d, %d]^T" % (shape[0], shape[1], shape[2], shape[1]))
    for label, value in rows_for(*shape).items():
        print(f"  {label:58s} {value:8.2f} us a call")
