#include "jiterator/detail/code_generator.hpp"

#include <algorithm>

#include "jiterator/detail/text.hpp"

namespace cudakit::jiterator::detail {
namespace {


// Note [Generated kernels]
// A kernel's source is kept small, because NVRTC's time grows with it and the first call waits
// for NVRTC (notes/jiterator.md has the measurements): no #include at all — the float16 and
// bfloat16 conversions are a few lines of PTX instead of cuda_fp16.h, which also needs the
// toolkit's include folder at run time — and only the pieces a variant uses. The user's code
// follows `#line 1 "jit_code"`, so NVRTC's messages give the user's own line numbers, and the
// generated part follows `#line 1 "cudakit_generated"`.
//
// Every operand is loaded in its own dtype and converted to the computation type T (float for
// float16 and bfloat16), the entry is called as name<T>(...), and each result is converted to
// its output's dtype. Three ways to reach the operands (OperandAccess): strided — per-operand
// strides over up to 8 merged dimensions, with division by multiply-and-shift in 32-bit
// arithmetic (n < 2^31) and plain division in 64-bit; contiguous — element i at i; vectorized
// — one 16-byte access of the widest operand per thread (narrower operands read the same count
// of elements, fewer bytes), the n % width tail element by element.

const char* kHalfPreamble = R"(struct alignas(2) ck_half { unsigned short bits; };
__device__ __forceinline__ float ck_widen(ck_half v) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits)); return f; }
__device__ __forceinline__ ck_half ck_half_from(float f) {
  ck_half h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f)); return h; }
)";
const char* kBfloat16Preamble = R"(struct alignas(2) ck_bf16 { unsigned short bits; };
__device__ __forceinline__ float ck_widen(ck_bf16 v) {
  return __uint_as_float(static_cast<unsigned int>(v.bits) << 16); }
__device__ __forceinline__ ck_bf16 ck_bf16_from(float f) {
  ck_bf16 h;
#if __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
#else
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) { h.bits = 0x7fc0; return h; }
  u += 0x7fffu + ((u >> 16) & 1u);
  h.bits = static_cast<unsigned short>(u >> 16);
#endif
  return h; }
)";
const char* kCommonPreamble = R"(template <class T> __device__ __forceinline__ T ck_widen(T v) { return v; }
template <class To> struct ck_to {
  template <class From> static __device__ __forceinline__ To from(From v) { return static_cast<To>(v); } };
template <class T, int N> struct alignas(sizeof(T) * N) ck_vec { T v[N]; };
)";
const char* kHalfTo = R"(template <> struct ck_to<ck_half> {
  template <class From> static __device__ __forceinline__ ck_half from(From v) { return ck_half_from(static_cast<float>(v)); } };
)";
const char* kBfloat16To = R"(template <> struct ck_to<ck_bf16> {
  template <class From> static __device__ __forceinline__ ck_bf16 from(From v) { return ck_bf16_from(static_cast<float>(v)); } };
)";

bool uses(const KernelVariant& v, DType dtype) {
  return std::any_of(v.inputs.begin(), v.inputs.end(), [&](const InputType& t) { return !t.scalar && t.dtype == dtype; }) ||
         std::find(v.outputs.begin(), v.outputs.end(), dtype) != v.outputs.end();
}

int tensor_operands(const KernelVariant& v) {
  return static_cast<int>(v.outputs.size()) +
         static_cast<int>(std::count_if(v.inputs.begin(), v.inputs.end(), [](const InputType& t) { return !t.scalar; }));
}

// `layout_operands`: the rows of strides the ck_layout parameter carries (0: no layout).
void append_preamble(std::string& s, const KernelVariant& v, int layout_operands) {
  const bool strided = layout_operands > 0;
  const bool half = uses(v, DType::float16), bf16 = uses(v, DType::bfloat16);
  if (half) s += kHalfPreamble;
  if (bf16) s += kBfloat16Preamble;
  s += kCommonPreamble;
  if (half) s += kHalfTo;
  if (bf16) s += kBfloat16To;
  s += v.index64 ? "typedef long long ck_index;\n" : "typedef unsigned int ck_index;\n";
  if (strided) {
    // Operands' strides, innermost dimension first; mul/shift divide by sizes[d] in 32 bits.
    s += text("struct ck_layout { ck_index ndim; ck_index sizes[", kLayoutDims, "]; ck_index mul[",
                kLayoutDims, "]; ck_index shift[", kLayoutDims, "]; ck_index strides[",
                layout_operands, "][", kLayoutDims, "]; };\n");
    s += v.index64 ? "__device__ __forceinline__ ck_index ck_div(ck_index n, const ck_layout& L, int d) { return n / L.sizes[d]; }\n"
                   : "__device__ __forceinline__ ck_index ck_div(ck_index n, const ck_layout& L, int d) { return (__umulhi(n, L.mul[d]) + n) >> L.shift[d]; }\n";
  }
}

void append_user_code(std::string& s, const UserFunction& f, const char* file) {
  s += text("#line 1 \"", file, "\"\n", f.code, "\n");
}

// Offsets of the tensor operands (outputs first, then tensor inputs, as in the layout) for the
// logical index `index`, into variables off0, off1, ...: `dims` divisions, unrolled.
std::string offsets_code(int operands, int dims, const char* index, const char* indent) {
  std::string s = text(indent, "ck_index rem = ", index, ";\n");
  for (int k = 0; k < operands; ++k) s += text(indent, "ck_index off", k, " = 0;\n");
  s += text(indent, "#pragma unroll\n", indent, "for (int d = 0; d < ", dims - 1, "; ++d) {\n");
  s += text(indent, "  const ck_index q = ck_div(rem, L, d);\n", indent, "  const ck_index r = rem - q * L.sizes[d];\n");
  for (int k = 0; k < operands; ++k) s += text(indent, "  off", k, " += r * L.strides[", k, "][d];\n");
  s += text(indent, "  rem = q;\n", indent, "}\n");
  for (int k = 0; k < operands; ++k) s += text(indent, "off", k, " += rem * L.strides[", k, "][", dims - 1, "];\n");
  return s;
}

// The pieces shared by both kinds of kernel: parameter lists, operand numbering.
struct Operands {
  const KernelVariant& v;
  // tensor_slot[k]: the layout slot (and off<slot>) of input k, -1 for a host scalar.
  std::vector<int> tensor_slot;
  int tensors = 0;
  explicit Operands(const KernelVariant& variant, int first_slot) : v(variant) {
    int slot = first_slot;
    for (const InputType& t : v.inputs) tensor_slot.push_back(t.scalar ? -1 : slot++);
    tensors = slot;
  }
  // ", const float* __restrict__ in0, float in1, ..."
  std::string input_parameters(const char* compute) const {
    std::string s;
    for (std::size_t k = 0; k < v.inputs.size(); ++k) {
      if (v.inputs[k].scalar) s += text(", ", compute, " in", k);
      else s += text(", const ", device_type_name(v.inputs[k].dtype), "* __restrict__ in", k);
    }
    return s;
  }
};

std::string scalar_parameters(const std::vector<DType>& scalar_dtypes) {
  std::string s;
  for (std::size_t k = 0; k < scalar_dtypes.size(); ++k) s += text(", ", device_type_name(scalar_dtypes[k]), " s", k);
  return s;
}

// The value of input k at element `where` (an offset expression, or "" for vector element j).
std::string input_value(const Operands& ops, std::size_t k, const std::string& offset, const char* compute) {
  if (ops.v.inputs[k].scalar) return text("in", k);
  return text("ck_to<", compute, ">::from(ck_widen(in", k, "[", offset, "]))");
}

// name<T>(arguments in declaration order), with input k's value from value(k), output j to r<j>.
template <class Value>
std::string entry_call(const UserFunction& f, const char* compute, Value&& value) {
  std::string s = text(f.entry.name, "<", compute, ">(");
  bool first = true;
  for (const EntryParameter& p : f.entry.parameters) {
    s += first ? "" : ", ";
    first = false;
    switch (p.kind) {
      case EntryParameter::Kind::input: s += value(p.index); break;
      case EntryParameter::Kind::scalar: s += text("s", p.index); break;
      case EntryParameter::Kind::output: s += text("r", p.index); break;
    }
  }
  return s + ")";
}

}  // namespace

int strided_dims(const KernelVariant& v) noexcept {
  return v.dims <= 0 || v.dims > kLayoutDims ? kLayoutDims : v.dims;
}

DType compute_dtype(DType common) noexcept {
  return common == DType::float16 || common == DType::bfloat16 ? DType::float32 : common;
}

int vector_width(const KernelVariant& v) noexcept {
  std::size_t widest = 1;
  for (const InputType& t : v.inputs) if (!t.scalar) widest = std::max(widest, tensor::element_size(t.dtype));
  for (DType t : v.outputs) widest = std::max(widest, tensor::element_size(t));
  return static_cast<int>(16 / widest);
}

const char* device_type_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return "float";
    case DType::float16: return "ck_half";
    case DType::bfloat16: return "ck_bf16";
    case DType::float64: return "double";
    case DType::int32: return "int";
    case DType::int64: return "long long";
    case DType::uint8: return "unsigned char";
    case DType::bool_: return "bool";
    case DType::int8: return "signed char";
    case DType::int16: return "short";
    case DType::uint16: return "unsigned short";
    case DType::uint32: return "unsigned int";
    case DType::uint64: return "unsigned long long";
    default: break;  // no computing type: refused when the call's inputs are read
  }
  return "float";
}

std::string generate_elementwise_source(const UserFunction& f, const std::vector<DType>& scalar_dtypes,
                                        const KernelVariant& v, DType common) {
  const char* compute = device_type_name(compute_dtype(common));
  const int outputs = static_cast<int>(v.outputs.size());
  const Operands ops(v, outputs);
  const bool strided = v.access == OperandAccess::strided;
  std::string s = text("// cudakit jiterator: ", f.entry.name, ", ", to_string(v.access), ", ",
                         v.index64 ? "64" : "32", "-bit index", strided ? text(", ", strided_dims(v), " dims") : "", "\n");
  s.reserve(8192 + f.code.size());  // a kernel's source is a few kilobytes: grown once
  append_preamble(s, v, strided ? std::max(1, tensor_operands(v)) : 0);
  append_user_code(s, f, "jit_code");
  s += "#line 1 \"cudakit_generated\"\n";
  s += text("extern \"C\" __global__ void __launch_bounds__(", kElementwiseThreads, ") ", kElementwiseKernel, "(");
  for (int j = 0; j < outputs; ++j) s += text(j ? ", " : "", device_type_name(v.outputs[j]), "* __restrict__ out", j);
  s += ops.input_parameters(compute) + scalar_parameters(scalar_dtypes) + ", ck_index n";
  s += strided ? ", const ck_layout L) {\n" : ") {\n";

  // One element at logical index i, its operands at `offset(slot)`.
  const auto element = [&](auto&& offset, const char* indent) {
    std::string e;
    for (int j = 0; j < outputs; ++j) e += text(indent, compute, " r", j, ";\n");
    const std::string call = entry_call(f, compute, [&](int k) { return input_value(ops, k, offset(ops.tensor_slot[k]), compute); });
    if (f.entry.returns_void) e += text(indent, call, ";\n");
    else e += text(indent, "r0 = ", call, ";\n");
    for (int j = 0; j < outputs; ++j) e += text(indent, "out", j, "[", offset(j), "] = ck_to<", device_type_name(v.outputs[j]), ">::from(r", j, ");\n");
    return e;
  };
  if (v.access == OperandAccess::vectorized) {
    const int width = vector_width(v);
    s += text("  constexpr int V = ", width, ";\n");
    s += "  const ck_index g = static_cast<ck_index>(blockIdx.x) * blockDim.x + threadIdx.x;\n";
    s += "  const ck_index vectors = n / V;\n";
    s += "  if (g < vectors) {\n";
    for (std::size_t k = 0; k < v.inputs.size(); ++k) {
      if (v.inputs[k].scalar) continue;
      const char* t = device_type_name(v.inputs[k].dtype);
      s += text("    const ck_vec<", t, ", V> vin", k, " = reinterpret_cast<const ck_vec<", t, ", V>*>(in", k, ")[g];\n");
    }
    for (int j = 0; j < outputs; ++j) s += text("    ck_vec<", device_type_name(v.outputs[j]), ", V> vout", j, ";\n");
    s += "    #pragma unroll\n    for (int e = 0; e < V; ++e) {\n";
    std::string body;
    for (int j = 0; j < outputs; ++j) body += text("      ", compute, " r", j, ";\n");
    const std::string call = entry_call(f, compute, [&](int k) {
      return v.inputs[k].scalar ? text("in", k) : text("ck_to<", compute, ">::from(ck_widen(vin", k, ".v[e]))");
    });
    body += f.entry.returns_void ? text("      ", call, ";\n") : text("      r0 = ", call, ";\n");
    for (int j = 0; j < outputs; ++j) body += text("      vout", j, ".v[e] = ck_to<", device_type_name(v.outputs[j]), ">::from(r", j, ");\n");
    s += body + "    }\n";
    for (int j = 0; j < outputs; ++j) s += text("    reinterpret_cast<ck_vec<", device_type_name(v.outputs[j]), ", V>*>(out", j, ")[g] = vout", j, ";\n");
    s += "    return;\n  }\n";
    s += "  const ck_index i = vectors * V + (g - vectors);\n  if (i >= n) return;\n";
    s += element([](int) { return std::string("i"); }, "  ");
  } else {
    s += text("  const ck_index base = static_cast<ck_index>(blockIdx.x) * (", kElementwiseThreads * kElementwiseItems, ") + threadIdx.x;\n");
    s += text("  #pragma unroll\n  for (int u = 0; u < ", kElementwiseItems, "; ++u) {\n");
    s += text("    const ck_index i = base + u * ", kElementwiseThreads, ";\n    if (i >= n) return;\n");
    if (strided) {
      s += offsets_code(ops.tensors, strided_dims(v), "i", "    ");
      s += element([](int slot) { return text("off", slot); }, "    ");
    } else {
      s += element([](int) { return std::string("i"); }, "    ");
    }
    s += "  }\n";
  }
  s += "}\n";
  return s;
}

std::string generate_reduction_source(const UserFunction& map, const UserFunction& combine,
                                      const std::string& identity, const std::vector<DType>& scalar_dtypes,
                                      const KernelVariant& v, DType common) {
  const char* acc = device_type_name(compute_dtype(common));
  const char* out = device_type_name(v.outputs.front());
  const Operands ops(v, 0);  // the result is written at o, not through the layout
  const bool strided = v.access == OperandAccess::strided;
  std::string s = text("// cudakit jiterator reduction: ", map.entry.name, " / ", combine.entry.name, ", ",
                         to_string(v.access), ", ", v.index64 ? "64" : "32", "-bit index",
                         strided ? text(", ", strided_dims(v), " dims") : "", "\n");
  append_preamble(s, v, strided ? std::max(1, ops.tensors) : 0);
  append_user_code(s, map, "map_code");
  append_user_code(s, combine, "combine_code");
  s += text("#line 1 \"identity\"\n__device__ __forceinline__ ", acc, " ck_identity() { return static_cast<", acc,
              ">(", identity, "); }\n");
  s += "#line 1 \"cudakit_generated\"\n";
  const std::string combine_call = text(combine.entry.name, "<", acc, ">");
  // The block's values combined in shared memory (blockDim.x a power of two); valid in thread 0.
  s += text("__device__ __forceinline__ ", acc, " ck_block_combine(", acc, " value) {\n  __shared__ ", acc,
              " shared[", kReduceThreads, "];\n  shared[threadIdx.x] = value;\n  __syncthreads();\n",
              "  for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {\n    if (threadIdx.x < w) shared[threadIdx.x] = ",
              combine_call, "(shared[threadIdx.x], shared[threadIdx.x + w]);\n    __syncthreads();\n  }\n",
              "  return shared[0];\n}\n");
  // Pass 1 (or the only pass when splits == 1): block b reduces part b % splits of output b / splits.
  s += text("extern \"C\" __global__ void __launch_bounds__(", kReduceThreads, ") ", kReduceKernel, "(", out,
              "* __restrict__ out, ", acc, "* __restrict__ partials");
  s += ops.input_parameters(acc) + scalar_parameters(scalar_dtypes) + ", ck_index length, ck_index splits";
  s += strided ? ", const ck_layout L) {\n" : ") {\n";
  s += "  const ck_index o = blockIdx.x / splits;\n  const ck_index part = blockIdx.x - o * splits;\n";
  s += text("  ", acc, " acc = ck_identity();\n");
  const auto map_call = [&](auto&& value) { return entry_call(map, acc, value); };
  if (v.access == OperandAccess::vectorized) {
    const int width = vector_width(v);
    s += text("  constexpr int V = ", width, ";\n  const ck_index vectors = length / V;\n  const ck_index first = o * vectors;\n");
    s += "  const ck_index step = splits * blockDim.x;\n  ck_index k = part * blockDim.x + threadIdx.x;\n";
    // Four vectors per input in flight per thread, then the rest one at a time.
    const auto vector_loop = [&](int unroll, const char* condition, const char* advance) {
      std::string l = text("  for (; ", condition, "; k += ", advance, ") {\n");
      for (int u = 0; u < unroll; ++u) {
        for (std::size_t i = 0; i < v.inputs.size(); ++i) {
          if (v.inputs[i].scalar) continue;
          const char* t = device_type_name(v.inputs[i].dtype);
          l += text("    const ck_vec<", t, ", V> vin", i, "_", u, " = reinterpret_cast<const ck_vec<", t, ", V>*>(in", i,
                      ")[first + k + ", u, " * step];\n");
        }
      }
      for (int u = 0; u < unroll; ++u) {
        l += "    #pragma unroll\n    for (int e = 0; e < V; ++e) acc = " + combine_call + "(acc, " +
             map_call([&](int i) {
               return v.inputs[i].scalar ? text("in", i) : text("ck_to<", acc, ">::from(ck_widen(vin", i, "_", u, ".v[e]))");
             }) + ");\n";
      }
      return l + "  }\n";
    };
    s += vector_loop(4, "k + 3 * step < vectors", "4 * step");
    s += vector_loop(1, "k < vectors", "step");
  } else {
    s += "  for (ck_index k = part * blockDim.x + threadIdx.x; k < length; k += splits * blockDim.x) {\n";
    s += "    const ck_index i = o * length + k;\n";
    if (strided) s += offsets_code(ops.tensors, strided_dims(v), "i", "    ");
    s += "    acc = " + combine_call + "(acc, " + map_call([&](int i) {
           return input_value(ops, i, strided ? text("off", ops.tensor_slot[i]) : std::string("i"), acc);
         }) + ");\n  }\n";
  }
  s += "  acc = ck_block_combine(acc);\n  if (threadIdx.x != 0) return;\n";
  s += text("  if (splits == 1) out[o] = ck_to<", out, ">::from(acc);\n  else partials[blockIdx.x] = acc;\n}\n");
  // Pass 2: block o combines the splits partials of output o.
  s += text("extern \"C\" __global__ void __launch_bounds__(", kReduceThreads, ") ", kReducePartialsKernel, "(", out,
              "* __restrict__ out, const ", acc, "* __restrict__ partials, ck_index splits) {\n");
  s += text("  ", acc, " acc = ck_identity();\n");
  s += "  for (ck_index k = threadIdx.x; k < splits; k += blockDim.x) acc = " + combine_call +
       "(acc, partials[static_cast<ck_index>(blockIdx.x) * splits + k]);\n";
  s += text("  acc = ck_block_combine(acc);\n  if (threadIdx.x == 0) out[blockIdx.x] = ck_to<", out, ">::from(acc);\n}\n");
  return s;
}

}  // namespace cudakit::jiterator::detail
