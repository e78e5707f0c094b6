#include "nccl/detail/communicator_state.hpp"

#include <algorithm>
#include <cstdlib>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/relaxed_capture_mode.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "nccl/detail/nccl_call.hpp"
#include "nccl/detail/segment_registrations.hpp"

namespace cudakit::nccl::detail {

using cudakit::detail::concat;

namespace {

std::size_t number_from_environment(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end != '\0' || v == 0)
    throw InvalidArgumentError("CommunicatorOptions", concat(name, "='", text, "' is not a positive integer"));
  return static_cast<std::size_t>(v);
}

bool flag_from_environment(const char* name, bool fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  const std::string_view value(text);
  if (value == "1") return true;
  if (value == "0") return false;
  throw InvalidArgumentError("CommunicatorOptions", concat(name, "='", text, "' is neither 0 nor 1"));
}

// The loaded NCCL's version and the device's compute capability, for validation.
NcclTarget target_of(int device, int world_size) {
  NcclTarget target;
  target.world_size = world_size;
  int code = 0;
  if (cudakit::detail::nccl_api().ncclGetVersion(&code) == ncclSuccess) target.nccl_version_code = code;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess) {
    target.compute_capability = major * 10 + minor;
  }
  (void)cudaGetLastError();
  return target;
}

// How long the ranks' records are gathered for, at most: a dead rank must not hold the report.
constexpr auto kExchangeWindow = std::chrono::seconds(5);
// How often the watchdog asks the store whether another rank wants the records.
constexpr auto kDumpCheckInterval = std::chrono::seconds(1);

}  // namespace

std::chrono::milliseconds default_timeout() {
  return std::chrono::milliseconds(number_from_environment("CUDAKIT_NCCL_TIMEOUT_MS", 10 * 60 * 1000));
}

}  // namespace cudakit::nccl::detail

namespace cudakit::nccl {

CommunicatorOptions CommunicatorOptions::resolved() const {
  CommunicatorOptions out = *this;
  if (out.timeout.count() <= 0) out.timeout = detail::default_timeout();
  if (out.poll_interval.count() <= 0) out.poll_interval = std::chrono::milliseconds(50);
  if (out.flight_records == 0) out.flight_records = detail::number_from_environment("CUDAKIT_NCCL_FLIGHT_RECORDS", 2000);
  if (out.name.empty()) out.name = "default";
  // Off by default, as torch's hook: registration costs an ncclCommRegister per segment and
  // communicator, and pays only where NCCL has a zero-copy path for registered buffers (NVLS
  // on NVSwitch systems, CollNet, user-buffer p2p), not on one GPU or over PCIe.
  if (!out.register_allocator_segments)
    out.register_allocator_segments = detail::flag_from_environment("CUDAKIT_NCCL_REGISTER_ALLOCATOR", false);
  return out;
}

}  // namespace cudakit::nccl

namespace cudakit::nccl::detail {

GroupFrame& group_frame() noexcept {
  thread_local GroupFrame frame;
  return frame;
}

CommunicatorState::CommunicatorState(ncclComm_t comm_, int rank_, int world_size_, int device_,
                                     CommunicatorOptions options_, std::shared_ptr<Store> store_)
    : comm(comm_), rank(rank_), world_size(world_size_), device(device_), options(std::move(options_)),
      store(std::move(store_)), target(target_of(device_, world_size_)), recorder(options.flight_records) {
  const auto& nccl = cudakit::detail::nccl_api();
  if (options.register_allocator_segments.value_or(false) && nccl.ncclCommRegister != nullptr &&
      nccl.ncclCommDeregister != nullptr) {
    try {
      registrations_ = std::make_unique<SegmentRegistrations>(
          memory::device_allocator(device), [this](void* base, std::size_t bytes) { return register_range(base, bytes); },
          [this](void* handle) { deregister_range(handle); });
    } catch (...) {
      // The communicator exists: it must be destroyed, not leaked, when construction fails.
      (void)nccl.ncclCommAbort(comm);
      throw;
    }
  }
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

CommunicatorState::~CommunicatorState() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  const auto* api = &cudakit::detail::nccl_api();
  bool aborted = false;
  {
    std::lock_guard lock(mutex_);
    aborted = aborted_;
  }
  if (!aborted && comm != nullptr && api->ncclCommDestroy != nullptr) {
    // Work still queued must finish first, as ncclCommDestroy frees what the kernels use; but
    // not forever (a peer may never come): past the timeout the communicator is aborted.
    (void)cudaSetDevice(device);
    const auto deadline = Clock::now() + options.timeout;
    bool drained = true;
    for (const PendingOperation& p : pending_) {
      while (cudaEventQuery(p.event) == cudaErrorNotReady && (drained = Clock::now() < deadline))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!drained) break;
    }
    (void)cudaGetLastError();
    if (drained) {
      if (registrations_) registrations_->close();  // after the work that used them, before the destroy
      destroy_or_abort();
    } else {
      CUDAKIT_LOG(error, "NCCL communicator '", options.name, "' rank ", rank, " destroyed with operation ",
                  label(pending_.front().op, pending_.front().seq), " unfinished after the timeout: aborting it");
      abort();
    }
  }
  if (registrations_) registrations_->close();  // detaches; an aborted communicator deregisters nothing
  for (const PendingOperation& p : pending_) (void)cudaEventDestroy(p.event);
  for (cudaEvent_t e : free_events_) (void)cudaEventDestroy(e);
}

// Note [Destroying a failed communicator]
// ncclCommDestroy (NCCL 2.28, src/init.cc) opens an internal group, then returns at once with
// the communicator's asynchronous error when there is one ("invalid argument" after an
// operation NCCL refused), leaving that group open on the calling thread: every later NCCL call
// of the thread joins it, and communicator inits then fail with "Blocking and nonblocking
// communicators are not allowed in the same group". ncclCommAbort ignores that error. So a
// communicator with an asynchronous error is aborted, never destroyed; and should a destroy fail
// anyway (the error arriving between the query and the destroy), the group it left is ended and
// the communicator aborted.
void CommunicatorState::destroy_or_abort() noexcept {
  const auto& nccl = cudakit::detail::nccl_api();
  ncclResult_t state = ncclSuccess;
  if (nccl.ncclCommGetAsyncError(comm, &state) != ncclSuccess) state = ncclInternalError;
  if (state != ncclSuccess && state != ncclInProgress) {
    CUDAKIT_LOG(warning, "NCCL communicator '", options.name, "' rank ", rank, " has failed (",
                nccl_error_text(state, nullptr), "): aborting it instead of destroying it");
    abort();
    return;
  }
  const ncclResult_t r = nccl.ncclCommDestroy(comm);
  if (r == ncclSuccess || r == ncclInProgress) return;
  CUDAKIT_LOG(warning, "ncclCommDestroy (rank ", rank, ") failed: ", nccl_error_text(r, nullptr),
              "; ending the group it left open and aborting the communicator");
  (void)nccl.ncclGroupEnd();
  abort();
}

bool CommunicatorState::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

void* CommunicatorState::register_range(void* base, std::size_t bytes) noexcept {
  const auto& nccl = cudakit::detail::nccl_api();
  std::lock_guard comm_lock(comm_mutex);
  if (aborted()) return nullptr;
  int previous = -1;
  (void)cudaGetDevice(&previous);
  if (previous != device) (void)cudaSetDevice(device);
  void* handle = nullptr;
  ncclResult_t r = ncclInternalError;
  try {
    // Registration may run inside an allocation made while a stream captures in the global
    // mode, which would count NCCL's pointer queries as unsafe.
    const cudakit::detail::RelaxedCaptureMode relaxed;
    r = nccl.ncclCommRegister(comm, base, bytes, &handle);
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "ncclCommRegister (rank ", rank, ") not called: ", e.what());
  }
  if (previous >= 0 && previous != device) (void)cudaSetDevice(previous);
  if (r != ncclSuccess) {
    CUDAKIT_LOG(warning, "ncclCommRegister (rank ", rank, ", ", bytes, " bytes at ", base,
                ") failed: ", nccl_error_text(r, nullptr), "; the range is used unregistered");
    return nullptr;
  }
  return handle;
}

void CommunicatorState::deregister_range(void* handle) noexcept {
  const auto& nccl = cudakit::detail::nccl_api();
  std::lock_guard comm_lock(comm_mutex);
  if (aborted()) return;  // the abort freed the registrations with the communicator
  ncclResult_t r = ncclInternalError;
  try {
    const cudakit::detail::RelaxedCaptureMode relaxed;
    r = nccl.ncclCommDeregister(comm, handle);
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "ncclCommDeregister (rank ", rank, ") not called: ", e.what());
  }
  if (r != ncclSuccess)
    CUDAKIT_LOG(warning, "ncclCommDeregister (rank ", rank, ") failed: ", nccl_error_text(r, nullptr));
}

std::vector<RegisteredSegment> CommunicatorState::registered_segments() const {
  return registrations_ ? registrations_->segments() : std::vector<RegisteredSegment>{};
}

std::string CommunicatorState::label(const std::string& op, std::uint64_t seq) { return op + "#" + std::to_string(seq); }

std::string CommunicatorState::store_prefix() const { return concat("cudakit/nccl/", options.name, "/flight"); }

void CommunicatorState::check(const char* api) const {
  std::lock_guard lock(mutex_);
  if (error_) throw NcclError(error_->first, api, rank, error_operation_, error_->second);
  if (aborted_) throw NcclError(0, api, rank, "abort", "the communicator was aborted");
}

bool CommunicatorState::failed_or_aborted() const {
  std::lock_guard lock(mutex_);
  return error_.has_value() || aborted_;
}

// Note [Waiting for a non-blocking group]
// On a non-blocking communicator every group that holds a task (all point-to-point operations,
// so all_to_all and send/recv; NCCL 2.28's src/group.cc, ncclGroupEndInternal) is launched by a
// thread NCCL starts, and ncclGroupEnd returns ncclInProgress at once; the launch itself then
// takes tens of microseconds. Collectives of a one-rank communicator never get there (NCCL
// copies at once: ncclLaunchOneRank). The wait used to sleep between polls from the first one,
// and a sleep of a microsecond lasts the kernel's timer slack (50 us by default) or more: each
// grouped operation paid about 50 us over torch's blocking communicator. Now the first
// kSpinBeforeSleeping of the wait polls with a yield in between (ncclCommGetAsyncError is an
// atomic load), and only a longer wait (peers still connecting) sleeps, from 50 us up to 1 ms.
void CommunicatorState::wait_ready(const std::string& what) {
  constexpr auto kSpinBeforeSleeping = std::chrono::microseconds(500);
  const auto& nccl = cudakit::detail::nccl_api();
  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  auto pause = std::chrono::microseconds(50);
  while (true) {
    ncclResult_t state = ncclSuccess;
    {
      std::lock_guard lock(comm_mutex);
      const ncclResult_t r = nccl.ncclCommGetAsyncError(comm, &state);
      if (r != ncclSuccess) state = r;
    }
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      const std::string text = nccl_error_text(state, comm);
      fail(static_cast<int>(state), what, text);
      throw NcclError(static_cast<int>(state), "ncclCommGetAsyncError", rank, what, text);
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      const std::string text = concat("not ready after ", options.timeout.count(), " ms (rank ", rank, " of ", world_size,
                                      "; did every rank start and call it?); the communicator is aborted");
      fail(0, what, text);
      throw NcclError(0, "ncclCommGetAsyncError", rank, what, text);
    }
    if (now - start < kSpinBeforeSleeping) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

void CommunicatorState::watch(std::uint64_t seq_, const std::string& op, StreamRef stream,
                              std::optional<cudaStreamCaptureStatus> capture) {
  if (!capture) {
    capture = cudaStreamCaptureStatusNone;
    CUDAKIT_CHECK_CUDA(cudaStreamIsCapturing(stream.handle(), &*capture));
  }
  if (*capture != cudaStreamCaptureStatusNone) return;
  cudaEvent_t event = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!free_events_.empty()) {
      event = free_events_.back();
      free_events_.pop_back();
    }
  }
  if (event == nullptr) CUDAKIT_CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  const cudaError_t recorded = cudaEventRecord(event, stream.handle());
  if (recorded != cudaSuccess) {
    (void)cudaEventDestroy(event);
    CUDAKIT_CHECK_CUDA(recorded);
  }
  std::lock_guard lock(mutex_);
  pending_.push_back({seq_, op, event, Clock::now()});
}

void CommunicatorState::abort() noexcept {
  const auto& nccl = cudakit::detail::nccl_api();
  std::lock_guard comm_lock(comm_mutex);
  {
    std::lock_guard lock(mutex_);
    if (aborted_) return;
    aborted_ = true;
  }
  if (comm != nullptr && nccl.ncclCommAbort != nullptr) {
    const ncclResult_t r = nccl.ncclCommAbort(comm);
    if (r != ncclSuccess && r != ncclInProgress) CUDAKIT_LOG(warning, "ncclCommAbort (rank ", rank, ") failed: ", nccl_error_text(r, nullptr));
  }
}

void CommunicatorState::fail(int nccl_result, const std::string& operation, const std::string& text) {
  {
    std::lock_guard lock(mutex_);
    if (error_ || aborted_) return;
    error_.emplace(nccl_result, text);
    error_operation_ = operation;
  }
  CUDAKIT_LOG(error, "NCCL communicator '", options.name, "' rank ", rank, " of ", world_size, ": ", operation, ": ", text,
              "; gathering the ranks' flight records, then aborting");
  std::string report;
  try {
    report = exchange_flight_records();
  } catch (const std::exception& e) {
    report = concat("the flight records could not be gathered: ", e.what());
  }
  {
    std::lock_guard lock(mutex_);
    error_->second = concat(text, "\nflight records:\n", report);
  }
  CUDAKIT_LOG(error, "NCCL communicator '", options.name, "' rank ", rank, ": flight records:\n", report);
  abort();
}

void CommunicatorState::publish_flight_records() {
  {
    std::lock_guard lock(mutex_);
    if (published_) return;
    published_ = true;
  }
  store->set(concat(store_prefix(), "/rank/", rank),
             format_flight_records(RankFlightRecords{rank, world_size, recorder.records()}));
}

std::string CommunicatorState::exchange_flight_records() {
  std::vector<RankFlightRecords> ranks;
  if (store == nullptr || world_size == 1) {
    ranks.push_back(RankFlightRecords{rank, world_size, recorder.records()});
    if (world_size > 1) {
      return concat("(no store to gather the other ranks' records through) this rank's:\n",
                    format_flight_records(ranks.back()), analyze_flight_records(ranks, world_size).text);
    }
    return analyze_flight_records(ranks, world_size).text;
  }
  const std::string prefix = store_prefix();
  store->set(concat(prefix, "/dump"), std::to_string(rank));
  publish_flight_records();
  const auto deadline = Clock::now() + std::min<Clock::duration>(kExchangeWindow, options.timeout);
  std::vector<bool> have(static_cast<std::size_t>(world_size), false);
  for (int r = 0; r < world_size; ++r) {
    const std::string keys[] = {concat(prefix, "/rank/", r)};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    try {
      if (left.count() > 0) store->wait(keys, left);
      else if (!store->check(keys)) continue;
      ranks.push_back(parse_flight_records(store->get(keys[0])));
    } catch (const Error&) {
      // Missing: the analysis names the rank.
    }
  }
  return analyze_flight_records(ranks, world_size).text;
}

void CommunicatorState::poll_once() {
  const auto& nccl = cudakit::detail::nccl_api();
  std::optional<std::pair<int, std::string>> failure;
  std::string failed_operation;
  {
    std::lock_guard lock(mutex_);
    if (aborted_) return;
    const auto now = Clock::now();
    for (auto it = pending_.begin(); it != pending_.end();) {
      const cudaError_t q = cudaEventQuery(it->event);
      if (q == cudaSuccess) {
        recorder.set_state(it->seq, FlightState::completed);
        free_events_.push_back(it->event);
        it = pending_.erase(it);
        continue;
      }
      // The runtime going away at exit is no failure of the operation: nothing more to watch.
      if (q == cudaErrorCudartUnloading || q == cudaErrorContextIsDestroyed) return;
      if (q != cudaErrorNotReady) {
        (void)cudaGetLastError();
        recorder.set_state(it->seq, FlightState::failed);
        failure.emplace(0, concat("its completion event reports ", cudaGetErrorString(q)));
        failed_operation = label(it->op, it->seq);
        break;
      }
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - it->enqueued);
      if (waited > options.timeout) {
        recorder.set_state(it->seq, FlightState::timed_out);
        failure.emplace(0, concat("timed out: not complete ", waited.count(), " ms after its enqueue (timeout ",
                                  options.timeout.count(), " ms)"));
        failed_operation = label(it->op, it->seq);
        break;
      }
      ++it;
    }
  }
  if (!failure) {
    ncclResult_t state = ncclSuccess;
    {
      std::lock_guard lock(comm_mutex);
      if (nccl.ncclCommGetAsyncError(comm, &state) != ncclSuccess) state = ncclInternalError;
    }
    if (state != ncclSuccess && state != ncclInProgress) {
      failure.emplace(static_cast<int>(state), concat("NCCL reports an asynchronous error: ", nccl_error_text(state, comm)));
      std::lock_guard lock(mutex_);
      failed_operation = pending_.empty() ? concat("after ", label("operation", seq.load()))
                                          : label(pending_.front().op, pending_.front().seq);
    }
  }
  if (failure) {
    fail(failure->first, failed_operation, failure->second);
    return;
  }
  // Another rank timed out and asks for everyone's records.
  if (store != nullptr && world_size > 1 && Clock::now() - last_dump_check_ >= kDumpCheckInterval) {
    last_dump_check_ = Clock::now();
    try {
      const std::string keys[] = {concat(store_prefix(), "/dump")};
      if (store->check(keys)) publish_flight_records();
    } catch (const Error& e) {
      CUDAKIT_LOG(warning, "NCCL watchdog (rank ", rank, "): the store is unreachable: ", e.what());
    }
  }
}

void CommunicatorState::watchdog_loop() {
  (void)cudaSetDevice(device);
  // Relaxed: this thread's event queries must neither fail nor invalidate a capture another
  // thread makes in cudaStreamCaptureModeGlobal.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, options.poll_interval, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    try {
      poll_once();
    } catch (const std::exception& e) {
      CUDAKIT_LOG(warning, "NCCL watchdog (rank ", rank, "): ", e.what());
    }
    lock.lock();
  }
}

}  // namespace cudakit::nccl::detail
