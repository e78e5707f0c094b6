#!/usr/bin/env bash
# fuzz.sh [SECONDS_PER_TARGET]: builds the fuzz targets (fuzz/, in build-fuzz/, with clang and
# ASan+UBSan) and runs each for SECONDS_PER_TARGET (default 30) on a fresh copy of its seed
# corpus, CUDAKIT_JOBS (default: the cores) targets at a time. Exits non-zero when a target
# crashes, naming the input that crashed it and the command that reproduces the crash.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
jobs=${CUDAKIT_JOBS:-$(nproc)}
build=$root/build-fuzz
"$root/scripts/setup.sh"

echo "== build the fuzz targets ($build)"
CUDAKIT_BUILD_TARGETS=cudakit_fuzzers "$root/scripts/build.sh" "$build" \
    -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAKIT_BUILD_FUZZERS=ON \
    -DCUDAKIT_BUILD_TESTS=OFF -DCUDAKIT_BUILD_BENCHMARKS=OFF -DCUDAKIT_BUILD_TOOLS=OFF -DCUDAKIT_CUTLASS=OFF
mapfile -t targets < "$build/fuzz/fuzzers.txt"

# One target: its log, new inputs, crash artifacts and its result (the file `passed`) under
# build-fuzz/fuzz-runs/<target>/.
# -timeout: an input that takes this long is a hang; -malloc_limit_mb: one allocation this large
# for an input of a few KB is a bug (the readers' inputs grow by at most the input's size);
# -rss_limit_mb: the same for the whole process. LeakSanitizer runs after any input that leaks.
# The dictionary of a target's format (fuzz/dict/): its keywords, and the brackets and lengths
# that reach the depth and size limits (Note [Outside input]) sooner than single bytes would.
dictionary() {
  case $1 in
    memviz|snapshot|kernel_annotations|trace_merge|safetensors_header|fp8_checkpoint_layers) echo "$root/fuzz/dict/json.dict" ;;
    alloc_trace|alloc_trace_file) echo "$root/fuzz/dict/alloc_trace.dict" ;;
    tunable_results|tunable_untuned) echo "$root/fuzz/dict/tunable.dict" ;;
  esac
}

run_target() {
  local name=$1 run=$build/fuzz-runs/$1
  rm -rf "$run" && mkdir -p "$run/corpus" "$run/artifacts"
  cp "$root/fuzz/corpus/$name"/* "$run/corpus/"
  local dict_option=()
  local dict
  dict=$(dictionary "$name")
  if [ -n "$dict" ]; then dict_option=(-dict="$dict"); fi
  local rc=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions="$root/scripts/lsan.supp" \
    "$build/fuzz/fuzz_$name" "${dict_option[@]}" -max_total_time="$seconds" -timeout=10 -malloc_limit_mb=256 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$run/artifacts/" \
        "$run/corpus" > "$run/log" 2>&1 || rc=$?
  local execs
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$run/log")
  local artifact
  artifact=$(find "$run/artifacts" -type f | head -n 1)
  if [ "$rc" -eq 0 ] && [ -z "$artifact" ]; then
    echo "fuzz: $name: ok, ${execs:-?} executions in ${seconds}s"
    touch "$run/passed"
  else
    echo "fuzz: $name: CRASHED (exit $rc) on ${artifact:-an input not saved}; log: $run/log"
    grep -m 1 -E "^(==[0-9]+==ERROR|fuzz: the reader|.*runtime error|==[0-9]+== ERROR)" "$run/log" || true
    if [ -n "$artifact" ]; then echo "  reproduce: $build/fuzz/fuzz_$name $artifact"; fi
  fi
}

echo "== fuzz ${#targets[@]} targets for ${seconds}s each, $jobs at a time"
running=0
for name in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  run_target "$name" &
  running=$((running + 1))
done
wait

# A target without its `passed` file failed, also when it could not even start.
failed=()
for name in "${targets[@]}"; do
  if [ ! -e "$build/fuzz-runs/$name/passed" ]; then failed+=("$name"); fi
done
if ((${#failed[@]})); then echo "fuzz: failed: ${failed[*]}" >&2; fi
echo "fuzz: build and runs took ${SECONDS}s"
echo "fuzz: $((${#targets[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
