#include "cudakit/nccl/communicator.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/nccl/validation.hpp"
#include "nccl/detail/communicator_state.hpp"
#include "nccl/detail/nccl_call.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;
using detail::CommunicatorState;
using Mode = MemoryAccess::Mode;

namespace {

const cudakit::detail::NcclApi& api() { return detail::loaded_nccl("nccl::Communicator"); }

ncclDataType_t to_nccl(DataType type) { return static_cast<ncclDataType_t>(type); }

ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::avg: return ncclAvg;
  }
  return ncclSum;
}

// Note [Bool reductions]
// NCCL has no bool: bool tensors travel as uint8 (0 or 1), where sum would give 2 for "true or
// true" and prod is "and". As torch does, a bool sum is max (or) and a bool prod is min (and);
// avg has no meaning for bool and is refused.
ReduceOp bool_reduction(const tensor::Tensor& t, ReduceOp op, const char* api_name) {
  if (t.dtype() != tensor::DType::bool_) return op;
  if (op == ReduceOp::sum) return ReduceOp::max;
  if (op == ReduceOp::prod) return ReduceOp::min;
  if (op == ReduceOp::avg) throw InvalidArgumentError(api_name, "avg of a bool tensor has no meaning");
  return op;
}

ncclConfig_t make_config(const CommunicatorOptions& options) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // See Note [Never a silent hang]
  config.commName = options.name.c_str();
  config.splitShare = options.split_share ? 1 : 0;
  return config;
}

// Waits until a communicator just made is ready, up to `timeout`; aborts it and throws
// NcclError otherwise.
void ready_or_abort(ncclComm_t comm, std::chrono::milliseconds timeout, int rank, int world_size, const char* what) {
  const auto& nccl = api();
  const auto deadline = detail::Clock::now() + timeout;
  auto pause = std::chrono::microseconds(10);
  while (true) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = nccl.ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess) state = r;
    if (state == ncclSuccess) return;
    if (state != ncclInProgress || detail::Clock::now() >= deadline) {
      const std::string text =
          state != ncclInProgress
              ? detail::nccl_error_text(state, comm)
              : concat("not ready after ", timeout.count(), " ms: not every one of the ", world_size,
                       " ranks joined (are they all started, with the same unique id?)");
      (void)nccl.ncclCommAbort(comm);
      throw NcclError(state == ncclInProgress ? 0 : static_cast<int>(state), "ncclCommInitRankConfig", rank, what, text);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

void check_nccl_init_config(const char* api_name) {
  if (api().ncclCommInitRankConfig == nullptr)
    throw StateError(api_name, concat("the loaded NCCL (", cudakit::detail::nccl_api().status.version,
                                      ") lacks ncclCommInitRankConfig (NCCL 2.14 or later is needed)"));
}

int resolve_device(int device) {
  if (device >= 0) return device;
  int current = 0;
  CUDAKIT_CHECK_CUDA(cudaGetDevice(&current));
  return current;
}

// What one operation is, for the flight recorder and the trace hooks.
struct OperationInfo {
  const char* op;
  DataType dtype;
  std::size_t input_count;
  std::size_t output_count;
  int peer;
  std::vector<MemoryAccess> accesses;
};

void add_access(std::vector<MemoryAccess>& accesses, const Buffer& b, Mode mode) {
  if (b.count == 0) return;
  for (MemoryAccess& a : accesses) {
    if (a.begin == b.data && a.bytes == b.bytes()) {
      if (a.mode != mode) a.mode = Mode::read_write;
      return;
    }
  }
  accesses.push_back({b.data, b.bytes(), mode});
}

// The tensors a tensor overload hands to the raw overload it calls, to be record_stream'ed on
// the operation's stream once the raw overload has validated everything (a refused operation
// marks nothing). Set for the duration of that one call on this thread.
thread_local std::span<const tensor::Tensor* const> t_tensors_to_record;

class RecordAfterValidation {
 public:
  RecordAfterValidation(const tensor::Tensor* first, const tensor::Tensor* second = nullptr)
      : tensors_{first, second} {
    t_tensors_to_record = std::span(tensors_.data(), second != nullptr ? 2 : 1);
  }
  ~RecordAfterValidation() { t_tensors_to_record = {}; }
  RecordAfterValidation(const RecordAfterValidation&) = delete;
  RecordAfterValidation& operator=(const RecordAfterValidation&) = delete;

 private:
  std::array<const tensor::Tensor*, 2> tensors_;
};

// Issues one operation: see Communicator's comment on operations.
template <class Call>
void issue(const std::shared_ptr<CommunicatorState>& state, const OperationInfo& info, OptionalStream stream_arg,
           Call&& call) {
  CommunicatorState& s = *state;
  // Messages' strings are built on the failure paths only: this is every operation's host cost.
  auto api_name = [&] { return concat("nccl::Communicator::", info.op); };
  s.check("nccl::Communicator");
  const StreamRef stream = stream_or_current(stream_arg, s.device);
  if (stream.device() != s.device)
    throw InvalidArgumentError(api_name(), concat("the stream is on cuda:", stream.device(),
                                                  " but the communicator is on cuda:", s.device));
  for (const tensor::Tensor* t : std::exchange(t_tensors_to_record, {}))
    if (t->defined() && t->device().is_cuda() && t->device().index == s.device) t->record_stream(stream);
  if (trace_hooks_active()) {
    cudakit::detail::emit_trace_event(TraceEvent{.kind = TraceEventKind::collective,
                                                 .device = s.device,
                                                 .stream = stream.handle(),
                                                 .name = info.op,
                                                 .accesses = info.accesses,
                                                 .accesses_declared = true});
  }
  const std::uint64_t seq = s.seq.fetch_add(1) + 1;
  // A capturing stream has no id to give (cuStreamGetId refuses it in every capture mode): 0.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDAKIT_CHECK_CUDA(cudaStreamIsCapturing(stream.handle(), &capture));
  const unsigned long long stream_id = capture == cudaStreamCaptureStatusNone ? stream.id() : 0;
  s.recorder.add(FlightRecord{seq, info.op, info.dtype, info.input_count, info.output_count, info.peer, stream_id,
                              FlightState::enqueued, 0});
  ncclResult_t r;
  {
    DeviceGuard guard(s.device);
    std::lock_guard lock(s.comm_mutex);
    r = call(s.comm, stream.handle());
  }
  detail::GroupFrame& frame = detail::group_frame();
  if (r != ncclSuccess && r != ncclInProgress) {
    // NCCL has made this its communicator's asynchronous error (See Note [What NCCL refuses] in
    // validation.cpp): the communicator is gone for every later call, so it fails here, and is
    // aborted; inside a group, once the group has ended (an abort joins the open group).
    s.recorder.set_state(seq, FlightState::failed);
    const std::string operation = CommunicatorState::label(info.op, seq);
    const std::string text = detail::nccl_error_text(r, s.comm);
    if (frame.depth > 0) frame.failed.push_back({state, static_cast<int>(r), operation, text});
    else s.fail(static_cast<int>(r), operation, text);
    throw NcclError(static_cast<int>(r), api_name(), s.rank, operation, text);
  }
  if (frame.depth > 0) {
    frame.operations.push_back({state, seq, info.op, stream});
    return;
  }
  if (r == ncclInProgress) s.wait_ready(CommunicatorState::label(info.op, seq));
  s.watch(seq, info.op, stream, capture);
}

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::vector<int>, std::vector<std::shared_ptr<CommunicatorState>>>& device_cache() {
  static auto* cache = new std::map<std::vector<int>, std::vector<std::shared_ptr<CommunicatorState>>>();
  return *cache;  // never destroyed: communicators outlive static destruction order
}

}  // namespace

Communicator Communicator::init_rank(int world_size, int rank, const UniqueId& id, int device,
                                     const CommunicatorOptions& options_arg, std::shared_ptr<Store> store) {
  const char* api_name = "nccl::Communicator::init_rank";
  if (world_size < 1) throw InvalidArgumentError(api_name, concat("the world size is ", world_size, "; it must be at least 1"));
  check_rank(api_name, "rank", rank, world_size);
  check_nccl_init_config(api_name);
  const CommunicatorOptions options = options_arg.resolved();
  device = resolve_device(device);
  ncclUniqueId raw;
  std::memcpy(raw.internal, id.bytes.data(), UniqueId::kBytes);
  ncclConfig_t config = make_config(options);
  ncclComm_t comm = nullptr;
  {
    DeviceGuard guard(device);
    detail::check_nccl(api().ncclCommInitRankConfig(&comm, world_size, raw, rank, &config), "ncclCommInitRankConfig", rank,
                       "init");
    ready_or_abort(comm, options.timeout, rank, world_size, "init");
  }
  return Communicator(std::make_shared<CommunicatorState>(comm, rank, world_size, device, options, std::move(store)));
}

Communicator Communicator::from_rendezvous(const RendezvousOptions& rendezvous, const CommunicatorOptions& options_arg) {
  const RendezvousOptions r = rendezvous.resolved();
  const CommunicatorOptions options = options_arg.resolved();
  std::shared_ptr<Store> store = make_store(r);
  const std::string key = concat("cudakit/nccl/", options.name, "/unique_id");
  UniqueId id;
  if (r.rank == 0) {
    id = unique_id();
    store->set(key, id.to_bytes());
  } else {
    id = UniqueId::from_bytes(store->get(key));
  }
  return init_rank(r.world_size, r.rank, id, r.local_rank, options, std::move(store));
}

std::vector<Communicator> Communicator::for_devices(std::span<const int> devices_arg, const CommunicatorOptions& options_arg) {
  const char* api_name = "nccl::Communicator::for_devices";
  if (devices_arg.empty()) throw InvalidArgumentError(api_name, "the device list is empty");
  std::vector<int> devices(devices_arg.begin(), devices_arg.end());
  std::set<int> seen;
  for (int d : devices) {
    if (d < 0) throw InvalidArgumentError(api_name, concat("device ", d, " is not a CUDA ordinal"));
    if (!seen.insert(d).second) throw InvalidArgumentError(api_name, concat("cuda:", d, " is listed twice"));
  }
  check_nccl_init_config(api_name);
  std::lock_guard lock(cache_mutex());
  auto& cached = device_cache()[devices];
  if (cached.empty() || std::any_of(cached.begin(), cached.end(), [](const auto& s) { return s->failed_or_aborted(); })) {
    cached.clear();
    const CommunicatorOptions options = options_arg.resolved();
    const int n = static_cast<int>(devices.size());
    const UniqueId id = unique_id();
    ncclUniqueId raw;
    std::memcpy(raw.internal, id.bytes.data(), UniqueId::kBytes);
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    std::vector<ncclConfig_t> configs(devices.size(), make_config(options));
    {
      DeviceGuard guard(devices[0]);
      detail::GroupGuard group("nccl::Communicator::for_devices");  // See Note [Groups end on every path]
      ncclResult_t failed = ncclSuccess;
      for (int i = 0; i < n && failed == ncclSuccess; ++i) {
        CUDAKIT_CHECK_CUDA(cudaSetDevice(devices[i]));
        const ncclResult_t r = api().ncclCommInitRankConfig(&comms[i], n, raw, i, &configs[i]);
        if (r != ncclSuccess && r != ncclInProgress) failed = r;
      }
      const ncclResult_t ended = group.end();
      detail::check_nccl(failed, "ncclCommInitRankConfig", -1, "init");
      detail::check_nccl(ended, "ncclGroupEnd", -1, "init");
      for (int i = 0; i < n; ++i) ready_or_abort(comms[i], options.timeout, i, n, "init");
    }
    for (int i = 0; i < n; ++i)
      cached.push_back(std::make_shared<CommunicatorState>(comms[i], i, n, devices[i], options, nullptr));
  }
  std::vector<Communicator> out;
  for (const auto& s : cached) out.push_back(Communicator(s));
  return out;
}

std::optional<Communicator> Communicator::split(int color, int key, const CommunicatorOptions& options_arg) const {
  const char* api_name = "nccl::Communicator::split";
  state_->check(api_name);
  if (api().ncclCommSplit == nullptr)
    throw StateError(api_name, concat("the loaded NCCL (", cudakit::detail::nccl_api().status.version,
                                      ") lacks ncclCommSplit (NCCL 2.18 or later is needed)"));
  CommunicatorOptions options = options_arg;
  if (options.name == "default") options.name = concat(state_->options.name, "/split", color);
  options = options.resolved();
  ncclConfig_t config = make_config(options);
  // On a non-blocking parent the split is the parent's asynchronous work, and NCCL writes the new
  // handle through the pointer when that work ends, after ncclCommSplit has returned: the handle
  // is read only once the parent is ready again, from a slot that lives until then.
  ncclComm_t comm = nullptr;
  {
    DeviceGuard guard(state_->device);
    std::lock_guard lock(state_->comm_mutex);
    detail::check_nccl(api().ncclCommSplit(state_->comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &comm, &config),
                       "ncclCommSplit", state_->rank, "split");
  }
  state_->wait_ready("split");
  if (comm == nullptr) return std::nullopt;
  ready_or_abort(comm, options.timeout, state_->rank, state_->world_size, "split");
  int rank = 0, size = 0;
  detail::check_nccl(api().ncclCommUserRank(comm, &rank), "ncclCommUserRank", state_->rank, "split");
  detail::check_nccl(api().ncclCommCount(comm, &size), "ncclCommCount", state_->rank, "split");
  return Communicator(std::make_shared<CommunicatorState>(comm, rank, size, state_->device, options, state_->store));
}

int Communicator::rank() const { return state_->rank; }
int Communicator::world_size() const { return state_->world_size; }
int Communicator::device() const { return state_->device; }
std::uint64_t Communicator::operations_issued() const { return state_->seq.load(); }
const FlightRecorder& Communicator::flight_recorder() const { return state_->recorder; }
void Communicator::check() const { state_->check("nccl::Communicator::check"); }
bool Communicator::failed() const { return state_->failed_or_aborted(); }
void Communicator::abort() { state_->abort(); }
void* Communicator::native_handle() const { return state_->comm; }
std::vector<RegisteredSegment> Communicator::registered_segments() const { return state_->registered_segments(); }

// ---- operations on raw buffers ----

void Communicator::all_reduce(const Buffer& input, const Buffer& output, ReduceOp op, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::all_reduce";
  check_buffer(api_name, "input", input, device());
  check_buffer(api_name, "output", output, device());
  check_output(api_name, input, output, input.count, "as many as the input");
  const ReduceOp nccl_op = reduction_for_nccl(api_name, "all_reduce", input.dtype, op, state_->target);
  OperationInfo info{"all_reduce", input.dtype, input.count, output.count, -1, {}};
  add_access(info.accesses, input, Mode::read);
  add_access(info.accesses, output, Mode::write);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    return api().ncclAllReduce(input.data, output.data, input.count, to_nccl(input.dtype), to_nccl(nccl_op), comm, s);
  });
}

void Communicator::reduce(const Buffer& input, const Buffer& output, int root, ReduceOp op, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::reduce";
  check_rank(api_name, "root", root, world_size());
  check_buffer(api_name, "input", input, device());
  const bool is_root = root == rank();
  if (is_root) {
    check_buffer(api_name, "output", output, device());
    check_output(api_name, input, output, input.count, "as many as the input");
  }
  const ReduceOp nccl_op = reduction_for_nccl(api_name, "reduce", input.dtype, op, state_->target);
  OperationInfo info{"reduce", input.dtype, input.count, is_root ? output.count : 0, root, {}};
  add_access(info.accesses, input, Mode::read);
  if (is_root) add_access(info.accesses, output, Mode::write);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    return api().ncclReduce(input.data, is_root ? output.data : nullptr, input.count, to_nccl(input.dtype), to_nccl(nccl_op), root,
                            comm, s);
  });
}

void Communicator::broadcast(const Buffer& input, const Buffer& output, int root, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::broadcast";
  check_rank(api_name, "root", root, world_size());
  const bool is_root = root == rank();
  if (is_root) check_buffer(api_name, "input", input, device());
  check_buffer(api_name, "output", output, device());
  if (is_root) check_output(api_name, input, output, input.count, "as many as the input");
  check_data_type(api_name, "broadcast", output.dtype, state_->target);
  OperationInfo info{"broadcast", output.dtype, is_root ? input.count : output.count, output.count, root, {}};
  if (is_root) add_access(info.accesses, input, Mode::read);
  add_access(info.accesses, output, Mode::write);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    return api().ncclBroadcast(is_root ? input.data : nullptr, output.data, output.count, to_nccl(output.dtype), root, comm, s);
  });
}

void Communicator::all_gather(const Buffer& input, const Buffer& output, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::all_gather";
  check_buffer(api_name, "input", input, device());
  check_buffer(api_name, "output", output, device());
  check_output(api_name, input, output, input.count * static_cast<std::size_t>(world_size()), "world_size x the input");
  check_data_type(api_name, "all_gather", input.dtype, state_->target);
  OperationInfo info{"all_gather", input.dtype, input.count, output.count, -1, {}};
  add_access(info.accesses, input, Mode::read);
  add_access(info.accesses, output, Mode::write);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    return api().ncclAllGather(input.data, output.data, input.count, to_nccl(input.dtype), comm, s);
  });
}

void Communicator::reduce_scatter(const Buffer& input, const Buffer& output, ReduceOp op, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::reduce_scatter";
  check_buffer(api_name, "input", input, device());
  check_buffer(api_name, "output", output, device());
  check_divisible(api_name, input, world_size());
  check_output(api_name, input, output, input.count / static_cast<std::size_t>(world_size()), "the input / world_size");
  const ReduceOp nccl_op = reduction_for_nccl(api_name, "reduce_scatter", input.dtype, op, state_->target);
  OperationInfo info{"reduce_scatter", input.dtype, input.count, output.count, -1, {}};
  add_access(info.accesses, input, Mode::read);
  add_access(info.accesses, output, Mode::write);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    return api().ncclReduceScatter(input.data, output.data, output.count, to_nccl(input.dtype), to_nccl(nccl_op), comm, s);
  });
}

// Note [A one-rank all_to_all is a copy]
// On one rank all_to_all moves the input to the output unchanged. NCCL does every one-rank
// collective as such a copy, queued at the call (ncclLaunchOneRank), but not point-to-point
// operations: a send/recv pair to itself is a group with a task, which a non-blocking
// communicator launches from a thread of NCCL's (See Note [Waiting for a non-blocking group] in
// communicator_state.cpp), tens of microseconds per operation. So cudakit copies, as NCCL would
// for a collective, queued at the call inside a group too; the operation is still numbered,
// recorded, reported to the trace hooks and watched like any other.
void Communicator::all_to_all(const Buffer& input, const Buffer& output, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::all_to_all";
  check_buffer(api_name, "input", input, device());
  check_buffer(api_name, "output", output, device());
  check_divisible(api_name, input, world_size());
  check_output(api_name, input, output, input.count, "as many as the input");
  if (input.data == output.data && input.count != 0)
    throw InvalidArgumentError(api_name, "all_to_all cannot work in place: the output must be another buffer");
  check_data_type(api_name, "all_to_all", input.dtype, state_->target);
  OperationInfo info{"all_to_all", input.dtype, input.count, output.count, -1, {}};
  add_access(info.accesses, input, Mode::read);
  add_access(info.accesses, output, Mode::write);
  const int n = world_size();
  const std::size_t block = input.count / static_cast<std::size_t>(n);
  const std::size_t block_bytes = block * element_size(input.dtype);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    // See Note [A one-rank all_to_all is a copy]
    if (n == 1) {
      if (block_bytes != 0)
        CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(output.data, input.data, block_bytes, cudaMemcpyDeviceToDevice, s));
      return ncclSuccess;
    }
    const auto& nccl = api();
    detail::GroupGuard group("nccl::Communicator::all_to_all");
    ncclResult_t r = ncclSuccess;
    for (int peer = 0; peer < n && (r == ncclSuccess || r == ncclInProgress); ++peer) {
      r = nccl.ncclSend(static_cast<const char*>(input.data) + peer * block_bytes, block, to_nccl(input.dtype), peer, comm, s);
      if (r == ncclSuccess || r == ncclInProgress)
        r = nccl.ncclRecv(static_cast<char*>(output.data) + peer * block_bytes, block, to_nccl(input.dtype), peer, comm, s);
    }
    const ncclResult_t ended = group.end();
    return r == ncclSuccess || r == ncclInProgress ? ended : r;
  });
}

void Communicator::send(const Buffer& input, int peer, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::send";
  check_rank(api_name, "peer", peer, world_size());
  check_buffer(api_name, "input", input, device());
  check_data_type(api_name, "send", input.dtype, state_->target);
  OperationInfo info{"send", input.dtype, input.count, 0, peer, {}};
  add_access(info.accesses, input, Mode::read);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    return api().ncclSend(input.data, input.count, to_nccl(input.dtype), peer, comm, s);
  });
}

void Communicator::recv(const Buffer& output, int peer, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::recv";
  check_rank(api_name, "peer", peer, world_size());
  check_buffer(api_name, "output", output, device());
  check_data_type(api_name, "recv", output.dtype, state_->target);
  OperationInfo info{"recv", output.dtype, 0, output.count, peer, {}};
  add_access(info.accesses, output, Mode::write);
  issue(state_, info, stream, [&](ncclComm_t comm, cudaStream_t s) {
    return api().ncclRecv(output.data, output.count, to_nccl(output.dtype), peer, comm, s);
  });
}

// ---- operations on tensors: the buffers, bool's reductions, and record_stream ----


void Communicator::all_reduce(const tensor::Tensor& input, const tensor::Tensor& output, ReduceOp op, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::all_reduce";
  const Buffer in = Buffer::of(input, api_name), out = Buffer::of(output, api_name);
  const ReduceOp effective = bool_reduction(input, op, api_name);
  const RecordAfterValidation record(&input, &output);
  all_reduce(in, out, effective, stream);
}

void Communicator::reduce(const tensor::Tensor& input, const tensor::Tensor& output, int root, ReduceOp op,
                          OptionalStream stream) {
  const char* api_name = "nccl::Communicator::reduce";
  const Buffer in = Buffer::of(input, api_name);
  const Buffer out = output.defined() ? Buffer::of(output, api_name) : in;
  const ReduceOp effective = bool_reduction(input, op, api_name);
  const RecordAfterValidation record(&input, &output);
  reduce(in, out, root, effective, stream);
}

void Communicator::broadcast(const tensor::Tensor& input, const tensor::Tensor& output, int root, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::broadcast";
  const Buffer out = Buffer::of(output, api_name);
  const Buffer in = input.defined() ? Buffer::of(input, api_name) : out;
  const RecordAfterValidation record(&input, &output);
  broadcast(in, out, root, stream);
}

void Communicator::all_gather(const tensor::Tensor& input, const tensor::Tensor& output, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::all_gather";
  const Buffer in = Buffer::of(input, api_name), out = Buffer::of(output, api_name);
  const RecordAfterValidation record(&input, &output);
  all_gather(in, out, stream);
}

void Communicator::reduce_scatter(const tensor::Tensor& input, const tensor::Tensor& output, ReduceOp op,
                                  OptionalStream stream) {
  const char* api_name = "nccl::Communicator::reduce_scatter";
  const Buffer in = Buffer::of(input, api_name), out = Buffer::of(output, api_name);
  const ReduceOp effective = bool_reduction(input, op, api_name);
  const RecordAfterValidation record(&input, &output);
  reduce_scatter(in, out, effective, stream);
}

void Communicator::all_to_all(const tensor::Tensor& input, const tensor::Tensor& output, OptionalStream stream) {
  const char* api_name = "nccl::Communicator::all_to_all";
  const Buffer in = Buffer::of(input, api_name), out = Buffer::of(output, api_name);
  const RecordAfterValidation record(&input, &output);
  all_to_all(in, out, stream);
}

void Communicator::send(const tensor::Tensor& input, int peer, OptionalStream stream) {
  const Buffer in = Buffer::of(input, "nccl::Communicator::send");
  const RecordAfterValidation record(&input);
  send(in, peer, stream);
}

void Communicator::recv(const tensor::Tensor& output, int peer, OptionalStream stream) {
  const Buffer out = Buffer::of(output, "nccl::Communicator::recv");
  const RecordAfterValidation record(&output);
  recv(out, peer, stream);
}

// ---- registration ----

Communicator::Registration Communicator::register_buffer(void* data, std::size_t bytes) {
  Registration registration;
  if (api().ncclCommRegister == nullptr || api().ncclCommDeregister == nullptr || bytes == 0) return registration;
  state_->check("nccl::Communicator::register_buffer");
  void* handle = nullptr;
  {
    DeviceGuard guard(state_->device);
    std::lock_guard lock(state_->comm_mutex);
    detail::check_nccl(api().ncclCommRegister(state_->comm, data, bytes, &handle), "ncclCommRegister", state_->rank,
                       "register_buffer");
  }
  registration.state_ = state_;
  registration.handle_ = handle;
  return registration;
}

Communicator::Registration::~Registration() {
  if (handle_ == nullptr || state_->failed_or_aborted()) return;
  std::lock_guard lock(state_->comm_mutex);
  const ncclResult_t r = cudakit::detail::nccl_api().ncclCommDeregister(state_->comm, handle_);
  if (r != ncclSuccess) CUDAKIT_LOG(warning, "ncclCommDeregister (rank ", state_->rank, ") failed: ", detail::nccl_error_text(r, nullptr));
}

Communicator::Registration::Registration(Registration&& other) noexcept
    : state_(std::move(other.state_)), handle_(std::exchange(other.handle_, nullptr)) {}

Communicator::Registration& Communicator::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    Registration old(std::move(*this));
    state_ = std::move(other.state_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

}  // namespace cudakit::nccl
