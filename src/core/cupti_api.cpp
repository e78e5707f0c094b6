#include "cudakit/core/detail/cupti_api.hpp"

#include "cudakit/core/detail/concat.hpp"

namespace cudakit::detail {

const CuptiApi& cupti_api() noexcept {
  // The toolkit keeps libcupti beside its other libraries or under extras/CUPTI, which the
  // loader does not search unless the system is configured to.
  static constexpr const char* kNames[] = {
      "libcupti.so.13",
      "libcupti.so",
      "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
      "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
      "/usr/local/cuda/lib64/libcupti.so.13",
      "/usr/local/cuda/lib64/libcupti.so",
  };
  static const CuptiApi api = load_library_table<CuptiApi>("CUPTI", kNames, [](const CuptiApi& t) {
    std::uint32_t version = 0;
    return t.cuptiGetVersion(&version) == CUPTI_SUCCESS ? concat("API ", version) : std::string();
  });
  return api;
}

}  // namespace cudakit::detail
