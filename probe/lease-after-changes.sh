#!/usr/bin/env bash
# On the GPU machine, from the repository root, one call of under ten minutes, with
# gpu-bundle-ab/ carried (gpu-bundle.tar.xz: the staged bundle of the commit under test, xz'd so
# that it travels beside the A/B's bundles.tar.xz: c40a480 and 008048f slim). In order of need,
# each part bounded by its own timeout, so that a call cut short by the session's device time
# still has the first ones:
# 1. the GPU tier (gpu.log);
# 2. the Python module built there, the model forward at 4 x 64 tokens plain and through
#    route_torch() (forward.txt), and GPT-2's profiled (probe/forward_profile.py);
# 3. probe/growth_cost.cpp, and scripts/device-bench.sh part core;
# 4. scripts/device-ab.sh of c40a480 against this bundle, allocator rows, ROUNDS processes each
#    (default 3), alternating (issue 41's A/B);
# 5. the Python suite (pytest.log); 6. scripts/device-bench.sh part alloc.
# SKIP_FORWARD=1 leaves out the forwards, the profile and the growth probe (a lease that measured
# them on the same GPU code). Parts 2-6 go into one archive, rest.tgz, rewritten as each part ends.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/rest
start=$SECONDS
stamp() { echo "[$((SECONDS - start)) s] $*"; tar -czf "$out/rest.tgz" -C /tmp rest 2>/dev/null; }
python3 -c "import tarfile; tarfile.open('gpu-bundle-ab/gpu-bundle.tar.xz').extractall('.')"
[ -d gpu-bundle-old ] || python3 -c "import tarfile; tarfile.open('gpu-bundle-ab/bundles.tar.xz').extractall('.')"
mkdir -p gpu-bundle/data
ln -sfn "$PWD/tests/data/alloc-traces" gpu-bundle/data/alloc-traces
export CUDAKIT_TEST_DATA_DIR=$PWD/tests/data PYTHONUNBUFFERED=1
source scripts/device-env.sh "$PWD/gpu-bundle"
echo "bundle $(cat gpu-bundle/COMMIT); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
timeout 200 gpu-bundle/bin/cudakit_gpu_tests > "$out/gpu.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED \] [0-9]+" "$out/gpu.log" | tail -5
grep -B3 -A14 "Failure" "$out/gpu.log" | head -60
stamp "GPU tier done"
CUDAKIT_JOBS=16 timeout 100 bash python/build-on-device.sh build-python > /tmp/rest/pybuild.log 2>&1
if [ -z "${SKIP_FORWARD:-}" ]; then
  PYTHONPATH=$PWD/build-python timeout 90 python3 bench/torch_model_forward_bench.py --batch 4 --seq 64 \
    --rounds 20 --forwards 10 > /tmp/rest/forward.txt 2>&1
  grep -h "forward (" /tmp/rest/forward.txt
  PYTHONPATH=$PWD/build-python timeout 60 python3 probe/forward_profile.py --model gpt2 > /tmp/rest/forward_profile.txt 2>&1
  head -12 /tmp/rest/forward_profile.txt
  stamp "forward done"
  g++ -O2 -std=c++20 -I/usr/local/cuda/include probe/growth_cost.cpp -L/usr/local/cuda/lib64 -lcudart -o /tmp/growth_cost &&
    LD_LIBRARY_PATH=/usr/local/cuda/lib64 timeout 40 /tmp/growth_cost > /tmp/rest/growth_cost.txt 2>&1
  stamp "growth probe done"
fi
SKIP_TIER=1 PARTS=core OUT=/tmp/rest/core timeout 60 scripts/device-bench.sh > /tmp/rest/core.log 2>&1
stamp "core part done"
OUT=/tmp/rest/ab ROUNDS=${ROUNDS:-3} AB_PARTS=alloc timeout 90 bash scripts/device-ab.sh "$PWD/gpu-bundle-old" \
  "$PWD/gpu-bundle" > /tmp/rest/ab.txt 2>&1
grep -E "pair_1MiB|gpt_train.ns|serve_kv.ns" /tmp/rest/ab.txt | head -8
stamp "A/B done"
(cd python/tests && PYTHONPATH=$PWD/../../build-python timeout 140 python3 -m pytest -q -rs -p no:cacheprovider \
   --timeout=45 --timeout-method=thread . > "$out/pytest.log" 2>&1)
grep -E "^(FAILED|ERROR)|[0-9]+ passed|[0-9]+ failed" "$out/pytest.log" | tail -5
stamp "Python suite done"
PYTHONPATH=$PWD/build-python SKIP_TIER=1 PARTS=alloc OUT=/tmp/rest/bench timeout 200 scripts/device-bench.sh \
  > /tmp/rest/bench.log 2>&1
stamp "alloc part done"
