#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle-ab/bundles.tar.xz carried (the two
# slim bundles of scripts/device-ab.sh, gpu-bundle-old and gpu-bundle-new, CUTLASS off, each with
# its tree's include/ beside lib/, since the two libraries' classes differ), in about three
# minutes: whether the allocator's single-thread pair rows that the A/B found slower
# (notes/allocator.md, 2026-12-05) come from the allocator's own code on this machine's CPU or from
# its CUDA path, and which setting carries the difference. Each bundle's library runs
# probe/host_pair_sizes.cpp (simulated memory, no CUDA call on the pair's path) at 512 B, 1 MiB and
# 64 MiB, then its alloc_bench's pair rows (CUDA memory and events), old and new alternating, three
# rounds, with probe/device_pair_paths.cpp (the device-wide front, a CachingAllocator on CUDA, one
# on simulated memory, in one process); then both under each allocator setting that changed
# between them. One file to $OUT:
# ab_pairs.txt.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
[ -d gpu-bundle-old ] || python3 -c "import tarfile; tarfile.open('gpu-bundle-ab/bundles.tar.xz').extractall('.')"
for b in old new; do
  g++ -O2 -std=c++20 -pthread -Igpu-bundle-$b/include -I/usr/local/cuda/include probe/host_pair_sizes.cpp \
    -Lgpu-bundle-$b/lib -lcudakit -Wl,-rpath,$PWD/gpu-bundle-$b/lib -o /tmp/host_pair_sizes_$b || exit 1
  g++ -O2 -std=c++20 -pthread -Igpu-bundle-$b/include -I/usr/local/cuda/include probe/device_pair_paths.cpp \
    -Lgpu-bundle-$b/lib -lcudakit -L/usr/local/cuda/lib64 -lcudart -Wl,-rpath,$PWD/gpu-bundle-$b/lib \
    -o /tmp/pair_paths_$b || exit 1
done
# The three pair rows of one bundle's alloc_bench (they come first: the run is cut after them).
pairs() {
  LD_LIBRARY_PATH="$PWD/gpu-bundle-$1/lib:/usr/local/cuda/lib64" timeout 60 stdbuf -oL \
    gpu-bundle-$1/bin/alloc_bench --only cudakit 2>/dev/null | grep -m3 -E '"pair_(512B|1MiB|64MiB)"'
}
{
  for round in 1 2 3; do
    for b in old new; do
      echo "== round $round, $b"
      for bytes in 512 1048576 67108864; do for other in 0 1; do OTHER=$other /tmp/host_pair_sizes_$b $bytes 5000000; done; done
      pairs $b
      LD_LIBRARY_PATH=/usr/local/cuda/lib64 /tmp/pair_paths_$b
    done
    echo "== round $round, new with exact_peaks:False (the device-wide ledger off)"
    CUDAKIT_ALLOC_CONF=exact_peaks:False pairs new
  done
  for conf in expandable_segments:False cross_stream_reuse:off exact_peaks:False thread_shards:off; do
    for b in old new; do
      echo "== $b with $conf"
      CUDAKIT_ALLOC_CONF=$conf pairs $b
      CONF=$conf /tmp/host_pair_sizes_$b 1048576 5000000
    done
  done
} > "$out/ab_pairs.txt" 2>&1
cat "$out/ab_pairs.txt"
