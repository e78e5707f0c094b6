#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried, in one call of under ten
# minutes: the GPU tests alone (the host tests ran where the bundle was built), then the Python
# module built there and the whole Python suite. Three files to $OUT: gpu.log, pybuild.log, pytest.log.
set -uo pipefail
export CUDAKIT_TEST_DATA_DIR=$PWD/tests/data PYTHONUNBUFFERED=1
B=$PWD/gpu-bundle
out=${OUT:-/tmp/out}
mkdir -p "$out"
source scripts/device-env.sh "$B"
echo "bundle $(cat "$B/COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
start=$SECONDS
timeout 320 "$B/bin/cudakit_gpu_tests" > "$out/gpu.log" 2>&1
echo "gpu tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |tests ran|^\[  SKIPPED \] [0-9]+" "$out/gpu.log" | tail -30
grep -B3 -A14 "Failure" "$out/gpu.log" | head -120
start=$SECONDS
CUDAKIT_JOBS=16 timeout 100 bash python/build-on-device.sh build-python > "$out/pybuild.log" 2>&1
echo "python module build rc=$? in $((SECONDS - start)) s"
(cd python/tests && PYTHONPATH=$PWD/../../build-python timeout 140 python3 -m pytest -q -rs -p no:cacheprovider \
   --timeout=45 --timeout-method=thread . > "$out/pytest.log" 2>&1; echo "pytest rc=$?")
grep -E "^(FAILED|ERROR)|[0-9]+ passed|[0-9]+ failed|Timeout" "$out/pytest.log" | tail -20
