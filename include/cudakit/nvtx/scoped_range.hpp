#pragma once
// @brief ScopedRange: range_push in the constructor, range_pop in the destructor (torch's
// `with torch.cuda.nvtx.range(...)`). Never throws; host-side only, like every range.
//
//   { cudakit::nvtx::ScopedRange range("forward"); ... }

#include "cudakit/nvtx/ranges.hpp"

namespace cudakit::nvtx {

class [[nodiscard]] ScopedRange {
 public:
  explicit ScopedRange(const char* name) noexcept { range_push(name); }
  explicit ScopedRange(const RegisteredString& name) noexcept { range_push(name); }
  explicit ScopedRange(const EventAttributes& attributes) noexcept { range_push(attributes); }
  ~ScopedRange() { range_pop(); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
};

}  // namespace cudakit::nvtx
