#!/usr/bin/env bash
# Runs the whole GPU tier on a GPU machine from a staged bundle (scripts/stage-gpu-bundle.sh) and
# prints a summary ending in "N passed, N failed, N skipped" (a test binary that dies counts as one
# failure: its results are lost). Usage: gpu-bundle/gpu-tier.sh [OUT_DIR]
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-/tmp/cudakit-gpu-tier}}
mkdir -p "$out"
source "$bundle/device-env.sh" "$bundle"
export CUDAKIT_TEST_DATA_DIR=${CUDAKIT_TEST_DATA_DIR:-$bundle/data}
status=0
rm -f "$out"/*.xml "$out"/crashed.txt
for t in cudakit_host_tests cudakit_gpu_tests; do
  echo "== $t"
  "$bundle/bin/$t" --gtest_output=xml:"$out/$t.xml" ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} \
      >"$out/$t.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || status=1
  grep -E "^\[  (FAILED|SKIPPED) |Failure|error:" "$out/$t.log" | head -40
  # A binary that dies writes no XML: its tests would vanish from the count. It counts as a failure.
  if [ ! -s "$out/$t.xml" ]; then
    echo "$t died (exit status $rc) in $(grep '^\[ RUN      \]' "$out/$t.log" | tail -1 | cut -c14-)" | tee -a "$out/crashed.txt"
  fi
done
python3 - "$out" <<'PY'
import os, sys, glob, xml.etree.ElementTree as ET
passed = failed = skipped = 0
crashed = os.path.join(sys.argv[1], "crashed.txt")
if os.path.exists(crashed): failed += len(open(crashed).read().splitlines())
for f in sorted(glob.glob(sys.argv[1] + "/*.xml")):
    for case in ET.parse(f).getroot().iter("testcase"):
        if case.find("failure") is not None: failed += 1
        elif case.find("skipped") is not None or case.get("result") == "skipped": skipped += 1
        else: passed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
