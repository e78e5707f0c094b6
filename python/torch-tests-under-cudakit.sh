#!/usr/bin/env bash
# python/torch-tests-under-cudakit.sh TEST_FILE [PYTEST_ARGS...]: runs PyTorch's own tests of one
# file (e.g. test/test_cuda.py from the PyTorch source of the installed version; the wheel ships
# none) twice, in processes of their own: under torch's own caching allocator, then with
# cudakit's installed from the environment (CUDAKIT_TORCH_ALLOCATOR=1 and the sitecustomize of
# `python -m cudakit.torch --startup-dir`, the recipe of docs/guide/python.md). It prints the tests that pass
# under torch's allocator and fail under cudakit's: those are the ones to look at. A test that
# reads torch's own allocator (torch.cuda.memory_stats, memory_snapshot, its settings) does not
# apply to a pluggable allocator, whose statistics torch leaves unimplemented; the summary lists
# them apart by the reason torch gives (-k selects, as pytest does). Needs the cudakit package importable (PYTHONPATH).
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
# A run that died (a crash takes pytest with it) has no summary: say where it stopped.
for label in torch_allocator cudakit_allocator; do
  if ! grep -q "short test summary" "$out/$label.log"; then
    echo "== the run under $label did not finish: $(grep -m1 -E 'Fatal Python error|Killed|Timeout' "$out/$label.log")," \
         "in $(grep -m1 -oE 'in test_[A-Za-z0-9_]+' "$out/$label.log" | cut -c4-)"
  fi
done
echo "== passed under torch's allocator, not under cudakit's:"
comm -12 <(grep '^PASSED' "$out/torch_allocator.results" | cut -d' ' -f2) \
         <(grep -E '^(FAILED|ERROR)' "$out/cudakit_allocator.results" | cut -d' ' -f2) | tee "$out/regressions.txt"
# A pluggable allocator leaves torch's own statistics, snapshots and settings unimplemented
# (torch raises "CUDAPluggableAllocator does not yet support ...", or for torch.cuda.MemPool
# "pluggable does not yet support createOrIncrefPool", for any of them): a test whose
# failure says so does not apply to a pluggable allocator. The rest are cudakit's to answer.
"$python" - "$out/cudakit_allocator.log" "$out/regressions.txt" <<'PY' | tee "$out/classified.txt"
import re, sys
log, regressions = open(sys.argv[1], errors="replace").read(), open(sys.argv[2]).read().split()
# pytest's failure sections: "____ Class.test_name ____" up to the next header or the summary.
sections = dict(re.findall(r"^_{3,} (\S+) _{3,}\n(.*?)(?=^_{3,} |^=+ short test summary)", log, re.S | re.M))
# An exception in a thread the test started is not in its failure section but in the warnings
# summary, under the test's id: "path::Class::test" at the start of a line, then indented text.
summary = log.split("warnings summary", 1)[-1].split("short test summary", 1)[0]
thread_errors = {}
for test_id, text in re.findall(r"^\S+?::(\S+)\n((?:(?: .*)?\n)*)", summary, re.M):
    thread_errors[test_id.replace("::", ".")] = thread_errors.get(test_id.replace("::", "."), "") + text
not_applicable, torch_settings, open_ = [], [], []
for test in regressions:
    name = test.split("::", 1)[-1].replace("::", ".")
    body = sections.get(name, "") + thread_errors.get(name, "")
    reason = re.search(r"(?:CUDAPluggableAllocator|pluggable) does not (?:yet )?support (\w+)", body)
    # The test's source (pytest prints it) sets an option of torch's own allocator, which a
    # pluggable allocator never receives: what it checks is that option's policy.
    setting = re.search(r"_set_allocator_settings\(\s*[\"']([\w]+)", body)
    if reason:
        not_applicable.append((test, reason.group(1)))
    elif setting and setting.group(1) != "expandable_segments":
        torch_settings.append((test, setting.group(1)))
    else:
        open_.append((test, ""))
print("== of those, not applicable (torch's pluggable path has no %s):" % "/".join(sorted({r for _, r in not_applicable})) if not_applicable else "== none reads what torch leaves out of a pluggable allocator")
for test, reason in not_applicable:
    print("  %s (%s)" % (test, reason))
if torch_settings:
    print("== of those, checking a policy of torch's own allocator that an option turns on (the option does not reach a pluggable one):")
    for test, setting in torch_settings:
        print("  %s (%s)" % (test, setting))
print("== the rest, cudakit's to answer: %d" % len(open_))
for test, _ in open_:
    print("  " + test)
PY
echo "logs: $out/{torch_allocator,cudakit_allocator}.log"
