#!/usr/bin/env bash
# On the GPU machine, from the repository root, one call of under ten minutes, with
# gpu-bundle-ab/ carried (gpu-bundle.tar.xz: the staged bundle of the commit under test, xz'd so
# that it travels beside the A/B's bundles.tar.xz: c40a480 and 008048f slim). In order of need,
# each part bounded by its own timeout:
# 1. probe/tier-py.sh: the GPU tier and the Python suite (gpu.log, pybuild.log, pytest.log);
# 2. scripts/device-ab.sh of c40a480 against this bundle, allocator and core rows, ROUNDS
#    processes each (default 4), alternating (issue 41's A/B);
# 3. the model forward at 4 x 64 tokens, plain and through route_torch() (forward.txt);
# 4. scripts/device-bench.sh part alloc (the allocator table, trace replays in turn with torch);
# 5. probe/growth_cost.cpp.
# Everything but part 1's files goes into one archive, rest.tgz, rewritten as each part ends.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/rest
start=$SECONDS
# Each part's end packs what exists so far, so a call cut short still hands back its parts.
stamp() { echo "[$((SECONDS - start)) s] $*"; tar -czf "$out/rest.tgz" -C /tmp rest 2>/dev/null; }
python3 -c "import tarfile; tarfile.open('gpu-bundle-ab/gpu-bundle.tar.xz').extractall('.')"
[ -d gpu-bundle-old ] || python3 -c "import tarfile; tarfile.open('gpu-bundle-ab/bundles.tar.xz').extractall('.')"
mkdir -p gpu-bundle/data
ln -sfn "$PWD/tests/data/alloc-traces" gpu-bundle/data/alloc-traces
stamp "bundle $(cat gpu-bundle/COMMIT)"
OUT=$out bash probe/tier-py.sh
stamp "tier and Python suite done"
OUT=/tmp/rest/ab ROUNDS=${ROUNDS:-4} AB_PARTS="alloc core" timeout 200 bash scripts/device-ab.sh "$PWD/gpu-bundle-old" \
  "$PWD/gpu-bundle" > /tmp/rest/ab.txt 2>&1
stamp "A/B done"
PYTHONPATH=$PWD/build-python PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_model_forward_bench.py --batch 4 --seq 64 \
  --rounds 20 --forwards 10 > /tmp/rest/forward.txt 2>&1
stamp "forward done"
PYTHONPATH=$PWD/build-python SKIP_TIER=1 PARTS=alloc OUT=/tmp/rest/bench timeout 200 scripts/device-bench.sh \
  > /tmp/rest/bench.log 2>&1
stamp "alloc part done"
g++ -O2 -std=c++20 -I/usr/local/cuda/include probe/growth_cost.cpp -L/usr/local/cuda/lib64 -lcudart -o /tmp/growth_cost &&
  LD_LIBRARY_PATH=/usr/local/cuda/lib64 timeout 60 /tmp/growth_cost > /tmp/rest/growth_cost.txt 2>&1
stamp "growth probe done"
grep -h "cudakit/torch\|forward (" /tmp/rest/forward.txt | tail -4
cat /tmp/rest/growth_cost.txt
