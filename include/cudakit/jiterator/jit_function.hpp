#pragma once
// @brief JitFunction: an elementwise kernel written as a C++ function in a string, compiled at its
// first call by NVRTC for the device's exact architecture and cached in memory and on disk
// (torch's torch.cuda.jiterator._create_jit_fn, with mixed dtypes, host scalars and 16 inputs).
//
//   auto axpy = jiterator::create_jit_fn(
//       "template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }",
//       {{"alpha", 1.0}});
//   Tensor z = axpy(x, y);                                   // alpha = 1
//   Tensor w = axpy.call({x, y}, {.scalars = {{"alpha", 2.5}}});
//
// The code holds one or more functions; the last is the entry: `template <typename T> T f(T a,
// ...)`, or for create_multi_output_jit_fn `template <typename T> void f(T a, ..., T& out0, T&
// out1)`. Parameters named in `defaults` are scalar parameters (any arithmetic type in the code);
// the others are the inputs (up to 16): tensors, or host numbers. Inputs of different dtypes are
// promoted as torch promotes them (a host number counts below any tensor of its kind); T is the
// common dtype, float for float16 and bfloat16. Inputs broadcast against each other; views may
// be strided or offset. The outputs have the common dtype unless `out` says otherwise.
//
// Streams: the kernel is queued on `options.stream`, else the current stream of the tensors'
// device. The first call for a new combination of dtypes compiles (tens of milliseconds, or well
// under a millisecond from the disk cache: notes/figures.md), also inside a graph capture,
// which it leaves intact (Note [Compiling during a capture] in src/jiterator/programs.cpp).

#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/jiterator/compiled_kernel_info.hpp"
#include "cudakit/jiterator/jit_argument.hpp"
#include "cudakit/jiterator/kernel_variant.hpp"
#include "cudakit/jiterator/nvrtc_error.hpp"
#include "cudakit/jiterator/scalar.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::jiterator {

namespace detail {
class ElementwiseProgram;
}

// The scalar parameters of a runtime-compiled function, by name, with their default values (the
// value's C++ type decides the dtype the parameter is passed as).
using ScalarDefaults = std::map<std::string, Scalar, std::less<>>;

// The optional parts of a JitFunction::call.
struct JitCallOptions {
  // Values of scalar parameters for this call, by name (converted to the default's type).
  std::vector<std::pair<std::string, Scalar>> scalars;
  // Tensors to write the results to, one per output (or none): the broadcast shape, any dtype,
  // any strides without internal overlap; an output may be one of the inputs.
  std::vector<tensor::Tensor> out;
  // The stream the kernel is queued on; left out, the current stream of the tensors' device.
  OptionalStream stream;
};

// A runtime-compiled elementwise function, made by create_jit_fn or create_multi_output_jit_fn.
// Cheap to copy (copies share the compiled kernels); const methods may be called from several
// threads at once.
class JitFunction {
 public:
  // The output, with every scalar at its default (a multi-output function computes all its
  // outputs and returns the first: use call() for the others). Stream-ordered on the current
  // stream of the tensors' device; returns before the kernel completes.
  // @tparam Inputs tensor::Tensor, Scalar or arithmetic types
  // @param inputs the inputs, in the entry function's order
  // @return the new output tensor
  // @throws InvalidArgumentError as call() (and NvrtcError, StateError, CudaError).
  template <class... Inputs>
  tensor::Tensor operator()(const Inputs&... inputs) const {
    const JitArgument arguments[] = {JitArgument(inputs)...};
    return std::move(call(arguments, {}).front());
  }
  // Runs the kernel on `inputs`; returns the outputs (options.out's tensors when given).
  // Stream-ordered: the kernel is queued on options.stream (default: the current stream of the
  // tensors' device) and the call returns before it completes. A first call for a new variant
  // compiles or loads it first, blocking the calling thread meanwhile.
  // @param inputs the inputs, in the entry function's order (tensors on one CUDA device, or host
  //   scalars; at least one tensor unless options.out is given)
  // @param options scalar values, output tensors and the stream
  // @return one tensor per output: new contiguous tensors of the broadcast shape, or options.out
  // @throws InvalidArgumentError (before any compilation) for a wrong number of inputs, an
  //   unknown scalar name, inputs that do not broadcast, on the host or on different devices, or
  //   outputs of the wrong shape, device or overlapping an input.
  // @throws NvrtcError when the code does not compile (with NVRTC's log, lines numbered as in
  //   the code).
  // @throws StateError when NVRTC is not available.
  // @throws CudaError when the kernel cannot be loaded or launched.
  // @throws OutOfMemoryError when the outputs cannot be allocated.
  std::vector<tensor::Tensor> call(std::span<const JitArgument> inputs,
                                   const JitCallOptions& options = {}) const;
  // call() for a braced list: `f.call({x, y}, {.stream = s})`. Stream-ordered as that call.
  // @param inputs the inputs, in the entry function's order
  // @param options scalar values, output tensors and the stream
  // @return one tensor per output
  // @throws InvalidArgumentError as the span overload, and NvrtcError, StateError, CudaError.
  std::vector<tensor::Tensor> call(std::initializer_list<JitArgument> inputs,
                                   const JitCallOptions& options = {}) const {
    return call(std::span<const JitArgument>(inputs.begin(), inputs.size()), options);
  }

  // The variant a call with these arguments runs (its generated source is what it compiles).
  // Needs no device: the arguments' layouts decide, so host tensors may stand in for CUDA ones.
  // @param inputs the inputs a call would get
  // @param options the call's options (scalars and out; the stream is not used)
  // @return the variant
  // @throws InvalidArgumentError as call() does for the arguments (devices aside).
  [[nodiscard]] KernelVariant variant_for(std::span<const JitArgument> inputs,
                                          const JitCallOptions& options = {}) const;
  // variant_for() for a braced list.
  // @param inputs the inputs a call would get
  // @param options the call's options
  // @return the variant
  // @throws InvalidArgumentError as the span overload.
  [[nodiscard]] KernelVariant variant_for(std::initializer_list<JitArgument> inputs,
                                          const JitCallOptions& options = {}) const {
    return variant_for(std::span<const JitArgument>(inputs.begin(), inputs.size()), options);
  }
  // The CUDA source generated for `variant`: what to attach to a bug report.
  // @param variant a variant of this function (variant_for(), or written by hand)
  // @return the complete source NVRTC compiles for it
  // @throws InvalidArgumentError for a variant of the wrong number of inputs or outputs.
  [[nodiscard]] std::string generated_source(const KernelVariant& variant) const;
  // Compiles `variant` for sm_<arch> through the caches, without loading it (needs no GPU).
  // Blocks the calling thread for the compilation; queues nothing.
  // @param variant a variant of this function
  // @param arch the architecture as a number: 90 for sm_90
  // @return where the kernel came from and what each step took
  // @throws NvrtcError when the code does not compile.
  // @throws InvalidArgumentError for a variant of the wrong arity.
  // @throws StateError when NVRTC is not available.
  CompiledKernelInfo compile(const KernelVariant& variant, int arch) const;

  // The entry function's name.
  // @return the name of the code's last function
  [[nodiscard]] const std::string& name() const;
  // How many inputs the entry function has.
  // @return the number of inputs (parameters that are neither scalars nor outputs)
  [[nodiscard]] int num_inputs() const;
  // How many outputs the entry function has.
  // @return 1 for create_jit_fn, num_outputs for create_multi_output_jit_fn
  [[nodiscard]] int num_outputs() const;
  // The scalar parameters' names, in the entry function's order.
  // @return the names (those of `defaults`)
  [[nodiscard]] std::vector<std::string> scalar_names() const;

 private:
  friend JitFunction create_multi_output_jit_fn(std::string code, int num_outputs, ScalarDefaults defaults);
  explicit JitFunction(std::shared_ptr<detail::ElementwiseProgram> program)
      : program_(std::move(program)) {}
  std::shared_ptr<detail::ElementwiseProgram> program_;
};

// An elementwise function of one output from `code` (torch.cuda.jiterator._create_jit_fn).
// Nothing is compiled until the first call.
// @param code one or more C++ functions; the last is the entry.
// @param defaults the scalar parameters, by name, with their default values.
// @return the function, ready to call
// @throws InvalidArgumentError when the entry function cannot be found or parsed, has more than
//   16 inputs, or a default names no parameter of it (before any compilation).
[[nodiscard]] JitFunction create_jit_fn(std::string code, ScalarDefaults defaults = {});
// The same with `num_outputs` outputs, the entry's last parameters, taken by reference
// (torch's _create_multi_output_jit_fn). Nothing is compiled until the first call.
// @param code one or more C++ functions, the last the entry, returning void.
// @param num_outputs how many of the entry's last parameters are outputs (at least 1).
// @param defaults the scalar parameters, by name, with their default values.
// @return the function, ready to call
// @throws InvalidArgumentError as create_jit_fn, and when num_outputs is out of range or does
//   not match the entry's output parameters.
[[nodiscard]] JitFunction create_multi_output_jit_fn(std::string code, int num_outputs,
                                                     ScalarDefaults defaults = {});

}  // namespace cudakit::jiterator
