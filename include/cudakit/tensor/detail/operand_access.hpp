#pragma once
// The byte range a strided operand occupies, as the trace hooks take it (MemoryAccess): for the
// kernels of tensor and of the layers above it that launch on tensors.

#include <cstddef>
#include <cstdint>

#include "cudakit/core/trace_event.hpp"
#include "cudakit/tensor/detail/strided_indexer.hpp"

namespace cudakit::tensor::detail {

// The bytes `numel` logical elements of `element_bytes` each touch, read through `index` (or
// row-major when `contiguous`): from the lowest element to the highest (strides may be zero or
// negative).
inline MemoryAccess operand_access(const void* base, const StridedIndexer& index, bool contiguous,
                                   std::int64_t numel, std::size_t element_bytes,
                                   MemoryAccess::Mode mode) {
  if (numel <= 0) return {base, 0, mode};
  std::int64_t low = 0, high = numel - 1;
  if (!contiguous) {
    high = 0;
    for (int d = 0; d < index.ndim; ++d) {
      const std::int64_t span = (index.sizes[d] - 1) * index.strides[d];
      (span < 0 ? low : high) += span;
    }
  }
  const auto element = static_cast<std::int64_t>(element_bytes);
  return {static_cast<const char*>(base) + low * element,
          static_cast<std::size_t>((high - low + 1) * element), mode};
}

}  // namespace cudakit::tensor::detail
