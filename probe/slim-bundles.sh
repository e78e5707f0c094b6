#!/usr/bin/env bash
# Slim bundles for scripts/device-ab.sh on the GPU machine: libcudakit, alloc_bench, core_bench,
# the Google Benchmark library core_bench loads (the GPU machine has none), and include/ (probes
# compile against each tree's own headers), one per revision, under /tmp/slim/gpu-bundle-REV;
# then pack them with `tar -cf - -C /tmp/slim gpu-bundle-A gpu-bundle-B | xz -T2 -6 >
# gpu-bundle-ab/NAME.tar.xz`. Built in a worktree at /work/bisect (CCACHE_BASEDIR=/work, so the
# worktree's objects are shared across revisions), Release, CUTLASS, tests, tools and Python off.
#   probe/slim-bundles.sh 6716d75 14dd232
set -euo pipefail
export CCACHE_BASEDIR=/work
repo=$(git rev-parse --show-toplevel)
tree=/work/bisect build=/work/bisect-build
[ -d "$tree" ] || git -C "$repo" worktree add --detach "$tree" HEAD > /dev/null
for rev in "$@"; do
  git -C "$tree" checkout -q --detach "$rev"
  cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache -DCUDAKIT_CUTLASS=OFF -DCUDAKIT_BUILD_TESTS=OFF -DCUDAKIT_BUILD_TOOLS=OFF \
    -DCUDAKIT_BUILD_PYTHON=OFF -DCUDAKIT_BUILD_FUZZERS=OFF -DCUDAKIT_BUILD_BENCHMARKS=ON > "/tmp/slim_cmake_$rev.log"
  cmake --build "$build" --target cudakit alloc_bench core_bench -j2 > "/tmp/slim_build_$rev.log"
  out=/tmp/slim/gpu-bundle-$rev
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  cp -a "$build/bin/alloc_bench" "$build/bin/core_bench" "$out/bin/"
  cp -a "$build"/src/libcudakit.so* "$out/lib/"
  cp -L "$(ldd "$build/bin/core_bench" | awk '/libbenchmark/ {print $3}')" "$out/lib/"
  cp -a "$tree/include" "$out/"
  echo "$rev" > "$out/COMMIT"
  echo "slim bundle of $rev: $out"
done
