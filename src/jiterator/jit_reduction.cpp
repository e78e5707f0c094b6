#include "cudakit/jiterator/jit_reduction.hpp"

#include "jiterator/detail/programs.hpp"

namespace cudakit::jiterator {

tensor::Tensor JitReduction::call(std::span<const JitArgument> inputs, const JitReductionOptions& options) const {
  return program_->call(inputs, options);
}

std::string JitReduction::generated_source(const KernelVariant& variant) const { return program_->source(variant); }

CompiledKernelInfo JitReduction::compile(const KernelVariant& variant, int arch) const {
  return program_->compile(variant, arch);
}

int JitReduction::num_inputs() const { return program_->map.entry.inputs; }

JitReduction create_jit_reduction(std::string map_code, std::string combine_code, std::string identity,
                                  ScalarDefaults defaults) {
  return JitReduction(std::make_shared<detail::ReductionProgram>(std::move(map_code), std::move(combine_code),
                                                                 std::move(identity), defaults));
}

}  // namespace cudakit::jiterator
