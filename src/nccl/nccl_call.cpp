#include "nccl/detail/nccl_call.hpp"

#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"

namespace cudakit::nccl::detail {

using cudakit::detail::concat;

const cudakit::detail::NcclApi& loaded_nccl(const char* api) {
  const auto& table = cudakit::detail::nccl_api();
  if (!table.status.loaded) throw StateError(api, concat("NCCL is not available: ", table.status.reason));
  return table;
}

std::string nccl_error_text(ncclResult_t result, ncclComm_t comm) {
  const auto& table = cudakit::detail::nccl_api();
  std::string text = table.ncclGetErrorString != nullptr ? table.ncclGetErrorString(result) : "NCCL error";
  if (table.ncclGetLastError != nullptr) {
    const char* last = table.ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') text = concat(text, " (", last, ")");
  }
  return text;
}

void throw_nccl_error(ncclResult_t result, const char* api, int rank, std::string_view operation) {
  throw NcclError(static_cast<int>(result), api, rank, std::string(operation), nccl_error_text(result, nullptr));
}

GroupGuard::GroupGuard(const char* what) {
  check_nccl(loaded_nccl(what).ncclGroupStart(), "ncclGroupStart", -1, what);
  open_ = true;
}

GroupGuard::~GroupGuard() { (void)end(); }

ncclResult_t GroupGuard::end() noexcept {
  if (!std::exchange(open_, false)) return ncclSuccess;
  return cudakit::detail::nccl_api().ncclGroupEnd();
}

}  // namespace cudakit::nccl::detail
