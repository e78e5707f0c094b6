#pragma once
// StridedIndexer: maps the logical (row-major) index of an element to its offset in elements,
// in host loops and kernels alike.

#include <cstdint>

#include "cudakit/core/host_device.hpp"

namespace cudakit::tensor::detail {

inline constexpr int kMaxDims = 8;

struct StridedIndexer {
  int ndim = 0;
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};

  CUDAKIT_HD_INLINE std::int64_t offset(std::int64_t index) const {
    std::int64_t off = 0;
    for (int d = ndim - 1; d > 0; --d) {
      const std::int64_t size = sizes[d];
      const std::int64_t q = index / size;
      off += (index - q * size) * strides[d];
      index = q;
    }
    return ndim > 0 ? off + index * strides[0] : 0;
  }
};

}  // namespace cudakit::tensor::detail
