#pragma once
// What elementwise and reduction calls share before launching: reading the inputs (tensors or
// host scalars), their promoted dtype, device and broadcast shape, the scalar parameters' values,
// the strided layout parameter, and the launch itself.

#include <cuda.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/jiterator/jit_argument.hpp"
#include "cudakit/jiterator/kernel_variant.hpp"
#include "cudakit/tensor/detail/strided_indexer.hpp"
#include "cudakit/tensor/tensor.hpp"
#include "jiterator/detail/code_generator.hpp"

namespace cudakit::jiterator::detail {

// The inputs of one call, checked.
struct CallInputs {
  std::array<const tensor::Tensor*, kMaxInputs> tensors{};  // the tensor inputs, in order
  std::array<InputType, kMaxInputs> types{};                // every input's, in order
  int count = 0;                                            // inputs
  int tensor_count = 0;
  DType common = DType::float32;  // promoted over tensors and host scalars
  int device = -1;                // -1 when no input is a tensor (or before check_devices)
  // The broadcast shape of the tensor inputs: the first one's sizes when all agree (no copy on
  // the hot path), else `broadcast`.
  [[nodiscard]] const tensor::Shape& shape() const noexcept {
    return broadcasts || tensor_count == 0 ? broadcast : tensors[0]->sizes();
  }
  bool broadcasts = false;
  tensor::Shape broadcast;
};

// Reads `inputs` into `call`: count, dtypes, promotion, broadcast shape. Devices are left to
// check_devices, so that the host tier (and bench/jiterator_bench.cpp's host part) can plan calls
// on host tensors.
// @throws InvalidArgumentError naming `api` for a wrong count, an undefined tensor, or shapes that
//   do not broadcast.
void read_inputs(std::span<const JitArgument> inputs, int expected, const char* api, CallInputs& call);
// Sets call.device. @throws InvalidArgumentError for a host tensor among the inputs, or inputs on
//   different devices.
void check_devices(CallInputs& call, const char* api);
// torch's result_type: tensors first, then host scalars only where their kind (bool < integer <
// floating) is above every tensor's (then the default dtype of the kind: int64, float32).
DType promote(std::span<const InputType> inputs);
// The variant's inputs for `inputs`.
void input_types(std::span<const JitArgument> inputs, std::vector<InputType>& out);

// The scalar parameters' values for a call: `defaults` with `overrides` applied by name (each
// converted to its default's type). @throws InvalidArgumentError for an unknown name.
void scalar_values(const std::vector<std::string>& names, const std::vector<Scalar>& defaults,
                   const std::vector<std::pair<std::string, Scalar>>& overrides, const char* api,
                   std::array<Scalar, kMaxInputs>& values);

// True when `numel` elements or any operand's reach does not fit 32-bit index arithmetic.
bool needs_index64(std::int64_t numel, std::span<const tensor::detail::StridedIndexer> indexers);

// The kernel parameters of one launch, in the kernel's order, without allocating.
class LaunchParameters {
 public:
  void pointer(const void* p) { add(reinterpret_cast<std::uintptr_t>(p)); }
  void bits(std::uint64_t value) { add(value); }
  // Slots for `count` addresses filled later by set_pointer (the outputs, allocated after the plan).
  void reserve_pointers(int count) {
    for (int i = 0; i < count; ++i) add(0);
  }
  void set_pointer(int slot, const void* p) { values_[slot] = reinterpret_cast<std::uintptr_t>(p); }
  void index(std::int64_t value, bool index64) {
    add(index64 ? static_cast<std::uint64_t>(value) : static_cast<std::uint32_t>(value));
  }
  // The inputs (tensors' addresses, host numbers as `compute`), then the scalar parameters
  // (`values[s]` as `dtypes[s]`), in the kernel's order.
  void inputs_and_scalars(std::span<const JitArgument> inputs, DType compute, const std::array<Scalar, kMaxInputs>& values,
                          const std::vector<DType>& dtypes) {
    for (const JitArgument& a : inputs) {
      if (a.is_tensor()) pointer(a.tensor().data_ptr());
      else bits(a.scalar().bits_as(compute));
    }
    for (std::size_t s = 0; s < dtypes.size(); ++s) bits(values[s].bits_as(dtypes[s]));
  }
  // The ck_layout parameter for `indexers` (all of one shape), in 32- or 64-bit fields.
  void layout(std::span<const tensor::detail::StridedIndexer> indexers, bool index64);
  [[nodiscard]] void** data() noexcept { return pointers_.data(); }
  // Every parameter's value, when none is the layout struct (which lives outside values_);
  // else empty. Equal values mean an equal launch (see launch_through_graph).
  [[nodiscard]] std::span<const std::uint64_t> values() const noexcept {
    return has_layout_ ? std::span<const std::uint64_t>{} : std::span<const std::uint64_t>(values_.data(), count_);
  }

 private:
  void add(std::uint64_t value) {
    values_[count_] = value;
    pointers_[count_] = &values_[count_];
    ++count_;
  }
  static constexpr int kMaxParameters = kMaxOutputs + 2 * kMaxInputs + 8;
  static constexpr int kLayoutFields = 1 + 3 * kLayoutDims + (kMaxInputs + kMaxOutputs) * kLayoutDims;
  // Not zeroed: only the first count_ slots (and the layout's used fields) are ever read, and
  // clearing 2 KiB per call would cost as much as the rest of the packing.
  std::array<std::uint64_t, kMaxParameters> values_;
  std::array<void*, kMaxParameters> pointers_;
  int count_ = 0;
  bool has_layout_ = false;
  alignas(16) std::array<std::uint64_t, kLayoutFields> layout_;
};

// The architecture of `device` (90 for sm_90), asked once per device.
int device_arch(int device);

// cuLaunchKernel of a 1-D grid on `stream`, reported to the trace hooks with the byte ranges of
// `operands` (the first `written` of them written, the others read), built only when someone
// listens.
void launch(CUfunction function, std::int64_t grid, int block, StreamRef stream, LaunchParameters& parameters,
            std::span<const tensor::Tensor* const> operands, int written);

}  // namespace cudakit::jiterator::detail
