#pragma once
// The state behind JitFunction and JitReduction: the user's code, read once, and the functions
// already loaded for each variant and device.

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/jiterator/jit_reduction.hpp"
#include "jiterator/detail/call_setup.hpp"
#include "jiterator/detail/code_generator.hpp"

namespace cudakit::jiterator::detail {

// What picks a loaded function on the hot path, packed: inputs' dtypes (and whether each is a
// host scalar), outputs' dtypes, access, index width, device. No strings.
struct VariantKey {
  // Rounded up to whole 8-byte words for the hash; the padding stays zero.
  std::array<std::uint8_t, (2 + kMaxInputs + kMaxOutputs + 2 + 7) / 8 * 8> bytes{};
  int device = -1;
  friend bool operator==(const VariantKey&, const VariantKey&) = default;
};
struct VariantKeyHash {
  std::size_t operator()(const VariantKey& key) const noexcept;
};
// The key of a call: its inputs' types, its outputs' dtypes, the access, the index width and (for
// the strided access) the dimensions, on `device`.
[[nodiscard]] VariantKey make_variant_key(std::span<const InputType> inputs, std::span<const DType> outputs,
                                          OperandAccess access, bool index64, int dims, int device);
[[nodiscard]] VariantKey make_variant_key(const KernelVariant& variant, int device);

// The code and scalar parameters common to both kinds of program.
struct ScalarParameters {
  std::vector<std::string> names;  // by scalar index (declaration order)
  std::vector<Scalar> defaults;
  std::vector<DType> dtypes;
};
ScalarParameters read_scalar_parameters(const EntryFunction& entry, const ScalarDefaults& defaults);

// Loaded functions by variant key; `make` produces a missing one (outside the lock). The entry
// the last lookup found is remembered behind an atomic pointer: a program called again and again
// with the same kind of arguments (the usual case) finds its function with one comparison and no
// lock. Entries are never erased, and an unordered_map's nodes stay where they are when it grows,
// so the remembered pointer stays valid.
class FunctionTable {
 public:
  template <class Make>
  CUfunction get(const VariantKey& key, Make&& make) {
    if (const Entry* last = last_.load(std::memory_order_acquire); last != nullptr && last->first == key) {
      return last->second;
    }
    {
      const std::lock_guard lock(mutex_);
      if (const auto found = functions_.find(key); found != functions_.end()) {
        last_.store(&*found, std::memory_order_release);
        return found->second;
      }
    }
    const CUfunction function = make();
    const std::lock_guard lock(mutex_);
    const auto placed = functions_.emplace(key, function).first;
    last_.store(&*placed, std::memory_order_release);
    return placed->second;
  }

 private:
  using Entry = std::pair<const VariantKey, CUfunction>;
  std::mutex mutex_;
  std::unordered_map<VariantKey, CUfunction, VariantKeyHash> functions_;
  std::atomic<const Entry*> last_{nullptr};
};

// What an elementwise call decides on the host before it allocates its outputs and launches: the
// checked inputs, the variant's key, the grid, and the kernel's parameters but for the outputs'
// addresses (See Note [The hot path of a call] in programs.cpp). Filled in place and never moved:
// the parameters point into themselves, `shape` into the inputs or the plan.
struct ElementwisePlan {
  ElementwisePlan() = default;
  ElementwisePlan(const ElementwisePlan&) = delete;
  ElementwisePlan& operator=(const ElementwisePlan&) = delete;

  CallInputs in;
  const tensor::Shape* shape = nullptr;  // the inputs' broadcast shape, or out[0]'s
  std::int64_t numel = 0;
  int num_outputs = 0;
  std::array<DType, kMaxOutputs> outputs{};  // the outputs' dtypes
  OperandAccess access = OperandAccess::strided;
  bool index64 = false;
  int dims = 0;  // strided: the indexers' dimensions (at least 1)
  VariantKey key;
  std::int64_t grid = 0;
  LaunchParameters parameters;  // the first num_outputs slots are the outputs' addresses
};

class ElementwiseProgram {
 public:
  ElementwiseProgram(std::string code, int num_outputs, const ScalarDefaults& defaults);
  std::vector<tensor::Tensor> call(std::span<const JitArgument> inputs, const JitCallOptions& options);
  // The host part of call(): everything but the devices' checks, the stream, the outputs'
  // allocation, the function's lookup and the launch. Works on host tensors (for the benchmark
  // of the dispatch, bench/jiterator_bench.cpp). @throws as call().
  void plan(std::span<const JitArgument> inputs, const JitCallOptions& options, ElementwisePlan& plan) const;
  // The variant `plan` runs (what its key stands for).
  [[nodiscard]] KernelVariant variant_of(const ElementwisePlan& plan) const;
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
