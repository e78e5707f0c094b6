#!/usr/bin/env python3
"""torch.cuda.nvtx beside bench/nvtx_bench.cpp: ns per range_push+range_pop pair from Python,
with no NVTX tool attached (run outside Nsight). Prints JSON lines of the same form."""
import json
import os
import statistics
import time

PAIRS = 200_000
REPS = 7


def ns_per_pair(push, pop):
    times = []
    for _ in range(REPS):
        start = time.perf_counter_ns()
        for _ in range(PAIRS):
            push('bench.range')
            pop()
        times.append((time.perf_counter_ns() - start) / PAIRS)
    return statistics.median(times)


def main():
    if os.environ.get('NVTX_INJECTION64_PATH'):
        raise SystemExit('NVTX_INJECTION64_PATH is set: this measures the cost with no tool; unset it')
    import torch
    nvtx = torch.cuda.nvtx
    print(json.dumps({'bench': 'nvtx', 'case': 'push+pop, message', 'impl': 'torch',
                      'ns_per_pair': round(ns_per_pair(nvtx.range_push, nvtx.range_pop), 2)}))

    def scoped():
        with nvtx.range('bench.range'):
            pass
    times = []
    for _ in range(REPS):
        start = time.perf_counter_ns()
        for _ in range(PAIRS):
            scoped()
        times.append((time.perf_counter_ns() - start) / PAIRS)
    print(json.dumps({'bench': 'nvtx', 'case': 'ScopedRange', 'impl': 'torch',
                      'ns_per_pair': round(statistics.median(times), 2)}))


if __name__ == '__main__':
    main()
