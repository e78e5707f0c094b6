#!/usr/bin/env bash
# build.sh [BUILD_DIR] [extra cmake args...]: configures and builds (Release by default); only
# the targets CUDAKIT_BUILD_TARGETS names (space-separated) where it is set.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true
export PATH=/usr/local/cuda/bin:$PATH
jobs=${CUDAKIT_JOBS:-$(nproc)}
# A compiler cache where one is installed (scripts/setup.sh installs ccache): the three builds of
# the test suite and rebuilds after small edits then compile each unchanged file once.
launcher=()
if command -v ccache >/dev/null && [ "${CUDAKIT_NO_CCACHE:-0}" != 1 ]; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "${launcher[@]}" "$@" >/dev/null
targets=()
for t in ${CUDAKIT_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
