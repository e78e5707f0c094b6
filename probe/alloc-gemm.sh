#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried, after a tier run
# (probe/tier-py.sh) in the same lease or an earlier one, in one call of under ten minutes: the
# allocator rows (probe/alloc-rows.sh: alloc.jsonl, alloc_table.md, lock_probe.txt), then the
# GEMMs interleaved with torch and the model forward (as probe/gemm-device.sh without its checks,
# which the tier covers: gemm.jsonl, gemm.txt, gemm_table.md). CUDAKIT_GEMM_BUDGET_S (default 150).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
B=$PWD/gpu-bundle
export PYTHONUNBUFFERED=1 CUDAKIT_TEST_DATA_DIR=$PWD/tests/data
OUT=$out timeout 200 bash probe/alloc-rows.sh
source scripts/device-env.sh "$B"
CUDAKIT_JOBS=16 timeout 100 bash python/build-on-device.sh build-python > /tmp/pybuild.log 2>&1
echo "python module build rc=$?"
budget=${CUDAKIT_GEMM_BUDGET_S:-150}
PYTHONPATH=$PWD/build-python timeout $((budget + 35)) python3 bench/torch_gemm_interleaved.py \
  --extra --torch-tunableop --budget-s "$budget" --json "$out/gemm.jsonl" > "$out/gemm.txt" 2>&1
echo "interleaved rc=$?"
PYTHONPATH=$PWD/build-python timeout 70 python3 bench/torch_model_forward_bench.py --model llama,gpt2 \
  --json "$out/gemm.jsonl" >> "$out/gemm.txt" 2>&1
echo "model forward rc=$?"
python3 bench/tunable_table.py "$out/gemm.jsonl" > "$out/gemm_table.md" 2>&1
tail -16 "$out/gemm_table.md"
