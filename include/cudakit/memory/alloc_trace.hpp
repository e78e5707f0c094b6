#pragma once
// Recorded allocation traces: one line per allocation or free, in program order
// (`op,id,size,stream`, op 'a' or 'f'), plain or gzip-compressed. Replayed by
// `cudakit alloc-replay` and the allocator benchmarks.

#include <cstdint>
#include <string>
#include <vector>

namespace cudakit::memory {

struct AllocTraceOp {
  bool is_alloc = true;
  std::uint32_t slot = 0;    // dense index of the allocation id (0..num_ids-1)
  std::uint32_t stream = 0;  // dense index of the stream id (0..num_streams-1)
  std::uint64_t size = 0;    // bytes (for frees: the size of the allocation being freed)
};

struct AllocTrace {
  std::vector<AllocTraceOp> ops;
  std::uint32_t num_ids = 0;
  std::uint32_t num_streams = 0;
  // Peak of the sum of live requested sizes over the trace.
  std::uint64_t peak_requested_bytes = 0;
};

// Parses a trace file (".gz" read through zlib). Ids and streams are renumbered densely.
// @throws InvalidArgumentError naming the file and line for a malformed line, a free of an id
// that is not live, or a second allocation of a live id.
[[nodiscard]] AllocTrace load_alloc_trace(const std::string& path);
// The same from text already in memory (`name` is used in error messages).
[[nodiscard]] AllocTrace parse_alloc_trace(const std::string& text, const std::string& name);

}  // namespace cudakit::memory
