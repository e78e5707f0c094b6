#pragma once
// The state behind JitFunction and JitReduction: the user's code, read once, and the functions
// already loaded for each variant and device.

#include <cuda.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/jiterator/jit_reduction.hpp"
#include "jiterator/detail/code_generator.hpp"

namespace cudakit::jiterator::detail {

// What picks a loaded function on the hot path, packed: inputs' dtypes (and whether each is a
// host scalar), outputs' dtypes, access, index width, device. No strings.
struct VariantKey {
  std::array<std::uint8_t, 2 + kMaxInputs + kMaxOutputs + 2> bytes{};
  int device = -1;
  friend bool operator==(const VariantKey&, const VariantKey&) = default;
};
struct VariantKeyHash {
  std::size_t operator()(const VariantKey& key) const noexcept;
};
[[nodiscard]] VariantKey make_variant_key(const KernelVariant& variant, int device);

// The code and scalar parameters common to both kinds of program.
struct ScalarParameters {
  std::vector<std::string> names;  // by scalar index (declaration order)
  std::vector<Scalar> defaults;
  std::vector<DType> dtypes;
};
ScalarParameters read_scalar_parameters(const EntryFunction& entry, const ScalarDefaults& defaults);

// Loaded functions by variant key; `make` produces a missing one (outside the lock).
class FunctionTable {
 public:
  template <class Make>
  CUfunction get(const VariantKey& key, Make&& make) {
    {
      const std::lock_guard lock(mutex_);
      if (const auto found = functions_.find(key); found != functions_.end()) return found->second;
    }
    const CUfunction function = make();
    const std::lock_guard lock(mutex_);
    return functions_.emplace(key, function).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<VariantKey, CUfunction, VariantKeyHash> functions_;
};

class ElementwiseProgram {
 public:
  ElementwiseProgram(std::string code, int num_outputs, const ScalarDefaults& defaults);
  std::vector<tensor::Tensor> call(std::span<const JitArgument> inputs, const JitCallOptions& options);
  KernelVariant variant_for(std::span<const JitArgument> inputs, const JitCallOptions& options) const;
  std::string source(const KernelVariant& variant) const;
  CompiledKernelInfo compile(const KernelVariant& variant, int arch) const;

  UserFunction function;
  ScalarParameters scalars;
  int num_outputs = 1;

 private:
  // `variant` completed (outputs defaulted to the common dtype) and checked.
  KernelVariant complete(const KernelVariant& variant, DType* common) const;
  FunctionTable functions_;
};

class ReductionProgram {
 public:
  ReductionProgram(std::string map_code, std::string combine_code, std::string identity,
                   const ScalarDefaults& defaults);
  tensor::Tensor call(std::span<const JitArgument> inputs, const JitReductionOptions& options);
  std::string source(const KernelVariant& variant) const;
  CompiledKernelInfo compile(const KernelVariant& variant, int arch) const;

  UserFunction map;
  UserFunction combine;
  std::string identity;
  ScalarParameters scalars;

 private:
  KernelVariant complete(const KernelVariant& variant, DType* common) const;
  FunctionTable functions_;      // pass 1
  FunctionTable partials_;       // pass 2
};

}  // namespace cudakit::jiterator::detail
