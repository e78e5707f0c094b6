#pragma once
// @brief Buffer: one contiguous run of elements on one device, as a collective reads or writes it —
// what the raw-pointer overloads take and what validation looks at.

#include <cstddef>

#include "cudakit/nccl/data_type.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::nccl {

struct Buffer {
  void* data = nullptr;
  std::size_t count = 0;  // elements
  DataType dtype = DataType::float32;
  int device = -1;         // CUDA ordinal; -1 for host memory
  bool contiguous = true;  // false for a strided tensor (refused)
  [[nodiscard]] std::size_t bytes() const noexcept { return count * element_size(dtype); }

  // A tensor's buffer (host tensors have device -1). @throws InvalidArgumentError for an
  // undefined tensor.
  [[nodiscard]] static Buffer of(const tensor::Tensor& t, const char* api);
};

}  // namespace cudakit::nccl
