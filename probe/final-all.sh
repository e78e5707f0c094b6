#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried, in one call bounded to
# under ten minutes: the Python module, the whole GPU tier, the Python suite (each test at most
# 60 s), the allocators beside torch's and cudaMallocAsync, the GEMMs interleaved with torch.
set -uo pipefail
export CUDAKIT_TEST_DATA_DIR=$PWD/tests/data PYTHONUNBUFFERED=1
B=$PWD/gpu-bundle
out=${OUT:-/tmp/out}
CUDAKIT_JOBS=16 timeout 60 bash python/build-on-device.sh build-python > "$out/pybuild.log" 2>&1
echo "python module build rc=$?"
(cd "$B/.." && timeout 210 gpu-bundle/gpu-tier.sh "$out/tier" 2>&1 | tail -22)
(cd python/tests && PYTHONPATH=$PWD/../../build-python timeout 120 python3 -m pytest -v -rs -p no:cacheprovider \
   --timeout=45 --timeout-method=thread . > "$out/pytest.log" 2>&1; echo "pytest rc=$?")
grep -E "^(FAILED|ERROR)|[0-9]+ passed|Timeout" "$out/pytest.log" | tail -12
OUT=$out bash probe/alloc-rows.sh
[ "${SKIP_GEMM:-0}" = 1 ] && exit 0
PYTHONPATH=$PWD/build-python timeout 50 python3 bench/torch_gemm_interleaved.py --extra --rounds 5 \
  --json "$out/gemm.jsonl" > "$out/gemm.txt" 2> "$out/gemm.err"; echo "gemm rc=$?"
python3 bench/tunable_table.py "$out/gemm.jsonl" > "$out/gemm_table.md" 2>&1; tail -8 "$out/gemm_table.md"
