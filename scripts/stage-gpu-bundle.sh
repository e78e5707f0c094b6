#!/usr/bin/env bash
# Builds (no GPU needed) and stages everything the GPU tier and the benchmarks need into
# gpu-bundle/: the binaries, libcudakit, the non-CUDA shared libraries they use, and tests/data
# (the allocation traces among it) as data/. The GPU machine then needs nothing installed: CUDA
# 13's own libraries are there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUDAKIT_BUILD_DIR:-$root/build}
bundle=${CUDAKIT_BUNDLE_DIR:-$root/gpu-bundle}
"$root/scripts/build.sh" "$build"
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/data"
cp -a "$build"/bin/* "$bundle/bin/"
cp -a "$build"/src/libcudakit.so* "$bundle/lib/"
# Non-CUDA shared libraries the binaries need that a bare GPU image may lack.
for lib in libbenchmark.so.1debian; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$bundle/lib/" 2>/dev/null || true
done
# tests/data (the allocation traces among it): the tests' data and the benchmarks' traces.
cp -a "$root/tests/data/." "$bundle/data/"
cp "$root/scripts/gpu-tier.sh" "$root/scripts/device-env.sh" "$bundle/"
# The commit the bundle was built from, for the performance report ("+" where the tree had changes).
(cd "$root" && echo "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +)") > "$bundle/COMMIT"
# --strip-debug keeps .symtab: stack traces name local functions from it (Note [Naming stack frames]).
strip --strip-debug "$bundle"/bin/* "$bundle"/lib/libcudakit.so* 2>/dev/null || true
du -sh "$bundle"
