#include "cudakit/jiterator/detail/nvrtc_api.hpp"

#include "cudakit/core/detail/component_registry.hpp"
#include "cudakit/core/detail/concat.hpp"

namespace cudakit::detail {

const NvrtcApi& nvrtc_api() noexcept {
  static constexpr const char* kNames[] = {"libnvrtc.so.13", "libnvrtc.so"};
  static const NvrtcApi api = load_library_table<NvrtcApi>("NVRTC", kNames, [](const NvrtcApi& t) {
    int major = 0, minor = 0;
    return t.nvrtcVersion(&major, &minor) == NVRTC_SUCCESS ? concat(major, ".", minor) : std::string();
  });
  return api;
}

namespace {
// NVRTC's row in `cudakit info`: See Note [Components registered by their layer].
const ComponentRegistration nvrtc_row(component_rank::nvrtc, [] { return library_row(nvrtc_api().status); });
}  // namespace

}  // namespace cudakit::detail
