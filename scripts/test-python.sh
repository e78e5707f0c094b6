#!/usr/bin/env bash
# test-python.sh: builds the Python module into the project's venv (`pip install .`, through
# scikit-build-core and the same CMake project) and runs its pytest suite (python/tests). The GPU
# tests skip, visibly, without a GPU. pytest's exit code 5 (nothing collected) counts as success.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-python.sh"
venv=$root/.venv
export PATH=/usr/local/cuda/bin:$PATH
# Note [The wheel's build reuses the Release build's objects]
# scikit-build-core configures its own build folder. With the Makefile generator, a folder at the
# depth of build/ (build-py/) and the compiler cache keyed on paths relative to the tree, each
# libcudakit object is the Release build's, found in the cache rather than compiled again.
export CCACHE_BASEDIR="$root"
export CMAKE_GENERATOR="Unix Makefiles"
export CMAKE_BUILD_PARALLEL_LEVEL=${CUDAKIT_JOBS:-$(nproc)}
# The compilers scripts/build.sh configures with (CMake's defaults), whatever Python was built with.
launcher=(-Ccmake.define.CMAKE_CXX_COMPILER="$(command -v c++)")
if command -v ccache >/dev/null && [ "${CUDAKIT_NO_CCACHE:-0}" != 1 ]; then
  launcher+=(-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache -Ccmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# CUTLASS's kernels (CUDAKIT_CUTLASS) are left out of this build unless asked for: the Python tests
# run none of them, and compiling them a second time (build/ has them) would add minutes to the
# suite. The GPU machine's module links the bundle's libcudakit, which has them.
launcher+=(-Ccmake.define.CUDAKIT_CUTLASS="${CUDAKIT_CUTLASS:-OFF}")
echo "== python: pip install . into $venv"
(cd "$root" && "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps \
    -Cbuild-dir="$root/build-py" "${launcher[@]}" .)
echo "== python: pytest"
# Run from the tests' folder so that the installed package, not python/cudakit, is imported.
cd "$root/python/tests"
set +e
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$@" .
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected nothing (exit 5): not a failure"
  status=0
fi
exit "$status"
