#include "cudakit/core/detail/nvml_api.hpp"

namespace cudakit::detail {

const NvmlApi& nvml_api() noexcept {
  static constexpr const char* kNames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  static const NvmlApi api = load_library_table<NvmlApi>("NVML", kNames, [](const NvmlApi& t) {
    // NVML answers only between an init and a shutdown; both are counted, so this pair leaves
    // any other user's initialization as it was.
    if (t.nvmlInit_v2() != NVML_SUCCESS) return std::string();
    char version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
    const bool read = t.nvmlSystemGetNVMLVersion(version, sizeof version) == NVML_SUCCESS;
    t.nvmlShutdown();
    return read ? std::string(version) : std::string();
  });
  return api;
}

}  // namespace cudakit::detail
