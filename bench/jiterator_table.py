#!/usr/bin/env python3
"""Joins the jiterator benchmarks' JSON lines (bench/jiterator_bench.cpp and
bench/torch_jiterator_bench.py, one run) into the performance report's table: each case's figure per
implementation, and cudakit against each peer (x faster for times and bandwidths alike).
    python3 bench/jiterator_table.py jiterator.jsonl"""
import json
import sys

rows, impls = {}, []
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("bench") != "jiterator" or r["case"].endswith("_one") or "elements" in r:
        continue
    rows.setdefault(r["case"], {})[r["impl"]] = (r["value"], r["unit"])
    if r["impl"] not in impls:
        impls.append(r["impl"])
peers = [i for i in impls if i != "cudakit"]


def fmt(v):
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


print("| case | " + " | ".join(impls) + " | " + " | ".join(f"cudakit vs {p}" for p in peers) + " |")
print("| --- |" + " --- |" * (len(impls) + len(peers)))
for case, by in rows.items():
    unit = next(iter(by.values()))[1]
    cells = [fmt(by[i][0]) + f" {unit}" if i in by else "" for i in impls]
    ratios = []
    for p in peers:
        if "cudakit" not in by or p not in by or not by["cudakit"][0] or not by[p][0]:
            ratios.append("")
            continue
        lower_is_better = unit in ("ms", "us", "ns")
        ratio = by[p][0] / by["cudakit"][0] if lower_is_better else by["cudakit"][0] / by[p][0]
        ratios.append(f"{ratio:.2f}x")
    print(f"| {case} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
