#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried, in one call of about five to
# seven minutes, five files to $OUT: the whole Python suite (pytest.log: the two frame and routing
# tests of issue 38 among it), the per-call Python rows (python_calls.jsonl: bound calls over their
# C++ call, DLPack into torch beside CuPy, alternating, and its parts), the jiterator's first call of a
# machine's first process with and without NVRTC's read-ahead beside torch (jiterator_first.txt), and
# the GDS cold load each way beside torch's read into pinned memory (gds.jsonl, pybuild.log).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
source scripts/device-env.sh gpu-bundle
export CUDAKIT_TEST_DATA_DIR=$PWD/tests/data
CUDAKIT_JOBS=16 timeout 120 bash python/build-on-device.sh build-python > "$out/pybuild.log" 2>&1
export PYTHONPATH=$PWD/build-python
(cd python/tests && timeout 120 python3 -m pytest -q -rs -p no:cacheprovider --timeout=45 . > "$out/pytest.log" 2>&1)
tail -4 "$out/pytest.log"
timeout 100 python3 bench/python_bench.py --calls > "$out/python_calls.jsonl" 2>&1
tail -14 "$out/python_calls.jsonl"
timeout 120 bash bench/jiterator_first_process.sh 2 > "$out/jiterator_first.txt" 2>&1
grep -E '^==|"cold_first_call_ms_one"|compiled for' "$out/jiterator_first.txt"
{
  timeout 120 gpu-bundle/bin/gds_bench --dir /tmp --gib 1
  timeout 60 python3 bench/torch_gds_bench.py --dir /tmp --gib 1 2>&1 | grep '^{'
} > "$out/gds.jsonl" 2>&1
rm -f /tmp/cudakit_gds_bench* /tmp/torch_gds_bench*
python3 bench/gds_table.py "$out/gds.jsonl"
