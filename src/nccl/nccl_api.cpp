#include "cudakit/nccl/detail/nccl_api.hpp"

#include "cudakit/core/detail/component_registry.hpp"
#include "cudakit/core/detail/concat.hpp"

namespace cudakit::detail {

std::string nccl_version_string(int code) {
  if (code <= 0) return {};
  const int major_unit = code >= 10000 ? 10000 : 1000;
  return concat(code / major_unit, ".", (code % major_unit) / 100, ".", code % 100);
}

const NcclApi& nccl_api() noexcept {
  static constexpr const char* kNames[] = {"libnccl.so.2", "libnccl.so"};
  static const NcclApi api = load_library_table<NcclApi>("NCCL", kNames, [](const NcclApi& t) {
    int code = 0;
    return t.ncclGetVersion(&code) == ncclSuccess ? nccl_version_string(code) : std::string();
  });
  return api;
}

namespace {
// NCCL's row in `cudakit info`: See Note [Components registered by their layer].
const ComponentRegistration nccl_row(component_rank::nccl, [] { return library_row(nccl_api().status); });
}  // namespace

}  // namespace cudakit::detail
