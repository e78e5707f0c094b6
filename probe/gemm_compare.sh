#!/usr/bin/env bash
# probe/gemm_compare.sh: on the GPU machine, from the repository root, with gpu-bundle/ (from
# scripts/stage-gpu-bundle.sh) carried: what torch 2.11 and cudakit run for each GEMM of
# bench/tunable_shapes.json and issue 36's shapes, and how fast, in one process (see
# probe/gemm_compare.py). About 4 minutes; everything goes to $OUT (3 files):
#   summary.txt         the phases' output (per shape: TFLOP/s of each variant and their kernels)
#   gemm_compare.json   per shape: medians, spreads, kernel names, cuBLASLt configurations
#   gemm_probe.tar.gz   the logs (cuBLAS/cuBLASLt API traces, with markers, and from the
#                       environment variables), the TunableOp results files of both sides,
#                       torch's TunableOp timings
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/probe-out}
mkdir -p "$out"
work=$(mktemp -d)
lib=$root/gpu-bundle/lib
export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
summary=$out/summary.txt
{
  echo "== $(date -u +%FT%TZ) bundle $(cat "$root/gpu-bundle/COMMIT" 2>/dev/null) tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1
  ls -l "$lib" 2>&1 | head -20
} >"$summary"

cuda_inc=/usr/local/cuda/include
cuda_lib=/usr/local/cuda/lib64
so=$work/libgemm_probe.so
# Plain C++: the host compiler, CUDA's headers, libcudakit and the cuBLAS libraries (the process
# uses whichever libcublas/libcublasLt torch loaded first: same sonames; the JSON lists them).
if ! ${CXX:-g++} -std=c++20 -O2 -shared -fPIC -I"$root/include" -I"$cuda_inc" "$root/probe/gemm_probe.cpp" \
    -o "$so" -L"$lib" -L"$cuda_lib" -lcudakit -lcublasLt -lcublas -lcudart -Wl,-rpath,"$lib" >>"$summary" 2>&1; then
  echo "g++ failed; trying nvcc" >>"$summary"
  nvcc -std=c++20 -O2 -shared -Xcompiler -fPIC -I"$root/include" "$root/probe/gemm_probe.cpp" -o "$so" \
    -L"$lib" -lcudakit -lcublasLt -lcublas -Xlinker -rpath="$lib" >>"$summary" 2>&1 || { echo "build failed" >>"$summary"; exit 1; }
fi
py=$root/probe/gemm_compare.py
logs=$work/logs
mkdir -p "$logs"

echo "== main: interleaved timings, kernels, heuristic lists" >>"$summary"
timeout 140 python3 "$py" --lib "$so" --out "$logs" --budget 105 >>"$summary" 2>&1
echo "main rc=$?" >>"$summary"
cp "$logs/gemm_compare.json" "$out/" 2>/dev/null

echo "== log: cuBLAS/cuBLASLt loggers (API) around one call of each variant" >>"$summary"
timeout 40 python3 "$py" --lib "$so" --out "$logs" --log --results "$logs/cudakit_tunableop_results.csv" \
  >>"$summary" 2>&1
echo "log rc=$?" >>"$summary"

echo "== env-log: CUBLASLT_LOG_LEVEL=5 CUBLAS_LOGINFO_DBG=1, three shapes, Default and library calls" >>"$summary"
CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE="$logs/env_cublaslt.log" CUBLAS_LOGINFO_DBG=1 \
  CUBLAS_LOGDEST_DBG="$logs/env_cublas.log" timeout 25 python3 "$py" --lib "$so" --out "$logs/env" --env-log \
  --only square_4096_bfloat16,fp8_4096x4096x4096,x_2048x5120x5120 >>"$summary" 2>&1
echo "env-log rc=$?" >>"$summary"

echo "== torch TunableOp off/on, interleaved" >>"$summary"
timeout 40 python3 "$py" --lib "$so" --out "$logs" --torch-tunable --budget 30 \
  --only square_4096_bfloat16,x_2048x5120x5120,x_T_8192x2048x2048,x_3072x768x3072,proj_4096x11008x4096_bfloat16,square_4096_float16 \
  >>"$summary" 2>&1
echo "torch-tunable rc=$?" >>"$summary"

for f in "$logs"/*.log "$logs"/env/*.log; do
  [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 200000000 ] && truncate -s 200000000 "$f"
done
tar -C "$work" -czf "$out/gemm_probe.tar.gz" logs
ls -l "$out" >>"$summary"
echo "== done $(date -u +%FT%TZ)" >>"$summary"
