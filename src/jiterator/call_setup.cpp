#include "jiterator/detail/call_setup.hpp"

#include <algorithm>
#include <mutex>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/graph_launcher.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/tensor/detail/layout.hpp"
#include "cudakit/tensor/detail/operand_access.hpp"
#include "cudakit/tensor/elementwise.hpp"

namespace cudakit::jiterator::detail {
namespace {

using cudakit::detail::concat;
using tensor::Tensor;

int kind_rank(DType t) { return t == DType::bool_ ? 0 : tensor::is_floating(t) ? 2 : 1; }

}  // namespace

DType promote(std::span<const InputType> inputs) {
  bool any_tensor = false;
  DType tensors = DType::bool_;
  int scalar_rank = -1;
  DType scalars = DType::bool_;
  for (const InputType& t : inputs) {
    if (t.scalar) {
      scalar_rank = std::max(scalar_rank, kind_rank(t.dtype));
      scalars = scalar_rank == 0 ? DType::bool_ : scalar_rank == 1 ? DType::int64 : DType::float32;
    } else {
      tensors = any_tensor ? tensor::promote_types(tensors, t.dtype) : t.dtype;
      any_tensor = true;
    }
  }
  if (!any_tensor) return scalars;
  if (scalar_rank > kind_rank(tensors)) return scalars;
  return tensors;
}

void input_types(std::span<const JitArgument> inputs, std::vector<InputType>& out) {
  out.clear();
  for (const JitArgument& a : inputs) {
    out.push_back(a.is_tensor() ? InputType{a.tensor().dtype(), false} : InputType{a.scalar().dtype(), true});
  }
}

void read_inputs(std::span<const JitArgument> inputs, int expected, const char* api, CallInputs& call) {
  if (static_cast<int>(inputs.size()) != expected) {
    throw InvalidArgumentError(api, concat("takes ", expected, " input", expected == 1 ? "" : "s", ", got ",
                                           inputs.size()));
  }
  call.count = static_cast<int>(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const JitArgument& a = inputs[k];
    if (!a.is_tensor()) {
      call.types[k] = {a.scalar().dtype(), true};
      continue;
    }
    const Tensor& t = a.tensor();
    t.check_defined(api);
    // A kernel computes in C++ types: FP8, complex and packed FP4 inputs have none here.
    tensor::check_computing(t.dtype(), api);
    // Shapes are copied only where they differ: a call whose inputs agree allocates nothing here.
    if (call.tensor_count > 0 && t.sizes() != call.shape()) {
      try {
        call.broadcast = tensor::broadcast_shapes(call.shape(), t.sizes());
        call.broadcasts = true;
      } catch (const InvalidArgumentError&) {
        std::string shapes;
        for (int j = 0; j < call.tensor_count; ++j) shapes += concat(call.tensors[j]->shape_string(), ", ");
        throw InvalidArgumentError(api, concat("input ", k, " (", t.description(), ") does not broadcast with the "
                                               "inputs before it (shapes ", shapes, "broadcast to ",
                                               tensor::shape_string(call.shape()), ")"));
      }
    }
    call.types[k] = {t.dtype(), false};
    call.tensors[call.tensor_count++] = &t;
  }
  call.common = promote(std::span<const InputType>(call.types.data(), inputs.size()));
}

void check_devices(CallInputs& call, const char* api) {
  for (int j = 0; j < call.tensor_count; ++j) {
    const Tensor& t = *call.tensors[j];
    const tensor::Device device = t.device();
    if (!device.is_cuda()) {
      throw InvalidArgumentError(api, concat("a tensor input is ", t.description(),
                                             ": runtime-compiled kernels run on CUDA tensors"));
    }
    if (j == 0) call.device = device.index;
    else if (device.index != call.device) {
      throw InvalidArgumentError(api, concat("inputs on different devices: ", call.tensors[0]->description(), " and ",
                                             t.description()));
    }
  }
}

void scalar_values(const std::vector<std::string>& names, const std::vector<Scalar>& defaults,
                   const std::vector<std::pair<std::string, Scalar>>& overrides, const char* api,
                   std::array<Scalar, kMaxInputs>& values) {
  std::copy(defaults.begin(), defaults.end(), values.begin());
  for (const auto& [name, value] : overrides) {
    const auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end()) {
      std::string known;
      for (const std::string& n : names) known += concat(known.empty() ? "" : ", ", n);
      throw InvalidArgumentError(api, concat("unknown scalar parameter `", name, "` (= ", value.description(), "); ",
                                             names.empty() ? std::string("this function has none")
                                                           : concat("this function's are: ", known)));
    }
    values[found - names.begin()] = value;
  }
}

bool needs_index64(std::int64_t numel, std::span<const tensor::detail::StridedIndexer> indexers) {
  constexpr std::int64_t kLimit = 0x7fffffff;
  if (numel > kLimit) return true;
  for (const auto& index : indexers) {
    std::int64_t reach = 0;
    for (int d = 0; d < index.ndim; ++d) {
      if (index.strides[d] < 0) return true;  // the 32-bit path's arithmetic is unsigned
      reach += (index.sizes[d] - 1) * index.strides[d];
    }
    if (reach > kLimit) return true;
  }
  return false;
}

void LaunchParameters::layout(std::span<const tensor::detail::StridedIndexer> indexers, bool index64) {
  // Fields in the order of ck_layout (code_generator.cpp): ndim, sizes, mul, shift, strides,
  // innermost dimension first. Dimensions past the indexers' are of size 1 and stride 0, so a
  // kernel generated for more dimensions reads the same offsets.
  const int ndim = indexers.empty() ? 0 : indexers[0].ndim;
  std::array<std::uint64_t, kLayoutFields> fields{};
  fields[0] = static_cast<std::uint64_t>(std::max(1, ndim));
  for (int d = 0; d < kLayoutDims; ++d) {
    const bool real = d < ndim;
    const int source = ndim - 1 - d;
    const std::uint64_t size = real ? static_cast<std::uint64_t>(indexers[0].sizes[source]) : 1;
    fields[1 + d] = size;
    // Division by multiply-and-shift, valid for n < 2^31 (the 32-bit path): shift = ceil(log2
    // size), mul = 2^32 (2^shift - size) / size + 1, q = (umulhi(n, mul) + n) >> shift.
    unsigned shift = 0;
    while (shift < 63 && (std::uint64_t{1} << shift) < size) ++shift;
    const std::uint64_t mul = size == 0 ? 0 : ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - size)) / size + 1;
    fields[1 + kLayoutDims + d] = mul;
    fields[1 + 2 * kLayoutDims + d] = shift;
    for (std::size_t k = 0; k < indexers.size(); ++k) {
      fields[1 + 3 * kLayoutDims + k * kLayoutDims + d] = real ? static_cast<std::uint64_t>(indexers[k].strides[source]) : 0;
    }
  }
  const std::size_t count = 1 + 3 * kLayoutDims + std::max<std::size_t>(1, indexers.size()) * kLayoutDims;
  if (index64) {
    std::copy_n(fields.begin(), count, layout_.begin());
  } else {
    auto* narrow = reinterpret_cast<std::uint32_t*>(layout_.data());
    for (std::size_t i = 0; i < count; ++i) narrow[i] = static_cast<std::uint32_t>(fields[i]);
  }
  pointers_[count_++] = layout_.data();
  has_layout_ = true;
}

int device_arch(int device) {
  static std::mutex mutex;
  static std::array<int, 64> arch{};
  if (device < 0 || device >= static_cast<int>(arch.size())) {
    throw InvalidArgumentError("jiterator", concat("device ordinal ", device, " out of range"));
  }
  const std::lock_guard lock(mutex);
  if (arch[device] == 0) {
    int major = 0, minor = 0;
    CUDAKIT_CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDAKIT_CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    arch[device] = major * 10 + minor;
  }
  return arch[device];
}

void launch(CUfunction function, std::int64_t grid, int block, StreamRef stream, LaunchParameters& parameters,
            std::span<const Tensor* const> operands, int written) {
  if (trace_hooks_active()) [[unlikely]] {
    std::vector<MemoryAccess> accesses;
    for (std::size_t k = 0; k < operands.size(); ++k) {
      const Tensor& t = *operands[k];
      accesses.push_back(tensor::detail::operand_access(
          t.data_ptr(), tensor::detail::make_indexer(t), false, t.numel(), t.element_size(),
          static_cast<int>(k) < written ? MemoryAccess::Mode::write : MemoryAccess::Mode::read));
    }
    cudakit::detail::emit_trace_event({.kind = TraceEventKind::kernel_launch, .device = stream.device(),
                                       .stream = stream.handle(), .name = "jiterator", .accesses = accesses,
                                       .accesses_declared = true});
  }
  // See Note [Launching through a one-node graph] (core): half the host time of cuLaunchKernel.
  const cudakit::detail::GraphKernelLaunch l{
      .function = function, .grid = {static_cast<unsigned>(grid), 1, 1}, .block = {static_cast<unsigned>(block), 1, 1},
      .stream = reinterpret_cast<CUstream>(stream.handle()), .parameters = parameters.data(), .values = parameters.values()};
  if (cudakit::detail::launch_through_graph(l)) return;
  CUDAKIT_DRIVER_CALL(cuLaunchKernel, l.function, l.grid[0], 1, 1, l.block[0], 1, 1, 0, l.stream, l.parameters, nullptr);
}

}  // namespace cudakit::jiterator::detail
