#pragma once
// @brief ScopedRange: range_push in the constructor, range_pop in the destructor (torch's
// `with torch.cuda.nvtx.range(...)`). Never throws; host-side only, like every range.
//
//   { cudakit::nvtx::ScopedRange range("forward"); ... }

#include "cudakit/nvtx/ranges.hpp"

namespace cudakit::nvtx {

// A range of the calling thread that lasts as long as the object. Not copyable or movable: it must
// be destroyed on the thread that made it.
class [[nodiscard]] ScopedRange {
 public:
  // @param name the range's name (a literal, typically).
  explicit ScopedRange(const char* name) noexcept { range_push(name); }
  // @param name the registered name.
  explicit ScopedRange(const RegisteredString& name) noexcept { range_push(name); }
  // @param attributes the range's message, category, color and payload.
  explicit ScopedRange(const EventAttributes& attributes) noexcept { range_push(attributes); }
  // Closes the range (range_pop).
  ~ScopedRange() { range_pop(); }
  // Not copyable: the range is closed once.
  ScopedRange(const ScopedRange&) = delete;
  // Not copyable: the range is closed once.
  ScopedRange& operator=(const ScopedRange&) = delete;
};

}  // namespace cudakit::nvtx
