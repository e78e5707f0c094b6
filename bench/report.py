#!/usr/bin/env python3
"""The performance report: every area's figures beside its peers, from one run of
scripts/device-bench.sh (the files it leaves in its output folder).

    python3 bench/report.py build OUT_DIR [--commit C] [--date D] [--area-commit AREA=C ...]
        writes OUT_DIR/report.json, OUT_DIR/report.md and OUT_DIR/plots/*.png (the plots need
        matplotlib; without it the report says so and has none); --area-commit names an area
        whose files come from another call of the same day on the same machine type, at commit C
        (a run split over two device calls, one area measured again after a change)
    python3 bench/report.py compare A.json B.json [--noise 0.05]
        prints the rows whose figures moved between two reports beyond their noise
    python3 bench/report.py performance REPORT.json [--write docs/performance.md]
        the performance report's tables, generated from one report (REPORT.json's path from the
        repository root, e.g. docs/perf/<run>/report.json); --write puts them between the
        "performance report" markers of that document, its links relative to it, instead of
        printing them

report.json (schema "cudakit-bench-report/1"; docs/gpu-testing.md says the same):
    {"schema", "commit", "date", "machine": {"gpu", "driver", "cuda", "torch", "cupy", ...},
     "areas": [{"name", "title", "rows": [ROW...], "plots": ["plots/NAME.png"...], "notes": [...],
                "commit" (only where it is not the report's)}],
     "skipped": [{"part", "why"}],
     "behind": [{"area", "case", "vs_peer", "bound"}]}   (rows under 0.98 of their peer)
    ROW = {"case", "unit", "higher_is_better", "cudakit", "peer", "peer_value", "vs_peer",
           "limit", "limit_value", "of_limit", "noise", "bound" (rows behind only: what bounds
           the row, from bench/bounded_rows.json, or null)}
    vs_peer > 1 means cudakit is better than the peer (faster, less memory) whichever way the
    unit runs; of_limit is cudakit's share of the physical or measured ceiling (1 = at it);
    noise is the relative spread a repeat of the row is expected to show (compare uses it).
"""
import json
import math
import os
import re
import statistics
import sys

SCHEMA = "cudakit-bench-report/1"
DEFAULT_NOISE = 0.05  # a row without its own spread: 5%, what back-to-back runs here differ by
# A row under this share of its peer is behind: listed in the report with what bounds it
# (bench/bounded_rows.json), or as not bounded.
BEHIND_LINE = 0.98
BOUNDED_ROWS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bounded_rows.json")


# ---------------------------------------------------------------- reading the run's files

def json_lines(path):
    """The JSON objects of a file of mixed lines (tables and warnings are skipped)."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict):
                out.append(r)
    return out


def json_object(path):
    """The JSON object a file holds; {} where it is missing or not JSON."""
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            value = json.load(f)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def text(path):
    if not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return f.read()


def row(case, unit, cudakit, peer=None, peer_value=None, higher_is_better=False, limit=None,
        limit_value=None, noise=None):
    """One row; vs_peer and of_limit follow from the values and the unit's direction."""
    def ratio(a, b):
        if a is None or b is None or a <= 0 or b <= 0:
            return None
        return a / b if higher_is_better else b / a
    return {"case": case, "unit": unit, "higher_is_better": higher_is_better, "cudakit": cudakit,
            "peer": peer if peer_value is not None else None, "peer_value": peer_value,
            "vs_peer": ratio(cudakit, peer_value), "limit": limit if limit_value is not None else None,
            "limit_value": limit_value,
            "of_limit": None if limit_value is None else ratio(cudakit, limit_value),
            "noise": noise}


def spread(values):
    """Relative spread of repeated measurements (half the range over the median)."""
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return None
    m = statistics.median(values)
    return (max(values) - min(values)) / 2 / m if m else None


# ---------------------------------------------------------------- one extractor per area

def area_alloc(out, plots):
    lines = json_lines(os.path.join(out, "alloc.jsonl"))
    if not lines:
        return None
    values, timelines = {}, {}
    for r in lines:
        if "value" in r:
            values.setdefault(r["workload"], {}).setdefault(r["allocator"], []).append(r["value"])
        elif r.get("workload", "").endswith(".timeline"):
            timelines.setdefault(r["workload"][:-len(".timeline")], {})[r["allocator"]] = r
    med = {w: {a: statistics.median(v) for a, v in by.items()} for w, by in values.items()}
    rows = []
    for w in ("pair_512B", "pair_1MiB", "pair_64MiB", "pair_1MiB_beside_other_streams", "churn_64_slots"):
        by = med.get(w, {})
        if "cudakit" in by:
            rows.append(row(f"{w} (ns per op)", "ns", by["cudakit"], "torch", by.get("torch"),
                            noise=spread(values[w].get("cudakit"))))
    traces = sorted({w.split(".")[0] for w in med if w.endswith(".ns_per_op")})
    for t in traces:
        # A trace replayed in turn with torch's allocator in one process (Note [Trace replays
        # interleaved] in bench/support/alloc_workloads.hpp) is the row: the two processes of the
        # plain rows run at speeds of their own.
        in_turn = f"{t}.ns_per_op.in_turn_cudakit_torch"
        if {"cudakit", "torch"} <= set(med.get(in_turn, {})):
            ns, label, samples = med[in_turn], f"{t}: ns per op, in turn with torch in one process", values[in_turn]
        else:
            ns, label, samples = med.get(f"{t}.ns_per_op", {}), f"{t}: ns per op", values.get(f"{t}.ns_per_op", {})
        rows.append(row(label, "ns", ns.get("cudakit"), "torch", ns.get("torch"), noise=spread(samples.get("cudakit"))))
        reserved, requested = med.get(f"{t}.peak_reserved_MiB", {}), med.get(f"{t}.peak_requested_MiB", {})
        need = requested.get("cudakit")
        rows.append(row(f"{t}: peak reserved", "MiB", reserved.get("cudakit"), "torch", reserved.get("torch"),
                        limit="peak requested", limit_value=need, noise=0.01))
        if "cudaMallocAsync" in reserved:
            rows.append(row(f"{t}: peak reserved vs cudaMallocAsync", "MiB", reserved.get("cudakit"),
                            "cudaMallocAsync", reserved.get("cudaMallocAsync"), noise=0.01))
    for w, unit in (("threads_16.pairs_per_s", "1/s"), ("threads_16_one_stream.pairs_per_s", "1/s"),
                    ("threads_1.pairs_per_s", "1/s"), ("threads_16_over_1", "x")):
        by = med.get(w, {})
        if "cudakit" in by:
            rows.append(row(w.replace(".", " "), unit, by["cudakit"], "torch", by.get("torch"),
                            higher_is_better=True, noise=spread(values[w].get("cudakit")) or 0.15))
    for t, by in sorted(timelines.items()):
        series = {a: (r["op"], r["allocated"], r["reserved"]) for a, r in by.items()}
        plots.append(plot_timeline(out, t, series))
    return rows


def area_random(out, plots):
    bench = json_object(os.path.join(out, "random.json"))
    sweep = {}
    for b in bench.get("benchmarks", []):
        m = re.match(r"BM_Sweep/(\w+)/(\d+)", b.get("name", ""))
        if m and "TB/s" in b:
            sweep.setdefault(("cudakit", m.group(1)), {})[1 << int(m.group(2))] = b["TB/s"]
    for r in json_lines(os.path.join(out, "random.txt")):
        if r.get("bench") == "random" and "TBps" in r:
            sweep.setdefault((r["impl"], r["case"]), {})[r["elements"]] = r["TBps"]
    if not sweep:
        return None
    rows = []
    top = max(n for s in sweep.values() for n in s)
    ceiling = sweep.get(("cudakit", "memset"), {}).get(top)
    for case in ("rand", "randn"):
        ours, theirs = sweep.get(("cudakit", case), {}), sweep.get(("torch", case), {})
        if top in ours:
            rows.append(row(f"{case} 2^{int(math.log2(top))} float32", "TB/s", ours[top], "torch",
                            theirs.get(top), True, "memset ceiling", ceiling, noise=0.02))
    plots.append(plot_sizes(out, "random_throughput", "Random numbers: TB/s written against size",
                            "float32 elements", "TB/s", {f"{i} {c}": s for (i, c), s in sweep.items()}))
    return rows


# graph_bench and torch_graph_bench print labelled lines; the labels are the contract here.
GRAPH_CASES = [
    ("replay host time, 8-kernel graph", r"replay\(\) host time, 8-kernel graph:\s+([\d.]+) us", "us"),
    ("replay host time, the same 8 torch kernels, one process in turn",
     r"replay\(\) host time, the same 8 torch kernels, one process in turn:\s+([\d.]+) us", "us"),
    ("replay host time, graph drawing random numbers",
     r"replay\(\) host time, graph drawing random numbers:\s+([\d.]+) us", "us"),
    ("1000-kernel replay, GPU time per tiny kernel", r"1000-kernel replay, GPU time per tiny dependent kernel:\s+([\d.]+) us", "us"),
    ("profiling 1000 tiny kernels, cost per kernel", r"profiling 3 replays x 1000 kernels (?:of\s+0 us|\(\s*tiny\)).*?([\d.]+) us per kernel", "us"),
    # The profiler's overhead on this graph is about one percent of its GPU time on both sides, and
    # a ratio of two such overheads is a ratio of noises (notes/performance-rows.md): the row
    # compares what a user waits for, the replays' GPU time profiled over unprofiled.
    ("profiling the seed workflow's graph: GPU time profiled / unprofiled",
     r"profiling 100 replays of the seed workflow's graph:.*?\(\+?(-?[\d.]+)%\)", "x"),
]
# Rows whose printed figure is a percentage of overhead, shown as a factor (1 + percent / 100).
GRAPH_PERCENT_AS_FACTOR = {"profiling the seed workflow's graph: GPU time profiled / unprofiled"}


def area_graphs(out, plots):
    t = text(os.path.join(out, "graph.txt"))
    if not t:
        return None
    ours, theirs = [], []
    for line in t.splitlines():
        (theirs if line.startswith("torch ") else ours).append(line)
    rows = []
    for case, pattern, unit in GRAPH_CASES:
        # A row timed in several processes (the replay host times: Note [Host times over
        # processes], scripts/device-bench.sh) is each side's median process.
        a = [float(v) for v in re.findall(pattern, "\n".join(ours))]
        b = [float(v) for v in re.findall(pattern, "\n".join(theirs))]
        if case in GRAPH_PERCENT_AS_FACTOR:
            a, b = [1 + v / 100 for v in a], [1 + v / 100 for v in b]
        if a:
            noise = None
            if unit == "us":
                spread = (max(a) - min(a)) / 2 / statistics.median(a) if len(a) > 1 else 0
                noise = max(0.05, spread)
            rows.append(row(case, unit, statistics.median(a), "torch", statistics.median(b) if b else None,
                            noise=noise))
    # Where the same torch kernels were replayed by both in one process (Note [One graph, two
    # replayers] in bench/torch_graph_bench.py), that row is the comparison: the two-process row of
    # two different graphs keeps cudakit's figure alone.
    by_case = {r["case"]: r for r in rows}
    in_turn = by_case.get("replay host time, the same 8 torch kernels, one process in turn")
    two_process = by_case.get("replay host time, 8-kernel graph")
    if in_turn and in_turn["peer_value"] and two_process:
        rows[rows.index(two_process)] = row(two_process["case"], "us", two_process["cudakit"], None, None,
                                            noise=two_process["noise"])
    return rows


def core_bench_times(t, ways=r"cudakit\w*?|raw"):
    """{case: {way: ns}} from core_bench's printed rows, BM_<case>_<way>, for the ways the regex
    `ways` matches: `raw`, the CUDA call alone, and cudakit's (`cudakit`, `cudakit_current_stream`;
    bench/core_ab_table.py adds `listened`, launch_kernel with a trace listener)."""
    times = {}
    # Repeated runs print aggregates (Note [Interleaved repetitions] in scripts/device-bench.sh):
    # the medians are taken; a run of one repetition each prints plain rows.
    medians = re.search(r"^BM_\w+_median\s", t, re.M) is not None
    pattern = rf"^BM_(\w+?)_({ways})" + ("_median" if medians else "") + r"\s+(\d+) ns"
    for m in re.finditer(pattern, t, re.M):
        times.setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
    return times


def area_core(out, plots):
    times = core_bench_times(text(os.path.join(out, "core.txt")))
    rows = []
    for case, by in times.items():
        ours = by.get("cudakit", by.get("cudakit_current_stream"))
        if ours is not None and "raw" in by:
            rows.append(row(f"{case} (cudakit vs the raw CUDA call)", "ns", ours, "raw CUDA", by["raw"], noise=0.05))
    return rows or None


def area_pinned(out, plots):
    t = text(os.path.join(out, "pinned.txt"))
    if not t:
        return None
    ours = {int(m.group(1)): float(m.group(2))
            for m in re.finditer(r"^register, 16 threads\s+(\d+)\s+([\d.]+)", t, re.M)}
    theirs = {int(m.group(1)): float(m.group(2))
              for m in re.finditer(r"^torch cudaHostAlloc\s+(\d+)\s+([\d.]+)", t, re.M)}
    return [row(f"a fresh pinned block of {mib} MiB, allocate", "ms", ms, "torch", theirs.get(mib), noise=0.1)
            for mib, ms in sorted(ours.items())] or None


def by_case(lines, bench=None):
    out = {}
    for r in lines:
        if bench and r.get("bench") != bench:
            continue
        if "case" in r and "impl" in r and "value" in r:
            out.setdefault(r["case"], {})[r["impl"]] = (r["value"], r.get("unit", ""))
    return out


def area_jiterator(out, plots):
    cases = by_case(json_lines(os.path.join(out, "jiterator.jsonl")), "jiterator")
    if not cases:
        return None
    copy = cases.get("copy_2^28_float32_GBps", {}).get("cudakit", (None,))[0]
    rows = []
    peers = {"cold_first_call_ms": "torch_jiterator", "cold_first_call_ms_first_process": "torch_jiterator",
             "disk_warm_first_call_ms": "torch_jiterator",
             "cached_call_host_us": "torch_jiterator", "axpy_2^28_float32_GBps": "torch_jiterator",
             "broadcast_add_16384x16384_GBps": "torch_native", "transposed_add_16384x16384_GBps": "torch_native",
             "mixed_half_float_add_2^28_GBps": "torch_native", "sum_of_squares_2^28_float32_GBps": "cupy"}
    for case, peer in peers.items():
        by = cases.get(case)
        if not by or "cudakit" not in by:
            continue
        value, unit = by["cudakit"]
        higher = unit.endswith("/s")
        if peer not in by:  # the strongest peer present
            peer = next((p for p in ("torch_native", "torch_jiterator", "cupy") if p in by), None)
        rows.append(row(case, unit, value, peer, by.get(peer, (None,))[0], higher,
                        "copy bandwidth" if higher else None, copy if higher else None, noise=0.03))
    sweep = {}
    for r in json_lines(os.path.join(out, "jiterator.jsonl")):
        if r.get("case") in ("axpy_sweep_GBps", "copy_sweep_GBps") and "elements" in r:
            label = r["impl"] + (" copy" if r["case"].startswith("copy") else " axpy")
            sweep.setdefault(label, {})[r["elements"]] = r["value"]
    if sweep:
        plots.append(plot_sizes(out, "jiterator_throughput", "Jiterator axpy: GB/s against size",
                                "float32 elements", "GB/s", sweep))
    return rows


def area_tunable(out, plots):
    lines = json_lines(os.path.join(out, "tunable.jsonl"))
    ours = {r["shape"]: r for r in lines if r.get("impl") == "cudakit" and "tuned_ms" in r}
    interleaved = [r for r in lines if r.get("bench") == "gemm_interleaved" and "tuned_ms" in r]
    models = [r for r in lines if r.get("bench") == "model_forward" and "cudakit_ms" in r]
    if not ours and not interleaved and not models:
        return None
    rows = []
    for r in models:
        # bench/torch_model_forward_bench.py: a model's forward, plain and through cudakit.route_torch().
        rows.append(row(f"{r['model']} forward, {r['layers']} layers, {r['batch']}x{r['seq']} tokens: through "
                        f"cudakit's tuner (route_torch) vs torch", "ms", r["cudakit_ms"], "torch", r["torch_ms"],
                        noise=max(r.get("torch_spread") or 0, r.get("cudakit_spread") or 0) / 2 or None))
    if interleaved:
        # bench/torch_gemm_interleaved.py: both libraries in one process, alternating per round.
        ratios = {}
        for r in interleaved:
            best_torch = max(r["torch_tflops"], r.get("torch_tunableop_tflops") or 0)
            rows.append(row(f"{r['shape']}: tuned vs the better of torch (one process)", "TFLOP/s", r["tuned_tflops"],
                            "torch", best_torch, True, noise=0.02))
            rows.append(row(f"{r['shape']}: default vs torch.matmul (one process)", "TFLOP/s", r["default_tflops"],
                            "torch", r["torch_tflops"], True, noise=0.02))
            ratios[r["shape"]] = r["tuned_vs_torch"]
        geo = math.exp(sum(math.log(v) for v in ratios.values()) / len(ratios))
        rows.append(row(f"geometric mean over {len(ratios)} shapes, tuned over torch.matmul (one process)", "x", geo,
                        higher_is_better=True, noise=0.01))
        plots.append(plot_bars(out, "tunable_vs_torch", "TunableOp: tuned over torch.matmul, one process, per shape",
                               "speed-up", ratios))
    if not ours:
        return rows
    torch = {r["shape"]: r for r in lines if r.get("impl") == "torch"}
    one_process = {r["shape"] for r in interleaved}
    speedups = {}
    for shape, r in ours.items():
        bound = r.get("bound_tflops")
        rows.append(row(f"{shape}: tuned vs cuBLAS default", "TFLOP/s", r["tuned_tflops"], "cuBLAS default",
                        r["default_tflops"], True, "bandwidth bound" if bound else None, bound, noise=0.02))
        # Across two processes (tunable_bench, then torch_tunable_bench.py) clock and power state
        # drift by more than the differences measured (notes/performance-rows.md); a shape timed
        # in one process is compared with torch there only.
        t = torch.get(shape)
        if t and t.get("default_tflops") and shape not in one_process:
            rows.append(row(f"{shape}: tuned vs torch.matmul", "TFLOP/s", r["tuned_tflops"], "torch",
                            t["default_tflops"], True, noise=0.03))
        speedups[shape] = r["default_ms"] / r["tuned_ms"]
    if speedups:
        geo = math.exp(sum(math.log(v) for v in speedups.values()) / len(speedups))
        rows.append(row(f"geometric mean over {len(speedups)} shapes, tuned over default", "x", geo,
                        higher_is_better=True, noise=0.01))
        plots.append(plot_bars(out, "tunable_speedup", "TunableOp: tuned over cuBLAS default, per shape",
                               "speed-up", speedups))
    return rows


def area_ratio_file(out, name, value_key):
    """NVTX and sanitizer: JSON lines of (case, impl, value); every impl against the reference."""
    lines = [r for r in json_lines(os.path.join(out, f"{name}.txt"))
             if value_key in r]
    if not lines:
        return None
    cases = {}
    for r in lines:
        cases.setdefault(r["case"], {})[r["impl"]] = r[value_key]
    return cases


def area_nvtx(out, plots):
    cases = area_ratio_file(out, "nvtx", "ns_per_pair")
    if not cases:
        return None
    rows = []
    raw = cases.get("push+pop, message", {}).get("nvtx3_raw")
    for case, by in cases.items():
        if "cudakit" in by:
            rows.append(row(f"{case} (no tool attached)", "ns", by["cudakit"], "torch", by.get("torch"),
                            limit="raw NVTX3 call", limit_value=by.get("nvtx3_raw", raw), noise=0.2))
    return rows


def area_sanitizer(out, plots):
    cases = area_ratio_file(out, "sanitizer", "us_per_op")
    runs = area_ratio_file(out, "sanitizer", "ms_per_run") or {}
    if not cases:
        return None
    rows = []
    for case, by in cases.items():
        off = by.get("off")
        on = by.get("cudakit, stacks", by.get("cudakit"))
        if on is not None:
            torch_on = by.get("torch, sanitizer", by.get("torch, on"))  # torch_sanitizer_bench.py's name
            rows.append(row(f"{case}: sanitized", "us", on, "torch.cuda._sanitizer" if torch_on else None,
                            torch_on, limit="unsanitized", limit_value=off, noise=0.05))
    for case, by in runs.items():
        on = by.get("cudakit, stacks", by.get("cudakit"))
        if on is not None:
            rows.append(row(f"{case}: sanitized", "ms", on, limit="unsanitized", limit_value=by.get("off"), noise=0.03))
    return rows


def area_gds(out, plots):
    lines = [r for r in json_lines(os.path.join(out, "gds.jsonl")) if r.get("bench") == "gds"]
    if not lines:
        return None
    best = {}
    for r in lines:
        if r.get("gbps") and not r["case"].startswith("sweep"):
            key = (r["case"], r["impl"])
            best[key] = max(best.get(key, 0), r["gbps"])
    disk = best.get(("disk_odirect_read", "disk"))
    rows = []
    for case, peer in (("cold_load", "torch_read_pinned_copy"), ("warm_load", "torch_read_pinned_copy"),
                       ("safetensors_cold_load_total", "torch_safetensors"), ("save", "cudaMemcpy_posix_write")):
        if (case, "cudakit") in best:
            rows.append(row(case, "GB/s", best[(case, "cudakit")], peer, best.get((case, peer)), True,
                            "disk O_DIRECT read" if case == "cold_load" else None,
                            disk if case == "cold_load" else None, noise=0.1))
    # safetensors_load_bench.py: one file, cudakit against safetensors.torch.load_file (best of the
    # repetitions, as the rows above), the cold row against the disk's O_DIRECT read of that file.
    checkpoint_disk = best.get(("checkpoint_disk_odirect_read", "disk"))
    for case in ("checkpoint_cold_load", "checkpoint_warm_load"):
        if (case, "cudakit") in best:
            cold = case == "checkpoint_cold_load"
            rows.append(row(f"safetensors {case[len('checkpoint_'):]}", "GB/s", best[(case, "cudakit")],
                            "safetensors.torch", best.get((case, "safetensors")), True,
                            "disk O_DIRECT read" if cold else None, checkpoint_disk if cold else None, noise=0.1))
    sweep = {}
    for r in lines:
        if r["case"].startswith("sweep_") and r.get("chunk_bytes"):
            sweep.setdefault(r["case"][len("sweep_"):], {})[r["chunk_bytes"]] = r["gbps"]
    if sweep:
        plots.append(plot_sizes(out, "gds_throughput", "GPUDirect Storage: GB/s against chunk size",
                                "chunk bytes", "GB/s", sweep))
    return rows


def area_green(out, plots):
    lines = [r for r in json_lines(os.path.join(out, "green.jsonl")) if r.get("bench") == "green"]
    gemm = {}
    for r in lines:
        if r.get("case") == "gemm" and "ms" in r:
            gemm.setdefault(r["impl"], {})[r["sms"]] = (r["ms"], r.get("bound_ms"))
    if not gemm.get("cudakit"):
        return None
    rows = []
    for sms, (ms, bound) in sorted(gemm["cudakit"].items(), reverse=True):
        peer = gemm.get("torch_green", {}).get(sms) or gemm.get("torch", {}).get(sms)
        rows.append(row(f"GEMM on {sms} SMs", "ms", ms, "torch", peer[0] if peer else None,
                        limit="full-device time scaled by SMs" if bound else None, limit_value=bound, noise=0.03))
    for r in lines:
        if r.get("case") == "two_partitions":
            slowdown = r["slowdown"]
            worst = max(slowdown) if isinstance(slowdown, list) else slowdown
            rows.append(row("two partitions at once, the slower one's time over alone", "x", worst, noise=0.05))
    plots.append(plot_sizes(out, "green_sm_scaling", "Green contexts: GEMM time against SM count", "SMs", "ms",
                            {i: {s: v[0] for s, v in by.items()} for i, by in gemm.items()}, logx=False))
    return rows


def area_nccl(out, plots):
    lines = [r for r in json_lines(os.path.join(out, "nccl.jsonl")) if r.get("bench") == "nccl"]
    if not lines:
        return None
    ranks = max(r["ranks"] for r in lines)
    series, table = {}, {}
    for r in lines:
        label = f"{r['impl']} {r['mode']}"
        series.setdefault(f"{label} {r['op']}", {})[r["bytes"]] = r["busbw_GBps"] if ranks > 1 else r["time_us"]
        table[(r["impl"], r["mode"], r["op"], r["bytes"])] = r
    rows = []
    for op in sorted({r["op"] for r in lines}):
        for size in sorted({r["bytes"] for r in lines if r["op"] == op}):
            if size not in (8, 1 << 28, 1 << 30):
                continue
            ours = table.get(("cudakit", "multi_process", op, size)) or table.get(("cudakit", "single_process", op, size))
            theirs = table.get(("torch", "multi_process", op, size))
            if not ours:
                continue
            if size == 8 or ranks == 1:
                rows.append(row(f"{op} {size} B, {ranks} rank(s): time", "us", ours["time_us"], "torch.distributed",
                                theirs["time_us"] if theirs else None, noise=0.1))
            else:
                rows.append(row(f"{op} {size >> 20} MiB, {ranks} ranks: bus bandwidth", "GB/s", ours["busbw_GBps"],
                                "torch.distributed", theirs["busbw_GBps"] if theirs else None, True, noise=0.03))
    what = "bus bandwidth, GB/s" if ranks > 1 else "time per call, us (one rank)"
    plots.append(plot_sizes(out, "nccl", f"Collectives on {ranks} GPU(s): {what} against size", "bytes",
                            "GB/s" if ranks > 1 else "us", {k: v for k, v in series.items() if "all_reduce" in k}))
    return rows


def area_python(out, plots):
    lines = json_lines(os.path.join(out, "python.jsonl"))
    rows = []
    for r in lines:
        if "value" in r and "case" in r and r.get("impl") == "cudakit":
            rows.append(row(r["case"], r.get("unit", ""), r["value"], r.get("peer"), r.get("peer_value"),
                            r.get("unit", "").endswith("/s"), r.get("limit"), r.get("limit_value"), noise=0.1))
    return rows or None


AREAS = [
    ("alloc", "Caching allocator (beside PyTorch's, through its C++ API, and cudaMallocAsync)", area_alloc),
    ("core", "Streams, events and launches (beside the raw CUDA calls)", area_core),
    ("random", "Random numbers (beside torch)", area_random),
    ("graphs", "Graphs and the profiler (beside torch.cuda.graphs and torch.profiler)", area_graphs),
    ("pinned", "Pinned host memory (beside torch's pinned allocator)", area_pinned),
    ("jiterator", "Jiterator (beside torch's jiterator, torch's ops and CuPy)", area_jiterator),
    ("tunable", "TunableOp GEMMs (beside cuBLAS default and torch.matmul)", area_tunable),
    ("nvtx", "NVTX ranges (beside torch.cuda.nvtx and raw NVTX3)", area_nvtx),
    ("sanitizer", "Stream sanitizer (beside torch.cuda._sanitizer)", area_sanitizer),
    ("gds", "GPUDirect Storage and checkpoints (beside torch's file paths)", area_gds),
    ("green", "Green contexts (beside torch's green contexts)", area_green),
    ("nccl", "Collectives (beside torch.distributed)", area_nccl),
    ("python", "Python module (beside torch and CuPy)", area_python),
]


# ---------------------------------------------------------------- plots

def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def save(out, fig, name):
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    path = f"plots/{name}.png"
    fig.tight_layout()
    fig.savefig(os.path.join(out, path), dpi=110)
    return path


def plot_timeline(out, trace, series):
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    for allocator, (ops, allocated, reserved) in sorted(series.items()):
        line, = ax.plot(ops, reserved, label=f"{allocator} reserved")
        ax.plot(ops, allocated, linestyle="--", color=line.get_color(), label=f"{allocator} allocated")
    ax.set_title(f"Allocator memory over the trace {trace}")
    ax.set_xlabel("operation")
    ax.set_ylabel("MiB")
    ax.legend(fontsize=7)
    path = save(out, fig, f"alloc_{trace}")
    plt.close(fig)
    return path


def plot_sizes(out, name, title, xlabel, ylabel, series, logx=True):
    plt = pyplot()
    if plt is None or not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, points in sorted(series.items()):
        xs = sorted(points)
        ax.plot(xs, [points[x] for x in xs], marker="o", markersize=3, label=label)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    path = save(out, fig, name)
    plt.close(fig)
    return path


def plot_bars(out, name, title, ylabel, values):
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(10, 4.5))
    names = list(values)
    ax.bar(range(len(names)), [values[n] for n in names])
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=75, fontsize=6)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    path = save(out, fig, name)
    plt.close(fig)
    return path


# ---------------------------------------------------------------- building, writing, comparing

def machine(out):
    return json_object(os.path.join(out, "machine.json"))


def build(out, commit=None, date=None, area_commits=None, bounds=None):
    """The report of the run in `out`; `bounds` (load_bounds()'s form) defaults to
    bench/bounded_rows.json's."""
    area_commits = area_commits or {}
    report = {"schema": SCHEMA, "commit": commit, "date": date, "machine": machine(out), "areas": [],
              "skipped": []}
    skipped = os.path.join(out, "skipped.txt")
    if os.path.exists(skipped):
        with open(skipped) as f:
            for line in f:
                part, _, why = line.strip().partition(": ")
                if part:
                    report["skipped"].append({"part": part, "why": why})
    if pyplot() is None:
        report["skipped"].append({"part": "plots", "why": "matplotlib is not installed where the report was built"})
    for name, title, extract in AREAS:
        plots = []
        try:
            rows = extract(out, plots)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            report["skipped"].append({"part": name, "why": f"its output could not be read ({type(e).__name__}: {e})"})
            continue
        if rows is None:
            if not any(s["part"] == name for s in report["skipped"]):
                report["skipped"].append({"part": name, "why": "no output from this part in the run"})
            continue
        report["areas"].append({"name": name, "title": title, "rows": rows, "plots": [p for p in plots if p]})
        if area_commits.get(name, commit) != commit:
            report["areas"][-1]["commit"] = area_commits[name]
    unknown = set(area_commits) - {name for name, _, _ in AREAS}
    if unknown:
        raise SystemExit(f"report.py build: --area-commit names no area: {', '.join(sorted(unknown))}")
    mark_behind(report, load_bounds() if bounds is None else bounds)
    return report


def load_bounds(path=BOUNDED_ROWS):
    """bench/bounded_rows.json's entries: (area, compiled case pattern, bound)."""
    with open(path) as f:
        entries = json.load(f)["rows"]
    return [(e["area"], re.compile(e["case_pattern"]), e["bound"]) for e in entries]


def mark_behind(report, bounds):
    """Lists in report["behind"] every row under BEHIND_LINE of its peer, with the bound of the
    first entry of `bounds` that matches it (None: not bounded), and sets the row's "bound"."""
    report["behind"] = []
    for area in report["areas"]:
        for r in area["rows"]:
            if r.get("vs_peer") is None or r["vs_peer"] >= BEHIND_LINE:
                continue
            r["bound"] = next((bound for name, pattern, bound in bounds
                               if name == area["name"] and pattern.fullmatch(r["case"])), None)
            report["behind"].append({"area": area["name"], "case": r["case"], "vs_peer": r["vs_peer"],
                                     "bound": r["bound"]})


def fmt(v, unit=""):
    if v is None:
        return ""
    if unit == "1/s" and abs(v) >= 1e5:
        return f"{v / 1e6:.3g} M"
    a = abs(v)
    return f"{v:,.0f}" if a >= 1000 else f"{v:.3g}"


def markdown(report):
    m = report["machine"]
    lines = [f"# cudakit performance report",
             "",
             f"Commit {report.get('commit') or '?'}, {report.get('date') or '?'}; "
             f"{m.get('gpu', '?')}, driver {m.get('driver', '?')}, CUDA {m.get('cuda', '?')}, "
             f"torch {m.get('torch', '?')}, CuPy {m.get('cupy', '?')}, {m.get('gpus', '?')} GPU(s)"
             + (f", kernel {m['kernel']}." if m.get("kernel") else "."),
             "",
             "Each row: cudakit's figure, the peer's in the same run, **vs peer** (above 1: cudakit is "
             "better, whichever way the unit runs) and cudakit's share of the ceiling where there is one.",
             ""]
    for area in report["areas"]:
        lines += [f"## {area['title']}", ""]
        if area.get("commit"):
            lines += [f"This area: commit {area['commit']} (the other areas: {report.get('commit') or '?'}).", ""]
        lines += ["| case | unit | cudakit | peer | peer's | vs peer | ceiling | of ceiling |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in area["rows"]:
            vs = f"{r['vs_peer']:.2f}x" if r["vs_peer"] else ""
            of = f"{r['of_limit']:.0%}" if r["of_limit"] else ""
            lines.append(f"| {r['case']} | {r['unit']} | {fmt(r['cudakit'], r['unit'])} | {r['peer'] or ''} | "
                         f"{fmt(r['peer_value'], r['unit'])} | {vs} | {r['limit'] or ''} "
                         f"{fmt(r['limit_value'], r['unit']) if r['limit'] else ''} | {of} |")
        for p in area["plots"]:
            lines += ["", f"![{os.path.basename(p)}]({p})"]
        lines.append("")
    behind = report.get("behind", [])
    bounded = sum(1 for b in behind if b["bound"])
    lines += [f"## Rows under {BEHIND_LINE} of their peer", "",
              f"{len(behind)} of {sum(1 for a in report['areas'] for r in a['rows'] if r.get('vs_peer'))} rows "
              f"with a peer; {bounded} bounded (bench/bounded_rows.json), {len(behind) - bounded} not.", ""]
    lines += [f"- {b['area']}: {b['case']}: {b['vs_peer']:.3f}x; "
              + (f"bounded: {b['bound']}" if b["bound"] else "**not bounded**") for b in behind]
    lines.append("")
    if report["skipped"]:
        lines += ["## Skipped", ""] + [f"- {s['part']}: {s['why']}" for s in report["skipped"]] + [""]
    return "\n".join(lines)


def load_report(path):
    with open(path) as f:
        r = json.load(f)
    if r.get("schema") != SCHEMA:
        raise SystemExit(f"{path}: schema {r.get('schema')!r}, expected {SCHEMA!r}")
    return r


def compare(a_path, b_path, default_noise=DEFAULT_NOISE):
    """The rows of B that moved from A beyond noise: cudakit's figure, or its ratio to the peer."""
    a, b = load_report(a_path), load_report(b_path)
    index = {(area["name"], r["case"]): r for area in a["areas"] for r in area["rows"]}
    moved, same, new = [], 0, 0
    for area in b["areas"]:
        for r in area["rows"]:
            old = index.pop((area["name"], r["case"]), None)
            if old is None or old["cudakit"] in (None, 0) or r["cudakit"] is None:
                new += old is None
                continue
            noise = max(old.get("noise") or default_noise, r.get("noise") or default_noise)
            change = r["cudakit"] / old["cudakit"] - 1
            better = change > 0 if r["higher_is_better"] else change < 0
            ratio_change = None
            if old.get("vs_peer") and r.get("vs_peer"):
                ratio_change = r["vs_peer"] / old["vs_peer"] - 1
            if abs(change) > noise or (ratio_change is not None and abs(ratio_change) > noise):
                moved.append((area["name"], r["case"], old, r, change, better, ratio_change, noise))
            else:
                same += 1
    lines = [f"{a.get('commit')} ({a.get('date')}) -> {b.get('commit')} ({b.get('date')})"]
    for name, case, old, r, change, better, ratio_change, noise in moved:
        vs = ""
        if ratio_change is not None:
            vs = f"; vs {r['peer']} {old['vs_peer']:.2f}x -> {r['vs_peer']:.2f}x"
        lines.append(f"  {'better' if better else 'WORSE '}  {name}: {case}: {fmt(old['cudakit'])} -> "
                     f"{fmt(r['cudakit'])} {r['unit']} ({change:+.1%}, noise {noise:.0%}){vs}")
    lines.append(f"{len(moved)} moved beyond noise, {same} within it, {new} new, {len(index)} gone")
    return "\n".join(lines), moved


REPORT_BEGIN = "<!-- performance report: begin (bench/report.py performance writes this part) -->"
REPORT_END = "<!-- performance report: end -->"
REPORT_DOCUMENT = "docs/performance.md"


def performance_section(report, report_path, document=REPORT_DOCUMENT):
    """The performance document's generated part: the report's tables, one subsection per area,
    its plots and files linked where the report lies (`report_path`, from the repository root)
    relative to `document`'s folder."""
    folder = os.path.relpath(os.path.dirname(report_path) or ".", os.path.dirname(document) or ".")
    body = markdown(report).split("\n", 2)[2].replace("\n## ", "\n### ").replace("](plots/", f"]({folder}/plots/")
    return (f"Generated by `python3 bench/report.py performance {report_path} --write {document}` from "
            f"the report of one run of `scripts/device-bench.sh` ([report.md]({folder}/report.md), "
            f"[report.json]({folder}/report.json)).\n" + body)


def write_section(document_path, section, begin_marker=REPORT_BEGIN, end_marker=REPORT_END):
    """Replaces the text between `begin_marker` and `end_marker` in `document_path` with
    `section`; the rest of the file is kept. A document without both markers, in order, is
    refused unchanged."""
    with open(document_path) as f:
        text = f.read()
    begin, end = text.find(begin_marker), text.find(end_marker)
    if begin < 0 or end < begin:
        raise SystemExit(f"{document_path} has no '{begin_marker}' ... '{end_marker}' pair")
    updated = text[:begin + len(begin_marker)] + "\n" + section.rstrip("\n") + "\n" + text[end:]
    with open(document_path + ".tmp", "w") as f:
        f.write(updated)
    os.replace(document_path + ".tmp", document_path)


def main(argv):
    if len(argv) < 2 or argv[0] not in ("build", "compare", "performance"):
        raise SystemExit(__doc__)
    if argv[0] == "build":
        out = argv[1]
        pairs = list(zip(argv[2::2], argv[3::2]))
        opts = dict(pairs)
        area_commits = {}
        for key, value in pairs:
            if key == "--area-commit":
                area, sep, c = value.partition("=")
                if not sep or not area or not c:
                    raise SystemExit(f"report.py build: --area-commit wants AREA=COMMIT, got {value!r}")
                area_commits[area] = c
        report = build(out, opts.get("--commit"), opts.get("--date"), area_commits)
        with open(os.path.join(out, "report.json"), "w") as f:
            json.dump(report, f, indent=1)
        with open(os.path.join(out, "report.md"), "w") as f:
            f.write(markdown(report))
        rows = sum(len(a["rows"]) for a in report["areas"])
        print(f"report: {len(report['areas'])} areas, {rows} rows, "
              f"{sum(len(a['plots']) for a in report['areas'])} plots -> {out}/report.md, report.json")
        for s in report["skipped"]:
            print(f"  skipped {s['part']}: {s['why']}")
        return 0
    if argv[0] == "compare":
        if len(argv) < 3:
            raise SystemExit(__doc__)
        noise = float(argv[4]) if len(argv) > 4 and argv[3] == "--noise" else DEFAULT_NOISE
        print(compare(argv[1], argv[2], noise)[0])
        return 0
    if len(argv) >= 4 and argv[2] == "--write":
        write_section(argv[3], performance_section(load_report(argv[1]), argv[1], argv[3]))
        print(f"report.py performance: {argv[3]}'s tables now from {argv[1]}")
    else:
        print(performance_section(load_report(argv[1]), argv[1], "."))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
