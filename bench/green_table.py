#!/usr/bin/env python3
"""The green-context table from green_bench and torch_green_bench JSON lines (one run).

    green_table.py green.jsonl
"""
import json
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    rows = [r for r in rows if r.get("bench") == "green"]
    torch_ms = {r["sms"]: r["ms"] for r in rows if r.get("case") == "gemm" and r.get("impl", "").startswith("torch") and "ms" in r}
    print(f"{'SMs':>5} {'cudakit ms':>11} {'bound ms':>9} {'within':>7} {'torch ms':>9} {'torch/cudakit':>13}")
    for r in rows:
        if r.get("case") == "gemm" and r.get("impl") == "cudakit":
            t = torch_ms.get(r.get("requested", r["sms"]))
            ratio = f"{t / r['ms']:.2f}" if t else "-"
            bound = f"{r['bound_ms']:.2f}" if "bound_ms" in r else "-"
            within = str(r.get("within_bound", "-"))
            print(f"{r['sms']:>5} {r['ms']:>11.2f} {bound:>9} {within:>7} {t if t else '-':>9} {ratio:>13}")
    for r in rows:
        if r.get("case") == "two_partitions":
            print(f"two partitions {r['sms']}: alone {r['alone_ms']} ms, together {r['together_ms']} ms, "
                  f"slowdown {[round(s, 3) for s in r['slowdown']]}, within 10%: {r['within_10pct']}")
        if r.get("case") == "decode_latency":
            print(f"decode ({r['impl']}, SMs {r['sms']}): p50 {r['alone_p50_ms']:.3f} -> {r['with_prefill_p50_ms']:.3f} ms, "
                  f"p99 {r['alone_p99_ms']:.3f} -> {r['with_prefill_p99_ms']:.3f} ms with prefill")
        if r.get("error"):
            print(f"{r['impl']} {r.get('sms', '')}: {r['error']}")


if __name__ == "__main__":
    main()
