#include "jiterator/detail/programs.hpp"

#include <algorithm>
#include <cstring>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/relaxed_capture_mode.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/launch_config.hpp"
#include "cudakit/tensor/detail/layout.hpp"
#include "cudakit/tensor/factories.hpp"
#include "jiterator/detail/call_setup.hpp"
#include "jiterator/detail/hash.hpp"
#include "jiterator/detail/kernel_store.hpp"

namespace cudakit::jiterator::detail {
namespace {

using cudakit::detail::concat;
using tensor::Shape;
using tensor::Tensor;
using tensor::detail::StridedIndexer;

constexpr const char* kCallApi = "jiterator call";

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

// The bytes [first, last] a tensor's elements occupy.
std::pair<std::uintptr_t, std::uintptr_t> byte_range(const Tensor& t) {
  const auto first = reinterpret_cast<std::uintptr_t>(t.data_ptr());
  std::int64_t reach = 0;
  for (int d = 0; d < t.dim(); ++d) reach += (t.sizes()[d] - 1) * t.strides()[d];
  return {first, first + static_cast<std::uintptr_t>(reach) * t.element_size() + t.element_size() - 1};
}

// Outputs given by the caller: one per output, the broadcast shape, no element written twice,
// and no overlap with an input other than being that input exactly (devices: check_out_devices).
void check_outputs(const std::vector<Tensor>& out, int expected, const CallInputs& in) {
  if (static_cast<int>(out.size()) != expected) {
    throw InvalidArgumentError(kCallApi, concat("out holds ", out.size(), " tensors, the function has ", expected,
                                                " output", expected == 1 ? "" : "s"));
  }
  for (std::size_t j = 0; j < out.size(); ++j) {
    const Tensor& o = out[j];
    o.check_defined(kCallApi);
    if (in.tensor_count > 0 && o.sizes() != in.shape()) {
      throw InvalidArgumentError(kCallApi, concat("out[", j, "] is ", o.description(), ", but the inputs broadcast to ",
                                                  tensor::shape_string(in.shape())));
    }
    for (int d = 0; d < o.dim(); ++d) {
      if (o.strides()[d] == 0 && o.sizes()[d] > 1) {
        throw InvalidArgumentError(kCallApi, concat("out[", j, "] (", o.description(),
                                                    ") has stride 0 in dimension ", d, ": several results would land "
                                                    "on one element"));
      }
    }
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const auto out_range = byte_range(o);
    const auto overlaps = [&](const Tensor& t) {
      const auto [f, l] = byte_range(t);
      return f <= out_range.second && out_range.first <= l;
    };
    for (int k = 0; k < in.tensor_count; ++k) {
      const Tensor& t = *in.tensors[k];
      if (!overlaps(t)) continue;
      const bool same = t.data_ptr() == o.data_ptr() && t.strides() == o.strides() && t.sizes() == o.sizes() &&
                        t.element_size() == o.element_size();
      if (!same) {
        throw InvalidArgumentError(kCallApi, concat("out[", j, "] (", o.description(), ") overlaps a tensor input (",
                                                    t.description(), ") without being it: an output may be an input, "
                                                    "element for element, but not a shifted or reshaped view of one"));
      }
    }
    for (std::size_t i = 0; i < j; ++i) {
      if (overlaps(out[i])) {
        throw InvalidArgumentError(kCallApi, concat("out[", i, "] and out[", j, "] overlap"));
      }
    }
  }
}

// The outputs given are on the inputs' device (after check_devices).
void check_out_devices(const std::vector<Tensor>& out, const CallInputs& in) {
  for (std::size_t j = 0; j < out.size(); ++j) {
    const Tensor& o = out[j];
    if (!o.device().is_cuda() || (in.device >= 0 && o.device().index != in.device)) {
      throw InvalidArgumentError(kCallApi, concat("out[", j, "] is ", o.description(), ", the inputs are on cuda:",
                                                  in.device));
    }
  }
}

}  // namespace

std::size_t VariantKeyHash::operator()(const VariantKey& key) const noexcept {
  // Eight bytes at a time, each word mixed in by a multiply and a shift (four words).
  static_assert(sizeof(key.bytes) % 8 == 0);
  std::uint64_t hash = static_cast<std::uint64_t>(key.device) + 0x9e3779b97f4a7c15ull;
  for (std::size_t at = 0; at < key.bytes.size(); at += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, key.bytes.data() + at, 8);
    hash = (hash ^ word) * 0xff51afd7ed558ccdull;
    hash ^= hash >> 32;
  }
  return static_cast<std::size_t>(hash);
}

VariantKey make_variant_key(std::span<const InputType> inputs, std::span<const DType> outputs, OperandAccess access,
                            bool index64, int dims, int device) {
  VariantKey key;
  key.device = device;
  std::size_t at = 0;
  key.bytes[at++] = static_cast<std::uint8_t>(inputs.size());
  for (const InputType& t : inputs) key.bytes[at++] = static_cast<std::uint8_t>(static_cast<int>(t.dtype) | (t.scalar ? 0x80 : 0));
  at = 1 + kMaxInputs;
  key.bytes[at++] = static_cast<std::uint8_t>(outputs.size());
  for (DType t : outputs) key.bytes[at++] = static_cast<std::uint8_t>(t);
  at = 2 + kMaxInputs + kMaxOutputs;
  key.bytes[at++] = static_cast<std::uint8_t>(access);
  key.bytes[at++] = static_cast<std::uint8_t>((index64 ? 0x80 : 0) | (access == OperandAccess::strided ? dims : 0));
  return key;
}

VariantKey make_variant_key(const KernelVariant& v, int device) {
  return make_variant_key(v.inputs, v.outputs, v.access, v.index64, strided_dims(v), device);
}

ScalarParameters read_scalar_parameters(const EntryFunction& entry, const ScalarDefaults& defaults) {
  ScalarParameters s;
  for (const EntryParameter& p : entry.parameters) {
    if (p.kind != EntryParameter::Kind::scalar) continue;
    const Scalar value = defaults.find(p.name)->second;
    s.names.push_back(p.name);
    s.defaults.push_back(value);
    s.dtypes.push_back(value.dtype());
  }
  return s;
}

namespace {
std::vector<std::string> names_of(const ScalarDefaults& defaults) {
  std::vector<std::string> names;
  for (const auto& [name, value] : defaults) names.push_back(name);
  return names;
}

CompiledKernelInfo compile_source(const std::string& source, int arch) {
  KernelOrigin origin = KernelOrigin::compiled;
  auto module = global_kernel_store().get(source, arch, &origin);
  CompiledKernelInfo info = module->info();
  info.origin = origin;
  return info;
}

void check_variant_inputs(const KernelVariant& v, int expected, const char* api) {
  if (static_cast<int>(v.inputs.size()) != expected) {
    throw InvalidArgumentError(api, concat("the variant has ", v.inputs.size(), " inputs, the function takes ", expected));
  }
}
}  // namespace

// Note [Compiling during a capture]
// A variant's first call compiles (or reads the disk cache) and loads a module. None of that is
// work on a stream, so a capture in progress is not changed by it; but loading a module (and the
// device queries beside it) counts as "potentially unsafe" for a capture in global mode — in
// this thread or any other — and would invalidate it. The slow path therefore runs with the
// thread in relaxed capture mode (RelaxedCaptureMode), and loads the function eagerly
// (cuFuncLoad) instead of at its first launch, which could fall inside the capture. The launch
// itself is then captured like any kernel. Warming up before capturing is still the cheaper
// order (a compile takes tens of milliseconds), but it is not required.

// --- elementwise ---

ElementwiseProgram::ElementwiseProgram(std::string code, int outputs, const ScalarDefaults& defaults) {
  if (outputs < 1 || outputs > kMaxOutputs) {
    throw InvalidArgumentError("create_multi_output_jit_fn", concat("num_outputs must be 1 to ", kMaxOutputs, ", got ", outputs));
  }
  function.entry = parse_entry_function(code, outputs, "create_jit_fn", names_of(defaults));
  function.code = std::move(code);
  scalars = read_scalar_parameters(function.entry, defaults);
  num_outputs = outputs;
}

KernelVariant ElementwiseProgram::complete(const KernelVariant& variant, DType* common) const {
  check_variant_inputs(variant, function.entry.inputs, "JitFunction");
  KernelVariant v = variant;
  *common = promote(v.inputs);
  if (v.outputs.empty()) v.outputs.assign(num_outputs, *common);
  if (static_cast<int>(v.outputs.size()) != num_outputs) {
    throw InvalidArgumentError("JitFunction", concat("the variant has ", v.outputs.size(), " outputs, the function ", num_outputs));
  }
  return v;
}

std::string ElementwiseProgram::source(const KernelVariant& variant) const {
  DType common{};
  const KernelVariant v = complete(variant, &common);
  return generate_elementwise_source(function, scalars.dtypes, v, common);
}

CompiledKernelInfo ElementwiseProgram::compile(const KernelVariant& variant, int arch) const {
  return compile_source(source(variant), arch);
}

// Note [The hot path of a call]
// A call of a kernel already loaded should cost little more than its launch (a few microseconds
// of host time: notes/figures.md). So the work before the launch allocates nothing where the
// outputs are given and the inputs agree in shape (read_inputs keeps a pointer to the first input's
// sizes instead of copying them), builds no string and no KernelVariant (whose vectors allocate:
// the key is packed from the inputs' types directly, and a KernelVariant is made only on a miss),
// finds the function through the table's last-hit entry (one comparison, no lock), and fills the
// launch's parameter array in place without clearing it. The plan is the part that needs no
// device, so that bench/jiterator_bench.cpp can time it on any machine; call() adds the devices'
// checks, the stream, the outputs' allocation and the launch.

void ElementwiseProgram::plan(std::span<const JitArgument> inputs, const JitCallOptions& options,
                              ElementwisePlan& plan) const {
  CallInputs& in = plan.in;
  read_inputs(inputs, function.entry.inputs, kCallApi, in);
  std::array<Scalar, kMaxInputs> scalar_value;
  scalar_values(scalars.names, scalars.defaults, options.scalars, kCallApi, scalar_value);
  if (in.tensor_count == 0 && options.out.empty()) {
    throw InvalidArgumentError(kCallApi, "every input is a host scalar: give at least one tensor input, or an out tensor, "
                                         "for the shape and the device");
  }
  const std::vector<Tensor>& out = options.out;
  if (!out.empty()) check_outputs(out, num_outputs, in);
  plan.shape = in.tensor_count > 0 ? &in.shape() : &out.front().sizes();
  const Shape& shape = *plan.shape;
  plan.numel = tensor::shape_numel(shape);
  plan.num_outputs = num_outputs;
  for (int j = 0; j < num_outputs; ++j) plan.outputs[j] = out.empty() ? in.common : out[j].dtype();

  // Outputs call() allocates are contiguous, aligned to 512 bytes, of the broadcast shape: they
  // allow every access and every merge of dimensions, so the given operands decide.
  bool contiguous = true;
  for (int k = 0; k < in.tensor_count; ++k) contiguous = contiguous && in.tensors[k]->is_contiguous() && in.tensors[k]->sizes() == shape;
  for (const Tensor& o : out) contiguous = contiguous && o.is_contiguous() && o.sizes() == shape;
  std::vector<StridedIndexer> indexers;  // strided only: the outputs', then the tensor inputs'
  if (contiguous) {
    std::size_t widest = 1;
    for (int k = 0; k < in.tensor_count; ++k) widest = std::max(widest, in.tensors[k]->element_size());
    for (int j = 0; j < num_outputs; ++j) widest = std::max(widest, tensor::element_size(plan.outputs[j]));
    const std::size_t width = 16 / widest;  // vector_width() of the variant
    bool vectorizable = true;
    for (int k = 0; k < in.tensor_count; ++k) vectorizable = vectorizable && aligned(in.tensors[k]->data_ptr(), width * in.tensors[k]->element_size());
    for (const Tensor& o : out) vectorizable = vectorizable && aligned(o.data_ptr(), width * o.element_size());
    plan.access = vectorizable ? OperandAccess::vectorized : OperandAccess::contiguous;
    plan.index64 = plan.numel > 0x7fffffff;
    if (vectorizable) {
      const auto w = static_cast<std::int64_t>(width);
      plan.grid = (plan.numel / w + plan.numel % w + kElementwiseThreads - 1) / kElementwiseThreads;
    }
  } else {
    plan.access = OperandAccess::strided;
    std::array<const Tensor*, kMaxInputs + kMaxOutputs> operands{};
    int count = 0;
    for (const Tensor& o : out) operands[count++] = &o;
    for (int k = 0; k < in.tensor_count; ++k) operands[count++] = in.tensors[k];
    indexers = tensor::detail::make_indexers(shape, std::span<const Tensor* const>(operands.data(), count));
    if (out.empty()) {
      // The fresh outputs' indexers: row-major over the merged dimensions.
      StridedIndexer fresh = indexers.front();
      std::int64_t stride = 1;
      for (int d = fresh.ndim - 1; d >= 0; --d) {
        fresh.strides[d] = stride;
        stride *= fresh.sizes[d];
      }
      indexers.insert(indexers.begin(), num_outputs, fresh);
    }
    plan.index64 = needs_index64(plan.numel, indexers);
    plan.dims = std::max(1, indexers[0].ndim);
  }
  if (plan.access != OperandAccess::vectorized) {
    plan.grid = (plan.numel + kElementwiseThreads * kElementwiseItems - 1) / (kElementwiseThreads * kElementwiseItems);
  }
  plan.key = make_variant_key(std::span<const InputType>(in.types.data(), in.count),
                              std::span<const DType>(plan.outputs.data(), num_outputs), plan.access, plan.index64,
                              plan.dims, in.device);

  LaunchParameters& parameters = plan.parameters;
  parameters.reserve_pointers(num_outputs);
  parameters.inputs_and_scalars(inputs, compute_dtype(in.common), scalar_value, scalars.dtypes);
  parameters.index(plan.numel, plan.index64);
  if (plan.access == OperandAccess::strided) parameters.layout(indexers, plan.index64);
}

KernelVariant ElementwiseProgram::variant_of(const ElementwisePlan& plan) const {
  KernelVariant v;
  v.inputs.assign(plan.in.types.begin(), plan.in.types.begin() + plan.in.count);
  v.outputs.assign(plan.outputs.begin(), plan.outputs.begin() + plan.num_outputs);
  v.access = plan.access;
  v.index64 = plan.index64;
  v.dims = plan.access == OperandAccess::strided ? plan.dims : 0;
  return v;
}

KernelVariant ElementwiseProgram::variant_for(std::span<const JitArgument> inputs, const JitCallOptions& options) const {
  ElementwisePlan p;
  plan(inputs, options, p);
  return variant_of(p);
}

std::vector<Tensor> ElementwiseProgram::call(std::span<const JitArgument> inputs, const JitCallOptions& options) {
  ElementwisePlan p;
  plan(inputs, options, p);
  check_devices(p.in, kCallApi);
  check_out_devices(options.out, p.in);
  const Tensor& anchor = p.in.tensor_count > 0 ? *p.in.tensors[0] : options.out.front();
  const int device = anchor.device().index;
  const StreamRef stream = anchor.stream_or_current(options.stream);

  std::vector<Tensor> outputs;
  if (options.out.empty()) {
    outputs.reserve(num_outputs);
    for (int j = 0; j < num_outputs; ++j) {
      outputs.push_back(tensor::empty(*p.shape, {.dtype = p.in.common, .device = anchor.device()}, stream));
    }
  } else {
    outputs = options.out;
  }
  if (p.numel == 0) return outputs;
  p.key.device = device;

  const CUfunction function_handle = functions_.get(p.key, [&] {
    // See Note [Compiling during a capture].
    const cudakit::detail::RelaxedCaptureMode relaxed;
    const int arch = device_arch(device);
    return global_kernel_store().function(
        generate_elementwise_source(function, scalars.dtypes, variant_of(p), p.in.common), arch, device,
        kElementwiseKernel);
  });

  // The operands as the kernel numbers them (for the trace hooks): outputs, then the tensor inputs.
  std::array<const Tensor*, kMaxInputs + kMaxOutputs> operands{};
  int count = 0;
  for (const Tensor& o : outputs) {
    p.parameters.set_pointer(count, o.data_ptr());
    operands[count++] = &o;
  }
  for (int k = 0; k < p.in.tensor_count; ++k) operands[count++] = p.in.tensors[k];
  launch(function_handle, p.grid, kElementwiseThreads, stream, p.parameters,
         std::span<const Tensor* const>(operands.data(), count), static_cast<int>(outputs.size()));
  return outputs;
}

// --- reduction ---

ReductionProgram::ReductionProgram(std::string map_code, std::string combine_code, std::string identity_code,
                                   const ScalarDefaults& defaults) {
  map.entry = parse_entry_function(map_code, 1, "create_jit_reduction (map)", names_of(defaults));
  map.code = std::move(map_code);
  combine.entry = parse_entry_function(combine_code, 1, "create_jit_reduction (combine)", {});
  if (combine.entry.inputs != 2) {
    throw InvalidArgumentError("create_jit_reduction", concat("combine (`", combine.entry.name, "`) must take two values, it takes ",
                                                              combine.entry.inputs));
  }
  combine.code = std::move(combine_code);
  if (identity_code.find_first_not_of(" \t\n") == std::string::npos) {
    throw InvalidArgumentError("create_jit_reduction", "identity is empty: give the value of an empty reduction, e.g. \"0\"");
  }
  identity = std::move(identity_code);
  scalars = read_scalar_parameters(map.entry, defaults);
}

KernelVariant ReductionProgram::complete(const KernelVariant& variant, DType* common) const {
  check_variant_inputs(variant, map.entry.inputs, "JitReduction");
  KernelVariant v = variant;
  *common = promote(v.inputs);
  if (v.outputs.empty()) v.outputs.assign(1, *common);
  if (v.outputs.size() != 1) throw InvalidArgumentError("JitReduction", "a reduction has one output");
  return v;
}

std::string ReductionProgram::source(const KernelVariant& variant) const {
  DType common{};
  const KernelVariant v = complete(variant, &common);
  return generate_reduction_source(map, combine, identity, scalars.dtypes, v, common);
}

CompiledKernelInfo ReductionProgram::compile(const KernelVariant& variant, int arch) const {
  return compile_source(source(variant), arch);
}

Tensor ReductionProgram::call(std::span<const JitArgument> inputs, const JitReductionOptions& options) {
  constexpr const char* api = "jiterator reduction";
  CallInputs in;
  read_inputs(inputs, map.entry.inputs, api, in);
  check_devices(in, api);
  std::array<Scalar, kMaxInputs> scalar_value{};
  scalar_values(scalars.names, scalars.defaults, options.scalars, api, scalar_value);
  if (in.tensor_count == 0) throw InvalidArgumentError(api, "every input is a host scalar: give at least one tensor");
  const Shape& shape = in.shape();
  const int ndim = static_cast<int>(shape.size());
  std::vector<bool> reduced(ndim, options.dims.empty());
  for (int d : options.dims) {
    const int dim = d < 0 ? d + ndim : d;
    if (dim < 0 || dim >= ndim) {
      throw InvalidArgumentError(api, concat("dimension ", d, " is out of range for the inputs' shape ", tensor::shape_string(shape)));
    }
    if (reduced[dim]) throw InvalidArgumentError(api, concat("dimension ", d, " is named twice in dims"));
    reduced[dim] = true;
  }
  // Kept dimensions first, reduced ones last; output o, element k is logical index o * length + k.
  std::vector<int> order;
  Shape out_shape, permuted_shape;
  std::int64_t outputs = 1, length = 1;
  for (int d = 0; d < ndim; ++d) {
    if (reduced[d]) continue;
    order.push_back(d);
    out_shape.push_back(shape[d]);
    outputs *= shape[d];
  }
  for (int d = 0; d < ndim; ++d) {
    if (!reduced[d]) {
      continue;
    }
    order.push_back(d);
    length *= shape[d];
  }
  if (options.keepdim) {
    // Rebuild in the original order: kept sizes where kept, 1 where reduced.
    out_shape.clear();
    for (int d = 0; d < ndim; ++d) out_shape.push_back(reduced[d] ? 1 : shape[d]);
  }
  for (int d : order) permuted_shape.push_back(shape[d]);
  const tensor::Device device = in.tensors[0]->device();
  const StreamRef stream = in.tensors[0]->stream_or_current(options.stream);
  Tensor result = tensor::empty(out_shape, {.dtype = in.common, .device = device}, stream);
  if (outputs == 0) return result;

  // Each tensor input broadcast to `shape` and permuted into `order`: a view, no copy.
  std::vector<Tensor> views;
  views.reserve(in.tensor_count);
  std::array<const Tensor*, kMaxInputs> operands{};
  bool contiguous = std::is_sorted(order.begin(), order.end());
  for (int k = 0; k < in.tensor_count; ++k) {
    const Tensor& t = *in.tensors[k];
    contiguous = contiguous && t.is_contiguous() && t.sizes() == shape;
    Shape strides(ndim, 0);
    for (int d = 0; d < ndim; ++d) {
      const int td = d - (ndim - t.dim());
      strides[d] = td < 0 || t.sizes()[td] == 1 ? 0 : t.strides()[td];
    }
    Shape permuted_strides;
    for (int d : order) permuted_strides.push_back(strides[d]);
    views.emplace_back(t.storage(), t.dtype(), permuted_shape, permuted_strides, t.storage_offset());
    operands[k] = &views.back();
  }
  const std::span<const Tensor* const> operand_span(operands.data(), in.tensor_count);

  KernelVariant v;
  input_types(inputs, v.inputs);
  v.outputs.push_back(in.common);
  std::vector<StridedIndexer> indexers;
  const std::int64_t numel = outputs * length;
  int width = 1;
  if (contiguous) {
    v.access = OperandAccess::contiguous;
    width = vector_width(v);
    bool vectorizable = length % width == 0;
    for (const Tensor* t : operand_span) vectorizable = vectorizable && aligned(t->data_ptr(), width * t->element_size());
    if (vectorizable) v.access = OperandAccess::vectorized;
    v.index64 = numel > 0x7fffffff;
  } else {
    indexers = tensor::detail::make_indexers(permuted_shape, operand_span);
    v.index64 = needs_index64(numel, indexers);
    v.dims = std::max(1, indexers[0].ndim);
  }
  const std::int64_t per_block = std::int64_t{kReduceThreads} * (v.access == OperandAccess::vectorized ? width * 4 : 4);
  const std::int64_t target_blocks = std::int64_t{multiprocessor_count(device.index)} * 8;
  std::int64_t splits = 1;
  if (outputs < target_blocks) {
    splits = std::max<std::int64_t>(1, std::min((target_blocks + outputs - 1) / outputs, (length + per_block - 1) / per_block));
  }

  const VariantKey key = make_variant_key(v, device.index);
  std::string source;
  const auto load = [&](const char* name) {
    const cudakit::detail::RelaxedCaptureMode relaxed;  // See Note [Compiling during a capture]
    if (source.empty()) source = generate_reduction_source(map, combine, identity, scalars.dtypes, v, in.common);
    return global_kernel_store().function(source, device_arch(device.index), device.index, name);
  };
  const CUfunction reduce = functions_.get(key, [&] { return load(kReduceKernel); });

  Tensor partials;
  if (splits > 1) {
    partials = tensor::empty({outputs * splits}, {.dtype = compute_dtype(in.common), .device = device}, stream);
  }
  LaunchParameters parameters;
  parameters.pointer(result.data_ptr());
  parameters.pointer(partials.defined() ? partials.data_ptr() : nullptr);
  parameters.inputs_and_scalars(inputs, compute_dtype(in.common), scalar_value, scalars.dtypes);
  parameters.index(length, v.index64);
  parameters.index(splits, v.index64);
  if (v.access == OperandAccess::strided) parameters.layout(indexers, v.index64);
  // Pass 1 writes the result, or the partials when there is a pass 2.
  std::array<const Tensor*, kMaxInputs + 1> traced{};
  traced[0] = splits > 1 ? &partials : &result;
  std::copy(operand_span.begin(), operand_span.end(), traced.begin() + 1);
  launch(reduce, outputs * splits, kReduceThreads, stream, parameters,
         std::span<const Tensor* const>(traced.data(), operand_span.size() + 1), 1);
  if (splits > 1) {
    const CUfunction combine_partials = partials_.get(key, [&] { return load(kReducePartialsKernel); });
    LaunchParameters second;
    second.pointer(result.data_ptr());
    second.pointer(partials.data_ptr());
    second.index(splits, v.index64);
    const Tensor* pass2[] = {&result, &partials};
    launch(combine_partials, outputs, kReduceThreads, stream, second, pass2, 1);
  }
  return result;
}

}  // namespace cudakit::jiterator::detail
