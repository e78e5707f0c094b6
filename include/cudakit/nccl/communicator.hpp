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

// One rank of an NCCL communicator on one CUDA device, with its collectives and point-to-point
// operations. A Communicator is a shared handle: copies refer to the same communicator, which is
// destroyed with its last copy (aborted instead when it has failed). Its watchdog thread and
// flight recorder are described in Note [Never a silent hang] and Note [Flight records].
// Thread safety: the calls may come from several threads (each NCCL call is made under the
// communicator's lock), but the order in which operations are issued must be the same on every
// rank, so a program usually issues them from one thread.
class Communicator {
 public:
  // Rank `rank` of `world_size` on `device` (-1: the current device), meeting the others through
  // `id` (ncclCommInitRankConfig, non-blocking). `store`, when given, carries the flight records
  // on a timeout. Blocks until every rank has joined, up to the options' timeout.
  // @param world_size the number of ranks, at least 1
  // @param rank this process's rank, 0..world_size-1
  // @param id the id one rank made with unique_id(), the same on every rank
  // @param device the CUDA ordinal this rank runs on (-1: the current device)
  // @param options how the communicator is made and watched (resolved here)
  // @param store where the ranks exchange flight records on a timeout (none: each reports only
  //   its own)
  // @return the new communicator
  // @throws InvalidArgumentError for a rank out of range (or a world size below 1), NcclError
  // when NCCL fails or the others do not join within the timeout (the communicator is then
  // aborted).
  // @throws StateError when NCCL is not available or lacks ncclCommInitRankConfig (before 2.14).
  static Communicator init_rank(int world_size, int rank, const UniqueId& id, int device = -1,
                                const CommunicatorOptions& options = {},
                                std::shared_ptr<Store> store = nullptr);
  // A rank of a multi-process communicator met through `rendezvous` (resolved from the
  // environment): rank 0 makes the id and publishes it in the store, the others read it; the
  // device is the local rank. Blocks until every rank has joined.
  // @param rendezvous where the ranks meet (unset fields from RANK, WORLD_SIZE, LOCAL_RANK,
  //   MASTER_ADDR, MASTER_PORT)
  // @param options how the communicator is made and watched; its name also names the id's key
  //   in the store
  // @return the new communicator, which keeps the store for its flight-record exchange
  // @throws InvalidArgumentError as RendezvousOptions::resolved() and init_rank().
  // @throws NcclError when the store is unreachable, or as init_rank().
  // @throws StateError as init_rank().
  static Communicator from_rendezvous(const RendezvousOptions& rendezvous = {},
                                      const CommunicatorOptions& options = {});
  // One communicator per device of `devices`, rank i on devices[i], in this process (torch.cuda.
  // nccl's communicators). Made once per list and cached for the process (made again when one of
  // the cached ones has failed or been aborted); `options` apply when they are made. Blocks
  // until every device's rank is ready.
  // @param devices the CUDA ordinals, each once
  // @param options how the communicators are made and watched
  // @return the communicators, in the order of `devices`
  // @throws InvalidArgumentError for an empty list or a device listed twice.
  // @throws NcclError when NCCL fails or a rank is not ready within the timeout.
  // @throws StateError when NCCL is not available or lacks ncclCommInitRankConfig.
  static std::vector<Communicator> for_devices(std::span<const int> devices,
                                               const CommunicatorOptions& options = {});

  // A new communicator of the ranks that pass the same `color` (ordered by `key`), or nullopt
  // for this rank when `color` is negative (ncclCommSplit). Every rank must call it; it blocks
  // until the new communicator is ready.
  // @param color the group this rank joins; negative: none
  // @param key this rank's place in its new communicator (ties ordered by the old rank)
  // @param options the new communicator's options (a "default" name becomes
  //   "<parent's name>/split<color>")
  // @return the new communicator, on this rank's device, or nullopt for a negative color
  // @throws NcclError when this communicator has failed, NCCL fails, or the split does not
  //   complete within the timeout.
  // @throws StateError when the loaded NCCL lacks ncclCommSplit (before 2.18).
  [[nodiscard]] std::optional<Communicator> split(int color, int key, const CommunicatorOptions& options = {}) const;

  // @return this rank's number, 0 to world_size() - 1.
  [[nodiscard]] int rank() const;
  // @return the number of ranks.
  [[nodiscard]] int world_size() const;
  // @return the CUDA device this rank's operations run on.
  [[nodiscard]] int device() const;
  // The next operation's sequence number minus one.
  // @return how many operations this rank has issued (every one numbered, point-to-point too).
  [[nodiscard]] std::uint64_t operations_issued() const;
  // The last operations this rank issued, with their state (See Note [Flight records]).
  // @return the communicator's recorder (it lives as long as the communicator; thread-safe).
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
  // @param input this rank's contribution (contiguous, on the communicator's device)
  // @param output the reduction of every rank's input, as many elements (may be `input`)
  // @param op the reduction (for bool: sum is "or", prod "and", avg refused)
  // @param stream the stream to order the operation on (default: the device's current stream;
  //   it must be on the communicator's device)
  // @throws InvalidArgumentError naming the values, before anything is enqueued.
  void all_reduce(const tensor::Tensor& input, const tensor::Tensor& output, ReduceOp op = ReduceOp::sum,
                  OptionalStream stream = {});
  // all_reduce in place: `inout` is replaced by the reduction. Ordered as the operations above.
  // @param inout this rank's contribution, then the result
  // @param op the reduction
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values, before anything is enqueued.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void all_reduce(const tensor::Tensor& inout, ReduceOp op = ReduceOp::sum, OptionalStream stream = {}) {
    all_reduce(inout, inout, op, stream);
  }
  // The reduction of every rank's `input` into `output` on `root`. `output` matters on `root`
  // only (other ranks may pass `input` again, or an undefined tensor). Ordered as the operations
  // above.
  // @param input this rank's contribution
  // @param output the result on `root`, as many elements as `input`
  // @param root the rank that receives the result
  // @param op the reduction
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values (a root out of range, ...).
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void reduce(const tensor::Tensor& input, const tensor::Tensor& output, int root, ReduceOp op = ReduceOp::sum,
              OptionalStream stream = {});
  // `root`'s `input` copied into every rank's `output`. `input` matters on `root` only (other
  // ranks may pass an undefined tensor). Ordered as the operations above.
  // @param input the data to send, on `root`
  // @param output where every rank receives it, as many elements (on `root` it may be `input`)
  // @param root the rank whose input is sent
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void broadcast(const tensor::Tensor& input, const tensor::Tensor& output, int root, OptionalStream stream = {});
  // broadcast in place: `root`'s `inout` overwrites every other rank's.
  // @param inout the data on `root`, the destination elsewhere
  // @param root the rank whose data is sent
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void broadcast(const tensor::Tensor& inout, int root, OptionalStream stream = {}) { broadcast(inout, inout, root, stream); }
  // Every rank's `input`, concatenated in rank order into every rank's `output`.
  // output: world_size x input's elements, rank r's at r x input.numel().
  // @param input this rank's block
  // @param output world_size blocks of input's size
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void all_gather(const tensor::Tensor& input, const tensor::Tensor& output, OptionalStream stream = {});
  // The reduction of every rank's input, block r of it delivered to rank r.
  // input: world_size x output's elements; rank r gets the reduction of block r.
  // @param input world_size blocks (its element count divisible by world_size)
  // @param output one block
  // @param op the reduction
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void reduce_scatter(const tensor::Tensor& input, const tensor::Tensor& output, ReduceOp op = ReduceOp::sum,
                      OptionalStream stream = {});
  // input and output: world_size equal blocks; block j of rank i's input goes to block i of rank
  // j's output (grouped send/recv; a copy on one rank).
  // @param input world_size blocks (its element count divisible by world_size)
  // @param output as many elements; another buffer (not in place)
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values, or when `output` is `input`.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void all_to_all(const tensor::Tensor& input, const tensor::Tensor& output, OptionalStream stream = {});
  // Sends `input` to `peer`, which must issue a matching recv (same count and dtype). Ordered as
  // the operations above; a send and its recv are usually issued in a Group.
  // @param input the data to send
  // @param peer the receiving rank
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void send(const tensor::Tensor& input, int peer, OptionalStream stream = {});
  // Receives into `output` what `peer` sends with a matching send.
  // @param output where the data goes
  // @param peer the sending rank
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void recv(const tensor::Tensor& output, int peer, OptionalStream stream = {});

  // The same on raw buffers (bool has no DataType: see Note [Bool reductions]). Validated,
  // traced, numbered and ordered on `stream` as the tensor overloads; nothing is
  // record_stream'ed: the caller keeps the memory alive until the operation has completed.
  // @param input this rank's contribution
  // @param output the reduction of every rank's input, as many elements (may be `input`)
  // @param op the reduction
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values, before anything is enqueued.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void all_reduce(const Buffer& input, const Buffer& output, ReduceOp op, OptionalStream stream = {});
  // reduce on raw buffers; `output` matters on `root` only.
  // @param input this rank's contribution
  // @param output the result on `root`
  // @param root the rank that receives the result
  // @param op the reduction
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void reduce(const Buffer& input, const Buffer& output, int root, ReduceOp op, OptionalStream stream = {});
  // broadcast on raw buffers; `input` matters on `root` only.
  // @param input the data to send, on `root`
  // @param output where every rank receives it
  // @param root the rank whose input is sent
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void broadcast(const Buffer& input, const Buffer& output, int root, OptionalStream stream = {});
  // all_gather on raw buffers.
  // @param input this rank's block
  // @param output world_size blocks of input's count
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void all_gather(const Buffer& input, const Buffer& output, OptionalStream stream = {});
  // reduce_scatter on raw buffers.
  // @param input world_size blocks
  // @param output one block
  // @param op the reduction
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void reduce_scatter(const Buffer& input, const Buffer& output, ReduceOp op, OptionalStream stream = {});
  // all_to_all on raw buffers.
  // @param input world_size blocks
  // @param output as many elements, another buffer
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values, or when `output` is `input`.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void all_to_all(const Buffer& input, const Buffer& output, OptionalStream stream = {});
  // send on a raw buffer.
  // @param input the data to send
  // @param peer the receiving rank
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void send(const Buffer& input, int peer, OptionalStream stream = {});
  // recv into a raw buffer.
  // @param output where the data goes
  // @param peer the sending rank
  // @param stream the stream to order it on (default: the device's current stream)
  // @throws InvalidArgumentError naming the values.
  // @throws NcclError when the communicator has failed or NCCL refuses.
  void recv(const Buffer& output, int peer, OptionalStream stream = {});

  // Throws the error the watchdog recorded, if any (a timeout, NCCL's asynchronous error). Does
  // not wait for anything.
  // @throws NcclError with the rank, the operation, its sequence number and the flight-record
  //   report, when the communicator has failed or was aborted.
  void check() const;
  // Whether the communicator has failed (check() would throw).
  // @return true after a recorded error or an abort.
  [[nodiscard]] bool failed() const;
  // Aborts the communicator now (ncclCommAbort): its operations in flight are released and
  // every later call throws NcclError. For a program that knows a peer is gone. Safe from any
  // thread; a second call does nothing.
  void abort();

  // Registers `bytes` at `data` with NCCL (ncclCommRegister), for zero-copy transports
  // (NVLS, CollNet, user-buffer p2p); deregistered when the returned handle goes. A no-op
  // handle where the loaded NCCL lacks registration.
  class Registration {
   public:
    // An empty handle: registered() is false.
    Registration() = default;
    // Deregisters the range (ncclCommDeregister), unless the communicator has failed; a failure
    // is logged, not thrown.
    ~Registration();
    // Takes `other`'s registration; `other` is left empty.
    // @param other the handle to take from
    Registration(Registration&& other) noexcept;
    // Takes `other`'s registration and deregisters the one this handle held; `other` is left
    // empty.
    // @param other the handle to take from
    // @return *this
    Registration& operator=(Registration&& other) noexcept;
    // @return true when the handle holds an NCCL registration.
    [[nodiscard]] bool registered() const noexcept { return handle_ != nullptr; }

   private:
    friend class Communicator;
    std::shared_ptr<detail::CommunicatorState> state_;
    void* handle_ = nullptr;
  };
  // Registers a range of device memory with NCCL. Host-synchronous; nothing is enqueued.
  // @param data the range's start (device memory on the communicator's device)
  // @param bytes its length (0: nothing is registered)
  // @return the registration, empty where the loaded NCCL has no ncclCommRegister or bytes is 0;
  //   it keeps the communicator's state alive
  // @throws NcclError when the communicator has failed or ncclCommRegister fails.
  [[nodiscard]] Registration register_buffer(void* data, std::size_t bytes);
  // The caching allocator's ranges this communicator has registered (in address order; none
  // unless CommunicatorOptions::register_allocator_segments is on).
  // @return a snapshot of the registered ranges.
  [[nodiscard]] std::vector<RegisteredSegment> registered_segments() const;

  // The NCCL handle (ncclComm_t), for calls cudakit does not wrap.
  // @return the handle, owned by the communicator (do not destroy it).
  [[nodiscard]] void* native_handle() const;

 private:
  explicit Communicator(std::shared_ptr<detail::CommunicatorState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::CommunicatorState> state_;
};

}  // namespace cudakit::nccl
