#pragma once
// @brief What the device and this libcudakit can do (torch.cuda.is_bf16_supported,
// is_tf32_supported, get_arch_list, get_gencode_flags).

#include <string>
#include <string_view>
#include <vector>

namespace cudakit {

// Whether `device` (-1: current) computes in bfloat16: compute capability 8.0 or newer. With
// `including_emulation` (torch's default) also true on older devices, where bfloat16 values are
// stored and converted in software (torch's test there is that a bfloat16 tensor can be made,
// which holds on every CUDA device). False, never an error, when no device is available, as in
// torch.
// @param including_emulation true to count software-emulated bfloat16 as support.
// @param device the device ordinal; -1 means the current device.
// @return whether bfloat16 is supported (natively, or emulated if asked).
// @throws InvalidArgumentError for an ordinal that is not a visible device.
[[nodiscard]] bool is_bf16_supported(bool including_emulation = true, int device = -1);

// Whether `device` (-1: current) has TF32 tensor cores: where bfloat16 is native (torch's rule,
// is_bf16_supported(including_emulation=false)). False without a device.
// @param device the device ordinal; -1 means the current device.
// @return whether the device has TF32 tensor cores (compute capability 8.0 or newer).
// @throws InvalidArgumentError for an ordinal that is not a visible device.
[[nodiscard]] bool is_tf32_supported(int device = -1);

// The CUDA architectures this libcudakit's kernels were compiled for, as torch names them:
// "sm_90" for machine code, "compute_90" for PTX that newer GPUs compile when loading.
// Unlike torch, which answers [] when no device is present, this says what the library holds
// on any machine.
// @return the architectures, machine code ("sm_*") and PTX ("compute_*"), in build order.
[[nodiscard]] std::vector<std::string> get_arch_list();

// The nvcc flags those architectures come from: "-gencode arch=compute_90,code=sm_90 -gencode
// arch=compute_90,code=compute_90". (torch writes "compute=" where nvcc's flag reads "arch=";
// these can be passed to nvcc as they are.)
// @return the flags, separated by single spaces.
[[nodiscard]] std::string get_gencode_flags();

namespace detail {
// The arch list of a CMAKE_CUDA_ARCHITECTURES value: "90" -> sm_90 and compute_90, "90-real" ->
// sm_90, "90-virtual" -> compute_90, "90a" -> sm_90a and compute_90a; entries separated by ';'.
// @throws InvalidArgumentError naming the entry that is none of these.
[[nodiscard]] std::vector<std::string> parse_cuda_architectures(std::string_view architectures);
// torch's rule on a compute capability: native bfloat16 from 8.0.
[[nodiscard]] constexpr bool has_native_bf16(int major) noexcept { return major >= 8; }
}  // namespace detail

}  // namespace cudakit
