#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test with CTest (GPU-tier
# tests skip, visibly, without a GPU), the Python module's pytest suite and the documentation
# site's build; then the host tier again under AddressSanitizer+UBSan and the concurrency tests
# under ThreadSanitizer. Exits non-zero when any test fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
jobs=${CUDAKIT_JOBS:-$(nproc)}
# Note [Three builds, one compile of the kernels]
# The suite builds three times (Release, ASan+UBSan, TSan). The sanitizers instrument host C++
# only, so the CUDA objects of the three builds can be the same: the sanitizer builds compile CUDA
# with the Release flags, and ccache (scripts/build.sh), keyed on paths relative to the tree,
# compiles each .cu file once for all three. The sanitizer builds compile host code at -O1 with
# line tables only, which is what their reports need.
export CCACHE_BASEDIR="$root"
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
                 "-DCMAKE_CUDA_FLAGS_RELWITHDEBINFO=-O3 -DNDEBUG"
                 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                 -DCUDAKIT_BUILD_BENCHMARKS=OFF -DCUDAKIT_BUILD_TOOLS=OFF
                 # CUTLASS's kernels are device code the sanitizers do not see: built once, in Release.
                 -DCUDAKIT_CUTLASS=OFF)

echo "== build and test (Release)"
"$root/scripts/build.sh" "$root/build"
(cd "$root/build" && ctest --output-on-failure -j "$jobs" --timeout 600)

echo "== Python module: pip install . into .venv, then pytest (python/tests)"
"$root/scripts/test-python.sh"

if [ "${CUDAKIT_SKIP_DOCS:-0}" != 1 ]; then
  # The documentation site, warnings as errors: Doxygen over the headers (XML only) and Sphinx,
  # no compiler involved; a minute or two on a clean clone, less with its doctrees kept.
  echo "== documentation site (scripts/docs.sh)"
  "$root/scripts/docs.sh"
fi

if [ "${CUDAKIT_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== host tier under AddressSanitizer + UBSan"
  "$root/scripts/build.sh" "$root/build-asan" "${sanitizer_flags[@]}" -DCUDAKIT_SANITIZE=address,undefined
  # LeakSanitizer's exit-time tracer itself can crash ("Tracer caught signal 11" after "DTLS 10 at
  # 0x000000013aaa-0x002800014bac": a dynamic-TLS slot of a dlopened library that GCC 12's LSan
  # misreads) in a process whose test passed: seen on 2026-12-02 in LibraryTables.EachLoadsOrSaysWhyNot
  # (it loads CUPTI, NCCL, cuFile and NVML) under ctest, every time, and never when run by hand. When
  # that is the failure, the failed tests run once more without the leak check (ASan's and UBSan's
  # checks stay), and say so; any other failure stands.
  asan_ctest() {  # $1: detect_leaks (1 or 0); the rest: ctest's arguments
    local leaks=$1
    shift
    (cd "$root/build-asan" && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=$leaks \
        LSAN_OPTIONS=suppressions="$root/scripts/lsan.supp" \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j "$jobs" --timeout 900 "$@")
  }
  if ! asan_ctest 1; then
    grep -q "LeakSanitizer has encountered a fatal error" "$root/build-asan/Testing/Temporary/LastTest.log" || exit 1
    echo "== LeakSanitizer's own tracer crashed: the failed tests once more, without the leak check"
    asan_ctest 0 --rerun-failed
  fi

  echo "== concurrency tests under ThreadSanitizer"
  "$root/scripts/build.sh" "$root/build-tsan" "${sanitizer_flags[@]}" -DCUDAKIT_SANITIZE=thread
  (cd "$root/build-tsan" && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions="$root/scripts/tsan.supp" \
      ctest --output-on-failure -j "$jobs" --timeout 900 -R "${CUDAKIT_TSAN_FILTER:-Concurren|Thread}")
  # A test that fails once in a thousand runs is a bug: the allocator's stress tests of its
  # statistics under threads, many times over (CUDAKIT_TSAN_REPEAT, 200 by default).
  echo "== the allocator's threaded stress tests, ${CUDAKIT_TSAN_REPEAT:-200} times under ThreadSanitizer"
  (cd "$root/build-tsan" && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions="$root/scripts/tsan.supp" \
      ./bin/cudakit_host_tests --gtest_brief=1 --gtest_repeat="${CUDAKIT_TSAN_REPEAT:-200}" \
      --gtest_filter='CachingAllocatorThreads.TurnsOfLending*:CachingAllocatorThreads.RoundsOf*:CachingAllocatorThreads.ConcurrentStreamsReportTheDevicePeaksExactly' \
      | grep -E "FAILED|PASSED" | sort | uniq -c)

  echo "== fuzz targets under ASan+UBSan (each reader of outside input, ${CUDAKIT_FUZZ_SECONDS:-30} s each)"
  "$root/scripts/fuzz.sh" "${CUDAKIT_FUZZ_SECONDS:-30}"
fi
