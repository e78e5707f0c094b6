#pragma once
// The CUDA source of a jiterator kernel: a small preamble, the user's code, and the kernel that
// calls the entry for each element. See Note [Generated kernels].

#include <string>
#include <vector>

#include "cudakit/jiterator/kernel_variant.hpp"
#include "jiterator/detail/entry_function.hpp"

namespace cudakit::jiterator::detail {

// Names in the generated code's module.
inline constexpr const char* kElementwiseKernel = "cudakit_jit_elementwise";
inline constexpr const char* kReduceKernel = "cudakit_jit_reduce";
inline constexpr const char* kReducePartialsKernel = "cudakit_jit_reduce_partials";
// Threads per block and elements per thread of the elementwise kernel's scalar paths.
inline constexpr int kElementwiseThreads = 128;
inline constexpr int kElementwiseItems = 4;
inline constexpr int kReduceThreads = 256;
// Dimensions of the strided layout parameter (tensor's kMaxDims).
inline constexpr int kLayoutDims = 8;

// One program's code, read: the user's text and its entry.
struct UserFunction {
  std::string code;
  EntryFunction entry;
};

// The computation type of `common`: float for float16 and bfloat16, `common` otherwise.
[[nodiscard]] DType compute_dtype(DType common) noexcept;
// Elements per 16-byte access of the widest operand of `variant` (tensors and outputs).
[[nodiscard]] int vector_width(const KernelVariant& variant) noexcept;
// The dimensions a strided variant's code splits the index into (variant.dims, 0 meaning 8).
[[nodiscard]] int strided_dims(const KernelVariant& variant) noexcept;
// The C++ spelling of a dtype in generated code ("float", "ck_half", "long long", ...).
[[nodiscard]] const char* device_type_name(DType dtype) noexcept;

// `variant.outputs` must be filled (one per output); `scalar_dtypes[s]` is the dtype of scalar
// parameter s; `common` the inputs' promoted dtype.
[[nodiscard]] std::string generate_elementwise_source(const UserFunction& function,
                                                      const std::vector<DType>& scalar_dtypes,
                                                      const KernelVariant& variant, DType common);
// variant.outputs holds the one result dtype; the accumulator is compute_dtype(common).
[[nodiscard]] std::string generate_reduction_source(const UserFunction& map,
                                                    const UserFunction& combine,
                                                    const std::string& identity,
                                                    const std::vector<DType>& scalar_dtypes,
                                                    const KernelVariant& variant, DType common);

}  // namespace cudakit::jiterator::detail
