#!/usr/bin/env python3
"""torch's side of bench/graph_bench.cu, measured the same way in the same run:
replay() host time of an 8-kernel graph and of a graph drawing random numbers, GPU time per
kernel of a replayed 1000-kernel graph of tiny dependent kernels, and what torch.profiler adds
to the GPU time of replays of 1000 kernels (tiny, ~10 us, ~50 us; torch.cuda._sleep spins).
Run:  python3 bench/torch_graph_bench.py [--host-times]"""
import statistics
import sys
import time

import torch


def capture(body):
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        body()  # warm-up outside the graph, as torch's docs ask
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        body()
    torch.cuda.synchronize()
    return g


def replay_host_us(g, queued=False):
    """Each timed replay on an idle stream, or a synchronize every 50 (`queued`): Note [Timing a
    replay on an idle stream] in bench/graph_bench.cu."""
    for _ in range(50):
        g.replay()
    torch.cuda.synchronize()
    us = []
    for i in range(400):
        t0 = time.perf_counter()
        g.replay()
        us.append((time.perf_counter() - t0) * 1e6)
        if not queued or i % 50 == 49:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return statistics.median(us)


def replay_gpu_ms(g, replays):
    best = float("inf")
    for _ in range(5):
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(replays):
            g.replay()
        end.record()
        end.synchronize()
        best = min(best, begin.elapsed_time(end))
    return best


# Note [One graph, two replayers]
# The report's replay row compares cudakit's C++ replay of its own 8-kernel graph (graph_bench.cu,
# its kernels cudakit's) with torch's replay, from Python, of torch's: two graphs, two processes,
# and the lent machines run a process at one of a few speeds for its life (the same binary's
# replay host time differs by half between processes: notes/performance-rows.md). Here one
# process captures the same eight torch kernels into a torch.cuda.CUDAGraph and into a cudakit
# CUDAGraph and replays both on one stream, both from Python, in alternate rounds, each replay on
# an idle stream: the two replay paths alone, one-to-one (bench/report.py takes this row for the
# comparison where it is present).
def same_graph_in_turn(chain, rounds=20, per_round=50):
    """One line per side (See Note [One graph, two replayers]); a line saying why where cudakit's
    module is absent or the capture fails, and torch's other rows go on."""
    try:
        import cudakit
    except ImportError:
        print("same 8 torch kernels in turn: skipped (the cudakit module is not importable)")
        return
    try:
        body = chain(8)
        theirs = capture(body)
        ours = cudakit.CUDAGraph()
        body()  # warm-up outside the capture, as capture() does
        torch.cuda.synchronize()
        with cudakit.graph(ours):
            body()
        torch.cuda.synchronize()
        side = torch.cuda.Stream()

        def timed(replay):
            us = []
            for _ in range(per_round):
                t0 = time.perf_counter()
                replay()
                us.append((time.perf_counter() - t0) * 1e6)
                side.synchronize()
            return us

        # Both replay on `side`, current for torch and for cudakit, each through its bound method.
        a, b = [], []
        with torch.cuda.stream(side), cudakit.stream(cudakit.ExternalStream(side.cuda_stream)):
            for _ in range(50):
                theirs.replay()
                ours.replay()
            side.synchronize()
            for r in range(rounds):
                for g in ((ours, theirs) if r % 2 == 0 else (theirs, ours)):
                    (a if g is ours else b).extend(timed(g.replay))
    except Exception as e:  # a failure here must not cost torch's other rows
        print(f"same 8 torch kernels in turn: skipped ({type(e).__name__}: {e})")
        return
    n = rounds * per_round
    print(f"replay() host time, the same 8 torch kernels, one process in turn: {statistics.median(a):6.2f} us (median of {n})")
    print(f"torch replay() host time, the same 8 torch kernels, one process in turn: {statistics.median(b):6.2f} us (median of {n})")


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: torch graph benchmark skipped")
        return
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")

    def chain(n):
        return lambda: [counter.add_(1) for _ in range(n)]

    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    eight = capture(chain(8))
    print(f"torch replay() host time, 8-kernel graph:                     {replay_host_us(eight):6.2f} us (median of 400)")
    print(f"torch replay() host time, 8-kernel graph, up to 50 queued:    {replay_host_us(eight, True):6.2f} us (median of 400)")
    out = torch.empty(4096, device="cuda")
    draws = capture(lambda: out.uniform_())
    print(f"torch replay() host time, graph drawing random numbers:       {replay_host_us(draws):6.2f} us (median of 400)")
    same_graph_in_turn(chain)
    if sys.argv[1:2] == ["--host-times"]:  # the two host-time rows alone (scripts/device-bench.sh)
        return
    thousand = capture(chain(1000))
    replay_gpu_ms(thousand, 1)
    print(f"torch 1000-kernel replay, GPU time per tiny dependent kernel: {replay_gpu_ms(thousand, 10) * 1000 / 10000:6.3f} us")

    # Cycles for ~10 and ~50 us spins at the clock measured here.
    probe = capture(lambda: [torch.cuda._sleep(100_000) for _ in range(10)])
    us_per_kcycle = replay_gpu_ms(probe, 3) * 1000 / 30 / 100
    for label, body in (("tiny", chain(1000)),
                        ("~10 us", lambda: [torch.cuda._sleep(int(10 / us_per_kcycle * 1000)) for _ in range(1000)]),
                        ("~50 us", lambda: [torch.cuda._sleep(int(50 / us_per_kcycle * 1000)) for _ in range(1000)])):
        g = capture(body)
        replay_gpu_ms(g, 1)
        base = replay_gpu_ms(g, 3)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            g.replay()  # CUPTI's first-use setup stays out of the measurement
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            profiled = replay_gpu_ms(g, 3)
        print(f"torch profiling 3 replays x 1000 kernels ({label:>6}): {base:8.3f} ms -> {profiled:8.3f} ms "
              f"({(profiled / base - 1) * 100:+.1f}%, {(profiled - base) * 1000 / 3000:.2f} us per kernel)")

    x = torch.randn(1024, 1024, device="cuda")
    seed = capture(lambda: torch.relu(x @ x.t()) @ x)
    # Five alternated rounds, the median round's ratio (Note [An overhead of about one percent] in
    # bench/graph_bench.cu).
    replay_gpu_ms(seed, 5)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        seed.replay()
    bases, profileds, ratios = [], [], []
    for _ in range(5):
        bases.append(replay_gpu_ms(seed, 100))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            profileds.append(replay_gpu_ms(seed, 100))
        ratios.append(profileds[-1] / bases[-1])
    print(f"torch profiling 100 replays of the seed workflow's graph: {statistics.median(bases):8.3f} ms -> "
          f"{statistics.median(profileds):8.3f} ms ({(statistics.median(ratios) - 1) * 100:+.2f}%), median of 5 rounds")


if __name__ == "__main__":
    main()
