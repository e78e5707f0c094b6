#include "core/detail/nvml_session.hpp"

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/nvml_error.hpp"

namespace cudakit {

NvmlError::NvmlError(int nvml_return, std::string api, std::string_view detail,
                     std::source_location location)
    : ErrorOf(nvml_return, std::move(api), detail, location) {}

NvmlUnavailableError::NvmlUnavailableError(int nvml_return, std::string api, std::string_view why,
                                           std::source_location location)
    : NvmlError(nvml_return, std::move(api), detail::concat("NVML is not available: ", why), location),
      reason_(why) {}

namespace detail {

const NvmlSession& nvml_session() noexcept {
  static const NvmlSession session = []() noexcept {
    NvmlSession s;
    try {
      const NvmlApi& api = nvml_api();
      if (!api.status.loaded) {
        s.status = NVML_ERROR_LIBRARY_NOT_FOUND;
        s.reason = api.status.reason;
        return s;
      }
      const nvmlReturn_t result = api.nvmlInit_v2();
      if (result != NVML_SUCCESS) {
        s.status = result;
        s.reason = concat(api.status.file, " loads, but nvmlInit_v2 failed: ",
                          api.nvmlErrorString(result), " (NVML error ", static_cast<int>(result),
                          ")");
        return s;
      }
      s.api = &api;
    } catch (...) {
      s.api = nullptr;
      s.status = NVML_ERROR_UNKNOWN;
      s.reason = "out of memory";
    }
    return s;
  }();
  return session;
}

const NvmlApi& require_nvml(const char* api) {
  const NvmlSession& session = nvml_session();
  if (session.api == nullptr) throw NvmlUnavailableError(session.status, api, session.reason);
  return *session.api;
}

void check_nvml(nvmlReturn_t result, const char* call, const std::string& detail) {
  if (result == NVML_SUCCESS) [[likely]]
    return;
  throw NvmlError(result, call,
                  concat(nvml_api().nvmlErrorString(result), " (NVML error ",
                         static_cast<int>(result), ")", detail.empty() ? "" : " for ", detail));
}

}  // namespace detail
}  // namespace cudakit
