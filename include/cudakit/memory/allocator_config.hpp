#pragma once
// Options of the caching device allocator: a typed struct, also parsed from CUDAKIT_ALLOC_CONF
// with PYTORCH_CUDA_ALLOC_CONF's syntax ("key:value,key:value") and, where they mean the same
// thing, its keys.

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace cudakit::memory {

struct AllocatorConfig {
  // Blocks larger than this are never split (torch's max_split_size_mb). Default: no limit.
  std::size_t max_split_size = std::numeric_limits<std::size_t>::max();
  // When reserved memory exceeds this fraction of the allowed memory, cached free memory is
  // released before more is reserved (0 = off). torch's garbage_collection_threshold.
  double garbage_collection_threshold = 0.0;
  // One growable virtual range per (pool, stream), backed on demand (cuMemCreate/cuMemMap),
  // instead of fixed segments from cudaMalloc. See Note [Expandable arenas]. Default on: it
  // halves fragmentation on recorded workloads (README, allocator table).
  bool expandable_segments = true;
  // Requests above 1 MiB are rounded up to one of this many steps per power of two (0 = off;
  // torch's roundup_power2_divisions with one value for all sizes).
  unsigned roundup_power2_divisions = 0;
  // Limit on reserved memory as a fraction of the device's total (set_per_process_memory_fraction).
  double per_process_memory_fraction = 1.0;

  // Parses "expandable_segments:True,max_split_size_mb:128,...". Unknown keys and bad values
  // are errors naming the key and the value. @throws InvalidArgumentError
  static AllocatorConfig parse(std::string_view text, AllocatorConfig base);
  static AllocatorConfig parse(std::string_view text);
  // The defaults overridden by CUDAKIT_ALLOC_CONF when set.
  static AllocatorConfig from_environment();
  // The config written back in the same syntax.
  [[nodiscard]] std::string to_string() const;
};

}  // namespace cudakit::memory
