#!/usr/bin/env bash
# On the GPU machine, from the repository root, with gpu-bundle-ab/ carried (gpu-bundle.tar.xz: the
# staged bundle under test; bundles.tar.xz: c40a480's slim bundle; house.tar.xz: slim bundles
# (probe/slim-bundles.sh: libcudakit, alloc_bench, core_bench and its libbenchmark, include/) of
# 6716d75 and 14dd232, the first parent of the merge of the seams branch and that merge: core and
# memory along their seams, the optional libraries registered by their layers, IPC, pinned memory
# and the viewer in parts of their own,
# one observer mechanism). One call of about five minutes:
# 1. device-bench part python with the pass-through library built from this tree (its turns_
#    functions: Note [The pluggable path's floor in turns]), SKIP_PYTEST=1 (python.tgz);
# 2. scripts/device-ab.sh 6716d75 against 14dd232, allocator rows and the core (launch) rows
#    (HOUSE_PARTS, default "alloc core"), three processes each (ab_house.txt), the A/B of the
#    house's code moves against the commit before them;
# 3. with CORE_AB=1, scripts/device-ab.sh c40a480 against the bundle under test, the core rows
#    (ab_core.txt).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
start=$SECONDS
stamp() { echo "[$((SECONDS - start)) s] $*"; }
for f in gpu-bundle bundles house; do
  python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall('.')" "gpu-bundle-ab/$f.tar.xz"
done
for b in gpu-bundle gpu-bundle-6716d75 gpu-bundle-14dd232 gpu-bundle-old; do
  mkdir -p "$b/data" && ln -sfn "$PWD/tests/data/alloc-traces" "$b/data/alloc-traces"
done
export CUDAKIT_TEST_DATA_DIR=$PWD/tests/data PYTHONUNBUFFERED=1
echo "bundle $(cat gpu-bundle/COMMIT); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
g++ -O2 -std=c++20 -shared -fPIC -I/usr/local/cuda/include bench/torch/pass_through_cache.cpp \
  -L/usr/local/cuda/lib64 -lcudart -o gpu-bundle/bin/libpass_through_cache.so || exit 1
CUDAKIT_JOBS=16 timeout 100 bash python/build-on-device.sh build-python > "$out/pybuild.log" 2>&1
stamp "module built"
PYTHONPATH=$PWD/build-python SKIP_TIER=1 SKIP_PYTEST=1 PARTS=python OUT=/tmp/p timeout 240 scripts/device-bench.sh \
  > /tmp/p.log 2>&1
cp /tmp/p.log /tmp/p/ 2>/dev/null; tar -czf "$out/python.tgz" -C /tmp p
grep -E "turns|pass-through|pass_through" /tmp/p/python.err /tmp/p/report.md 2>/dev/null | cut -c1-300 | head -6
stamp "python part done"
OUT=/tmp/house ROUNDS=3 AB_PARTS="${HOUSE_PARTS:-alloc core}" timeout 150 bash scripts/device-ab.sh \
  "$PWD/gpu-bundle-6716d75" "$PWD/gpu-bundle-14dd232" > "$out/ab_house.txt" 2>&1
cp /tmp/house/ab_alloc.jsonl "$out/ab_house_alloc.jsonl" 2>/dev/null
grep -E "pair_1MiB|gpt_train.ns|serve_kv.ns|threads_16_over_1 " "$out/ab_house.txt" | head -6
stamp "house A/B done"
if [ -n "${CORE_AB:-}" ]; then
  OUT=/tmp/core AB_PARTS=core timeout 80 bash scripts/device-ab.sh "$PWD/gpu-bundle-old" "$PWD/gpu-bundle" \
    > "$out/ab_core.txt" 2>&1
  stamp "core A/B done"
fi
