#!/usr/bin/env bash
# On the GPU machine, after probe/final-tier.sh on the same machine (the Python module built):
# the allocators side by side, the GEMMs interleaved with torch in one process, safetensors loads.
set -uo pipefail
export PYTHONUNBUFFERED=1
B=$PWD/gpu-bundle
out=${OUT:-/tmp/out}
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T=""
for f in tests/data/alloc-traces/trace_*.csv.gz; do n=$(basename "$f" .csv.gz); T="$T ${n#trace_} $f"; done
{
  "$B/bin/alloc_bench" --only cudakit $T
  timeout 200 bench/torch/build_and_run.sh "$B" /tmp/torch_alloc_bench $T
  "$B/bin/alloc_bench" --only cudakit $T
  timeout 100 /tmp/torch_alloc_bench $T
  "$B/bin/alloc_bench" --only cudaMallocAsync $T
} > "$out/alloc.jsonl" 2> "$out/alloc.err"
python3 bench/alloc_table.py "$out/alloc.jsonl" | tee "$out/alloc_table.md" | grep -E "threads|serve_8t|pair_1MiB|ns_per_op|reserved / peak"
PYTHONPATH=$PWD/build-python timeout ${GEMM_SECONDS:-200} python3 bench/torch_gemm_interleaved.py --extra --rounds 7 \
  --json "$out/gemm.jsonl" > "$out/gemm.txt" 2> "$out/gemm.err"; echo "gemm rc=$?"
python3 bench/tunable_table.py "$out/gemm.jsonl" > "$out/gemm_table.md" 2>&1; tail -40 "$out/gemm_table.md"
if [ "${GDS:-1}" = 1 ]; then
  { timeout 120 "$B/bin/gds_bench" --dir /tmp --gib 1; timeout 100 python3 bench/torch_gds_bench.py --dir /tmp --gib 1 2>&1 | grep '^{'; } > "$out/gds.jsonl" 2> "$out/gds.err"
  rm -f /tmp/cudakit_gds_bench* /tmp/torch_gds_bench*
  python3 bench/gds_table.py "$out/gds.jsonl" | tee "$out/gds.md" | grep -i safetensors
fi
