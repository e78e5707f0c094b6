#!/usr/bin/env python3
"""The Python module against its peers, in one run on one GPU: DLPack exchange per tensor each
way (cudakit <-> torch, beside torch <-> CuPy), torch.empty(1 MiB) + del under cudakit's allocator
and under torch's own (each in a process of its own: torch takes an allocator before its first
allocation), and the call overhead of bound functions. Prints one JSON line per case,
{"bench": "python", "impl": "cudakit", "case", "value", "unit", "peer", "peer_value"} (and the
peer's own line), then a table of cudakit against each peer; bench/report.py reads the lines.

    PYTHONPATH=build-python python3 bench/python_bench.py [--calls]

--calls: the per-call rows alone (DLPack, bound calls), without the allocator's processes and the
workloads (a minute instead of several).
"""

import json
import os
import statistics
import subprocess
import sys
import time

ROUNDS = 7
BOUND_CALL_TARGET_US = 0.1
# Of each kind, for torch.empty + del (allocations()); CUDAKIT_PY_BENCH_PROCESSES takes fewer where
# a call's time is short (each process imports torch: seconds each on the lent machines).
ALLOCATION_PROCESSES = int(os.environ.get("CUDAKIT_PY_BENCH_PROCESSES", "7"))
# A process runs at the machine's full speed when its pure-Python loop is within this factor of
# the fastest such loop of the run (Note [A process's own speed]).
FULL_SPEED_FACTOR = 1.25


def per_op_us(fn, n, rounds=ROUNDS, between_rounds=None):
    """The median over `rounds` of the mean time of `n` calls, in microseconds; `between_rounds`
    (untimed), where given, runs after the warm-up call and after each round."""
    fn()
    samples = []
    for _ in range(rounds):
        if between_rounds is not None:
            between_rounds()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n * 1e6)
    if between_rounds is not None:
        between_rounds()
    return statistics.median(samples)


def paired_us(fn, peer_fn, n, rounds=21, enter=(None, None)):
    """Medians of the mean time of `n` calls of `fn` and of `peer_fn`, in microseconds, their rounds
    alternated (Note [Two exchanges timed in turns]); `enter`'s two callables, where given, run
    untimed before each of `fn`'s and `peer_fn`'s blocks (and warm-up calls)."""
    sides = ((fn, [], enter[0]), (peer_fn, [], enter[1]))
    for f, _, before in sides:
        if before is not None:
            before()
        f()
    for _ in range(rounds):
        for f, samples, before in sides:
            if before is not None:
                before()
            start = time.perf_counter()
            for _ in range(n):
                f()
            samples.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(sides[0][1]), statistics.median(sides[1][1])


# Note [Two exchanges timed in turns]
# One process timed torch.from_dlpack of the same CuPy array at values up to half apart in three
# places of one run, seconds apart (notes/python.md): the process's speed drifts (Note [A
# process's own speed]) by more than the gap between two producers. An exchange and its peer are
# therefore timed in alternate rounds of a few thousand calls, so a slow phase of the process
# falls on both, and each side's median is taken.


# The pluggable path's floor: a cache that does next to nothing (bench/torch/pass_through_cache.cpp),
# built with the bundle.
PASS_THROUGH_CACHE = os.environ.get("CUDAKIT_PASS_THROUGH_CACHE", "gpu-bundle/bin/libpass_through_cache.so")


def python_loop_us():
    """The process's own speed: a list made and dropped in pure Python, us per iteration (Note [A
    process's own speed])."""
    def python_loop():
        x = [1] * 8
        del x
    return per_op_us(python_loop, 200000)


# Note [A process's own speed]
# On the lent VMs a process runs torch.empty + del at one of two speeds, about twice apart, for
# its whole life, whichever allocator (torch's own, cudakit's, a pass-through cache). In a run
# where each process also timed two loops that touch no CUDA allocator (a list made and dropped
# in pure Python, torch.empty(16) on the CPU), most slow processes were slow in those too, so the
# process, not its allocator, ran slow: the vCPU it got, not anything the allocator does. A few
# processes were slow in the CUDA pair alone with fast loops, under torch's own allocator and the
# pass-through alike (the figures: notes/python.md).
# So each process reports its pair time beside its pure-Python loop, and the table gives the
# median over all processes and over those that ran at the machine's full speed, the ones whose
# loop is within FULL_SPEED_FACTOR of the run's fastest: a comparison of allocators, not of the
# processes' luck. The training and serving workloads, one process per allocator, are taken from
# a pair of processes whose loops match (workload_pair).
def allocation_child(which):
    """Prints, as JSON, the time of torch.empty(1 MiB) + del with `which` allocator (cudakit's or
    torch's own) and the process's own speed: a pure-Python loop and torch.empty(16) on the CPU, which no CUDA
    allocator serves (Note [A process's own speed])."""
    if which == "cudakit":
        import cudakit.torch
        cudakit.torch.use_cudakit_allocator()
    import torch
    torch.empty(1, device="cuda")

    def step():
        x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
        del x

    def cpu_tensor():
        x = torch.empty(16)
        del x

    print(json.dumps({"pair_us": per_op_us(step, 20000), "python_loop_us": python_loop_us(),
                      "cpu_tensor_us": per_op_us(cpu_tensor, 20000)}))


# Note [The pluggable path's floor in turns]
# cudakit's allocator and the pass-through cache both sit behind torch's CUDAPluggableAllocator,
# and torch takes one allocator per process before its first allocation, so their torch.empty +
# del were timed in processes of their own; at this row's scale (tens of ns of the allocator in
# about 1.4 us of torch) the processes' own speeds differ by as much as the allocators do (Note [A
# process's own speed]). The pass-through library also exports turns_alloc and turns_free, which
# call one of two pairs of functions, its own or a bound one (cudakit_torch_malloc and
# cudakit_torch_free, by address), through the same pointers: one process installs those, binds
# cudakit's pair, and times the two sides in alternate rounds. Both pay the one indirect call; the
# switch is refused while the side serving has live allocations, so every free reaches the
# allocator that made its block. The pass-through cache does next to nothing an allocator must
# (no streams, no statistics, no splitting, no record_stream): it is the path's floor, so the row
# gives it as the row's ceiling (cudakit's share of it), while the peer of cudakit's allocator in
# torch is torch's own, in processes of their own (the rows above it).
def allocation_turns_child(rounds=21, n=20000):
    """Prints, as JSON, torch.empty(1 MiB) + del with cudakit's allocator and with the pass-through
    cache behind one pluggable allocator in this process, timed in alternate rounds (Note [The
    pluggable path's floor in turns]): the medians, and the process's own speed."""
    import ctypes

    import cudakit.torch
    import torch
    library = os.path.abspath(PASS_THROUGH_CACHE)
    allocator = torch.cuda.memory.CUDAPluggableAllocator(library, "turns_alloc", "turns_free")
    torch.cuda.memory.change_current_allocator(allocator)
    turns = ctypes.CDLL(library)
    ours = ctypes.CDLL(cudakit.torch.allocator_library())
    address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value
    turns.turns_bind(ctypes.c_void_p(address(getattr(ours, cudakit.torch.MALLOC_SYMBOL))),
                     ctypes.c_void_p(address(getattr(ours, cudakit.torch.FREE_SYMBOL))))

    def use(side):
        if turns.turns_use(side) != 0:
            raise RuntimeError(f"turns_use({side}) refused: the side serving has live allocations")

    def step():
        x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
        del x

    for side in (0, 1):
        use(side)
        for _ in range(n):
            step()
    ours, floor = paired_us(step, step, n, rounds, enter=(lambda: use(1), lambda: use(0)))
    use(0)
    print(json.dumps({"cudakit_us": ours, "pass_through_us": floor, "python_loop_us": python_loop_us()}))


def workload_child(kind, which):
    """Runs `kind` ("train": training steps of a small transformer; "serve": a serving loop of
    requests of varied lengths) with `which` allocator; prints one JSON object: the results'
    checksum (equal under both allocators), the median ms per step or request, and the peak
    reserved bytes (torch's own statistics for torch's allocator, cudakit's for cudakit's)."""
    if which == "cudakit":
        import cudakit
        import cudakit.torch
        cudakit.torch.use_cudakit_allocator()
    import torch
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True,
                                             dropout=0.0, device="cuda")
    model = torch.nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False).cuda()
    generator = torch.Generator(device="cuda").manual_seed(1)
    times, checksum = [], 0.0
    if kind == "train":
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for step in range(40):
            x = torch.randn(32, 256, 512, device="cuda", generator=generator)
            torch.cuda.synchronize()
            start = time.perf_counter()
            loss = model(x).pow(2).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
            checksum += loss.item()
    else:
        model.eval()
        lengths = torch.randint(16, 1024, (200,), generator=torch.Generator().manual_seed(2)).tolist()
        batches = torch.randint(1, 17, (200,), generator=torch.Generator().manual_seed(3)).tolist()
        with torch.inference_mode():
            for length, batch in zip(lengths, batches):
                x = torch.randn(batch, length, 512, device="cuda", generator=generator)
                torch.cuda.synchronize()
                start = time.perf_counter()
                y = model(x)
                checksum += y[:, -1].float().pow(2).sum().item()  # layer-normed: about batch x 512
                times.append((time.perf_counter() - start) * 1e3)
                del x, y
    times = times[5:]  # warm-up: cuBLAS handles, first allocations
    if which == "cudakit":
        peak = cudakit.memory_stats()["reserved_bytes.all.peak"]
    else:
        peak = torch.cuda.max_memory_reserved()
    print(json.dumps({"checksum": checksum, "ms": statistics.median(times), "peak_reserved": peak,
                      "python_loop_us": python_loop_us()}))


def child(args, timeout):
    """The last line this script prints when run with `args` in a process of its own; None (its
    stderr's end printed) when that process fails."""
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        print(out.stderr[-3000:], file=sys.stderr)
        return None
    return out.stdout.strip().splitlines()[-1]


def workload(kind, which):
    line = child(["--workload", kind, which], 600)
    return None if line is None else json.loads(line)


WORKLOAD_ATTEMPTS = 3  # pairs of processes at most, for one pair at the same speed


def speed_mismatch(mine, theirs):
    """How far apart two processes' own speeds were: the ratio of their pure-Python loops, >= 1."""
    a, b = mine["python_loop_us"], theirs["python_loop_us"]
    return max(a, b) / min(a, b)


def workload_pair(kind, attempts=WORKLOAD_ATTEMPTS):
    """(cudakit's figures, torch's) for `kind` from a pair of processes that ran at the same speed
    (their pure-Python loops within FULL_SPEED_FACTOR, Note [A process's own speed]): a serving
    loop of small batches is partly host-bound, and one process at half speed would read as the
    allocator's loss. Up to `attempts` pairs; the closest one when none matches. (None, None) when
    a process fails."""
    best = None
    for _ in range(attempts):
        mine, theirs = workload(kind, "cudakit"), workload(kind, "torch")
        if mine is None or theirs is None:
            return None, None
        if best is None or speed_mismatch(mine, theirs) < speed_mismatch(*best):
            best = (mine, theirs)
        if speed_mismatch(*best) <= FULL_SPEED_FACTOR:
            break
    print(f"python_bench: {kind}: processes' pure-Python loops {best[0]['python_loop_us']:.3f} us (cudakit's) and "
          f"{best[1]['python_loop_us']:.3f} us (torch's)", file=sys.stderr)
    return best


def allocation_process(which):
    line = child(["--allocation", which], 300)
    return None if line is None else json.loads(line)


TURNS_PROCESSES = 3


def allocation_turns(processes=TURNS_PROCESSES):
    """(cudakit's us, the pass-through cache's us) for torch.empty + del timed in turns in one process
    (Note [The pluggable path's floor in turns]): the two figures of the process whose ratio is the
    median over `processes` processes (each side's median over the processes would pair figures of
    different processes, whose speeds differ more than the sides do); None when one fails. Each
    process's figures go to stderr."""
    figures = []
    for _ in range(processes):
        line = child(["--allocation-turns"], 300)
        if line is None:
            return None
        figures.append(json.loads(line))
    print("python_bench: torch.empty(1 MiB) + del in turns, per process (cudakit us / pass-through us / "
          "pure-Python loop us): " + "  ".join(f"{p['cudakit_us']:.3f}/{p['pass_through_us']:.3f}/"
                                               f"{p['python_loop_us']:.3f}" for p in figures), file=sys.stderr)
    return median_ratio_process(figures)


def median_ratio_process(figures):
    """(cudakit_us, pass_through_us) of the process whose pass-through/cudakit ratio is the median
    (the lower middle one of an even count)."""
    ranked = sorted(figures, key=lambda p: p["pass_through_us"] / p["cudakit_us"])
    middle = ranked[(len(ranked) - 1) // 2]
    return middle["cudakit_us"], middle["pass_through_us"]


def full_speed(processes, factor=FULL_SPEED_FACTOR):
    """The processes (dicts of allocation_child) whose pure-Python loop ran within `factor` of the
    fastest one's (Note [A process's own speed])."""
    if not processes:
        return []
    fastest = min(p["python_loop_us"] for p in processes)
    return [p for p in processes if p["python_loop_us"] <= factor * fastest]


def allocations(kinds, processes=ALLOCATION_PROCESSES):
    """Each kind's torch.empty + del over `processes` processes, the kinds alternating: the median
    of all, the median of those at the machine's full speed (with their count) and the fastest.
    One process each would compare the processes' luck as much as the allocators (Note [A
    process's own speed]). Each process's figures go to stderr."""
    figures = {kind: [] for kind in kinds}
    for _ in range(processes):
        for kind in kinds:
            value = allocation_process(kind)
            if value is not None:
                figures[kind].append(value)
    fast = {id(p) for p in full_speed([p for values in figures.values() for p in values])}
    for kind, values in figures.items():
        print(f"python_bench: torch.empty(1 MiB) + del, {kind}, per process (pair us / pure-Python loop us / "
              "CPU torch.empty us, * at full speed): "
              + "  ".join(f"{p['pair_us']:.2f}/{p['python_loop_us']:.3f}/{p['cpu_tensor_us']:.2f}"
                          f"{'*' if id(p) in fast else ''}" for p in values), file=sys.stderr)

    def summary(values):
        pairs = [p["pair_us"] for p in values]
        at_speed = [p["pair_us"] for p in values if id(p) in fast]
        return {"median": statistics.median(pairs) if pairs else None,
                "full_speed": statistics.median(at_speed) if at_speed else None,
                "full_speed_count": len(at_speed), "fastest": min(pairs) if pairs else None}
    return {kind: summary(values) for kind, values in figures.items()}


def allocation_and_workload_cases():
    """The rows of torch.empty + del under each allocator and of the training and serving workloads,
    each in processes of their own, and the row of torch.empty + del beside the pluggable path's
    floor in one process: (rows, rows with a ceiling), each in main()'s form."""
    cases, limits = [], []
    allocation = allocations(["cudakit", "torch"])
    for key, which in (("median", f"median of {ALLOCATION_PROCESSES} processes"),
                       ("full_speed", "median of the processes at the machine's full speed ({counts} of "
                                      f"{ALLOCATION_PROCESSES})"),
                       ("fastest", f"the fastest of {ALLOCATION_PROCESSES} processes")):
        if allocation["torch"][key] is None or allocation["cudakit"][key] is None:
            continue
        counts = f"{allocation['cudakit']['full_speed_count']} and {allocation['torch']['full_speed_count']}"
        cases.append((f"torch.empty(1 MiB) + del, {which.format(counts=counts)}, cudakit's allocator in torch "
                      "(peer: torch's own)", allocation["cudakit"][key], "torch", allocation["torch"][key]))
    if os.path.exists(PASS_THROUGH_CACHE):
        turns = allocation_turns()
        if turns is not None:
            # The floor is the row's ceiling, not its peer (Note [The pluggable path's floor in turns]).
            limits.append((f"torch.empty(1 MiB) + del through cudakit's allocator in torch, one process, in "
                           f"alternate rounds with the path's floor (the process of the median ratio of "
                           f"{TURNS_PROCESSES})", turns[0], None, None,
                           "the pluggable path's floor: a pass-through cache", turns[1]))
    else:
        print(f"python_bench: no {PASS_THROUGH_CACHE}: the pluggable path's floor is not measured", file=sys.stderr)
    for kind, unit_name in (("train", "a training step (6-layer transformer, 32x256x512, AdamW)"),
                            ("serve", "a serving request (the same model, eval, batch 1-16, 16-1023 tokens)")):
        mine, theirs = workload_pair(kind)
        if mine is None or theirs is None:
            continue
        same = abs(mine["checksum"] - theirs["checksum"]) <= 1e-6 * max(1.0, abs(theirs["checksum"]))
        print(f"python_bench: {kind}: results {'equal' if same else 'DIFFER'} under the two allocators "
              f"(checksums {mine['checksum']!r} and {theirs['checksum']!r})", file=sys.stderr)
        print(json.dumps({"bench": "python", "impl": "check", "case": f"{kind}_results_equal", "value": int(same),
                          "unit": "bool"}), flush=True)
        cases.append((f"{unit_name}, cudakit's allocator in torch (peer: torch's own)",
                      mine["ms"], "torch", theirs["ms"], "ms"))
        cases.append((f"{unit_name}: peak reserved (peer: torch's own)",
                      mine["peak_reserved"] / 2**20, "torch", theirs["peak_reserved"] / 2**20, "MiB"))
    return cases, limits


def main(quick=False):
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
    # capsule and the consumer's object made and dropped; each pair timed in turns (Note [Two
    # exchanges timed in turns]).
    def pair(case, fn, peer, peer_fn, n=5000):
        if peer_fn is None:
            return (case, per_op_us(fn, n), peer, None)
        ours, theirs = paired_us(fn, peer_fn, n)
        return (case, ours, peer, theirs)

    from cudakit.torch import from_torch, to_torch
    cases = [
        pair("DLPack into torch: torch.from_dlpack(x), x cudakit's (peer: CuPy's)",
             lambda: torch.from_dlpack(a), "cupy", (lambda: torch.from_dlpack(c)) if cupy else None),
        pair("DLPack out of torch: from_dlpack(torch tensor) into cudakit (peer: into CuPy)",
             lambda: cudakit.from_dlpack(t), "cupy", (lambda: cupy.from_dlpack(t)) if cupy else None),
        pair("DLPack into torch, fast: cudakit.torch.to_torch(x) (peer: torch.from_dlpack of CuPy's)",
             lambda: to_torch(a), "cupy", (lambda: torch.from_dlpack(c)) if cupy else None),
        pair("DLPack out of torch, fast: cudakit.torch.from_torch(t) (peer: cupy.from_dlpack(t))",
             lambda: from_torch(t), "cupy", (lambda: cupy.from_dlpack(t)) if cupy else None),
    ]
    if cupy:
        cases.append(pair("DLPack out of CuPy: from_dlpack(cupy array) into cudakit (peer: into torch)",
                          lambda: cudakit.from_dlpack(c), "torch", lambda: torch.from_dlpack(c)))
        # torch.from_dlpack's parts, each beside CuPy's (what the first row is made of): the
        # producer's two calls as torch makes them, and torch's import of the capsule.
        stream = 1 if torch.cuda.current_stream().cuda_stream == 0 else torch.cuda.current_stream().cuda_stream
        asked = {"max_version": (1, 0), "stream": stream}
        try:
            c.__dlpack__(**asked)
        except TypeError:  # a CuPy before DLPack 1.0: torch asks it again without max_version
            asked = {"stream": stream}
        cases += [
            pair("DLPack into torch, part: x.__dlpack_device__() (peer: CuPy's)",
                 a.__dlpack_device__, "cupy", c.__dlpack_device__, 20000),
            pair("DLPack into torch, part: x.__dlpack__(max_version=(1, 0), stream=torch's), capsule dropped "
                 "(peer: CuPy's)", lambda: a.__dlpack__(max_version=(1, 0), stream=stream), "cupy",
                 lambda: c.__dlpack__(**asked), 20000),
            pair("DLPack into torch, part: torch._C._from_dlpack(x.__dlpack__(...)) and del (peer: CuPy's)",
                 lambda: torch._C._from_dlpack(a.__dlpack__(max_version=(1, 0), stream=stream)), "cupy",
                 lambda: torch._C._from_dlpack(c.__dlpack__(**asked)), 20000),
        ]
    limits = []  # rows with a ceiling: (case, ours, peer, theirs, ceiling's name, ceiling)
    if not quick:
        more, more_limits = allocation_and_workload_cases()
        cases += more
        limits += more_limits
    cases.append(("a bound function that does nothing (peer: torch._C._cuda_isInBadFork)",
                  per_op_us(cudakit._cudakit._noop, 200000), "torch", per_op_us(torch._C._cuda_isInBadFork, 200000)))
    cases.append(("current_device()", per_op_us(cudakit.current_device, 200000),
                  "torch", per_op_us(torch.cuda.current_device, 200000)))
    # Names bound for torch.cuda's parity: each a bound call over its C++ call.
    cases.append(("get_sync_debug_mode()", per_op_us(cudakit.get_sync_debug_mode, 200000),
                  "torch", per_op_us(torch.cuda.get_sync_debug_mode, 200000)))
    cases.append(("is_initialized()", per_op_us(cudakit.is_initialized, 200000),
                  "torch", per_op_us(torch.cuda.is_initialized, 200000)))
    # The target: a bound call at most BOUND_CALL_TARGET_US over the C++ call it makes (Note [A bound
    # call over its C++ call] in python/src/module.cpp), beside torch's bound call that does nothing
    # (its binding's own cost, as its C++ call is empty).
    torch_floor = per_op_us(torch._C._cuda_isInBadFork, 200000)
    for name in ("current_device", "get_sync_debug_mode", "is_initialized"):
        bound = per_op_us(getattr(cudakit, name), 200000)
        cpp = statistics.median(cudakit._cudakit._cpp_call_us(name, 200000) for _ in range(ROUNDS))
        limits.append((f"{name}(): the bound call over its C++ call (peer: torch._C._cuda_isInBadFork, torch's "
                       "bound call that does nothing)", bound - cpp, "torch", torch_floor,
                       f"target: {BOUND_CALL_TARGET_US} us over the C++ call", BOUND_CALL_TARGET_US))
    region = cudakit.graph_annotations.mark_kernels("bench")

    def enter_exit():
        with region:
            pass

    torch_marks = getattr(getattr(torch.cuda, "graph_annotations", None), "mark_kernels", None)

    def torch_enter_exit():
        with torch_marks("bench"):
            pass

    cases.append(("a mark_kernels region entered and left outside a capture", per_op_us(enter_exit, 200000),
                  "torch", None if torch_marks is None else per_op_us(torch_enter_exit, 200000)))

    cases = [c if len(c) == 5 else (*c, "us") for c in cases]
    ceilings = {case: (limit, limit_value) for case, _, _, _, limit, limit_value in limits}
    cases += [(case, ours, peer, theirs, "us") for case, ours, peer, theirs, _, _ in limits]
    for case, ours, peer, theirs, unit in cases:
        if ours is None:
            continue
        line = {"bench": "python", "impl": "cudakit", "case": case, "value": ours, "unit": unit,
                "peer": peer if theirs is not None else None, "peer_value": theirs}
        if case in ceilings:
            line["limit"], line["limit_value"] = ceilings[case]
        print(json.dumps(line), flush=True)
        if theirs is not None:
            print(json.dumps({"bench": "python", "impl": peer, "case": case, "value": theirs, "unit": unit}),
                  flush=True)
    print()
    print("| case | cudakit | peer | peer's | cudakit vs peer |")
    print("| --- | --- | --- | --- | --- |")
    for case, ours, peer, theirs, unit in cases:
        if ours is None:
            continue
        ratio = f"{theirs / ours:.2f}x" if theirs else ""
        peer_cells = f"{peer} | {theirs:.3g} {unit}" if theirs else " | "
        print(f"| {case} | {ours:.3g} {unit} | {peer_cells} | {ratio} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--allocation"]:
        allocation_child(sys.argv[2])
    elif sys.argv[1:2] == ["--allocation-turns"]:
        allocation_turns_child()
    elif sys.argv[1:2] == ["--workload"]:
        workload_child(sys.argv[2], sys.argv[3])
    else:
        main(quick=sys.argv[1:2] == ["--calls"])
