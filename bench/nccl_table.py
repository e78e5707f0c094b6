#!/usr/bin/env python3
"""The NCCL benchmark's table: reads the JSON lines of bench/nccl_bench and
bench/torch_nccl_bench.py (stdin or files), prints per operation and size the time and bus
bandwidth of each, and torch's time over cudakit's (above 1: cudakit is faster).
Run:  python3 bench/nccl_table.py nccl.jsonl"""
import fileinput
import json

rows = {}
for line in fileinput.input():
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("bench") != "nccl":
        continue
    key = (r["op"], r["bytes"], r["ranks"])
    impl = r["impl"] if r["impl"] == "torch" else f"cudakit-{r['mode']}"
    rows.setdefault(key, {})[impl] = r

impls = sorted({i for v in rows.values() for i in v})
header = f"{'op':<15}{'bytes':>12}{'ranks':>6}" + "".join(f"{i + ' us':>28}{'busbw GB/s':>12}" for i in impls)
header += f"{'torch/cudakit':>15}"
print(header)
for (op, size, ranks), v in sorted(rows.items()):
    line = f"{op:<15}{size:>12}{ranks:>6}"
    for i in impls:
        r = v.get(i)
        line += f"{r['time_us']:>28.2f}{r['busbw_GBps']:>12.2f}" if r else f"{'-':>28}{'-':>12}"
    ours = v.get("cudakit-multi_process") or v.get("cudakit-single_process")
    line += f"{v['torch']['time_us'] / ours['time_us']:>15.2f}" if ours and "torch" in v else f"{'-':>15}"
    print(line)
