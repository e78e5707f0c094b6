#!/usr/bin/env bash
# bench/jiterator_first_process.sh [ROUNDS]: the jiterator's cold first call in a machine's first
# process, made repeatable by dropping the page cache (root) before each process: cudakit with the
# read-ahead of libnvrtc (Note [Reading NVRTC ahead]), cudakit without it
# (CUDAKIT_JITERATOR_PREFETCH=0), torch's jiterator. Each process prints its JSON lines under a
# "== what" header; cudakit's also print CUDAKIT_JITERATOR_VERBOSE's breakdown. Last, whether
# `import torch` and a CUDA tensor already map libnvrtc (outside torch's timed first call).
# From the repository root on the GPU machine, with a staged gpu-bundle/.
set -uo pipefail
B=${BUNDLE:-gpu-bundle}
rounds=${1:-2}
export LD_LIBRARY_PATH="$PWD/$B/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
drop() {
  sync
  if ! echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then
    echo "jiterator_first_process: cannot drop the page cache (not root?): the figures below are not first-process ones"
  fi
}
for ((round = 1; round <= rounds; round++)); do
  dir=$(mktemp -d /tmp/jiterator_first_XXXXXX)
  drop; echo "== cudakit, read-ahead on (round $round)"
  CUDAKIT_JITERATOR_VERBOSE=1 "$B/bin/jiterator_bench" --cold-child "$dir/on" 2>&1
  drop; echo "== cudakit, read-ahead off (round $round)"
  CUDAKIT_JITERATOR_VERBOSE=1 CUDAKIT_JITERATOR_PREFETCH=0 "$B/bin/jiterator_bench" --cold-child "$dir/off" 2>&1
  drop; echo "== torch_jiterator (round $round)"
  PYTORCH_KERNEL_CACHE_PATH="$dir/torch" python3 bench/torch_jiterator_bench.py --cold-child torch_jiterator 2>&1
  rm -rf "$dir"
done
drop
python3 - <<'PY'
import torch
torch.ones(1, device="cuda")
maps = [line.split()[-1] for line in open("/proc/self/maps") if "nvrtc" in line]
print("== libnvrtc mapped after import torch and a CUDA tensor:", sorted(set(maps)) or "no")
PY
