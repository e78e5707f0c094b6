#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried: the allocator's
# benchmark (cudakit, PyTorch's allocator, cudaMallocAsync) and its GPU tests.
set -uo pipefail
B=$PWD/gpu-bundle
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T=""
for f in "$B"/data/alloc-traces/trace_*.csv.gz; do n=$(basename "$f" .csv.gz); T="$T ${n#trace_} $f"; done
out=${OUT:-/tmp/out}
{
  "$B/bin/alloc_bench" --only cudakit $T
  timeout 240 bench/torch/build_and_run.sh "$B" /tmp/torch_alloc_bench $T
  "$B/bin/alloc_bench" --only cudakit $T
  timeout 120 /tmp/torch_alloc_bench $T
  "$B/bin/alloc_bench" --only cudaMallocAsync $T
} > "$out/alloc.jsonl" 2> "$out/alloc.err"
python3 bench/alloc_table.py "$out/alloc.jsonl" | tee "$out/alloc_table.md"
tail -5 "$out/alloc.err"
GTEST_FILTER='*Allocator*:*Replay*:*MemPool*:*Pool*' timeout 200 "$B/gpu-tier.sh" "$out/tier" 2>&1 | tail -15
