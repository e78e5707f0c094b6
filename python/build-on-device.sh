#!/usr/bin/env bash
# python/build-on-device.sh [BUILD_DIR]: builds the extension alone, against a prebuilt libcudakit
# (a staged gpu-bundle/lib) and the repository's headers, with the machine's own Python and
# nanobind (found through `python3 -m nanobind --cmake_dir`); then BUILD_DIR/cudakit is an
# importable package (PYTHONPATH=BUILD_DIR). For a GPU machine that has Python, nanobind, cmake
# and nvcc but no package registry.
#
# Note [Two builds of the extension]
# `pip install .` builds libcudakit and the extension in one CMake project (python/ as a
# subdirectory). A machine that already has libcudakit (the GPU bundle) configures python/ as a
# project of its own instead: libcudakit becomes an imported target, and the package folder gets
# a copy of it beside the extension, whose rpath is $ORIGIN, as in the wheel.
#
# Environment: CUDAKIT_PREBUILT_LIBRARY (default: gpu-bundle/lib/libcudakit.so.N, the soname:
# the extension asks for that name), CUDAKIT_PYTHON
# (default python3), CUDAKIT_JOBS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-python}
python=$(command -v "${CUDAKIT_PYTHON:-python3}")
library=${CUDAKIT_PREBUILT_LIBRARY:-$(ls "$root"/gpu-bundle/lib/libcudakit.so.[0-9] 2>/dev/null | head -1)}
if [ -z "$library" ] || [ ! -e "$library" ]; then
  echo "build-on-device: no libcudakit.so.N (stage gpu-bundle/ or set CUDAKIT_PREBUILT_LIBRARY)" >&2
  exit 1
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake -S "$root/python" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCUDAKIT_PREBUILT_LIBRARY="$library" -DCUDAKIT_INCLUDE_DIR="$root/include" \
  -DPython_EXECUTABLE="$python" -Dnanobind_ROOT="$("$python" -m nanobind --cmake_dir)" >/dev/null
cmake --build "$build" -j "${CUDAKIT_JOBS:-$(nproc)}"
echo "build-on-device: PYTHONPATH=$build python3 -c 'import cudakit'"
