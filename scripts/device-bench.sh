#!/usr/bin/env bash
# On the GPU machine, from the repository root with a staged gpu-bundle/: the GPU tier, then every
# benchmark side by side with PyTorch, logs under $OUT (or /tmp/cudakit-bench).
set -uo pipefail
# `scripts/device-bench.sh compare A.json B.json`: what moved between two runs' reports beyond noise.
if [ "${1:-}" = compare ]; then shift; exec python3 "$(dirname "$0")/../bench/report.py" compare "$@"; fi
B=${BUNDLE:-gpu-bundle}
out=${OUT:-/tmp/cudakit-bench}
mkdir -p "$out"
source scripts/device-env.sh "$B"
# Every recorded trace (tests/data/alloc-traces), labelled by its name.
T=""
for f in "$B"/data/alloc-traces/trace_*.csv.gz; do n=$(basename "$f" .csv.gz); T="$T ${n#trace_} $f"; done
# PARTS="alloc tunable ..." runs only those parts (tier alloc core random graphs jiterator pinned
# tunable nvtx sanitizer gds green nccl); unset, all of them. SKIP_TIER=1 leaves out the tier.
# Each part announces itself with a progress line (its number, the time so far); a part that cannot
# run says so on one line, which also goes to $out/skipped.txt for the report (bench/report.py).
all_parts="tier alloc core random graphs jiterator pinned tunable nvtx sanitizer gds green nccl python"
selected=0; for p in $all_parts; do if [ -z "${PARTS:-}" ] || [[ " $PARTS " == *" $p "* ]]; then selected=$((selected + 1)); fi; done
started=$SECONDS; done_parts=0
: > "$out/skipped.txt"
part() {
  [ -z "${PARTS:-}" ] || [[ " $PARTS " == *" $1 "* ]] || return 1
  if [ "$1" = tier ] && [ "${SKIP_TIER:-0}" = 1 ]; then return 1; fi
  done_parts=$((done_parts + 1))
  echo "== [$done_parts/$selected] $1 ($((SECONDS - started)) s so far)"
}
skip() { echo "skipped $1: $2"; echo "$1: $2" >> "$out/skipped.txt"; }
# The extension built here, against the bundle's libcudakit, unless cudakit imports already; true
# when it imports then.
python_module() {
  if ! python3 -c "import cudakit" 2>/dev/null && [ -x python/build-on-device.sh ] && [ ! -f "$out/python-build.log" ]; then
    echo "   building the Python module against $B/lib (python/build-on-device.sh)"
    if python/build-on-device.sh "$PWD/build-python" > "$out/python-build.log" 2>&1; then
      export PYTHONPATH="$PWD/build-python${PYTHONPATH:+:$PYTHONPATH}"
    else tail -30 "$out/python-build.log"; fi
  fi
  python3 -c "import cudakit" 2>/dev/null
}
# The machine, for the report's header.
python3 - "$out/machine.json" <<'PY' 2>/dev/null || true
import json, subprocess, sys
m = {}
try:
    q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                       capture_output=True, text=True).stdout.strip().splitlines()
    m["gpu"], m["driver"] = [x.strip() for x in q[0].split(",")]
    m["gpus"] = len(q)
except Exception:
    pass
for name in ("torch", "cupy"):
    try:
        m[name] = __import__(name).__version__
    except Exception:
        m[name] = "not installed"
try:
    import torch
    m["cuda"] = torch.version.cuda
except Exception:
    pass
# The kernel tells the lent machines' two runtimes apart (a 4.4 kernel is gVisor's, where system
# calls and page faults cost far more: KINDS.md), which host-time rows depend on.
import platform
m["kernel"] = platform.release()
json.dump(m, open(sys.argv[1], "w"))
PY
if part tier; then "$B/gpu-tier.sh" "$out/tier" 2>&1 | tail -25; fi
if part alloc; then
  echo "   allocators (cudakit, PyTorch C++, cudakit with cross_stream_reuse:off, cudaMallocAsync, cudakit's cudaMallocAsync backend, cudaMalloc)"
  # cudakit and torch alternate in three processes each: on these VMs one process runs 20-30%
  # slower than the next throughout (the same binary measured 268-372 ns/op on gpt_train), so the
  # table gives each allocator's median process (bench/alloc_table.py).
  # The first round also samples memory over each trace for the report's plots (untimed replays).
  {
    for round in 1 2 3; do
      if [ $round = 1 ]; then export CUDAKIT_BENCH_TIMELINES=1; else unset CUDAKIT_BENCH_TIMELINES; fi
      "$B/bin/alloc_bench" --only cudakit $T
      if [ $round = 1 ]; then timeout 300 bench/torch/build_and_run.sh "$B" /tmp/torch_alloc_bench $T --interleaved 5
      else timeout 120 /tmp/torch_alloc_bench $T; fi
    done
    unset CUDAKIT_BENCH_TIMELINES
    # Each stream to its own memory, for the cross-stream rows (See Note [Memory across streams]).
    CUDAKIT_ALLOC_CONF=cross_stream_reuse:off "$B/bin/alloc_bench" --only cudakit $T | sed 's/"cudakit"/"cudakit_off"/'
    # Per-stream peaks, no device-wide ledger: what exact peaks cost (See Note [Device-wide peaks];
    # its peak allocated is the streams' peaks summed, so its ratio reads low).
    CUDAKIT_ALLOC_CONF=exact_peaks:False "$B/bin/alloc_bench" --only cudakit $T | sed 's/"cudakit"/"cudakit_per_stream_peaks"/'
    CUDAKIT_BENCH_TIMELINES=1 "$B/bin/alloc_bench" --only cudaMallocAsync $T
    "$B/bin/alloc_bench" --only cudakit_async $T
    "$B/bin/alloc_bench" --only cudaMalloc
  } > "$out/alloc.jsonl" 2> "$out/alloc.err"
  python3 bench/alloc_table.py "$out/alloc.jsonl"
  for f in "$B"/data/alloc-traces/trace_*.csv.gz; do "$B/bin/cudakit" alloc-replay "$f" --json; done
fi
if part core; then
  echo "   core"
  # Note [Interleaved repetitions]
  # Each cudakit row and its raw call ran once, one after the other, in one process: the pair's
  # ratio moved by tenths between runs of the same code, either way (notes/performance-rows.md).
  # Now every benchmark runs 31 times, the repetitions of all of them interleaved in random order,
  # and the report takes each one's median (bench/report.py, area_core). Short repetitions (20 ms)
  # and many of them: the machine's speed moves in steps lasting longer than one (seven
  # repetitions of a raw call spread by tens of percent around their mean: notes/performance-rows.md),
  # so the two sides of a pair meet every step alike and the median of 31 is not one step's value.
  # Each benchmark warms up for 20 ms before the repetition that sets its iteration count: in one
  # run the raw stream create's median read far above cudakit's same call, with a spread that
  # only a handful of iterations a repetition explains (notes/performance-rows.md). Every
  # repetition, with its iteration count, goes to core.json for the next look.
  "$B/bin/core_bench" --benchmark_min_time=0.02 --benchmark_min_warmup_time=0.02 --benchmark_repetitions=31 \
    --benchmark_enable_random_interleaving=true --benchmark_display_aggregates_only=true \
    --benchmark_out="$out/core.json" --benchmark_out_format=json 2>&1 \
    | grep -E "^BM_" | tee "$out/core.txt"
fi
if part random; then
  if [ -x "$B/bin/random_bench" ]; then
    "$B/bin/random_bench" --benchmark_out="$out/random.json" --benchmark_out_format=json 2>&1 \
      | grep -v "^BM_Sweep" | tail -20 | tee "$out/random.txt"
    PYTHONUNBUFFERED=1 python3 bench/torch_random_bench.py --sweep 2>&1 | tee -a "$out/random.txt" | grep -v '^{' | tail -10
  else skip random "random_bench was not built"; fi
fi
if part graphs; then
  if [ -x "$B/bin/graph_bench" ]; then
    echo "   graphs and profiler (cudakit, then torch)"
    "$B/bin/graph_bench" 2>&1 | tee "$out/graph.txt"
    python3 bench/torch_graph_bench.py 2>&1 | grep -v -i warn | tee -a "$out/graph.txt"
    # Note [Host times over processes]
    # On the lent VMs a process can run at half speed for its whole life (bench/python_bench.py,
    # Note [A process's own speed]); the replay host-time rows of one process each read
    # 0.50-1.00x torch over five runs of the same code. Four more
    # processes of each side, alternating, time those rows again; the report takes each side's
    # median process of five (bench/report.py, area_graphs): of three, one slow process of either
    # side still moved the median by the whole gap between the two sides.
    for round in 2 3 4 5; do
      "$B/bin/graph_bench" --host-times 2>&1 | tee -a "$out/graph.txt"
      python3 bench/torch_graph_bench.py --host-times 2>&1 | grep -v -i warn | tee -a "$out/graph.txt"
    done
    "$B/bin/profiler_bench" 2>&1 | tail -5 | tee -a "$out/graph.txt"
  else skip "graphs" "graph_bench was not built"; fi
fi
if part jiterator; then
  if [ -x "$B/bin/jiterator_bench" ]; then
    echo "   jiterator (cudakit, then torch's jiterator, torch's ops and CuPy)"
    {
      "$B/bin/jiterator_bench"
      PYTHONUNBUFFERED=1 python3 bench/torch_jiterator_bench.py
    } > "$out/jiterator.jsonl" 2> "$out/jiterator.err"
    python3 bench/jiterator_table.py "$out/jiterator.jsonl" | tee "$out/jiterator.txt"
  else skip "jiterator" "jiterator_bench was not built"; fi
fi
if part pinned; then
  echo "   pinned host memory (cudakit, then torch)"
  "$B/bin/pinned_bench" 2>&1 | tee "$out/pinned.txt"
  python3 bench/torch_pinned_bench.py 2>&1 | grep -v -i warn | tee -a "$out/pinned.txt"
fi
if part tunable; then
  if [ -x "$B/bin/tunable_bench" ]; then
    echo "   TunableOp GEMMs (cudakit: cuBLAS default, cuBLASLt's first heuristic, tuned; then torch.matmul without and with its TunableOp)"
    {
      "$B/bin/tunable_bench" bench/tunable_shapes.json
      PYTHONUNBUFFERED=1 python3 bench/torch_tunable_bench.py bench/tunable_shapes.json 2>/dev/null
    } > "$out/tunable.jsonl" 2> "$out/tunable.err"
    if python_module; then
      echo "   cudakit's GEMM and torch's in one process, alternating per round (bench/torch_gemm_interleaved.py)"
      # CUDAKIT_GEMM_BUDGET_S: the interleaved run's seconds, tuning included (default 330).
      PYTHONUNBUFFERED=1 python3 bench/torch_gemm_interleaved.py --extra --torch-tunableop \
        --budget-s "${CUDAKIT_GEMM_BUDGET_S:-330}" --json "$out/tunable.jsonl" \
        > "$out/gemm_interleaved.txt" 2>> "$out/tunable.err"
      echo "   a transformers Llama's and GPT-2's forward, plain and through cudakit's tuner (bench/torch_model_forward_bench.py)"
      PYTHONUNBUFFERED=1 python3 bench/torch_model_forward_bench.py --json "$out/tunable.jsonl" \
        >> "$out/gemm_interleaved.txt" 2>> "$out/tunable.err"
      # Small batches too (4 x 64 tokens): where a forward's host time shows, so does the routing's.
      PYTHONUNBUFFERED=1 python3 bench/torch_model_forward_bench.py --batch 4 --seq 64 --rounds 20 --forwards 10 \
        --json "$out/tunable.jsonl" >> "$out/gemm_interleaved.txt" 2>> "$out/tunable.err"
    else skip "tunable interleaved" "the cudakit Python module is not importable here"; fi
    python3 bench/tunable_table.py "$out/tunable.jsonl" | tee "$out/tunable.txt"
  else skip "tunable" "tunable_bench was not built"; fi
fi
if part nvtx; then
  echo "   NVTX ranges with no tool attached (cudakit and raw NVTX3, then torch.cuda.nvtx)"
  {
    env -u NVTX_INJECTION64_PATH "$B/bin/nvtx_bench"
    env -u NVTX_INJECTION64_PATH python3 bench/torch_nvtx_bench.py 2>&1 | grep -v -i warn
  } > "$out/nvtx.txt" 2>&1
  grep -v '^{' "$out/nvtx.txt"
  python3 bench/ratio_table.py "$out/nvtx.txt" ns_per_pair cudakit nvtx
fi
if part sanitizer; then
  echo "   stream sanitizer (cudakit off/on, torch.cuda._sanitizer off/on, the seed workflow off/on)"
  {
    "$B/bin/sanitizer_bench"
    python3 bench/torch_sanitizer_bench.py 2>&1 | grep -v -i warn
    python3 bench/seed_workflow_time.py "$B/bin/cudakit" 5
  } > "$out/sanitizer.txt" 2>&1
  grep -v '^{' "$out/sanitizer.txt"
  python3 bench/ratio_table.py "$out/sanitizer.txt" us_per_op off sanitizer
  python3 bench/ratio_table.py "$out/sanitizer.txt" us_per_op "torch, off" sanitizer
  python3 bench/ratio_table.py "$out/sanitizer.txt" ms_per_run off sanitizer
fi
if part gds; then
  if [ -x "$B/bin/gds_bench" ]; then
    # 2 GiB (GDS_GIB): the cold rows drop the file from the page cache, so a larger file only
    # takes longer (4 GiB took 111 s of the run on 06a8e72, on a 1.2-1.7 GB/s disk).
    gib=${GDS_GIB:-2}
    echo "   GPUDirect Storage (cudakit, then torch): a $gib GiB file under /tmp, deleted afterwards"
    # Commands here run as root: posix_fadvise(DONTNEED) drops the file from the page cache for
    # the cold-cache rows (each row says how much stayed resident).
    { "$B/bin/gds_bench" --dir /tmp --gib "$gib" --sweep
      python3 bench/torch_gds_bench.py --dir /tmp --gib "$gib" 2>&1 | grep '^{'
      # One safetensors file loaded by cudakit's Python loader and by safetensors.torch.load_file,
      # cold and warm, alternating, with the disk's O_DIRECT figure and a byte-identity check.
      if python_module; then python3 bench/safetensors_load_bench.py --dir /tmp --gib "$gib" 2>&1 | grep '^{'
      else skip "gds checkpoint rows" "the cudakit Python module is not importable here"; fi
    } > "$out/gds.jsonl" 2> "$out/gds.err"
    rm -f /tmp/cudakit_gds_bench* /tmp/torch_gds_bench* /tmp/safetensors_load_bench*
    python3 bench/gds_table.py "$out/gds.jsonl" | tee "$out/gds.txt"
  else skip "gds" "gds_bench was not built"; fi
fi
if part green; then
  if [ -x "$B/bin/green_bench" ]; then
    echo "   green contexts (cudakit, then torch)"
    { "$B/bin/green_bench"; python3 bench/torch_green_bench.py 2>&1 | grep '^{'; } > "$out/green.jsonl" 2> "$out/green.err"
    python3 bench/green_table.py "$out/green.jsonl" | tee "$out/green.txt"
  else skip "green" "green_bench was not built"; fi
fi
if part nccl; then
  if [ -x "$B/bin/nccl_bench" ]; then
    echo "   NCCL collectives (cudakit single-process and multi-process, then torch.distributed)"
    gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
    {
      "$B/bin/nccl_bench"
      "$B/bin/nccl_bench" --processes "$gpus"
      PYTHONUNBUFFERED=1 python3 bench/torch_nccl_bench.py --processes "$gpus" 2>/dev/null
    } > "$out/nccl.jsonl" 2> "$out/nccl.err"
    python3 bench/nccl_table.py "$out/nccl.jsonl" | tee "$out/nccl.txt"
    if [ "$gpus" -lt 2 ]; then
      skip "nccl bandwidth" "$gpus GPU here: one-rank figures only (copies and launch latency); bus bandwidth needs 2 or more GPUs"
    fi
  else skip "nccl" "nccl_bench was not built"; fi
fi
if part python; then
  if [ -f bench/python_bench.py ] && python_module; then
    # SKIP_PYTEST=1: the benchmark alone (a tier run of the same commit ran the suite).
    if [ "${SKIP_PYTEST:-0}" != 1 ]; then
      echo "   Python module: its pytest suite (the GPU tier with torch, CuPy, JAX, NumPy)"
      (cd python/tests && python3 -m pytest -q -rs -p no:cacheprovider . 2>&1 | tail -40) | tee "$out/python-tests.txt"
    fi
    echo "   Python module (cudakit from Python, then torch and CuPy)"
    PYTHONUNBUFFERED=1 python3 bench/python_bench.py > "$out/python.jsonl" 2> "$out/python.err"
    grep -v '^{' "$out/python.jsonl"
  else skip python "the cudakit Python module is not importable here (build it with python/build-on-device.sh)"; fi
fi
# The report: report.md, report.json and plots/ under $out (bench/report.py; the commit from the
# bundle's COMMIT file that scripts/stage-gpu-bundle.sh writes).
python3 bench/report.py build "$out" --commit "$(cat "$B/COMMIT" 2>/dev/null || echo unknown)" --date "$(date -u +%F)"
echo "== done in $((SECONDS - started)) s"
# BENCH_ARCHIVE=FILE.tgz: everything under $out in one file, for a machine that hands back only a
# few files (the run writes some forty).
if [ -n "${BENCH_ARCHIVE:-}" ]; then
  # A child still writing a log (a benchmark's helper process) makes tar warn and exit 1 with the
  # archive written: that is kept; anything worse is reported.
  tar czf "$BENCH_ARCHIVE" --warning=no-file-changed -C "$(dirname "$out")" "$(basename "$out")"
  status=$?
  if [ $status -le 1 ]; then echo "archive: $BENCH_ARCHIVE"; else echo "archive failed (tar status $status)"; fi
fi
