#pragma once
// @brief JitArgument: one input of a runtime-compiled kernel's call — a tensor (referred to, not
// copied: a temporary in the call's own argument list lives long enough, one in a list kept
// for later does not) or a host scalar.

#include "cudakit/jiterator/scalar.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::jiterator {

class JitArgument {
 public:
  JitArgument(const tensor::Tensor& tensor) : tensor_(&tensor) {}  // NOLINT: implicit by design
  JitArgument(Scalar scalar) : scalar_(scalar) {}  // NOLINT
  template <class T>
    requires std::is_arithmetic_v<T>
  JitArgument(T value) : scalar_(value) {}  // NOLINT

  [[nodiscard]] bool is_tensor() const noexcept { return tensor_ != nullptr; }
  [[nodiscard]] const tensor::Tensor& tensor() const noexcept { return *tensor_; }
  [[nodiscard]] const Scalar& scalar() const noexcept { return scalar_; }

 private:
  const tensor::Tensor* tensor_ = nullptr;
  Scalar scalar_;
};

}  // namespace cudakit::jiterator
