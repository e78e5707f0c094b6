#include "cudakit/core/capabilities.hpp"

#include <cctype>

#include "cudakit/build_config.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit {

bool is_bf16_supported(bool including_emulation, int device) {
  if (!is_available()) return false;
  const int major = get_device_capability(device).first;
  // Below 8.0 bfloat16 is emulated: storage and conversions in software, on every device.
  return detail::has_native_bf16(major) || including_emulation;
}

bool is_tf32_supported(int device) { return is_bf16_supported(/*including_emulation=*/false, device); }

std::vector<std::string> get_arch_list() {
  // The configured value cannot change after the build: parsed once.
  static const std::vector<std::string> list =
      detail::parse_cuda_architectures(CUDAKIT_BUILT_CUDA_ARCHITECTURES);
  return list;
}

std::string get_gencode_flags() {
  std::string flags;
  for (const std::string& arch : get_arch_list()) {
    const std::size_t underscore = arch.find('_');
    flags += detail::concat(flags.empty() ? "" : " ", "-gencode arch=compute_",
                            arch.substr(underscore + 1), ",code=", arch);
  }
  return flags;
}

namespace detail {

std::vector<std::string> parse_cuda_architectures(std::string_view architectures) {
  std::vector<std::string> out;
  const std::string_view all = architectures;
  auto refuse = [&](std::string_view entry) {
    throw InvalidArgumentError(
        "parse_cuda_architectures",
        concat("'", entry, "' in CUDA architectures '", all,
               "' is not an architecture: each entry reads like 90, 90a, 90-real or 90-virtual"));
  };
  while (!architectures.empty() || out.empty()) {
    const std::size_t semicolon = architectures.find(';');
    const std::string_view entry = architectures.substr(0, semicolon);
    architectures.remove_prefix(semicolon == std::string_view::npos ? architectures.size() : semicolon + 1);
    std::string_view number = entry;
    bool real = true, virtual_ = true;
    if (number.ends_with("-real")) {
      number.remove_suffix(5);
      virtual_ = false;
    } else if (number.ends_with("-virtual")) {
      number.remove_suffix(8);
      real = false;
    }
    // Digits, then at most one feature suffix ("90a", "100f").
    std::size_t digits = 0;
    while (digits < number.size() && std::isdigit(static_cast<unsigned char>(number[digits]))) ++digits;
    const bool suffix_ok = number.size() == digits ||
                           (number.size() == digits + 1 && (number.back() == 'a' || number.back() == 'f'));
    if (digits == 0 || !suffix_ok) refuse(entry);
    if (real) out.push_back(concat("sm_", number));
    if (virtual_) out.push_back(concat("compute_", number));
  }
  return out;
}

}  // namespace detail
}  // namespace cudakit
