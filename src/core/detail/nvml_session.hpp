#pragma once
// NVML initialized once for the process. See Note [One NVML session].

#include <string>

#include "cudakit/core/detail/nvml_api.hpp"

namespace cudakit::detail {

// Note [One NVML session]
// NVML answers only between nvmlInit_v2 and nvmlShutdown. cudakit initializes it on first use
// and never shuts it down: NVML counts its initializations, so this leaves any other user's
// alone, and a shutdown from a static destructor could run while another thread still asks.
// The driver releases NVML's state when the process ends. The first call initializes (a
// function-local static: concurrent first callers wait for it); afterwards the session is
// immutable and NVML's own calls are thread-safe.
struct NvmlSession {
  const NvmlApi* api = nullptr;  // null when NVML cannot be used
  int status = 0;                // nvmlInit_v2's result, or NVML_ERROR_LIBRARY_NOT_FOUND
  std::string reason;            // why NVML cannot be used; empty when it can
};

// Never throws.
const NvmlSession& nvml_session() noexcept;

// The table, with NVML initialized. @throws NvmlUnavailableError naming `api` and the reason.
const NvmlApi& require_nvml(const char* api);

// @throws NvmlError naming `call` and NVML's words for `result` unless it is NVML_SUCCESS;
// `detail` says for what ("device 0").
void check_nvml(nvmlReturn_t result, const char* call, const std::string& detail);

}  // namespace cudakit::detail
