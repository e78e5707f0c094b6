#pragma once
// What an OutOfMemoryError says: the OutOfMemoryInfo gathered from every shard when an
// allocation fails, and the report built from it.

#include <cstddef>
#include <string>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/out_of_memory_observer.hpp"

namespace cudakit::memory::detail {

struct Pool;
struct Shard;

// What the allocator holds when `requested` bytes on `failed` could not be had: one visit of
// `shards`, each locked in turn, so none may be locked by the caller. info.report is left for
// oom_report().
[[nodiscard]] OutOfMemoryInfo gather_oom_info(int device, std::size_t requested, const Shard& failed,
                                              bool capturing, const std::vector<Shard*>& shards);

// The OutOfMemoryError's message for `info`, from an allocation in `pool`.
[[nodiscard]] std::string oom_report(const OutOfMemoryInfo& info, const Pool& pool, const AllocatorConfig& config);

}  // namespace cudakit::memory::detail
