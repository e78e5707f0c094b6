#pragma once
// @brief Buffer: one contiguous run of elements on one device, as a collective reads or writes it —
// what the raw-pointer overloads take and what validation looks at.

#include <cstddef>

#include "cudakit/nccl/data_type.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::nccl {

// A run of `count` elements of `dtype` at `data`: the raw form of a collective's input or output.
// It does not own the memory; the caller keeps it alive until the operation has completed on its
// stream.
struct Buffer {
  void* data = nullptr;  // first element (device memory for a collective; null only when count is 0)
  std::size_t count = 0;  // elements
  DataType dtype = DataType::float32;  // element type, as NCCL names it
  int device = -1;         // CUDA ordinal; -1 for host memory
  bool contiguous = true;  // false for a strided tensor (refused)
  // @return the buffer's size in bytes: count x element_size(dtype).
  [[nodiscard]] std::size_t bytes() const noexcept { return count * element_size(dtype); }

  // A tensor's buffer (host tensors have device -1). Nothing is checked beyond the tensor being
  // defined and of a dtype NCCL can carry: check_buffer() refuses host or strided buffers.
  // @param t the tensor whose storage the buffer describes (not copied; its memory must outlive
  //   the buffer's use)
  // @param api the calling API's name, for the error message
  // @return t's data pointer, element count, NCCL type, device and contiguity
  // @throws InvalidArgumentError for an undefined tensor, or a dtype NCCL has no type for
  //   (data_type_of()).
  [[nodiscard]] static Buffer of(const tensor::Tensor& t, const char* api);
};

}  // namespace cudakit::nccl
