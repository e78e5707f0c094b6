#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried: the Python module built
# against the bundle, the whole GPU tier, the Python suite (each test at most 90 s, stacks dumped).
set -uo pipefail
export CUDAKIT_TEST_DATA_DIR=$PWD/tests/data PYTHONUNBUFFERED=1
out=${OUT:-/tmp/out}
CUDAKIT_JOBS=16 timeout 200 bash python/build-on-device.sh build-python > "$out/pybuild.log" 2>&1
echo "python module build rc=$?"; tail -2 "$out/pybuild.log"
timeout 300 gpu-bundle/gpu-tier.sh "$out/tier" 2>&1 | tail -30
(cd python/tests && PYTHONPATH=$PWD/../../build-python timeout 250 python3 -m pytest -v -rs -p no:cacheprovider \
   --timeout=90 --timeout-method=thread ${PYTEST_ARGS:-} . > "$out/pytest.log" 2>&1; echo "pytest rc=$?")
grep -E "^(FAILED|ERROR)|passed|failed|Timeout|Traceback" "$out/pytest.log" | tail -25
tail -5 "$out/pytest.log"
