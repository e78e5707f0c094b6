#include "cudakit/core/detail/cufile_api.hpp"

#include "cudakit/core/runtime_info.hpp"

namespace cudakit::detail {

const CuFileApi& cufile_api() noexcept {
  static constexpr const char* kNames[] = {"libcufile.so.0", "libcufile.so"};
  static const CuFileApi api = load_library_table<CuFileApi>("cuFile", kNames, [](const CuFileApi& t) {
    int version = 0;
    if (t.cuFileGetVersion == nullptr || t.cuFileGetVersion(&version).err != CU_FILE_SUCCESS) return std::string();
    return format_cuda_version(version);  // the same encoding: 1000 major + 10 minor
  });
  return api;
}

}  // namespace cudakit::detail
