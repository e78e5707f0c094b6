#include "cudakit/jiterator/jit_function.hpp"

#include "cudakit/core/error.hpp"
#include "jiterator/detail/programs.hpp"

namespace cudakit::jiterator {

std::vector<tensor::Tensor> JitFunction::call(std::span<const JitArgument> inputs, const JitCallOptions& options) const {
  return program_->call(inputs, options);
}

KernelVariant JitFunction::variant_for(std::span<const JitArgument> inputs, const JitCallOptions& options) const {
  return program_->variant_for(inputs, options);
}

std::string JitFunction::generated_source(const KernelVariant& variant) const { return program_->source(variant); }

CompiledKernelInfo JitFunction::compile(const KernelVariant& variant, int arch) const {
  return program_->compile(variant, arch);
}

const std::string& JitFunction::name() const { return program_->function.entry.name; }
int JitFunction::num_inputs() const { return program_->function.entry.inputs; }
int JitFunction::num_outputs() const { return program_->num_outputs; }
std::vector<std::string> JitFunction::scalar_names() const { return program_->scalars.names; }

JitFunction create_jit_fn(std::string code, ScalarDefaults defaults) {
  return create_multi_output_jit_fn(std::move(code), 1, std::move(defaults));
}

JitFunction create_multi_output_jit_fn(std::string code, int num_outputs, ScalarDefaults defaults) {
  return JitFunction(std::make_shared<detail::ElementwiseProgram>(std::move(code), num_outputs, defaults));
}

}  // namespace cudakit::jiterator
