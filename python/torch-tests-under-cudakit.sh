#!/usr/bin/env bash
# python/torch-tests-under-cudakit.sh TEST_FILE [PYTEST_ARGS...]: runs PyTorch's own tests of one
# file (e.g. test/test_cuda.py from the PyTorch source of the installed version; the wheel ships
# none) twice, in processes of their own: under torch's own caching allocator, then with
# cudakit's installed from the environment (CUDAKIT_TORCH_ALLOCATOR=1 and the sitecustomize of
# `python -m cudakit.torch --startup-dir`, the README's recipe). It prints the tests that pass
# under torch's allocator and fail under cudakit's: those are the ones to look at. A test that
# reads torch's own allocator (torch.cuda.memory_stats, memory_snapshot, its settings) does not
# apply to a pluggable allocator, whose statistics torch leaves empty; the summary lists them
# apart by name (-k selects, as pytest does). Needs the cudakit package importable (PYTHONPATH).
set -uo pipefail
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "usage: python/torch-tests-under-cudakit.sh TEST_FILE [PYTEST_ARGS...] (TEST_FILE must exist)" >&2
  exit 2
fi
file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
python=${CUDAKIT_PYTHON:-python3}
out=${OUT:-/tmp/torch-tests-under-cudakit}
mkdir -p "$out"
startup=$("$python" -m cudakit.torch --startup-dir) || { echo "cudakit is not importable with $python" >&2; exit 1; }
run() {  # $1: label; the rest: environment assignments
  local label=$1
  shift
  (cd "$(dirname "$file")" && env "$@" "$python" -m pytest -q -p no:cacheprovider -rA "$file" "${ARGS[@]}" \
     > "$out/$label.log" 2>&1)
  grep -E '^(PASSED|FAILED|ERROR|SKIPPED)' "$out/$label.log" | sed 's/ - .*//' | sort > "$out/$label.results"
  echo "$label: $(grep -c '^PASSED' "$out/$label.results") passed, $(grep -c -E '^(FAILED|ERROR)' "$out/$label.results") failed, $(grep -c '^SKIPPED' "$out/$label.results") skipped"
}
ARGS=("$@")
run torch_allocator
# A file that does not import (a test file from another torch version, a module its harness needs
# that is not installed) fails as one collection error under both allocators: say so, and stop.
if grep -q "ERROR collecting" "$out/torch_allocator.log"; then
  echo "the test file did not import with $python's torch ($("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null)):" >&2
  grep -m3 -E "^E +" "$out/torch_allocator.log" >&2
  echo "(take the file from the installed version's tag; torch's harness also needs expecttest)" >&2
  exit 3
fi
run cudakit_allocator CUDAKIT_TORCH_ALLOCATOR=1 "PYTHONPATH=$startup${PYTHONPATH:+:$PYTHONPATH}"
echo "== passed under torch's allocator, not under cudakit's:"
comm -12 <(grep '^PASSED' "$out/torch_allocator.results" | cut -d' ' -f2) \
         <(grep -E '^(FAILED|ERROR)' "$out/cudakit_allocator.results" | cut -d' ' -f2) | tee "$out/regressions.txt"
echo "== of those, reading torch's own allocator (not applicable to a pluggable one):"
grep -E 'memory_stats|snapshot|allocator_settings|memory_summary|reset_peak|max_memory|memory_allocated|memory_reserved|expandable|caching_allocator' \
  "$out/regressions.txt" || echo "(none by name)"
echo "logs: $out/{torch_allocator,cudakit_allocator}.log"
