#!/usr/bin/env python3
"""torch.rand / torch.randn on 2^28 float32 elements in TB/s written, timed like
bench/random_bench.cpp (CUDA events around eight back-to-back calls, so that the GPU never waits
for Python to enqueue the next one; warm-up first), median and best of 30 samples.
Run both in one call on the same GPU to compare:  python3 bench/torch_random_bench.py"""
import json
import statistics
import sys

import torch

N = 1 << 28
BYTES = N * 4
RUNS = 30
DRAWS_PER_SAMPLE = 8


def seconds_per_call(sample):
    """Seconds per call of sample() (DRAWS_PER_SAMPLE calls) between two CUDA events, RUNS
    samples after three untimed ones."""
    for _ in range(3):
        sample()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        sample()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / DRAWS_PER_SAMPLE)
    return times


def time_samples(name, sample):
    """Prints the median and best TB/s written by sample()'s calls."""
    times = seconds_per_call(sample)
    median = statistics.median(times)
    best = min(times)
    print(f"  {name:<22} median {BYTES / median / 1e12:6.3f} TB/s   best {BYTES / best / 1e12:6.3f} TB/s"
          f"   ({median * 1e6:8.1f} us median)")


def measure(name, fn):
    out = torch.empty(N, dtype=torch.float32, device="cuda")

    def sample():
        for _ in range(DRAWS_PER_SAMPLE):
            fn(out)

    time_samples(name, sample)


def measure_graph(name, fn):
    """The same calls captured in one CUDA graph; a sample replays it once."""
    out = torch.empty(N, dtype=torch.float32, device="cuda")
    fn(out)  # warm-up outside the capture, as torch's graph docs ask
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(DRAWS_PER_SAMPLE):
            fn(out)
    time_samples(name, graph.replay)


def sweep():
    """Throughput against size (2^16 to 2^28 float32), one JSON line per point, for the
    performance report's plot; timed as above."""
    for log2n in range(16, 29, 2):
        n = 1 << log2n
        out = torch.empty(n, dtype=torch.float32, device="cuda")
        for name, fn in (("memset", lambda: out.zero_()), ("rand", lambda: torch.rand(n, out=out)),
                         ("randn", lambda: torch.randn(n, out=out))):
            def sample():
                for _ in range(DRAWS_PER_SAMPLE):
                    fn()

            times = seconds_per_call(sample)
            print(json.dumps({"bench": "random", "impl": "torch", "case": name, "elements": n,
                              "TBps": n * 4 / statistics.median(times) / 1e12}))


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: torch benchmarks skipped")
        return 0
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, 2^28 float32, "
          f"{RUNS} samples of {DRAWS_PER_SAMPLE} calls:")
    measure("memset (fill ceiling)", lambda out: out.zero_())
    measure("torch.rand", lambda out: torch.rand(N, out=out))
    measure("torch.randn", lambda out: torch.randn(N, out=out))
    measure("exponential_", lambda out: out.exponential_())
    measure_graph("torch.randn, graph", lambda out: torch.randn(N, out=out))
    measure_graph("torch.rand, graph", lambda out: torch.rand(N, out=out))
    if "--sweep" in sys.argv:
        sweep()
    return 0


if __name__ == "__main__":
    sys.exit(main())
