#pragma once
// @brief JitReduction: a reduction written as two C++ functions in strings (CuPy's
// ReductionKernel): `map_code`'s last function maps the inputs of one element to a value,
// `combine_code`'s last function combines two values, and `identity` (a C++ expression) is the
// value of an empty reduction. Over every element, or over chosen dimensions.
//
//   auto sum_of_squares = jiterator::create_jit_reduction(
//       "template <typename T> T square(T x) { return x * x; }",
//       "template <typename T> T add(T a, T b) { return a + b; }", "0");
//   Tensor total = sum_of_squares(x);                        // 0-dim
//   Tensor rows = sum_of_squares.call({x}, {.dims = {1}});
//
// Inputs follow create_jit_fn's rules (promotion, host scalars, broadcasting, views, scalar
// parameters in `defaults`). Values are accumulated in the common dtype — float for float16 and
// bfloat16 — and the result has the common dtype. combine must be associative (the order of
// combination is not the elements').

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/jiterator/compiled_kernel_info.hpp"
#include "cudakit/jiterator/jit_argument.hpp"
#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/jiterator/kernel_variant.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::jiterator {

namespace detail {
class ReductionProgram;
}

struct JitReductionOptions {
  // The dimensions to reduce (negative ones count from the end); empty: all of them.
  std::vector<int> dims;
  bool keepdim = false;
  std::vector<std::pair<std::string, Scalar>> scalars;
  OptionalStream stream;
};

class JitReduction {
 public:
  template <class... Inputs>
  tensor::Tensor operator()(const Inputs&... inputs) const {
    const JitArgument arguments[] = {JitArgument(inputs)...};
    return call(arguments, {});
  }
  // @throws as JitFunction::call, and InvalidArgumentError for a dimension out of range or
  //   named twice.
  tensor::Tensor call(std::span<const JitArgument> inputs,
                      const JitReductionOptions& options = {}) const;
  tensor::Tensor call(std::initializer_list<JitArgument> inputs,
                      const JitReductionOptions& options = {}) const {
    return call(std::span<const JitArgument>(inputs.begin(), inputs.size()), options);
  }

  [[nodiscard]] std::string generated_source(const KernelVariant& variant) const;
  CompiledKernelInfo compile(const KernelVariant& variant, int arch) const;
  [[nodiscard]] int num_inputs() const;

 private:
  friend JitReduction create_jit_reduction(std::string, std::string, std::string, ScalarDefaults);
  explicit JitReduction(std::shared_ptr<detail::ReductionProgram> program)
      : program_(std::move(program)) {}
  std::shared_ptr<detail::ReductionProgram> program_;
};

// @throws InvalidArgumentError when either function cannot be parsed, combine does not take
//   two parameters, or a default names no parameter of map.
[[nodiscard]] JitReduction create_jit_reduction(std::string map_code, std::string combine_code,
                                                std::string identity, ScalarDefaults defaults = {});

}  // namespace cudakit::jiterator
