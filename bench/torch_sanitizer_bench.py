#!/usr/bin/env python3
"""torch.cuda._sanitizer beside bench/sanitizer_bench.cu: the 1000-op eager loop (x = x + 1) with
the sanitizer off and on, us per op. Once enabled, torch's sanitizer cannot be turned off in the
process, so each setting runs in a process of its own. JSON lines of the bench's form."""
import json
import statistics
import subprocess
import sys
import time

OPS = 1000
REPS = 7


def measure(on):
    import torch
    if on:
        # A submodule torch does not import itself (torch 2.11: torch.cuda has no attribute
        # _sanitizer until it is imported).
        import torch.cuda._sanitizer
        torch.cuda._sanitizer.enable_cuda_sanitizer()
    times = []
    for rep in range(REPS + 1):
        x = torch.zeros(1 << 16, device='cuda')
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(OPS):
            x = x + 1
        torch.cuda.synchronize()
        if rep:  # the first is a warm-up
            times.append((time.perf_counter() - start) * 1e6 / OPS)
    print(json.dumps({'bench': 'sanitizer', 'case': 'eager loop, 1000 x (x = x + 1)',
                      'impl': 'torch, sanitizer' if on else 'torch, off',
                      'us_per_op': round(statistics.median(times), 3)}))


def main():
    if len(sys.argv) > 1:
        measure(sys.argv[1] == 'on')
        return
    for setting in ('off', 'on'):
        subprocess.run([sys.executable, __file__, setting], check=True)


if __name__ == '__main__':
    main()
