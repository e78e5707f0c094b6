#include "memory/detail/oom_report.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>

#include "cudakit/core/detail/concat.hpp"
#include "memory/detail/block.hpp"
#include "memory/detail/format_bytes.hpp"
#include "memory/detail/pool.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

OutOfMemoryInfo gather_oom_info(int device, std::size_t requested, const Shard& failed, bool capturing,
                                const std::vector<Shard*>& shards) {
  OutOfMemoryInfo info;
  info.device = device;
  info.requested_bytes = requested;
  info.stream = failed.stream;
  info.pool = failed.pool->id;
  info.during_capture = capturing;
  std::tie(info.device_free_bytes, info.device_total_bytes) = failed.pool->provider->memory_info();
  for (Shard* s : shards) {
    std::lock_guard lock(s->lock);
    const auto reserved = static_cast<std::size_t>(s->stats.reserved_bytes[0].current);
    info.allocated_bytes += static_cast<std::size_t>(s->stats.allocated_bytes[0].current);
    info.reserved_bytes += reserved;
    if (!s->pool->id.is_default()) info.private_pools_reserved_bytes += reserved;
    info.largest_free_block = std::max({info.largest_free_block, s->small_index.largest(), s->large_index.largest()});
  }
  return info;
}

std::string oom_report(const OutOfMemoryInfo& info, const Pool& pool, const AllocatorConfig& config) {
  using cudakit::detail::concat;
  const std::size_t allocated = info.allocated_bytes, reserved = info.reserved_bytes;
  // The first two sentences are torch's own, word for word: programs and tools (batch-size finders
  // among them) recognise an out-of-memory error by "CUDA out of memory." and read its size.
  const std::string asked = info.requested_bytes > kLargestRequest
                                ? concat("more than 1EB memory (", info.requested_bytes, " bytes)")
                                : format_bytes(info.requested_bytes);
  std::string report = concat(
      "CUDA out of memory. Tried to allocate ", asked, ". GPU ", info.device, " has a total capacity of ",
      format_bytes(info.device_total_bytes), " of which ", format_bytes(info.device_free_bytes),
      " is free (memory from ", pool.provider->name(), "). cudakit has ", format_bytes(allocated), " allocated and ",
      format_bytes(reserved > allocated ? reserved - allocated : 0),
      " reserved but unallocated (largest free block ", format_bytes(info.largest_free_block), "); ",
      format_bytes(info.private_pools_reserved_bytes), " is reserved by private pools.");
  if (config.per_process_memory_fraction < 1.0) {
    report += concat(" The per-process memory fraction ", config.per_process_memory_fraction,
                     " limits reservations to ", format_bytes(allowed_bytes(pool, config)), ".");
  }
  report += " If reserved but unallocated memory is large, try expandable_segments:True in "
            "CUDAKIT_ALLOC_CONF, or free memory and call empty_cache().";
  if (info.during_capture) {
    report += " The allocation was made on a stream capturing a CUDA graph: cached memory was not "
              "returned to the driver, since that synchronizes and would break the capture.";
  }
  return report;
}

}  // namespace cudakit::memory::detail
