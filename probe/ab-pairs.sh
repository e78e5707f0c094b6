#!/usr/bin/env bash
# On the GPU machine, from the repository root with gpu-bundle-ab/bundles.tar.xz carried (the two
# slim bundles of scripts/device-ab.sh, gpu-bundle-old and gpu-bundle-new, CUTLASS off, each with
# its tree's include/ beside lib/, since the two libraries' classes differ), in about
# a minute: whether the allocator's single-thread pair rows that the A/B found slower
# (notes/allocator.md, 2026-12-05) come from the allocator's own code on this machine's CPU or from
# its CUDA path. Each bundle's library runs probe/host_pair_sizes.cpp (simulated memory, no CUDA
# call on the pair's path) at 512 B, 1 MiB and 64 MiB, then its alloc_bench's pair rows (CUDA
# memory and events), old and new alternating, three rounds. One file to $OUT: ab_pairs.txt.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
[ -d gpu-bundle-old ] || python3 -c "import tarfile; tarfile.open('gpu-bundle-ab/bundles.tar.xz').extractall('.')"
for b in old new; do
  g++ -O2 -std=c++20 -pthread -Igpu-bundle-$b/include -I/usr/local/cuda/include probe/host_pair_sizes.cpp \
    -Lgpu-bundle-$b/lib -lcudakit -Wl,-rpath,$PWD/gpu-bundle-$b/lib -o /tmp/host_pair_sizes_$b || exit 1
done
{
  for round in 1 2 3; do
    for b in old new; do
      echo "== round $round, $b"
      for bytes in 512 1048576 67108864; do for other in 0 1; do OTHER=$other /tmp/host_pair_sizes_$b $bytes 5000000; done; done
      LD_LIBRARY_PATH="$PWD/gpu-bundle-$b/lib:/usr/local/cuda/lib64" timeout 60 gpu-bundle-$b/bin/alloc_bench --only cudakit \
        2>/dev/null | grep -E '"pair_(512B|1MiB|64MiB)"'
    done
    echo "== round $round, new with exact_peaks:False (the device-wide ledger off)"
    CUDAKIT_ALLOC_CONF=exact_peaks:False LD_LIBRARY_PATH="$PWD/gpu-bundle-new/lib:/usr/local/cuda/lib64" timeout 60 \
      gpu-bundle-new/bin/alloc_bench --only cudakit 2>/dev/null | grep -E '"pair_(512B|1MiB|64MiB)"'
  done
} > "$out/ab_pairs.txt" 2>&1
cat "$out/ab_pairs.txt"
