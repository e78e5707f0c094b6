#pragma once
// @brief Communicator: one rank of an NCCL communicator, with its collectives (torch.distributed's
// ProcessGroupNCCL, and torch.cuda.nccl's per-device calls), its watchdog and flight recorder.
//
// Note [Never a silent hang]
// NCCL blocks where a peer never comes: in initialization until every rank joins, in a
// collective's kernel until every rank launches its half. cudakit therefore
//  - initializes non-blocking (ncclConfig_t.blocking = 0) and polls ncclCommGetAsyncError up
//    to the timeout, then aborts (ncclCommAbort) and throws NcclError naming the rank;
//  - records an event after each operation it enqueues and has a watchdog thread per
//    communicator poll those events and NCCL's asynchronous error. An operation not complete
//    `timeout` after its enqueue, or an asynchronous error, makes the watchdog record the error,
//    log it at once (a program that never calls again still hears of it), publish this rank's
//    flight records through the store and gather the others' (See Note [Flight records]), and
//    abort the communicator, which releases the kernels that wait. The next call on the
//    communicator (or check()) throws that NcclError: rank, operation, sequence number, and the
//    report of what every rank was doing.
// Operations enqueued while their stream is being captured are not watched (their events would
// be graph nodes, not completions); replays of the graph are the program's to synchronize.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/nccl/buffer.hpp"
#include "cudakit/nccl/communicator_options.hpp"
#include "cudakit/nccl/flight_recorder.hpp"
#include "cudakit/nccl/reduce_op.hpp"
#include "cudakit/nccl/registered_segment.hpp"
#include "cudakit/nccl/store/rendezvous.hpp"
#include "cudakit/nccl/store/store.hpp"
#include "cudakit/nccl/unique_id.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::nccl {

namespace detail {
struct CommunicatorState;
}

class Communicator {
 public:
  // Rank `rank` of `world_size` on `device` (-1: the current device), meeting the others through
  // `id` (ncclCommInitRankConfig, non-blocking). `store`, when given, carries the flight records
  // on a timeout. @throws InvalidArgumentError for a rank out of range, NcclError when NCCL fails
  // or the others do not join within the timeout.
  static Communicator init_rank(int world_size, int rank, const UniqueId& id, int device = -1,
                                const CommunicatorOptions& options = {},
                                std::shared_ptr<Store> store = nullptr);
  // A rank of a multi-process communicator met through `rendezvous` (resolved from the
  // environment): rank 0 makes the id and publishes it in the store, the others read it; the
  // device is the local rank. @throws as init_rank, and NcclError when the store is unreachable.
  static Communicator from_rendezvous(const RendezvousOptions& rendezvous = {},
                                      const CommunicatorOptions& options = {});
  // One communicator per device of `devices`, rank i on devices[i], in this process (torch.cuda.
  // nccl's communicators). Made once per list and cached for the process.
  // @throws InvalidArgumentError for an empty list or a device listed twice.
  static std::vector<Communicator> for_devices(std::span<const int> devices,
                                               const CommunicatorOptions& options = {});

  // A new communicator of the ranks that pass the same `color` (ordered by `key`), or nullopt
  // for this rank when `color` is negative (ncclCommSplit). Every rank must call it.
  [[nodiscard]] std::optional<Communicator> split(int color, int key, const CommunicatorOptions& options = {}) const;

  // This rank's number, 0 to world_size() - 1.
  [[nodiscard]] int rank() const;
  // The number of ranks.
  [[nodiscard]] int world_size() const;
  // The CUDA device this rank's operations run on.
  [[nodiscard]] int device() const;
  // The next operation's sequence number minus one: how many this rank has issued.
  [[nodiscard]] std::uint64_t operations_issued() const;
  // The last operations this rank issued, with their state (See Note [Flight records]).
  [[nodiscard]] const FlightRecorder& flight_recorder() const;

  // Operations. Each is validated before anything is launched (InvalidArgumentError with the
  // values), reported to the trace hooks (TraceEventKind::collective with its buffers), and
  // enqueued on `stream` (default: the communicator's device's current stream); tensors used
  // on a stream other than their allocation stream are record_stream'ed on it. Outputs may be
  // the inputs (in place). @throws NcclError when the communicator has failed or NCCL refuses.
  // Stream ordering: an operation runs after the work queued before it on `stream`, and the
  // work queued after it waits for it; the host does not wait (the watchdog does, on an event).
  // Its kernels wait on the GPU for the other ranks' halves, so every rank must issue the same
  // operations in the same order. Inside a Group the operations are launched together at the
  // group's end.
  void all_reduce(const tensor::Tensor& input, const tensor::Tensor& output, ReduceOp op = ReduceOp::sum,
                  OptionalStream stream = {});
  void all_reduce(const tensor::Tensor& inout, ReduceOp op = ReduceOp::sum, OptionalStream stream = {}) {
    all_reduce(inout, inout, op, stream);
  }
  // `output` matters on `root` only (other ranks may pass `input` again).
  void reduce(const tensor::Tensor& input, const tensor::Tensor& output, int root, ReduceOp op = ReduceOp::sum,
              OptionalStream stream = {});
  void broadcast(const tensor::Tensor& input, const tensor::Tensor& output, int root, OptionalStream stream = {});
  void broadcast(const tensor::Tensor& inout, int root, OptionalStream stream = {}) { broadcast(inout, inout, root, stream); }
  // output: world_size x input's elements, rank r's at r x input.numel().
  void all_gather(const tensor::Tensor& input, const tensor::Tensor& output, OptionalStream stream = {});
  // input: world_size x output's elements; rank r gets the reduction of block r.
  void reduce_scatter(const tensor::Tensor& input, const tensor::Tensor& output, ReduceOp op = ReduceOp::sum,
                      OptionalStream stream = {});
  // input and output: world_size equal blocks; block j of rank i's input goes to block i of rank
  // j's output (grouped send/recv).
  void all_to_all(const tensor::Tensor& input, const tensor::Tensor& output, OptionalStream stream = {});
  void send(const tensor::Tensor& input, int peer, OptionalStream stream = {});
  void recv(const tensor::Tensor& output, int peer, OptionalStream stream = {});

  // The same on raw buffers (bool has no DataType: see Note [Bool reductions]).
  void all_reduce(const Buffer& input, const Buffer& output, ReduceOp op, OptionalStream stream = {});
  void reduce(const Buffer& input, const Buffer& output, int root, ReduceOp op, OptionalStream stream = {});
  void broadcast(const Buffer& input, const Buffer& output, int root, OptionalStream stream = {});
  void all_gather(const Buffer& input, const Buffer& output, OptionalStream stream = {});
  void reduce_scatter(const Buffer& input, const Buffer& output, ReduceOp op, OptionalStream stream = {});
  void all_to_all(const Buffer& input, const Buffer& output, OptionalStream stream = {});
  void send(const Buffer& input, int peer, OptionalStream stream = {});
  void recv(const Buffer& output, int peer, OptionalStream stream = {});

  // Throws the error the watchdog recorded, if any (a timeout, NCCL's asynchronous error).
  void check() const;
  // Whether the communicator has failed (check() would throw).
  [[nodiscard]] bool failed() const;
  // Aborts the communicator now (ncclCommAbort): its operations in flight are released and
  // every later call throws NcclError. For a program that knows a peer is gone.
  void abort();

  // Registers `bytes` at `data` with NCCL (ncclCommRegister), for zero-copy transports
  // (NVLS, CollNet, user-buffer p2p); deregistered when the returned handle goes. A no-op
  // handle where the loaded NCCL lacks registration.
  class Registration {
   public:
    Registration() = default;
    ~Registration();
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    [[nodiscard]] bool registered() const noexcept { return handle_ != nullptr; }

   private:
    friend class Communicator;
    std::shared_ptr<detail::CommunicatorState> state_;
    void* handle_ = nullptr;
  };
  [[nodiscard]] Registration register_buffer(void* data, std::size_t bytes);
  // The caching allocator's ranges this communicator has registered (in address order; none
  // unless CommunicatorOptions::register_allocator_segments is on).
  [[nodiscard]] std::vector<RegisteredSegment> registered_segments() const;

  // The NCCL handle (ncclComm_t), for calls cudakit does not wrap.
  [[nodiscard]] void* native_handle() const;

 private:
  explicit Communicator(std::shared_ptr<detail::CommunicatorState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::CommunicatorState> state_;
};

}  // namespace cudakit::nccl
