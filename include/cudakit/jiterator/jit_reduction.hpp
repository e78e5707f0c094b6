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

// The optional parts of a JitReduction::call.
struct JitReductionOptions {
  // The dimensions to reduce (negative ones count from the end); empty: all of them.
  std::vector<int> dims;
  bool keepdim = false;  // whether the reduced dimensions stay, with size 1
  std::vector<std::pair<std::string, Scalar>> scalars;  // scalar parameter values, by name
  OptionalStream stream;  // the kernel's stream; left out, the current stream of the device
};

// A runtime-compiled reduction, made by create_jit_reduction. Cheap to copy (copies share the
// compiled kernels); const methods may be called from several threads at once.
class JitReduction {
 public:
  // The reduction over every element, with every scalar at its default. Stream-ordered on the
  // current stream of the tensors' device; returns before the kernel completes.
  // @tparam Inputs tensor::Tensor, Scalar or arithmetic types
  // @param inputs the inputs of map, in its order
  // @return a new 0-dim tensor of the common dtype
  // @throws InvalidArgumentError as call().
  template <class... Inputs>
  tensor::Tensor operator()(const Inputs&... inputs) const {
    const JitArgument arguments[] = {JitArgument(inputs)...};
    return call(arguments, {});
  }
  // Reduces map(inputs) with combine over options.dims. Stream-ordered: the kernel is queued on
  // options.stream (default: the current stream of the tensors' device) and the call returns
  // before it completes; a first call for a new variant compiles or loads it first.
  // @param inputs the inputs of map, in its order (at least one tensor)
  // @param options dimensions, keepdim, scalar values and the stream
  // @return a new tensor of the common dtype: the input shape without the reduced dimensions
  //   (with size 1 there when keepdim)
  // @throws as JitFunction::call, and InvalidArgumentError for a dimension out of range or
  //   named twice.
  tensor::Tensor call(std::span<const JitArgument> inputs,
                      const JitReductionOptions& options = {}) const;
  // call() for a braced list: `r.call({x}, {.dims = {1}})`. Stream-ordered as that call.
  // @param inputs the inputs of map, in its order
  // @param options dimensions, keepdim, scalar values and the stream
  // @return the reduced tensor
  // @throws InvalidArgumentError as the span overload (and NvrtcError, StateError, CudaError).
  tensor::Tensor call(std::initializer_list<JitArgument> inputs,
                      const JitReductionOptions& options = {}) const {
    return call(std::span<const JitArgument>(inputs.begin(), inputs.size()), options);
  }

  // The CUDA source generated for `variant`: what to attach to a bug report.
  // @param variant a variant of this reduction (one output)
  // @return the complete source NVRTC compiles for it
  // @throws InvalidArgumentError for a variant of the wrong arity.
  [[nodiscard]] std::string generated_source(const KernelVariant& variant) const;
  // Compiles `variant` for sm_<arch> through the caches, without loading it (needs no GPU).
  // Blocks the calling thread for the compilation; queues nothing.
  // @param variant a variant of this reduction
  // @param arch the architecture as a number: 90 for sm_90
  // @return where the kernel came from and what each step took
  // @throws NvrtcError when the code does not compile.
  // @throws InvalidArgumentError for a variant of the wrong arity.
  // @throws StateError when NVRTC is not available.
  CompiledKernelInfo compile(const KernelVariant& variant, int arch) const;
  // How many inputs map takes.
  // @return the number of map's inputs (scalar parameters aside)
  [[nodiscard]] int num_inputs() const;

 private:
  friend JitReduction create_jit_reduction(std::string map_code, std::string combine_code, std::string identity,
                                           ScalarDefaults defaults);
  explicit JitReduction(std::shared_ptr<detail::ReductionProgram> program)
      : program_(std::move(program)) {}
  std::shared_ptr<detail::ReductionProgram> program_;
};

// A reduction from two functions in strings (see above). Nothing is compiled until the first
// call.
// @param map_code one or more C++ functions, the last mapping one element's inputs to a value.
// @param combine_code one or more C++ functions, the last combining two values (associatively).
// @param identity a C++ expression, the value of an empty reduction ("0", "-INFINITY", ...).
// @param defaults the map's scalar parameters, by name, with their default values.
// @return the reduction, ready to call
// @throws InvalidArgumentError when either function cannot be parsed, combine does not take
//   two parameters, the identity is empty, or a default names no parameter of map.
[[nodiscard]] JitReduction create_jit_reduction(std::string map_code, std::string combine_code,
                                                std::string identity, ScalarDefaults defaults = {});

}  // namespace cudakit::jiterator
