#include "gds/detail/cufile_driver.hpp"

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/gds/detail/cufile_api.hpp"
#include "cudakit/core/device.hpp"

namespace cudakit::gds::detail {

const CuFileDriverState& cufile_driver() noexcept {
  static const CuFileDriverState state = []() noexcept {
    CuFileDriverState result;
    try {
      const auto& api = cudakit::detail::cufile_api();
      if (!api.status.loaded) {
        result.reason = api.status.reason;
      } else if (!is_available()) {
        result.reason = "no CUDA device";
      } else if (const auto status = api.cuFileDriverOpen(); status.err != cudakit::detail::CU_FILE_SUCCESS) {
        result.reason = cudakit::detail::concat("cuFileDriverOpen failed: cuFile status ", status.err,
                                                " (CUresult ", static_cast<int>(status.cu_err), ")");
      } else {
        result.open = true;
      }
    } catch (...) {
      result.reason = "out of memory";
    }
    return result;
  }();
  return state;
}

}  // namespace cudakit::gds::detail
