#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried, in about three minutes:
# the allocator rows of cudakit, torch's C++ allocator and cudaMallocAsync over the recorded
# traces (one process each, in this order; the traces are also replayed in turn by cudakit and
# cudaMallocAsync in the first process, by cudakit and torch in the second: Note [Trace replays
# interleaved]), and lock_probe if it was staged. Three files to $OUT:
# alloc.jsonl, alloc_table.md, lock_probe.txt (the benchmarks' stderr is printed, last lines).
set -uo pipefail
export CUDAKIT_TEST_DATA_DIR=$PWD/tests/data
B=${BUNDLE:-$PWD/gpu-bundle}
out=${OUT:-/tmp/out}
mkdir -p "$out"
source scripts/device-env.sh "$B"
T=""
for f in tests/data/alloc-traces/trace_*.csv.gz; do n=$(basename "$f" .csv.gz); T="$T ${n#trace_} $f"; done
{
  timeout 60 "$B/bin/alloc_bench" --only cudakit --interleaved 5 $T
  timeout 110 bench/torch/build_and_run.sh "$B" /tmp/torch_alloc_bench $T --interleaved 5
  timeout 25 "$B/bin/alloc_bench" --only cudaMallocAsync $T
} > "$out/alloc.jsonl" 2> /tmp/alloc.err
tail -5 /tmp/alloc.err
python3 bench/alloc_table.py "$out/alloc.jsonl" > "$out/alloc_table.md" 2>&1
grep -E "threads|serve_8t.ns|serve_4w.ns|serve_2w.ns|pair_1MiB" "$out/alloc_table.md"
if [ -x "$B/bin/lock_probe" ]; then timeout 40 "$B/bin/lock_probe" 16 > "$out/lock_probe.txt" 2>&1; cat "$out/lock_probe.txt"; fi
