#!/usr/bin/env bash
# On the GPU machine, from the repository root with a staged gpu-bundle/: the GPU tier, then every
# benchmark side by side with PyTorch, logs under $OUT (or /tmp/cudakit-bench).
set -uo pipefail
B=${BUNDLE:-gpu-bundle}
out=${OUT:-/tmp/cudakit-bench}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$B/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NCCL, loaded at run time: the system's, else the one PyTorch's wheel brings (nvidia-nccl).
if ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2; then
  nccl_dir=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
  if [ -n "$nccl_dir" ]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$nccl_dir"; fi
fi
# Every recorded trace (tests/data/alloc-traces), labelled by its name.
T=""
for f in "$B"/data/alloc-traces/trace_*.csv.gz; do n=$(basename "$f" .csv.gz); T="$T ${n#trace_} $f"; done
[ "${SKIP_TIER:-0}" = 1 ] || "$B/gpu-tier.sh" "$out/tier" 2>&1 | tail -25
echo "== allocators (cudakit, PyTorch C++, cudakit with cross_stream_reuse:off, cudaMallocAsync, cudakit's cudaMallocAsync backend, cudaMalloc)"
# cudakit and torch alternate in three processes each: on these VMs one process runs 20-30%
# slower than the next throughout (the same binary measured 268-372 ns/op on gpt_train), so the
# table gives each allocator's median process (bench/alloc_table.py).
{
  for round in 1 2 3; do
    "$B/bin/alloc_bench" --only cudakit $T
    if [ $round = 1 ]; then timeout 300 bench/torch/build_and_run.sh "$B" /tmp/torch_alloc_bench $T
    else timeout 120 /tmp/torch_alloc_bench $T; fi
  done
  # Each stream to its own memory, for the cross-stream rows (See Note [Memory across streams]).
  CUDAKIT_ALLOC_CONF=cross_stream_reuse:off "$B/bin/alloc_bench" --only cudakit $T | sed 's/"cudakit"/"cudakit_off"/'
  # Per-stream peaks, no device-wide ledger: what exact peaks cost (See Note [Device-wide peaks];
  # its peak allocated is the streams' peaks summed, so its ratio reads low).
  CUDAKIT_ALLOC_CONF=exact_peaks:False "$B/bin/alloc_bench" --only cudakit $T | sed 's/"cudakit"/"cudakit_per_stream_peaks"/'
  "$B/bin/alloc_bench" --only cudaMallocAsync $T
  "$B/bin/alloc_bench" --only cudakit_async $T
  "$B/bin/alloc_bench" --only cudaMalloc
} > "$out/alloc.jsonl" 2> "$out/alloc.err"
python3 bench/alloc_table.py "$out/alloc.jsonl"
for f in "$B"/data/alloc-traces/trace_*.csv.gz; do "$B/bin/cudakit" alloc-replay "$f" --json; done
echo "== core"
"$B/bin/core_bench" --benchmark_min_time=0.2 2>&1 | grep -E "^BM_" | tee "$out/core.txt"
if [ -x "$B/bin/random_bench" ]; then
  echo "== random"
  "$B/bin/random_bench" 2>&1 | tail -20 | tee "$out/random.txt"
  PYTHONUNBUFFERED=1 python3 bench/torch_random_bench.py 2>&1 | tail -10 | tee -a "$out/random.txt"
fi
if [ -x "$B/bin/graph_bench" ]; then
  echo "== graphs and profiler (cudakit, then torch)"
  "$B/bin/graph_bench" 2>&1 | tee "$out/graph.txt"
  python3 bench/torch_graph_bench.py 2>&1 | grep -v -i warn | tee -a "$out/graph.txt"
  "$B/bin/profiler_bench" 2>&1 | tail -5 | tee -a "$out/graph.txt"
fi
echo "== pinned host memory (cudakit, then torch)"
"$B/bin/pinned_bench" 2>&1 | tee "$out/pinned.txt"
python3 bench/torch_pinned_bench.py 2>&1 | grep -v -i warn | tee -a "$out/pinned.txt"
if [ -x "$B/bin/nccl_bench" ]; then
  echo "== NCCL collectives (cudakit single-process and multi-process, then torch.distributed)"
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  {
    "$B/bin/nccl_bench"
    "$B/bin/nccl_bench" --processes "$gpus"
    PYTHONUNBUFFERED=1 python3 bench/torch_nccl_bench.py --processes "$gpus" 2>/dev/null
  } > "$out/nccl.jsonl" 2> "$out/nccl.err"
  python3 bench/nccl_table.py "$out/nccl.jsonl" | tee "$out/nccl.txt"
  if [ "$gpus" -lt 2 ]; then
    echo "nccl: $gpus GPU here, so these are one-rank figures (copies and launch latency); the bandwidth table needs the multi-GPU machine"
  fi
fi
