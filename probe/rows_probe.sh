#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle/ staged (scripts/stage-gpu-bundle.sh)
# and carried, in one call of about four minutes, building nothing: the rows of issue 40 that
# notes/performance-rows.md explains, each beside its peer in this run, after the GPU tests of the
# code they changed (their logs stay in /tmp/rows-probe-tier, the summary is printed; SKIP_TIER=1
# leaves them out where the whole tier ran just before).
#  - core.txt: streams, events and launches beside the raw calls, interleaved repetitions
#    (Note [Interleaved repetitions] in scripts/device-bench.sh), medians;
#  - nccl.jsonl, nccl.txt: all_to_all and send_recv on one rank, 8 B .. 32 MiB, cudakit (one
#    process, then a child process as scripts/device-bench.sh runs it) then torch.distributed;
#  - graph.txt: the replay host times in five processes of each side, alternating (Note [Host
#    times over processes]), then one full graph_bench and torch_graph_bench (profiling rows);
#  - rows.md: the report's rows of those areas (bench/report.py on this folder).
set -uo pipefail
B=${BUNDLE:-gpu-bundle}
out=${OUT:-/tmp/rows-probe}
mkdir -p "$out"
source scripts/device-env.sh "$B"
echo "bundle $(cat "$B/COMMIT" 2>/dev/null)"
started=$SECONDS

echo "== the GPU tests of what changed (streams, events, launches, one-rank NCCL, graphs)"
[ "${SKIP_TIER:-0}" = 1 ] || GTEST_FILTER='StreamGpu.*:EventGpu.*:DeviceGpu*:StreamRegistry.*:OneRank*:*Launch*:GraphGpu.*:GraphExternalEventGpu.*' \
  timeout 150 "$B/gpu-tier.sh" /tmp/rows-probe-tier 2>&1 | tail -15

echo "== core ($((SECONDS - started)) s)"
timeout 90 "$B/bin/core_bench" --benchmark_min_time=0.1 --benchmark_repetitions=7 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true 2>&1 \
  | grep -E "^BM_" > "$out/core.txt"
grep -E "_median" "$out/core.txt"

echo "== nccl, one rank ($((SECONDS - started)) s)"
{
  timeout 40 "$B/bin/nccl_bench" --ops all_to_all,send_recv --max-bytes 33554432
  timeout 40 "$B/bin/nccl_bench" --processes 1 --ops all_to_all,send_recv --max-bytes 33554432
  PYTHONUNBUFFERED=1 timeout 90 python3 bench/torch_nccl_bench.py --processes 1 --ops all_to_all,send_recv \
    --max-bytes 33554432 2>/dev/null
} > "$out/nccl.jsonl" 2>&1
python3 bench/nccl_table.py "$out/nccl.jsonl" > "$out/nccl.txt" 2>&1
cat "$out/nccl.txt"

echo "== graphs ($((SECONDS - started)) s)"
{
  for round in 1 2 3 4 5; do
    timeout 30 "$B/bin/graph_bench" --host-times 2>&1
    timeout 40 python3 bench/torch_graph_bench.py --host-times 2>&1 | grep -v -i warn
  done
  timeout 60 "$B/bin/graph_bench" 2>&1 | grep -v "host time"
  timeout 80 python3 bench/torch_graph_bench.py 2>&1 | grep -v -i warn | grep -v "host time"
} > "$out/graph.txt"
grep -E "8-kernel|seed workflow|tiny" "$out/graph.txt"

echo "== report rows ($((SECONDS - started)) s)"
: > "$out/skipped.txt"
python3 bench/report.py build "$out" --commit "$(cat "$B/COMMIT" 2>/dev/null || echo unknown)" \
  --date "$(date -u +%F)" > /dev/null 2>&1
if [ -f "$out/report.md" ]; then
  grep -E "raw CUDA|all_to_all|send_recv|8-kernel|seed workflow" "$out/report.md" > "$out/rows.md"
  cat "$out/rows.md"
fi
# At most six files come back: keep those named above.
rm -rf "$out/plots" "$out/report.json" "$out/report.md" "$out/skipped.txt" "$out/machine.json"
echo "== done in $((SECONDS - started)) s"
