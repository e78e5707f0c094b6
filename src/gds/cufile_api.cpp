#include "cudakit/gds/detail/cufile_api.hpp"

#include <string>
#include <vector>

#include "cudakit/core/detail/component_registry.hpp"
#include "cudakit/core/device.hpp"
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

namespace {

// cuFile's row in `cudakit info`, and whether GPUDirect Storage works here: See Note [Components
// registered by their layer].
const ComponentRegistration cufile_row(component_rank::cufile,
                                       [] { return library_row(cufile_api().status); });

void gpudirect_storage_rows(std::vector<FeatureSupport>& out) {
  const LibraryStatus& cufile = cufile_api().status;
  const std::string nvfs = nvidia_fs_version();
  const bool have_gpu = is_available();
  out.push_back({"GPUDirect Storage (cuFile)", cufile.loaded && have_gpu,
                 !cufile.loaded ? cufile.reason
                 : have_gpu     ? (nvfs.empty() ? "libcufile loads; nvidia-fs absent: cuFile can "
                                                  "only run in compatibility mode"
                                                : "libcufile loads; nvidia-fs " + nvfs)
                                : "no CUDA device"});
  out.push_back({"nvidia-fs (GPUDirect Storage DMA)", !nvfs.empty(),
                 nvfs.empty() ? "module not loaded (no /proc/driver/nvidia-fs/version): cudakit's "
                                "O_DIRECT engine serves GdsFile"
                              : "version " + nvfs});
}
const FeatureRegistration gpudirect_storage(feature_rank::gpudirect_storage, gpudirect_storage_rows);

}  // namespace

}  // namespace cudakit::detail
