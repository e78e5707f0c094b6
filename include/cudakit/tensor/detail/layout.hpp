#pragma once
// Building StridedIndexers for the operands of an operation.

#include <initializer_list>
#include <span>
#include <vector>

#include "cudakit/tensor/detail/strided_indexer.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor::detail {

// Indexers for `operands` read at the logical indices of `shape` (each broadcast to it: its
// missing and size-1 dimensions get stride 0), with dimensions merged where every operand allows
// it, so that the index arithmetic in the loops is as short as possible.
std::vector<StridedIndexer> make_indexers(const Shape& shape,
                                          std::span<const Tensor* const> operands);
inline std::vector<StridedIndexer> make_indexers(const Shape& shape,
                                                 std::initializer_list<const Tensor*> operands) {
  return make_indexers(shape, std::span<const Tensor* const>(operands.begin(), operands.size()));
}
// The indexer of one tensor in its own shape.
StridedIndexer make_indexer(const Tensor& t);

}  // namespace cudakit::tensor::detail
