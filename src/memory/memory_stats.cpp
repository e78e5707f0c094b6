#include "cudakit/memory/memory_stats.hpp"

#include <algorithm>
#include <utility>

#include "cudakit/memory/nested_stats.hpp"

namespace cudakit::memory {
namespace {
void put(NestedStats& node, const Stat& s) {
  node.child("current") = NestedStats(s.current);
  node.child("peak") = NestedStats(s.peak);
  node.child("allocated") = NestedStats(s.allocated);
  node.child("freed") = NestedStats(s.freed);
}
void put(NestedStats& node, const StatArray& a) {
  static const char* const kPools[] = {"all", "small_pool", "large_pool"};
  for (int i = 0; i < 3; ++i) put(node.child(kPools[i]), a[i]);
}
}  // namespace

// torch's memory_stats_as_nested_dict(); memory_stats() is built from it, as torch builds it.
NestedStats MemoryStats::to_nested() const {
  NestedStats out;
  put(out.child("allocation"), allocation);
  put(out.child("segment"), segment);
  put(out.child("active"), active);
  put(out.child("inactive_split"), inactive_split);
  put(out.child("allocated_bytes"), allocated_bytes);
  put(out.child("reserved_bytes"), reserved_bytes);
  put(out.child("active_bytes"), active_bytes);
  put(out.child("inactive_split_bytes"), inactive_split_bytes);
  put(out.child("requested_bytes"), requested_bytes);
  put(out.child("oversize_allocations"), oversize_allocations);
  put(out.child("oversize_segments"), oversize_segments);
  out.child("num_alloc_retries") = NestedStats(num_alloc_retries);
  out.child("num_ooms") = NestedStats(num_ooms);
  out.child("num_sync_all_streams") = NestedStats(num_sync_all_streams);
  out.child("num_device_alloc") = NestedStats(num_device_alloc);
  out.child("num_device_free") = NestedStats(num_device_free);
  out.child("max_split_size") = NestedStats(max_split_size);
  out.child("num_cross_stream_reuses") = NestedStats(num_cross_stream_reuses);
  return out;
}

std::map<std::string, std::int64_t> MemoryStats::to_map() const { return to_nested().flatten(); }

void MemoryStats::merge(const MemoryStats& other) noexcept {
  for_each_stat(*this, other, [](Stat& into, const Stat& from) { into.merge(from); });
  num_alloc_retries += other.num_alloc_retries;
  num_ooms += other.num_ooms;
  num_sync_all_streams += other.num_sync_all_streams;
  num_device_alloc += other.num_device_alloc;
  num_device_free += other.num_device_free;
  num_cross_stream_reuses += other.num_cross_stream_reuses;
  max_split_size = std::max(max_split_size, other.max_split_size);
}

}  // namespace cudakit::memory
