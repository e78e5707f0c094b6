#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/detail/layout.hpp"

namespace cudakit::tensor::detail {

std::vector<StridedIndexer> make_indexers(const Shape& shape,
                                          std::span<const Tensor* const> operands) {
  const int ndim = static_cast<int>(shape.size());
  // strides[k][d] for operand k; dims of size 1 are dropped.
  std::vector<std::vector<std::int64_t>> strides(operands.size());
  std::vector<std::int64_t> sizes;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    sizes.push_back(shape[d]);
    std::size_t k = 0;
    for (const Tensor* t : operands) {
      const int td = d - (ndim - t->dim());  // aligned from the right
      const bool broadcast = td < 0 || t->sizes()[td] == 1;
      strides[k++].push_back(broadcast ? 0 : t->strides()[td]);
    }
  }
  // Merge dim i into i + 1 wherever stride[i] == stride[i+1] * size[i+1] for every operand.
  std::vector<std::int64_t> merged_sizes;
  std::vector<std::vector<std::int64_t>> merged(operands.size());
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    bool can_merge = !merged_sizes.empty();
    for (std::size_t k = 0; k < operands.size() && can_merge; ++k) {
      can_merge = merged[k].back() == strides[k][d] * sizes[d];
    }
    if (can_merge) {
      merged_sizes.back() *= sizes[d];
      for (std::size_t k = 0; k < operands.size(); ++k) merged[k].back() = strides[k][d];
    } else {
      merged_sizes.push_back(sizes[d]);
      for (std::size_t k = 0; k < operands.size(); ++k) merged[k].push_back(strides[k][d]);
    }
  }
  if (merged_sizes.size() > static_cast<std::size_t>(kMaxDims)) {
    throw InvalidArgumentError("make_indexers", "more than 8 dimensions: " + shape_string(shape));
  }
  std::vector<StridedIndexer> out(operands.size());
  for (std::size_t k = 0; k < operands.size(); ++k) {
    out[k].ndim = static_cast<int>(merged_sizes.size());
    for (std::size_t d = 0; d < merged_sizes.size(); ++d) {
      out[k].sizes[d] = merged_sizes[d];
      out[k].strides[d] = merged[k][d];
    }
  }
  return out;
}

StridedIndexer make_indexer(const Tensor& t) { return make_indexers(t.sizes(), {&t})[0]; }

}  // namespace cudakit::tensor::detail
