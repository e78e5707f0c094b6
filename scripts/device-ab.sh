#!/usr/bin/env bash
# On the GPU machine: cudakit against an earlier build of itself, alternating processes on one
# machine (across machines the CPUs differ more than most changes do). Usage:
#   scripts/device-ab.sh OLD_BUNDLE NEW_BUNDLE      (logs under $OUT or /tmp/cudakit-ab)
# Allocator workloads (ROUNDS processes each, default 3, medians), core runtime overheads, random
# numbers and graph replays, each old then new; AB_PARTS="alloc core random graphs" (the default)
# picks among them. A process of the same binary on the lent machines can run all its rows
# markedly slower than the next one (notes/allocator.md, 2026-12-05): compare medians of several.
set -uo pipefail
old=${1:?old bundle}; new=${2:?new bundle}
out=${OUT:-/tmp/cudakit-ab}
mkdir -p "$out"
T="gpt_train $new/data/alloc-traces/trace_gpt_train.csv.gz serve_kv $new/data/alloc-traces/trace_serve_kv.csv.gz"
run() {  # run BUNDLE BINARY ARGS...: the binary against its own libcudakit
  local b=$1; shift
  LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64" "$b/bin/$@"
}
parts=" ${AB_PARTS:-alloc core random graphs} "
if [[ $parts == *" alloc "* ]]; then
echo "== allocators, cudakit old and new alternating"
{
  for round in $(seq "${ROUNDS:-3}"); do
    run "$old" alloc_bench --only cudakit $T | sed 's/"allocator": *"cudakit"/"allocator":"old"/'
    run "$new" alloc_bench --only cudakit $T | sed 's/"allocator": *"cudakit"/"allocator":"new"/'
  done
} > "$out/ab_alloc.jsonl" 2> "$out/ab_alloc.err"
python3 bench/alloc_table.py "$out/ab_alloc.jsonl" | sed 's/| cudakit vs torch |/|  |/'
fi
if [[ $parts == *" core "* ]]; then
  echo "== core (old, new, old, new)"
  for b in "$old" "$new" "$old" "$new"; do
    echo "-- $b"
    run "$b" core_bench --benchmark_min_time=0.2 2>&1 | grep -E "^BM_"
  done | tee "$out/ab_core.txt"
  # cudakit's overhead over the raw call in the same process, old against new (the raw rows' own
  # moves between processes are the run's noise).
  python3 bench/core_ab_table.py "$out/ab_core.txt"
fi
if [[ $parts == *" random "* ]]; then
  echo "== random (old, new)"
  for b in "$old" "$new"; do echo "-- $b"; run "$b" random_bench 2>&1 | tail -8; done | tee "$out/ab_random.txt"
fi
if [[ $parts == *" graphs "* ]]; then
  echo "== graphs (old, new)"
  for b in "$old" "$new"; do echo "-- $b"; run "$b" graph_bench 2>&1 | tail -12; done | tee "$out/ab_graph.txt"
fi
