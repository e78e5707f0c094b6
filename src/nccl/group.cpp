#include "cudakit/nccl/group.hpp"

#include <set>

#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "nccl/detail/communicator_state.hpp"
#include "nccl/detail/nccl_call.hpp"

namespace cudakit::nccl {

Group::Group() {
  const auto& api = detail::loaded_nccl("nccl::Group");
  detail::check_nccl(api.ncclGroupStart(), "ncclGroupStart", -1, "group");
  ++detail::group_frame().depth;
}

Group::~Group() {
  if (ended_) return;
  try {
    end();
  } catch (const std::exception& e) {
    CUDAKIT_LOG(error, "nccl::Group ended by its destructor failed: ", e.what());
  }
}

void Group::end() {
  if (ended_) throw StateError("nccl::Group::end", "the group has already ended");
  ended_ = true;
  detail::GroupFrame& frame = detail::group_frame();
  --frame.depth;
  const ncclResult_t r = cudakit::detail::nccl_api().ncclGroupEnd();
  if (frame.depth > 0) {
    detail::check_nccl(r, "ncclGroupEnd", -1, "group");
    return;
  }
  // The outermost group launched everything: each communicator in it must take its part.
  std::vector<detail::GroupedOperation> operations;
  operations.swap(frame.operations);
  // Communicators NCCL refused an operation of inside the group fail now that no group is open
  // (their abort would have joined it).
  std::vector<detail::FailedOperation> failed;
  failed.swap(frame.failed);
  for (const auto& f : failed) f.state->fail(f.nccl_result, f.operation, f.text);
  if (r != ncclSuccess && r != ncclInProgress) {
    const int rank = operations.empty() ? -1 : operations.front().state->rank;
    for (const auto& op : operations) op.state->recorder.set_state(op.seq, FlightState::failed);
    detail::check_nccl(r, "ncclGroupEnd", rank, "group");
  }
  std::set<detail::CommunicatorState*> waited;
  for (const auto& op : operations)
    if (waited.insert(op.state.get()).second) op.state->wait_ready(detail::CommunicatorState::label(op.op, op.seq));
  for (const auto& op : operations) op.state->watch(op.seq, op.op, op.stream);
}

}  // namespace cudakit::nccl
