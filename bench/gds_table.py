#!/usr/bin/env python3
"""The GDS table from gds_bench, torch_gds_bench and safetensors_load_bench JSON lines (one run):
each cudakit figure as GB/s and as a ratio to its target — the disk's own O_DIRECT bandwidth for
cold loads and saves, 20 GB/s for warm loads — and to the plain POSIX and PyTorch peers; then the
safetensors checkpoint rows (cudakit against safetensors.torch.load_file on one file).

    gds_table.py gds.jsonl
"""
import json
import sys


def median(values):
    values = sorted(values)
    n = len(values)
    return 0.0 if n == 0 else values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def checkpoint_rows(rows):
    """safetensors_load_bench's rows: one file loaded by cudakit and by safetensors.torch, cold and
    warm (medians over the repetitions), the ratios against their targets (cold >= 1.0x, warm >= 3x
    safetensors' own), the disk's O_DIRECT read of the same file, and the byte-identity check."""
    ours = [r for r in rows if r["case"].startswith("checkpoint_")]
    if not ours:
        return
    disk = [r["gbps"] for r in ours if r["case"] == "checkpoint_disk_odirect_read"]
    print(f"safetensors checkpoint, one file, one run (disk O_DIRECT read of it: {median(disk):.2f} GB/s)")
    for case, target in (("checkpoint_cold_load", 1.0), ("checkpoint_warm_load", 3.0)):
        figures = {}
        for impl in ("cudakit", "safetensors"):
            got = [r for r in ours if r["case"] == case and r["impl"] == impl]
            figures[impl] = median([r["gbps"] for r in got])
            resident = max((r.get("resident_before", -1) for r in got), default=-1)
            paths = sorted({r.get("path", "") for r in got} - {""})
            print(f"  {case:<22} {impl:<12} {figures[impl]:7.2f} GB/s (median of {len(got)}; page cache before: "
                  f"{resident:.0%} at most){' ' + ', '.join(paths) if paths else ''}")
        if figures["safetensors"]:
            ratio = figures["cudakit"] / figures["safetensors"]
            verdict = "meets" if ratio >= target else "MISSES"
            print(f"  {case:<22} cudakit / safetensors = {ratio:.2f} ({verdict} the target {target:.1f}x)")
    for r in (r for r in ours if r["case"] == "checkpoint_byte_identity"):
        state = "identical" if r.get("identical") else "DIFFERENT: " + "; ".join(r.get("differ", []))
        print(f"  byte identity: {r.get('tensors')} tensors ({', '.join(r.get('dtypes', []))}): {state}")


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
        if case in ("setup", "disk_odirect_read", "disk_odirect_write") or case.startswith(("sweep", "checkpoint_")):
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
    checkpoint_rows(rows)
    sweep = [r for r in rows if r["case"].startswith("sweep")]
    if sweep:
        print("sweep (chunk MiB x threads -> GB/s):")
        for r in sweep:
            print(f"  {r['case']:<24} {r['chunk_bytes'] >> 20:>3} MiB x {r['io_threads']:>2}: {r['gbps']:.2f} ({r['path']})")


if __name__ == "__main__":
    main()
