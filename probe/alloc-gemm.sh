#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried, after a tier run
# (probe/tier-py.sh) in the same lease or an earlier one, in one call of under ten minutes: the
# allocator rows (probe/alloc-rows.sh: alloc.jsonl, alloc_table.md, lock_probe.txt), then the
# GEMMs interleaved with torch and the model forward (probe/gemm-device.sh without its checks,
# which the tier covers: gemm.jsonl, gemm.txt, gemm_table.md). CUDAKIT_GEMM_BUDGET_S (default 130, so that the call, the small-batch model forward included, stays under ten minutes).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
OUT=$out timeout 200 bash probe/alloc-rows.sh
SKIP_CHECKS=1 CUDAKIT_GEMM_BUDGET_S=${CUDAKIT_GEMM_BUDGET_S:-130} OUT=$out bash probe/gemm-device.sh
