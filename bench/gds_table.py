#!/usr/bin/env python3
"""The GDS table from gds_bench and torch_gds_bench JSON lines (one run): each cudakit figure as
GB/s and as a ratio to its target — the disk's own O_DIRECT bandwidth for cold loads and saves,
20 GB/s for warm loads — and to the plain POSIX and PyTorch peers.

    gds_table.py gds.jsonl
"""
import json
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    rows = [r for r in rows if r.get("bench") == "gds"]
    best = {}
    for r in rows:
        key = (r["case"], r["impl"])
        if r.get("error"):
            best.setdefault(key, r)
        elif r.get("gbps", 0) > best.get(key, {}).get("gbps", -1):
            best[key] = r
    disk_read = best.get(("disk_odirect_read", "disk"), {}).get("gbps", 0)
    disk_write = best.get(("disk_odirect_write", "disk"), {}).get("gbps", 0)
    targets = {"cold_load": (0.9 * disk_read, "0.9 x disk O_DIRECT read"),
               "safetensors_cold_load": (0.9 * disk_read, "0.9 x disk O_DIRECT read"),
               "warm_load": (20.0, "20 GB/s"),
               "save": (0.9 * disk_write, "0.9 x disk O_DIRECT write")}
    print(f"disk O_DIRECT: read {disk_read:.2f} GB/s, write {disk_write:.2f} GB/s")
    print(f"{'case':<30} {'impl':<30} {'GB/s':>7} {'target':>8} {'vs target':>9}  path / note")
    for (case, impl), r in sorted(best.items()):
        if case in ("setup", "disk_odirect_read", "disk_odirect_write") or case.startswith("sweep"):
            continue
        target, _ = targets.get(case, (0, ""))
        ratio = f"{r['gbps'] / target:.2f}x" if target and not r.get("error") else "-"
        detail = r.get("error") or r.get("path", "")
        print(f"{case:<30} {impl:<30} {r.get('gbps', 0):7.2f} {target:8.2f} {ratio:>9}  {detail}")
    for case in ("cold_load", "warm_load", "save"):
        ours = best.get((case, "cudakit"), {}).get("gbps", 0)
        for (c, impl), r in sorted(best.items()):
            if c == case and impl != "cudakit" and r.get("gbps"):
                print(f"{case}: cudakit / {impl} = {ours / r['gbps']:.2f}")
    sweep = [r for r in rows if r["case"].startswith("sweep")]
    if sweep:
        print("sweep (chunk MiB x threads -> GB/s):")
        for r in sweep:
            print(f"  {r['case']:<16} {r['chunk_bytes'] >> 20:>3} MiB x {r['io_threads']:>2}: {r['gbps']:.2f} ({r['path']})")


if __name__ == "__main__":
    main()
