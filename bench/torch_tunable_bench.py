#!/usr/bin/env python3
"""torch.matmul (torch._scaled_mm for float8) beside bench/tunable_bench.cpp, on the same shapes
(bench/tunable_shapes.json): without TunableOp, then with torch.cuda.tunable enabled (tuning on,
results in a temporary file). Timed as the C++ side times: CUDA events, inputs cycled through more
than twice the L2 cache, 7 rounds, the median. One JSON line per shape.

    python3 bench/torch_tunable_bench.py [SHAPES.json] [--only NAME_SUBSTRING]
"""
import json
import math
import os
import sys
import tempfile
import time

import torch

DTYPES = {'bfloat16': torch.bfloat16, 'float16': torch.float16, 'float32': torch.float32,
          'float8_e4m3': torch.float8_e4m3fn}


def operands(shape, copies):
    """out[M, N] = A[M, K] @ B[K, N] with the shape file's layouts (see tunable_bench.cpp)."""
    M, N, K, batch = shape['M'], shape['N'], shape['K'], shape['batch']
    dtype = DTYPES[shape['dtype']]
    # Note [Operands of one distribution]
    # Drawn in float32 and rounded to the shape's type, as tunable_bench.cpp fills its own
    # (uniform in [-1, 1), rounded once), so both sides time the same data. torch.rand in
    # bfloat16 followed by `* 2 - 1` in bfloat16 leaves half the values multiples of 2^-7
    # (mantissas mostly zeros), and a tensor-core GEMM's power follows the bits its operands
    # toggle; measured on 4096^3 bfloat16 torch.matmul it moved little, a percent or two either
    # way, zeros included (notes/tunable.md).
    make = torch.float32
    pairs = []
    for _ in range(copies):
        lead = (batch,) if batch > 1 else ()
        if shape['layout'] == 'tn':
            a = (torch.rand(*lead, K, M, device='cuda', dtype=make) * 2 - 1).transpose(-1, -2)
        else:
            a = torch.rand(*lead, M, K, device='cuda', dtype=make) * 2 - 1
        if shape['layout'] == 'linear':
            b = (torch.rand(*lead, N, K, device='cuda', dtype=make) * 2 - 1).transpose(-1, -2)
        else:
            b = torch.rand(*lead, K, N, device='cuda', dtype=make) * 2 - 1
        a, b = a.to(dtype), b.to(dtype)
        pairs.append((a, b))
    return pairs


def runner(shape):
    if shape['dtype'] == 'float8_e4m3':
        one = torch.ones((), device='cuda', dtype=torch.float32)
        return lambda a, b: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    return torch.matmul


def time_ms(fn, pairs, graph=True):
    """Median ms per call. With `graph`, up to 64 calls on the rotating pairs are captured into a
    CUDA graph and its replays timed, as tunable_bench.cpp times its side (Note [Timing decode
    GEMMs from a graph]); where capture fails, the calls are issued one by one."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    i = 0

    def per_call_ms(run, calls):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / calls

    def issue(n):
        nonlocal i
        for _ in range(n):
            a, b = pairs[i % len(pairs)]
            i += 1
            fn(a, b)

    def sample(n):
        return per_call_ms(lambda: issue(n), n)

    sample(2)
    reps = min(max(int(10.0 / max(sample(3), 1e-4)), 3), 20000)  # ~10 ms: Note [Sustained samples]
    timed = sample
    if graph:
        calls = min(reps, 64)
        try:
            g = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for k in range(3):  # warm-up on the capturing stream, as torch's documentation asks
                    fn(*pairs[k % len(pairs)])
            torch.cuda.current_stream().wait_stream(side)
            with torch.cuda.graph(g):
                outs = [fn(*pairs[k % len(pairs)]) for k in range(calls)]  # kept for the replays  # noqa: F841
            replays = max(1, reps // calls)

            def replay_all():
                for _ in range(replays):
                    g.replay()

            def replay_sample(n):  # the graph's replays, n calls' worth
                return per_call_ms(replay_all, replays * calls)
            replay_sample(reps)
            timed = replay_sample
        except RuntimeError as e:
            print(f"torch_tunable_bench: not captured ({str(e)[:120]}): timed from the host", file=sys.stderr)
    samples = sorted(timed(reps) for _ in range(7))
    return samples[len(samples) // 2]


def warm_up_gpu():
    """bfloat16 4096^3 matmuls back to back for a second before the first shape, as
    tunable_bench.cpp does: Note [A warm GPU before the first shape] there."""
    a = torch.rand(4096, 4096, device='cuda', dtype=torch.bfloat16)
    b = torch.rand(4096, 4096, device='cuda', dtype=torch.bfloat16)
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:
        for _ in range(20):
            torch.matmul(a, b)
        torch.cuda.synchronize()


def main():
    args = sys.argv[1:]
    only = ''
    if '--only' in args:
        at = args.index('--only')
        only = args[at + 1]
        del args[at:at + 2]
    shapes = json.load(open(args[0] if args else 'bench/tunable_shapes.json'))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    results = os.path.join(tempfile.mkdtemp(), 'torch_tunableop_results%d.csv')
    warm_up_gpu()
    for shape in shapes:
        if only and only not in shape['name']:
            continue
        size = torch.empty((), dtype=DTYPES[shape['dtype']]).element_size()
        per = size * shape['batch'] * (shape['M'] * shape['K'] + shape['K'] * shape['N'] + shape['M'] * shape['N'])
        pairs = operands(shape, min(max(math.ceil(2 * l2 / per), 1), 32))
        fn = runner(shape)
        try:
            torch.cuda.tunable.enable(False)
            default_ms = time_ms(fn, pairs)
            decode = min(shape['M'], shape['N']) <= 16
            host_issued_ms = time_ms(fn, pairs, graph=False) if decode else None
            torch.cuda.tunable.enable(True)
            torch.cuda.tunable.tuning_enable(True)
            torch.cuda.tunable.set_filename(results)
            tuning_start = time.perf_counter()
            fn(*pairs[0])
            torch.cuda.synchronize()
            tuning_ms = (time.perf_counter() - tuning_start) * 1e3
            tunable_ms = time_ms(fn, pairs)
            torch.cuda.tunable.enable(False)
        except RuntimeError as e:  # a shape torch refuses (e.g. a float8 layout)
            print(json.dumps({'bench': 'tunable', 'impl': 'torch', 'shape': shape['name'], 'error': str(e)[:200]}),
                  flush=True)
            torch.cuda.tunable.enable(False)
            continue
        flops = 2.0 * shape['M'] * shape['N'] * shape['K'] * shape['batch']
        print(json.dumps({'bench': 'tunable', 'impl': 'torch', 'shape': shape['name'], 'dtype': shape['dtype'],
                          'default_ms': default_ms, 'tunableop_ms': tunable_ms, 'default_ms_host_issued': host_issued_ms,
                          'default_tflops': flops / default_ms * 1e-9, 'tunableop_tflops': flops / tunable_ms * 1e-9,
                          'tunableop_first_call_ms': tuning_ms}), flush=True)
        del pairs
        torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
