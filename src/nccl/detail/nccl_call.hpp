#pragma once
// Checking NCCL calls: an ncclResult_t other than success (or in-progress, where allowed)
// becomes an NcclError with the API, the rank, the operation and NCCL's own last error text.

#include <nccl.h>

#include <string>
#include <string_view>

#include "cudakit/nccl/detail/nccl_api.hpp"

namespace cudakit::nccl::detail {

// The NCCL table, loaded. @throws StateError naming `api` and why NCCL is not available.
const cudakit::detail::NcclApi& loaded_nccl(const char* api);

// Throws NcclError for a failed `result` (ncclInProgress counts as success). The operation's
// name becomes a string on the failure path only: this check runs at every group start.
[[noreturn, gnu::cold]] void throw_nccl_error(ncclResult_t result, const char* api, int rank,
                                             std::string_view operation);
inline void check_nccl(ncclResult_t result, const char* api, int rank, std::string_view operation) {
  if (result != ncclSuccess && result != ncclInProgress) [[unlikely]]
    throw_nccl_error(result, api, rank, operation);
}

// Note [Groups end on every path]
// ncclGroupStart opens a group in NCCL's thread-local state; an error thrown between it and
// ncclGroupEnd leaves it open, and every later NCCL call on that thread then joins it: inits
// never complete and NCCL ends up refusing them ("Blocking and nonblocking communicators are
// not allowed in the same group"). Every group cudakit opens is therefore a GroupGuard, whose
// destructor ends it when a throw unwinds past it; Group (the program's scope) ends in its
// destructor likewise.
class GroupGuard {
 public:
  // ncclGroupStart. @throws NcclError naming `what` when NCCL refuses it (nothing is open then).
  explicit GroupGuard(const char* what);
  // Ends the group if end() was not called (its result ignored: this runs on error paths).
  ~GroupGuard();
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;
  // ncclGroupEnd, once; its result for the caller to check.
  ncclResult_t end() noexcept;

 private:
  bool open_ = false;
};

// The text NCCL gives for `result`, with ncclGetLastError's detail where there is one.
std::string nccl_error_text(ncclResult_t result, ncclComm_t comm);

}  // namespace cudakit::nccl::detail
