#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test with CTest (GPU-tier
# tests skip, visibly, without a GPU); then the host tier again under AddressSanitizer+UBSan and
# the concurrency tests under ThreadSanitizer. Exits non-zero when any test fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
jobs=${CUDAKIT_JOBS:-$(nproc)}

echo "== build and test (Release)"
"$root/scripts/build.sh" "$root/build"
(cd "$root/build" && ctest --output-on-failure -j "$jobs" --timeout 600)

if [ "${CUDAKIT_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== host tier under AddressSanitizer + UBSan"
  "$root/scripts/build.sh" "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCUDAKIT_SANITIZE=address,undefined -DCUDAKIT_BUILD_BENCHMARKS=OFF -DCUDAKIT_BUILD_TOOLS=OFF
  (cd "$root/build-asan" && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1 \
      LSAN_OPTIONS=suppressions="$root/scripts/lsan.supp" \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --output-on-failure -j "$jobs" --timeout 900)

  echo "== concurrency tests under ThreadSanitizer"
  "$root/scripts/build.sh" "$root/build-tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCUDAKIT_SANITIZE=thread -DCUDAKIT_BUILD_BENCHMARKS=OFF -DCUDAKIT_BUILD_TOOLS=OFF
  (cd "$root/build-tsan" && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      ctest --output-on-failure -j "$jobs" --timeout 900 -R "${CUDAKIT_TSAN_FILTER:-Concurren|Thread}")
fi
