#!/usr/bin/env bash
# build.sh [BUILD_DIR] [extra cmake args...]: configures and builds (Release by default).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true
export PATH=/usr/local/cuda/bin:$PATH
jobs=${CUDAKIT_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "$@" >/dev/null
cmake --build "$build" -j "$jobs"
