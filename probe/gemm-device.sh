#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried (scripts/stage-gpu-bundle.sh
# of this tree), in one call of under eight minutes (at most 560 s with every step at its bound),
# four files to $OUT:
#   checks.log     the Python module's build; the captured-GEMM and graph-pool tests (C++ GPU and
#                  host tiers, and python/tests/test_matmul.py)
#   gemm.jsonl     JSON lines of bench/torch_gemm_interleaved.py over bench/tunable_shapes.json and
#                  its --extra shapes (torch's TunableOp beside), then bench/torch_model_forward_bench.py
#                  (a transformers Llama and GPT-2, plain and through cudakit.route_torch())
#   gemm.txt       both benchmarks' output (warnings included)
#   gemm_table.md  bench/tunable_table.py's tables and the targets, from gemm.jsonl
# CUDAKIT_GEMM_BUDGET_S (default 180): the interleaved benchmark's seconds, tuning included.
# SKIP_CHECKS=1: the module's build alone, no tests and no checks.log (a tier run covered them).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
B=$PWD/gpu-bundle
export PYTHONUNBUFFERED=1 CUDAKIT_TEST_DATA_DIR=$B/data
source scripts/device-env.sh "$B"
CUDAKIT_JOBS=16 timeout 120 bash python/build-on-device.sh build-python > /tmp/pybuild.log 2>&1
echo "python module build rc=$?"; tail -3 /tmp/pybuild.log
if [ "${SKIP_CHECKS:-0}" != 1 ]; then
  {
    timeout 20 "$B/bin/cudakit_host_tests" --gtest_filter='*PoolHolds*:CachingAllocatorPools.*' 2>&1 | tail -4
    timeout 60 "$B/bin/cudakit_gpu_tests" \
      --gtest_filter='TunableGpu.Capture*:MatmulWorkspaceGpu.*:GraphGpu.*:GraphCaptureFailureGpu.*:*DeviceAllocatorGpu.*' 2>&1 | tail -25
    (cd python/tests && PYTHONPATH=$PWD/../../build-python timeout 75 python3 -m pytest -q -rs -p no:cacheprovider \
       test_matmul.py test_matmul_host.py test_gpu_interop.py::test_torch_graphs_get_private_pools \
       test_gpu_runtime.py::test_graph_capture_and_replay test_gpu_runtime.py::test_mem_pool_routes_allocations 2>&1 | tail -15)
  } > "$out/checks.log" 2>&1
  grep -E "PASSED|FAILED|passed|failed" "$out/checks.log" | head -20
fi
PYTHONPATH=$PWD/build-python timeout $(( ${CUDAKIT_GEMM_BUDGET_S:-180} + 35 )) python3 bench/torch_gemm_interleaved.py \
  --extra --torch-tunableop --budget-s "${CUDAKIT_GEMM_BUDGET_S:-180}" --json "$out/gemm.jsonl" > "$out/gemm.txt" 2>&1
echo "interleaved rc=$?"
PYTHONPATH=$PWD/build-python timeout 70 python3 bench/torch_model_forward_bench.py --model llama,gpt2 \
  --json "$out/gemm.jsonl" >> "$out/gemm.txt" 2>&1
echo "model forward rc=$?"
# Small batches too (4 x 64 tokens): where a forward's host time shows, so does the routing's.
PYTHONPATH=$PWD/build-python timeout 60 python3 bench/torch_model_forward_bench.py --model llama,gpt2 \
  --batch 4 --seq 64 --rounds 20 --forwards 10 --json "$out/gemm.jsonl" >> "$out/gemm.txt" 2>&1
echo "model forward, small batch rc=$?"
python3 bench/tunable_table.py "$out/gemm.jsonl" > "$out/gemm_table.md" 2>&1
cat "$out/gemm_table.md" | tail -16
