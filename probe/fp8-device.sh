#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ carried, in one call of under eight
# minutes, six files to $OUT: the FP8-checkpoint and dtype GPU tests (tier.txt, with the failures'
# context), the Python module's build (pybuild.txt), the dtype/GDS/matmul Python tests (pytest.txt),
# and the safetensors load speed beside safetensors' own loader, cold and warm, with every tensor
# compared byte for byte (load.jsonl, load.err, load.txt: bench/safetensors_load_bench.py).
set -uo pipefail
R=$PWD
out=${OUT:-/tmp/out}
mkdir -p "$out"
source scripts/device-env.sh "$R/gpu-bundle"
export CUDAKIT_TEST_DATA_DIR=$R/tests/data
GTEST_FILTER='Fp8CheckpointGpu.*:DTypeGpu.*:RandomGpu.*:GraphRandomGpu.*:TunableGpu.Scaled*:GemmKey.*:Fp8Linear.*:GemmAccesses.*' \
  timeout 240 gpu-bundle/gpu-tier.sh /tmp/tier > "$out/tier.txt" 2>&1
grep -h -B3 -A10 "Failure" /tmp/tier/*.log | head -150 >> "$out/tier.txt"
tail -1 "$out/tier.txt"
(CUDAKIT_JOBS=16 timeout 200 python/build-on-device.sh "$R/build-python" > /tmp/pyb.log 2>&1 && echo built || tail -40 /tmp/pyb.log) > "$out/pybuild.txt"
(cd "$R/python/tests" && PYTHONPATH=$R/build-python timeout 150 python3 -m pytest -q -rs -p no:cacheprovider \
   test_gpu_dtypes.py test_dtypes.py test_gds.py test_matmul_host.py test_matmul.py > "$out/pytest.txt" 2>&1)
tail -3 "$out/pytest.txt"
PYTHONPATH=$R/build-python timeout 150 python3 bench/safetensors_load_bench.py --dir /tmp --gib 2 > "$out/load.jsonl" 2> "$out/load.err"
python3 bench/gds_table.py "$out/load.jsonl" > "$out/load.txt" 2>&1
rm -f /tmp/safetensors_load_bench*
cat "$out/load.txt"
