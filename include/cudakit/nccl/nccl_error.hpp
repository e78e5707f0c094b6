#pragma once
// @brief NcclError: the error family's member for collectives (See Note [Error hierarchy] in
// error.hpp).

#include <string>
#include <string_view>

#include "cudakit/core/error.hpp"

namespace cudakit {

// An NCCL call failed, or a collective was aborted (timeout, a peer's failure), or the store the
// ranks meet in failed. status() is the ncclResult_t (0 where cudakit itself gave up, e.g. a
// watchdog timeout); rank() is this process's rank in the communicator (-1 before it has one);
// operation() names the collective with its sequence number ("all_reduce#12") or the step
// ("init", "store get 'key'").
class NcclError : public detail::ErrorOf<std::runtime_error> {
 public:
  // The error, its message built at once as "api: detail".
  // @param nccl_result the ncclResult_t (0 where cudakit gave up itself)
  // @param api the failing call or cudakit API ("ncclCommInitRankConfig", "TcpStore")
  // @param rank this process's rank in the communicator, -1 where it has none
  // @param operation the operation or step, as operation() returns it
  // @param detail what went wrong, with the values involved
  // @param location where the error was raised (the caller's, by default)
  NcclError(int nccl_result, std::string api, int rank, std::string operation, std::string_view detail,
            std::source_location location = std::source_location::current());
  // @return this process's rank in the communicator, or -1 before it had one.
  [[nodiscard]] int rank() const noexcept { return rank_; }
  // @return the operation with its sequence number ("all_reduce#12"), or the step that failed
  //   ("init", "split", "store get 'key'").
  [[nodiscard]] const std::string& operation() const noexcept { return operation_; }

 private:
  int rank_;
  std::string operation_;
};

}  // namespace cudakit
