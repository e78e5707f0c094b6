#!/usr/bin/env bash
# probe/gemm_verify.sh: issue 36's GPU checks, on the GPU machine, from the repository
# root with gpu-bundle/ staged from this branch (scripts/stage-gpu-bundle.sh). Two calls of under 10
# minutes each: PHASES="python tier pytest", then PHASES="bench model probe" (the module stays built);
# PHASES="python tier pytest bench model probe" (default: all, in that order) picks some.
#   python  builds the Python module against the bundle (python/build-on-device.sh build-python)
#   tier    the GPU tier's TunableOp and matmul tests (TunableGpu.*, TensorMatmul*, ...)
#   pytest  python/tests/test_matmul*.py: cudakit.matmul / linear / FP8 / switches / route_torch,
#           transformers GPT-2 and Llama blocks routed through cudakit's tuner
#   bench   bench/torch_gemm_interleaved.py over the suite and issue 36's shapes, with torch's
#           TunableOp, then the table (bench/tunable_table.py)
#   model   a Llama model's forward (2 layers, hidden 4096, 2 x 1024 tokens, bfloat16) plain and
#           through cudakit.route_torch(), interleaved
#   probe   probe/gemm_compare.py on a few shapes, with the operands also in cudakit's memory
# Everything lands in $OUT: summary.txt (each phase's tail) and verify.tar.gz (all outputs).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/verify-out}
work=$(mktemp -d)
mkdir -p "$out"
B=gpu-bundle
source "$root/scripts/device-env.sh" "$root/$B"
export PATH=/usr/local/cuda/bin:$PATH
phases=${PHASES:-python tier pytest bench model probe}
summary=$out/summary.txt
has() { [[ " $phases " == *" $1 "* ]]; }
note() { echo "== $* ($(date -u +%T))" | tee -a "$summary"; }
note "start: bundle $(cat $B/COMMIT 2>/dev/null), tree $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >> "$summary" 2>&1

export PYTHONPATH="$root/build-python${PYTHONPATH:+:$PYTHONPATH}"
if has python || ! python3 -c "import cudakit" 2>/dev/null; then
  note "python: build-on-device"
  CUDAKIT_JOBS=16 timeout 230 python/build-on-device.sh "$root/build-python" > "$work/python-build.log" 2>&1
  echo "rc=$?" >> "$work/python-build.log"; tail -3 "$work/python-build.log" >> "$summary"
fi

if has tier; then
  note "tier: TunableOp and matmul GPU tests"
  GTEST_FILTER='TunableGpu.*:TensorMatmul*:GemmKey.*:TuningLoop.*:TuningOptions.*:ResultsFile.*:UntunedFile.*:TunableApi*' \
    timeout 200 "$B/gpu-tier.sh" "$work/tier" > "$work/tier.txt" 2>&1
  echo "rc=$?" >> "$work/tier.txt"; tail -15 "$work/tier.txt" >> "$summary"
fi

if has pytest; then
  note "pytest: python/tests/test_matmul*.py"
  (cd python/tests && timeout 150 python3 -m pytest -q -rs -p no:cacheprovider test_matmul.py test_matmul_host.py) \
    > "$work/pytest.txt" 2>&1
  echo "rc=$?" >> "$work/pytest.txt"; tail -25 "$work/pytest.txt" >> "$summary"
fi

if has bench; then
  note "bench: torch_gemm_interleaved (suite + issue 36's shapes, torch's TunableOp)"
  PYTHONUNBUFFERED=1 timeout 330 python3 bench/torch_gemm_interleaved.py --extra --torch-tunableop \
    --json "$work/interleaved.jsonl" > "$work/interleaved.txt" 2> "$work/interleaved.err"
  echo "rc=$?" >> "$work/interleaved.txt"
  python3 bench/tunable_table.py "$work/interleaved.jsonl" > "$work/interleaved_table.txt" 2>&1
  cat "$work/interleaved_table.txt" >> "$summary"; tail -5 "$work/interleaved.err" >> "$summary"
fi

if has model; then
  note "model: Llama forward, plain and through cudakit's tuner"
  PYTHONUNBUFFERED=1 timeout 140 python3 bench/torch_model_forward_bench.py --model llama \
    --json "$work/model.jsonl" > "$work/model.txt" 2>&1
  echo "rc=$?" >> "$work/model.txt"; grep -v '^|' "$work/model.txt" | tail -4 >> "$summary"
fi

if has probe; then
  note "probe: a few shapes, operands in torch's and in cudakit's memory"
  so=$work/libgemm_probe.so
  g++ -std=c++20 -O2 -shared -fPIC -I"$root/include" -I/usr/local/cuda/include probe/gemm_probe.cpp -o "$so" \
    -L"$root/$B/lib" -L/usr/local/cuda/lib64 -lcudakit -lcublasLt -lcublas -lcudart -Wl,-rpath,"$root/$B/lib" \
    >> "$summary" 2>&1
  timeout 100 python3 probe/gemm_compare.py --lib "$so" --out "$work/probe" --budget 70 \
    --only square_4096_bfloat16,x_2048x5120x5120,x_3072x768x3072,proj_4096x11008x4096_bfloat16,x_fp8_8192 \
    > "$work/probe.txt" 2>&1
  echo "rc=$?" >> "$work/probe.txt"; grep '^\[' "$work/probe.txt" | sed 's/ | kernels:.*//' >> "$summary"
fi

tar -C "$work" -czf "$out/verify.tar.gz" . 2>/dev/null
note "done"
