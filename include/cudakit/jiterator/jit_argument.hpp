#pragma once
// @brief JitArgument: one input of a runtime-compiled kernel's call — a tensor (referred to, not
// copied: a temporary in the call's own argument list lives long enough, one in a list kept
// for later does not) or a host scalar.

#include "cudakit/jiterator/scalar.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::jiterator {

// One input of JitFunction::call or JitReduction::call: a tensor or a host number, converted
// implicitly so that `f.call({x, 2.5})` reads naturally.
class JitArgument {
 public:
  // A tensor input, referred to: `tensor` must outlive the argument.
  // @param tensor the input (a CUDA tensor for a call; a host one stands in for variant_for)
  JitArgument(const tensor::Tensor& tensor) : tensor_(&tensor) {}  // NOLINT: implicit by design
  // A host number in place of a tensor input.
  // @param scalar the value, with the dtype it is promoted as
  JitArgument(Scalar scalar) : scalar_(scalar) {}  // NOLINT
  // A host number in place of a tensor input: Scalar(value).
  // @tparam T an arithmetic type
  // @param value the number
  template <class T>
    requires std::is_arithmetic_v<T>
  JitArgument(T value) : scalar_(value) {}  // NOLINT

  // @return whether the argument is a tensor (else a host scalar).
  [[nodiscard]] bool is_tensor() const noexcept { return tensor_ != nullptr; }
  // The tensor; only when is_tensor().
  // @return the tensor referred to
  [[nodiscard]] const tensor::Tensor& tensor() const noexcept { return *tensor_; }
  // The host scalar; meaningful only when !is_tensor().
  // @return the scalar
  [[nodiscard]] const Scalar& scalar() const noexcept { return scalar_; }

 private:
  const tensor::Tensor* tensor_ = nullptr;
  Scalar scalar_;
};

}  // namespace cudakit::jiterator
