#pragma once
// What a Communicator holds, shared with its watchdog thread and its Registrations. See Note
// [Never a silent hang] in communicator.hpp.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/nccl/communicator_options.hpp"
#include "cudakit/nccl/flight_recorder.hpp"
#include "cudakit/nccl/registered_segment.hpp"
#include "cudakit/nccl/store/store.hpp"
#include "cudakit/nccl/validation.hpp"

namespace cudakit::nccl::detail {

class SegmentRegistrations;

using Clock = std::chrono::steady_clock;

// An operation enqueued and not yet seen complete.
struct PendingOperation {
  std::uint64_t seq;
  std::string op;
  cudaEvent_t event;
  Clock::time_point enqueued;
};

struct CommunicatorState {
  CommunicatorState(ncclComm_t comm, int rank, int world_size, int device, CommunicatorOptions options,
                    std::shared_ptr<Store> store);
  // Stops the watchdog, then destroys the communicator (unless aborted) and the events.
  ~CommunicatorState();

  // "all_reduce#12": how messages name an operation.
  [[nodiscard]] static std::string label(const std::string& op, std::uint64_t seq);

  // Throws the recorded error (NcclError), or one for an aborted communicator.
  void check(const char* api) const;
  // Polls ncclCommGetAsyncError until the communicator is no longer in progress, up to the
  // timeout (then aborts). @throws NcclError naming `what`.
  void wait_ready(const std::string& what);
  // Starts watching operation `seq`, just enqueued on `stream` (nothing when it is capturing).
  // `capture`: the stream's capture status where the caller has just asked it (issue does);
  // left out, it is asked here.
  void watch(std::uint64_t seq, const std::string& op, StreamRef stream,
             std::optional<cudaStreamCaptureStatus> capture = std::nullopt);
  // Records `text` as the communicator's error (the first one stays), logs it, and aborts.
  void fail(int nccl_result, const std::string& operation, const std::string& text);
  // Whether an error was recorded or the communicator aborted.
  [[nodiscard]] bool failed_or_aborted() const;
  // ncclCommAbort, once.
  void abort() noexcept;
  // Whether abort() has run (the NCCL communicator is gone).
  [[nodiscard]] bool aborted() const;

  // ncclCommRegister of `bytes` at `base` (logged, nullptr, where NCCL refuses or the
  // communicator is aborted), and its undoing; both under comm_mutex, in any thread (See Note
  // [Registering the allocator's segments] in segment_registrations.hpp).
  void* register_range(void* base, std::size_t bytes) noexcept;
  void deregister_range(void* handle) noexcept;
  // The allocator's segments registered now (none unless the options ask for it).
  [[nodiscard]] std::vector<RegisteredSegment> registered_segments() const;

  ncclComm_t comm;
  const int rank;
  const int world_size;
  const int device;
  const CommunicatorOptions options;
  const std::shared_ptr<Store> store;  // may be null (single-process communicators)
  const NcclTarget target;  // what validation checks operations against
  FlightRecorder recorder;
  std::atomic<std::uint64_t> seq{0};

  // Held around every call that uses `comm`, so that the watchdog's abort never frees it under
  // a call in progress.
  std::mutex comm_mutex;

 private:
  void watchdog_loop();
  // ncclCommDestroy, or ncclCommAbort for a communicator NCCL has failed (See Note [Destroying a
  // failed communicator] in communicator_state.cpp).
  void destroy_or_abort() noexcept;
  void poll_once();
  // Publishes this rank's records and gathers the others' (bounded); the analysis' text.
  std::string exchange_flight_records();
  void publish_flight_records();
  [[nodiscard]] std::string store_prefix() const;

  mutable std::mutex mutex_;  // guards what follows
  std::deque<PendingOperation> pending_;
  std::vector<cudaEvent_t> free_events_;
  std::optional<std::pair<int, std::string>> error_;  // ncclResult, message
  std::string error_operation_;
  bool aborted_ = false;
  bool published_ = false;
  bool stopping_ = false;
  std::condition_variable wake_;
  Clock::time_point last_dump_check_{};
  std::thread watchdog_;
  std::unique_ptr<SegmentRegistrations> registrations_;  // set when the options ask for it
};

// The group the calling thread is inside (Group), if any: operations in it are watched from
// its end, when they are launched.
struct GroupedOperation {
  std::shared_ptr<CommunicatorState> state;
  std::uint64_t seq;
  std::string op;
  StreamRef stream;
};
// An operation NCCL refused inside a group: its communicator fails when the group ends.
struct FailedOperation {
  std::shared_ptr<CommunicatorState> state;
  int nccl_result;
  std::string operation;
  std::string text;
};
struct GroupFrame {
  int depth = 0;
  std::vector<GroupedOperation> operations;
  std::vector<FailedOperation> failed;
};
GroupFrame& group_frame() noexcept;

// CommunicatorOptions::resolved's, exposed for the state's defaults.
std::chrono::milliseconds default_timeout();

}  // namespace cudakit::nccl::detail
