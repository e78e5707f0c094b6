#!/usr/bin/env python3
"""Joins the allocator benchmarks' JSON lines into the performance report's side-by-side table. Where an
allocator ran in several processes (scripts/device-bench.sh alternates cudakit and torch), each
cell is the median over its processes and the table says how many there were."""
import json, statistics, sys
samples = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "value" not in r:  # memory-over-time samples (CUDAKIT_BENCH_TIMELINES), for the report's plots
        continue
    samples.setdefault(r["workload"], {}).setdefault(r["allocator"], []).append(r["value"])
rows = {w: {a: statistics.median(v) for a, v in by.items()} for w, by in samples.items()}
processes = {}
for by in samples.values():
    for a, v in by.items():
        processes[a] = max(processes.get(a, 0), len(v))
names = []
for w in rows.values():
    for a in w:
        if a not in names:
            names.append(a)
def fmt(v):
    return "" if v is None else (f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}")
print("| workload | " + " | ".join(names) + " | cudakit vs torch |")
print("| --- |" + " --- |" * (len(names) + 1))
for w, vals in rows.items():
    ratio = ""
    if "cudakit" in vals and "torch" in vals and vals["cudakit"] and not w.endswith("_ceiling"):
        better_high = w.endswith("pairs_per_s") or "_over_1" in w
        ratio = vals["cudakit"] / vals["torch"] if better_high else vals["torch"] / vals["cudakit"]
        smaller = w.endswith("_MiB") or w.endswith("allocations")
        ratio = f"{ratio:.2f}x" + (" less" if smaller else " faster")
    print(f"| {w} | " + " | ".join(fmt(vals.get(n)) for n in names) + f" | {ratio} |")
runs = [f"{a} {n}" for a, n in processes.items() if n > 1]
if runs:
    print(f"(median of processes: {', '.join(runs)})")
for t in sorted({w.rsplit(".", 1)[0] for w in rows if w.endswith(".peak_reserved_MiB")}):
    for n in names:
        try:
            print(f"{t} {n}: peak reserved / peak allocated = {rows[t + '.peak_reserved_MiB'][n] / rows[t + '.peak_allocated_MiB'][n]:.3f}")
        except (KeyError, ZeroDivisionError):
            pass
